/**
 * The composer's `/` menu and resource templates, as pure functions: when the menu is open, which
 * entries a query shows (servers' prompts and the app's own commands) in which order, and a
 * template's parameters and expansion.
 *
 * Invariant: a query never reorders entries that match equally (a stable order: the app's
 * commands first, then servers by name, prompts in the server's order), and at most
 * `MAX_SHOWN` entries are drawn however many a server offers.
 */
import type { PromptInfo, ResourceTemplateInfo } from './types';

/** At most this many entries are shown. */
export const MAX_SHOWN = 50;

/** The app's own commands offered in the `/` menu. */
export type AppCommand = 'new' | 'compact' | 'instructions' | 'settings' | 'shortcuts';

export type MenuEntry =
  | { kind: 'app'; id: AppCommand; name: string; description: string }
  | { kind: 'prompt'; server: string; prompt: PromptInfo };

export const APP_COMMANDS: readonly Extract<MenuEntry, { kind: 'app' }>[] = [
  { kind: 'app', id: 'new', name: 'new', description: 'Start a new chat' },
  { kind: 'app', id: 'compact', name: 'compact', description: 'Compact this chat now' },
  { kind: 'app', id: 'instructions', name: 'instructions', description: "This chat's instructions" },
  { kind: 'app', id: 'settings', name: 'settings', description: 'Open Settings' },
  { kind: 'app', id: 'shortcuts', name: 'shortcuts', description: 'Keyboard shortcuts' },
];

/** The query of a `/` typed at the start of the composer (nothing else typed), or null. */
export function slashQuery(text: string): string | null {
  const m = /^\/(\S*)$/.exec(text);
  return m ? (m[1] ?? '') : null;
}

/** The name an entry is typed as: `server:prompt` for a prompt, the command's name for the app's. */
export function entryName(e: MenuEntry): string {
  return e.kind === 'app' ? e.name : `${e.server}:${e.prompt.name}`;
}

export function entryKey(e: MenuEntry): string {
  return e.kind === 'app' ? `app:${e.id}` : `prompt:${e.server}:${e.prompt.name}`;
}

/**
 * The entries a query shows: names starting with it first, then names or titles containing it,
 * then descriptions containing it; case-insensitive.
 */
export function filterEntries(entries: readonly MenuEntry[], query: string): MenuEntry[] {
  const q = query.trim().toLowerCase();
  if (!q) return entries.slice(0, MAX_SHOWN);
  const rank = (e: MenuEntry): number => {
    const name = entryName(e).toLowerCase();
    const bare = e.kind === 'app' ? e.name : e.prompt.name.toLowerCase();
    const title = (e.kind === 'prompt' ? (e.prompt.title ?? '') : '').toLowerCase();
    const desc = (e.kind === 'app' ? e.description : (e.prompt.description ?? '')).toLowerCase();
    if (name.startsWith(q) || bare.startsWith(q)) return 0;
    if (name.includes(q) || title.includes(q)) return 1;
    if (desc.includes(q)) return 2;
    return 3;
  };
  return entries
    .map((e, i) => ({ e, i, r: rank(e) }))
    .filter((x) => x.r < 3)
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .slice(0, MAX_SHOWN)
    .map((x) => x.e);
}

/** The next active index after a key press in a list of `n` (wraps around). */
export function moveActive(active: number, n: number, key: string): number {
  if (n === 0) return 0;
  if (key === 'ArrowDown') return (active + 1) % n;
  if (key === 'ArrowUp') return (active - 1 + n) % n;
  if (key === 'Home') return 0;
  if (key === 'End') return n - 1;
  if (key === 'PageDown') return Math.min(n - 1, active + 8);
  if (key === 'PageUp') return Math.max(0, active - 8);
  return active;
}

const EXPR = /\{([+#./;?&]?)([^}]*)\}/g;

/** A template's parameter names, in order, once each. */
export function templateParams(t: ResourceTemplateInfo | string): string[] {
  const uri = typeof t === 'string' ? t : t.uriTemplate;
  const out: string[] = [];
  for (const m of uri.matchAll(EXPR)) {
    for (const raw of (m[2] ?? '').split(',')) {
      const name = raw.replace(/\*$/, '').replace(/:\d+$/, '').trim();
      if (name && !out.includes(name)) out.push(name);
    }
  }
  return out;
}

/** A template with its parameters filled in (RFC 6570 levels 1–3; `+`/`#` keep reserved characters). */
export function expandTemplate(uriTemplate: string, values: Record<string, string>): string {
  return uriTemplate.replace(EXPR, (_all, op: string, list: string) => {
    const names = list.split(',').map((n) => n.replace(/\*$/, '').replace(/:\d+$/, '').trim()).filter(Boolean);
    const keep = op === '+' || op === '#';
    const enc = (v: string) => (keep ? encodeURI(v) : encodeURIComponent(v));
    const present = names.filter((n) => values[n] !== undefined && values[n] !== '');
    if (present.length === 0) return '';
    switch (op) {
      case '?':
      case '&':
        return op + present.map((n) => `${n}=${enc(values[n] ?? '')}`).join('&');
      case ';':
        return present.map((n) => `;${n}=${enc(values[n] ?? '')}`).join('');
      case '.':
      case '/':
        return present.map((n) => op + enc(values[n] ?? '')).join('');
      case '#':
        return '#' + present.map((n) => enc(values[n] ?? '')).join(',');
      default:
        return present.map((n) => enc(values[n] ?? '')).join(',');
    }
  });
}
