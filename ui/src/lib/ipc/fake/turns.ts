/**
 * Turns in the fake: a question starts a replayed golden turn (or an agent's), which can wait for
 * an approval and be stopped; what it produced is stored by running the same events through the
 * UI's reducer. It does not apply tool settings, forcing, "no tools" or dry run to what it replays.
 */
import type { Backend, TurnHandlers } from '../backend';
import type { ApprovalChoice, Attachment, BudgetChoice, ChatEvent, NestedEvent, SendRequest, TurnStarted } from '../bindings';
import { pendingAssistant, reduce, userMessage } from '../../model/message';
import { ipcError } from './errors';
import { describe } from './models';
import { afterApproval, agentScript, compactionScript, scriptFor, STOPPED_DONE, toStored } from './golden';
import { KEEP_RECENT, recordCompaction, summariserOf } from './compaction';
import { conversation } from './conversations';
import { modelsOf, providerList } from './providers';
import { pathOf, refuseWhileStreaming, touchPath } from './tree';
import type { FakeConversation, FakeState, Turn } from './state';
import { afterAsk, askScript, type AskAnswer } from './asks';
import { isAskEvent } from '../../mcp/asks';

/**
 * A model the fake's server does not list, asked for by name ("Other model…"): the turn fails as a
 * server's 404 does (kind notFound, the service's words), so the page can offer the models it has.
 */
function unknownModel(st: FakeState, provider: string, model: string): ChatEvent[] | null {
  const profile = st.profiles.find((p) => p.name === provider);
  const listed = profile ? modelsOf(st, profile) : undefined;
  if (!profile || !listed || listed.includes(model) || model === profile.model) return null;
  const zero = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 };
  return [
    { type: 'started', conversationId: '', messageId: '', userMessageId: '', provider, model },
    {
      type: 'error',
      kind: 'notFound',
      message: `The provider at ${profile.baseUrl} has no such model or endpoint (404): The model \`${model}\` does not exist. Check the model name and the base URL.`,
      retryable: false,
    },
    { type: 'done', finishReason: 'error', toolCallsMade: 0, usage: zero },
  ];
}

/**
 * Where a turn's messages go: a new question under `parentId` (sending: under the head; editing:
 * beside the edited question), or only a new answer under the question `questionId` (regenerate).
 */
type Place = { question: string; parentId: string | null; attachments?: Attachment[] } | { questionId: string };

