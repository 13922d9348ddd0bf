import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../src/lib/ipc/bindings';
import { reduce, pendingAssistant } from '../src/lib/model/message';
import { REVEAL_CHARS_PER_FRAME, takeFrame } from '../src/lib/model/reveal';

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
    const out = frames([text('abcdef'), call, text('ghij'), done], 4);
    expect(out).toEqual([[text('abcd')], [text('ef'), call, text('gh')], [text('ij'), done]]);
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
