/**
 * Instructions: the custom ones in Settings → Chats (saved when the field is left), and a chat's
 * own from its menu, shown with the custom ones and what the last question was sent with.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import ChatDialogs from '../src/lib/components/ChatDialogs.svelte';
import ChatMenu from '../src/lib/components/ChatMenu.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { errorText, ipcError } from '../src/lib/ipc/fake/errors';
import { AppState } from '../src/lib/state/app.svelte';
import { ChatParamsStore, closeChatDialog } from '../src/lib/state/chatParams.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

beforeEach(() => {
  localStorage.clear();
  closeChatDialog();
});

async function menuApp(patch: Partial<Backend> = {}) {
  const backend: Backend = { ...createFakeBackend({ tickMs: 0 }), ...patch };
  const app = new AppState(backend, { schedule });
  await app.refreshConversations();
  const id = app.conversations[0]?.id as string;
  render(ChatMenu, { props: { app, conversationId: id, store: new ChatParamsStore() } });
  render(ChatDialogs, { props: { api: backend } });
  return { backend, id };
}

async function openInstructions(): Promise<HTMLElement> {
  await fireEvent.click(screen.getByTestId('chat-menu'));
  await fireEvent.click(screen.getByTestId('chat-menu-instructions'));
  return screen.findByTestId('chat-instructions-dialog');
}

describe('instructions', () => {
  it('edits this chat’s own instructions and shows the custom ones and what was last sent', async () => {
    const { backend, id } = await menuApp();
    const settings = await backend.getSettings();
    await backend.updateSettings({ ...settings, chats: { ...settings.chats, instructions: 'Call me Sam.' } });
    await backend.setChatInstructions(id, 'Answer in French.');
    const save = vi.spyOn(backend, 'setChatInstructions');

    const dialog = await openInstructions();
    const text = (await within(dialog).findByTestId('chat-instructions-text')) as HTMLTextAreaElement;
    await waitFor(() => expect(text.value).toBe('Answer in French.'));
    expect(within(dialog).getByTestId('chat-instructions-custom').textContent).toBe('Call me Sam.');
    expect(within(dialog).getByTestId('chat-instructions-last-sent').textContent).toBe('Call me Sam.\n\nAnswer in French.');

    text.value = 'Answer in English.';
    await fireEvent.input(text);
    await fireEvent.click(within(dialog).getByTestId('chat-instructions-save'));
    await waitFor(() => expect(save).toHaveBeenCalledWith(id, 'Answer in English.'));
    await waitFor(() => expect(screen.queryByTestId('chat-instructions-dialog')).toBeNull());
    expect((await backend.chatInstructions(id)).chat).toBe('Answer in English.');
  });

  it('shows a refusal in the dialog and keeps it open', async () => {
    await menuApp({
      // What the service answers for instructions over its limit.
      setChatInstructions: () => Promise.reject(ipcError('instructionsTooLong', { length: 20_001 })),
    });
    const dialog = await openInstructions();
    await waitFor(() => expect(within(dialog).getByTestId('chat-instructions-save').hasAttribute('disabled')).toBe(false));
    await fireEvent.click(within(dialog).getByTestId('chat-instructions-save'));
    expect((await within(dialog).findByTestId('chat-instructions-error')).textContent).toContain(errorText('instructionsTooLong', { length: 20_001 }));
    expect(screen.getByTestId('chat-instructions-dialog')).toBeTruthy();
  });

  it('saves the custom instructions in Settings → Chats when the field is left', async () => {
    const backend = createFakeBackend({ tickMs: 0, empty: true });
    const update = vi.spyOn(backend, 'updateSettings');
    const app = new AppState(backend, { schedule });
    render(App, { props: { app } });
    await app.init();
    await fireEvent.click(screen.getByTestId('open-settings'));
    await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-chats'));
    const field = (await screen.findByTestId('chats-instructions')) as HTMLTextAreaElement;
    field.value = 'I work in Rust.';
    await fireEvent.input(field);
    expect(update).not.toHaveBeenCalled();
    await fireEvent.blur(field);
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    expect(update.mock.calls[0]?.[0].chats.instructions).toBe('I work in Rust.');
    expect((await backend.getSettings()).chats.instructions).toBe('I work in Rust.');
  });
});
