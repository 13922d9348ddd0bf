/**
 * How spend reads: compact token counts ("1.2K"), US dollars with the precision a small amount
 * needs ("$0.0041"), and the one-line summary under an answer. An unknown price reads "price
 * unknown", never "$0"; a free model reads "free"; estimated tokens carry "≈".
 */
import type { Resent, SpendTotal } from '../model/spend';
import { isFree } from '../model/spend';
import { formatCount } from './format';

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });

/** 340, 1.2K, 15K, 1.5M. */
export function formatTokens(n: number): string {
  return n < 1000 ? formatCount(Math.round(n)) : compact.format(n);
}

/**
 * USD: two significant digits under a dollar ($0.50, $0.036, $0.0041, $0.000045), cents from a
 * dollar ($3.40), whole dollars with separators from $1,000; "<$0.000001" for a positive amount too small to show;
 * "$0" for zero.
 */
export function formatUsd(usd: number): string {
  if (!Number.isFinite(usd)) return '—';
  if (usd === 0) return '$0';
  const a = Math.abs(usd);
  const sign = usd < 0 ? '-' : '';
  if (a < 0.000001) return `${sign}<$0.000001`;
  if (a < 1) {
    // Two significant digits, at least two decimals: $0.50, $0.036, $0.0041, $0.00005.
    const digits = Math.min(8, Math.max(2, 1 - Math.floor(Math.log10(a))));
    return `${sign}$${Number(a.toPrecision(2)).toFixed(digits).replace(/(\.\d\d\d*?)0+$/, '$1')}`;
  }
  if (a < 1000) return `${sign}$${a.toFixed(2)}`;
  return `${sign}$${formatCount(Math.round(a))}`;
}

/** An axis tick: "$0", "$0.05", "$1.5", "$12". */
export function formatUsdTick(usd: number): string {
  if (usd === 0) return '$0';
  if (Math.abs(usd) < 0.01) return `$${Number(usd.toPrecision(1))}`;
  if (Math.abs(usd) < 10) return `$${Number(usd.toFixed(2))}`;
  return `$${formatCount(Math.round(usd))}`;
}

/** What the cost part of a line says: "$0.0041", "free", "price unknown", "$0.0041 + 1 unpriced". */
export function formatCost(t: SpendTotal): string {
  if (t.requests === 0) return '';
  if (isFree(t)) return 'free';
  if (t.unpriced === t.requests) return 'price unknown';
  const cost = formatUsd(t.costUsd);
  return t.unpriced > 0 ? `${cost} + ${t.unpriced} unpriced` : cost;
}

/** "1.2K in · 340 out · $0.0041" (≈ before the numbers when any are estimated). */
export function costLine(t: SpendTotal): string {
  const u = t.usage;
  const approx = t.estimated ? '≈ ' : '';
  const parts = [`${approx}${formatTokens(u.promptTokens)} in`, `${formatTokens(u.completionTokens)} out`];
  const cost = formatCost(t);
  if (cost) parts.push(t.estimated && cost.startsWith('$') ? `≈ ${cost}` : cost);
  return parts.join(' · ');
}

/** A spoken/tooltip version of `costLine`. */
export function costTitle(t: SpendTotal): string {
  const u = t.usage;
  const bits = [`${formatCount(u.promptTokens)} input tokens`, `${formatCount(u.completionTokens)} output tokens`];
  if (u.cachedTokens > 0) bits.push(`${formatCount(u.cachedTokens)} from the cache`);
  if (u.reasoningTokens > 0) bits.push(`${formatCount(u.reasoningTokens)} reasoning`);
  let cost = formatCost(t);
  if (cost === 'free') cost = 'free (a local server)';
  else if (t.unpriced > 0 && t.unpriced < t.requests) cost = `${formatUsd(t.costUsd)} for the priced requests; the price of ${t.unpriced} request${t.unpriced === 1 ? ' is' : 's is'} unknown`;
  const est = t.estimated ? ' Some counts are estimates: the provider reported none.' : '';
  return `${bits.join(', ')}${cost ? `; ${cost}` : ''}.${est}`;
}

/** "This result was sent 3 more times, ≈ 1.2K tokens." */
export function resentText(r: Resent): string {
  const times = r.times === 1 ? 'once more' : `${r.times} more times`;
  return `This result was sent ${times}, ≈ ${formatTokens(r.tokens)} tokens.`;
}
