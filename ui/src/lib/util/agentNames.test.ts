import { describe, expect, it } from 'vitest';
import { AGENT_NAME_MAX } from '../ipc/bindings';
import { AGENT_NAME_RE, AGENT_NAME_RULE } from './agentNames';

describe('agent and toolset names', () => {
  it('take what the service takes, up to its longest name', () => {
    for (const ok of ['Scout', 'a', 'Lead-2_b', 'A'.repeat(AGENT_NAME_MAX)]) expect(AGENT_NAME_RE.test(ok), ok).toBe(true);
    for (const bad of ['', '2nd', '_x', 'has space', 'dot.ted', 'A'.repeat(AGENT_NAME_MAX + 1)]) expect(AGENT_NAME_RE.test(bad), bad).toBe(false);
    expect(AGENT_NAME_RULE).toContain(`at most ${AGENT_NAME_MAX}`);
  });
});
