import { describe, expect, it } from 'vitest';
import type { ChatEvent, StoredMessage, StoredNotice, Usage } from '../src/lib/ipc/bindings';
import { fromStored, interrupt, pendingAssistant, reduce, reduceAll, shownNotices } from '../src/lib/model/message';
import { splitAtOffsets } from '../src/lib/model/offsets';

const u = (p: number, c: number, r = 0): Usage => ({ promptTokens: p, completionTokens: c, reasoningTokens: r, cachedTokens: 0 });

const started: ChatEvent = { type: 'started', conversationId: 'c1', messageId: 'm2', userMessageId: 'm1', provider: 'openai', model: 'gpt-4o-mini' };

/** One full turn with a tool call after an emoji, as the engine streams it. */
const turn: ChatEvent[] = [
  started,
  { type: 'reasoningDelta', text: 'Need the ' },
  { type: 'reasoningDelta', text: 'time.' },
  { type: 'textDelta', text: 'Checking 👋🏽 ' },
  { type: 'toolCall', id: 'call_1', name: 'get_time', source: { kind: 'builtin' }, arguments: '{"timezone":"Asia/Tokyo"}', textOffset: 12, iteration: 1, index: 0 },
  { type: 'toolStarted', id: 'call_1' },
  { type: 'toolProgress', id: 'call_1', text: 'asking the clock' },
  { type: 'toolResult', id: 'call_1', status: 'ok', output: '{"time":"10:00"}', durationMs: 4 },
  { type: 'usage', usage: u(10, 5, 2), total: u(10, 5, 2), request: 1, costUsd: 0.0001, estimated: false },
  { type: 'textDelta', text: 'It is 10:00 ' },
  { type: 'textDelta', text: 'in Tokyo.' },
  { type: 'usage', usage: u(20, 7), total: u(30, 12, 2), request: 2, costUsd: 0.0002, estimated: false },
  { type: 'done', finishReason: 'stop', usage: u(30, 12, 2), toolCallsMade: 1 },
];

/** The same turn as the store records it. */
const stored: StoredMessage = {
  id: 'm2',
  role: 'assistant',
  content: 'Checking 👋🏽 It is 10:00 in Tokyo.',
  reasoning: 'Need the time.',
  status: 'complete',
  provider: 'openai',
  model: 'gpt-4o-mini',
  finishReason: 'stop',
  usage: u(30, 12, 2),
  toolCallsMade: 1,
  error: null,
  notices: [],
  providerResponseId: 'resp_1',
  parentId: 'm1',
  versions: ['m2'],
  createdAt: 1,
  updatedAt: 2,
  toolCalls: [
    {
      callId: 'call_1',
      name: 'get_time',
      source: { kind: 'builtin' },
      arguments: '{"timezone":"Asia/Tokyo"}',
      textOffset: 12,
      iteration: 1,
      index: 0,
      status: 'ok',
      result: { status: 'ok', output: '{"time":"10:00"}', durationMs: 4 },
    },
  ],
};