async function runTurn(st: FakeState, conv: FakeConversation, place: Place, req: Pick<SendRequest, 'provider' | 'model'>, handlers: TurnHandlers): Promise<TurnStarted> {
  const { id, running, profiles, tick } = st;
  const now = Date.now();
  const questionId = 'questionId' in place ? place.questionId : id('m');
  const started: TurnStarted = { conversationId: conv.summary.id, messageId: id('m'), userMessageId: questionId };
  const provider = req.provider ?? providerList(st).find((p) => p.isDefault)?.name ?? 'openai';
  const model = req.model ?? profiles.find((p) => p.name === provider)?.model ?? 'gpt-4o-mini';
  const text = 'questionId' in place ? (conv.messages.find((m) => m.id === questionId)?.content ?? '') : place.question;
  if (!('questionId' in place)) conv.messages.push(toStored(userMessage(questionId, text, place.attachments ?? []), now, now, new Map(), place.parentId));
  conv.messages.push(toStored(pendingAssistant(started.messageId), now, now, new Map(), questionId));
  conv.head = started.messageId;
  touchPath(st, conv);
  conv.summary.updatedAt = now;
  const turn: Turn = { stopped: false, asking: null, wake: null };
  running.set(started.messageId, turn);
  let state = pendingAssistant(started.messageId);
  const nested = new Map<string, NestedEvent[]>();

  // Golden call ids -> this turn's; calls taken from another golden turn are aliased to the asked call.
  const ids = new Map<string, string>();
  // An id this turn made stays as it is (a server's question is renamed before it is emitted).
  const made = new Set<string>();
  const fresh = (goldenId: string) => {
    const known = ids.get(goldenId);
    if (known) return known;
    if (made.has(goldenId)) return goldenId;
    const out = id('call');
    ids.set(goldenId, out);
    made.add(out);
    return out;
  };
  const emit = (golden: ChatEvent) => {
    const e: ChatEvent =
      golden.type === 'started'
        ? { ...golden, ...started, provider, model }
        : golden.type === 'compacted'
          ? { ...golden, compaction: { ...golden.compaction, stubbed: golden.compaction.stubbed.map(fresh) }, ...(golden.compaction.summary !== undefined ? { summariser: writer.name, ...(writer.fallback ? { summariserFallback: writer.fallback } : {}) } : {}) }
          : 'id' in golden
            ? { ...golden, id: fresh(golden.id) }
            : golden;
    state = reduce(state, e);
    if (e.type === 'compacted') recordCompaction(st, conv, started.messageId, e);
    if (e.type === 'toolProgress' && e.instance && e.event) nested.set(e.id, [...(nested.get(e.id) ?? []), { instance: e.instance, event: e.event }]);
    // Found by id: a message is never removed while it streams (tree changes are refused meanwhile).
    const slot = conv.messages.findIndex((m) => m.id === started.messageId);
    if (slot >= 0) conv.messages[slot] = toStored(state, now, Date.now(), nested, questionId);
    handlers.onEvent(e);
  };
  const wait = (ms: number | null) =>
    new Promise<ApprovalChoice | null>((resolve) => {
      turn.wake = resolve;
      if (ms !== null) setTimeout(() => resolve(null), ms);
    });
  // The model "thinks" before its first event, and a tool takes a while, so both can be seen (and stopped).
  const pause = (e: ChatEvent) => tick * (e.type === 'started' ? 8 : e.type === 'toolStarted' ? 25 : 1);

  // "compact" in the question: the context fills up between the tool rounds (a compaction, or the summariser's failure).
  const older = pathOf(conv).slice(0, -KEEP_RECENT).filter((m) => !m.pinned);
  // The chat's pick writes the summary (its own model when none is picked, or the pick is gone).
  const writer = summariserOf(st, conv, provider, model);
  const summariserName = writer.name;
  const summary = older.length > 0 ? `Summary of ${older.length} earlier message${older.length === 1 ? '' : 's'}:\n${older.map((m) => `- ${m.role === 'user' ? 'The person asked' : 'The assistant answered'}: ${m.content.replace(/\s+/g, ' ').slice(0, 120)}`).join('\n')}` : null;
  // "… three times": the turn compacts three times between the same rounds (one boundary that says so).
  const times = /\bthree times\b/i.test(text) ? 3 : 1;
  const compacting = /\bcompact(ion)?\b/i.test(text) && !conv.agent ? compactionScript(summary, older.length, summary !== null && st.stale.has(provider) ? `The summariser ${summariserName} did not answer (connection refused).` : null, times) : null;

  const run = async () => {
    await Promise.resolve();
    // A server's questions are not ChatEvents of this version's bindings yet: the fake carries them as the service sends them.
    const queue = [...(conv.agent ? agentScript(conv.agent, text) : (unknownModel(st, provider, model) ?? compacting ?? (askScript(text) as ChatEvent[] | null) ?? scriptFor(text)))];
    if (/\bbudget\b/i.test(text)) withBudgetPause(queue, started.messageId);
    let ending = false;
    while (queue.length > 0) {
      const next = queue.shift() as ChatEvent;
      const ask: { type: string } = next;
      if (isAskEvent(ask) && (ask.type === 'elicitationRequested' || ask.type === 'samplingRequested')) {
        const asked = { ...ask, requestId: fresh(ask.requestId), callId: fresh(ask.callId) };
        turn.askingId = asked.requestId;
        const answer = new Promise<AskAnswer | null>((resolve) => (turn.wakeAsk = resolve));
        emit(asked as unknown as ChatEvent);
        const given = turn.stopped ? null : await answer;
        turn.askingId = null;
        turn.wakeAsk = null;
        queue.unshift(...(afterAsk(asked, given) as ChatEvent[]));
      } else if (next.type === 'budgetPaused') {
        // As the service asks the approver: registered before the event goes out (under the id
        // the event is sent with).
        turn.pausing = fresh(next.id);
        const answer = new Promise<BudgetChoice | null>((resolve) => (turn.wakeBudget = resolve));
        emit(next);
        const choice = turn.stopped ? null : await answer;
        turn.pausing = null;
        emit({ type: 'budgetResolved', id: next.id, choice: choice ?? { choice: 'stop' } });
        if (!choice || choice.choice === 'stop') {
          const usage = { ...state.usage };
          queue.splice(0, queue.length, { type: 'done', finishReason: choice ? 'budget' : 'cancelled', usage, toolCallsMade: state.toolCalls.length });
        }
      } else if (next.type === 'approvalRequested') {
        const callId = fresh(next.id);
        turn.asking = callId;
        // Waiting before the request goes out, so an answer given while it is handled is not lost.
        const answer = wait(null);
        emit(next);
        const choice = await answer;
        turn.asking = null;
        // "For this chat" is remembered with the chat, as the service does (a destination for the egress question).
        if (choice === 'chat' || (choice === 'always' && next.egress)) {
          const grant = next.egress ? { kind: 'host' as const, name: next.egress.destination } : { kind: 'tool' as const, name: next.name };
          if (!(conv.grants ?? []).some((g) => g.kind === grant.kind && g.name === grant.name)) conv.grants = [...(conv.grants ?? []), grant];
        }
        const rest = afterApproval(turn.stopped ? 'stop' : (choice ?? 'deny'), callId);
        for (const e of rest) if ('id' in e) ids.set(e.id, callId);
        queue.splice(0, queue.length, ...rest);
        ending = turn.stopped;
      } else {
        emit(next);
        if (queue.length > 0 && !turn.stopped) await wait(pause(next));
      }
      if (turn.stopped && !ending && queue.length > 0) {
        // As the service ends a stopped turn: a cancelled `done` with what was used so far.
        ending = true;
        queue.splice(0, queue.length, { ...STOPPED_DONE, usage: { ...state.usage }, toolCallsMade: state.toolCalls.length });
      }
    }
    running.delete(started.messageId);
    handlers.onClose?.();
  };
  void run();
  return started;
}

