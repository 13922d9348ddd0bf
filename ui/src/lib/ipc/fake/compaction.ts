/**
 * Compaction in the fake, as the service does it: "Compact now" summarises what comes before the
 * latest question (pinned messages are kept as written) and shortens its tool results, adding a
 * compaction row made "during" the path's last message (reason manual); a live turn's `compacted`
 * event is stored as a row the way the Recorder does; rows are marked undone one by one, as the
 * service does (the UI marks every one in force); pins are kept per message. The chat's own model
 * writes the summary; "Compact now" with nothing before the latest question is refused.
 * Nothing is ever deleted or rewritten: a compaction only adds a record. A chat on a profile whose
 * server does not answer (the seeded `lmstudio`) cannot be summarised: it fails and changes nothing.
 * Token counts are the fake's estimate (characters / 4), not the engine's.
 */
import type { Backend } from '../backend';
import type { ChatEvent, StoredCompaction, StoredMessage } from '../bindings';
import { conversation } from './conversations';
import { fakeOnlyError, ipcError } from './errors';
import { pathCompactions, pathOf, refuseWhileStreaming } from './tree';
import type { FakeConversation, FakeState } from './state';

/** The most recent messages a live compaction keeps as they are (the question and its answer). */
export const KEEP_RECENT = 2;

/** The fake's token estimate of a message as sent. */
function tokensOf(m: StoredMessage): number {
  const results = m.toolCalls.reduce((n, c) => n + (c.result?.output.length ?? 0) + c.arguments.length, 0);
  return Math.ceil((m.content.length + results) / 4) + 4;
}

/** A deterministic summary in the words the summariser prompt asks for (names, numbers, decisions, what tools found). */
function summarise(messages: readonly StoredMessage[]): string {
  const lines = messages.map((m) => {
    const text = m.content.replace(/\s+/g, ' ').trim().slice(0, 100);
    const tools = m.toolCalls.map((c) => `${c.name} → ${(c.result?.output ?? '').replace(/\s+/g, ' ').slice(0, 60)}`);
    return `- ${m.role === 'user' ? 'The person asked' : 'The assistant answered'}: ${text || '(no text)'}${tools.length ? ` (tools: ${tools.join('; ')})` : ''}`;
  });
  return `Summary of ${messages.length} earlier message${messages.length === 1 ? '' : 's'}:\n${lines.join('\n')}`;
}

/**
 * Who writes `c`'s summaries, as the service resolves it: the model picked for them, or, when none
 * is picked, the chat's own; a pick whose profile no longer exists falls back to the chat's own
 * model and says why (carried on the compaction, as the service does).
 */
export function summariserOf(st: FakeState, c: FakeConversation, provider: string, model: string): { name: string; fallback?: string } {
  const pick = c.setup?.summariser;
  if (!pick) return { name: `${provider}/${model}` };
  if (st.profiles.some((p) => p.name === pick.provider)) return { name: `${pick.provider}/${pick.model}` };
  return {
    name: `${provider}/${model}`,
    fallback: `The profile '${pick.provider}' picked to write this chat's summaries no longer exists; this chat's own model (${model}) writes summaries instead.`,
  };
}

/** The chat's own model writes its summaries: a profile whose server does not answer (the seeded `lmstudio`) fails. */
export function summariserFails(st: FakeState, c: FakeConversation): string | null {
  const provider = c.setup?.provider;
  if (!provider || !st.stale.has(provider)) return null;
  return `The summariser ${provider}/${c.setup?.model ?? 'its model'} did not answer (connection refused).`;
}

/**
 * Compacts `c`'s current path now, as the service does: everything before the latest question is
 * summarised by the chat's model (pinned messages are quoted, not summarised) and its results are
 * stubbed; the row belongs to the path's last message. Nothing before the latest question: refused.
 */
