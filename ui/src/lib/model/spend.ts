/**
 * What a turn cost, as the UI shows it: one row per request (model call) of the turn, built live
 * from `usage` events and read back from the store's per-request rows, and the sums a message, a
 * conversation and the Usage chart show. Pure data, no formatting (../util/money.ts formats).
 *
 * Invariant: a request whose price is unknown (`costUsd: null`) is never counted as $0: it is
 * counted apart (`unpriced`), and a sum with unpriced requests says so. A free request (a local
 * server) has `costUsd: 0` and tokens.
 */
import type { Usage } from '../ipc/bindings';
import type { MessageUsage, RequestUsage, UsageTotals } from '../ipc/usage';

/** One model call of a turn. */
export interface RequestSpend {
  /** 1-based within the turn. */
  request: number;
  provider: string | null;
  model: string | null;
  usage: Usage;
  /** USD; null: the model's price is unknown. */
  costUsd: number | null;
  /** The provider reported no usage: the tokens are our estimate. */
  estimated: boolean;
  /** Ids of the tool calls this request decided. */
  toolCalls: string[];
}

/** A result later requests of its turn sent again: how many times, about how many tokens in all. */
export interface Resent {
  times: number;
  tokens: number;
}

/** One sub-agent run in an answer's details: "Scout[1]", "Scout[1] › Helper[2]". */
export interface RunDetails {
  path: string;
  label: string;
  total: SpendTotal;
  requests: RequestSpend[];
}

/** Everything the cost details of one answer show. */
export interface SpendDetails {
  total: SpendTotal;
  /** The answer's own requests. */
  own: RequestSpend[];
  runs: RunDetails[];
  /** By tool call id. */
  resends: Map<string, Resent>;
  /** Tool call id -> tool name, for the "decided" column (the runs' calls included). */
  names: Map<string, string>;
}

/** A sum of requests. */
export interface SpendTotal {
  usage: Usage;
  /** USD of the priced requests only. */
  costUsd: number;
  requests: number;
  /** Requests whose price is unknown (not in `costUsd`). */
  unpriced: number;
  /** Some of the tokens are estimates. */
  estimated: boolean;
}

/** The `usage` event as the engine sends it (the per-request fields are optional until every sender has them). */
export interface UsageEventLike {
  usage: Usage;
  total: Usage;
  request?: number;
  costUsd?: number | null;
  estimated?: boolean;
  /** Set: the total of a sub-agent call (counts in `total`), not a request of this turn. */
  agentCall?: string;
}

export const ZERO_SPEND: SpendTotal = Object.freeze({
  usage: Object.freeze({ promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 }),
  costUsd: 0,
  requests: 0,
  unpriced: 0,
  estimated: false,
}) as SpendTotal;

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    cacheWriteTokens: (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0),
  };
}

export function addSpend(a: SpendTotal, b: SpendTotal): SpendTotal {
  return {
    usage: addUsage(a.usage, b.usage),
    costUsd: a.costUsd + b.costUsd,
    requests: a.requests + b.requests,
    unpriced: a.unpriced + b.unpriced,
    estimated: a.estimated || b.estimated,
  };
}

/** The sum of some requests. */
export function sumRequests(rs: readonly RequestSpend[]): SpendTotal {
  let t: SpendTotal = { ...ZERO_SPEND, usage: { ...ZERO_SPEND.usage } };
  for (const r of rs) {
    t = addSpend(t, { usage: r.usage, costUsd: r.costUsd ?? 0, requests: 1, unpriced: r.costUsd === null ? 1 : 0, estimated: r.estimated });
  }
  return t;
}

/** Whether a total is of a free model: tokens were used, every request priced, and it cost nothing. */
export function isFree(t: SpendTotal): boolean {
  return t.requests > 0 && t.unpriced === 0 && t.costUsd === 0 && t.usage.promptTokens + t.usage.completionTokens > 0;
}

/**
 * The request row a `usage` event adds. `decided`: the calls of the turn no earlier request
 * decided (a request's usage arrives after the tool calls it streamed).
 */
export function requestFromEvent(e: UsageEventLike, previous: readonly RequestSpend[], provider: string | null, model: string | null, decided: string[]): RequestSpend {
  return {
    request: e.request ?? previous.length + 1,
    provider,
    model,
    usage: { ...e.usage },
    costUsd: e.costUsd === undefined ? null : e.costUsd,
    estimated: e.estimated ?? false,
    toolCalls: decided,
  };
}

/** The ids in `all` no request in `rs` has claimed, in order. */
export function unclaimed(all: readonly string[], rs: readonly RequestSpend[]): string[] {
  const claimed = new Set(rs.flatMap((r) => r.toolCalls));
  return all.filter((id) => !claimed.has(id));
}

/** Adds or replaces (same request number) a row, kept in request order. */
export function withRequest(rs: readonly RequestSpend[], r: RequestSpend): RequestSpend[] {
  const out = rs.filter((x) => x.request !== r.request);
  out.push(r);
  return out.sort((a, b) => a.request - b.request);
}

/** The share of a request's input served from the cache, 0..1. */
export function cachedShare(u: Usage): number {
  return u.promptTokens > 0 ? Math.min(1, u.cachedTokens / u.promptTokens) : 0;
}

/** The service's totals as the UI sums them. */
export function spendFromTotals(t: UsageTotals): SpendTotal {
  return {
    usage: { promptTokens: t.promptTokens, completionTokens: t.completionTokens, reasoningTokens: t.reasoningTokens, cachedTokens: t.cachedTokens, cacheWriteTokens: t.cacheWriteTokens },
    costUsd: t.costUsd,
    requests: t.requests,
    unpriced: t.unpricedRequests,
    estimated: t.estimatedRequests > 0,
  };
}

/** A stored request row as the UI shows it. */
export function requestFromStored(r: RequestUsage): RequestSpend {
  return {
    request: r.request,
    provider: r.profile,
    model: r.model,
    usage: { cacheWriteTokens: 0, ...r.usage },
    costUsd: r.costUsd,
    estimated: r.estimated,
    toolCalls: [...r.decided],
  };
}

/** "call_1/Scout[0]/call_7/Helper[1]" -> "Scout[0] › Helper[1]". */
export function runLabel(path: string): string {
  const parts = path.split('/');
  return parts.filter((_, i) => i % 2 === 1).join(' › ') || path;
}

/** The details of a stored answer, from `message_usage`. */
export function detailsFromStored(u: MessageUsage, names: Map<string, string>): SpendDetails {
  const own = u.requests.filter((r) => r.runPath === '').map(requestFromStored);
  const runs: RunDetails[] = u.runs.map((run) => ({
    path: run.runPath,
    label: runLabel(run.runPath),
    total: spendFromTotals(run.total),
    requests: u.requests.filter((r) => r.runPath === run.runPath).map(requestFromStored),
  }));
  const resends = new Map(u.resends.map((r) => [r.callId, { times: r.resentTimes, tokens: r.approxTokens }]));
  const allNames = new Map(names);
  for (const r of u.resends) allNames.set(r.callId, r.name);
  return { total: spendFromTotals(u.total), own, runs, resends, names: allNames };
}
