/**
 * An elicitation's requested schema as a form: which fields, their kinds, defaults, bounds and
 * choices, the person's values checked against them, and the content sent back on accept.
 *
 * Invariant: only what the MCP spec allows in `requestedSchema` becomes a field (a flat object of
 * strings (with `format`, `enum`, `enumNames`, `oneOf` titles), numbers, integers, booleans and
 * string-choice arrays); anything else makes the whole form unsupported, with the reason, so a
 * server never gets an answer the person could not see. Counts and lengths are bounded.
 */

/** At most this many fields are shown (a schema with more is refused). */
export const MAX_FIELDS = 50;
/** At most this many choices per field. */
export const MAX_CHOICES = 500;

export type StringFormat = 'email' | 'uri' | 'date' | 'date-time';

export interface Choice {
  value: string;
  title: string;
}

interface Base {
  name: string;
  /** What the person reads: the title, else the property name. */
  label: string;
  description: string;
  required: boolean;
}

export type Field =
  | (Base & { kind: 'string'; format: StringFormat | null; minLength: number | null; maxLength: number | null; default: string | null })
  | (Base & { kind: 'number' | 'integer'; minimum: number | null; maximum: number | null; default: number | null })
  | (Base & { kind: 'boolean'; default: boolean | null })
  | (Base & { kind: 'choice'; choices: Choice[]; default: string | null })
  | (Base & { kind: 'multi'; choices: Choice[]; minItems: number | null; maxItems: number | null; default: string[] | null });

/** What the person has entered, per field: text for strings and numbers, a flag, or the chosen values. */
export type FormValue = string | boolean | string[];
export type FormValues = Record<string, FormValue>;

export type FormResult = { ok: true; fields: Field[] } | { ok: false; reason: string };

const FORMATS: readonly string[] = ['email', 'uri', 'date', 'date-time'];

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function count(v: unknown): number | null {
  const n = num(v);
  return n !== null && Number.isInteger(n) && n >= 0 ? n : null;
}

/** The choices of a string enum (`enum` + legacy `enumNames`) or a titled one (`oneOf`/`anyOf` of `{const, title}`). */
function choicesOf(p: Json): Choice[] | string | null {
  if (Array.isArray(p.enum)) {
    const names = Array.isArray(p.enumNames) ? p.enumNames : [];
    if (!p.enum.every((e) => typeof e === 'string')) return 'its choices are not all text';
    return (p.enum as string[]).map((value, i) => ({ value, title: typeof names[i] === 'string' ? (names[i] as string) : value }));
  }
  const list = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : null;
  if (list) {
    const out: Choice[] = [];
    for (const o of list) {
      if (!isObject(o) || typeof o.const !== 'string') return 'its choices are not all text constants';
      out.push({ value: o.const, title: str(o.title) || o.const });
    }
    return out;
  }
  return null;
}

function fieldOf(name: string, p: unknown, required: boolean): Field | string {
  if (!isObject(p)) return `"${name}" has no schema`;
  const base: Base = { name, label: str(p.title) || name, description: str(p.description), required };
  const choices = choicesOf(p);
  if (typeof choices === 'string') return `"${name}": ${choices}`;
  if (choices && choices.length > MAX_CHOICES) return `"${name}" has more than ${MAX_CHOICES} choices`;
  switch (p.type) {
    case 'string': {
      if (choices) {
        const d = typeof p.default === 'string' && choices.some((c) => c.value === p.default) ? p.default : null;
        return { ...base, kind: 'choice', choices, default: d };
      }
      const format = typeof p.format === 'string' ? p.format : null;
      if (format !== null && !FORMATS.includes(format)) return `"${name}" asks for the format "${format}", which forms do not support`;
      return {
        ...base,
        kind: 'string',
        format: format as StringFormat | null,
        minLength: count(p.minLength),
        maxLength: count(p.maxLength),
        default: typeof p.default === 'string' ? p.default : null,
      };
    }
    case 'number':
    case 'integer': {
      const d = num(p.default);
      return { ...base, kind: p.type, minimum: num(p.minimum), maximum: num(p.maximum), default: d !== null && (p.type === 'number' || Number.isInteger(d)) ? d : null };
    }
    case 'boolean':
      return { ...base, kind: 'boolean', default: typeof p.default === 'boolean' ? p.default : null };
    case 'array': {
      const items = p.items;
      const itemChoices = isObject(items) ? choicesOf(items) : null;
      if (!isObject(items) || (items.type !== undefined && items.type !== 'string') || !itemChoices || typeof itemChoices === 'string') {
        return `"${name}" is a list of something other than text choices, which forms do not support`;
      }
      if (itemChoices.length > MAX_CHOICES) return `"${name}" has more than ${MAX_CHOICES} choices`;
      const d = Array.isArray(p.default) ? p.default.filter((v): v is string => typeof v === 'string' && itemChoices.some((c) => c.value === v)) : null;
      return { ...base, kind: 'multi', choices: itemChoices, minItems: count(p.minItems), maxItems: count(p.maxItems), default: d };
    }
    default:
      return `"${name}" is of type ${JSON.stringify(p.type ?? 'unknown')}, which forms do not support (text, numbers, yes/no and choices only)`;
  }
}

