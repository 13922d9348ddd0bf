/** A provider profile's options (output limit, reasoning, tools, `store`) as the profile form edits them. */
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
}

export type OptionsFormErrors = Partial<Record<'maxOutputTokens' | 'thinkingBudget', string>>;

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
  };
}

/** How many options differ from the defaults (for the closed "Advanced" line). */
export function optionsSet(f: OptionsForm, kind: string): number {
  return [f.maxOutputTokens.trim(), f.effort, f.thinkingBudget.trim(), f.tools, kind === RESPONSES_KIND ? f.store : ''].filter((v) => v !== '').length;
}

/** A whole number of tokens from `min`, null for empty, or an error message. */
function parseTokens(raw: string, min: number, what: string): { value: number | null } | { error: string } {
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
  if ('error' in max || 'error' in budget) return { errors };

  const options: ProfileOptions = { generation: {} };
  if (max.value !== null) options.generation.maxOutputTokens = max.value;
  if (f.effort !== '') options.generation.reasoningEffort = f.effort;
  if (budget.value !== null) options.generation.thinkingBudget = budget.value;
  const tools = fromTristate(f.tools);
  if (tools !== undefined) options.tools = tools;
  const store = kind === RESPONSES_KIND ? fromTristate(f.store) : undefined;
  if (store !== undefined) options.store = store;
  return { options };
}
