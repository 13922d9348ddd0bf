/**
 * A provider profile's options (output limit, sampling, reasoning, tools, `store`) as the profile
 * form edits them; the sampling numbers are also what a chat's own parameters use (`parseDecimal`).
 */
import type { ProfileOptions, ReasoningEffort } from '../ipc/bindings';

/** The kind whose profiles have the `store` option. */
export const RESPONSES_KIND = 'openai-responses';

/** Three-way choices: unset (the default, or "auto"), on, off. */
export type Tristate = '' | 'on' | 'off';

/** What the Advanced part of the form holds, as typed. */
export interface OptionsForm {
  /** Tokens, or empty for the provider's default. */
  maxOutputTokens: string;
  effort: '' | ReasoningEffort;
  /** Tokens (0 turns thinking off), or empty for the default. */
  thinkingBudget: string;
  /** Empty: auto (the capability table and the API decide). */
  tools: Tristate;
  /** Empty: the API's default (kept). */
  store: Tristate;
  /** 0 to 2 (decimals allowed), or empty/absent for the model's default. */
  temperature?: string;
  /** 0 to 1 (decimals allowed), or empty/absent for the model's default. */
  topP?: string;
  /** The model's context window and output limit in tokens; empty/absent: the listing's or the catalogue's. */
  contextWindow?: string;
  modelMaxOutput?: string;
  /** Prices in US dollars per million tokens; empty/absent: the listing's or the catalogue's. */
  prices?: Partial<Record<PriceKind, string>>;
}

/** The kinds of token a profile can price. */
export const PRICE_KINDS = ['input', 'output', 'cachedRead', 'cacheWrite', 'reasoning'] as const;
export type PriceKind = (typeof PRICE_KINDS)[number];

export type OptionsFormErrors = Partial<Record<'maxOutputTokens' | 'thinkingBudget' | 'temperature' | 'topP' | 'contextWindow' | 'modelMaxOutput' | 'prices', string>>;

/** The ranges the shell takes. */
export const TEMPERATURE_MAX = 2;
export const TOP_P_MAX = 1;

/** The largest value the shell takes (a u32). */
const MAX_TOKENS = 4_294_967_295;

function tristate(v: boolean | undefined): Tristate {
  return v === undefined ? '' : v ? 'on' : 'off';
}

function fromTristate(v: Tristate): boolean | undefined {
  return v === '' ? undefined : v === 'on';
}

/** The form's fields for saved options (all empty for none). */
export function optionsForm(options?: ProfileOptions): OptionsForm {
  const g = options?.generation ?? {};
  return {
    maxOutputTokens: g.maxOutputTokens === undefined ? '' : String(g.maxOutputTokens),
    effort: g.reasoningEffort ?? '',
    thinkingBudget: g.thinkingBudget === undefined ? '' : String(g.thinkingBudget),
    tools: tristate(options?.tools),
    store: tristate(options?.store),
    // Left out (not '') when unset, so a form without sampling compares equal to one from before it existed.
    temperature: g.temperature === undefined ? undefined : String(g.temperature),
    topP: g.topP === undefined ? undefined : String(g.topP),
    contextWindow: options?.contextWindow === undefined ? undefined : String(options.contextWindow),
    modelMaxOutput: options?.maxOutputTokens === undefined ? undefined : String(options.maxOutputTokens),
    prices: options?.prices ? Object.fromEntries(PRICE_KINDS.filter((k) => options.prices?.[k] != null).map((k) => [k, String(options.prices?.[k])])) : undefined,
  };
}

/**
 * A profile's prices as typed: none when all are empty, else input and output (required) and the
 * others. A negative number is passed on (the service refuses it with its own message); text is not
 * a price.
 */
export function parsePrices(typed: Partial<Record<PriceKind, string>> | undefined): { value: ProfileOptions['prices'] | null } | { error: string } {
  const raw = PRICE_KINDS.map((k) => [k, (typed?.[k] ?? '').trim().replace(',', '.')] as const);
  if (raw.every(([, v]) => v === '')) return { value: null };
  const values: Partial<Record<PriceKind, number>> = {};
  for (const [k, v] of raw) {
    if (v === '') continue;
    if (!/^-?(\d+(\.\d*)?|\.\d+)$/.test(v)) return { error: `"${v}" is not a price: enter US dollars per million tokens, like 2.50, or leave it empty.` };
    values[k] = Number(v);
  }
  if (values.input === undefined || values.output === undefined) return { error: 'Set both the input and the output price (US dollars per million tokens), or leave all prices empty.' };
  const prices: NonNullable<ProfileOptions['prices']> = { input: values.input, output: values.output };
  if (values.cachedRead !== undefined) prices.cachedRead = values.cachedRead;
  if (values.cacheWrite !== undefined) prices.cacheWrite = values.cacheWrite;
  if (values.reasoning !== undefined) prices.reasoning = values.reasoning;
  return { value: prices };
}