export function compactPath(st: FakeState, c: FakeConversation): StoredCompaction {
  const path = pathOf(c);
  const question = path.map((m) => m.role).lastIndexOf('user');
  const older = path.slice(0, Math.max(0, question));
  const summarised = older.filter((m) => !m.pinned);
  const last = path.at(-1);
  if (!last || summarised.length === 0) throw fakeOnlyError('config', 'Nothing to compact yet: everything before the latest question is already summarised or short.');
  const failed = summariserFails(st, c);
  if (failed) throw fakeOnlyError('network', `${failed} The conversation is unchanged.`, true);
  const summary = summarise(summarised);
  const writer = summariserOf(st, c, c.setup?.provider ?? last.provider ?? 'openai', c.setup?.model ?? last.model ?? 'gpt-4o-mini');
  const before = path.reduce((n, m) => n + tokensOf(m), 0);
  const after = Math.ceil(summary.length / 4) + path.slice(older.length).reduce((n, m) => n + tokensOf(m), 0) + older.filter((m) => m.pinned).reduce((n, m) => n + tokensOf(m), 0);
  const record: StoredCompaction = {
    id: st.id('k'),
    messageId: last.id,
    throughMessageId: older.at(-1)?.id ?? last.id,
    compaction: {
      covered: older.length,
      summary,
      stubbed: older.flatMap((m) => m.toolCalls.filter((x) => x.result).map((x) => x.callId)),
    },
    tokensBefore: before,
    tokensAfter: after,
    summariser: writer.name,
    ...(writer.fallback ? { summariserFallback: writer.fallback } : {}),
    reason: 'manual',
    createdAt: Date.now(),
    undone: false,
  };
  c.compactions = [...(c.compactions ?? []), record];
  return structuredClone(record);
}

/** What the Recorder stores for a live `compacted` event of the answer `messageId`. */
export function recordCompaction(st: FakeState, c: FakeConversation, messageId: string, e: Extract<ChatEvent, { type: 'compacted' }>): void {
  const row: StoredCompaction = {
    id: st.id('k'),
    messageId,
    compaction: structuredClone(e.compaction),
    tokensBefore: e.tokensBefore,
    tokensAfter: e.tokensAfter,
    reason: e.reason,
    ...(e.summariser !== undefined ? { summariser: e.summariser } : {}),
    ...(e.usage ? { usage: { ...e.usage } } : {}),
    ...(e.summariserFallback !== undefined ? { summariserFallback: e.summariserFallback } : {}),
    createdAt: Date.now(),
    undone: false,
  };
  c.compactions = [...(c.compactions ?? []), row];
}

export function compactionCommands(st: FakeState): Pick<Backend, 'compactConversation' | 'listCompactions' | 'getCompaction' | 'setCompactionUndone' | 'setMessagePinned'> {
  return {
    async compactConversation(id) {
      const c = conversation(st, id);
      refuseWhileStreaming(c);
      // The summariser's request takes a moment (the progress can be seen).
      await new Promise((resolve) => setTimeout(resolve, st.tick * 40));
      return compactPath(st, c);
    },
    async listCompactions(id) {
      return pathCompactions(conversation(st, id));
    },
    async getCompaction(id, compactionId) {
      const row = (conversation(st, id).compactions ?? []).find((x) => x.id === compactionId);
      if (!row) throw fakeOnlyError('config', `compaction '${compactionId}' not found`);
      return structuredClone(row);
    },
    async setCompactionUndone(id, compactionId, undone) {
      const c = conversation(st, id);
      if (!(c.compactions ?? []).some((x) => x.id === compactionId)) throw fakeOnlyError('config', `compaction '${compactionId}' not found`);
      c.compactions = (c.compactions ?? []).map((x) => (x.id === compactionId ? { ...x, undone } : x));
    },
    async setMessagePinned(id, messageId, pinned) {
      const m = conversation(st, id).messages.find((x) => x.id === messageId);
      if (!m) throw ipcError('messageNotFound', { id: messageId });
      m.pinned = pinned;
    },
  };
}
