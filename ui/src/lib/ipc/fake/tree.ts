/**
 * The message tree in the fake: editing a question and asking again add versions, switching
 * shows another, deleting one shows a neighbour, branching copies the path into a new chat.
 * A conversation's `messages` is its current path; the branches not shown wait in `hidden`, each
 * under the id of its first message (a version of the message at that place on the path).
 */
import type { Backend } from '../backend';
import type { ConversationView, StoredMessage } from '../bindings';
import { conversation, conversationCommands } from './conversations';
import { ipcError } from './errors';
import type { FakeConversation, FakeState } from './state';
import { runTurn } from './turns';

/** Sets the version list of every version of a message (shown or hidden). */
function setVersions(conv: FakeConversation, versions: string[]): void {
  for (const m of [...conv.messages, ...[...(conv.hidden?.values() ?? [])].map((b) => b[0])]) {
    if (m && versions.includes(m.id)) m.versions = [...versions];
  }
}

/** Hides the path from `index` on (under its first message's id); returns that message. */
function hideFrom(conv: FakeConversation, index: number): StoredMessage | undefined {
  const branch = conv.messages.splice(index);
  const first = branch[0];
  if (first) (conv.hidden ??= new Map()).set(first.id, branch);
  return first;
}

/** Shows the hidden version `messageId` in place of the one at its place on the path. */
function show(conv: FakeConversation, messageId: string): boolean {
  const branch = conv.hidden?.get(messageId);
  const first = branch?.[0];
  if (!branch || !first) return false;
  const at = first.parentId === null ? 0 : conv.messages.findIndex((m) => m.id === first.parentId) + 1;
  if (at === 0 && first.parentId !== null) return false;
  hideFrom(conv, at);
  conv.hidden?.delete(messageId);
  conv.messages.push(...branch);
  return true;
}

function markdown(m: StoredMessage): string {
  return m.role === 'user' ? `## You\n\n${m.content}\n` : `## Assistant (${m.model ?? 'unknown model'})\n\n${m.content}\n`;
}

export function treeCommands(st: FakeState): Pick<Backend, 'regenerate' | 'editMessage' | 'switchVersion' | 'deleteVersion' | 'branchConversation' | 'messageMarkdown'> {
  const open = (cid: string): Promise<ConversationView> => conversationCommands(st).openConversation(cid);
  const streaming = (c: FakeConversation) => c.messages.some((m) => m.status === 'streaming');
  return {
    async regenerate(conversationId, messageId, choices, handlers) {
      const c = st.conversations.get(conversationId);
      const at = messageId ? (c?.messages.findIndex((m) => m.id === messageId) ?? -1) : (c?.messages.map((m) => m.role).lastIndexOf('user') ?? -1);
      // Like the service: no conversation, or none with a question, is the same "not found".
      if (!c || at < 0) throw ipcError('regenerateNotFound', { id: conversationId });
      if (streaming(c)) throw ipcError('editStreaming');
      const question = c.messages[at]?.role === 'user' ? at : at - 1;
      const old = hideFrom(c, question + 1);
      const versions = old ? old.versions : [];
      const text = c.messages[question]?.content ?? '';
      const started = await runTurn(st, c, text, { provider: choices?.provider ?? null, model: choices?.model ?? null }, handlers, { answerOnly: true, versions });
      setVersions(c, [...versions, started.messageId]);
      return started;
    },
    async editMessage(conversationId, messageId, text, choices, handlers) {
      const c = conversation(st, conversationId);
      const at = c.messages.findIndex((m) => m.id === messageId && m.role === 'user');
      if (at < 0) throw ipcError('versionNotFound', { id: messageId });
      if (!text.trim()) throw ipcError('sendEmpty');
      if (streaming(c)) throw ipcError('editStreaming');
      const old = hideFrom(c, at);
      const versions = old ? old.versions : [];
      const started = await runTurn(st, c, text, { provider: choices?.provider ?? null, model: choices?.model ?? null }, handlers, { versions });
      setVersions(c, [...versions, started.userMessageId]);
      return started;
    },
    async switchVersion(conversationId, messageId) {
      const c = conversation(st, conversationId);
      if (!c.messages.some((m) => m.id === messageId) && !show(c, messageId)) throw ipcError('versionNotFound', { id: messageId });
      return open(conversationId);
    },
    async deleteVersion(conversationId, messageId) {
      const c = conversation(st, conversationId);
      const at = c.messages.findIndex((m) => m.id === messageId);
      const m = at >= 0 ? c.messages[at] : c.hidden?.get(messageId)?.[0];
      if (!m) throw ipcError('versionNotFound', { id: messageId });
      if (at >= 0 && c.messages.slice(at).some((x) => x.status === 'streaming')) throw ipcError('versionStreaming');
      const rest = m.versions.filter((v) => v !== messageId);
      if (m.parentId === null && rest.length === 0) throw ipcError('versionOnlyFirst');
      if (at >= 0) {
        const i = m.versions.indexOf(messageId);
        const next = m.versions[i + 1] ?? m.versions[i - 1];
        c.messages.splice(at);
        if (next) show(c, next);
      } else {
        c.hidden?.delete(messageId);
      }
      setVersions(c, rest);
      return open(conversationId);
    },
    async branchConversation(conversationId, messageId) {
      const c = conversation(st, conversationId);
      const at = c.messages.findIndex((m) => m.id === messageId);
      if (at < 0) throw ipcError('versionNotFound', { id: messageId });
      const cid = st.id('c');
      const now = Date.now();
      let parentId: string | null = null;
      const messages = c.messages.slice(0, at + 1).map((m) => {
        const copy: StoredMessage = { ...structuredClone(m), id: st.id('m'), parentId };
        copy.versions = [copy.id];
        parentId = copy.id;
        return copy;
      });
      const title = `${c.summary.title} (branch)`;
      st.conversations.set(cid, { summary: { ...c.summary, id: cid, title, createdAt: now, updatedAt: now, pinned: false, archived: false }, messages, disabled: new Set(c.disabled), ...(c.agent ? { agent: c.agent } : {}), ...(c.instructions ? { instructions: c.instructions } : {}) });
      return cid;
    },
    async messageMarkdown(conversationId, messageId) {
      const c = conversation(st, conversationId);
      const m = c.messages.find((x) => x.id === messageId) ?? c.hidden?.get(messageId)?.[0];
      if (!m) throw ipcError('versionNotFound', { id: messageId });
      return markdown(m);
    },
  };
}
