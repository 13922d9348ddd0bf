/**
 * An elicitation's form as the person fills it in: the engine's fields (read from the requested
 * schema, which it refuses when the spec does not allow it) with their kinds, defaults, bounds and
 * choices; the person's values checked against them; and the content sent back on accept.
 *
 * Invariant: the content holds only the form's fields, typed as their kind says (numbers as
 * numbers, a flag as a boolean, choices among the offered values); an empty optional field is
 * left out (the service then applies its default, as the spec says).
 */
import type { FormField } from './types';

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

const FORMATS: readonly string[] = ['email', 'uri', 'date', 'date-time'];

/** The engine's form fields as the form draws them (a format it does not know is plain text). */
export function fieldsOf(fields: readonly FormField[]): Field[] {
  return fields.map((f): Field => {
    const base: Base = { name: f.name, label: f.title || f.name, description: f.description ?? '', required: f.required };
    const k = f.kind;
    switch (k.type) {
      case 'text':
        return {
          ...base,
          kind: 'string',
          format: k.format && FORMATS.includes(k.format) ? (k.format as StringFormat) : null,
          minLength: k.minLength ?? null,
          maxLength: k.maxLength ?? null,
          default: k.default ?? null,
        };
      case 'number':
        return { ...base, kind: k.integer ? 'integer' : 'number', minimum: k.minimum ?? null, maximum: k.maximum ?? null, default: k.default ?? null };
      case 'boolean':
        return { ...base, kind: 'boolean', default: k.default ?? null };
      case 'choice':
        return k.multiple
          ? { ...base, kind: 'multi', choices: k.choices, minItems: k.minItems ?? null, maxItems: k.maxItems ?? null, default: k.default.length > 0 ? [...k.default] : null }
          : { ...base, kind: 'choice', choices: k.choices, default: k.default[0] ?? null };
    }
  });
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
