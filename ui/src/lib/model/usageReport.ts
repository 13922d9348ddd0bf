/**
 * The Usage chart's data: the report's rows (one per day and key) shaped into one series per key
 * over every day of the period (days without spend are 0, so the bars line up with the dates),
 * the period's totals and the table under the chart. Keys past the `top` biggest are one "Other"
 * series. Pure: no dates from the clock (the caller passes today), no formatting.
 *
 * Invariant: unpriced requests are never $0 in a sum: they are counted apart per day, per key and
 * in the totals, and a key whose requests are all unpriced has `costUsd: null`.
 */
import type { Usage } from '../ipc/bindings';
import type { UsageReport } from '../ipc/usage';

/** Stack by. */
export type UsageGroup = 'model' | 'profile' | 'agent';

/** One day and one key (a model, a profile or an agent; "" = none, e.g. the chat itself). */
export interface UsageRow {
  /** Local day, YYYY-MM-DD. */
  day: string;
  key: string;
  usage: Usage;
  /** USD of the priced requests. */
  costUsd: number;
  requests: number;
  unpricedRequests: number;
}

/** The rows of a report asked `by: 'day'` and split by a key. */
export function rowsFromReport(r: UsageReport): UsageRow[] {
  return r.groups.map((g) => ({
    day: g.key,
    key: g.sub ?? '',
    usage: { promptTokens: g.total.promptTokens, completionTokens: g.total.completionTokens, reasoningTokens: g.total.reasoningTokens, cachedTokens: g.total.cachedTokens, cacheWriteTokens: g.total.cacheWriteTokens },
    costUsd: g.total.costUsd,
    requests: g.total.requests,
    unpricedRequests: g.total.unpricedRequests,
  }));
}

/** The query for `period` days ending today: from its first local midnight to the next one after today, in the person's days. */
export function periodQuery(period: Period, today: Date, group: UsageGroup) {
  const since = new Date(today.getFullYear(), today.getMonth(), today.getDate() - (period - 1)).getTime();
  const until = new Date(today.getFullYear(), today.getMonth(), today.getDate() + 1).getTime();
  return { by: 'day' as const, split: group, since, until, utcOffsetMinutes: -today.getTimezoneOffset() };
}

export type Period = 7 | 30 | 90;

export interface UsageSeries {
  key: string;
  label: string;
  /** USD of priced requests per day, aligned with `days`. */
  cost: number[];
  /** Tokens (input + output) per day. */
  tokens: number[];
  /** Requests with an unknown price per day. */
  unpriced: number[];
}

export interface UsageTableRow {
  key: string;
  label: string;
  /** USD of its priced requests; null when none of its requests has a price. */
  costUsd: number | null;
  input: number;
  output: number;
  cached: number;
  requests: number;
  unpricedRequests: number;
}

export interface ShapedUsage {
  days: string[];
  series: UsageSeries[];
  table: UsageTableRow[];
  totals: { costUsd: number; input: number; output: number; requests: number; unpricedRequests: number };
  /** The day with the most priced spend (null: nothing priced in the period). */
  busiest: { day: string; costUsd: number } | null;
}

/** YYYY-MM-DD of a local date. */
export function dayOf(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

/** The `period` local days ending with `today`, oldest first. */
export function periodDays(period: Period, today: Date): string[] {
  const out: string[] = [];
  for (let i = period - 1; i >= 0; i--) out.push(dayOf(new Date(today.getFullYear(), today.getMonth(), today.getDate() - i)));
  return out;
}

/** How a key reads for a grouping: the empty agent is the chat itself. */
export function keyLabel(group: UsageGroup, key: string): string {
  if (key !== '') return key;
  return group === 'agent' ? 'Chats (no agent)' : group === 'model' ? 'Unknown model' : 'Unknown profile';
}

export const OTHER_KEY = '\u0000other';

export function shapeUsage(rows: readonly UsageRow[], days: readonly string[], group: UsageGroup, top = 6): ShapedUsage {
  const at = new Map(days.map((d, i) => [d, i]));
  const inPeriod = rows.filter((r) => at.has(r.day));
  const table = new Map<string, UsageTableRow>();
  for (const r of inPeriod) {
    const t = table.get(r.key) ?? { key: r.key, label: keyLabel(group, r.key), costUsd: null, input: 0, output: 0, cached: 0, requests: 0, unpricedRequests: 0 };
    if (r.requests > r.unpricedRequests) t.costUsd = (t.costUsd ?? 0) + r.costUsd;
    t.input += r.usage.promptTokens;
    t.output += r.usage.completionTokens;
    t.cached += r.usage.cachedTokens;
    t.requests += r.requests;
    t.unpricedRequests += r.unpricedRequests;
    table.set(r.key, t);
  }
  // Biggest spend first; then the most tokens (free and unpriced keys still have a place).
  const ranked = [...table.values()].sort((a, b) => (b.costUsd ?? 0) - (a.costUsd ?? 0) || b.input + b.output - (a.input + a.output) || a.label.localeCompare(b.label));
  const shown = new Set(ranked.slice(0, ranked.length > top ? top - 1 : top).map((t) => t.key));
  const seriesOf = new Map<string, UsageSeries>();
  const blank = (key: string, label: string): UsageSeries => ({ key, label, cost: days.map(() => 0), tokens: days.map(() => 0), unpriced: days.map(() => 0) });
  for (const t of ranked) if (shown.has(t.key)) seriesOf.set(t.key, blank(t.key, t.label));
  if (ranked.length > shown.size) seriesOf.set(OTHER_KEY, blank(OTHER_KEY, `Other (${ranked.length - shown.size})`));
  for (const r of inPeriod) {
    const s = seriesOf.get(shown.has(r.key) ? r.key : OTHER_KEY);
    const i = at.get(r.day);
    if (!s || i === undefined) continue;
    s.cost[i] = (s.cost[i] ?? 0) + r.costUsd;
    s.tokens[i] = (s.tokens[i] ?? 0) + r.usage.promptTokens + r.usage.completionTokens;
    s.unpriced[i] = (s.unpriced[i] ?? 0) + r.unpricedRequests;
  }
  const totals = { costUsd: 0, input: 0, output: 0, requests: 0, unpricedRequests: 0 };
  for (const t of ranked) {
    totals.costUsd += t.costUsd ?? 0;
    totals.input += t.input;
    totals.output += t.output;
    totals.requests += t.requests;
    totals.unpricedRequests += t.unpricedRequests;
  }
  let busiest: ShapedUsage['busiest'] = null;
  const series = [...seriesOf.values()];
  days.forEach((day, i) => {
    const c = series.reduce((a, s) => a + (s.cost[i] ?? 0), 0);
    if (c > 0 && (!busiest || c > busiest.costUsd)) busiest = { day, costUsd: c };
  });
  return { days: [...days], series, table: ranked, totals, busiest };
}

/** A day as an axis label: "Nov 27" (with the weekday for a week: "Fri 27"). */
export function dayLabel(day: string, period: Period): string {
  const [y, m, d] = day.split('-').map(Number);
  const date = new Date(y ?? 1970, (m ?? 1) - 1, d ?? 1);
  if (period === 7) return `${date.toLocaleDateString('en-US', { weekday: 'short' })} ${date.getDate()}`;
  return date.toLocaleDateString('en-US', { month: 'short', day: 'numeric' });
}
