/**
 * Compaction in the fake, as the service does it: "compact now" adds a row that summarises the
 * current path before its latest question (older tool results as stubs), list and show read the
 * rows of the current path, undo only marks one, and pins mark a message. Nothing here changes
 * or removes a message.
 */
import type { Backend } from '../backend';
import type { StoredCompaction } from '../bindings';
import { conversation } from './conversations';
import { ipcError, fakeOnlyError } from './errors';
import type { FakeState } from './state';
import { pathOf } from './tree';

/** Results longer than this become stubs (the service's `STUB_MIN_CHARS`). */
const STUB_MIN_CHARS = 600;

export function compactionCommands(
  st: FakeState,
): Pick<Backend, 'compactConversation' | 'listCompactions' | 'getCompaction' | 'setCompactionUndone' | 'setMessagePinned'> {
  const rows = (cid: string): StoredCompaction[] => {
    const c = conversation(st, cid);
    c.compactions ??= [];
    return c.compactions;
  };
  const find = (cid: string, id: string): StoredCompaction => {
    const row = rows(cid).find((r) => r.id === id);
    if (!row) throw ipcError('compactionNotFound', { id });
    return row;
  };
  return {
    async compactConversation(cid) {
      const c = conversation(st, cid);
      if (c.messages.some((m) => m.status === 'streaming')) throw ipcError('compactStreaming');
      const path = pathOf(c);
      const last = path.map((m) => m.role).lastIndexOf('user');
      const head = path.at(-1);
      if (last < 1 || !head) {
        throw fakeOnlyError('config', 'Nothing to compact yet: everything before the latest question is already summarised or short.');
      }
      const covered = path.slice(0, last);
      const stubbed = covered.flatMap((m) => m.toolCalls.filter((t) => (t.result?.output.length ?? 0) > STUB_MIN_CHARS).map((t) => t.callId));
      const summary = covered.map((m) => `- ${m.role === 'user' ? 'The person asked' : 'The assistant answered'}: ${(m.content.split('\n')[0] ?? '').slice(0, 120)}`).join('\n');
      const chars = covered.reduce((n, m) => n + m.content.length + m.toolCalls.reduce((k, t) => k + (t.result?.output.length ?? 0), 0), 0);
      const row: StoredCompaction = {
        id: st.id('k'),
        messageId: head.id,
        throughMessageId: covered.at(-1)?.id,
        compaction: { covered: covered.length, summary, stubbed, quoted: [] },
        tokensBefore: Math.ceil(chars / 4),
        tokensAfter: Math.ceil(summary.length / 4),
        reason: 'manual',
        summariser: head.model ?? undefined,
        createdAt: st.clock(),
        undone: false,
      };
      rows(cid).push(row);
      return structuredClone(row);
    },
    async listCompactions(cid) {
      const onPath = new Set(pathOf(conversation(st, cid)).map((m) => m.id));
      return structuredClone(rows(cid).filter((r) => onPath.has(r.messageId)));
    },
    async getCompaction(cid, id) {
      return structuredClone(find(cid, id));
    },
    async setCompactionUndone(cid, id, undone) {
      find(cid, id).undone = undone;
    },
    async setMessagePinned(cid, messageId, pinned) {
      const m = conversation(st, cid).messages.find((x) => x.id === messageId);
      if (!m) throw ipcError('messageNotFound', { id: messageId });
      m.pinned = pinned || undefined;
    },
  };
}
