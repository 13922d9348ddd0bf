/**
 * Issue 15, "Bugs seen": each test drives the app against the fake backend as a person would.
 */
import { fireEvent, render, within, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { ERROR_KINDS, PROVIDER_KINDS, type ConversationView, type SendRequest } from '../src/lib/ipc/bindings';
import { errorAction } from '../src/lib/ipc/errors';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start(backend: Backend) {
  const app = new AppState(backend, { schedule });
  const view = render(App, { props: { app } });
  await app.init();
  return { app, view };
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

beforeEach(() => {
  localStorage.clear();
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('ResizeObserver loop notice', () => {
  it('is never shown as an error toast, while real window errors still are', async () => {
    const { app } = await start(createFakeBackend({ tickMs: 0, empty: true }));
    window.dispatchEvent(new ErrorEvent('error', { message: 'ResizeObserver loop completed with undelivered notifications.' }));
    window.dispatchEvent(new ErrorEvent('error', { message: 'ResizeObserver loop limit exceeded' }));
    expect(app.toasts).toHaveLength(0);
    expect(screen.queryByTestId('error-banner')).toBeNull();
    window.dispatchEvent(new ErrorEvent('error', { message: 'boom' }));
    await waitFor(() => expect(screen.getByTestId('error-banner').textContent).toContain('boom'));
  });

  it('follows new output in the next frame, not inside the ResizeObserver callback', async () => {
    const callbacks: ResizeObserverCallback[] = [];
    vi.stubGlobal(
      'ResizeObserver',
      class {
        constructor(cb: ResizeObserverCallback) {
          callbacks.push(cb);
        }
        observe() {}
        unobserve() {}
        disconnect() {}
      },
    );
    const frames: FrameRequestCallback[] = [];
    vi.stubGlobal('requestAnimationFrame', (cb: FrameRequestCallback) => frames.push(cb));
    vi.stubGlobal('cancelAnimationFrame', () => {});
    const { view } = await start(createFakeBackend({ tickMs: 0, empty: true }));
    const scroller = view.container.querySelector('.scroller') as HTMLElement;
    Object.defineProperty(scroller, 'scrollHeight', { configurable: true, value: 5000 });
    expect(callbacks.length).toBeGreaterThan(0);
    frames.length = 0;
    scroller.scrollTop = 0;
    for (const cb of callbacks) cb([], {} as ResizeObserver);
    // Writing layout inside the callback is what makes the browser report the loop.
    expect(scroller.scrollTop).toBe(0);
    expect(frames.length).toBeGreaterThan(0);
    for (const f of frames.splice(0)) f(0);
    expect(scroller.scrollTop).toBe(5000);
  });
});

describe('no provider', () => {
  it('does not send: the composer says why and offers to add one in Settings → Providers', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true, noProviders: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    await start(backend);
    await send('Hello?');
    expect(spy).not.toHaveBeenCalled();
    expect(screen.queryAllByTestId('message')).toHaveLength(0);
    expect(screen.queryByTestId('error-banner')).toBeNull();
    expect((screen.getByTestId('send-button') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('no-provider').textContent).toContain('No provider yet');
    await fireEvent.click(screen.getByTestId('composer-add-provider'));
    await waitFor(() => expect(screen.getByTestId('settings-section-providers')).toBeTruthy());
  });

  it('sends as usual once a provider exists', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    await start(backend);
    expect(screen.queryByTestId('no-provider')).toBeNull();
    await send('Hello?');
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(1));
  });
});

describe('errors carry the action that fixes them', () => {
  it('maps kinds to actions in one place', () => {
    expect(errorAction('auth', { hasProviders: true })).toEqual({ label: 'Open Keys', section: 'keys' });
    expect(errorAction('network', { hasProviders: true })).toEqual({ label: 'Open Providers', section: 'providers' });
    expect(errorAction('config', { hasProviders: false })).toEqual({ label: 'Add a provider', section: 'providers' });
    expect(errorAction('config', { hasProviders: true })).toBeNull();
    for (const kind of ERROR_KINDS.filter((k) => !['auth', 'network', 'config'].includes(k))) expect(errorAction(kind, { hasProviders: true })).toBeNull();
  });

  it.each([
    ['auth', 'Open Keys', 'keys'],
    ['network', 'Open Providers', 'providers'],
  ] as const)('a failed answer (%s) shows "%s" on its callout and its toast', async (kind, label, section) => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    vi.spyOn(backend, 'sendMessage').mockRejectedValue({ kind, message: 'It failed.', retryable: false });
    const { app } = await start(backend);
    await send('Hello?');
    const answer = await waitFor(() => {
      const a = screen.getAllByTestId('message').find((m) => m.dataset.role === 'assistant');
      expect(a?.dataset.status).toBe('error');
      return a as HTMLElement;
    });
    const onCallout = within(answer).getByTestId('error-action');
    expect(onCallout.textContent?.trim()).toBe(label);
    const toast = await screen.findByTestId('error-banner');
    expect(within(toast).getByTestId('error-action').textContent?.trim()).toBe(label);

    await fireEvent.click(onCallout);
    await waitFor(() => expect(screen.getByTestId(`settings-section-${section}`)).toBeTruthy());
    app.closeSettings();
    await fireEvent.click(within(await screen.findByTestId('error-banner')).getByTestId('error-action'));
    await waitFor(() => expect(screen.getByTestId(`settings-section-${section}`)).toBeTruthy());
    expect(screen.queryByTestId('error-banner')).toBeNull();
  });

  it('a toast for a config error with no provider offers "Add a provider"', async () => {
    const { app } = await start(createFakeBackend({ tickMs: 0, empty: true, noProviders: true }));
    app.toast({ kind: 'config', message: 'No provider chosen.', retryable: false });
    const toast = await screen.findByTestId('error-banner');
    expect(within(toast).getByTestId('error-action').textContent?.trim()).toBe('Add a provider');
  });
});

describe('search', () => {
  it('with no match says so, without an empty "Results" heading', async () => {
    const { view } = await start(createFakeBackend({ tickMs: 0 }));
    await waitFor(() => expect(screen.getAllByTestId('conversation-item').length).toBeGreaterThan(0));
    const search = screen.getByTestId('search-input') as HTMLInputElement;
    search.value = 'zzqx-nothing';
    await fireEvent.input(search);
    await waitFor(() => expect(screen.queryAllByTestId('conversation-item')).toHaveLength(0), { timeout: 2000 });
    expect(screen.getByTestId('no-match').textContent).toBe('No chats match “zzqx-nothing”');
    expect(view.container.querySelector('.group')).toBeNull();
  });
});

describe('dry run', () => {
  it('is for one turn: the switch is off again after sending', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    await start(backend);
    const sw = screen.getByTestId('dry-run-switch') as HTMLInputElement;
    await fireEvent.click(sw);
    expect(sw.checked).toBe(true);
    await send('What time is it?');
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(1));
    expect((spy.mock.calls[0]?.[0] as SendRequest).dryRun).toBe(true);
    await waitFor(() => expect((screen.getByTestId('dry-run-switch') as HTMLInputElement).checked).toBe(false));
  });

  it('says "Dry run" once in its notice, and a tool card says its output is example data', async () => {
    const base = { reasoning: '', provider: 'p', model: 'x', usage: { promptTokens: 1, completionTokens: 1, reasoningTokens: 0, cachedTokens: 0 }, providerResponseId: null, createdAt: 0, updatedAt: 0, error: null, parentId: null, versions: [] };
    const view: ConversationView = {
      conversation: { id: 'dry', title: 'Dry', createdAt: 0, updatedAt: Date.now(), messageCount: 2, pinned: false, archived: false },
      earlier: 0,
      disabledTools: [],
      messages: [
        { ...base, id: 'u1', role: 'user', content: 'time?', status: 'complete', finishReason: null, toolCallsMade: 0, toolCalls: [], notices: [] },
        {
          ...base,
          id: 'a1',
          role: 'assistant',
          content: 'Checking. It is noon.',
          status: 'complete',
          finishReason: 'stop',
          toolCallsMade: 1,
          notices: [{ kind: 'dryRun', message: 'Dry run: tools return their example output and do not run.' }],
          toolCalls: [
            { callId: 'c1', name: 'get_time', source: { kind: 'builtin' }, arguments: '{}', textOffset: 9, iteration: 1, index: 0, status: 'ok', result: { status: 'ok', output: '{"time":"12:00"}', durationMs: 0 } },
          ],
        },
      ],
    };
    const backend = { ...createFakeBackend({ tickMs: 0, empty: true }), listConversations: async () => [view.conversation], openConversation: async () => structuredClone(view) };
    const { app } = await start(backend);
    await app.open('dry');
    const note = await screen.findByRole('note');
    expect(note.textContent?.match(/dry run/gi)).toHaveLength(1);
    expect(note.textContent).toContain('Tools return their example output and do not run.');
    // A finished card is folded to one line; open it.
    await fireEvent.click(within(screen.getByTestId('tool-card')).getAllByRole('button')[0] as HTMLElement);
    expect(screen.getByTestId('tool-output-label').textContent).toMatch(/example output/i);
  });

  it('a tool card in a normal answer shows plain Output', async () => {
    await start(createFakeBackend({ tickMs: 0, empty: true }));
    await send('What time is it in Tokyo?');
    await waitFor(() => expect(screen.getByTestId('tool-card').dataset.status).toBe('ok'));
    await fireEvent.click(within(screen.getByTestId('tool-card')).getAllByRole('button')[0] as HTMLElement);
    expect(screen.getByTestId('tool-output-label').textContent).toBe('Output');
  });
});

