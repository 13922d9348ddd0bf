/**
 * A compaction as the conversation shows it, and where its boundary sits. One model for the live
 * `compacted` event and the stored row (`list_compactions`), so a reopened chat shows exactly what
 * the live turn showed. A compaction belongs to the answer it was made in (the row's
 * `messageId`; "Compact now": the last message). Its boundary sits right after the card of the last
 * call of that answer whose result it shortened to a stub (from there on the model sees the
 * stubs), or at the answer's top when none of its results was shortened; "Compact now" puts it
 * below the message. Both the event and the row carry what this needs (the stubbed call ids and
 * the reason), so no position is stored. Compactions are cumulative (the latest in force includes
 * what earlier ones did); undo sends the full history again, so it marks every one undone.
 * Invariant: every part of a message stays shown; a boundary only sits between parts.
 */
import type { ChatEvent, CompactionReason, StoredCompaction } from '../ipc/bindings';
import { formatCount } from '../util/format';
import type { Part, Placed } from './offsets';

/**
 * What the live event and the stored row both say (the row's id, times and the summariser's usage are the store's).
 * `summariserFallback`: why the model picked to write the chat's summaries did not write this one (the chat's own did).
 */
export type CompactionModel = Pick<StoredCompaction, 'compaction' | 'tokensBefore' | 'tokensAfter' | 'summariser' | 'summariserFallback' | 'reason' | 'undone'>;

/** The model of a live `compacted` event. */
export function compactionFromEvent(e: Extract<ChatEvent, { type: 'compacted' }>): CompactionModel {
  return {
    compaction: structuredClone(e.compaction),
    tokensBefore: e.tokensBefore,
    tokensAfter: e.tokensAfter,
    ...(e.summariser !== undefined ? { summariser: e.summariser } : {}),
    ...(e.summariserFallback !== undefined ? { summariserFallback: e.summariserFallback } : {}),
    reason: e.reason,
    undone: false,
  };
}

/** The model of a stored compaction row. */
export function compactionFromStored(c: StoredCompaction): CompactionModel {
  return {
    compaction: structuredClone(c.compaction),
    tokensBefore: c.tokensBefore,
    tokensAfter: c.tokensAfter,
    ...(c.summariser !== undefined ? { summariser: c.summariser } : {}),
    ...(c.summariserFallback !== undefined ? { summariserFallback: c.summariserFallback } : {}),
    reason: c.reason,
    undone: c.undone,
  };
}

/** The summary it sends (null: only tool results were shortened). */
export function summaryOf(c: CompactionModel): string | null {
  return c.compaction.covered > 0 ? (c.compaction.summary ?? null) : null;
}

/** How many tool results it sends as a stub (all so far: compactions are cumulative). */
export function stubCount(c: CompactionModel): number {
  return c.compaction.stubbed.length;
}

/** The boundaries of one message: `inside[k]` go before part k (`inside[parts.length]`: after the last part), `after` below the message. */
export interface BoundarySlots {
  inside: CompactionModel[][];
  after: CompactionModel[];
}

/**
 * Places `compactions` among a message's parts (`splitAtOffsets`): after the last group of calls
 * holding a call whose result the compaction stubbed, else at the top; "Compact now" below the message.
 */
export function placeBoundaries<T extends Placed & { id: string }>(parts: readonly Part<T>[], compactions: readonly CompactionModel[]): BoundarySlots {
  const inside: CompactionModel[][] = Array.from({ length: parts.length + 1 }, () => []);
  const after: CompactionModel[] = [];
  for (const c of compactions) {
    if (c.reason === 'manual') {
      after.push(c);
      continue;
    }
    const stubbed = new Set(c.compaction.stubbed);
    let at = 0;
    parts.forEach((p, i) => {
      if (p.kind === 'calls' && p.calls.some((call) => stubbed.has(call.id))) at = i + 1;
    });
    inside[at]!.push(c);
  }
  return { inside, after };
}

/** Every compaction of the messages marked undone (undo sends the full history: none stays in force). */
export function undoAll<M extends { compactions: CompactionModel[] }>(m: M): M {
  return m.compactions.some((c) => !c.undone) ? { ...m, compactions: m.compactions.map((c) => (c.undone ? c : { ...c, undone: true })) } : m;
}

