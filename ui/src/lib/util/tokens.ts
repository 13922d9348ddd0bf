/**
 * The context meter's words and levels: token counts as a person reads them ("41K"), and how
 * close a count is to the point where the loop compacts.
 */
import type { ContextBreakdown } from '../ipc/bindings';

/** 950 → "950", 41_234 → "41K", 1_050_000 → "1.05M": short, never rounded up past what is used. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.max(0, Math.round(n)));
  if (n < 10_000) return `${(Math.floor(n / 100) / 10).toString()}K`;
  if (n < 1_000_000) return `${Math.floor(n / 1000)}K`;
  return `${(Math.floor(n / 10_000) / 100).toString()}M`;
}

/** How full: `ok`, `near` (within 10 points of the compaction threshold), `over` (past it), `unknown` (no window). */
export type MeterLevel = 'ok' | 'near' | 'over' | 'unknown';

export function meterLevel(used: number, window: number | null, compactAt: number): MeterLevel {
  if (!window || window <= 0) return 'unknown';
  const f = used / window;
  if (f >= compactAt) return 'over';
  if (f >= compactAt - 0.1) return 'near';
  return 'ok';
}

/** The breakdown's parts in the order the meter lists them, with their labels. */
export const PARTS: { key: keyof ContextBreakdown; label: string }[] = [
  { key: 'instructions', label: 'Instructions' },
  { key: 'tools', label: 'Tools' },
  { key: 'history', label: 'History' },
  { key: 'toolResults', label: 'Tool results' },
  { key: 'attachments', label: 'Attachments' },
];
