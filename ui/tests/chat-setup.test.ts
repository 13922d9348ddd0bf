/**
 * A chat keeps its setup in the app: the toolsets switched on in the tray, its parameters and the
 * model it used come back when it is reopened (by a new window as after a restart), are sent with
 * its next message, and changing them writes through to the chat. The chat's menu lists what was
 * allowed in this chat only, with Revoke.
 */
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import ChatDialogs from '../src/lib/components/ChatDialogs.svelte';
import ChatMenu from '../src/lib/components/ChatMenu.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { ChatGrant } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';
import { ChatParamsStore, chatParams, closeChatDialog } from '../src/lib/state/chatParams.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

beforeEach(() => {
  localStorage.clear();
  closeChatDialog();
});

async function send(text: string) {
  const el = screen.getByTestId('composer-input') as HTMLTextAreaElement;
  el.value = text;
  await fireEvent.input(el);
  await fireEvent.keyDown(el, { key: 'Enter' });
}

async function window_(backend: Backend): Promise<AppState> {
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  return app;
}

async function toolset(name: string): Promise<HTMLElement> {
  if (!screen.queryByTestId('toolsets')) await fireEvent.click(screen.getByTestId('tools-tray-toggle'));
  return waitFor(() => screen.getAllByTestId('toolset-toggle').find((t) => t.dataset.toolset === name)!);
}

async function setValue(el: HTMLElement, value: string) {
  (el as HTMLInputElement).value = value;
  await fireEvent.input(el);
}

describe('a chat keeps its setup', () => {
  it('restores the tray, the parameters and the model when reopened after a restart, and sends them', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const sent = vi.spyOn(backend, 'sendMessage');
    let app = await window_(backend);
    await fireEvent.click(await toolset('research'));
    const other = app.providers.find((p) => !p.isDefault)!;
    app.choose({ provider: other.name, model: other.model ?? null });
    await send('Look it up');
    await waitFor(() => expect(app.current.running).toBe(false));
    const id = app.current.conversationId!;
    expect(sent.mock.calls[0]?.[0]).toMatchObject({ toolsets: ['research'], provider: other.name });

    // The chat's parameters, from its menu.
    await fireEvent.click(screen.getByTestId('chat-menu'));
    await fireEvent.click(await screen.findByTestId('chat-menu-params'));
    const dialog = await screen.findByTestId('chat-params-dialog');
    await setValue(within(dialog).getByLabelText('Temperature'), '0.4');
    await fireEvent.click(within(dialog).getByTestId('chat-params-save'));
    await waitFor(() => expect(screen.queryByTestId('chat-params-dialog')).toBeNull());
    expect((await backend.openConversation(id)).setup).toMatchObject({ toolsets: ['research'], generation: { temperature: 0.4 }, provider: other.name });

    // A restart: a new window, nothing of the old one kept but the backend's store.
    cleanup();
    chatParams.forget(id);
    localStorage.clear();
    app = await window_(backend);
    const fresh = app.providers.find((p) => p.isDefault)!;
    app.choose({ provider: fresh.name, model: fresh.model ?? null });
    expect((await toolset('research')).getAttribute('aria-pressed')).toBe('false');
    await app.open(id);
    await waitFor(() => expect(app.current.setupLoaded).toBe(true));
    expect((await toolset('research')).getAttribute('aria-pressed')).toBe('true');
    expect(app.choice).toEqual({ provider: other.name, model: other.model ?? null });
    expect((screen.getByTestId('model-picker') as HTMLSelectElement).value).toBe(`${other.name}\u0000${other.model ?? ''}`);
    await fireEvent.click(screen.getByTestId('chat-menu'));
    await fireEvent.click(await screen.findByTestId('chat-menu-params'));
    const again = await screen.findByTestId('chat-params-dialog');
    expect((within(again).getByLabelText('Temperature') as HTMLInputElement).value).toBe('0.4');
    await fireEvent.keyDown(again, { key: 'Escape' });

    await send('And more?');
    await waitFor(() => expect(sent).toHaveBeenCalledTimes(2));
    expect(sent.mock.calls[1]?.[0]).toMatchObject({ conversationId: id, toolsets: ['research'], generation: { temperature: 0.4 }, provider: other.name });
    await waitFor(() => expect(app.current.running).toBe(false));

    // A switch in the tray writes through.
    await fireEvent.click(await toolset('research'));
    await waitFor(async () => expect((await backend.openConversation(id)).setup?.toolsets).toEqual([]));
  });

  it('a branch into a new chat keeps the parameters: the store copies the setup, opening restores it', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const app = await window_(backend);
    await send('Look it up');
    await waitFor(() => expect(app.current.running).toBe(false));
    const from = app.current.conversationId!;
    await fireEvent.click(screen.getByTestId('chat-menu'));
    await fireEvent.click(await screen.findByTestId('chat-menu-params'));
    const dialog = await screen.findByTestId('chat-params-dialog');
    await setValue(within(dialog).getByLabelText('Temperature'), '0.4');
    await fireEvent.click(within(dialog).getByTestId('chat-params-save'));
    await waitFor(() => expect(screen.queryByTestId('chat-params-dialog')).toBeNull());
    const setChatSetup = vi.spyOn(backend, 'setChatSetup');

    const id = await app.branchFrom(app.current, app.current.messages[1]!.key);
    expect(id).not.toBeNull();
    expect(id).not.toBe(from);
    await waitFor(() => expect(app.current.conversationId).toBe(id));
    expect(setChatSetup).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByTestId('chat-menu'));
    await fireEvent.click(await screen.findByTestId('chat-menu-params'));
    const branched = await screen.findByTestId('chat-params-dialog');
    expect((within(branched).getByLabelText('Temperature') as HTMLInputElement).value).toBe('0.4');
  });

  it('gives the toolset back when the chat could not keep the switch, and says why', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const app = await window_(backend);
    await send('hello');
    await waitFor(() => expect(app.current.running).toBe(false));
    const toast = vi.spyOn(app, 'toast');
    backend.setChatSetup = () => Promise.reject({ kind: 'storage', message: 'The database is locked.', retryable: true });
    const toggle = await toolset('research');
    await fireEvent.click(toggle);
    await waitFor(() => expect(toast).toHaveBeenCalledWith(expect.objectContaining({ message: 'The database is locked.' }), 'Could not keep the toolsets for this chat'));
    expect(toggle.getAttribute('aria-pressed')).toBe('false');
  });
});