function plural(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/** The boundary's line: "Earlier messages summarised", or for stubs only "N older tool results shortened". */
export function boundaryTitle(c: CompactionModel): string {
  if (summaryOf(c) !== null) return 'Earlier messages summarised';
  return `${plural(stubCount(c), 'older tool result', 'older tool results')} shortened`;
}

/** What the boundary adds after its title (plain words, no markup). */
export function boundaryDetail(c: CompactionModel): string {
  if (c.undone) return 'undone: the full history goes with the next request';
  if (summaryOf(c) === null) return 'the model can read them back';
  if (stubCount(c) > 0) return `${plural(stubCount(c), 'older tool result', 'older tool results')} shortened too`;
  return '';
}

/** "12,400 → 3,100 tokens" (what the next request was estimated at before and after). */
export function tokensChange(c: Pick<CompactionModel, 'tokensBefore' | 'tokensAfter'>): string {
  return `${formatCount(c.tokensBefore)} → ${formatCount(c.tokensAfter)} tokens`;
}

const WHY: Record<CompactionReason, string> = {
  threshold: 'The next request would have filled most of the context window',
  tooLong: 'The provider refused the request as too long',
  manual: 'You chose Compact now',
};

/** The boundary's tooltip: why, what was done, and that nothing was deleted. */
export function boundaryTooltip(c: CompactionModel): string {
  const what: string[] = [];
  if (summaryOf(c) !== null) what.push(`${plural(c.compaction.covered, 'earlier message is', 'earlier messages are')} sent as a summary${c.summariser ? ` written by ${c.summariser}` : ''}`);
  if (stubCount(c) > 0) what.push(`${plural(stubCount(c), 'tool result is', 'tool results are')} sent as a short stub the model can read back in full`);
  return `${WHY[c.reason]}: ${what.join('; ')} (${tokensChange(c)}). Nothing is deleted: every message above stays stored and shown. Pinned messages are never summarised.`;
}

/** The words after "Compact now" finished (and why the picked summariser did not write it, when it did not). */
export function compactedNotice(c: Pick<CompactionModel, 'tokensBefore' | 'tokensAfter' | 'summariserFallback'> | null): string {
  if (!c) return 'Nothing to compact: the conversation is already short.';
  return `Compacted: ${tokensChange(c)}.${c.summariserFallback ? ` ${c.summariserFallback}` : ''}`;
}

/**
 * Compactions that sit at the same place (one turn that compacted several times between rounds
 * drawn as one group of cards), as one boundary: the latest is the one in force (compactions are
 * cumulative), the first says where the range starts.
 */
export interface BoundaryGroup {
  /** Oldest first; never empty. */
  all: CompactionModel[];
  /** The latest: what is sent now (its summary is the one shown). */
  latest: CompactionModel;
}

/** The group's line: the single boundary's title, or how many times it compacted and what it did in all. */
export function groupTitle(g: BoundaryGroup): string {
  const n = g.all.length;
  if (n === 1) return boundaryTitle(g.latest);
  const summaries = g.all.filter((c) => summaryOf(c) !== null).length;
  if (summaries === n) return `Earlier messages summarised ${n} times`;
  if (summaries === 0) return `Compacted ${n} times: ${plural(stubCount(g.latest), 'older tool result', 'older tool results')} shortened`;
  return `Compacted ${n} times: earlier messages summarised ${summaries === 1 ? 'once' : `${summaries} times`}`;
}

/** The group's tokens: before the first compaction → after the last. */
export function groupTokens(g: BoundaryGroup): string {
  return tokensChange({ tokensBefore: g.all[0]!.tokensBefore, tokensAfter: g.latest.tokensAfter });
}

/** Why the picked summariser did not write these summaries (each reason once), or null. */
export function groupFallback(g: BoundaryGroup): string | null {
  const reasons = [...new Set(g.all.map((c) => c.summariserFallback).filter((r): r is string => !!r))];
  return reasons.length ? reasons.join(' ') : null;
}

/** One line of the group's details: the nth compaction, what it did and its tokens. */
export function groupItem(c: CompactionModel, i: number): string {
  const by = summaryOf(c) !== null && c.summariser ? ` by ${c.summariser}` : '';
  return `${i + 1}. ${boundaryTitle(c)}${by} · ${tokensChange(c)}`;
}