/** How many options differ from the defaults (for the closed "Advanced" line). */
export function optionsSet(f: OptionsForm, kind: string): number {
  return [f.maxOutputTokens.trim(), (f.temperature ?? '').trim(), (f.topP ?? '').trim(), f.effort, f.thinkingBudget.trim(), f.tools, kind === RESPONSES_KIND ? f.store : ''].filter(
    (v) => v !== '',
  ).length;
}

/**
 * A number from 0 to `max` (decimals with a point or a comma: "0.7", ".7", "0,7"), null for empty,
 * or an error message.
 */
export function parseDecimal(raw: string | undefined, max: number): { value: number | null } | { error: string } {
  const t = (raw ?? '').trim().replace(',', '.');
  if (t === '') return { value: null };
  const n = /^(\d+(\.\d*)?|\.\d+)$/.test(t) ? Number(t) : NaN;
  if (!Number.isFinite(n) || n < 0 || n > max) return { error: `Enter a number from 0 to ${max} (like 0.7), or leave it empty for the model's default.` };
  return { value: n };
}

/** A whole number of tokens from `min`, null for empty, or an error message. */
export function parseTokens(raw: string, min: number, what: string): { value: number | null } | { error: string } {
  const t = raw.trim();
  if (t === '') return { value: null };
  const n = /^\d+$/.test(t) ? Number(t) : NaN;
  if (!Number.isInteger(n) || n < min) return { error: `Enter a whole number of ${min} or more, or leave it empty ${what}.` };
  if (n > MAX_TOKENS) return { error: `That is too many: at most ${MAX_TOKENS}.` };
  return { value: n };
}

/**
 * The options to save, or what is wrong. Unset fields are left out (`generation: {}` when all are
 * empty); `store` is kept only for the Responses API kind.
 */
export function buildProfileOptions(f: OptionsForm, kind: string): { options: ProfileOptions } | { errors: OptionsFormErrors } {
  const errors: OptionsFormErrors = {};
  const max = parseTokens(f.maxOutputTokens, 1, "for the provider's default");
  if ('error' in max) errors.maxOutputTokens = max.error;
  const budget = parseTokens(f.thinkingBudget, 0, 'for the default (0 turns thinking off)');
  if ('error' in budget) errors.thinkingBudget = budget.error;
  const temperature = parseDecimal(f.temperature, TEMPERATURE_MAX);
  if ('error' in temperature) errors.temperature = temperature.error;
  const topP = parseDecimal(f.topP, TOP_P_MAX);
  if ('error' in topP) errors.topP = topP.error;
  const window = parseTokens(f.contextWindow ?? '', 0, "for the listing's or the catalogue's");
  if ('error' in window) errors.contextWindow = window.error;
  const modelMax = parseTokens(f.modelMaxOutput ?? '', 0, "for the listing's or the catalogue's");
  if ('error' in modelMax) errors.modelMaxOutput = modelMax.error;
  const prices = parsePrices(f.prices);
  if ('error' in prices) errors.prices = prices.error;
  if ('error' in max || 'error' in budget || 'error' in temperature || 'error' in topP || 'error' in window || 'error' in modelMax || 'error' in prices) return { errors };

  const options: ProfileOptions = { generation: {} };
  if (max.value !== null) options.generation.maxOutputTokens = max.value;
  if (temperature.value !== null) options.generation.temperature = temperature.value;
  if (topP.value !== null) options.generation.topP = topP.value;
  if (f.effort !== '') options.generation.reasoningEffort = f.effort;
  if (budget.value !== null) options.generation.thinkingBudget = budget.value;
  const tools = fromTristate(f.tools);
  if (tools !== undefined) options.tools = tools;
  const store = kind === RESPONSES_KIND ? fromTristate(f.store) : undefined;
  if (store !== undefined) options.store = store;
  if (window.value !== null) options.contextWindow = window.value;
  if (modelMax.value !== null) options.maxOutputTokens = modelMax.value;
  if (prices.value) options.prices = prices.value;
  return { options };
}