export function turnCommands(st: FakeState): Pick<Backend, 'sendMessage' | 'stopTurn' | 'regenerate' | 'editMessage' | 'resolveApproval' | 'resolveBudget'> {
  const { conversations, running, profiles, agentsFile, id } = st;
  return {
    async sendMessage(request, handlers) {
      const attachments = (request.attachments ?? []).map((a) => {
        const blob = st.blobs.get(a);
        if (!blob) throw ipcError('sendAttachmentGone');
        return blob.attachment;
      });
      if (!request.text.trim() && attachments.length === 0) throw ipcError('sendEmpty');
      if (profiles.length === 0) throw ipcError('noProviderChosen');
      let conv = request.conversationId ? conversations.get(request.conversationId) : undefined;
      if (request.conversationId && !conv) throw ipcError('sendConversationNotFound', { id: request.conversationId });
      refuseImagesFor(st, attachments, request.provider ?? conv?.setup?.provider ?? null, request.provider ? request.model : (request.model ?? conv?.setup?.model ?? null));
      if (!conv) {
        const cid = id('c');
        const now = Date.now();
        const title = request.text.trim().replace(/\s+/g, ' ').slice(0, 48);
        conv = { summary: { id: cid, title, createdAt: now, updatedAt: now, messageCount: 0, pinned: false, archived: false }, messages: [], chosenAt: new Map(), disabled: new Set() };
        conversations.set(cid, conv);
      }
      for (const name of request.disableForChat) conv.disabled.add(name);
      if (request.agent && conv.messages.length === 0) {
        if (!agentsFile.agents.some((a) => a.name === request.agent)) throw ipcError('sendAgentNotFound', { name: request.agent });
        conv.agent = request.agent;
      }
      refuseWhileStreaming(conv);
      // Like the service: a chat keeps what it was sent with; what the request leaves out is the chat's.
      const setup = conv.setup ?? { toolsets: [] };
      const provider = request.provider ?? setup.provider ?? null;
      const model = request.provider ? request.model : (request.model ?? setup.model ?? null);
      conv.setup = {
        toolsets: [...(request.toolsets ?? setup.toolsets)],
        ...(request.generation ? (Object.keys(request.generation).length > 0 ? { generation: { ...request.generation } } : {}) : setup.generation ? { generation: setup.generation } : {}),
        // Who writes its summaries is the chat's, kept across turns (a send never names it).
        ...(setup.summariser ? { summariser: setup.summariser } : {}),
      };
      conv.setup.provider = provider ?? providerList(st).find((p) => p.isDefault)?.name ?? 'openai';
      conv.setup.model = model ?? profiles.find((p) => p.name === conv.setup?.provider)?.model ?? 'gpt-4o-mini';
      return runTurn(st, conv, { question: request.text, parentId: pathOf(conv).at(-1)?.id ?? null, attachments }, { provider: conv.setup.provider, model: conv.setup.model }, handlers);
    },
    async stopTurn(messageId) {
      const t = running.get(messageId);
      if (!t) return false;
      t.stopped = true;
      t.wake?.(null);
      t.wakeBudget?.(null);
      t.wakeAsk?.(null);
      return true;
    },
    async regenerate(conversationId, messageId, choices, handlers) {
      const c = conversations.get(conversationId);
      const path = c ? pathOf(c) : [];
      // The question of the answer named (or the question itself); none named: the last question.
      const named = messageId ? path.find((m) => m.id === messageId) : undefined;
      const question = named?.role === 'user' ? named : named ? path.find((m) => m.id === named.parentId) : [...path].reverse().find((m) => m.role === 'user');
      // Like the service: no conversation, or none with a question, is the same "not found".
      if (!c || (messageId && !named)) throw ipcError('messageNotFound', { id: messageId ?? '' });
      if (!question) throw ipcError('regenerateNotFound', { id: conversationId });
      refuseWhileStreaming(c);
      return runTurn(st, c, { questionId: question.id }, { provider: choices?.provider ?? null, model: choices?.model ?? null }, handlers);
    },
    async editMessage(conversationId, messageId, text, choices, handlers) {
      const c = conversation(st, conversationId);
      const edited = c.messages.find((m) => m.id === messageId);
      if (!edited || edited.role !== 'user') throw ipcError('messageNotFound', { id: messageId });
      const attachments = edited.attachments ?? [];
      if (!text.trim() && attachments.length === 0) throw ipcError('sendEmpty');
      refuseWhileStreaming(c);
      refuseImagesFor(st, attachments, choices?.provider ?? c.setup?.provider ?? null, choices?.model ?? c.setup?.model ?? null);
      return runTurn(st, c, { question: text, parentId: edited.parentId, attachments }, { provider: choices?.provider ?? null, model: choices?.model ?? null }, handlers);
    },
    async resolveApproval(callId, choice) {
      const t = [...running.values()].find((x) => x.asking === callId);
      if (!t) throw ipcError('approvalNotPending', { callId });
      t.wake?.(choice);
    },
    async resolveBudget(pauseId, choice) {
      const t = [...running.values()].find((x) => x.pausing === pauseId);
      if (!t) throw ipcError('budgetNotPending', { pauseId });
      if (choice.choice === 'continue' && choice.allowance !== undefined && !(choice.allowance > 0)) {
        throw ipcError('budgetNotPending', { pauseId });
      }
      t.wakeBudget?.(choice);
    },
  };
}

