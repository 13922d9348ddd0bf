/**
 * The app's keyboard shortcuts: one table for the handler in <App>, the shortcut sheet (Ctrl+/)
 * and tooltips. "Mod" is Ctrl, or Cmd on macOS (the handler accepts either, `e.ctrlKey || e.metaKey`,
 * as the app always has). Anything showing a shortcut should use `shortcutHint` / `titleWith` so the
 * words stay the same everywhere, e.g. in Sidebar: `title={titleWith('New chat', 'newChat')}`.
 */

export type ShortcutId =
  | 'newChat'
  | 'search'
  | 'find'
  | 'stop'
  | 'copyLast'
  | 'settings'
  | 'shortcuts'
  | 'zoomIn'
  | 'zoomOut'
  | 'zoomReset'
  | 'send'
  | 'newline'
  | 'mention';

/** One key combination; `mod` is Ctrl (Cmd on macOS). `key` is what `KeyboardEvent.key` reports, lowercased. */
export interface Chord {
  key: string;
  mod?: boolean;
  shift?: boolean;
}

export interface Shortcut {
  id: ShortcutId;
  label: string;
  group: 'Chats' | 'Answer' | 'Composer' | 'Window';
  /** The first chord is the one shown; the others also work. */
  chords: Chord[];
  /** Extra words for the sheet (when the chord is not always live). */
  note?: string;
}

/** Whether the app runs on macOS (Cmd instead of Ctrl in labels). */
export function isMac(): boolean {
  if (typeof navigator === 'undefined') return false;
  return /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
}

/** Every global shortcut the app handles (composer keys are added by `composerShortcuts`). */
export const SHORTCUTS: readonly Shortcut[] = [
  { id: 'newChat', label: 'New chat', group: 'Chats', chords: [{ key: 'n', mod: true }, { key: 'o', mod: true, shift: true }] },
  { id: 'search', label: 'Search chats', group: 'Chats', chords: [{ key: 'k', mod: true }] },
  {
    id: 'find',
    label: 'Find in this chat',
    group: 'Chats',
    chords: [{ key: 'f', mod: true }],
    note: 'Enter or F3: next match · Shift+Enter or Shift+F3: previous · Esc closes',
  },
  { id: 'stop', label: 'Stop the answer', group: 'Answer', chords: [{ key: 'escape' }, { key: '.', mod: true }], note: 'Esc works when no dialog or menu is open' },
  { id: 'copyLast', label: 'Copy the last answer (Markdown)', group: 'Answer', chords: [{ key: 'c', mod: true, shift: true }] },
  { id: 'settings', label: 'Settings', group: 'Window', chords: [{ key: ',', mod: true }] },
  { id: 'shortcuts', label: 'Keyboard shortcuts', group: 'Window', chords: [{ key: '/', mod: true }] },
  { id: 'zoomIn', label: 'Zoom in', group: 'Window', chords: [{ key: '=', mod: true }, { key: '+', mod: true }] },
  { id: 'zoomOut', label: 'Zoom out', group: 'Window', chords: [{ key: '-', mod: true }] },
  { id: 'zoomReset', label: 'Actual size', group: 'Window', chords: [{ key: '0', mod: true }] },
];

export type SendKey = 'enter' | 'mod-enter';

/** The composer's own keys, which follow the "Send with" preference. */
export function composerShortcuts(sendKey: SendKey): Shortcut[] {
  const send: Chord = sendKey === 'enter' ? { key: 'enter' } : { key: 'enter', mod: true };
  const newline: Chord = sendKey === 'enter' ? { key: 'enter', shift: true } : { key: 'enter' };
  return [
    { id: 'send', label: 'Send (queued while an answer streams)', group: 'Composer', chords: [send] },
    { id: 'newline', label: 'New line', group: 'Composer', chords: sendKey === 'enter' ? [newline] : [newline, { key: 'enter', shift: true }] },
    { id: 'mention', label: 'Force a tool', group: 'Composer', chords: [{ key: '@' }] },
  ];
}

const KEY_NAMES: Record<string, string> = { escape: 'Esc', enter: 'Enter', '=': '=', '+': '+', '-': '−' };

/** The words for one chord: "Ctrl+Shift+C", "⌘⇧C" on macOS. */
export function formatChord(c: Chord, mac = isMac()): string {
  const key = KEY_NAMES[c.key] ?? (c.key.length === 1 ? c.key.toUpperCase() : c.key);
  if (mac) return `${c.mod ? '⌘' : ''}${c.shift ? '⇧' : ''}${key}`;
  return [c.mod ? 'Ctrl' : '', c.shift ? 'Shift' : '', key].filter(Boolean).join('+');
}

export function findShortcut(id: ShortcutId, sendKey: SendKey = 'enter'): Shortcut | undefined {
  return SHORTCUTS.find((s) => s.id === id) ?? composerShortcuts(sendKey).find((s) => s.id === id);
}

/** The main chord of a shortcut, in words ("Ctrl+N"); '' for an unknown id. */
export function shortcutHint(id: ShortcutId, opts: { mac?: boolean; sendKey?: SendKey } = {}): string {
  const chord = findShortcut(id, opts.sendKey)?.chords[0];
  return chord ? formatChord(chord, opts.mac ?? isMac()) : '';
}

/** Every chord of a shortcut, in words ("Esc", "Ctrl+."). */
export function shortcutHints(id: ShortcutId, opts: { mac?: boolean; sendKey?: SendKey } = {}): string[] {
  return (findShortcut(id, opts.sendKey)?.chords ?? []).map((c) => formatChord(c, opts.mac ?? isMac()));
}

/** A tooltip with the shortcut: "New chat (Ctrl+N)". */
export function titleWith(label: string, id: ShortcutId, opts: { mac?: boolean; sendKey?: SendKey } = {}): string {
  const hints = shortcutHints(id, opts);
  return hints.length ? `${label} (${hints.join(', ')})` : label;
}

function hasMod(e: KeyboardEvent): boolean {
  return e.ctrlKey || e.metaKey;
}

/**
 * The key a chord compares with. Letters come from `e.code` when the layout does not type Latin
 * letters (Cyrillic, Greek…), so Ctrl+N still means "new chat" there.
 */
function keyOf(e: KeyboardEvent): string {
  const key = e.key.toLowerCase();
  if (key.length === 1 && !/[a-z]/.test(key) && /^Key[A-Z]$/.test(e.code) && /\p{L}/u.test(key)) return e.code.slice(3).toLowerCase();
  return key;
}

/** Whether the event is this chord (Alt never is; Shift must match, except for keys typed with Shift). */
export function matchesChord(e: KeyboardEvent, c: Chord): boolean {
  if (e.altKey) return false;
  if (!!c.mod !== hasMod(e)) return false;
  const key = keyOf(e);
  if (key !== c.key) return false;
  // "+", "/" and "?" need Shift on many layouts: a chord without Shift accepts them either way.
  if (c.shift) return e.shiftKey;
  return !e.shiftKey || !/^[a-z0-9]$|^(escape|enter|\.|,|-)$/.test(key);
}

/** The global shortcut this key press is, if any. */
export function matchShortcut(e: KeyboardEvent): ShortcutId | null {
  for (const s of SHORTCUTS) if (s.chords.some((c) => matchesChord(e, c))) return s.id;
  // Ctrl+? is Ctrl+Shift+/ on US layouts; Ctrl+_ is Ctrl+Shift+- .
  if (hasMod(e) && !e.altKey && e.key === '?') return 'shortcuts';
  return null;
}
