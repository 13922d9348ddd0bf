/**
 * Edit and versions in the chat, against the fake backend's message tree: editing a question
 * starts a new branch and keeps the old one, `‹ 2/3 ›` switches in place and the view follows the
 * branch, regenerate (also with another model) adds a version, a version can be deleted and a
 * chat branched off; while an answer streams none of it is offered, and a refused edit loses nothing.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { BUSY_MESSAGE } from '../src/lib/ipc/fake/tree';
import { AppState } from '../src/lib/state/app.svelte';
import { BUSY_REASON } from '../src/lib/state/session.svelte';

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
  await fireEvent.input(el);
  await fireEvent.keyDown(el, { key: 'Enter' });
}

function messages(): HTMLElement[] {
  return screen.queryAllByTestId('message');
}

/** What is on screen, as role: text (first 30 characters) [+ tool cards] [versions]. */
function shown(): string[] {
  return messages().map((m) => {
    const text = m.dataset.role === 'user' ? (within(m).queryByTestId('message-text')?.textContent ?? '') : [...m.querySelectorAll('[data-testid="message-text"]')].map((t) => t.textContent).join('');
    const cards = [...m.querySelectorAll<HTMLElement>('[data-testid="tool-card"]')].map((c) => `[${c.dataset.toolName}]`).join('');
    const nav = m.querySelector<HTMLElement>('[data-testid="version-nav"]');
    return `${m.dataset.role}: ${text.replace(/\s+/g, ' ').trim().slice(0, 30)}${cards}${nav ? ` ${nav.dataset.index}/${nav.dataset.count}` : ''}`;
  });
}

function settled(n: number) {
  return waitFor(() => {
    const ms = messages();
    expect(ms).toHaveLength(n);
    expect(ms.every((m) => m.dataset.status !== 'streaming')).toBe(true);
  }, { timeout: 5000 });
}

async function edit(at: number, text: string) {
  const msg = messages()[at] as HTMLElement;
  await fireEvent.click(within(msg).getByTestId('edit-message'));
  const box = (await waitFor(() => screen.getByTestId('edit-input'))) as HTMLTextAreaElement;
  box.value = text;
  await fireEvent.input(box);
  await fireEvent.keyDown(box, { key: 'Enter' });
}

/** A chat of two turns (the first answer has a tool card). */
async function twoTurns(opts: { tickMs?: number } = {}) {
  const backend = createFakeBackend({ tickMs: opts.tickMs ?? 0, empty: true });
  const started = await start(backend);
  await send('What time is it in Tokyo?');
  await settled(2);
  await send('And in Paris?');
  await settled(4);
  return { backend, ...started };
}

beforeEach(() => {
  localStorage.clear();
});

describe('editing a question', () => {
  it('opens an editor in place with the text; Esc gives the bubble back unchanged', async () => {
    await twoTurns();
    const first = messages()[0] as HTMLElement;
    await fireEvent.click(within(first).getByRole('button', { name: 'Edit message' }));
    const box = screen.getByRole('textbox', { name: 'Edit your message' }) as HTMLTextAreaElement;
    expect(box.value).toBe('What time is it in Tokyo?');
    expect(document.activeElement).toBe(box);
    await fireEvent.keyDown(box, { key: 'Escape' });
    expect(screen.queryByTestId('edit-input')).toBeNull();
    expect(shown()[0]).toBe('user: What time is it in Tokyo?');
  });

  it('sends the edit as a new branch: the messages below change, version 1 keeps the old branch', async () => {
    const { backend } = await twoTurns();
    const editMessage = vi.spyOn(backend, 'editMessage');
    await edit(0, 'What time is it in Lima?');
    await settled(2);
    expect(editMessage).toHaveBeenCalledTimes(1);
    expect(editMessage.mock.calls[0]?.[2]).toBe('What time is it in Lima?');
    expect(shown()).toEqual(['user: What time is it in Lima? 2/2', 'assistant: Let me check 東京 for you 👋🏽. [get_time]']);

    // Back to version 1: its whole branch, both turns, with the tool card.
    await fireEvent.click(screen.getByRole('button', { name: 'Previous version' }));
    await waitFor(() => expect(shown()).toHaveLength(4));
    expect(shown()[0]).toBe('user: What time is it in Tokyo? 1/2');
    expect(shown()[2]).toBe('user: And in Paris?');
    expect(messages()[1]?.querySelector('[data-testid="tool-card"]')).not.toBeNull();
    expect(screen.getByRole('group', { name: 'Version 1 of 2' })).toBeTruthy();
  });

  it('keeps the text in the editor and says why when the edit is refused', async () => {
    const { backend } = await twoTurns();
    const refused = { kind: 'config' as const, message: BUSY_MESSAGE, retryable: false };
    vi.spyOn(backend, 'editMessage').mockRejectedValue(refused);
    const before = shown();
    await edit(0, 'A question I do not want to type again');
    await waitFor(() => expect(screen.getByTestId('error-banner').textContent).toContain('still streaming'));
    const box = (await waitFor(() => screen.getByTestId('edit-input'))) as HTMLTextAreaElement;
    expect(box.value).toBe('A question I do not want to type again');
    await fireEvent.keyDown(box, { key: 'Escape' });
    expect(shown()).toEqual(before);
  });
});

