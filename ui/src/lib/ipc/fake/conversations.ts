/** Conversations in the fake: each golden turn as a chat to start with, and the commands on them. */
import type { Backend } from '../backend';
import type { ChatSetup, ConversationSummary, ConversationView, MessagePage, StoredMessage } from '../bindings';
import { pathOf, shownPath, viewOf } from './tree';
import { OPEN_PAGE } from '../bindings';
import { userMessage } from '../../model/message';
import { ipcError } from './errors';
import { ANSWER, SCENARIOS, toStored, type Scenario } from './golden';
import type { FakeConversation, FakeState } from './state';
import { shortTitle } from './util';
import { contextOf } from './context';

/** A seeded conversation to look at Markdown, code and math without sending anything. */
const MARKDOWN_SAMPLE =
  'The roots of $ax^2 + bx + c = 0$ are\n\n$$\nx = \\frac{-b \\pm \\sqrt{b^2 - 4ac}}{2a}\n$$\n\nThe discriminant $\\Delta = b^2 - 4ac$ tells you how many real roots there are. In Rust:\n\n' +
  '```rust\nfn roots(a: f64, b: f64, c: f64) -> Option<(f64, f64)> {\n    let d = b * b - 4.0 * a * c;\n    if d < 0.0 {\n        return None;\n    }\n    let s = d.sqrt();\n    Some(((-b + s) / (2.0 * a), (-b - s) / (2.0 * a)))\n}\n```\n\n' +
  '| Zone | UTC offset |\n| --- | --- |\n| Asia/Tokyo | +09:00 |';

/** Each golden turn as the store returned it, newest first; then a Markdown sample. */
export function seedConversations(st: FakeState): void {
  const { id } = st;
  const add = (title: string, at: number, messages: StoredMessage[]) => {
    const cid = id('c');
    // One path: each message follows the one before it.
    const chained = messages.map((m, i) => ({ ...m, parentId: messages[i - 1]?.id ?? null, versions: [m.id] }));
    st.conversations.set(cid, { summary: { id: cid, title, createdAt: at, updatedAt: at, messageCount: messages.length, pinned: false, archived: false }, messages: chained, chosenAt: new Map(), disabled: new Set() });
  };
  const now = Date.now();
  const hour = 3_600_000;
  // The golden turns ran against the mock server; seeded here as chats with real models (one a
  // local server, one a model without a known price) and realistic sizes.
  const MODELS: [string, string][] = [
    ['openai', 'gpt-4o-mini'],
    ['openai', 'gpt-4o'],
    ['ollama', 'llama3.2'],
    ['openai', 'gpt-4o-mini'],
    ['openai', 'ft:gpt-4o-mini:acme'],
  ];
  let seeded = 0;
  const stored = (s: Scenario, at: number): StoredMessage => {
    const real = s.stored.role === 'assistant' && s.stored.provider === 'mock' ? MODELS[seeded++ % MODELS.length] : undefined;
    const scale = 57 + seeded * 13;
    const m: StoredMessage = {
      ...structuredClone(s.stored),
      ...(real
        ? {
            provider: real[0],
            model: real[1],
            // Later rounds read the earlier prefix from the prompt cache.
            usage: {
              ...s.stored.usage,
              promptTokens: s.stored.usage.promptTokens * scale,
              completionTokens: s.stored.usage.completionTokens * 9,
              cachedTokens: s.stored.toolCalls.length > 0 ? Math.round(s.stored.usage.promptTokens * scale * 0.35) : 0,
            },
          }
        : {}),
      id: id('m'),
      createdAt: at,
      updatedAt: at,
      toolCalls: s.stored.toolCalls.map((c) => ({ ...structuredClone(c), callId: id('call') })),
    };
    return m;
  };
  SCENARIOS.forEach((s, i) => {
    const at = now - (i * i + 1) * 5 * hour;
    add(s.prompt, at, [toStored(userMessage(id('m'), s.prompt), at, at), stored(s, at)]);
  });
  const at = now - 9 * 24 * hour;
  const sample = { ...stored(ANSWER, at), content: MARKDOWN_SAMPLE, reasoning: '', toolCalls: [], toolCallsMade: 0 };
  add('Quadratic formula refresher', at, [toStored(userMessage(id('m'), 'Remind me of the quadratic formula, with a Rust example'), at, at), sample]);
}

/** Like the shell: pinned first, then newest. */
function summaries(st: FakeState): ConversationSummary[] {
  return [...st.conversations.values()]
    .map((c) => ({ ...c.summary, messageCount: pathOf(c).length }))
    .sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updatedAt - a.updatedAt);
}

/** The conversation `cid`, or the service's answer when there is none (`missing`). */
export function conversation(st: FakeState, cid: string, missing: 'conversationNotFound' | 'deleteNotFound' | 'chatToolConversationNotFound' = 'conversationNotFound'): FakeConversation {
  const c = st.conversations.get(cid);
  if (!c) throw ipcError(missing, { id: cid });
  return c;
}

export function conversationCommands(
  st: FakeState,
): Pick<
  Backend,
  | 'listConversations'
  | 'searchConversations'
  | 'openConversation'
  | 'olderMessages'
  | 'renameConversation'
  | 'generateTitle'
  | 'chatInstructions'
  | 'conversationContext'
  | 'setChatInstructions'
  | 'setChatSetup'
  | 'chatGrants'
  | 'revokeChatGrant'
  | 'setConversationPinned'
  | 'setConversationArchived'
  | 'deleteConversation'
