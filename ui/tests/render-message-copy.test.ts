/** The footer of an answer copies its Markdown as written, or its plain text. */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { ConversationView } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { markdownToPlainText } from '../src/lib/markdown/plainText';
import { AppState } from '../src/lib/state/app.svelte';

const ANSWER = [
  '## Steps',
  '',
  'Run **this** with [npm](https://www.npmjs.com/):',
  '',
  '```sh',
  'npm ci && npm test',
  '```',
  '',
  '- one',
  '- two',
  '',
  'Done: $x^2$.',
].join('\n');

let writeText: ReturnType<typeof vi.fn<(text: string) => Promise<void>>>;

beforeEach(() => {
  localStorage.clear();
  writeText = vi.fn<(text: string) => Promise<void>>(() => Promise.resolve());
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
});

afterEach(() => {
  Reflect.deleteProperty(navigator, 'clipboard');
});

async function openAnswer(content: string) {
  const base = { reasoning: '', provider: 'p', model: 'x', usage: { promptTokens: 3, completionTokens: 9, reasoningTokens: 0, cachedTokens: 0 }, providerResponseId: null, createdAt: 0, updatedAt: 0, error: null, parentId: null, versions: [] };
  const view: ConversationView = {
    conversation: { id: 'copy', title: 'Copy', createdAt: 0, updatedAt: Date.now(), messageCount: 2, pinned: false, archived: false },
    earlier: 0,
    disabledTools: [],
    messages: [
      { ...base, id: 'u1', role: 'user', content: 'How?', status: 'complete', finishReason: null, toolCallsMade: 0, toolCalls: [], notices: [] },
      { ...base, id: 'a1', role: 'assistant', content, status: 'complete', finishReason: 'stop', toolCallsMade: 0, toolCalls: [], notices: [] },
    ],
  };
  const backend = { ...createFakeBackend({ tickMs: 0, empty: true }), listConversations: async () => [view.conversation], openConversation: async () => structuredClone(view) };
  const app = new AppState(backend, { schedule: (cb: () => void) => setTimeout(cb, 0) });
  render(App, { props: { app } });
  await app.init();
  await app.open('copy');
  const answer = await waitFor(() => {
    const m = screen.getAllByTestId('message').find((x) => x.dataset.role === 'assistant');
    if (!m) throw new Error('no answer yet');
    return m;
  });
  return within(answer.querySelector('footer') as HTMLElement);
}

describe('copying an answer', () => {
  it('offers Markdown and plain text, side by side in the footer, each by name', async () => {
    const footer = await openAnswer(ANSWER);
    const group = footer.getByRole('group', { name: 'Copy answer' });
    const [md, text] = within(group).getAllByRole('button');
    expect(md?.getAttribute('aria-label')).toBe('Copy answer as Markdown');
    expect(text?.getAttribute('aria-label')).toBe('Copy answer as plain text');
  });

  it('"Copy" copies the Markdown source exactly as the model wrote it', async () => {
    const footer = await openAnswer(ANSWER);
    const button = footer.getByRole('button', { name: 'Copy answer as Markdown' });
    await fireEvent.click(button);
    await waitFor(() => expect(writeText).toHaveBeenCalledWith(ANSWER));
    await waitFor(() => expect(button.textContent).toContain('Copied'));
    expect(footer.getByRole('button', { name: 'Copy answer as plain text' }).textContent).not.toContain('Copied');
  });

  it('"Copy text" copies the words without Markdown syntax', async () => {
    const footer = await openAnswer(ANSWER);
    await fireEvent.click(footer.getByRole('button', { name: 'Copy answer as plain text' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledTimes(1));
    expect(writeText.mock.calls[0]?.[0]).toBe('Steps\n\nRun this with npm (https://www.npmjs.com/):\n\nnpm ci && npm test\n\n- one\n- two\n\nDone: x^2.');
  });

  it('says so when the clipboard refuses, instead of "Copied"', async () => {
    writeText.mockRejectedValueOnce(new DOMException('Write permission denied.', 'NotAllowedError'));
    const footer = await openAnswer(ANSWER);
    const button = footer.getByRole('button', { name: 'Copy answer as Markdown' });
    await fireEvent.click(button);
    const banner = await screen.findByTestId('error-banner');
    expect(banner.textContent).toContain('Could not copy the answer');
    expect(banner.textContent).toMatch(/Write permission denied\. Select the text and copy it with (Ctrl\+C|⌘C)\./);
    expect(button.textContent).not.toContain('Copied');
  });
});

describe('plain text of Markdown', () => {
  it('keeps the words, list markers, code and table cells, and drops the syntax', () => {
    const md = '# T\n\n*a* __b__ `c` <b>x</b>\nline 2\n\n1. x\n   - y\n2. z\n\n> q\n\n| h | i |\n|---|---|\n| 1 | 2 |\n\nSee <https://example.com> or [mail](mailto:a@b.c) and ![cat](data:image/png;base64,AA==).';
    expect(markdownToPlainText(md)).toBe('T\n\na b c <b>x</b>\nline 2\n\n1. x\n  - y\n2. z\n\nq\n\nh\ti\n1\t2\n\nSee https://example.com or mail (mailto:a@b.c) and cat.');
  });
});
