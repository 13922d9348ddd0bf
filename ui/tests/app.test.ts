/**
 * The whole UI against the in-memory fake backend: what a person does (type, press Enter, click)
 * and what the shell would receive.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { ConversationView, SendRequest, StoredMessage } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { scalarLength } from '../src/lib/model/offsets';
import { AppState } from '../src/lib/state/app.svelte';
import { OLDER_STORE_PAGE } from '../src/lib/state/session.svelte';
import { INITIAL_WINDOW, OLDER_PAGE } from '../src/lib/util/window';

/** Runs queued event batches on a timer instead of animation frames (jsdom paints nothing). */
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

async function type(text: string) {
  const el = input();
  el.value = text;
  el.setSelectionRange(text.length, text.length);
  await fireEvent.input(el);
}

async function send(text: string) {
  await type(text);
  await fireEvent.keyDown(input(), { key: 'Enter' });
}

function lastAssistant(): HTMLElement {
  const all = screen.getAllByTestId('message').filter((m) => m.dataset.role === 'assistant');
  const last = all[all.length - 1];
  if (!last) throw new Error('no assistant message');
  return last;
}

/** The answer as the person sees it: text runs and tool cards, in document order. */
function layout(message: HTMLElement): string[] {
  return [...message.querySelectorAll<HTMLElement>('[data-testid="message-text"], [data-testid="tool-card"]')].map((el) =>
    el.dataset.testid === 'tool-card' ? `[${el.dataset.toolName}@${el.dataset.offset}:${el.dataset.status}]` : (el.textContent ?? '').trim().slice(0, 24),
  );
}

