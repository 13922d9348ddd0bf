/**
 * Keyboard comfort: the shortcut table, each global shortcut's effect, and the shortcut sheet.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';
import { composerShortcuts, formatChord, matchShortcut, SHORTCUTS, shortcutHint, titleWith } from '../src/lib/util/shortcuts';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start(backend: Backend = createFakeBackend({ tickMs: 0, empty: true })) {
  const app = new AppState(backend, { schedule });
  const view = render(App, { props: { app } });
  await app.init();
  return { app, view, backend };
}

function input(): HTMLTextAreaElement {
  return screen.getByTestId('composer-input') as HTMLTextAreaElement;
}

async function send(text: string) {
  const el = input();
  el.value = text;
  el.setSelectionRange(text.length, text.length);
  await fireEvent.input(el);
  await fireEvent.keyDown(el, { key: 'Enter' });
}

function lastAssistant(): HTMLElement | undefined {
  return screen.queryAllByTestId('message').filter((m) => m.dataset.role === 'assistant').at(-1);
}

function key(init: KeyboardEventInit): KeyboardEvent {
  return new KeyboardEvent('keydown', init);
}

let clipboard: { writeText: ReturnType<typeof vi.fn> };

beforeEach(() => {
  localStorage.clear();
  clipboard = { writeText: vi.fn(() => Promise.resolve()) };
  Object.defineProperty(navigator, 'clipboard', { value: clipboard, configurable: true });
});

afterEach(() => {
  vi.useRealTimers();
  const root = document.documentElement;
  delete root.dataset.theme;
  root.style.removeProperty('--zoom');
  root.style.removeProperty('--font-scale');
});

describe('the shortcut table', () => {
  it('matches each chord with Ctrl or Cmd, and nothing else', () => {
    expect(matchShortcut(key({ key: 'n', ctrlKey: true }))).toBe('newChat');
    expect(matchShortcut(key({ key: 'n', metaKey: true }))).toBe('newChat');
    expect(matchShortcut(key({ key: 'O', ctrlKey: true, shiftKey: true }))).toBe('newChat');
    expect(matchShortcut(key({ key: 'k', ctrlKey: true }))).toBe('search');
    expect(matchShortcut(key({ key: 'Escape' }))).toBe('stop');
    expect(matchShortcut(key({ key: '.', ctrlKey: true }))).toBe('stop');
    expect(matchShortcut(key({ key: 'C', ctrlKey: true, shiftKey: true }))).toBe('copyLast');
    expect(matchShortcut(key({ key: ',', ctrlKey: true }))).toBe('settings');
    expect(matchShortcut(key({ key: '/', ctrlKey: true }))).toBe('shortcuts');
    expect(matchShortcut(key({ key: '?', ctrlKey: true, shiftKey: true }))).toBe('shortcuts');
    expect(matchShortcut(key({ key: '=', ctrlKey: true }))).toBe('zoomIn');
    expect(matchShortcut(key({ key: '+', ctrlKey: true, shiftKey: true }))).toBe('zoomIn');
    expect(matchShortcut(key({ key: '-', ctrlKey: true }))).toBe('zoomOut');
    expect(matchShortcut(key({ key: '0', ctrlKey: true }))).toBe('zoomReset');
    // Plain typing, ordinary copy and other chords are left alone.
    expect(matchShortcut(key({ key: 'n' }))).toBeNull();
    expect(matchShortcut(key({ key: 'c', ctrlKey: true }))).toBeNull();
    expect(matchShortcut(key({ key: 'N', ctrlKey: true, shiftKey: true }))).toBeNull();
    expect(matchShortcut(key({ key: 'n', ctrlKey: true, altKey: true }))).toBeNull();
    expect(matchShortcut(key({ key: '.' }))).toBeNull();
  });

  it('works on a non-Latin layout by the key position', () => {
    expect(matchShortcut(key({ key: 'т', code: 'KeyN', ctrlKey: true }))).toBe('newChat');
    expect(matchShortcut(key({ key: 'л', code: 'KeyK', ctrlKey: true }))).toBe('search');
  });

  it('words the chords for tooltips, with Cmd symbols on macOS', () => {
    expect(shortcutHint('newChat', { mac: false })).toBe('Ctrl+N');
    expect(shortcutHint('newChat', { mac: true })).toBe('⌘N');
    expect(shortcutHint('copyLast', { mac: false })).toBe('Ctrl+Shift+C');
    expect(shortcutHint('copyLast', { mac: true })).toBe('⌘⇧C');
    expect(titleWith('Stop answering', 'stop', { mac: false })).toBe('Stop answering (Esc, Ctrl+.)');
    expect(formatChord({ key: 'enter', mod: true }, false)).toBe('Ctrl+Enter');
    expect(composerShortcuts('mod-enter')[0]?.chords[0]).toEqual({ key: 'enter', mod: true });
    expect(SHORTCUTS.map((s) => s.id)).toEqual(['newChat', 'search', 'find', 'stop', 'copyLast', 'settings', 'shortcuts', 'zoomIn', 'zoomOut', 'zoomReset']);
  });
});

describe('global shortcuts', () => {
  it('Ctrl+N and Ctrl+Shift+O start a new chat, also from Settings, and focus the composer', async () => {
    const { app } = await start();
    await send('Hello there');
    await waitFor(() => expect(lastAssistant()?.dataset.status).toBe('complete'));
    const first = app.current;
    await fireEvent.keyDown(input(), { key: 'n', ctrlKey: true });
    expect(app.current).not.toBe(first);
    expect(app.current.isDraft).toBe(true);
    await waitFor(() => expect(document.activeElement).toBe(input()));

    await send('Again');
    await waitFor(() => expect(lastAssistant()?.dataset.status).toBe('complete'));
    app.openSettings();
    const second = app.current;
    await fireEvent.keyDown(window, { key: 'O', ctrlKey: true, shiftKey: true });
    expect(app.current).not.toBe(second);
    expect(app.settingsOpen).toBe(false);
  });

  it('Ctrl+K focuses the chat search, opening the sidebar when it is hidden', async () => {
    const { app } = await start();
    input().focus();
    await fireEvent.keyDown(input(), { key: 'k', ctrlKey: true });
    expect(document.activeElement).toBe(screen.getByTestId('search-input'));

    app.toggleSidebar();
    await waitFor(() => expect(screen.queryByTestId('search-input')).toBeNull());
    input().focus();
    await fireEvent.keyDown(input(), { key: 'k', metaKey: true });
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('search-input')));
    expect(app.sidebarOpen).toBe(true);
  });

  it('Esc and Ctrl+. stop the streaming answer', async () => {
    const backend = createFakeBackend({ tickMs: 15, empty: true });
    const stop = vi.spyOn(backend, 'stopTurn');
    const { app } = await start(backend);

    await send('What time is it?');
    await screen.findByTestId('stop-button');
    await waitFor(() => expect(lastAssistant()?.textContent).toContain('Let me'), { timeout: 3000 });
    (document.activeElement as HTMLElement | null)?.blur();
    await fireEvent.keyDown(document.body, { key: 'Escape' });
    await waitFor(() => expect(lastAssistant()?.dataset.status).toBe('cancelled'), { timeout: 3000 });
    expect(stop).toHaveBeenCalledTimes(1);

    await send('What time is it now?');
    await waitFor(() => expect(app.current.running).toBe(true));
    await waitFor(() => expect(lastAssistant()?.textContent).toContain('Let me'), { timeout: 3000 });
    // Ctrl+. works even while typing in the composer.
    await fireEvent.keyDown(input(), { key: '.', ctrlKey: true });
    await waitFor(() => expect(lastAssistant()?.dataset.status).toBe('cancelled'), { timeout: 3000 });
    expect(stop).toHaveBeenCalledTimes(2);
  });

  it('Esc in the composer stops the answer, but not in the search field, nor with the tools tray open', async () => {
    const backend = createFakeBackend({ tickMs: 15, empty: true });
    const stop = vi.spyOn(backend, 'stopTurn');
    const { app } = await start(backend);
    await send('What time is it?');
    await waitFor(() => expect(lastAssistant()?.textContent).toContain('Let me'), { timeout: 3000 });

    const search = screen.getByTestId('search-input');
    search.focus();
    await fireEvent.keyDown(search, { key: 'Escape' });
    await fireEvent.click(screen.getByTestId('tools-tray-toggle'));
    const tray = document.getElementById('tools-tray') as HTMLElement;
    await fireEvent.keyDown(document.body, { key: 'Escape' });
    // Esc in the tray closes the tray, and only that.
    await fireEvent.keyDown(tray, { key: 'Escape' });
    expect(stop).not.toHaveBeenCalled();
    expect(app.current.running).toBe(true);

    // The tray is closed; Esc in the composer now stops.
    await waitFor(() => expect(document.getElementById('tools-tray')).toBeNull());
    input().focus();
    await fireEvent.keyDown(input(), { key: 'Escape' });
    expect(stop).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(lastAssistant()?.dataset.status).toBe('cancelled'), { timeout: 3000 });
  });

  it('Esc with nothing streaming does nothing and is not swallowed', async () => {
    const { app } = await start();
    const ev = new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, cancelable: true });
    document.body.dispatchEvent(ev);
    expect(ev.defaultPrevented).toBe(false);
    expect(app.current.running).toBe(false);
  });

  it('Ctrl+Shift+C copies the last answer as Markdown and says "Copied"', async () => {
    const { app } = await start();
    await fireEvent.keyDown(window, { key: 'C', ctrlKey: true, shiftKey: true });
    expect(clipboard.writeText).not.toHaveBeenCalled();
    expect((await screen.findByTestId('notice')).textContent).toContain('No answer to copy');

    await send('What time is it?');
    await waitFor(() => expect(lastAssistant()?.dataset.status).toBe('complete'));
    await fireEvent.keyDown(input(), { key: 'C', ctrlKey: true, shiftKey: true });
    const last = app.current.messages.at(-1)?.model;
    expect(clipboard.writeText).toHaveBeenCalledWith(last?.content);
    await waitFor(() => expect(screen.getByTestId('notice').textContent).toContain('Copied'));
    // A confirmation, not an error toast.
    expect(screen.queryByTestId('error-banner')).toBeNull();
  });

  it('a refused clipboard is an error toast', async () => {
    clipboard.writeText.mockRejectedValue(new Error('Clipboard access denied'));
    await start();
    await send('Hi');
    await waitFor(() => expect(lastAssistant()?.dataset.status).toBe('complete'));
    await fireEvent.keyDown(window, { key: 'c', ctrlKey: true, shiftKey: true });
    expect((await screen.findByTestId('error-banner')).textContent).toContain('Could not copy');
  });

  it('Ctrl+= / Ctrl+- / Ctrl+0 zoom in, out and back, within 80–200%', async () => {
    const { app } = await start();
    const root = document.documentElement;
    await fireEvent.keyDown(input(), { key: '=', ctrlKey: true });
    expect(app.prefs.zoom).toBe(1.1);
    expect(root.style.getPropertyValue('--zoom')).toBe('1.1');
    await fireEvent.keyDown(window, { key: '+', ctrlKey: true, shiftKey: true });
    expect(app.prefs.zoom).toBe(1.25);
    for (let i = 0; i < 10; i++) await fireEvent.keyDown(window, { key: '=', ctrlKey: true });
    expect(app.prefs.zoom).toBe(2);
    await fireEvent.keyDown(window, { key: '0', ctrlKey: true });
    expect(app.prefs.zoom).toBe(1);
    expect(root.style.getPropertyValue('--zoom')).toBe('');
    for (let i = 0; i < 10; i++) await fireEvent.keyDown(window, { key: '-', ctrlKey: true });
    expect(app.prefs.zoom).toBe(0.8);
    expect(JSON.parse(localStorage.getItem('switchboard.appearance') ?? '{}').zoom).toBe(0.8);
  });

  it('does not take plain keys from a text field', async () => {
    const { app } = await start();
    const el = input();
    for (const k of ['n', 'k', '/', '.', '0', '=']) {
      const ev = new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true });
      el.dispatchEvent(ev);
      expect(ev.defaultPrevented).toBe(false);
    }
    expect(app.shortcutsOpen).toBe(false);
    expect(app.prefs.zoom).toBe(1);
  });

  it('Ctrl+, still toggles Settings', async () => {
    const { app } = await start();
    await fireEvent.keyDown(window, { key: ',', ctrlKey: true });
    expect(app.settingsOpen).toBe(true);
    await fireEvent.keyDown(window, { key: ',', metaKey: true });
    expect(app.settingsOpen).toBe(false);
  });
});

describe('the shortcut sheet', () => {
  it('opens with Ctrl+/, lists every shortcut, closes with Esc and gives focus back', async () => {
    const { app } = await start();
    input().focus();
    await fireEvent.keyDown(input(), { key: '/', ctrlKey: true });
    const sheet = await screen.findByTestId('shortcut-sheet');
    expect(sheet.getAttribute('role')).toBe('dialog');
    const ids = within(sheet)
      .getAllByTestId('shortcut-row')
      .map((r) => r.dataset.shortcut);
    for (const s of SHORTCUTS) expect(ids).toContain(s.id);
    expect(ids).toEqual(expect.arrayContaining(['send', 'newline', 'mention']));
    const row = (id: string) => within(sheet).getAllByTestId('shortcut-row').find((r) => r.dataset.shortcut === id) as HTMLElement;
    expect(row('newChat').textContent).toContain('Ctrl+N');
    expect(row('newChat').textContent).toContain('Ctrl+Shift+O');
    expect(row('stop').textContent).toContain('Esc');
    expect(row('copyLast').textContent).toContain('Ctrl+Shift+C');
    expect(row('send').textContent).toContain('Enter');
    expect(sheet.contains(document.activeElement)).toBe(true);
    // Other shortcuts wait while it is open.
    await fireEvent.keyDown(window, { key: 'n', ctrlKey: true });
    expect(app.current.isDraft).toBe(true);

    await fireEvent.keyDown(document.activeElement as HTMLElement, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('shortcut-sheet')).toBeNull());
    expect(app.shortcutsOpen).toBe(false);
    expect(document.activeElement).toBe(input());
  });

  it('shows the send keys the person chose, and Ctrl+/ closes it again', async () => {
    const { app } = await start();
    app.prefs.setSendKey('mod-enter');
    await fireEvent.keyDown(window, { key: '/', ctrlKey: true });
    const sheet = await screen.findByTestId('shortcut-sheet');
    const send = within(sheet).getAllByTestId('shortcut-row').find((r) => r.dataset.shortcut === 'send');
    expect(send?.textContent).toContain('Ctrl+Enter');
    await fireEvent.keyDown(sheet, { key: '/', ctrlKey: true });
    await waitFor(() => expect(screen.queryByTestId('shortcut-sheet')).toBeNull());
  });

  it('the close button closes it', async () => {
    const { app } = await start();
    app.openShortcuts();
    await fireEvent.click(await screen.findByTestId('shortcut-sheet-close'));
    await waitFor(() => expect(screen.queryByTestId('shortcut-sheet')).toBeNull());
  });
});
