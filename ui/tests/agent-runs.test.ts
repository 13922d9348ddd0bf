/**
 * Sub-agents inside a call: each instance is its own answer built by the same reducer, live and
 * from the store alike; a sub-agent's call that needs the person is matched under the unique id
 * it was asked with; stopping the turn leaves no child spinning; the card shows every instance,
 * open while it works and folded (kept) once it has ended.
 */
import { render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import ToolCard from '../src/lib/components/ToolCard.svelte';
import type { ChatEvent, NestedEvent, StoredMessage, Usage } from '../src/lib/ipc/bindings';
import { fromStored, nestedApproval, pendingAssistant, reduceAll } from '../src/lib/model/message';

const u = (p: number, c: number): Usage => ({ promptTokens: p, completionTokens: c, reasoningTokens: 0, cachedTokens: 0 });

/** A sub-agent's event inside the lead's call `c1`. */
const nested = (instance: string, event: ChatEvent, id = 'c1'): ChatEvent => ({ type: 'toolProgress', id, instance, event });

const childStarted = (n: number): ChatEvent => ({ type: 'started', conversationId: 'conv', messageId: `c1/Scout[${n}]`, userMessageId: 'q', provider: 'scouts', model: 'scout-model' });

/** The lead calls Scout twice; Scout[1] uses a tool that asks; both answer. */
const live: ChatEvent[] = [
  { type: 'started', conversationId: 'conv', messageId: 'm2', userMessageId: 'm1', provider: 'lead', model: 'lead-model' },
  { type: 'toolCall', id: 'c1', name: 'agent__Scout', source: { kind: 'agent' }, arguments: '{"message":"Lyon"}', textOffset: 0, iteration: 1, index: 0 },
  { type: 'toolStarted', id: 'c1' },
  nested('Scout[1]', childStarted(1)),
  nested('Scout[2]', childStarted(2)),
  nested('Scout[1]', { type: 'textDelta', text: 'Checking ' }),
  nested('Scout[2]', { type: 'textDelta', text: 'Rome is ' }),
  nested('Scout[1]', { type: 'toolCall', id: 'k1', name: 'get_time', source: { kind: 'builtin' }, arguments: '{}', textOffset: 9, iteration: 1, index: 0 }),
  nested('Scout[1]', { type: 'approvalRequested', id: 'c1/Scout[1]/k1', name: 'get_time', source: { kind: 'builtin' }, arguments: '{}' }),
];
const rest: ChatEvent[] = [
  nested('Scout[1]', { type: 'approvalResolved', id: 'c1/Scout[1]/k1', approved: true }),
  nested('Scout[1]', { type: 'toolStarted', id: 'k1' }),
  nested('Scout[1]', { type: 'toolResult', id: 'k1', status: 'ok', output: '12:00', durationMs: 1 }),
  nested('Scout[1]', { type: 'textDelta', text: 'noon in Lyon.' }),
  nested('Scout[2]', { type: 'textDelta', text: 'sunny.' }),
  nested('Scout[1]', { type: 'done', finishReason: 'stop', usage: u(10, 4), toolCallsMade: 1 }),
  nested('Scout[2]', { type: 'done', finishReason: 'stop', usage: u(8, 2), toolCallsMade: 0 }),
  { type: 'usage', usage: u(18, 6), total: u(18, 6), request: 1, costUsd: null, estimated: false, agentCall: 'c1' },
  { type: 'toolResult', id: 'c1', status: 'ok', output: 'noon in Lyon.', durationMs: 30 },
  { type: 'textDelta', text: 'Done.' },
  { type: 'done', finishReason: 'stop', usage: u(30, 9), toolCallsMade: 1 },
];

/** What the recorder keeps of `c1`: the nested events, text runs merged per instance. */
function recorded(events: ChatEvent[]): NestedEvent[] {
  const out: NestedEvent[] = [];
  for (const e of events) {
    if (e.type !== 'toolProgress' || !e.instance || !e.event) continue;
    const last = out[out.length - 1];
    if (last && last.instance === e.instance && last.event.type === 'textDelta' && e.event.type === 'textDelta') {
      last.event = { type: 'textDelta', text: last.event.text + e.event.text };
    } else {
      out.push({ instance: e.instance, event: e.event });
    }
  }
  return out;
}

describe('sub-agent runs', () => {
  it('are built per instance live, with the approval matched under its unique id', () => {
    const m = reduceAll(pendingAssistant(), live);
    const runs = m.toolCalls[0]!.runs;
    expect(runs.map((r) => r.instance)).toEqual(['Scout[1]', 'Scout[2]']);
    const scout = runs[0]!.model;
    expect(scout.model).toBe('scout-model');
    expect(scout.content).toBe('Checking ');
    expect(scout.toolCalls[0]).toMatchObject({ id: 'k1', awaitingApproval: true, approvalId: 'c1/Scout[1]/k1' });
    expect(runs[1]!.model.content).toBe('Rome is ');

    const ended = reduceAll(m, rest);
    const [one, two] = ended.toolCalls[0]!.runs;
    expect(one!.model).toMatchObject({ status: 'complete', content: 'Checking noon in Lyon.', usage: u(10, 4) });
    expect(one!.model.toolCalls[0]).toMatchObject({ status: 'ok', awaitingApproval: false });
    expect(two!.model.content).toBe('Rome is sunny.');
    expect(ended.usage).toEqual(u(30, 9));
  });

  it('come back from the store exactly as they ran', () => {
    const ended = reduceAll(pendingAssistant(), [...live, ...rest]);
    const stored: StoredMessage = {
      id: 'm2',
      role: 'assistant',
      content: 'Done.',
      reasoning: '',
      status: 'complete',
      provider: 'lead',
      model: 'lead-model',
      finishReason: 'stop',
      usage: u(30, 9),
      toolCallsMade: 1,
      error: null,
      notices: [],
      providerResponseId: null,
      parentId: null,
      versions: [],
      createdAt: 1,
      updatedAt: 2,
      toolCalls: [
        {
          callId: 'c1',
          name: 'agent__Scout',
          source: { kind: 'agent' },
          arguments: '{"message":"Lyon"}',
          textOffset: 0,
          iteration: 1,
          index: 0,
          status: 'ok',
          result: { status: 'ok', output: 'noon in Lyon.', durationMs: 30 },
          nested: recorded([...live, ...rest]),
        },
      ],
    };
    expect(fromStored(stored).toolCalls[0]!.runs).toEqual(ended.toolCalls[0]!.runs);
  });

  it('left running when the turn stops or the app closed are interrupted, never spinning', () => {
    const stopped = reduceAll(pendingAssistant(), [...live, { type: 'done', finishReason: 'cancelled', usage: u(0, 0), toolCallsMade: 1 }]);
    expect(stopped.toolCalls[0]!.runs.map((r) => r.model.status)).toEqual(['interrupted', 'interrupted']);
    expect(stopped.toolCalls[0]!.runs[0]!.model.toolCalls[0]!.awaitingApproval).toBe(false);
  });

  it('ask the person through the chat, naming the agent, at any depth', () => {
    const deep = nested('Lead[1]', nested('Scout[2]', { type: 'approvalRequested', id: 'c1/Lead[1]/d1/Scout[2]/k9', name: 'run', source: { kind: 'command' }, arguments: '{}' }, 'd1'));
    const asked = nestedApproval(deep);
    expect(asked?.agent).toBe('Lead[1] › Scout[2]');
    expect(asked?.event).toMatchObject({ type: 'approvalRequested', id: 'c1/Lead[1]/d1/Scout[2]/k9' });
    expect(nestedApproval(nested('Scout[1]', { type: 'textDelta', text: 'x' }))).toBeNull();
    expect(nestedApproval({ type: 'approvalResolved', id: 'c1', approved: true })?.agent).toBeNull();
  });
});

describe('an agent tool card', () => {
  it('shows each instance open while it works, with its own tool cards', () => {
    const m = reduceAll(pendingAssistant(), live);
    render(ToolCard, { props: { call: m.toolCalls[0]!, live: true } });
    const runs = screen.getAllByTestId('agent-run');
    expect(runs.map((r) => r.dataset.instance)).toEqual(['Scout[1]', 'Scout[2]']);
    const first = runs[0]!;
    expect(within(first).getAllByRole('button')[0]!.getAttribute('aria-expanded')).toBe('true');
    expect(first.textContent).toContain('Waiting for approval');
    expect(within(first).getByTestId('tool-card').dataset.toolName).toBe('get_time');
    expect(within(runs[1]!).getByTestId('agent-run-text').textContent).toContain('Rome is');
  });

  it('keeps every instance once it has ended, folded to one line with its usage', () => {
    const m = reduceAll(pendingAssistant(), [...live, ...rest]);
    render(ToolCard, { props: { call: m.toolCalls[0]!, live: false } });
    const runs = screen.getAllByTestId('agent-run');
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      expect(within(run).getAllByRole('button')[0]!.getAttribute('aria-expanded')).toBe('false');
      expect(run.textContent).toContain('Done');
    }
    expect(within(runs[0]!).getByTestId('agent-run-usage').textContent).toBe('10 in · 4 out');
  });
});
