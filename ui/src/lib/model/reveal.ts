/**
 * How much of a turn's queued events goes on screen in one frame.
 *
 * A fast model (or a server that buffers) can deliver thousands of words before the next frame.
 * Rendering them in one frame is one long task: Markdown, DOM and WebKit's layout of the whole
 * burst (about 100 ms for 2,000 words without a GPU). Taking at most a budget of text characters
 * per frame keeps every frame short; at 2,000 characters a frame the reveal still outruns any
 * model by far, so nothing visibly lags. Events apply in order, so a tool card never shows before
 * the text that precedes it, and `done` only after the last word.
 */
import type { ChatEvent } from '../ipc/bindings';

/** Text (and reasoning) characters, in UTF-16 code units, put on screen per frame at most. */
export const REVEAL_CHARS_PER_FRAME = 2000;

/** Splits `text` near `at` without separating a surrogate pair. */
function cut(text: string, at: number): number {
  const code = text.charCodeAt(at - 1);
  return code >= 0xd800 && code <= 0xdbff ? at - 1 : at;
}

/**
 * The events to apply now (`now`) and those to leave for the next frame (`rest`), spending at most
 * `budget` characters of text and reasoning deltas; a delta that does not fit is split. Other
 * events cost nothing. Something is always taken from a non-empty queue.
 */
export function takeFrame(queue: readonly ChatEvent[], budget = REVEAL_CHARS_PER_FRAME): { now: ChatEvent[]; rest: ChatEvent[] } {
  let left = Math.max(1, budget);
  const now: ChatEvent[] = [];
  for (let i = 0; i < queue.length; i++) {
    const e = queue[i] as ChatEvent;
    if (e.type !== 'textDelta' && e.type !== 'reasoningDelta') {
      now.push(e);
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