describe('the provider form', () => {
  async function openProviders() {
    await fireEvent.click(screen.getByTestId('open-settings'));
    await screen.findByTestId('settings-section-providers');
  }

  async function setValue(el: HTMLElement, value: string) {
    (el as HTMLInputElement).value = value;
    await fireEvent.input(el);
    await fireEvent.change(el);
  }

  it('makes the "Fetch models" error one readable sentence', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    vi.spyOn(backend, 'listModels').mockRejectedValue({ kind: 'network', message: 'could not reach http://localhost:1234/v1: connection refused', retryable: true });
    await start(backend);
    await openProviders();
    await fireEvent.click(screen.getByTestId('provider-edit-lmstudio'));
    await fireEvent.click(screen.getByTestId('provider-fetch-models'));
    const form = screen.getByTestId('provider-form');
    await waitFor(() =>
      expect(within(form).getByRole('alert').textContent?.trim()).toBe('Could not reach http://localhost:1234/v1: connection refused. Type the model name instead.'),
    );
  });

  it('hints, without blocking, when an OpenAI-style base URL does not end in /v1', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const add = vi.spyOn(backend, 'addProvider');
    await start(backend);
    await openProviders();
    await fireEvent.click(screen.getByTestId('provider-add'));
    await setValue(screen.getByTestId('provider-name'), 'box');
    await setValue(screen.getByTestId('provider-base-url'), 'http://localhost:8080');
    expect(screen.getByTestId('provider-base-url-v1-hint').textContent).toContain('Most OpenAI-compatible servers expect the URL to end in /v1');
    await setValue(screen.getByTestId('provider-base-url'), 'http://localhost:8080/v1/');
    expect(screen.queryByTestId('provider-base-url-v1-hint')).toBeNull();
    await setValue(screen.getByTestId('provider-base-url'), 'http://localhost:8080');
    await fireEvent.click(screen.getByTestId('provider-save'));
    await waitFor(() => expect(add).toHaveBeenCalledWith({ name: 'box', kind: 'openai', baseUrl: 'http://localhost:8080', model: null, options: { generation: {} } }, false));
  });

  it('gives no /v1 hint for other kinds', async () => {
    const other = PROVIDER_KINDS.find((k) => k.id !== 'openai');
    if (!other) return;
    await start(createFakeBackend({ tickMs: 0, empty: true }));
    await openProviders();
    await fireEvent.click(screen.getByTestId('provider-add'));
    await setValue(screen.getByTestId('provider-kind'), other.id);
    await setValue(screen.getByTestId('provider-base-url'), 'http://localhost:8080');
    expect(screen.queryByTestId('provider-base-url-v1-hint')).toBeNull();
  });
});

