/**
 * The one model every message view is built from. A pure reducer turns the live `ChatEvent`s of a
 * turn into a `MessageModel`; a pure function builds the same model from a `StoredMessage`. The
 * reducer mirrors what the store's Recorder writes, so a reopened answer looks exactly as it did live.
 */
import type {
  Attachment,
  ChatEvent,
  FinishReason,
  MessageStatus,
  NestedEvent,
  Role,
  StoredCompaction,
  StoredError,
  StoredMessage,
  StoredNotice,
  StoredToolResult,
  ToolCallStatus,
  ToolSource,
  Usage,
} from '../ipc/bindings';
import { addSpend, requestFromEvent, runLabel, sumRequests, unclaimed, withRequest, type RequestSpend, type RunDetails, type SpendDetails, type SpendTotal, type UsageEventLike } from './spend';
import { compactionFromEvent, compactionFromStored, type CompactionModel } from './compaction';
import { endAsks, isAskEvent, reduceAsks, type CallAsk } from '../mcp/asks';

export interface ToolCallModel {
  id: string;
  name: string;
  source: ToolSource;
  arguments: string;
  textOffset: number;
  iteration: number;
  index: number;
  status: ToolCallStatus;
  result: StoredToolResult | null;
  /** Live progress lines while the call runs; cleared when its result arrives (never stored). */
  progress: string[];
  /** Live only: the loop waits for the person to allow or deny this call. */
  awaitingApproval: boolean;
  /**
   * The id the person's answer goes back with: the call's own, or for a sub-agent's call the
   * unique one its approval was asked under (`parentCall/Name[i]/call`).
   */
  approvalId?: string;
  /** The sub-agents this call ran (an agent's call), each its own answer, in the order they began. */
  runs: AgentRun[];
  /** Live only: what the call's MCP server asked the person (a form, a model completion). */
  asks?: CallAsk[];
}

/** One sub-agent instance inside a call: `Name[i]` and its own answer, built by the same reducer. */
export interface AgentRun {
  instance: string;
  model: MessageModel;
}

export interface MessageModel {
  id: string;
  role: Role;
  content: string;
  reasoning: string;
  status: MessageStatus;
  provider: string | null;
  model: string | null;
  finishReason: FinishReason | null;
  usage: Usage;
  /** Each request (model call) of the turn with its tokens and cost; empty for answers stored before costs were kept. */
  requests: RequestSpend[];
  toolCallsMade: number;
  error: StoredError | null;
  notices: StoredNotice[];
  toolCalls: ToolCallModel[];
  /** The person pinned it: compaction never summarises it. */
  pinned: boolean;
  /** The compactions of what is sent that happened in this message's turn or right after it, oldest first. */
  compactions: CompactionModel[];
  /** The files attached to a person's message, in order (absent: none). */
  attachments?: Attachment[];
}

export const ZERO_USAGE: Usage = Object.freeze({ promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 });

/** The assistant message a turn is about to produce (before `started` gives it an id). */
export function pendingAssistant(id = ''): MessageModel {
  return {
    id,
    role: 'assistant',
    content: '',
    reasoning: '',
    status: 'streaming',
    provider: null,
    model: null,
    finishReason: null,
    usage: { ...ZERO_USAGE },
    requests: [],
    toolCallsMade: 0,
    error: null,
    notices: [],
    toolCalls: [],
    pinned: false,
    compactions: [],
  };
}

/** The person's message as the UI shows it before the store has it. */
export function userMessage(id: string, text: string, attachments: readonly Attachment[] = []): MessageModel {
  return { ...pendingAssistant(id), role: 'user', content: text, status: 'complete', ...(attachments.length > 0 ? { attachments: [...attachments] } : {}) };
}

/**
 * Builds the model of a message read back from the store (`open_conversation`), with the
 * compactions made during it (the rows of `list_compactions` whose `messageId` is this message).
 */
