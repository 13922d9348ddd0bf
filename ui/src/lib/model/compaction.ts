/**
 * Where a compaction's boundary sits in the conversation and what it says. A compaction belongs to
 * the message whose turn it happened in (`messageId`): `iteration` n >= 1 is before that message's
 * request n (mid-turn, so after the tool results of round n-1), 0 is after the whole message
 * ("Compact now"). Pure: the same for a live turn and a reopened one, since both build the message
 * model (message.ts) with the same `compactions`. Invariant: every part of the message stays
 * shown; a boundary only sits between parts, never replaces one.
 */
import type { StoredCompaction } from '../ipc/bindings';
import { formatCount } from '../util/format';
import type { Part, Placed } from './offsets';

/** The boundaries of one message: `inside[k]` go before part k (`inside[parts.length]`: after the last part), `after` below the message. */
export interface BoundarySlots {
  inside: StoredCompaction[][];
  after: StoredCompaction[];
}

/**
 * Places `compactions` among a message's parts (`splitAtOffsets`). A boundary before request n
 * goes right after the last group of calls made in an earlier round (their results were what the
 * compaction shortened); before request 1, or with no such call, at the top.
 */
export function placeBoundaries<T extends Placed>(parts: readonly Part<T>[], compactions: readonly StoredCompaction[]): BoundarySlots {
  const inside: StoredCompaction[][] = Array.from({ length: parts.length + 1 }, () => []);
  const after: StoredCompaction[] = [];
  for (const c of compactions) {
    if (c.iteration <= 0) {
      after.push(c);
      continue;
    }
    let at = 0;
    parts.forEach((p, i) => {
      if (p.kind === 'calls' && p.calls.some((call) => call.iteration < c.iteration)) at = i + 1;
    });
    inside[at]!.push(c);
  }
  return { inside, after };
}

function plural(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** The boundary's line: "Earlier messages summarised", or for stubs only "N older tool results shortened". */
export function boundaryTitle(c: StoredCompaction): string {
  if (c.summary !== null) return 'Earlier messages summarised';
  return `${plural(c.stubbed, 'older tool result', 'older tool results')} shortened`;
}

/** What the boundary adds after its title (plain words, no markup). */
export function boundaryDetail(c: StoredCompaction): string {
  if (c.undone) return 'Undone: the full history goes with the next request.';
  const parts: string[] = [];
  if (c.summary === null) parts.push('the model can read them back');
  else if (c.stubbed > 0) parts.push(`${plural(c.stubbed, 'older tool result', 'older tool results')} shortened too; the model can read them back`);
  return parts.join('; ');
}

/** "12,400 → 3,100 tokens" (what the request was estimated at before and after). */
export function tokensChange(c: Pick<StoredCompaction, 'tokensBefore' | 'tokensAfter'>): string {
  return `${formatCount(c.tokensBefore)} → ${formatCount(c.tokensAfter)} tokens`;
}

/** The boundary's tooltip: what was done and that nothing was deleted. */
export function boundaryTooltip(c: StoredCompaction): string {
  const what: string[] = [];
  if (c.summary !== null) what.push(`${plural(c.summarised, 'message', 'messages')} above are sent as a summary${c.summariser ? ` written by ${c.summariser}` : ''}`);
  if (c.stubbed > 0) what.push(`${plural(c.stubbed, 'tool result', 'tool results')} are sent as a short stub the model can read back in full`);
  return `${what.join('; ')} (${tokensChange(c)}). Nothing is deleted: every message above stays stored and shown. Pinned messages are never summarised.`;
}

/** The words after "Compact now" finished. */
export function compactedNotice(c: StoredCompaction | null): string {
  if (!c) return 'Nothing to compact: the conversation is already short.';
  return `Compacted: ${tokensChange(c)}.`;
}
