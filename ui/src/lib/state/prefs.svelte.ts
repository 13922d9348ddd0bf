/**
 * Appearance and typing preferences, kept in this window's localStorage (like the model choice):
 * theme, text size, zoom and the key that sends. Applied to <html> as `data-theme` and two CSS
 * variables that app.css reads (`--font-scale` on the body text, `--zoom` on the whole page).
 */
import type { SendKey } from '../util/shortcuts';

export type Theme = 'system' | 'light' | 'dark';
export type FontSize = 'small' | 'default' | 'large';
export type { SendKey };

export interface Prefs {
  theme: Theme;
  fontSize: FontSize;
  /** Page zoom as a factor, one of `ZOOM_STEPS`. */
  zoom: number;
  sendKey: SendKey;
}

export const PREFS_KEY = 'switchboard.appearance';

export const THEMES: readonly Theme[] = ['system', 'light', 'dark'];
export const FONT_SIZES: readonly FontSize[] = ['small', 'default', 'large'];
export const SEND_KEYS: readonly SendKey[] = ['enter', 'mod-enter'];
/** 80% to 200%, the steps Ctrl+= and Ctrl+- move through. */
export const ZOOM_STEPS: readonly number[] = [0.8, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2];

/** How much the reading text (messages, composer) grows; the chrome keeps its sizes. */
export const FONT_SCALE: Record<FontSize, number> = { small: 0.9, default: 1, large: 1.15 };

export const DEFAULT_PREFS: Readonly<Prefs> = Object.freeze({ theme: 'system', fontSize: 'default', zoom: 1, sendKey: 'enter' });

function oneOf<T extends string>(list: readonly T[], v: unknown, fallback: T): T {
  return typeof v === 'string' && (list as readonly string[]).includes(v) ? (v as T) : fallback;
}

/** The nearest zoom step (a stored or typed value that is not one). */
export function clampZoom(z: unknown): number {
  if (typeof z !== 'number' || !Number.isFinite(z)) return 1;
  let best = 1;
  for (const s of ZOOM_STEPS) if (Math.abs(s - z) < Math.abs(best - z)) best = s;
  return best;
}

/** Reads the saved preferences; anything missing or unknown falls back to its default. */
export function loadPrefs(): Prefs {
  let raw: Partial<Record<keyof Prefs, unknown>> = {};
  try {
    const text = localStorage.getItem(PREFS_KEY);
    const parsed: unknown = text ? JSON.parse(text) : null;
    if (parsed && typeof parsed === 'object') raw = parsed as typeof raw;
  } catch {
    // Unreadable or disabled storage: the defaults.
  }
  return {
    theme: oneOf(THEMES, raw.theme, DEFAULT_PREFS.theme),
    fontSize: oneOf(FONT_SIZES, raw.fontSize, DEFAULT_PREFS.fontSize),
    zoom: raw.zoom === undefined ? DEFAULT_PREFS.zoom : clampZoom(raw.zoom),
    sendKey: oneOf(SEND_KEYS, raw.sendKey, DEFAULT_PREFS.sendKey),
  };
}

export function savePrefs(p: Prefs): void {
  try {
    localStorage.setItem(PREFS_KEY, JSON.stringify(p));
  } catch {
    // Storage can be full or disabled; the choice then lasts for this session only.
  }
}

/**
 * Puts the preferences on <html>: `data-theme` for Light or Dark (none for System, so app.css
 * follows `prefers-color-scheme`), and the `--font-scale` and `--zoom` variables.
 */
export function applyPrefs(p: Prefs, root: HTMLElement = document.documentElement): void {
  if (p.theme === 'system') delete root.dataset.theme;
  else root.dataset.theme = p.theme;
  root.dataset.fontSize = p.fontSize;
  root.style.setProperty('--font-scale', String(FONT_SCALE[p.fontSize]));
  if (p.zoom === 1) root.style.removeProperty('--zoom');
  else root.style.setProperty('--zoom', String(p.zoom));
}

/** The live preferences: every change is saved and applied at once. */
export class PrefsState implements Prefs {
  theme = $state<Theme>(DEFAULT_PREFS.theme);
  fontSize = $state<FontSize>(DEFAULT_PREFS.fontSize);
  zoom = $state(DEFAULT_PREFS.zoom);
  sendKey = $state<SendKey>(DEFAULT_PREFS.sendKey);

  constructor(initial: Prefs = loadPrefs()) {
    this.theme = initial.theme;
    this.fontSize = initial.fontSize;
    this.zoom = initial.zoom;
    this.sendKey = initial.sendKey;
  }

  snapshot(): Prefs {
    return { theme: this.theme, fontSize: this.fontSize, zoom: this.zoom, sendKey: this.sendKey };
  }

  /** Applies to the document without saving (at start-up). */
  apply(): void {
    if (typeof document !== 'undefined') applyPrefs(this.snapshot());
  }

  private commit(): void {
    savePrefs(this.snapshot());
    this.apply();
  }

  setTheme(t: Theme): void {
    this.theme = oneOf(THEMES, t, this.theme);
    this.commit();
  }

  setFontSize(f: FontSize): void {
    this.fontSize = oneOf(FONT_SIZES, f, this.fontSize);
    this.commit();
  }

  setSendKey(k: SendKey): void {
    this.sendKey = oneOf(SEND_KEYS, k, this.sendKey);
    this.commit();
  }

  setZoom(z: number): void {
    this.zoom = clampZoom(z);
    this.commit();
  }

  /** One step up (false at 200%). */
  zoomIn(): boolean {
    const next = ZOOM_STEPS.find((s) => s > this.zoom + 1e-9);
    if (next === undefined) return false;
    this.setZoom(next);
    return true;
  }

  /** One step down (false at 80%). */
  zoomOut(): boolean {
    const prev = [...ZOOM_STEPS].reverse().find((s) => s < this.zoom - 1e-9);
    if (prev === undefined) return false;
    this.setZoom(prev);
    return true;
  }

  resetZoom(): void {
    this.setZoom(1);
  }

  get canZoomIn(): boolean {
    return this.zoom < (ZOOM_STEPS[ZOOM_STEPS.length - 1] ?? 2) - 1e-9;
  }

  get canZoomOut(): boolean {
    return this.zoom > (ZOOM_STEPS[0] ?? 0.8) + 1e-9;
  }
}

/** "125%" */
export function zoomLabel(z: number): string {
  return `${Math.round(z * 100)}%`;
}