describe('the event reducer', () => {
  it('builds a complete message from started -> deltas -> toolCall -> toolStarted -> toolResult -> usage -> done', () => {
    const m = reduceAll(pendingAssistant(), turn);
    expect(m).toMatchObject({
      id: 'm2',
      role: 'assistant',
      content: 'Checking 👋🏽 It is 10:00 in Tokyo.',
      reasoning: 'Need the time.',
      status: 'complete',
      provider: 'openai',
      model: 'gpt-4o-mini',
      finishReason: 'stop',
      usage: u(30, 12, 2),
      toolCallsMade: 1,
      error: null,
    });
    expect(m.toolCalls).toHaveLength(1);
    expect(m.toolCalls[0]).toMatchObject({ id: 'call_1', status: 'ok', textOffset: 12, result: { status: 'ok', output: '{"time":"10:00"}', durationMs: 4 } });
  });

  it('tracks each step of a call: pending, running with progress, then its result', () => {
    const upTo = (n: number) => reduceAll(pendingAssistant(), turn.slice(0, n));
    expect(upTo(5).toolCalls[0]?.status).toBe('pending');
    expect(upTo(5).status).toBe('streaming');
    expect(upTo(6).toolCalls[0]?.status).toBe('running');
    expect(upTo(7).toolCalls[0]?.progress).toEqual(['asking the clock']);
    expect(upTo(8).toolCalls[0]?.progress).toEqual([]);
    expect(upTo(9).usage).toEqual(u(10, 5, 2));
  });

  it('gives the same model live and reopened from the store, and so the same layout', () => {
    const live = reduceAll(pendingAssistant(), turn);
    const reopened = fromStored(stored);
    // Request rows are live only: the store keeps them in their own table (`message_usage`).
    expect(live.requests.map((r) => [r.request, r.costUsd, r.toolCalls])).toEqual([
      [1, 0.0001, ['call_1']],
      [2, 0.0002, []],
    ]);
    expect(reopened.requests).toEqual([]);
    expect({ ...live, requests: [] }).toEqual(reopened);
    const layout = (m: typeof live) => splitAtOffsets(m.content, m.toolCalls).map((p) => (p.kind === 'text' ? p.text : p.calls.map((c) => c.id)));
    expect(layout(live)).toEqual(['Checking 👋🏽 ', ['call_1'], 'It is 10:00 in Tokyo.']);
    expect(layout(live)).toEqual(layout(reopened));
  });

  it('records an error and ends in the error status', () => {
    const m = reduceAll(pendingAssistant(), [
      started,
      { type: 'textDelta', text: 'partial' },
      { type: 'error', kind: 'auth', message: 'HTTP 401: bad key', retryable: false },
      { type: 'done', finishReason: 'error', usage: u(0, 0), toolCallsMade: 0 },
    ]);
    expect(m.status).toBe('error');
    expect(m.error).toEqual({ kind: 'auth', message: 'HTTP 401: bad key' });
    expect(m.content).toBe('partial');
    expect(m.finishReason).toBe('error');
  });

  it('keeps the partial text of a cancelled turn and stops every in-flight card, as the store does', () => {
    const m = reduceAll(pendingAssistant(), [
      started,
      { type: 'textDelta', text: 'Let me ' },
      { type: 'toolCall', id: 'a', name: 'slow', source: { kind: 'mcp', server: 's' }, arguments: '{}', textOffset: 7, iteration: 1, index: 0 },
      { type: 'toolStarted', id: 'a' },
      { type: 'done', finishReason: 'cancelled', usage: u(1, 1), toolCallsMade: 1 },
    ]);
    expect(m.status).toBe('cancelled');
    expect(m.content).toBe('Let me ');
    expect(m.toolCalls[0]?.status).toBe('cancelled');
  });

  it('marks a call awaiting approval, then clears it when resolved; a denial is a result', () => {
    const base = reduceAll(pendingAssistant(), [
      started,
      { type: 'toolCall', id: 'w', name: 'web_fetch', source: { kind: 'builtin' }, arguments: '{"url":"https://x"}', textOffset: 0, iteration: 1, index: 0 },
      { type: 'approvalRequested', id: 'w', name: 'web_fetch', source: { kind: 'builtin' }, arguments: '{"url":"https://x"}' },
    ]);
    expect(base.toolCalls[0]).toMatchObject({ awaitingApproval: true, status: 'pending' });
    const resolved = reduce(base, { type: 'approvalResolved', id: 'w', approved: false });
    expect(resolved.toolCalls[0]?.awaitingApproval).toBe(false);
    const denied = reduce(resolved, { type: 'toolResult', id: 'w', status: 'denied', output: 'denied by the person', durationMs: 0 });
    expect(denied.toolCalls[0]?.status).toBe('denied');
    // The reducer is pure: earlier models are untouched.
    expect(base.toolCalls[0]?.awaitingApproval).toBe(true);
  });

  it('accumulates reasoning separately from the answer', () => {
    const m = reduceAll(pendingAssistant(), [started, { type: 'reasoningDelta', text: 'hmm ' }, { type: 'textDelta', text: 'A' }, { type: 'reasoningDelta', text: 'ok' }]);
    expect(m.reasoning).toBe('hmm ok');
    expect(m.content).toBe('A');
  });

  it('keeps notices in order', () => {
    const m = reduceAll(pendingAssistant(), [
      started,
      { type: 'notice', kind: 'retrying', message: 'Retrying in 2 s (HTTP 503)' },
      { type: 'notice', kind: 'maxIterations', message: 'Stopped after 8 tool rounds' },
      { type: 'notice', kind: 'dryRun', message: 'Dry run' },
      { type: 'notice', kind: 'toolUnavailable', message: 'web_search is not available' },
    ]);
    expect(m.notices.map((n) => n.kind)).toEqual(['retrying', 'maxIterations', 'dryRun', 'toolUnavailable']);
  });

  it('ignores events about unknown call ids', () => {
    const m = reduceAll(pendingAssistant(), [started, { type: 'toolResult', id: 'nope', status: 'ok', output: '', durationMs: 1 }]);
    expect(m.toolCalls).toEqual([]);
  });

  it('marks a turn whose channel was lost as interrupted, keeping the partial text', () => {
    const m = interrupt(reduceAll(pendingAssistant(), [started, { type: 'textDelta', text: 'half an ans' }]));
    expect(m.status).toBe('interrupted');
    expect(m.content).toBe('half an ans');
    const failed = interrupt(pendingAssistant(), { kind: 'network', message: 'lost' });
    expect(failed.status).toBe('error');
    expect(interrupt(reduceAll(pendingAssistant(), turn)).status).toBe('complete');
  });
});