beforeEach(() => {
  localStorage.clear();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the chat UI', () => {
  it('streams an answer with the tool card in the text, and shows the same after reopening', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const { app } = await start(backend);
    await send('What time is it in Tokyo?');

    await waitFor(() => expect(lastAssistant().dataset.status).toBe('complete'));
    const msg = lastAssistant();
    const card = within(msg).getByTestId('tool-card');
    expect(card.dataset.toolName).toBe('get_time');
    expect(card.dataset.status).toBe('ok');
    // The fake replays the golden turn: the card sits after text with an emoji skin tone and CJK.
    expect(Number(card.dataset.offset)).toBe(scalarLength('Let me check 東京 for you 👋🏽. '));
    const live = layout(msg);
    expect(live[0]).toBe('Let me check 東京 for you 👋🏽.'.slice(0, 24));
    expect(live[1]).toMatch(/^\[get_time@\d+:ok\]$/);
    expect(live[2]).toMatch(/^It is/);
    expect(msg.querySelector('.meta')?.textContent).toContain('1 tool call');

    // The new conversation is listed, and reopening it from the store shows the same answer.
    await waitFor(() => expect(screen.getAllByTestId('conversation-item')).toHaveLength(1));
    const id = app.current.conversationId as string;
    await fireEvent.click(screen.getByTestId('new-chat'));
    await waitFor(() => expect(screen.queryAllByTestId('message')).toHaveLength(0));
    await app.open(id);
    await waitFor(() => expect(screen.getAllByTestId('message')).toHaveLength(2));
    expect(layout(lastAssistant())).toEqual(live);
  });

  it('forces a tool typed as @name: autocomplete, chip, and removed from the sent text', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    await start(backend);

    await type('Check @get_');
    const list = await screen.findByRole('listbox');
    expect(within(list).getAllByRole('option')[0]?.textContent).toContain('@get_time');
    await fireEvent.keyDown(input(), { key: 'Enter' });
    expect(screen.getByTestId('forced-chip').dataset.toolName).toBe('get_time');
    expect(input().value).toBe('Check ');
    expect(spy).not.toHaveBeenCalled();

    await type('Check the time in London @weather please');
    await fireEvent.keyDown(input(), { key: 'Enter' });
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(1));
    const request = spy.mock.calls[0]?.[0] as SendRequest;
    expect(request.text).toBe('Check the time in London please');
    expect(request.forced).toEqual(['get_time', 'weather']);
    expect(request.useTools).toBe(true);
    // Forcing is for one turn only.
    await waitFor(() => expect(screen.queryByTestId('forced-chip')).toBeNull());
  });

  it('sends the tools switched off in a new chat with its first turn, and "no tools" for one turn', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    const { app } = await start(backend);

    await fireEvent.click(screen.getByTestId('tools-tray-toggle'));
    const row = screen.getAllByTestId('tool-row').find((r) => r.dataset.toolName === 'web_fetch') as HTMLElement;
    await fireEvent.click(within(row).getByTestId('tool-disable'));
    expect(within(row).getByTestId('tool-disable').getAttribute('aria-pressed')).toBe('true');
    await fireEvent.click(screen.getByTestId('no-tools-switch'));

    await send('Hello there');
    await waitFor(() => expect(spy).toHaveBeenCalledTimes(1));
    const request = spy.mock.calls[0]?.[0] as SendRequest;
    expect(request.disableForChat).toEqual(['web_fetch']);
    expect(request.useTools).toBe(false);
    expect(request.conversationId).toBeNull();

    await waitFor(() => expect(lastAssistant().dataset.status).toBe('complete'));
    expect((screen.getByTestId('no-tools-switch') as HTMLInputElement).checked).toBe(false);
    const tools = await backend.listTools(app.current.conversationId);
    expect(tools.find((t) => t.name === 'web_fetch')?.disabledForChat).toBe(true);
    await waitFor(() => expect(app.tools.find((t) => t.name === 'web_fetch')?.disabledForChat).toBe(true));
  });

  it('asks for approval in a dialog; Escape denies, and the card shows the denial', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const resolve = vi.spyOn(backend, 'resolveApproval');
    await start(backend);
    await send('Please fetch https://example.com/page');

    const dialog = await screen.findByTestId('approval-dialog');
    expect(dialog.textContent).toContain('get_time');
    expect(dialog.querySelector('pre')?.textContent).toContain('"timezone": "UTC"');
    expect(document.activeElement && dialog.contains(document.activeElement)).toBe(true);
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(resolve).toHaveBeenCalledWith(expect.stringMatching(/^call_/), 'deny');

    await waitFor(() => expect(lastAssistant().dataset.status).toBe('complete'));
    expect(screen.queryByTestId('approval-dialog')).toBeNull();
    expect(within(lastAssistant()).getByTestId('tool-card').dataset.status).toBe('denied');
  });

  it('allows a call once from the dialog', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    await start(backend);
    await send('fetch https://example.com');
    const dialog = await screen.findByTestId('approval-dialog');
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Allow once' }));
    await waitFor(() => expect(lastAssistant().dataset.status).toBe('complete'));
    expect(within(lastAssistant()).getByTestId('tool-card').dataset.status).toBe('ok');
  });

  it('stops a running turn and keeps the partial answer', async () => {
    const backend = createFakeBackend({ tickMs: 15, empty: true });
    const stop = vi.spyOn(backend, 'stopTurn');
    await start(backend);
    await send('What time is it?');

    const button = await screen.findByTestId('stop-button');
    // The next message can be typed while the answer streams.
    expect(input().disabled).toBe(false);
    await waitFor(() => expect(lastAssistant().textContent).toContain('Let me'), { timeout: 3000 });
    await fireEvent.click(button);
    await waitFor(() => expect(lastAssistant().dataset.status).toBe('cancelled'), { timeout: 3000 });
    expect(stop).toHaveBeenCalledTimes(1);
    expect(lastAssistant().textContent).toContain('Let me');
    expect(lastAssistant().textContent).toContain('Stopped');
    expect(screen.getByTestId('send-button')).toBeTruthy();
    expect(input().disabled).toBe(false);
  });

  it('shows an error in words with a Retry that calls regenerate', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const regenerate = vi.spyOn(backend, 'regenerate');
    await start(backend);
    await send('trigger an error please');

    await waitFor(() => expect(lastAssistant().dataset.status).toBe('error'));
    expect(lastAssistant().textContent).toContain('The provider had a server error');
    expect(lastAssistant().textContent).toContain('Once upon a time');
    await fireEvent.click(within(lastAssistant()).getByRole('button', { name: /Retry/ }));
    expect(regenerate).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(screen.getAllByTestId('message')).toHaveLength(2));
  });

  it('keeps the partial answer when the event channel closes without done', async () => {
    const base = createFakeBackend({ tickMs: 0, empty: true });
    const backend: Backend = {
      ...base,
      async sendMessage(_request, handlers) {
        setTimeout(() => {
          handlers.onEvent({ type: 'started', conversationId: 'c1', messageId: 'm2', userMessageId: 'm1', provider: 'p', model: 'x' });
          handlers.onEvent({ type: 'textDelta', text: 'Half an ans' });
          handlers.onClose?.();
        }, 0);
        return { conversationId: 'c1', messageId: 'm2', userMessageId: 'm1' };
      },
    };
    await start(backend);
    await send('hi');
    await waitFor(() => expect(lastAssistant().dataset.status).toBe('interrupted'));
    expect(lastAssistant().textContent).toContain('Half an ans');
    expect(screen.getByTestId('error-banner').textContent).toContain('connection to this answer was lost');
  });

  it('puts a burst larger than a frame on screen over several frames, whole and in order', async () => {
    const base = createFakeBackend({ tickMs: 0, empty: true });
    const burst = 'word '.repeat(1200); // 6,000 characters arriving at once
    const frames: number[] = [];
    const counting = (cb: () => void) =>
      setTimeout(() => {
        cb();
        frames.push(lastAssistant().dataset.status === 'streaming' ? 1 : 0);
      }, 0);
    const backend: Backend = {
      ...base,
      async sendMessage(_request, handlers) {
        setTimeout(() => {
          handlers.onEvent({ type: 'started', conversationId: 'c1', messageId: 'm2', userMessageId: 'm1', provider: 'p', model: 'x' });
          handlers.onEvent({ type: 'textDelta', text: burst });
          handlers.onEvent({ type: 'toolCall', id: 't1', name: 'get_time', source: { kind: 'builtin' }, arguments: '{}', textOffset: burst.length, iteration: 1, index: 0 });
          handlers.onEvent({ type: 'toolResult', id: 't1', status: 'ok', output: '12:00', durationMs: 1 });
          handlers.onEvent({ type: 'textDelta', text: 'The end.' });
          handlers.onClose?.();
        }, 0);
        return { conversationId: 'c1', messageId: 'm2', userMessageId: 'm1' };
      },
    };
    const app = new AppState(backend, { schedule: counting });
    render(App, { props: { app } });
    await app.init();
    await send('hi');
    await waitFor(() => expect(lastAssistant().dataset.status).toBe('interrupted'));
    // 6,008 characters at 2,000 a frame: four frames of text, never the channel's end before them.
    expect(frames.filter((f) => f === 1).length).toBeGreaterThanOrEqual(3);
    const text = lastAssistant().textContent ?? '';
    expect(text.match(/word/g)).toHaveLength(1200);
    expect(text).toContain('The end.');
    expect(text.indexOf('get_time')).toBeGreaterThan(text.lastIndexOf('word'));
    expect(text.indexOf('The end.')).toBeGreaterThan(text.indexOf('get_time'));
  });

  it('shows IPC failures as a banner with the error message', async () => {
    const base = createFakeBackend({ tickMs: 0, empty: true });
    const backend: Backend = {
      ...base,
      listConversations: () => Promise.reject({ kind: 'storage', message: 'The database is locked by another process.', retryable: true }),
      sendMessage: () => Promise.reject({ kind: 'config', message: "No model chosen for provider 'openai'.", retryable: false }),
    };
    await start(backend);
    expect((await screen.findByTestId('error-banner')).textContent).toContain('The database is locked');
    await send('hello');
    await waitFor(() => expect(lastAssistant().dataset.status).toBe('error'));
    expect(lastAssistant().textContent).toContain("No model chosen for provider 'openai'.");
  });

  it('renames inline and deletes after confirmation', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const rename = vi.spyOn(backend, 'renameConversation');
    const remove = vi.spyOn(backend, 'deleteConversation');
    await start(backend);
    const items = await screen.findAllByTestId('conversation-item');
    const first = items[0] as HTMLElement;

    await fireEvent.click(within(first).getByTestId('rename-conversation'));
    const field = within(first).getByTestId('rename-input') as HTMLInputElement;
    field.value = 'Renamed chat';
    await fireEvent.input(field);
    await fireEvent.keyDown(field, { key: 'Enter' });
    expect(rename).toHaveBeenCalledWith(first.dataset.id, 'Renamed chat');
    await waitFor(() => expect(screen.getAllByTestId('conversation-item')[0]?.textContent).toContain('Renamed chat'));

    const count = screen.getAllByTestId('conversation-item').length;
    await fireEvent.click(within(screen.getAllByTestId('conversation-item')[0] as HTMLElement).getByTestId('delete-conversation'));
    const confirm = await screen.findByTestId('confirm-dialog');
    await fireEvent.click(within(confirm).getByTestId('confirm-delete'));
    expect(remove).toHaveBeenCalledWith(first.dataset.id);
    await waitFor(() => expect(screen.getAllByTestId('conversation-item')).toHaveLength(count - 1));
  });

  it('searches (debounced) with search_conversations', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const backend = createFakeBackend({ tickMs: 0 });
    const search = vi.spyOn(backend, 'searchConversations');
    await start(backend);
    const box = screen.getByTestId('search-input') as HTMLInputElement;
    for (const q of ['q', 'qu', 'quad']) {
      box.value = q;
      await fireEvent.input(box);
    }
    expect(search).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(300);
    expect(search).toHaveBeenCalledTimes(1);
    expect(search).toHaveBeenCalledWith('quad');
    await waitFor(() => expect(screen.getAllByTestId('conversation-item')).toHaveLength(1));
  });

  it('opens links through the opener and never navigates the webview', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const open = vi.spyOn(backend, 'openUrl').mockResolvedValue();
    await start(backend);
    const host = document.createElement('div');
    host.className = 'markdown';
    host.innerHTML = '<a href="https://example.com/x">ok</a><a>no href</a>';
    document.body.append(host);
    const ok = new MouseEvent('click', { bubbles: true, cancelable: true });
    host.querySelector('a')?.dispatchEvent(ok);
    expect(ok.defaultPrevented).toBe(true);
    expect(open).toHaveBeenCalledWith('https://example.com/x');
    const bad = new MouseEvent('click', { bubbles: true, cancelable: true });
    host.querySelectorAll('a')[1]?.dispatchEvent(bad);
    expect(bad.defaultPrevented).toBe(true);
    expect(open).toHaveBeenCalledTimes(1);
    host.remove();
  });

  it('remembers the model choice and offers the profile model when a provider cannot list models', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const spy = vi.spyOn(backend, 'sendMessage');
    const { view } = await start(backend);
    const picker = screen.getByTestId('model-picker') as HTMLSelectElement;
    const values = [...picker.options].map((o) => o.value.replace('\u0000', '/'));
    expect(values).toContain('lmstudio/qwen2.5-7b-instruct');
    expect(values).toContain('ollama/qwen2.5-coder:7b');
    picker.value = ['ollama', 'qwen2.5-coder:7b'].join('\u0000');
    await fireEvent.change(picker);
    await send('hi');
    await waitFor(() => expect(spy).toHaveBeenCalled());
    expect(spy.mock.calls[0]?.[0]).toMatchObject({ provider: 'ollama', model: 'qwen2.5-coder:7b' });
    view.unmount();

    // A new window starts with the last choice.
    await start(createFakeBackend({ tickMs: 0, empty: true }));
    expect((screen.getByTestId('model-picker') as HTMLSelectElement).value).toBe(['ollama', 'qwen2.5-coder:7b'].join('\u0000'));
  });
});

