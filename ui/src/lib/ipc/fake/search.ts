/**
 * Message search in the fake (`search_messages`): a case-insensitive substring scan of titles,
 * message text, tool arguments and tool results, newest conversation first, each hit with a
 * snippet whose matches are wrapped in U+E000 … U+E001 like the service's FTS5 snippets, over
 * every version of every message (`onCurrentPath` says which are shown now, ./tree.ts).
 */
import type { Backend } from '../backend';
import type { SearchHit, SearchHitKind } from '../bindings';
import type { FakeState } from './state';
import { pathOf } from './tree';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
/** Characters of context before the first match and in all. */
const BEFORE = 40;
const WIDTH = 140;

/** `text` around its first match of `q` (lowercase), every match in it marked; null without a match. */
export function fakeSnippet(text: string, q: string): string | null {
  const lower = text.toLowerCase();
  const at = lower.indexOf(q);
  if (at < 0 || lower.length !== text.length) return at < 0 ? null : mark(text.slice(0, WIDTH), q);
  const from = Math.max(0, at - BEFORE);
  const to = Math.min(text.length, from + WIDTH);
  return (from > 0 ? '…' : '') + mark(text.slice(from, to).replace(/\s+/g, ' '), q) + (to < text.length ? '…' : '');
}

function mark(text: string, q: string): string {
  const lower = text.toLowerCase();
  let out = '';
  let pos = 0;
  for (let at = lower.indexOf(q); at >= 0 && q !== ''; at = lower.indexOf(q, pos)) {
    out += text.slice(pos, at) + '\uE000' + text.slice(at, at + q.length) + '\uE001';
    pos = at + q.length;
  }
  return out + text.slice(pos);
}

export function searchCommandsFake(st: FakeState): Pick<Backend, 'searchMessages'> {
  return {
    async searchMessages(query, limit) {
      const q = query.trim().toLowerCase();
      const max = Math.min(MAX_LIMIT, Math.max(1, limit ?? DEFAULT_LIMIT));
      if (!q) return [];
      const hits: SearchHit[] = [];
      const convs = [...st.conversations.values()].sort((a, b) => b.summary.updatedAt - a.summary.updatedAt);
      for (const c of convs) {
        const base = { conversationId: c.summary.id, title: c.summary.title };
        const shown = new Set(pathOf(c).map((m) => m.id));
        const add = (kind: SearchHitKind, text: string, at: number, extra: Partial<SearchHit> = {}) => {
          const snippet = fakeSnippet(text, q);
          if (snippet !== null && hits.length < max) hits.push({ ...base, kind, snippet, createdAt: at, onCurrentPath: true, ...extra });
        };
        add('title', c.summary.title, c.summary.createdAt);
        for (const m of c.messages) {
          const on = { messageId: m.id, role: m.role, onCurrentPath: shown.has(m.id) };
          add('message', m.content, m.createdAt, on);
          for (const call of m.toolCalls) {
            add('toolArguments', call.arguments, m.createdAt, { ...on, toolCallId: call.callId });
            if (call.result) add('toolResult', call.result.output, m.createdAt, { ...on, toolCallId: call.callId });
          }
        }
        if (hits.length >= max) break;
      }
      return hits;
    },
  };
}
