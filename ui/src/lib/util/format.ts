import type { ToolSource, Usage } from '../ipc/bindings';

const nf = new Intl.NumberFormat('en-US');

/** A count with separators, as every figure in the app is written: 1234 → "1,234". */
export function formatCount(n: number): string {
  return nf.format(n);
}

/** "412 in · 168 out · 64 reasoning" (reasoning only when > 0). */
export function formatUsage(u: Usage): string {
  const parts = [`${formatCount(u.promptTokens)} in`, `${formatCount(u.completionTokens)} out`];
  if (u.reasoningTokens > 0) parts.push(`${formatCount(u.reasoningTokens)} reasoning`);
  if (u.cachedTokens > 0) parts.push(`${formatCount(u.cachedTokens)} from cache`);
  if ((u.cacheWriteTokens ?? 0) > 0) parts.push(`${formatCount(u.cacheWriteTokens ?? 0)} cached`);
  return parts.join(' · ');
}

/** A duration in words: "450 ms", "4.2 s", "12 s", "2 min 5 s", "3 min", "1 h 3 min", "2 h". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 59_500) return `${(ms / 1000).toFixed(ms < 9_950 ? 1 : 0)} s`;
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return m > 0 ? `${h} h ${m} min` : `${h} h`;
  return s > 0 ? `${m} min ${s} s` : `${m} min`;
}

export function describeSource(s: ToolSource): string {
  switch (s.kind) {
    case 'builtin':
      return 'built-in';
    case 'mcp':
      return `MCP: ${s.server}`;
    case 'http':
      return 'HTTP';
    case 'openApi':
      return `OpenAPI: ${s.document}`;
    case 'command':
      return 'command';
    case 'agent':
      return 'agent';
    case 'unknown':
      return 'unknown';
  }
}

/** Pretty JSON when the text is JSON, the raw text otherwise. */
export function prettyJson(text: string): string {
  const t = text.trim();
  if (!t || !'{["'.includes(t[0] ?? '') && !/^(-?\d|true|false|null)/.test(t)) return text;
  try {
    return JSON.stringify(JSON.parse(t), null, 2);
  } catch {
    return text;
  }
}

/** Whether tool output is long enough to start collapsed: more than 12 lines or 800 characters. */
export function isLongOutput(text: string): boolean {
  if (text.length > 800) return true;
  let lines = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10 && ++lines > 12) return true;
  return false;
}

/** The first 12 lines, at most 800 characters. */
export function clampOutput(text: string): string {
  const lines = text.split('\n').slice(0, 12).join('\n');
  return lines.length > 800 ? lines.slice(0, 800) : lines;
}

/** "Today", "Yesterday", a weekday within a week, else a short date. */
export function relativeDay(ms: number, now = Date.now()): string {
  const d = new Date(ms);
  const today = new Date(now);
  const startOf = (x: Date) => new Date(x.getFullYear(), x.getMonth(), x.getDate()).getTime();
  const days = Math.round((startOf(today) - startOf(d)) / 86_400_000);
  if (days <= 0) return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (days === 1) return 'Yesterday';
  if (days < 7) return d.toLocaleDateString(undefined, { weekday: 'short' });
  return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric', ...(d.getFullYear() !== today.getFullYear() ? { year: 'numeric' } : {}) });
}

/** Image types a tool card shows (the engine accepts no others; checked again here). */
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];

/** A `data:` URL for an image a tool returned, or `null` when it is not a plain base64 image of a usual type. */
export function imageSrc(image: { mimeType: string; data: string }): string | null {
  if (!IMAGE_TYPES.includes(image.mimeType) || !/^[A-Za-z0-9+/]+={0,2}$/.test(image.data)) return null;
  return `data:${image.mimeType};base64,${image.data}`;
}

/** `s` cut to at most `max` characters, ending in "…" when cut (never splitting a surrogate pair). */
export function clipText(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max - 1;
  const code = s.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${s.slice(0, end)}…`;
}

/** One short line for a JSON value: a string as is, an object as "key: value, …", an array as "[n items]". */
function jsonSummary(v: unknown): string {
  if (v === null || typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return `[${formatCount(v.length)} item${v.length === 1 ? '' : 's'}]`;
  return Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => `${k}: ${x !== null && typeof x === 'object' ? (Array.isArray(x) ? `[${formatCount(x.length)}]` : '{…}') : String(x)}`)
    .join(', ');
}

/** Only this much of a tool's output is read for its one-line summary. */
const SUMMARY_SCAN_CHARS = 4096;

/**
 * A one-line summary of a tool's output for its collapsed card, at most `max` characters: a JSON
 * object as "key: value, …" (short outputs only), otherwise the first non-empty line, with runs of
 * whitespace made single spaces. Empty output gives "".
 */
export function summarizeOutput(output: string, max = 120): string {
  const head = output.length > SUMMARY_SCAN_CHARS ? output.slice(0, SUMMARY_SCAN_CHARS) : output;
  const t = head.trim();
  let line = '';
  if (output.length <= SUMMARY_SCAN_CHARS && /^[[{"]/.test(t)) {
    try {
      line = jsonSummary(JSON.parse(t));
    } catch {
      line = '';
    }
  }
  if (line === '') line = t.split('\n').find((l) => l.trim() !== '') ?? '';
  return clipText(line.replace(/\s+/g, ' ').trim(), max);
}

/** What a collapsed tool card says after its name: "ok · time: 17:05", "error: no such file", "denied". */
export function toolSummary(status: string, output: string | null, opts: { interrupted?: boolean; dryRun?: boolean; max?: number } = {}): string {
  const max = opts.max ?? 120;
  if (opts.interrupted) return 'interrupted before it finished';
  const text = output === null ? '' : summarizeOutput(output, max);
  if (status === 'ok') {
    const prefix = opts.dryRun ? 'ok · example output' : 'ok';
    return text ? `${prefix} · ${text}` : `${prefix} · no output`;
  }
  const word = status === 'timeout' ? 'timed out' : status;
  // "error: Error: …" reads twice; the tool's own "error:" goes.
  const detail = text.replace(/^(?:error|failed)\s*:\s*/i, '');
  return detail ? `${word}: ${detail}` : word;
}