describe('shownNotices', () => {
  const retry = (n: number): StoredNotice => ({
    kind: 'retrying',
    message: `Could not reach the provider at http://127.0.0.1:38102/v1: client error (Connect): tcp connect error (os error 111). Retrying in ${n}.0 s (attempt ${n + 1} of 4).`,
  });
  const dry: StoredNotice = { kind: 'dryRun', message: 'Dry run: tools return their example output and do not run.' };

  it('shows retries as one status line, the latest, in the place of the first, with the reason as detail', () => {
    const shown = shownNotices([dry, retry(1), retry(2), retry(3)], true);
    expect(shown).toHaveLength(2);
    expect(shown[0]?.kind).toBe('dryRun');
    expect(shown[1]).toEqual({
      kind: 'retrying',
      message: 'Retrying in 3.0 s (attempt 4 of 4).',
      detail: 'Could not reach the provider at http://127.0.0.1:38102/v1: client error (Connect): tcp connect error (os error 111).',
    });
  });

  it('drops retries once the answer is over and keeps every other notice', () => {
    const limit: StoredNotice = { kind: 'maxIterations', message: 'The model used tools in 10 rounds.' };
    expect(shownNotices([retry(1), limit, retry(2)], false)).toEqual([{ kind: 'maxIterations', message: limit.message, detail: null }]);
  });

  it('shows a retry notice it cannot parse as it is', () => {
    const odd: StoredNotice = { kind: 'retrying', message: 'The server asked to wait.' };
    expect(shownNotices([odd], true)).toEqual([{ kind: 'retrying', message: 'The server asked to wait.', detail: null }]);
  });
});

describe('an error with its technical detail', () => {
  it('keeps the plain message for the callout and the detail for "Details"', () => {
    const m = reduce(pendingAssistant('a'), {
      type: 'error',
      kind: 'network',
      message: "Couldn't connect to 127.0.0.1:38102 — is the server running, and is the address right?",
      retryable: true,
      detail: 'error sending request: client error (Connect): tcp connect error: Connection refused (os error 111)',
    });
    expect(m.error?.message).toBe("Couldn't connect to 127.0.0.1:38102 — is the server running, and is the address right?");
    expect(m.error?.detail).toContain('Connection refused');
    const plain = reduce(pendingAssistant('b'), { type: 'error', kind: 'auth', message: 'Bad key.', retryable: false });
    expect(plain.error).toEqual({ kind: 'auth', message: 'Bad key.' });
  });
});