describe('grants made in a chat', () => {
  it('are listed in its menu and revoked one by one', async () => {
    const base = createFakeBackend({ tickMs: 0 });
    let grants: ChatGrant[] = [
      { kind: 'tool', name: 'get_time' },
      { kind: 'host', name: 'example.net' },
    ];
    const revoke = vi.fn(async (_id: string, g: ChatGrant) => {
      grants = grants.filter((x) => x.name !== g.name);
      return grants;
    });
    const backend: Backend = { ...base, chatGrants: async () => grants, revokeChatGrant: revoke };
    const app = new AppState(backend, { schedule });
    await app.refreshConversations();
    const id = app.conversations[0]?.id as string;
    render(ChatMenu, { props: { app, conversationId: id, store: new ChatParamsStore() } });
    render(ChatDialogs, { props: { api: backend } });

    await fireEvent.click(screen.getByTestId('chat-menu'));
    const list = await screen.findByTestId('chat-grants');
    expect(within(list).getByText('Allowed in this chat')).toBeTruthy();
    expect(within(list).getAllByTestId('chat-grant').map((g) => [g.dataset.kind, g.dataset.name])).toEqual([
      ['tool', 'get_time'],
      ['host', 'example.net'],
    ]);
    const [first] = within(list).getAllByTestId('chat-grant-revoke');
    expect(first?.getAttribute('aria-label')).toBe('Revoke get_time: ask before it runs');
    first!.focus();
    await fireEvent.click(first!);
    expect(revoke).toHaveBeenCalledWith(id, { kind: 'tool', name: 'get_time' });
    await waitFor(() => expect(within(screen.getByTestId('chat-grants')).getAllByTestId('chat-grant').map((g) => g.dataset.name)).toEqual(['example.net']));
    expect(screen.getByTestId('chat-grant-revoked').textContent).toBe('get_time asks again before it runs.');
    // The menu stays open, focus on what is left.
    await waitFor(() => expect(document.activeElement?.getAttribute('data-testid')).toBe('chat-grant-revoke'));
    await fireEvent.click(within(screen.getByTestId('chat-grants')).getByTestId('chat-grant-revoke'));
    await waitFor(() => expect(screen.queryByTestId('chat-grants')).toBeNull());
    expect(screen.getByTestId('chat-grant-revoked').textContent).toBe('Sending to example.net asks again.');
  });

  it('are not listed when there are none, and the fake keeps "for this chat" like the service', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const [c] = await backend.listConversations();
    expect(await backend.chatGrants(c!.id)).toEqual([]);
    await expect(backend.revokeChatGrant(c!.id, { kind: 'tool', name: 'ghost-tool' })).rejects.toMatchObject({ kind: 'notFound', message: "The tool 'ghost-tool' is not allowed in this chat; there is nothing to revoke." });
  });
});
