/**
 * The fake's message tree, modelled on the store's: a conversation keeps every message it ever
 * had (`FakeConversation.messages`, in insertion order, which plays the part of `seq`), each with
 * its `parentId`; `head` names the leaf of the current path. What is shown or answered is the path
 * from the root to the head only. Versions of a message are the messages with the same parent and
 * role, oldest first. Choosing a version puts it on the path and follows, below it, the child
 * chosen most recently (ties: the newest), as `Store::select_message` does.
 *
 * Invariant: `head` is null or the id of a message in `messages`, and every `parentId` names a
 * message of the same conversation (deleting a message deletes everything below it).
 */
import type { Backend } from '../backend';
import type { ConversationView, StoredCompaction, StoredMessage } from '../bindings';
import { conversation } from './conversations';
import { errorText, ipcError } from './errors';
import type { FakeConversation, FakeState } from './state';

/** The service's words when an edit or regenerate meets a streaming answer (`Error::Busy`). */
export const BUSY_MESSAGE = errorText('editStreaming');

function byId(c: FakeConversation): Map<string, StoredMessage> {
  return new Map(c.messages.map((m) => [m.id, m]));
}

/** The current path, root first: the head walked up through `parentId`. */
export function pathOf(c: FakeConversation): StoredMessage[] {
  const ids = byId(c);
  const head = c.head === undefined ? c.messages.at(-1)?.id : c.head;
  const path: StoredMessage[] = [];
  for (let m = head ? ids.get(head) : undefined; m; m = m.parentId ? ids.get(m.parentId) : undefined) path.push(m);
  return path.reverse();
}

/** The versions of `m` (itself included), oldest first. */
export function versionsOf(c: FakeConversation, m: StoredMessage): string[] {
  return c.messages.filter((x) => x.parentId === m.parentId && x.role === m.role).map((x) => x.id);
}

/** The path as the shell sends it: copies, each with its versions. */
export function shownPath(c: FakeConversation): StoredMessage[] {
  return pathOf(c).map((m) => ({ ...structuredClone(m), versions: versionsOf(c, m) }));
}

/** Marks every message on the current path as chosen now (after a turn added to it, or a switch). */
export function touchPath(st: FakeState, c: FakeConversation): void {
  const now = st.clock();
  for (const m of pathOf(c)) c.chosenAt.set(m.id, now);
}

/**
 * Puts `id` on the current path: below it, each step follows the child chosen most recently
 * (ties: the newest); the new head is the leaf reached.
 */
export function select(st: FakeState, c: FakeConversation, id: string): void {
  let at = id;
  for (;;) {
    const children = c.messages.map((m, seq) => ({ m, seq })).filter((x) => x.m.parentId === at);
    if (children.length === 0) break;
    children.sort((a, b) => (c.chosenAt.get(b.m.id) ?? 0) - (c.chosenAt.get(a.m.id) ?? 0) || b.seq - a.seq);
    at = (children[0] as { m: StoredMessage }).m.id;
  }
  c.head = at;
  touchPath(st, c);
}

/** `id` and everything below it. */
function subtree(c: FakeConversation, id: string): Set<string> {
  const out = new Set([id]);
  for (const m of c.messages) if (m.parentId !== null && out.has(m.parentId)) out.add(m.id);
  return out;
}

/**
 * Refuses a change to a conversation while one of its answers streams (the fake is stricter than
 * the store, which refuses a version change only when the streaming answer is in that branch).
 */
export function refuseWhileStreaming(c: FakeConversation, change: 'edit' | 'version' = 'edit'): void {
  if (c.messages.some((m) => m.status === 'streaming')) throw ipcError(change === 'edit' ? 'editStreaming' : 'versionStreaming');
}

/** The message `id` of `c`, or the service's "not found". */
export function messageIn(c: FakeConversation, id: string): StoredMessage {
  const m = c.messages.find((x) => x.id === id);
  if (!m) throw ipcError('versionNotFound', { id });
  return m;
}

/** The view `open_conversation` returns: the path's last `page` messages. */
export function viewOf(c: FakeConversation, page: number): ConversationView {
  const path = shownPath(c);
  const from = Math.max(0, path.length - page);
  return {
    conversation: { ...c.summary, messageCount: path.length },
    messages: path.slice(from),
    earlier: from,
    disabledTools: [...c.disabled],
    ...(c.agent ? { agent: c.agent } : {}),
  };
}

