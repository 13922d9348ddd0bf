/** MCP servers as the UI shows and edits them: the add form's text fields, statuses, tool hints, tool groups. */
import type { McpServerInfo, ServerConfig, ToolInfo } from '../ipc/bindings';
import { describeSource } from './format';

/** What the add form holds, as typed. */
export interface ServerForm {
  name: string;
  kind: 'local' | 'remote';
  command: string;
  /** One argument per line, exactly as typed (no quoting, no splitting on spaces). */
  args: string;
  /** KEY=VALUE lines. */
  env: string;
  cwd: string;
  url: string;
  /** "Name: value" lines. */
  headers: string;
  /** Seconds, or empty for the app's tool timeout. */
  timeout: string;
}

export type ServerFormErrors = Partial<Record<'name' | 'command' | 'args' | 'env' | 'url' | 'headers' | 'timeout', string>>;

export function emptyServerForm(): ServerForm {
  return { name: '', kind: 'local', command: '', args: '', env: '', cwd: '', url: '', headers: '', timeout: '' };
}

/** The form filled from a server's config entry, to edit it (secret references stay references). */
export function serverFormFrom(name: string, c: ServerConfig): ServerForm {
  const remote = c.type === 'http' || c.type === 'sse' || (!c.type && !!c.url);
  return {
    name,
    kind: remote ? 'remote' : 'local',
    command: c.command ?? '',
    args: (c.args ?? []).join('\n'),
    env: Object.entries(c.env ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join('\n'),
    cwd: c.cwd ?? '',
    url: c.url ?? '',
    headers: Object.entries(c.headers ?? {})
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n'),
    timeout: c.timeout != null ? String(c.timeout) : '',
  };
}

/** Whether an edit changes what runs on this computer (the command line, its environment or folder): then the shell asks first. */
export function changesWhatRuns(before: ServerConfig, after: ServerConfig): boolean {
  if (!after.command) return false;
  const line = (c: ServerConfig) => JSON.stringify([c.command ?? '', c.args ?? [], Object.entries(c.env ?? {}).sort(), c.cwd ?? null]);
  return line(before) !== line(after);
}

function lines(text: string): { line: string; n: number }[] {
  return text
    .split('\n')
    .map((line, i) => ({ line: line.replace(/\r$/, ''), n: i + 1 }))
    .filter((l) => l.line.trim() !== '');
}

const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Arguments: one per line, kept exactly (spaces and quotes included); blank lines are dropped. */
export function parseArgs(text: string): string[] {
  return lines(text).map((l) => l.line);
}

/** KEY=VALUE lines (split at the first "="; the value is kept as typed). Throws a message naming the line. */
export function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { line, n } of lines(text)) {
    const at = line.indexOf('=');
    const key = (at < 0 ? line : line.slice(0, at)).trim();
    if (at < 0 || !ENV_KEY.test(key)) throw new Error(`Line ${n}: write KEY=VALUE (the name in letters, digits and "_").`);
    if (key in out) throw new Error(`Line ${n}: ${key} is set twice.`);
    out[key] = line.slice(at + 1);
  }
  return out;
}

/** "Name: value" lines (split at the first ":"; spaces around the value dropped). */
export function parseHeaders(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { line, n } of lines(text)) {
    const at = line.indexOf(':');
    const name = (at < 0 ? line : line.slice(0, at)).trim();
    if (at < 0 || !HEADER_NAME.test(name)) throw new Error(`Line ${n}: write Name: value.`);
    if (Object.keys(out).some((k) => k.toLowerCase() === name.toLowerCase())) throw new Error(`Line ${n}: ${name} is set twice.`);
    out[name] = line.slice(at + 1).trim();
  }
  return out;
}

