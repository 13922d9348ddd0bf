/**
 * Appearance preferences: load, save and apply, and the Settings → Appearance section.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import App from '../src/App.svelte';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';
import { applyPrefs, clampZoom, DEFAULT_PREFS, loadPrefs, PREFS_KEY, PrefsState, savePrefs, zoomLabel } from '../src/lib/state/prefs.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);
const root = document.documentElement;

async function start() {
  const app = new AppState(createFakeBackend({ tickMs: 0, empty: true }), { schedule });
  render(App, { props: { app } });
  await app.init();
  return { app };
}

function stored(): Record<string, unknown> {
  return JSON.parse(localStorage.getItem(PREFS_KEY) ?? '{}') as Record<string, unknown>;
}

beforeEach(() => {
  localStorage.clear();
});

afterEach(() => {
  delete root.dataset.theme;
  delete root.dataset.fontSize;
  root.style.removeProperty('--zoom');
  root.style.removeProperty('--font-scale');
});

describe('prefs', () => {
  it('load the defaults when nothing, or nonsense, is stored', () => {
    expect(loadPrefs()).toEqual(DEFAULT_PREFS);
    localStorage.setItem(PREFS_KEY, '{not json');
    expect(loadPrefs()).toEqual(DEFAULT_PREFS);
    localStorage.setItem(PREFS_KEY, JSON.stringify({ theme: 'purple', fontSize: 3, zoom: 'big', sendKey: 'space' }));
    expect(loadPrefs()).toEqual({ ...DEFAULT_PREFS, zoom: 1 });
  });

  it('save and load round-trip; a zoom off the steps snaps to the nearest', () => {
    savePrefs({ theme: 'dark', fontSize: 'large', zoom: 1.5, sendKey: 'mod-enter' });
    expect(loadPrefs()).toEqual({ theme: 'dark', fontSize: 'large', zoom: 1.5, sendKey: 'mod-enter' });
    localStorage.setItem(PREFS_KEY, JSON.stringify({ zoom: 1.3 }));
    expect(loadPrefs().zoom).toBe(1.25);
    expect(clampZoom(5)).toBe(2);
    expect(clampZoom(0.1)).toBe(0.8);
    expect(zoomLabel(1.25)).toBe('125%');
  });

  it('apply: data-theme for Light/Dark, none for System; text size and zoom as CSS variables', () => {
    applyPrefs({ theme: 'dark', fontSize: 'large', zoom: 1.25, sendKey: 'enter' });
    expect(root.dataset.theme).toBe('dark');
    expect(root.dataset.fontSize).toBe('large');
    expect(root.style.getPropertyValue('--font-scale')).toBe('1.15');
    expect(root.style.getPropertyValue('--zoom')).toBe('1.25');
    applyPrefs({ theme: 'light', fontSize: 'small', zoom: 1, sendKey: 'enter' });
    expect(root.dataset.theme).toBe('light');
    expect(root.style.getPropertyValue('--font-scale')).toBe('0.9');
    expect(root.style.getPropertyValue('--zoom')).toBe('');
    applyPrefs({ ...DEFAULT_PREFS });
    expect(root.dataset.theme).toBeUndefined();
    expect(root.style.getPropertyValue('--font-scale')).toBe('1');
  });

  it('every change is saved and applied at once', () => {
    const p = new PrefsState();
    p.setTheme('dark');
    expect(root.dataset.theme).toBe('dark');
    expect(stored().theme).toBe('dark');
    p.setFontSize('small');
    expect(stored().fontSize).toBe('small');
    expect(root.style.getPropertyValue('--font-scale')).toBe('0.9');
    expect(p.zoomIn()).toBe(true);
    expect(stored().zoom).toBe(1.1);
    p.setZoom(2);
    expect(p.zoomIn()).toBe(false);
    expect(p.canZoomIn).toBe(false);
    p.resetZoom();
    expect(stored().zoom).toBe(1);
    p.setSendKey('mod-enter');
    expect(stored().sendKey).toBe('mod-enter');
    p.setTheme('system');
    expect(root.dataset.theme).toBeUndefined();
    // A new state (the next start) reads them back.
    expect(new PrefsState().snapshot()).toEqual({ theme: 'system', fontSize: 'small', zoom: 1, sendKey: 'mod-enter' });
  });

  it('are applied when the app mounts', async () => {
    savePrefs({ theme: 'dark', fontSize: 'large', zoom: 1.5, sendKey: 'enter' });
    await start();
    expect(root.dataset.theme).toBe('dark');
    expect(root.style.getPropertyValue('--zoom')).toBe('1.5');
    expect(root.style.getPropertyValue('--font-scale')).toBe('1.15');
  });
});

describe('Settings → Appearance', () => {
  it('is in the nav and changes theme, text size, zoom and the send key', async () => {
    const { app } = await start();
    app.openSettings();
    await fireEvent.click(await screen.findByTestId('settings-nav-appearance'));
    const section = await screen.findByTestId('settings-section-appearance');
    expect(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-appearance').textContent?.trim()).toBe('Appearance');

    expect((within(section).getByTestId('theme-system') as HTMLInputElement).checked).toBe(true);
    await fireEvent.click(within(section).getByTestId('theme-dark'));
    expect(root.dataset.theme).toBe('dark');
    await fireEvent.click(within(section).getByTestId('theme-light'));
    expect(root.dataset.theme).toBe('light');
    await fireEvent.click(within(section).getByTestId('theme-system'));
    expect(root.dataset.theme).toBeUndefined();
    expect(stored().theme).toBe('system');

    await fireEvent.click(within(section).getByTestId('font-size-large'));
    expect(root.style.getPropertyValue('--font-scale')).toBe('1.15');
    expect(stored().fontSize).toBe('large');

    const value = within(section).getByTestId('zoom-value');
    expect(value.textContent).toBe('100%');
    expect((within(section).getByTestId('zoom-reset') as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(within(section).getByTestId('zoom-in'));
    await fireEvent.click(within(section).getByTestId('zoom-in'));
    expect(value.textContent).toBe('125%');
    expect(root.style.getPropertyValue('--zoom')).toBe('1.25');
    // The keyboard and the section show the same zoom.
    await fireEvent.keyDown(window, { key: '-', ctrlKey: true });
    await waitFor(() => expect(value.textContent).toBe('110%'));
    await fireEvent.click(within(section).getByTestId('zoom-reset'));
    expect(value.textContent).toBe('100%');
    for (let i = 0; i < 5; i++) await fireEvent.click(within(section).getByTestId('zoom-out'));
    expect(value.textContent).toBe('80%');
    expect((within(section).getByTestId('zoom-out') as HTMLButtonElement).disabled).toBe(true);

    expect(within(section).getByTestId('send-key-hint').textContent).toBe('Shift+Enter starts a new line.');
    await fireEvent.click(within(section).getByTestId('send-key-mod-enter'));
    expect(app.prefs.sendKey).toBe('mod-enter');
    expect(within(section).getByTestId('send-key-hint').textContent).toBe('Enter starts a new line.');
  });

  it('opens the shortcut sheet', async () => {
    const { app } = await start();
    app.openSettings('appearance');
    await fireEvent.click(await screen.findByTestId('open-shortcuts'));
    expect(await screen.findByTestId('shortcut-sheet')).toBeTruthy();
    expect(app.settingsOpen).toBe(true);
    // Esc closes the sheet only, not Settings behind it.
    await fireEvent.keyDown(document.activeElement as HTMLElement, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('shortcut-sheet')).toBeNull());
    expect(app.settingsOpen).toBe(true);
  });
});
