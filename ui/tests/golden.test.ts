/**
 * Live equals stored: for every golden turn (captured from the real service by
 * crates/service/tests/golden.rs), the model the UI builds from the live events must be the model
 * it builds from the stored message that reopening the conversation returns.
 */
import { describe, expect, it } from 'vitest';
import type { ChatEvent, StoredMessage } from '../src/lib/ipc/bindings';
import { fromStored, pendingAssistant, reduceAll, type MessageModel } from '../src/lib/model/message';
import { splitAtOffsets } from '../src/lib/model/offsets';
import golden from './fixtures/golden-turns.json';

interface Scenario {
  name: string;
  prompt: string;
  events: ChatEvent[];
  stored: StoredMessage;
}

const scenarios = (golden as unknown as { scenarios: Scenario[] }).scenarios;

/** What the person sees of a message: everything but live-only bookkeeping of a finished turn. */
function seen(m: MessageModel) {
  return {
    ...m,
    toolCalls: m.toolCalls.map(({ progress, awaitingApproval, ...c }) => ({ ...c, spinning: progress.length > 0 || awaitingApproval })),
    // Where each card sits between the text runs, as the view lays them out.
    layout: splitAtOffsets(m.content, m.toolCalls).map((p) => (p.kind === 'text' ? p.text : p.calls.map((c) => c.id))),
  };
}

describe('golden turns: live equals stored', () => {
  it('has the scenarios the fixture promises', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(5);
    for (const s of scenarios) expect(s.events.at(-1)?.type).toBe('done');
  });

  for (const s of scenarios) {
    it(s.name, () => {
      const live = reduceAll(pendingAssistant(), s.events);
      const stored = fromStored(s.stored);
      expect(seen(live)).toEqual(seen(stored));
      expect(live.status).not.toBe('streaming');
      for (const c of live.toolCalls) expect(c.status === 'pending' || c.status === 'running').toBe(false);
    });
  }

  it('places a card after text counted in scalar values (emoji with a skin tone, CJK)', () => {
    const s = scenarios.find((x) => x.name.includes('emoji'));
    expect(s).toBeDefined();
    const m = reduceAll(pendingAssistant(), s?.events ?? []);
    const parts = splitAtOffsets(m.content, m.toolCalls);
    expect(parts[0]).toMatchObject({ kind: 'text', text: 'Let me check 東京 for you 👋🏽. ' });
    expect(parts[1]).toMatchObject({ kind: 'calls' });
  });
});
