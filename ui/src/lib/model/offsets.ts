/**
 * Tool-call placement. The engine counts `textOffset` in Unicode scalar values (Rust `chars()`),
 * so this module counts code points (`Array.from`), never UTF-16 units (`String.length`).
 */

/** Number of Unicode scalar values in `text` (what the engine calls its length). */
export function scalarLength(text: string): number {
  let n = 0;
  // for..of iterates by code point, like Array.from, without building an array.
  for (const _ of text) n++;
  return n;
}

/** Anything placed at an offset in the text: tool calls, live or stored. */
export interface Placed {
  textOffset: number;
  iteration: number;
  index: number;
}

export interface TextPart {
  kind: 'text';
  text: string;
  /** Scalar-value offsets of this run in the whole text: [start, end). */
  start: number;
  end: number;
}

export interface CallsPart<T extends Placed> {
  kind: 'calls';
  /** The (clamped) offset where the calls sit. */
  offset: number;
  calls: T[];
}

export type Part<T extends Placed> = TextPart | CallsPart<T>;

/** Orders calls by where they sit, then by when the model made them (iteration, index). */
export function orderCalls<T extends Placed>(calls: readonly T[], length: number): T[] {
  const clamp = (o: number) => Math.min(Math.max(0, o), length);
  return calls
    .map((call, arrival) => ({ call, arrival, at: clamp(call.textOffset) }))
    .sort((a, b) => a.at - b.at || a.call.iteration - b.call.iteration || a.call.index - b.call.index || a.arrival - b.arrival)
    .map((x) => x.call);
}

/**
 * Splits `text` at the calls' offsets: the text before an offset, the call(s) there (several at one
 * offset stay together, in order), then the text after. Offsets past the end are clamped to the end;
 * empty text runs are left out.
 */
export function splitAtOffsets<T extends Placed>(text: string, calls: readonly T[]): Part<T>[] {
  if (calls.length === 0) {
    return text === '' ? [] : [{ kind: 'text', text, start: 0, end: scalarLength(text) }];
  }
  const chars = Array.from(text);
  const ordered = orderCalls(calls, chars.length);
  const parts: Part<T>[] = [];
  let pos = 0;
  for (const call of ordered) {
    const at = Math.min(Math.max(0, call.textOffset), chars.length);
    if (at > pos) {
      parts.push({ kind: 'text', text: chars.slice(pos, at).join(''), start: pos, end: at });
      pos = at;
    }
    const last = parts[parts.length - 1];
    if (last && last.kind === 'calls' && last.offset === at) last.calls.push(call);
    else parts.push({ kind: 'calls', offset: at, calls: [call] });
  }
  if (pos < chars.length) {
    parts.push({ kind: 'text', text: chars.slice(pos).join(''), start: pos, end: chars.length });
  }
  return parts;
}