/** The config entry the form describes, or what is wrong with it, by field. */
export function buildServerConfig(f: ServerForm): { config: ServerConfig } | { errors: ServerFormErrors } {
  const errors: ServerFormErrors = {};
  const name = f.name.trim();
  if (!name) errors.name = 'Give the server a name.';
  else if (/\s/.test(name)) errors.name = 'A name has no spaces.';
  let timeout: number | null = null;
  if (f.timeout.trim()) {
    const t = Number(f.timeout.trim());
    if (!Number.isInteger(t) || t < 1) errors.timeout = 'A whole number of seconds, 1 or more.';
    else timeout = t;
  }
  const attempt = <T>(field: keyof ServerFormErrors, run: () => T, fallback: T): T => {
    try {
      return run();
    } catch (e) {
      errors[field] = e instanceof Error ? e.message : String(e);
      return fallback;
    }
  };
  let config: ServerConfig;
  if (f.kind === 'local') {
    const command = f.command.trim();
    if (!command) errors.command = 'Enter the program to run.';
    const env = attempt('env', () => parseEnv(f.env), {});
    config = { type: 'stdio', command, args: parseArgs(f.args), env, cwd: f.cwd.trim() || null, timeout };
  } else {
    const url = f.url.trim();
    if (!url) errors.url = 'Enter the server’s URL.';
    else if (!/^https?:\/\/[^/\s]+/i.test(url)) errors.url = 'The URL must start with http:// or https://.';
    const headers = attempt('headers', () => parseHeaders(f.headers), {});
    config = { type: 'http', url, headers, timeout };
  }
  return Object.keys(errors).length > 0 ? { errors } : { config };
}

export type Tone = 'ok' | 'warn' | 'bad' | 'accent' | '';

/** The status badge: "Ready · 2 tools", "Needs approval", "Disabled", ... */
export function serverBadge(s: McpServerInfo): { label: string; tone: Tone; busy: boolean } {
  if (!s.enabled) return { label: 'Disabled', tone: '', busy: false };
  const st = s.detail.status;
  switch (st.state) {
    case 'starting':
      return { label: 'Starting', tone: 'accent', busy: true };
    case 'ready': {
      const n = s.detail.tools.length;
      return { label: `Ready · ${n} ${n === 1 ? 'tool' : 'tools'}`, tone: 'ok', busy: false };
    }
    case 'failed':
      return { label: 'Failed', tone: 'bad', busy: false };
    case 'stopped':
      return { label: 'Stopped', tone: '', busy: false };
    case 'needsApproval':
      return { label: 'Needs approval', tone: 'warn', busy: false };
    case 'needsSignIn':
      return { label: 'Sign-in needed', tone: 'warn', busy: false };
  }
}

const HINTS: [key: string, label: string, title: string][] = [
  ['readOnlyHint', 'read-only', 'The server says this tool does not change anything.'],
  ['destructiveHint', 'destructive', 'The server says this tool may delete or overwrite things.'],
  ['idempotentHint', 'idempotent', 'The server says calling this tool twice has no further effect.'],
  ['openWorldHint', 'open-world', 'The server says this tool reaches outside systems (the web, other services).'],
];

/** The server's annotation hints that are set, as tags. Information only: they are never trusted. */
export function annotationTags(annotations: Record<string, unknown> | null): { label: string; title: string }[] {
  if (!annotations) return [];
  return HINTS.filter(([key]) => annotations[key] === true).map(([, label, title]) => ({ label, title }));
}

export interface ToolGroup {
  /** Stable key: "builtin", "mcp:<server>", or the source's description. */
  key: string;
  /** The heading: "Built-in", the server's name, "HTTP", ... */
  label: string;
  /** The group is one MCP server. */
  server: string | null;
  tools: ToolInfo[];
}

/** Tools by source: built-in first, then one group per MCP server (by name), then the other kinds. Order inside a group is kept. */
export function groupTools(tools: readonly ToolInfo[]): ToolGroup[] {
  const groups = new Map<string, ToolGroup>();
  for (const t of tools) {
    const s = t.source;
    const key = s.kind === 'builtin' ? 'builtin' : s.kind === 'mcp' ? `mcp:${s.server}` : describeSource(s);
    let g = groups.get(key);
    if (!g) {
      const label = s.kind === 'builtin' ? 'Built-in' : s.kind === 'mcp' ? s.server : key.charAt(0).toUpperCase() + key.slice(1);
      g = { key, label, server: s.kind === 'mcp' ? s.server : null, tools: [] };
      groups.set(key, g);
    }
    g.tools.push(t);
  }
  const rank = (g: ToolGroup) => (g.key === 'builtin' ? 0 : g.server !== null ? 1 : 2);
  // Sorting is stable: other kinds keep the order they first appeared in.
  return [...groups.values()].sort((a, b) => rank(a) - rank(b) || (rank(a) === 1 ? a.label.localeCompare(b.label) : 0));
}
