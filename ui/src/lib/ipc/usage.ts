/**
 * The spend shapes the views use, as the service sends them (`message_usage`,
 * `conversation_usage`, `usage_report`; generated in bindings.ts), and the zero total.
 */
import type { UsageTotals } from './bindings';

export type { ConversationUsage, MessageUsage, RequestUsage, ResultResend, RunUsage, UsageGroup, UsageGrouping, UsageQuery, UsageReport, UsageTotals } from './bindings';

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
