/**
 * The usage commands the UI reads spend through (the service's `message_usage`,
 * `conversation_usage`, `usage_report`) and their shapes. `usageBackend` finds them on the backend
 * in use, or answers null when the shell has none, so a view falls back to what the loaded
 * messages say.
 */
import type { Backend } from './backend';

/** A sum of requests. `costUsd` is the priced part only; unpriced requests are counted apart. */
export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  costUsd: number;
  unpricedRequests: number;
  estimatedRequests: number;
}

/** One request (model call) of a turn, the answer's own or a sub-agent run's. */
export interface RequestUsage {
  request: number;
  /** The top-level sub-agent call it ran under (null: the answer's own request). */
  callId: string | null;
  agent: string | null;
  /** "" = the answer itself; "call_1/Scout[0]" a child run. */
  runPath: string;
  /** The tool calls it decided. */
  decided: string[];
  profile: string | null;
  api: string | null;
  model: string | null;
  usage: { promptTokens: number; completionTokens: number; reasoningTokens: number; cachedTokens: number; cacheWriteTokens?: number };
  costUsd: number | null;
  estimated: boolean;
  createdAt: number;
}

/** A sub-agent run's total (its children included). */
export interface RunUsage {
  callId: string;
  runPath: string;
  agent: string | null;
  total: UsageTotals;
}

/** A tool result later requests sent again. */
export interface ResultResend {
  callId: string;
  name: string;
  resentTimes: number;
  approxTokens: number;
}

export interface MessageUsage {
  messageId: string;
  total: UsageTotals;
  requests: RequestUsage[];
  runs: RunUsage[];
  resends: ResultResend[];
}

export interface ConversationUsage {
  total: UsageTotals;
  messages: { messageId: string; total: UsageTotals }[];
}

export type UsageGrouping = 'day' | 'model' | 'profile' | 'agent' | 'conversation';

export interface UsageQuery {
  by: UsageGrouping;
  split?: UsageGrouping;
  /** Unix ms, inclusive. */
  since?: number;
  /** Unix ms, exclusive. */
  until?: number;
  /** The person's offset from UTC, so days are their days. */
  utcOffsetMinutes?: number;
}

/** One group (with `split`: one group and one sub-key, e.g. a day and a model). */
export interface UsageGroup {
  key: string;
  label: string;
  sub: string | null;
  total: UsageTotals;
}

export interface UsageReport {
  by: UsageGrouping;
  split: UsageGrouping | null;
  groups: UsageGroup[];
  total: UsageTotals;
}

export interface UsageBackend {
  messageUsage(messageId: string): Promise<MessageUsage>;
  conversationUsage(conversationId: string): Promise<ConversationUsage>;
  usageReport(query: UsageQuery): Promise<UsageReport>;
}

export const ZERO_TOTALS: UsageTotals = Object.freeze({
  requests: 0,
  promptTokens: 0,
  completionTokens: 0,
  reasoningTokens: 0,
  cachedTokens: 0,
  cacheWriteTokens: 0,
  costUsd: 0,
  unpricedRequests: 0,
  estimatedRequests: 0,
});

function hasUsage(b: unknown): b is UsageBackend {
  const x = b as Partial<UsageBackend> | null;
  return !!x && typeof x.messageUsage === 'function' && typeof x.conversationUsage === 'function' && typeof x.usageReport === 'function';
}

/** The usage commands of `api` (or of the backend it forwards to); null when the shell has none. */
export async function usageBackend(api: Backend): Promise<UsageBackend | null> {
  if (hasUsage(api)) return api;
  try {
    // Imported here, not at the top: this module is in the Settings chunk, which must not pull the shell's bridge in with it.
    const b = await (await import('./api')).backend();
    return hasUsage(b) ? b : null;
  } catch {
    return null;
  }
}