export function fromStored(m: StoredMessage, compactions: readonly StoredCompaction[] = []): MessageModel {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    reasoning: m.reasoning,
    status: m.status,
    provider: m.provider,
    model: m.model,
    finishReason: m.finishReason,
    usage: { ...m.usage },
    // Stored in their own table: `message_usage` reads them (the cost details).
    requests: [],
    toolCallsMade: m.toolCallsMade,
    error: m.error ? { ...m.error } : null,
    notices: m.notices.map((n) => ({ ...n })),
    pinned: m.pinned ?? false,
    compactions: compactions.filter((c) => c.messageId === m.id).map(compactionFromStored),
    ...(m.attachments && m.attachments.length > 0 ? { attachments: m.attachments.map((a) => ({ ...a })) } : {}),
    toolCalls: m.toolCalls.map((c) => ({
      id: c.callId,
      name: c.name,
      source: c.source,
      arguments: c.arguments,
      textOffset: c.textOffset,
      iteration: c.iteration,
      index: c.index,
      status: c.status,
      result: c.result ? { ...c.result } : null,
      progress: [],
      awaitingApproval: false,
      // Replayed as they streamed; one that never ended (the app was closed) was interrupted.
      runs: runsFrom(c.nested ?? []).map((r) => ({ ...r, model: interrupt(r.model) })),
    })),
  };
}

/** What a message cost: its own requests, each sub-agent run's (with theirs), and the sum of both. */
export interface MessageSpend {
  own: SpendTotal;
  runs: { instance: string; call: string; model: MessageModel; total: SpendTotal }[];
  total: SpendTotal;
  /** The costs of this message were kept (false: an answer stored before they were). */
  known: boolean;
}

export function messageSpend(m: MessageModel): MessageSpend {
  const own = sumRequests(m.requests);
  const runs = m.toolCalls.flatMap((c) => c.runs.map((r) => ({ instance: r.instance, call: c.id, model: r.model, total: messageSpend(r.model).total })));
  let total = own;
  for (const r of runs) total = addSpend(total, r.total);
  const known = m.requests.length > 0 || runs.some((r) => r.model.requests.length > 0);
  // An answer stored before costs were kept still shows its tokens.
  if (!known) total = { ...total, usage: { ...m.usage } };
  return { own, runs, total, known };
}

/** The cost details of an answer from what streamed (its requests and its runs', nested runs flattened). */
export function detailsFromLive(m: MessageModel): SpendDetails {
  const runs: RunDetails[] = [];
  const names = new Map<string, string>();
  const walk = (x: MessageModel, path: string) => {
    for (const c of x.toolCalls) {
      names.set(c.id, c.name);
      for (const r of c.runs) {
        const p = path ? `${path}/${c.id}/${r.instance}` : `${c.id}/${r.instance}`;
        runs.push({ path: p, label: runLabel(p), total: messageSpend(r.model).total, requests: r.model.requests });
        walk(r.model, p);
      }
    }
  };
  walk(m, '');
  return { total: messageSpend(m).total, own: m.requests, runs, resends: new Map(), names };
}

/** The sub-agent runs a call's stored nested events build. */
export function runsFrom(nested: readonly NestedEvent[]): AgentRun[] {
  let runs: AgentRun[] = [];
  for (const n of nested) runs = reduceRun(runs, n.instance, n.event);
  return runs;
}

/** Applies one of a sub-agent's events to its run (started on its first event). */
function reduceRun(runs: AgentRun[], instance: string, e: ChatEvent): AgentRun[] {
  const at = runs.findIndex((r) => r.instance === instance);
  if (at < 0) return [...runs, { instance, model: reduce(pendingAssistant(), e) }];
  const next = runs.slice();
  next[at] = { instance, model: reduce(runs[at]!.model, e) };
  return next;
}

/**
 * Whether an approval event is about call `c`: its own id, or a sub-agent's call asked under the
 * ids of the calls above it (`parentCall/Name[i]/call`), which end with the call's own.
 */
function approvalFor(c: ToolCallModel, id: string): boolean {
  return c.id === id || id.endsWith(`/${c.id}`);
}

function statusFromFinish(reason: FinishReason): MessageStatus {
  if (reason === 'cancelled') return 'cancelled';
  if (reason === 'error') return 'error';
  return 'complete';
}

function updateCall(m: MessageModel, id: string, f: (c: ToolCallModel) => ToolCallModel): MessageModel {
  let found = false;
  const toolCalls = m.toolCalls.map((c) => {
    if (c.id !== id) return c;
    found = true;
    return f(c);
  });
  return found ? { ...m, toolCalls } : m;
}