> {
  const { conversations } = st;
  return {
    async listConversations() {
      return summaries(st);
    },
    async searchConversations(query) {
      const q = query.trim().toLowerCase();
      if (!q) return summaries(st);
      return summaries(st).filter((s) => {
        const c = conversations.get(s.id);
        return s.title.toLowerCase().includes(q) || (c?.messages.some((m) => m.content.toLowerCase().includes(q)) ?? false);
      });
    },
    async openConversation(cid): Promise<ConversationView> {
      const c = conversation(st, cid);
      // Like the shell: the current path's last OPEN_PAGE messages, the rest read with olderMessages.
      return { ...viewOf(c, OPEN_PAGE), setup: structuredClone(c.setup ?? { toolsets: [] }) };
    },
    async olderMessages(cid, before, limit): Promise<MessagePage> {
      const path = shownPath(conversation(st, cid));
      const end = path.findIndex((m) => m.id === before);
      if (end < 0) throw ipcError('messageNotFound', { id: before });
      const from = Math.max(0, end - Math.max(1, limit));
      return { messages: path.slice(from, end), earlier: from };
    },
    async renameConversation(cid, title) {
      const c = conversation(st, cid);
      const t = title.trim();
      if (!t) throw ipcError('titleEmpty');
      c.summary.title = t;
      c.renamed = true;
    },
    async generateTitle(cid) {
      const c = conversation(st, cid);
      if (c.renamed || st.settings.chats.titles === 'firstLine') return c.summary.title;
      const first = c.messages.find((m) => m.role === 'user')?.content ?? '';
      if (!first.trim()) return c.summary.title;
      c.summary.title = shortTitle(first);
      return c.summary.title;
    },
    async chatInstructions(cid) {
      const c = conversation(st, cid);
      const parts = [st.settings.chats.instructions, c.instructions].map((p) => p?.trim() ?? '').filter((p) => p !== '');
      return { custom: st.settings.chats.instructions, chat: c.instructions ?? '', lastSent: c.messages.length > 0 && parts.length > 0 ? parts.join('\n\n') : null };
    },
    async conversationContext(cid, provider, model) {
      const c = conversation(st, cid);
      const profile = st.profiles.find((p) => p.name === (provider ?? c.setup?.provider)) ?? st.profiles[0];
      const chosen = model ?? c.setup?.model ?? profile?.model ?? 'gpt-4o-mini';
      return contextOf(c, chosen, st.settings.limits.compactAtPercent ?? null);
    },
    async setChatInstructions(cid, text) {
      const length = [...text].length;
      if (length > 20_000) throw ipcError('instructionsTooLong', { length });
      conversation(st, cid).instructions = text.trim() ? text : undefined;
    },
    async setChatSetup(cid, change) {
      const c = conversation(st, cid);
      const missing = change.toolsets?.find((t) => !st.agentsFile.toolsets.some((x) => x.name === t));
      if (missing !== undefined) throw ipcError('setupToolsetNotFound', { name: missing });
      const next: ChatSetup = structuredClone(c.setup ?? { toolsets: [] });
      if (change.toolsets) next.toolsets = [...change.toolsets];
      if (change.budget) {
        const b = change.budget;
        // The page checks every field first; the fake, like the service, refuses steps out of range.
        if (b.steps !== undefined && !(Number.isInteger(b.steps) && b.steps >= 1 && b.steps <= 10_000)) throw ipcError('setupBudgetInvalid', { steps: String(b.steps) });
        if (Object.values(b).some((v) => v !== undefined)) next.budget = { ...b };
        else delete next.budget;
      }
      if (change.generation) {
        if (Object.values(change.generation).some((v) => v !== undefined)) next.generation = { ...change.generation };
        else delete next.generation;
      }
      if (change.summariser?.kind === 'pick') {
        const { provider, model } = change.summariser;
        if (!st.profiles.some((p) => p.name === provider)) throw ipcError('setupSummariserNotFound', { name: provider });
        next.summariser = { provider, model };
      } else if (change.summariser?.kind === 'chat') delete next.summariser;
      if (change.provider !== undefined) {
        next.provider = change.provider;
        if (change.model !== undefined) next.model = change.model;
        else delete next.model;
      } else if (change.model !== undefined) next.model = change.model;
      c.setup = next;
      return structuredClone(next);
    },
    async chatGrants(cid) {
      return structuredClone(conversation(st, cid).grants ?? []);
    },
    async revokeChatGrant(cid, grant) {
      const c = conversation(st, cid);
      const at = (c.grants ?? []).findIndex((g) => g.kind === grant.kind && g.name === grant.name);
      if (at < 0) throw ipcError(grant.kind === 'tool' ? 'grantNotFound' : 'grantHostNotFound', { name: grant.name });
      c.grants = (c.grants ?? []).filter((_, i) => i !== at);
      return structuredClone(c.grants);
    },
    async setConversationPinned(cid, pinned) {
      const c = conversation(st, cid);
      c.summary = { ...c.summary, pinned };
    },
    async setConversationArchived(cid, archived) {
      const c = conversation(st, cid);
      c.summary = { ...c.summary, archived, pinned: archived ? false : c.summary.pinned };
    },
    async deleteConversation(cid) {
      if (!conversations.delete(cid)) throw ipcError('deleteNotFound', { id: cid });
    },
  };
}
