/**
 * The forms of the tools people define without code ("Your tools" in Settings): what a person
 * types, turned into the `HttpToolConfig` / `CommandToolConfig` the shell checks (and back, to edit
 * one). Only what a form cannot express is checked here (a number, a JSON body); everything about
 * what a definition may do is the service's to say, and its message is shown as it comes.
 */
import type { ApprovalPolicy, CommandToolConfig, DefinedKind, DefinedToolInfo, HttpToolConfig, JsonValue } from '../ipc/bindings';

/** How each kind is named in the list (a kind this page does not know yet by its own name). */
export function kindLabel(kind: DefinedKind): string {
  const labels: Record<string, string> = { http: 'HTTP', command: 'Command', openApi: 'OpenAPI' };
  return labels[kind] ?? kind;
}

/** One name/value row (a query parameter, a header, an environment variable). */
export interface Row {
  name: string;
  value: string;
}

/** The methods an HTTP tool may use (the service's `METHODS`). */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;

/** Methods that send a body. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether a call asks first: by the method (GET and HEAD run, the others ask), always, or never. */
export type HttpApproval = 'default' | 'ask' | 'auto';

export interface HttpForm {
  name: string;
  description: string;
  method: string;
  url: string;
  query: Row[];
  headers: Row[];
  body: string;
  responsePointer: string;
  timeout: string;
  allowLocal: boolean;
  approval: HttpApproval;
  /** The JSON Schema of the arguments as typed; empty: one required string per placeholder. */
  parameters: string;
  /** What a dry run returns instead of calling (empty: a generic line). */
  example: string;
}

export interface CommandForm {
  name: string;
  description: string;
  /** The program, then one entry per argument. */
  program: string;
  args: string[];
  cwd: string;
  env: Row[];
  timeout: string;
  /** Ask before each run (the default). */
  ask: boolean;
  /** What a dry run returns instead of running (empty: a generic line). */
  example: string;
}

export type FormErrors = Partial<Record<'name' | 'description' | 'url' | 'program' | 'body' | 'timeout' | 'parameters', string>>;

export function emptyHttpForm(): HttpForm {
  return { name: '', description: '', method: 'GET', url: '', query: [], headers: [], body: '', responsePointer: '', timeout: '', allowLocal: false, approval: 'default', parameters: '', example: '' };
}

export function emptyCommandForm(): CommandForm {
  return { name: '', description: '', program: '', args: [], cwd: '', env: [], timeout: '', ask: true, example: '' };
}

function rows(map: Record<string, string> | undefined): Row[] {
  return Object.entries(map ?? {}).map(([name, value]) => ({ name, value }));
}

/** Rows with a name, as a map (blank rows are left out; the last of two equal names wins). */
function toMap(list: Row[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of list) {
    const name = r.name.trim();
    if (name) out[name] = r.value;
  }
  return out;
}

function timeoutOf(text: string, errors: FormErrors): number | null {
  const t = text.trim();
  if (!t) return null;
  if (!/^\d+$/.test(t) || Number(t) < 1) {
    errors.timeout = 'Write a whole number of seconds, or leave it empty for the default.';
    return null;
  }
  return Number(t);
}

function required(f: { name: string; description: string }, errors: FormErrors): void {
  if (!f.name.trim()) errors.name = 'Give the tool a name: letters, digits, _ or -, starting with a letter or _.';
  if (!f.description.trim()) errors.description = 'Say what the tool does, so that the model knows when to use it.';
}

/** The form of an existing HTTP tool, to edit it. */
export function httpFormOf(c: HttpToolConfig): HttpForm {
  return {
    name: c.name,
    description: c.description,
    method: (c.method || 'GET').toUpperCase(),
    url: c.url,
    query: rows(c.query),
    headers: rows(c.headers),
    body: c.body == null ? '' : JSON.stringify(c.body, null, 2),
    responsePointer: c.responsePointer ?? '',
    timeout: c.timeoutSecs == null ? '' : String(c.timeoutSecs),
    allowLocal: c.allowLocalAddresses === true,
    approval: c.approval === 'ask' || c.approval === 'auto' ? c.approval : 'default',
    parameters: c.parameters == null ? '' : JSON.stringify(c.parameters, null, 2),
    example: c.exampleOutput ?? '',
  };
}

/**
 * The config the form describes, or what to fix in it. `base` (the definition being edited) keeps
 * what the form does not show (size and character limits).
 */