/** Applies one live event to the model of the turn's assistant message. Pure: returns a new model. */
export function reduce(m: MessageModel, e: ChatEvent): MessageModel {
  // A server's question during a call (elicitation, sampling) goes on that call's card.
  if (isAskEvent(e)) {
    const toolCalls = reduceAsks(m.toolCalls, e);
    return toolCalls === m.toolCalls ? m : { ...m, toolCalls };
  }
  switch (e.type) {
    case 'started':
      return { ...m, id: e.messageId, provider: e.provider, model: e.model, status: 'streaming' };
    case 'textDelta':
      return e.text ? { ...m, content: m.content + e.text } : m;
    case 'reasoningDelta':
      return e.text ? { ...m, reasoning: m.reasoning + e.text } : m;
    case 'toolCall': {
      const call: ToolCallModel = {
        id: e.id,
        name: e.name,
        source: e.source,
        arguments: e.arguments,
        textOffset: e.textOffset,
        iteration: e.iteration,
        index: e.index,
        status: 'pending',
        result: null,
        progress: [],
        awaitingApproval: false,
        runs: [],
      };
      if (m.toolCalls.some((c) => c.id === e.id)) return updateCall(m, e.id, (c) => ({ ...call, status: c.status, result: c.result, runs: c.runs }));
      return { ...m, toolCalls: [...m.toolCalls, call] };
    }
    case 'toolStarted':
      return updateCall(m, e.id, (c) => (c.status === 'pending' ? { ...settled(c), status: 'running' } : c));
    case 'toolProgress': {
      const { instance, event } = e;
      if (instance && event) return updateCall(m, e.id, (c) => ({ ...c, runs: reduceRun(c.runs, instance, event) }));
      if (!e.text) return m;
      const line = instance ? `${instance}: ${e.text}` : e.text;
      return updateCall(m, e.id, (c) => ({ ...c, progress: [...c.progress, line].slice(-50) }));
    }
    case 'approvalRequested':
      return { ...m, toolCalls: m.toolCalls.map((c) => (approvalFor(c, e.id) ? { ...c, awaitingApproval: true, approvalId: e.id } : c)) };
    case 'approvalResolved':
      return { ...m, toolCalls: m.toolCalls.map((c) => (approvalFor(c, e.id) ? settled(c) : c)) };
    case 'toolResult':
      return updateCall(m, e.id, (c) => ({
        ...settled(c),
        status: e.status,
        result: { status: e.status, output: e.output, durationMs: e.durationMs, ...(e.images?.length ? { images: e.images } : {}) },
        progress: [],
      }));
    case 'usage': {
      const ev = e as UsageEventLike;
      // A request row is what the service reports per request (its number and cost); an event without them is a total
      // only, and a sub-agent call's total (`agentCall`) is its run's, whose requests arrive in the run's own events.
      if ((ev.request === undefined && ev.costUsd === undefined) || ev.agentCall) return { ...m, usage: { ...e.total } };
      // The request decided the calls of its iteration (the number is that iteration).
      const decided = ev.request === undefined ? unclaimed(m.toolCalls.map((c) => c.id), m.requests) : m.toolCalls.filter((c) => c.iteration === ev.request).map((c) => c.id);
      const row = requestFromEvent(ev, m.requests, m.provider, m.model, decided);
      return { ...m, usage: { ...e.total }, requests: withRequest(m.requests, row) };
    }
    case 'providerState':
      // For the store only: the shell does not forward it.
      return m;
    case 'budgetPaused':
    case 'budgetResolved':
    // The pause is the session's (its card); what stays with the answer are its notices.
    // eslint-disable-next-line no-fallthrough -- a comment between cases, no statement
    case 'context':
      // The composer's meter shows it (ChatSession.context); the message does not change.
      return m;
    case 'notice':
      return { ...m, notices: [...m.notices, { kind: e.kind, message: e.message }] };
    case 'compacted':
      return { ...m, compactions: [...m.compactions, compactionFromEvent(e)] };
    case 'error':
      return { ...m, error: { kind: e.kind, message: e.message, ...(e.detail ? { detail: e.detail } : {}) } };
    case 'done':
      return {
        ...m,
        status: statusFromFinish(e.finishReason),
        finishReason: e.finishReason,
        usage: { ...e.usage },
        toolCallsMade: e.toolCallsMade,
        // As the Recorder does: no card keeps spinning after the turn ended, nor a sub-agent
        // that was stopped with it.
        toolCalls: m.toolCalls.map((c) => {
          const runs = c.runs.some((r) => r.model.status === 'streaming') ? c.runs.map((r) => ({ ...r, model: interrupt(r.model) })) : c.runs;
          const asks = endAsks(c.asks);
          const ended = asks === c.asks ? {} : { asks };
          if (c.status === 'pending' || c.status === 'running') return { ...settled(c), status: 'cancelled', runs, ...ended };
          return c.awaitingApproval || runs !== c.runs || asks !== c.asks ? { ...settled(c), runs, ...ended } : c;
        }),
      };
  }
}

