/**
 * A model's window and prices as the picker and the profile editor show them: "128K · $2.50 / $10
 * per M", "32K · free", "200K · price unknown". Pure. A price nobody knows is "price unknown",
 * never "$0"; a local server's model is "free".
 */

/** What the picker needs of a resolved model (a subset of the service's `ModelDetails`). */
export interface SpecSummary {
  contextWindow: number | null;
  prices: { input: number; output: number } | null;
  free: boolean;
}

/** Tokens in a few characters: 8192 -> "8K", 128000 -> "128K", 1048576 -> "1M", 1500000 -> "1.5M". */
export function formatTokens(n: number): string {
  if (n >= 1_000_000) return `${Number((n / 1_000_000).toFixed(1))}M`;
  if (n >= 1000) return `${Math.round(n / 1000)}K`;
  return String(n);
}

/** USD per million tokens: 10 -> "$10", 2.5 -> "$2.50", 0.6 -> "$0.60", 0.075 -> "$0.075". */
export function formatPrice(usd: number): string {
  if (usd === 0) return '$0';
  if (Number.isInteger(usd)) return `$${usd}`;
  if (usd >= 1 || Math.abs(usd * 100 - Math.round(usd * 100)) < 1e-9) return `$${usd.toFixed(2)}`;
  return `$${Number(usd.toPrecision(2))}`;
}

/** Input / output price per million tokens, "free", or "price unknown". */
export function priceLabel(spec: Pick<SpecSummary, 'prices' | 'free'>): string {
  if (spec.free) return 'free';
  if (!spec.prices) return 'price unknown';
  return `${formatPrice(spec.prices.input)} / ${formatPrice(spec.prices.output)} per M`;
}

/** The picker's line for a model: window and price where known. */
export function specLabel(spec: SpecSummary): string {
  const window = spec.contextWindow ? formatTokens(spec.contextWindow) : null;
  return [window, priceLabel(spec)].filter(Boolean).join(' · ');
}