describe('versions', () => {
  it('switch with the arrows; the messages above keep their elements and the focus stays on the arrows', async () => {
    await twoTurns();
    // A second version of the second question.
    await edit(2, 'And in Rome?');
    await settled(4);
    const top = messages()[0];
    expect(shown()[2]).toBe('user: And in Rome? 2/2');
    const prev = within(messages()[2] as HTMLElement).getByRole('button', { name: 'Previous version' });
    prev.focus();
    await fireEvent.click(prev);
    await waitFor(() => expect(shown()[2]).toBe('user: And in Paris? 1/2'));
    expect(messages()[0]).toBe(top);
    // At the first version "Previous" is off: the focus moved to "Next".
    expect(document.activeElement).toBe(within(messages()[2] as HTMLElement).getByRole('button', { name: 'Next version' }));
  });

  it('the chosen branch is what the conversation opens on (the store keeps it)', async () => {
    const { backend, app } = await twoTurns();
    await edit(0, 'What time is it in Lima?');
    await settled(2);
    await fireEvent.click(screen.getByRole('button', { name: 'Previous version' }));
    await waitFor(() => expect(shown()).toHaveLength(4));
    const id = app.current.conversationId as string;
    const reopened = await backend.openConversation(id);
    expect(reopened.messages.map((m) => m.content.slice(0, 25))).toEqual(['What time is it in Tokyo?', expect.any(String), 'And in Paris?', expect.any(String)]);
    expect(reopened.messages[0]?.versions).toHaveLength(2);
  });

  it('regenerate adds a version of the answer, and "Regenerate with…" sends the other model', async () => {
    const { backend } = await twoTurns();
    const regenerate = vi.spyOn(backend, 'regenerate');
    const answer = () => messages()[3] as HTMLElement;
    const first = answer().dataset.id;
    await fireEvent.click(within(answer()).getByRole('button', { name: 'Regenerate answer' }));
    await settled(4);
    // That answer by its id, with the choices it was asked with.
    expect(regenerate.mock.calls[0]?.slice(1, 3)).toEqual([first, null]);
    expect(shown()[3]).toMatch(/ 2\/2$/);

    await fireEvent.click(within(answer()).getByRole('button', { name: 'Regenerate with another model' }));
    const popover = screen.getByTestId('regenerate-with-popover');
    const picker = within(popover).getByTestId('regenerate-with-picker') as HTMLSelectElement;
    const other = [...picker.options].find((o) => o.value.startsWith('ollama\u0000'));
    expect(other).toBeDefined();
    picker.value = (other as HTMLOptionElement).value;
    await fireEvent.change(picker);
    await fireEvent.click(within(popover).getByRole('button', { name: 'Regenerate' }));
    await settled(4);
    const choices = regenerate.mock.calls[1]?.[2];
    expect(choices).toMatchObject({ provider: 'ollama', model: 'llama3.2' });
    expect(shown()[3]).toMatch(/ 3\/3$/);
    expect(answer().querySelector('footer .model')?.textContent).toContain('ollama');
    // The question above was not touched.
    expect(shown()[2]).toBe('user: And in Paris?');
  });

  it('deletes a version after confirming; the other version is shown', async () => {
    await twoTurns();
    await fireEvent.click(within(messages()[3] as HTMLElement).getByRole('button', { name: 'Regenerate answer' }));
    await settled(4);
    expect(shown()[3]).toMatch(/ 2\/2$/);
    await fireEvent.click(within(messages()[3] as HTMLElement).getByRole('button', { name: 'Delete this version' }));
    const dialog = screen.getByTestId('confirm-dialog');
    expect(dialog.textContent).toContain('Delete this version?');
    await fireEvent.click(within(dialog).getByTestId('confirm-delete'));
    await waitFor(() => expect(shown()[3]).not.toMatch(/\//));
    expect(shown()).toHaveLength(4);
  });

  it('deleting the only answer leaves its question, which can be answered again', async () => {
    const { backend } = await twoTurns();
    const regenerate = vi.spyOn(backend, 'regenerate');
    await fireEvent.click(within(messages()[3] as HTMLElement).getByRole('button', { name: 'Delete this version' }));
    await fireEvent.click(within(screen.getByTestId('confirm-dialog')).getByTestId('confirm-delete'));
    await waitFor(() => expect(shown()).toHaveLength(3));
    const question = messages()[2] as HTMLElement;
    await fireEvent.click(within(question).getByRole('button', { name: 'Answer this question' }));
    await settled(4);
    expect(regenerate.mock.calls[0]?.[1]).toBe(question.dataset.id);
    expect(shown()[2]).toBe('user: And in Paris?');
    expect(within(messages()[2] as HTMLElement).queryByRole('button', { name: 'Answer this question' })).toBeNull();
  });

  it('branches into a new chat with the messages up to the answer, and opens it', async () => {
    const { app } = await twoTurns();
    const from = app.current.conversationId;
    await fireEvent.click(within(messages()[1] as HTMLElement).getByRole('button', { name: 'Branch into a new chat' }));
    await waitFor(() => expect(app.current.conversationId).not.toBe(from));
    await waitFor(() => expect(shown()).toHaveLength(2));
    expect(shown()[0]).toBe('user: What time is it in Tokyo?');
    expect(app.conversations).toHaveLength(2);
    expect(app.conversations.map((c) => c.id)).toContain(app.current.conversationId);
  });
});

describe('while an answer streams', () => {
  it('edit, regenerate, switch and delete are off with the reason, and a click sends nothing', async () => {
    const { backend } = await twoTurns({ tickMs: 10 });
    await edit(0, 'What time is it in Lima?');
    await settled(2);
    const editMessage = vi.spyOn(backend, 'editMessage');
    const regenerate = vi.spyOn(backend, 'regenerate');
    const switchVersion = vi.spyOn(backend, 'switchVersion');
    // A slow answer: the fake waits between events.
    await send('Tell me a long story');
    const [question, answer] = messages() as [HTMLElement, HTMLElement];
    for (const [el, name] of [
      [question, 'Edit message'],
      [question, 'Previous version'],
      [answer, 'Regenerate answer'],
      [answer, 'Regenerate with another model'],
      [answer, 'Delete this version'],
    ] as const) {
      const b = within(el).getByRole('button', { name });
      expect(b.getAttribute('aria-disabled'), name).toBe('true');
      expect(b.title, name).toBe(BUSY_REASON);
      await fireEvent.click(b);
    }
    expect(screen.queryByTestId('edit-input')).toBeNull();
    expect(screen.queryByTestId('confirm-dialog')).toBeNull();
    expect(screen.queryByTestId('regenerate-with-popover')).toBeNull();
    expect(editMessage).not.toHaveBeenCalled();
    expect(regenerate).not.toHaveBeenCalled();
    expect(switchVersion).not.toHaveBeenCalled();
    await settled(4);
    expect(within(messages()[0] as HTMLElement).getByRole('button', { name: 'Edit message' }).getAttribute('aria-disabled')).toBe('false');
  });
});
