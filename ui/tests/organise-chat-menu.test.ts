/**
 * The chat's "⋯" menu (pin, archive, export with "Open folder", chat parameters), the per-chat
 * parameters the send path reads (`generationFor`), and generated titles (`maybeGenerateTitle`).
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import ChatMenu from '../src/lib/components/ChatMenu.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { AppState } from '../src/lib/state/app.svelte';
import ChatDialogs from '../src/lib/components/ChatDialogs.svelte';
import { CHAT_PARAMS_KEY, chatDialog, ChatParamsStore, closeChatDialog, generationFor } from '../src/lib/state/chatParams.svelte';
import { maybeGenerateTitle } from '../src/lib/state/titles';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function setup(patch: Partial<Backend> = {}) {
  const backend: Backend = { ...createFakeBackend({ tickMs: 0 }), ...patch };
  const app = new AppState(backend, { schedule });
  await app.refreshConversations();
  const store = new ChatParamsStore(backend);
  const id = app.conversations[0]?.id as string;
  const other = app.conversations[1]?.id as string;
  const view = render(ChatMenu, { props: { app, conversationId: id, store } });
  render(ChatDialogs, { props: { api: backend } });
  return { app, backend, store, id, other, view };
}

async function openMenu(): Promise<HTMLElement> {
  await fireEvent.click(screen.getByTestId('chat-menu'));
  return screen.getByTestId('chat-menu-list');
}

async function setValue(el: HTMLInputElement, value: string) {
  el.value = value;
  await fireEvent.input(el);
}

beforeEach(() => {
  localStorage.clear();
  closeChatDialog();
});

describe('the chat menu', () => {
  it('is a keyboard menu: arrows move, Escape closes and gives focus back', async () => {
    await setup();
    const trigger = screen.getByTestId('chat-menu');
    expect(trigger.getAttribute('aria-haspopup')).toBe('menu');
    expect(trigger.getAttribute('aria-label')).toBe('Chat actions');
    await fireEvent.keyDown(trigger, { key: 'ArrowDown' });
    const menu = await screen.findByRole('menu');
    expect(trigger.getAttribute('aria-expanded')).toBe('true');
    const items = within(menu).getAllByRole('menuitem');
    expect(items.map((i) => i.textContent?.trim())).toEqual(['Pin', 'Archive', 'Export as Markdown', 'Export as JSON', 'Instructions…', 'Chat parameters…']);
    await waitFor(() => expect(document.activeElement).toBe(items[0]));
    await fireEvent.keyDown(menu, { key: 'ArrowUp' });
    expect(document.activeElement).toBe(items[5]);
    await fireEvent.keyDown(menu, { key: 'Home' });
    expect(document.activeElement).toBe(items[0]);
    await fireEvent.keyDown(menu, { key: 'ArrowDown' });
    expect(document.activeElement).toBe(items[1]);
    await fireEvent.keyDown(menu, { key: 'Escape' });
    expect(screen.queryByRole('menu')).toBeNull();
    expect(document.activeElement).toBe(trigger);
  });

  it('pins and archives the chat (archiving unpins), and the menu follows', async () => {
    const { app, backend, id } = await setup();
    const pin = vi.spyOn(backend, 'setConversationPinned');
    const archive = vi.spyOn(backend, 'setConversationArchived');
    await fireEvent.click(within(await openMenu()).getByTestId('chat-menu-pin'));
    expect(pin).toHaveBeenCalledWith(id, true);
    await waitFor(() => expect(app.conversations.find((c) => c.id === id)?.pinned).toBe(true));
    expect(within(await openMenu()).getByTestId('chat-menu-pin').textContent?.trim()).toBe('Unpin');

    await fireEvent.click(screen.getByTestId('chat-menu-archive'));
    expect(archive).toHaveBeenCalledWith(id, true);
    await waitFor(() => expect(app.conversations.find((c) => c.id === id)).toMatchObject({ archived: true, pinned: false }));
    const menu = await openMenu();
    expect(within(menu).queryByTestId('chat-menu-pin')).toBeNull();
    expect(within(menu).getByTestId('chat-menu-archive').textContent?.trim()).toBe('Unarchive');
  });

  it('exports as Markdown or JSON and shows the path with "Open folder"', async () => {
    const { backend, id } = await setup();
    const exportOne = vi.spyOn(backend, 'exportConversation');
    const openFolder = vi.spyOn(backend, 'openExportsFolder');
    await fireEvent.click(within(await openMenu()).getByTestId('chat-menu-export-markdown'));
    expect(exportOne).toHaveBeenCalledWith(id, 'markdown');
    const notice = await screen.findByTestId('export-notice');
    expect(notice.getAttribute('role')).toBe('status');
    expect(within(notice).getByTestId('chat-export-path').textContent).toMatch(/^\/home\/you\/\.local\/share\/switchboard\/exports\/[a-z0-9-]+\.md$/);
    await fireEvent.click(within(notice).getByRole('button', { name: 'Open folder' }));
    expect(openFolder).toHaveBeenCalledTimes(1);

    await fireEvent.click(within(await openMenu()).getByTestId('chat-menu-export-json'));
    expect(exportOne).toHaveBeenLastCalledWith(id, 'json');
    await waitFor(() => expect(screen.getByTestId('chat-export-path').textContent).toMatch(/\.json$/));
    await fireEvent.click(within(screen.getByTestId('export-notice')).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByTestId('export-notice')).toBeNull();
  });

  it('shows why "Open folder" failed, and an export failure as a toast', async () => {
    const fail = { kind: 'io', message: 'No file manager was found.', retryable: false };
    const { app } = await setup({ openExportsFolder: () => Promise.reject(fail) });
    const toast = vi.spyOn(app, 'toast');
    await fireEvent.click(within(await openMenu()).getByTestId('chat-menu-export-markdown'));
    await fireEvent.click(await screen.findByTestId('chat-export-open-folder'));
    expect((await within(screen.getByTestId('export-notice')).findByRole('alert')).textContent).toBe('No file manager was found.');

    app.api.exportConversation = () => Promise.reject({ kind: 'io', message: 'Disk full.', retryable: false });
    await fireEvent.click(within(await openMenu()).getByTestId('chat-menu-export-json'));
    await waitFor(() => expect(toast).toHaveBeenCalledWith(expect.objectContaining({ message: 'Disk full.' }), 'Could not export the chat'));
  });

  it('saves this chat’s parameters (validated) for this chat only, and the send path reads them', async () => {
    const { store, id, other, backend } = await setup();
    await fireEvent.click(within(await openMenu()).getByTestId('chat-menu-params'));
    const dialog = await screen.findByTestId('chat-params-dialog');
    expect(dialog.getAttribute('role')).toBe('dialog');
    expect(chatDialog.kind).toBe('params');
    const temperature = within(dialog).getByLabelText('Temperature') as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(temperature));
    expect(temperature.placeholder).toBe('Profile default');

    await setValue(temperature, '3');
    await setValue(within(dialog).getByLabelText('Top-p') as HTMLInputElement, '0.8');
    await setValue(within(dialog).getByLabelText('Max output tokens') as HTMLInputElement, '1.5');
    await fireEvent.click(within(dialog).getByTestId('chat-params-save'));
    expect(within(dialog).getAllByRole('alert').map((a) => a.textContent?.trim())).toEqual([
      "Enter a number from 0 to 2 (like 0.7), or leave it empty for the profile's.",
      "Enter a whole number of 1 or more, or leave it empty for the profile's limit.",
    ]);
    expect(store.has(id)).toBe(false);

    await setValue(temperature, '0.4');
    await setValue(within(dialog).getByLabelText('Max output tokens') as HTMLInputElement, '2048');
    await fireEvent.click(within(dialog).getByTestId('chat-params-save'));
    await waitFor(() => expect(screen.queryByTestId('chat-params-dialog')).toBeNull());
    expect(chatDialog.kind).toBe(null);
    expect(store.get(id)).toEqual({ temperature: 0.4, topP: 0.8, maxOutputTokens: 2048 });
    expect(generationFor(id, store)).toEqual({ temperature: 0.4, topP: 0.8, maxOutputTokens: 2048 });
    expect(generationFor(other, store)).toBeUndefined();
    expect(generationFor(null, store)).toBeUndefined();
    // Kept with the chat (its setup), not in this window.
    expect((await backend.openConversation(id)).setup?.generation).toEqual({ temperature: 0.4, topP: 0.8, maxOutputTokens: 2048 });
    expect(localStorage.getItem(CHAT_PARAMS_KEY)).toBeNull();
    // Focus went back to the menu button.
    expect(document.activeElement).toBe(screen.getByTestId('chat-menu'));
    expect(within(await openMenu()).getByTestId('chat-menu-params').textContent?.trim()).toBe('Chat parameters… (set)');

    // Reopened with the saved values; "Clear all" and Save forget them.
    await fireEvent.click(screen.getByTestId('chat-menu-params'));
    const again = await screen.findByTestId('chat-params-dialog');
    expect((within(again).getByLabelText('Temperature') as HTMLInputElement).value).toBe('0.4');
    expect((within(again).getByLabelText('Top-p') as HTMLInputElement).value).toBe('0.8');
    await fireEvent.click(within(again).getByTestId('chat-params-reset'));
    await fireEvent.click(within(again).getByTestId('chat-params-save'));
    await waitFor(() => expect(store.has(id)).toBe(false));
    expect(generationFor(id, store)).toBeUndefined();
    expect((await backend.openConversation(id)).setup?.generation).toBeUndefined();
  });

  it('shows why the chat could not keep its parameters, and keeps what was typed', async () => {
    const fail = { kind: 'storage', message: 'The database is locked.', retryable: true };
    const { store, id } = await setup({ setChatSetup: () => Promise.reject(fail) });
    store.connect({ setChatSetup: () => Promise.reject(fail) });
    await fireEvent.click(within(await openMenu()).getByTestId('chat-menu-params'));
    const dialog = await screen.findByTestId('chat-params-dialog');
    await setValue(within(dialog).getByLabelText('Temperature') as HTMLInputElement, '0.5');
    await fireEvent.click(within(dialog).getByTestId('chat-params-save'));
    expect((await within(dialog).findByTestId('chat-params-error')).textContent).toContain('The database is locked.');
    expect((within(dialog).getByLabelText('Temperature') as HTMLInputElement).value).toBe('0.5');
    expect(store.has(id)).toBe(false);
  });

  it('moves parameters this window kept in localStorage into the chat when it opens, dropping what is out of range', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const [first, second] = await backend.listConversations();
    const a = first?.id as string;
    const b = second?.id as string;
    localStorage.setItem(CHAT_PARAMS_KEY, JSON.stringify({ [a]: { temperature: 1.2, topP: 7 }, [b]: { maxOutputTokens: -1 }, c: 'x' }));
    const store = new ChatParamsStore(backend);
    store.adopt(a, undefined);
    await waitFor(() => expect(generationFor(a, store)).toEqual({ temperature: 1.2 }));
    expect((await backend.openConversation(a)).setup?.generation).toEqual({ temperature: 1.2 });
    expect(Object.keys(JSON.parse(localStorage.getItem(CHAT_PARAMS_KEY) ?? '{}'))).not.toContain(a);
    // A chat's own stored parameters win over what localStorage held.
    localStorage.setItem(CHAT_PARAMS_KEY, JSON.stringify({ [b]: { temperature: 0.1 } }));
    store.reload();
    store.adopt(b, { topP: 0.3 });
    expect(store.get(b)).toEqual({ topP: 0.3 });
    expect(localStorage.getItem(CHAT_PARAMS_KEY)).toBeNull();
  });

  it('Escape in the parameters dialog cancels without saving', async () => {
    const { store, id } = await setup();
    await fireEvent.click(within(await openMenu()).getByTestId('chat-menu-params'));
    const dialog = await screen.findByTestId('chat-params-dialog');
    await setValue(within(dialog).getByLabelText('Temperature') as HTMLInputElement, '1');
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(screen.queryByTestId('chat-params-dialog')).toBeNull();
    expect(store.has(id)).toBe(false);
  });
});

describe('generated titles', () => {
  it('asks for a title after a new chat’s first answer only, and the list gets it', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const generate = vi.spyOn(backend, 'generateTitle');
    const [first] = await backend.listConversations();
    const id = first?.id as string;
    expect(await maybeGenerateTitle(backend, id, false)).toBeNull();
    expect(await maybeGenerateTitle(backend, null, true)).toBeNull();
    expect(generate).not.toHaveBeenCalled();

    const title = await maybeGenerateTitle(backend, id, true);
    expect(generate).toHaveBeenCalledWith(id);
    expect(title).toBeTruthy();
    expect(title?.split(' ').length).toBeLessThanOrEqual(6);
    expect((await backend.listConversations()).find((c) => c.id === id)?.title).toBe(title);
  });

  it('keeps a renamed title, and the first line when the settings say so; a failure is null', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const [a, b] = await backend.listConversations();
    await backend.renameConversation(a?.id as string, 'My own name');
    expect(await maybeGenerateTitle(backend, a?.id, true)).toBe('My own name');

    const settings = await backend.getSettings();
    await backend.updateSettings({ ...settings, chats: { ...settings.chats, titles: 'firstLine' } });
    expect(await maybeGenerateTitle(backend, b?.id, true)).toBe(b?.title);

    expect(await maybeGenerateTitle({ generateTitle: () => Promise.reject(new Error('offline')) }, 'x', true)).toBeNull();
  });
});
