/**
 * Budgets as a person reads and writes them: limits, spent time and cost in words, and the
 * budget fields (steps, time, cost) read back into a `Budget`, refusing zero, negative numbers and
 * text with a message, as the service does.
 */
import type { Budget, BudgetKind } from '../ipc/bindings';
import { formatDuration } from './format';
import { formatUsd } from './money';

/** A limit of `kind` in words: "3 steps", "1 min 30 s", "$0.50". */
export function formatLimit(kind: BudgetKind, limit: number): string {
  if (kind === 'cost') return formatUsd(limit);
  if (kind === 'time') return formatDuration(limit * 1000);
  return `${limit} step${limit === 1 ? '' : 's'}`;
}

/** The text of the three budget fields. */
export interface BudgetFields {
  steps: string;
  time: string;
  cost: string;
}

/** The fields showing `b` (empty where it sets no limit). */
export function budgetFields(b: Budget | null | undefined): BudgetFields {
  return { steps: b?.steps?.toString() ?? '', time: b?.timeSecs != null ? writeDuration(b.timeSecs) : '', cost: b?.costUsd?.toString() ?? '' };
}

/** "90s", "5m", "1h30m". */
export function writeDuration(secs: number): string {
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s || (!h && !m) ? `${s}s` : ''}`;
}

/** Seconds in "90", "90s", "5m", "1h30m"; null when it is not a duration. */
export function parseDuration(text: string): number | null {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(t);
  if (!m || t === '') return null;
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** The budget the fields say, or per field what is wrong; empty fields set no limit. */
export function readBudget(f: BudgetFields): { budget: Budget; errors: Partial<Record<keyof BudgetFields, string>> } {
  const budget: Budget = {};
  const errors: Partial<Record<keyof BudgetFields, string>> = {};
  const steps = f.steps.trim();
  if (steps !== '') {
    const n = Number(steps);
    if (Number.isInteger(n) && n >= 1 && n <= 10_000) budget.steps = n;
    else errors.steps = 'A whole number from 1 to 10,000, or empty for no limit.';
  }
  const time = f.time.trim();
  if (time !== '') {
    const secs = parseDuration(time);
    if (secs !== null && secs >= 1 && secs <= 7 * 24 * 3600) budget.timeSecs = secs;
    else errors.time = 'A duration like 90s, 5m or 1h30m (at most 7 days), or empty for no limit.';
  }
  const cost = f.cost.trim().replace(/^\$/, '');
  if (cost !== '') {
    const n = Number(cost);
    if (Number.isFinite(n) && n > 0 && n <= 100_000) budget.costUsd = n;
    else errors.cost = 'An amount in US dollars more than 0, like 0.50, or empty for no limit.';
  }
  return { budget, errors };
}