describe('focus', () => {
  it('moves to the next conversation after deleting one, and to New chat after deleting the last', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    await start(backend);
    const items = await waitFor(() => {
      const all = screen.getAllByTestId('conversation-item');
      expect(all.length).toBeGreaterThan(1);
      return all;
    });
    const [first, second] = items as [HTMLElement, HTMLElement];
    const del = within(first).getByTestId('delete-conversation');
    del.focus();
    await fireEvent.click(del);
    await fireEvent.click(await screen.findByTestId('confirm-delete'));
    await waitFor(() => expect(screen.queryAllByTestId('conversation-item').some((i) => i.dataset.id === first.dataset.id)).toBe(false));
    await waitFor(() => expect(document.activeElement).toBe(second.querySelector('button.open')));

    // The last one in the list: focus goes to the one before it.
    const rest = screen.getAllByTestId('conversation-item');
    const last = rest[rest.length - 1] as HTMLElement;
    const before = rest[rest.length - 2] as HTMLElement;
    await fireEvent.click(within(last).getByTestId('delete-conversation'));
    await fireEvent.click(await screen.findByTestId('confirm-delete'));
    await waitFor(() => expect(document.activeElement).toBe(before.querySelector('button.open')));

    // None left: New chat.
    for (const item of screen.getAllByTestId('conversation-item')) {
      await fireEvent.click(within(item).getByTestId('delete-conversation'));
      await fireEvent.click(await screen.findByTestId('confirm-delete'));
    }
    await waitFor(() => expect(screen.queryAllByTestId('conversation-item')).toHaveLength(0));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId('new-chat')));
  });

  it('gives the approval dialog\'s first button a visible focus ring until it is left', async () => {
    await start(createFakeBackend({ tickMs: 0, empty: true }));
    await send('Please approve the time check');
    const dialog = await screen.findByTestId('approval-dialog');
    const deny = within(dialog).getByRole('button', { name: 'Deny' });
    await waitFor(() => expect(document.activeElement).toBe(deny));
    expect(deny.hasAttribute('data-focus-ring')).toBe(true);
    within(dialog).getByRole('button', { name: 'Allow once' }).focus();
    expect(deny.hasAttribute('data-focus-ring')).toBe(false);
  });
});

describe('the tools tray', () => {
  it('closes on send', async () => {
    await start(createFakeBackend({ tickMs: 0, empty: true }));
    const toggle = screen.getByTestId('tools-tray-toggle');
    await fireEvent.click(toggle);
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    expect(screen.getAllByTestId('tool-row').length).toBeGreaterThan(0);
    await send('What time is it?');
    await waitFor(() => expect(screen.getAllByTestId('message').length).toBeGreaterThan(0));
    expect(screen.getByTestId('tools-tray-toggle').getAttribute('aria-expanded')).toBe('false');
    expect(screen.queryAllByTestId('tool-row')).toHaveLength(0);
  });
});
