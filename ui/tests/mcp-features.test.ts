/**
 * Issue 29 in the app, against the fake backend: the `/` menu (filter, keys, app commands), a
 * prompt's form with completion and a refusal that keeps what was typed, attaching a resource
 * (picker and `@`), a server's form inside its tool's card, a sampling request approved after an
 * edit (its completion nested in the card), and the roots and log level in Settings → MCP.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import { createFakeBackend } from '../src/lib/ipc/fake';
import type { McpFeatures } from '../src/lib/mcp/types';
import { AppState } from '../src/lib/state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start() {
  const backend = createFakeBackend({ tickMs: 0, empty: true });
  const app = new AppState(backend, { schedule });
  render(App, { props: { app } });
  await app.init();
  return { app, backend, f: backend as unknown as McpFeatures };
}

function input(): HTMLTextAreaElement {
  return screen.getByTestId('composer-input') as HTMLTextAreaElement;
}

async function type(text: string, el: HTMLInputElement | HTMLTextAreaElement = input()) {
  el.value = text;
  el.setSelectionRange?.(text.length, text.length);
  await fireEvent.input(el);
}

function items(): string[] {
  return screen.queryAllByTestId('slash-item').map((li) => li.dataset.name ?? '');
}

function activeItem(): string | undefined {
  return screen.queryAllByTestId('slash-item').find((li) => li.getAttribute('aria-selected') === 'true')?.dataset.name;
}

beforeEach(() => {
  localStorage.clear();
});

describe('the / menu', () => {
  it('lists the app commands and the running servers’ prompts, filters as one types, and moves with the keys', async () => {
    await start();
    await type('/');
    await waitFor(() => expect(items()).toContain('files:review_code'));
    expect(items().slice(0, 5)).toEqual(['new', 'compact', 'instructions', 'settings', 'shortcuts']);
    expect(items()).toEqual(expect.arrayContaining(['files:summarise_folder', 'files:plan_trip']));
    expect(input().getAttribute('aria-expanded')).toBe('true');

    await type('/rev');
    expect(items()).toEqual(['files:review_code']);
    await type('/s');
    expect(items()[0]).toBe('settings');
    expect(activeItem()).toBe('settings');
    await fireEvent.keyDown(input(), { key: 'ArrowDown' });
    expect(activeItem()).toBe(items()[1]);
    await fireEvent.keyDown(input(), { key: 'ArrowUp' });
    await fireEvent.keyDown(input(), { key: 'ArrowUp' });
    expect(activeItem()).toBe(items().at(-1));

    await fireEvent.keyDown(input(), { key: 'Escape' });
    expect(screen.queryByTestId('slash-menu')).toBeNull();
    expect(input().value).toBe('/s');
    await type('/se');
    expect(screen.getByTestId('slash-menu')).toBeTruthy();
  });

  it('runs an app command', async () => {
    const { app } = await start();
    await type('/settings');
    await fireEvent.keyDown(input(), { key: 'Enter' });
    await waitFor(() => expect(app.settingsOpen).toBe(true));
  });

  it('puts a prompt without arguments into the composer to read before sending', async () => {
    await start();
    await type('/summ');
    await waitFor(() => expect(items()).toEqual(['files:summarise_folder']));
    await fireEvent.keyDown(input(), { key: 'Enter' });
    await waitFor(() => expect(input().value).toMatch(/^Summarise what the files/));
  });

  it('asks for a prompt’s arguments, offers the server’s completion, and shows its refusal keeping what was typed', async () => {
    const { f } = await start();
    const complete = vi.spyOn(f, 'mcpComplete');
    await type('/plan');
    await waitFor(() => expect(items()).toEqual(['files:plan_trip']));
    await fireEvent.keyDown(input(), { key: 'Enter' });
    const form = await screen.findByTestId('prompt-form');
    expect(within(form).getByTestId('args-form-title').textContent).toBe('/plan_trip');
    // Both required: marked, and the button waits for them.
    expect(form.querySelectorAll('.req')).toHaveLength(2);
    const submit = within(form).getByTestId('args-form-submit') as HTMLButtonElement;
    expect(submit.disabled).toBe(true);
    await type('Lisbon', within(form).getByTestId('arg-city') as HTMLInputElement);
    await type('99', within(form).getByTestId('arg-days') as HTMLInputElement);
    expect(submit.disabled).toBe(false);
    // Asked after a pause in typing, even where the server has nothing to offer.
    await waitFor(() => expect(complete).toHaveBeenCalledWith('files', { type: 'prompt', name: 'plan_trip' }, 'days', '99', { city: 'Lisbon' }));
    await fireEvent.click(submit);
    const error = await within(form).findByTestId('args-form-error');
    expect(error.textContent).toContain('days must be a whole number from 1 to 30');
    expect((within(form).getByTestId('arg-city') as HTMLInputElement).value).toBe('Lisbon');
    expect((within(form).getByTestId('arg-days') as HTMLInputElement).value).toBe('99');

    await type('3', within(form).getByTestId('arg-days') as HTMLInputElement);
    await fireEvent.click(submit);
    await waitFor(() => expect(screen.queryByTestId('prompt-form')).toBeNull());
    expect(input().value).toBe('Plan a 3-day trip to Lisbon. Suggest one thing to see each morning and one place to eat each evening.');
  });

  it('suggests values from the server after a pause, newest question only, and Enter takes one', async () => {
    await start();
    await type('/review');
    await waitFor(() => expect(items()).toEqual(['files:review_code']));
    await fireEvent.keyDown(input(), { key: 'Enter' });
    const form = await screen.findByTestId('prompt-form');
    const lang = within(form).getByTestId('arg-language') as HTMLInputElement;
    await type('ja', lang);
    await type('ty', lang);
    const list = await within(form).findByTestId('arg-suggestions');
    expect(within(list).getAllByRole('option').map((o) => o.textContent?.trim())).toEqual(['typescript']);
    await fireEvent.keyDown(lang, { key: 'ArrowDown' });
    await fireEvent.keyDown(lang, { key: 'Enter' });
    expect(lang.value).toBe('typescript');
    await type('notes.md', within(form).getByTestId('arg-file') as HTMLInputElement);
    await fireEvent.click(within(form).getByTestId('args-form-submit'));
    await waitFor(() => expect(input().value).toBe('Review this typescript code.'));
    // The prompt's embedded resource goes with the message as an attachment.
    expect(screen.getAllByTestId('attachment').map((c) => c.dataset.name)).toEqual(['file:///home/you/Documents/notes.md']);
  });
});

describe('attaching a resource', () => {
  it('from the picker: a chip named by the URI with its type, removable', async () => {
    await start();
    await fireEvent.click(screen.getByTestId('attach-resource'));
    const picker = await screen.findByTestId('resource-picker');
    await waitFor(() => expect(within(picker).getAllByTestId('resource-item').length).toBe(4));
    await type('budget', within(picker).getByTestId('resource-filter') as HTMLInputElement);
    expect(within(picker).getAllByTestId('resource-item')).toHaveLength(1);
    await fireEvent.keyDown(within(picker).getByTestId('resource-filter'), { key: 'Enter' });
    await waitFor(() => expect(screen.queryByTestId('resource-picker')).toBeNull());
    const chip = screen.getByTestId('attachment');
    expect(chip.dataset.name).toBe('file:///home/you/Documents/budget.csv');
    expect(chip.textContent).toContain('CSV');
    await fireEvent.click(within(chip).getByTestId('attachment-remove'));
    await waitFor(() => expect(screen.queryByTestId('attachment')).toBeNull());
  });

  it('from a template, its parameter completed, and by an @ mention', async () => {
    await start();
    await fireEvent.click(screen.getByTestId('attach-resource'));
    const picker = await screen.findByTestId('resource-picker');
    await waitFor(() => expect(within(picker).getAllByTestId('resource-item').some((i) => i.dataset.kind === 'template')).toBe(true));
    await fireEvent.mouseDown(within(picker).getAllByTestId('resource-item').find((i) => i.dataset.kind === 'template') as HTMLElement);
    const form = await screen.findByTestId('template-form');
    const name = within(form).getByTestId('arg-name') as HTMLInputElement;
    await type('let', name);
    const list = await within(form).findByTestId('arg-suggestions');
    await fireEvent.mouseDown(within(list).getByText('letter.txt'));
    await fireEvent.click(within(form).getByTestId('args-form-submit'));
    await waitFor(() => expect(screen.getAllByTestId('attachment').map((c) => c.dataset.name)).toEqual(['file:///home/you/Documents/letter.txt']));

    await type('compare with @note');
    const option = await screen.findByTestId('mention-resource');
    expect(option.textContent).toContain('notes.md');
    await fireEvent.mouseDown(option);
    await waitFor(() => expect(screen.getAllByTestId('attachment')).toHaveLength(2));
    expect(input().value).toBe('compare with ');
  });

  it('a template that leaves the server’s scheme is refused with the server’s message', async () => {
    const { app } = await start();
    expect(await app.mcp.attach('files', 'https://evil.example/x')).toMatch(/outside the server's scheme/);
    expect(app.attachments.items).toEqual([]);
  });
});

async function sendAndFindCard(text: string, testid: string): Promise<HTMLElement> {
  await type(text);
  await fireEvent.keyDown(input(), { key: 'Enter' });
  return screen.findByTestId(testid, {}, { timeout: 3000 });
}

describe('a server asks during a call', () => {
  it('shows the form inside the tool’s card, with defaults, checks it and sends typed content', async () => {
    const { f } = await start();
    const resolve = vi.spyOn(f, 'answerElicitation');
    const card = await sendAndFindCard('fill the form please', 'elicitation-card');
    const tool = card.closest('[data-testid="tool-card"]') as HTMLElement;
    expect(tool.dataset.toolName).toBe('files__write_note');
    expect(within(tool).getByText('Waiting for you')).toBeTruthy();
    expect(card.textContent).toContain('files');
    expect(card.textContent).toContain('files__write_note');
    expect(within(card).getByTestId('elicitation-message').textContent).toBe('Who is the note from?');
    const kinds = Object.fromEntries(Array.from(card.querySelectorAll<HTMLElement>('[data-kind]')).map((e) => [e.dataset.testid, e.dataset.kind]));
    expect(kinds).toMatchObject({ 'elicit-field-name': 'string', 'elicit-field-email': 'string', 'elicit-field-copies': 'integer', 'elicit-field-urgent': 'boolean', 'elicit-field-colour': 'choice' });
    expect((within(card).getByTestId('elicit-field-copies').querySelector('input') as HTMLInputElement).value).toBe('2');
    expect((within(card).getByTestId('elicit-field-colour').querySelector('select') as HTMLSelectElement).value).toBe('green');
    expect((within(card).getByTestId('elicit-field-email').querySelector('input') as HTMLInputElement).type).toBe('email');

    await fireEvent.click(within(card).getByTestId('elicitation-accept'));
    expect(within(card).getByTestId('elicit-field-name').textContent).toContain('Required.');
    expect(resolve).not.toHaveBeenCalled();

    await type('Ana', within(card).getByTestId('elicit-field-name').querySelector('input') as HTMLInputElement);
    await fireEvent.click(within(card).getByTestId('elicit-field-urgent').querySelector('input') as HTMLInputElement);
    await fireEvent.click(within(card).getByTestId('elicitation-accept'));
    await waitFor(() => expect(resolve).toHaveBeenCalledWith(expect.any(String), 'accept', { name: 'Ana', copies: 2, urgent: true, colour: 'green' }));
    await waitFor(() => expect(within(card).getByTestId('elicitation-resolved').textContent).toBe('You answered.'));
    await waitFor(() => expect(tool.dataset.status).toBe('ok'));
  });

  it('declines and cancels as asked', async () => {
    const { f } = await start();
    const resolve = vi.spyOn(f, 'answerElicitation');
    const card = await sendAndFindCard('elicit something', 'elicitation-card');
    await fireEvent.click(within(card).getByTestId('elicitation-decline'));
    await waitFor(() => expect(resolve).toHaveBeenCalledWith(expect.any(String), 'decline', null));
    await waitFor(() => expect(within(card).getByTestId('elicitation-resolved').textContent).toBe('You declined.'));
  });

  it('in URL mode shows the host large and opens the page only after the person agrees', async () => {
    const { f } = await start();
    // The shell opens the page when the answer is "accept" (after its own check of the address).
    const answer = vi.spyOn(f, 'answerElicitation');
    const card = await sendAndFindCard('form with a url', 'elicitation-card');
    expect(card.dataset.mode).toBe('url');
    expect(within(card).getByTestId('elicitation-host').textContent).toBe('notes.example.com');
    expect(answer).not.toHaveBeenCalled();
    await fireEvent.click(within(card).getByTestId('elicitation-open'));
    await waitFor(() => expect(answer).toHaveBeenCalledWith(expect.any(String), 'accept', null));
  });

  it('shows a sampling request with its limits; an edit is approved and the completion streams into the card', async () => {
    const { f } = await start();
    const resolve = vi.spyOn(f, 'answerSampling');
    const card = await sendAndFindCard('sample a poem', 'sampling-card');
    expect(card.textContent).toContain('files');
    expect(within(card).getByTestId('sampling-message').textContent).toContain('Write a short poem about the sea.');
    const limits = within(card).getByTestId('sampling-limits').textContent ?? '';
    expect(limits).toContain('1,000,000');
    expect(limits).toContain('capped to 4,096');
    await fireEvent.click(within(card).getByTestId('sampling-edit'));
    await type('Write a haiku about the sea.', within(card).getByTestId('sampling-edit-input') as HTMLTextAreaElement);
    await fireEvent.click(within(card).getByTestId('sampling-approve'));
    await waitFor(() => expect(resolve).toHaveBeenCalledWith(expect.any(String), true, [{ role: 'user', text: 'Write a haiku about the sea.' }]));
    const tool = card.closest('[data-testid="tool-card"]') as HTMLElement;
    await waitFor(() => expect(within(tool).getByTestId('agent-run').textContent).toContain('waves fold into waves'));
    expect(within(card).getByTestId('sampling-resolved').textContent).toBe('You approved it.');
  });

  it('deny goes back as a denial', async () => {
    const { f } = await start();
    const resolve = vi.spyOn(f, 'answerSampling');
    const card = await sendAndFindCard('sampling please', 'sampling-card');
    await fireEvent.click(within(card).getByTestId('sampling-deny'));
    await waitFor(() => expect(resolve).toHaveBeenCalledWith(expect.any(String), false, null));
    await waitFor(() => expect(within(card).getByTestId('sampling-resolved').textContent).toBe('You denied it.'));
  });
});

describe('Settings → MCP', () => {
  async function openMcp(): Promise<HTMLElement> {
    await fireEvent.click(screen.getByTestId('open-settings'));
    await fireEvent.click(within(screen.getByTestId('settings-nav')).getByTestId('settings-nav-mcp'));
    return screen.findByTestId('settings-section-mcp');
  }

  it('adds folders for every server and for one through the native dialog, and removes them', async () => {
    await start();
    const section = await openMcp();
    const all = await within(section).findByTestId('mcp-roots-all');
    await waitFor(() => expect(within(all).getAllByTestId('mcp-root').map((r) => r.dataset.path)).toEqual(['/home/you/Documents']));
    await fireEvent.click(within(all).getByTestId('mcp-root-add-all'));
    await waitFor(() => expect(within(all).getAllByTestId('mcp-root').map((r) => r.dataset.path)).toEqual(['/home/you/Documents', '/home/you/Projects']));

    const own = within(section).getByTestId('mcp-roots-files');
    await fireEvent.click(within(own).getByTestId('mcp-root-add-files'));
    await waitFor(() => expect(within(own).getAllByTestId('mcp-root').map((r) => r.dataset.path)).toEqual(['/home/you/Pictures']));
    await fireEvent.click(within(within(all).getAllByTestId('mcp-root')[0] as HTMLElement).getByTestId('mcp-root-remove'));
    await waitFor(() => expect(within(all).getAllByTestId('mcp-root').map((r) => r.dataset.path)).toEqual(['/home/you/Projects']));
  });

  it('sets the level of the server’s log messages, which show in its output', async () => {
    const { f } = await start();
    const setLevel = vi.spyOn(f, 'mcpSetLogLevel');
    const section = await openMcp();
    const select = (await within(section).findByTestId('mcp-log-level-files')) as HTMLSelectElement;
    expect(within(section).getAllByTestId('mcp-stderr')[0]?.textContent).toContain('[log info] files: allowed directories');
    await fireEvent.change(select, { target: { value: 'debug' } });
    await waitFor(() => expect(setLevel).toHaveBeenCalledWith('files', 'debug'));
    await waitFor(() => expect(within(section).getAllByTestId('mcp-stderr')[0]?.textContent).toContain('[log debug] files: listing 3 resources'));
    expect(((await within(section).findByTestId('mcp-log-level-files')) as HTMLSelectElement).value).toBe('debug');
  });
});
