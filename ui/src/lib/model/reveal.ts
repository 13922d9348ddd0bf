/**
 * How much of a turn's queued events goes on screen in one frame.
 *
 * A fast model (or a server that buffers) can deliver thousands of words before the next frame.
 * Rendering them in one frame is one long task: Markdown, DOM and WebKit's layout of the whole
 * burst (about 100 ms for 2,000 words without a GPU). Taking at most a budget of text characters
 * per frame keeps every frame short; at 2,000 characters a frame the reveal still outruns any
 * model by far, so nothing visibly lags. Events apply in order, so a tool card never shows before
 * the text that precedes it, and `done` only after the last word.
 *
 * A fixed budget alone made a huge answer take as many frames as it has budgets (a 1 MiB line:
 * 525 frames, each of which also walks the whole text once), so it was never shown in full in the
 * real webview within minutes. `frameBudget` therefore grows with the backlog: whatever is queued
 * goes on screen within about `REVEAL_MAX_FRAMES` frames, however large it is. Such a backlog is
 * data (huge blocks are shown as plain text, markdown/plain.ts), whose cost per frame is bounded.
 */
import type { ChatEvent } from '../ipc/bindings';

/** Text (and reasoning) characters, in UTF-16 code units, put on screen per frame at most. */
export const REVEAL_CHARS_PER_FRAME = 2000;

/** A backlog of any size is on screen within about this many frames (half a second at 60 Hz). */
export const REVEAL_MAX_FRAMES = 30;

/**
 * The budget of the next frame: `REVEAL_CHARS_PER_FRAME`, the queued text divided by
 * `REVEAL_MAX_FRAMES` when that is more, and never less than the budget of the frame before
 * (`previous`, 0 when the queue was empty): a backlog drains at the pace set when it arrived,
 * not ever more slowly as it shrinks.
 */
export function frameBudget(queue: readonly ChatEvent[], previous = 0): number {
  let queued = 0;
  for (const e of queue) {
    if (e.type === 'textDelta' || e.type === 'reasoningDelta') queued += e.text.length;
  }
  return Math.max(REVEAL_CHARS_PER_FRAME, Math.ceil(queued / REVEAL_MAX_FRAMES), previous);
}

/** Splits `text` near `at` without separating a surrogate pair. */
function cut(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/**
 * What an event that is not one of the turn's own text deltas (those are split instead) costs of
 * a frame's `budget`: a new tool card, or a sub-agent's run beginning inside one, mounts a whole
 * component tree and costs a third of a frame (three parallel agent calls mounting at once took
 * one frame of about 50 ms); a sub-agent's text costs its length; everything else is free.
 */
function cost(e: ChatEvent, budget: number): number {
  const mount = Math.ceil(budget / 3);
  switch (e.type) {
    case 'toolCall':
      return mount;
    case 'toolProgress': {
      const inner = e.event;
      if (!inner) return 0;
      if (inner.type === 'textDelta' || inner.type === 'reasoningDelta') return inner.text.length;
      return inner.type === 'started' || inner.type === 'toolCall' ? mount : cost(inner, budget);
    }
    default:
      return 0;
  }
}

/**
 * The events to apply now (`now`) and those to leave for the next frame (`rest`), spending at most
 * `budget` characters: text and reasoning deltas by their length (a delta that does not fit is
 * split), a sub-agent's text by its length (not split), what mounts a card or a run a third of
 * the budget; other events cost nothing. Something is always taken from a non-empty queue.
 */
export function takeFrame(queue: readonly ChatEvent[], budget = REVEAL_CHARS_PER_FRAME): { now: ChatEvent[]; rest: ChatEvent[] } {
  const whole = Math.max(1, budget);
  let left = whole;
  const now: ChatEvent[] = [];
  for (let i = 0; i < queue.length; i++) {
    const e = queue[i] as ChatEvent;
    if (e.type !== 'textDelta' && e.type !== 'reasoningDelta') {
      const c = cost(e, whole);
      if (c > left && now.length > 0) return { now, rest: queue.slice(i) };
      now.push(e);
      left -= c;
      continue;
    }
    if (left <= 0) return { now, rest: queue.slice(i) };
    if (e.text.length <= left) {
      now.push(e);
      left -= e.text.length;
      continue;
    }
    // A budget of one that meets a surrogate pair takes the pair.
    const at = cut(e.text, left) || Math.min(2, e.text.length);
    now.push({ ...e, text: e.text.slice(0, at) });
    return { now, rest: [{ ...e, text: e.text.slice(at) }, ...queue.slice(i + 1)] };
  }
  return { now, rest: [] };
}