export function buildHttpConfig(f: HttpForm, base?: HttpToolConfig): { config: HttpToolConfig } | { errors: FormErrors } {
  const errors: FormErrors = {};
  required(f, errors);
  if (!f.url.trim()) errors.url = 'Write the address to call, starting with https:// (or http://).';
  let body: JsonValue | null = null;
  if (f.body.trim()) {
    try {
      body = JSON.parse(f.body) as JsonValue;
    } catch (e) {
      errors.body = `The body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (!errors.body && !BODY_METHODS.has(f.method)) errors.body = `${f.method} requests send no body: use POST, PUT, PATCH or DELETE, or clear the body.`;
  }
  const timeoutSecs = timeoutOf(f.timeout, errors);
  let parameters: JsonValue | null = null;
  if (f.parameters.trim()) {
    const parsed = parseJsonObject(f.parameters, 'The parameters', 'a JSON Schema such as {"type": "object", "properties": {…}}');
    if ('error' in parsed) errors.parameters = parsed.error;
    else parameters = parsed.value;
  }
  if (Object.keys(errors).length > 0) return { errors };
  const config: HttpToolConfig = {
    ...(base ?? {}),
    name: f.name.trim(),
    description: f.description.trim(),
    method: f.method,
    url: f.url.trim(),
    query: toMap(f.query),
    headers: toMap(f.headers),
    body,
    parameters,
    timeoutSecs,
    responsePointer: f.responsePointer.trim() || null,
    approval: f.approval === 'default' ? null : (f.approval satisfies ApprovalPolicy),
    allowLocalAddresses: f.allowLocal,
    exampleOutput: f.example.trim() ? f.example : null,
  };
  return { config };
}

/** The form of an existing command tool, to edit it. */
export function commandFormOf(c: CommandToolConfig): CommandForm {
  const [program = '', ...args] = c.argv;
  return {
    name: c.name,
    description: c.description,
    program,
    args,
    cwd: c.cwd ?? '',
    env: rows(c.env),
    timeout: c.timeoutSecs == null ? '' : String(c.timeoutSecs),
    ask: c.approval !== 'auto',
    example: c.exampleOutput ?? '',
  };
}

/** The config the form describes, or what to fix in it (see `buildHttpConfig` for `base`). */
export function buildCommandConfig(f: CommandForm, base?: CommandToolConfig): { config: CommandToolConfig } | { errors: FormErrors } {
  const errors: FormErrors = {};
  required(f, errors);
  if (!f.program.trim()) errors.program = 'Name the program to run, e.g. grep or /usr/bin/python3.';
  const timeoutSecs = timeoutOf(f.timeout, errors);
  if (Object.keys(errors).length > 0) return { errors };
  const keep = base?.approval === 'deny' && f.ask ? 'deny' : null;
  const config: CommandToolConfig = {
    ...(base ?? {}),
    name: f.name.trim(),
    description: f.description.trim(),
    // Arguments are kept exactly as typed (a space stays inside its argument); empty ones are dropped.
    argv: [f.program.trim(), ...f.args.filter((a) => a !== '')],
    cwd: f.cwd.trim() || null,
    env: toMap(f.env),
    timeoutSecs,
    approval: f.ask ? keep : 'auto',
    exampleOutput: f.example.trim() ? f.example : null,
  };
  return { config };
}

/** The `{{param}}` names in a text, in order, once each (`{{secret:NAME}}` is not a parameter). */
export function placeholders(...texts: string[]): string[] {
  const out: string[] = [];
  for (const text of texts) {
    for (const m of text.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g)) {
      const name = m[1];
      if (name && !out.includes(name)) out.push(name);
    }
  }
  return out;
}

/**
 * What "Try it" starts with: `{}`, or one empty string per placeholder of the tool (its URL, query
 * values and body; only the target line when the definition is not at hand).
 */
export function tryArgsTemplate(tool: Pick<DefinedToolInfo, 'target'>, config?: HttpToolConfig | null): string {
  const texts = config ? [config.url, ...Object.values(config.query ?? {}), ...Object.values(config.headers ?? {}), config.body == null ? '' : JSON.stringify(config.body)] : [tool.target];
  const names = placeholders(...texts);
  if (names.length === 0) return '{}';
  return JSON.stringify(Object.fromEntries(names.map((n) => [n, ''])), null, 2);
}

/** A JSON object typed into a text area (`what` names it in the error, `example` shows one), or why it is not one. */
function parseJsonObject(text: string, what: string, example: string): { value: Record<string, JsonValue> } | { error: string } {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { error: `${what} are not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { error: `${what} must be a JSON object, ${example}.` };
  return { value: v as Record<string, JsonValue> };
}

/** The arguments typed into "Try it", or why they cannot be sent. */
export function parseTryArgs(text: string): { args: Record<string, JsonValue> } | { error: string } {
  const out = parseJsonObject(text.trim() || '{}', 'The arguments', 'such as {"city": "Oslo"}');
  return 'error' in out ? out : { args: out.value };
}

/** The state's label and chip tone. */
export function definedBadge(t: DefinedToolInfo): { label: string; tone: 'ok' | 'warn' | 'bad' } {
  switch (t.state.state) {
    case 'ready':
      return { label: 'Ready', tone: 'ok' };
    case 'needsApproval':
      return { label: 'Needs approval', tone: 'warn' };
    default:
      return { label: 'Not usable', tone: 'bad' };
  }
}
