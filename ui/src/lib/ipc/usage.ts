/**
 * The usage commands the UI reads spend through: a conversation's total and the per-day report
 * behind Settings → Usage. Their shapes are the service's (`conversation_usage`, `usage_report`);
 * `usageBackend` finds them on the backend in use, or answers null when the shell has none, so
 * a view falls back to what the loaded messages say.
 */
import type { Usage } from './bindings';
import type { Backend } from './backend';

/** A conversation's spend: every request of every message, sub-agents included. */
export interface UsageTotals {
  usage: Usage;
  /** USD of the priced requests only. */
  costUsd: number;
  requests: number;
  /** Requests whose price is unknown (never counted as $0). */
  unpricedRequests: number;
  estimated: boolean;
}

export type UsageGroup = 'model' | 'profile' | 'agent';

/** One day and one key (a model, a profile or an agent; "" = the chat itself, no agent). */
export interface UsageRow {
  /** Local day, YYYY-MM-DD. */
  day: string;
  key: string;
  usage: Usage;
  costUsd: number;
  requests: number;
  unpricedRequests: number;
}

export interface UsageReport {
  rows: UsageRow[];
}

export interface UsageBackend {
  conversationUsage(conversationId: string): Promise<UsageTotals>;
  usageReport(fromDay: string, toDay: string, groupBy: UsageGroup): Promise<UsageReport>;
}

function hasUsage(b: unknown): b is UsageBackend {
  const x = b as Partial<UsageBackend> | null;
  return !!x && typeof x.conversationUsage === 'function' && typeof x.usageReport === 'function';
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