describe('a long conversation', () => {
  /** A stored conversation of `turns` question/answer pairs, each answer with a tool card. */
  function longConversation(turns: number): ConversationView {
    const messages: StoredMessage[] = [];
    const base = {
      reasoning: '', status: 'complete' as const, provider: 'p', model: 'x', finishReason: 'stop' as const,
      usage: { promptTokens: 1, completionTokens: 1, reasoningTokens: 0, cachedTokens: 0 }, error: null, notices: [],
      providerResponseId: null, createdAt: 0, updatedAt: 0, parentId: null, versions: [],
    };
    for (let i = 1; i <= turns; i++) {
      messages.push({ ...base, id: `u${i}`, role: 'user', content: `Question ${i}`, toolCallsMade: 0, toolCalls: [] });
      messages.push({
        ...base,
        id: `a${i}`,
        role: 'assistant',
        content: `Checking ${i}.\n\nAnswer **${i}**.`,
        toolCallsMade: 1,
        toolCalls: [
          {
            callId: `call_${i}`, name: 'get_time', source: { kind: 'builtin' }, arguments: '{}', textOffset: `Checking ${i}.`.length,
            iteration: 1, index: 0, status: 'ok', result: { status: 'ok', output: '{}', durationMs: 1 },
          },
        ],
      });
    }
    const conversation = { id: 'long', title: 'Long', createdAt: 0, updatedAt: Date.now(), messageCount: messages.length, pinned: false, archived: false };
    return { conversation, messages, earlier: 0, disabledTools: [] };
  }

  /** Serves `view` as the shell does: its last `page` messages on open, older pages on request. */
  function paged(view: ConversationView, page: number, log: string[]): Pick<Backend, 'openConversation' | 'olderMessages'> {
    const all = view.messages;
    return {
      openConversation: async () => structuredClone({ ...view, messages: all.slice(-page), earlier: all.length - page }),
      async olderMessages(_id, before, limit) {
        log.push(before);
        const end = all.findIndex((m) => m.id === before);
        const from = Math.max(0, end - limit);
        return structuredClone({ messages: all.slice(from, end), earlier: from });
      },
    };
  }

  async function showAllOlder(): Promise<void> {
    while (screen.queryByTestId('show-older')) {
      const n = screen.getAllByTestId('message').length;
      await fireEvent.click(screen.getByTestId('show-older'));
      await waitFor(() => expect(screen.getAllByTestId('message').length).toBeGreaterThan(n));
    }
  }

  function rendered(): string[] {
    return screen.getAllByTestId('message').map((m) => (m.textContent ?? '').trim().split(/\s+/).slice(0, 2).join(' '));
  }

  it('renders only its last messages, adds older ones a page at a time, and keeps streaming into the window', async () => {
    const view = longConversation(60);
    const base = createFakeBackend({ tickMs: 0, empty: true });
    const reads: string[] = [];
    const backend: Backend = {
      ...base,
      listConversations: async () => [view.conversation],
      // Opening returns the last 60 of the 120 messages; the rest come from the store on the way up.
      ...paged(view, 60, reads),
      async sendMessage(_request, handlers) {
        setTimeout(() => {
          handlers.onEvent({ type: 'started', conversationId: 'long', messageId: 'a61', userMessageId: 'u61', provider: 'p', model: 'x' });
          handlers.onEvent({ type: 'textDelta', text: 'The newest answer' });
          handlers.onEvent({ type: 'done', finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1, reasoningTokens: 0, cachedTokens: 0 }, toolCallsMade: 0 });
        }, 0);
        return { conversationId: 'long', messageId: 'a61', userMessageId: 'u61' };
      },
    };
    const { app } = await start(backend);
    await app.open('long');

    const list = await screen.findByTestId('message-list');
    expect(list.dataset.total).toBe('120');
    expect(screen.getAllByTestId('message')).toHaveLength(INITIAL_WINDOW);
    expect(rendered().at(-1)).toBe('Checking 60.');
    expect(screen.getAllByTestId('tool-card')).toHaveLength(INITIAL_WINDOW / 2);
    expect(lastAssistant().querySelector('strong')?.textContent).toBe('60');

    // Older messages: a page more each time, oldest first, until the first message.
    await fireEvent.click(screen.getByTestId('show-older'));
    expect(screen.getAllByTestId('message')).toHaveLength(INITIAL_WINDOW + OLDER_PAGE);
    expect(rendered()[0]).toBe(`Question ${60 - (INITIAL_WINDOW + OLDER_PAGE) / 2 + 1}`);
    expect(list.dataset.shown).toBe(String(INITIAL_WINDOW + OLDER_PAGE));

    // A new turn joins the window at the end; nothing at the top shifts out.
    await send('One more');
    await waitFor(() => expect(lastAssistant().dataset.status).toBe('complete'));
    expect(lastAssistant().textContent).toContain('The newest answer');
    expect(screen.getAllByTestId('message')).toHaveLength(INITIAL_WINDOW + OLDER_PAGE + 2);
    expect(rendered()[0]).toBe(`Question ${60 - (INITIAL_WINDOW + OLDER_PAGE) / 2 + 1}`);

    expect(reads).toEqual([]);
    await showAllOlder();
    expect(reads[0]).toBe('u31');
    expect(reads.length).toBe(Math.ceil(60 / OLDER_STORE_PAGE));
    expect(screen.getAllByTestId('message')).toHaveLength(122);
    expect(rendered()[0]).toBe('Question 1');
    expect(screen.getAllByTestId('tool-card')).toHaveLength(60);

    // Another conversation and back: it opens at its end again, with only its last messages.
    await fireEvent.click(screen.getByTestId('new-chat'));
    await waitFor(() => expect(screen.queryAllByTestId('message')).toHaveLength(0));
    await app.open('long');
    await waitFor(() => expect(screen.getAllByTestId('message')).toHaveLength(INITIAL_WINDOW));
    expect(rendered().at(-1)).toBe('Checking 60.');
  }, 20_000);

  it('says so when older messages cannot be read, keeps what it shows and lets the person try again', async () => {
    const view = longConversation(30);
    const base = createFakeBackend({ tickMs: 0, empty: true });
    const reads: string[] = [];
    const store = paged(view, 10, reads);
    let fail = true;
    const backend: Backend = {
      ...base,
      listConversations: async () => [view.conversation],
      openConversation: store.openConversation,
      async olderMessages(id, before, limit) {
        if (fail) {
          reads.push(before);
          throw { kind: 'storage', message: 'The database is locked by another program.', retryable: true };
        }
        return store.olderMessages(id, before, limit);
      },
    };
    const { app } = await start(backend);
    await app.open('long');
    await screen.findByTestId('message-list');
    expect(screen.getAllByTestId('message')).toHaveLength(10);

    await fireEvent.click(screen.getByTestId('show-older'));
    expect(await screen.findByText(/database is locked/)).toBeTruthy();
    await new Promise((r) => setTimeout(r, 50));
    expect(reads).toEqual(['u26']);
    expect(screen.getAllByTestId('message')).toHaveLength(10);
    expect(screen.getByTestId('show-older').textContent).toContain('(50)');

    fail = false;
    await showAllOlder();
    expect(screen.getAllByTestId('message')).toHaveLength(60);
    expect(rendered()[0]).toBe('Question 1');
  }, 20_000);
});