/**
 * The approval question inside an event, at any depth of sub-agents: what the person must answer,
 * and which instances it comes through (`Lead[1] › Scout[2]`).
 */
export function nestedApproval(e: ChatEvent): { event: Extract<ChatEvent, { type: 'approvalRequested' | 'approvalResolved' }>; agent: string | null } | null {
  const path: string[] = [];
  let at: ChatEvent = e;
  while (at.type === 'toolProgress' && at.event) {
    if (at.instance) path.push(at.instance);
    at = at.event;
  }
  if (at.type !== 'approvalRequested' && at.type !== 'approvalResolved') return null;
  return { event: at, agent: path.length > 0 ? path.join(' › ') : null };
}

/** A budget pause waiting for the person, with the sub-agents it comes through (`Scout[1]`). */
export type BudgetPause = Extract<ChatEvent, { type: 'budgetPaused' }> & { agent: string | null };

/** The budget pause (or its answer) inside an event, at any depth of sub-agents. */
export function nestedBudget(e: ChatEvent): { event: Extract<ChatEvent, { type: 'budgetPaused' | 'budgetResolved' }>; agent: string | null } | null {
  const path: string[] = [];
  let at: ChatEvent = e;
  while (at.type === 'toolProgress' && at.event) {
    if (at.instance) path.push(at.instance);
    at = at.event;
  }
  if (at.type !== 'budgetPaused' && at.type !== 'budgetResolved') return null;
  return { event: at, agent: path.length > 0 ? path.join(' › ') : null };
}

/** Applies events in order. */
export function reduceAll(m: MessageModel, events: Iterable<ChatEvent>): MessageModel {
  let out = m;
  for (const e of events) out = reduce(out, e);
  return out;
}

/**
 * The turn's events stopped without `done` (the channel closed, the shell failed): keep the partial
 * answer, mark it interrupted as the store does after a restart.
 */
export function interrupt(m: MessageModel, error: StoredError | null = null): MessageModel {
  if (m.status !== 'streaming') return m;
  return {
    ...m,
    status: error && m.content === '' && m.toolCalls.length === 0 ? 'error' : 'interrupted',
    error: error ?? m.error,
    toolCalls: m.toolCalls.map((c) => (c.awaitingApproval ? settled(c) : c)),
  };
}

/** A call no longer waiting for the person (live-only approval state dropped). */
function settled(c: ToolCallModel): ToolCallModel {
  const { approvalId: _, ...rest } = c;
  return { ...rest, awaitingApproval: false };
}

/** Whether a call still has no result. */
export function isInFlight(c: ToolCallModel): boolean {
  return c.status === 'pending' || c.status === 'running';
}

/** A notice as a message shows it: retries become one status line with the detail set apart. */
export interface ShownNotice {
  kind: StoredNotice['kind'];
  message: string;
  /** The technical reason (a retry's transport error), shown behind "Details". */
  detail: string | null;
}

/** The engine's retry notice: "<why> Retrying in 2.0 s (attempt 3 of 4)." */
const RETRY_TAIL = /\s*(Retrying in [\d.]+ s \(attempt \d+ of \d+\)\.)\s*$/;

/**
 * The notices a message shows. Retries are one live status line that updates in place while the
 * answer is on its way (the latest, at the place of the first) and go away once it is over: the
 * answer, or its one error, says how it ended. Every notice stays stored.
 */
export function shownNotices(notices: readonly StoredNotice[], inFlight: boolean): ShownNotice[] {
  const shown: ShownNotice[] = [];
  let retryAt = -1;
  for (const n of notices) {
    if (n.kind !== 'retrying') {
      shown.push({ kind: n.kind, message: n.message, detail: null });
      continue;
    }
    if (!inFlight) continue;
    const tail = RETRY_TAIL.exec(n.message);
    const line: ShownNotice =
      tail?.[1] !== undefined
        ? { kind: n.kind, message: tail[1], detail: n.message.slice(0, tail.index).trim() || null }
        : { kind: n.kind, message: n.message, detail: null };
    if (retryAt < 0) {
      retryAt = shown.length;
      shown.push(line);
    } else {
      shown[retryAt] = line;
    }
  }
  return shown;
}
