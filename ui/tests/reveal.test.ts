import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../src/lib/ipc/bindings';
import { reduce, pendingAssistant } from '../src/lib/model/message';
import { REVEAL_CHARS_PER_FRAME, REVEAL_MAX_FRAMES, frameBudget, takeFrame } from '../src/lib/model/reveal';

const text = (t: string): ChatEvent => ({ type: 'textDelta', text: t });
const call: ChatEvent = { type: 'toolCall', id: 'c1', name: 'get_time', source: { kind: 'builtin' }, arguments: '{}', textOffset: 3, iteration: 1, index: 0 };

/** Drains a queue frame by frame, as the session does. */
function frames(queue: ChatEvent[], budget: number): ChatEvent[][] {
  const out: ChatEvent[][] = [];
  let rest = queue;
  while (rest.length > 0) {
    const f = takeFrame(rest, budget);
    expect(f.now.length, 'every frame takes something').toBeGreaterThan(0);
    out.push(f.now);
    rest = f.rest;
  }
  return out;
}

describe('takeFrame', () => {
  it('takes everything that fits the budget in one frame', () => {
    const q = [text('abc'), call, text('def')];
    expect(takeFrame(q, 10)).toEqual({ now: q, rest: [] });
  });

  it('splits a burst over frames of at most the budget, losing nothing', () => {
    const burst = 'word '.repeat(1000); // 5,000 characters in one delta
    const out = frames([text(burst)], REVEAL_CHARS_PER_FRAME);
    expect(out).toHaveLength(3);
    const sizes = out.map((f) => f.reduce((n, e) => n + (e.type === 'textDelta' ? e.text.length : 0), 0));
    expect(sizes).toEqual([2000, 2000, 1000]);
    expect(out.flat().map((e) => (e.type === 'textDelta' ? e.text : '')).join('')).toBe(burst);
  });

  it('keeps the order: a tool card and done come only after the text before them', () => {
    const done = { type: 'done', finishReason: 'stop' } as ChatEvent;
    // A new card costs a third of a frame (here 2 of 6).
    const out = frames([text('abcdef'), call, text('ghij'), done], 6);
    expect(out).toEqual([[text('abcdef')], [call, text('ghij'), done]]);
  });

  it('spreads cards and sub-agent runs that begin at once over frames, a few per frame', () => {
    const agentCall = (id: string): ChatEvent => ({ ...call, id, name: 'agent__Scout' }) as ChatEvent;
    const run = (id: string, n: number): ChatEvent => ({
      type: 'toolProgress',
      id,
      instance: `Scout[${n}]`,
      event: { type: 'started', conversationId: 'c', messageId: `${id}/Scout[${n}]`, userMessageId: 'q', provider: 'p', model: 'm' },
    });
    const childText = (id: string, n: number, t: string): ChatEvent => ({ type: 'toolProgress', id, instance: `Scout[${n}]`, event: text(t) });
    const q = [agentCall('a'), agentCall('b'), agentCall('c'), run('a', 1), run('b', 2), run('c', 3), childText('a', 1, 'x'.repeat(1500))];
    const out = frames(q, REVEAL_CHARS_PER_FRAME);
    expect(out.map((f) => f.length)).toEqual([2, 2, 2, 1]);
    expect(out.flat()).toEqual(q);
  });

  it('never separates a surrogate pair, even with a budget of one', () => {
    const q = [text('a😀b')];
    const one = frames(q, 1).map((f) => (f[0]?.type === 'textDelta' ? f[0].text : ''));
    expect(one).toEqual(['a', '😀', 'b']);
    const two = frames(q, 2).map((f) => (f[0]?.type === 'textDelta' ? f[0].text : ''));
    expect(two).toEqual(['a', '😀', 'b']);
  });

  it('the model after all frames is the model of the whole queue at once', () => {
    const q: ChatEvent[] = [text('x'.repeat(4500)), { type: 'reasoningDelta', text: 'r'.repeat(2500) } as ChatEvent, call, text('tail')];
    const whole = q.reduce(reduce, pendingAssistant());
    const stepped = frames(q, REVEAL_CHARS_PER_FRAME).flat().reduce(reduce, pendingAssistant());
    expect(stepped).toEqual(whole);
  });
});

describe('frameBudget', () => {
  it('is the fixed budget for an ordinary backlog', () => {
    expect(frameBudget([text('word '.repeat(2000))])).toBe(REVEAL_CHARS_PER_FRAME);
  });

  it('puts a backlog of any size on screen within REVEAL_MAX_FRAMES frames', () => {
    const huge = 'x'.repeat(1 << 20); // a 1 MiB line in one burst
    let rest: ChatEvent[] = [text(huge.slice(0, 1000)), call, text(huge.slice(1000)), { type: 'done', finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1 }, toolCallsMade: 0 } as ChatEvent];
    let n = 0;
    let shown = '';
    let budget = 0;
    while (rest.length > 0) {
      budget = frameBudget(rest, budget);
      const f = takeFrame(rest, budget);
      for (const e of f.now) if (e.type === 'textDelta') shown += e.text;
      rest = f.rest;
      n++;
    }
    expect(shown).toBe(huge);
    expect(n).toBeLessThanOrEqual(REVEAL_MAX_FRAMES + 2);
  });
});
