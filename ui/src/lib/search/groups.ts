/**
 * The sidebar's search results: the conversations that matched (the list's ranking), each followed
 * by the places inside it that matched (message text, tool arguments, tool results), then any
 * conversation only the message search found. One flat list of targets for the arrow keys. Pure.
 */
import type { ConversationSummary } from '../ipc/bindings';
import type { SearchHit } from '../ipc/bindings';

/** Hits shown under a conversation before "N more". */
export const HITS_PER_GROUP = 3;

export interface HitGroup {
  id: string;
  title: string;
  /** The list's row for it (null: only the message search found it). */
  conversation: ConversationSummary | null;
  /** Its hits in messages and tool calls, best first (title hits are the row itself). */
  hits: SearchHit[];
}

export type SearchTarget = { type: 'conversation'; id: string } | { type: 'hit'; hit: SearchHit };

export function groupHits(list: readonly ConversationSummary[], hits: readonly SearchHit[]): HitGroup[] {
  const groups = new Map<string, HitGroup>();
  for (const c of list) groups.set(c.id, { id: c.id, title: c.title, conversation: c, hits: [] });
  for (const h of hits) {
    let g = groups.get(h.conversationId);
    if (!g) {
      g = { id: h.conversationId, title: h.title, conversation: null, hits: [] };
      groups.set(h.conversationId, g);
    }
    if (h.kind !== 'title' && h.messageId) g.hits.push(h);
  }
  return [...groups.values()];
}

/** What is shown of a group: its first hits, or all once the person asked for more. */
export function shownHits(g: HitGroup, expanded: boolean): SearchHit[] {
  return expanded ? g.hits : g.hits.slice(0, HITS_PER_GROUP);
}

/** The arrow keys' order: each conversation, then its shown hits. */
export function searchTargets(groups: readonly HitGroup[], expanded: ReadonlySet<string>): SearchTarget[] {
  const out: SearchTarget[] = [];
  for (const g of groups) {
    out.push({ type: 'conversation', id: g.id });
    for (const hit of shownHits(g, expanded.has(g.id))) out.push({ type: 'hit', hit });
  }
  return out;
}

/** The label a hit carries for where it matched. */
export function hitPlace(hit: SearchHit): string | null {
  if (hit.kind === 'toolArguments') return 'tool arguments';
  if (hit.kind === 'toolResult') return 'tool result';
  if (hit.kind === 'attachment') return hit.attachment ? `attached file ${hit.attachment}` : 'attached file';
  return null;
}