/** The compaction rows of `path` (made during one of its messages), oldest first, as the store lists them. */
export function pathCompactions(c: FakeConversation, path: readonly StoredMessage[] = pathOf(c)): StoredCompaction[] {
  const ids = new Set(path.map((m) => m.id));
  return structuredClone((c.compactions ?? []).filter((k) => ids.has(k.messageId)));
}

/** A message as Markdown, in the shape of the service's `message_markdown`: who wrote it, its text, each tool call where it happened. */
export function markdownOf(m: StoredMessage): string {
  if (m.role !== 'assistant') return `## You\n\n${m.content}\n\n`;
  const who = m.provider && m.model && m.provider !== m.model ? `${m.provider} · ${m.model}` : (m.model ?? 'unknown model');
  const chars = [...m.content];
  let out = `## Assistant (${who})\n\n`;
  let printed = 0;
  for (const c of [...m.toolCalls].sort((a, b) => a.iteration - b.iteration || a.index - b.index)) {
    const upto = Math.max(c.textOffset, printed);
    out += chars.slice(printed, upto).join('');
    printed = upto;
    out += `\n\n<details><summary>Tool call: <code>${c.name}</code></summary>\n\n\`\`\`json\n${c.arguments}\n\`\`\`\n`;
    if (c.result) out += `\nResult (${c.result.status}, ${c.result.durationMs} ms):\n\n\`\`\`\n${c.result.output}\n\`\`\`\n`;
    out += '</details>\n\n';
  }
  return `${out}${chars.slice(printed).join('')}\n\n`;
}

export function treeCommands(st: FakeState, page: number): Pick<Backend, 'switchVersion' | 'deleteVersion' | 'branchConversation' | 'messageMarkdown'> {
  return {
    async switchVersion(cid, messageId) {
      const c = conversation(st, cid);
      messageIn(c, messageId);
      refuseWhileStreaming(c, 'version');
      select(st, c, messageId);
      return viewOf(c, page);
    },
    async deleteVersion(cid, messageId) {
      const c = conversation(st, cid);
      const m = messageIn(c, messageId);
      refuseWhileStreaming(c, 'version');
      const versions = versionsOf(c, m);
      if (m.parentId === null && versions.length === 1) throw ipcError('versionOnlyFirst');
      const gone = subtree(c, messageId);
      const onPath = pathOf(c).some((x) => x.id === messageId);
      c.messages = c.messages.filter((x) => !gone.has(x.id));
      for (const id of gone) c.chosenAt.delete(id);
      if (onPath) {
        // As the store does: the next version, else the previous one, else the parent.
        const at = versions.indexOf(messageId);
        const next = versions[at + 1] ?? versions[at - 1] ?? m.parentId;
        if (next) select(st, c, next);
      }
      return viewOf(c, page);
    },
    async branchConversation(cid, messageId) {
      const c = conversation(st, cid);
      messageIn(c, messageId);
      refuseWhileStreaming(c);
      // Root to the message, on the path through it (its ancestors are one line).
      const ids = byId(c);
      const line: StoredMessage[] = [];
      for (let m = ids.get(messageId); m; m = m.parentId ? ids.get(m.parentId) : undefined) line.push(m);
      line.reverse();
      const now = Date.now();
      const id = st.id('c');
      let parent: string | null = null;
      const messages = line.map((m) => {
        const copy: StoredMessage = { ...structuredClone(m), id: st.id('m'), parentId: parent, versions: [], toolCalls: m.toolCalls.map((t) => ({ ...structuredClone(t), callId: st.id('call') })) };
        parent = copy.id;
        return copy;
      });
      const branch: FakeConversation = {
        summary: { id, title: `${c.summary.title} (branch)`, createdAt: now, updatedAt: now, messageCount: messages.length, pinned: false, archived: false },
        messages,
        head: parent,
        chosenAt: new Map(),
        disabled: new Set(c.disabled),
        ...(c.instructions ? { instructions: c.instructions } : {}),
        ...(c.agent ? { agent: c.agent } : {}),
        // Like the store: the branch keeps the chat's setup (toolsets, parameters, model).
        ...(c.setup ? { setup: structuredClone(c.setup) } : {}),
      };
      st.conversations.set(id, branch);
      touchPath(st, branch);
      return id;
    },
    async messageMarkdown(cid, messageId) {
      return markdownOf(messageIn(conversation(st, cid), messageId));
    },
  };
}
