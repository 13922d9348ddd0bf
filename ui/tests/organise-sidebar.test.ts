/**
 * Organising the conversation list: pin (a "Pinned" group at the top), archive (out of the main
 * list, behind "Archived (N)", still found by search), from each row's actions, by keyboard too.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { ConversationSummary } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { errorText, ipcError } from '../src/lib/ipc/fake/errors';
import { AppState } from '../src/lib/state/app.svelte';
import { organise, setArchived, setPinned } from '../src/lib/state/organise';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start(patch: Partial<Backend> = {}) {
  const backend: Backend = { ...createFakeBackend({ tickMs: 0 }), ...patch };
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  await screen.findAllByTestId('conversation-item');
  return { app, backend };
}

function rows(): HTMLElement[] {
  return screen.queryAllByTestId('conversation-item');
}

function rowById(id: string): HTMLElement | undefined {
  return rows().find((r) => r.dataset.id === id);
}

function headings(): string[] {
  return [...document.querySelectorAll('.sidebar h3.group')].map((h) => h.textContent?.trim() ?? '');
}

function summary(id: string, more: Partial<ConversationSummary> = {}): ConversationSummary {
  return { id, title: id, createdAt: 0, updatedAt: 0, messageCount: 2, pinned: false, archived: false, ...more };
}

beforeEach(() => {
  localStorage.clear();
});

describe('grouping', () => {
  it('puts pinned chats first and archived ones apart; search keeps its ranking and includes archived chats', () => {
    const now = new Date(2026, 5, 15, 12);
    const t = now.getTime();
    const list = [
      summary('new', { updatedAt: t - 1000 }),
      summary('pinned-old', { updatedAt: t - 30 * 86_400_000, pinned: true }),
      summary('archived', { updatedAt: t, archived: true }),
      summary('yesterday', { updatedAt: t - 86_400_000 }),
    ];
    const { groups, archived } = organise(list, false, now);
    expect(groups.map((g) => [g.label, g.items.map((c) => c.id)])).toEqual([
      ['Pinned', ['pinned-old']],
      ['Today', ['new']],
      ['Yesterday', ['yesterday']],
    ]);
    expect(archived.map((c) => c.id)).toEqual(['archived']);

    const found = organise(list, true, now);
    expect(found.groups).toEqual([{ key: 'results', label: 'Results', items: list }]);
    expect(found.archived).toEqual([]);
    expect(organise([], true, now).groups).toEqual([]);
  });
});

describe('pin and archive from the list', () => {
  it('pins a chat into a "Pinned" group at the top, and unpins it back to its day', async () => {
    const { app, backend } = await start();
    const pin = vi.spyOn(backend, 'setConversationPinned');
    expect(headings()).not.toContain('Pinned');
    const last = rows().at(-1) as HTMLElement;
    const id = last.dataset.id as string;
    expect(last.textContent).toContain('Quadratic formula refresher');

    const button = within(last).getByRole('button', { name: 'Pin “Quadratic formula refresher”' });
    button.focus();
    await fireEvent.click(button);
    expect(pin).toHaveBeenCalledWith(id, true);
    await waitFor(() => expect(headings()[0]).toBe('Pinned'));
    expect(rows()[0]?.dataset.id).toBe(id);
    expect(rows()[0]?.dataset.pinned).toBe('true');
    // Keyboard users stay on the chat they pinned, in its new place.
    await waitFor(() => expect(document.activeElement).toBe(rowById(id)?.querySelector('button.open')));

    // The shell keeps it: a reload of the list still shows it pinned.
    await app.refreshConversations();
    expect(rows()[0]?.dataset.id).toBe(id);

    await fireEvent.click(within(rowById(id) as HTMLElement).getByRole('button', { name: 'Unpin “Quadratic formula refresher”' }));
    expect(pin).toHaveBeenLastCalledWith(id, false);
    await waitFor(() => expect(headings()).not.toContain('Pinned'));
    expect(rows().at(-1)?.dataset.id).toBe(id);
  });

  it('archives a chat out of the main list, behind "Archived (N)", and unarchives it', async () => {
    const { backend } = await start();
    const archive = vi.spyOn(backend, 'setConversationArchived');
    const count = rows().length;
    const first = rows()[0] as HTMLElement;
    const id = first.dataset.id as string;
    const next = rows()[1]?.dataset.id;
    expect(screen.queryByTestId('archived-toggle')).toBeNull();

    const button = within(first).getByTestId('archive-conversation');
    expect(button.getAttribute('aria-label')).toMatch(/^Archive “/);
    button.focus();
    await fireEvent.click(button);
    expect(archive).toHaveBeenCalledWith(id, true);
    await waitFor(() => expect(rowById(id)).toBeUndefined());
    expect(rows()).toHaveLength(count - 1);
    // Focus goes on to the next chat, not to the page.
    await waitFor(() => expect(document.activeElement).toBe(rowById(next as string)?.querySelector('button.open')));

    const toggle = screen.getByTestId('archived-toggle');
    expect(toggle.textContent?.trim()).toBe('Archived (1)');
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    await fireEvent.click(toggle);
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    const archived = screen.getByTestId('archived-list');
    const row = within(archived).getByTestId('conversation-item');
    expect(row.dataset.id).toBe(id);
    expect(within(row).getByTestId('archived-tag')).toBeTruthy();
    // An archived chat can be unarchived (not pinned); it still opens, renames and deletes.
    expect(within(row).queryByTestId('pin-conversation')).toBeNull();
    expect(within(row).getByTestId('rename-conversation')).toBeTruthy();
    expect(within(row).getByTestId('delete-conversation')).toBeTruthy();

    await fireEvent.click(within(row).getByRole('button', { name: /^Unarchive “/ }));
    expect(archive).toHaveBeenLastCalledWith(id, false);
    await waitFor(() => expect(screen.queryByTestId('archived-toggle')).toBeNull());
    expect(rows()).toHaveLength(count);
    expect(rows()[0]?.dataset.id).toBe(id);
  });

  it('unpins a chat it archives', async () => {
    const { app } = await start();
    const id = app.conversations[2]?.id as string;
    await setPinned(app, id, true);
    await waitFor(() => expect(headings()[0]).toBe('Pinned'));
    await setArchived(app, id, true);
    await waitFor(() => expect(headings()).not.toContain('Pinned'));
    expect(app.conversations.find((c) => c.id === id)).toMatchObject({ pinned: false, archived: true });
    await app.refreshConversations();
    expect(app.conversations.find((c) => c.id === id)).toMatchObject({ pinned: false, archived: true });
  });

  it('finds archived chats by search, marked as archived', async () => {
    const { app } = await start();
    const target = app.conversations.find((c) => c.title === 'Quadratic formula refresher') as ConversationSummary;
    await setArchived(app, target.id, true);
    await waitFor(() => expect(rowById(target.id)).toBeUndefined());

    app.setQuery('quadratic', 0);
    await waitFor(() => expect(headings()).toEqual(['Results']));
    const found = rowById(target.id) as HTMLElement;
    expect(found).toBeTruthy();
    expect(within(found).getByTestId('archived-tag').textContent).toBe('Archived');
    expect(screen.queryByTestId('archived-toggle')).toBeNull();

    // It opens like any other chat.
    await fireEvent.click(found.querySelector('button.open') as HTMLElement);
    await waitFor(() => expect(app.current.conversationId).toBe(target.id));
  });

  it('shows a failure as a toast and leaves the list as it was', async () => {
    // What the service answers for a conversation that is gone.
    const { app } = await start({ setConversationPinned: () => Promise.reject(ipcError('conversationNotFound', { id: 'c_1' })) });
    const id = rows()[0]?.dataset.id as string;
    await fireEvent.click(within(rowById(id) as HTMLElement).getByTestId('pin-conversation'));
    expect((await screen.findByTestId('error-banner')).textContent).toContain(errorText('conversationNotFound', { id: 'c_1' }));
    expect(app.conversations.find((c) => c.id === id)?.pinned).toBe(false);
    expect(headings()).not.toContain('Pinned');
  });
});