/** The form for a requested schema, or why there can be none. */
export function formFromSchema(schema: unknown): FormResult {
  if (!isObject(schema) || (schema.type !== undefined && schema.type !== 'object')) {
    return { ok: false, reason: 'The server asked for something other than a set of fields.' };
  }
  const props = schema.properties ?? {};
  if (!isObject(props)) return { ok: false, reason: 'The server sent a form without fields.' };
  const names = Object.keys(props);
  if (names.length > MAX_FIELDS) return { ok: false, reason: `The server asked for ${names.length} fields; at most ${MAX_FIELDS} are shown.` };
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const fields: Field[] = [];
  for (const name of names) {
    const f = fieldOf(name, props[name], required.has(name));
    if (typeof f === 'string') return { ok: false, reason: `The form cannot be shown: ${f}.` };
    fields.push(f);
  }
  return { ok: true, fields };
}

/** Each field's starting value: its default, else empty (a boolean starts off). */
export function initialValues(fields: readonly Field[]): FormValues {
  const out: FormValues = {};
  for (const f of fields) {
    switch (f.kind) {
      case 'boolean':
        out[f.name] = f.default ?? false;
        break;
      case 'multi':
        out[f.name] = [...(f.default ?? [])];
        break;
      case 'number':
      case 'integer':
        out[f.name] = f.default === null ? '' : String(f.default);
        break;
      default:
        out[f.name] = f.default ?? '';
    }
  }
  return out;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;

function isUrl(v: string): boolean {
  try {
    new URL(v);
    return true;
  } catch {
    return false;
  }
}

function stringProblem(f: Extract<Field, { kind: 'string' }>, v: string): string | null {
  const len = [...v].length;
  if (f.minLength !== null && len < f.minLength) return `At least ${f.minLength} characters.`;
  if (f.maxLength !== null && len > f.maxLength) return `At most ${f.maxLength} characters.`;
  switch (f.format) {
    case 'email':
      return EMAIL.test(v) ? null : 'An e-mail address, like name@example.com.';
    case 'uri':
      return isUrl(v) ? null : 'A full address, like https://example.com/page.';
    case 'date':
      return DATE.test(v) ? null : 'A date, like 2026-03-14.';
    case 'date-time':
      return DATE_TIME.test(v) ? null : 'A date and time, like 2026-03-14T15:09.';
    default:
      return null;
  }
}

/** What is wrong with each field's value (none: the form can be sent). */
export function problems(fields: readonly Field[], values: FormValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === 'boolean') continue;
    if (f.kind === 'multi') {
      const list = Array.isArray(v) ? v : [];
      if (f.required && list.length === 0) out[f.name] = 'Choose at least one.';
      else if (f.minItems !== null && list.length > 0 && list.length < f.minItems) out[f.name] = `Choose at least ${f.minItems}.`;
      else if (f.maxItems !== null && list.length > f.maxItems) out[f.name] = `Choose at most ${f.maxItems}.`;
      continue;
    }
    const text = typeof v === 'string' ? v.trim() : '';
    if (text === '') {
      if (f.required) out[f.name] = 'Required.';
      continue;
    }
    if (f.kind === 'string') {
      const p = stringProblem(f, typeof v === 'string' ? v : '');
      if (p) out[f.name] = p;
    } else if (f.kind === 'number' || f.kind === 'integer') {
      const n = Number(text);
      if (!Number.isFinite(n)) out[f.name] = 'A number.';
      else if (f.kind === 'integer' && !Number.isInteger(n)) out[f.name] = 'A whole number.';
      else if (f.minimum !== null && n < f.minimum) out[f.name] = `At least ${f.minimum}.`;
      else if (f.maximum !== null && n > f.maximum) out[f.name] = `At most ${f.maximum}.`;
    } else if (f.kind === 'choice' && !f.choices.some((c) => c.value === text)) {
      out[f.name] = 'Choose one of the options.';
    }
  }
  return out;
}

/** The content an accept sends: typed values, optional fields left empty are left out. */
export function contentOf(fields: readonly Field[], values: FormValues): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === 'boolean') out[f.name] = v === true;
    else if (f.kind === 'multi') {
      if (Array.isArray(v) && (v.length > 0 || f.required)) out[f.name] = [...v];
    } else {
      const text = typeof v === 'string' ? v : '';
      if (text.trim() === '') continue;
      if (f.kind === 'number' || f.kind === 'integer') out[f.name] = Number(text.trim());
      // A date and time without a zone (the browser's picker) is the person's local time.
      else if (f.kind === 'string' && f.format === 'date-time' && !/(Z|[+-]\d{2}:\d{2})$/.test(text.trim())) out[f.name] = new Date(text.trim()).toISOString();
      else out[f.name] = text;
    }
  }
  return out;
}