/**
 * Like the service: a model that cannot see images is refused before anything is stored, in the
 * words the composer shows.
 */
function refuseImagesFor(st: FakeState, attachments: readonly Attachment[], provider: string | null, model: string | null): void {
  if (!attachments.some((a) => a.kind === 'image')) return;
  const profile = st.profiles.find((p) => p.name === provider) ?? st.profiles.find((p) => p.name === providerList(st).find((x) => x.isDefault)?.name);
  const name = model ?? profile?.model ?? null;
  if (!profile || !name) return;
  if (describe(profile, name).capabilities.images === false) throw ipcError('sendModelCannotSee', { model: name });
}

/**
 * A question naming "budget": the turn pauses before its second request, as a step budget of 1
 * does, and waits for the person's choice.
 */
function withBudgetPause(queue: ChatEvent[], messageId: string): void {
  const at = queue.findIndex((e) => e.type === 'toolResult');
  if (at < 0) return;
  queue.splice(at + 1, 0, {
    type: 'budgetPaused',
    id: `${messageId}/budget-1`,
    kind: 'steps',
    scope: 'turn',
    spent: { steps: 1, elapsedMs: 4200, costUsd: 0.0123, costUnknown: false },
    limit: 1,
    nextCostUsd: 0.0031,
  });
}
