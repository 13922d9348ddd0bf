/**
 * Typing while an answer streams (the queued message) and the "Send with" key.
 */
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { SendRequest } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';

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

async function type(text: string) {
  const el = input();
  el.value = text;
  el.setSelectionRange(text.length, text.length);
  await fireEvent.input(el);
}

async function send(text: string, init: KeyboardEventInit = {}) {
  await type(text);
  await fireEvent.keyDown(input(), { key: 'Enter', ...init });
}

function users(): string[] {
  return screen
    .queryAllByTestId('message')
    .filter((m) => m.dataset.role === 'user')
    .map((m) => m.textContent?.trim() ?? '');
}

function lastAssistant(): HTMLElement | undefined {
  return screen.queryAllByTestId('message').filter((m) => m.dataset.role === 'assistant').at(-1);
}

function sentTexts(spy: { mock: { calls: unknown[][] } }): string[] {
  return spy.mock.calls.map((c) => (c[0] as SendRequest).text);
}

beforeEach(() => {
  localStorage.clear();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('typing while an answer streams', () => {
  it('keeps the composer editable, queues the message and sends it when the answer ends', async () => {
    const backend = createFakeBackend({ tickMs: 10, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    const { app } = await start(backend);
    await send('What time is it?');
    await screen.findByTestId('stop-button');
    expect(input().disabled).toBe(false);
    expect(screen.getByTestId('composer-hint').textContent).toContain('Esc to stop');

    await type('And in Paris?');
    expect(screen.getByTestId('queue-button').getAttribute('title')).toBe('Send when the answer finishes (Enter)');
    await fireEvent.keyDown(input(), { key: 'Enter' });
    expect(input().value).toBe('');
    const strip = screen.getByTestId('queued-message');
    expect(strip.textContent).toContain('Will send when the answer finishes');
    expect(strip.textContent).toContain('And in Paris?');
    expect(spy).toHaveBeenCalledTimes(1);

    // Ends normally: the queued message goes out by itself, in the same conversation.
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(2), { timeout: 5000 });
    expect(sentTexts(spy)).toEqual(['What time is it?', 'And in Paris?']);
    expect((spy.mock.calls[1]?.[0] as SendRequest).conversationId).toBe(app.current.conversationId);
    expect(screen.queryByTestId('queued-message')).toBeNull();
    await waitFor(() => expect(app.current.running).toBe(false), { timeout: 5000 });
    expect(users()).toEqual(['What time is it?', 'And in Paris?']);
  });

  it('a second message joins the queued one; Cancel gives the text back to the composer', async () => {
    const backend = createFakeBackend({ tickMs: 10, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    const { app } = await start(backend);
    await send('What time is it?');
    await screen.findByTestId('stop-button');
    await send('First');
    await send('Second');
    expect(app.currentQueued?.text).toBe('First\n\nSecond');
    expect(screen.queryByTestId('queued-send-now')).toBeNull();
    await fireEvent.click(screen.getByTestId('queued-cancel'));
    expect(screen.queryByTestId('queued-message')).toBeNull();
    expect(input().value).toBe('First\n\nSecond');
    await waitFor(() => expect(app.current.running).toBe(false), { timeout: 5000 });
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('after Stop, the queued message is sent', async () => {
    const backend = createFakeBackend({ tickMs: 15, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    await start(backend);
    await send('What time is it?');
    await waitFor(() => expect(lastAssistant()?.textContent).toContain('Let me'), { timeout: 3000 });
    await send('Never mind, tell me a joke');
    await fireEvent.click(screen.getByTestId('stop-button'));
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(2), { timeout: 5000 });
    expect(sentTexts(spy)[1]).toBe('Never mind, tell me a joke');
  });

  it('after an error, the message stays queued, says why, and can be sent or cancelled', async () => {
    const backend = createFakeBackend({ tickMs: 10, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    const { app } = await start(backend);
    await send('trigger an error please');
    await screen.findByTestId('stop-button');
    await send('Try once more');
    await waitFor(() => expect(lastAssistant()?.dataset.status).toBe('error'), { timeout: 5000 });
    await waitFor(() => expect(screen.getByTestId('queued-status').textContent).toContain('failed'));
    expect(spy).toHaveBeenCalledTimes(1);
    expect(app.current.running).toBe(false);

    await fireEvent.click(screen.getByTestId('queued-send-now'));
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(2));
    expect(sentTexts(spy)[1]).toBe('Try once more');
    expect(screen.queryByTestId('queued-message')).toBeNull();
  });

  it('a failed start (no `started`) holds the queued message too', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    let reject: (e: unknown) => void = () => {};
    const spy = vi.spyOn(backend, 'sendMessage').mockImplementationOnce(() => new Promise((_, r) => (reject = r)));
    const { app } = await start(backend);
    await send('Hello?');
    await waitFor(() => expect(app.current.running).toBe(true));
    await send('Follow-up');
    reject({ kind: 'network', message: 'Offline.', retryable: true });
    await waitFor(() => expect(app.currentQueued?.held).toBeTruthy());
    expect(spy).toHaveBeenCalledTimes(1);
    expect(app.cancelQueued()?.raw).toBe('Follow-up');
  });

  it('keeps the queue with its conversation when the person switches chats', async () => {
    const backend = createFakeBackend({ tickMs: 10, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    const { app } = await start(backend);
    await send('What time is it?');
    await screen.findByTestId('stop-button');
    await send('Queued here');
    await waitFor(() => expect(app.current.conversationId).not.toBeNull());
    const id = app.current.conversationId;
    app.newChat();
    await waitFor(() => expect(screen.queryByTestId('queued-message')).toBeNull());
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(2), { timeout: 5000 });
    expect((spy.mock.calls[1]?.[0] as SendRequest).conversationId).toBe(id);
    expect(app.current.isDraft).toBe(true);
  });
});

describe('the send key', () => {
  it('Send with Enter: Enter sends, Shift+Enter does not; the hint says so', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    await start(backend);
    expect(screen.getByTestId('composer-hint').textContent?.trim()).toBe('Enter to send · Shift+Enter for a new line');
    expect(screen.getByTestId('send-button').getAttribute('title')).toBe('Send message (Enter)');
    await send('one', { shiftKey: true });
    expect(spy).not.toHaveBeenCalled();
    await fireEvent.keyDown(input(), { key: 'Enter' });
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(1));
  });

  it('Send with Ctrl+Enter: Enter is a new line, Ctrl+Enter or Cmd+Enter sends; the hint says so', async () => {
    localStorage.setItem('switchboard.appearance', JSON.stringify({ sendKey: 'mod-enter' }));
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    const { app } = await start(backend);
    expect(screen.getByTestId('composer-hint').textContent?.trim()).toBe('Ctrl+Enter to send · Enter for a new line');
    expect(screen.getByTestId('send-button').getAttribute('title')).toBe('Send message (Ctrl+Enter)');
    await type('line one');
    const plain = new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true });
    input().dispatchEvent(plain);
    // Not prevented: the browser inserts the new line.
    expect(plain.defaultPrevented).toBe(false);
    expect(spy).not.toHaveBeenCalled();
    await fireEvent.keyDown(input(), { key: 'Enter', ctrlKey: true });
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(1));
    await waitFor(() => expect(app.current.running).toBe(false));
    await send('two', { metaKey: true });
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(2));

    // Switching back in Settings → Appearance changes the composer at once.
    app.openSettings('appearance');
    await fireEvent.click(await screen.findByTestId('send-key-enter'));
    expect(app.prefs.sendKey).toBe('enter');
    app.closeSettings();
    await waitFor(() => expect(screen.getByTestId('composer-hint').textContent?.trim()).toBe('Enter to send · Shift+Enter for a new line'));
  });
});
