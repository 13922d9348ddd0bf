/**
 * Search that finds the place, and Find in this chat (issue 25, item 4, the UI side): snippets as
 * text with <mark>, never HTML; a slow earlier search never replaces a later one; choosing a hit
 * opens the conversation at the message with the tool card open; the find bar counts, steps and
 * wraps over what the page rendered, opening folded cards, and leaves the DOM as it was.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import App from '../src/App.svelte';
import type { Backend } from '../src/lib/ipc/backend';
import type { ConversationSummary } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { LONG_CHAT_TITLE, LONG_CHAT_WORD } from '../src/lib/ipc/fake/long';
import type { SearchHit } from '../src/lib/ipc/bindings';
import { createPainter, findMatches, foldCase, openAround, type TextMatch } from '../src/lib/find/textFind';

const text = (m: TextMatch | undefined) => (m?.segments ?? []).map(([n, s, e]) => n.data.slice(s, e)).join('');
import { matchedTerms, snippetRuns } from '../src/lib/search/snippet';
import { AppState } from '../src/lib/state/app.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start(backend: Backend) {
  const app = new AppState(backend, { schedule });
  const view = render(App, { props: { app } });
  await app.init();
  return { app, view };
}

const hit = (over: Partial<SearchHit>): SearchHit => ({
  conversationId: 'c1',
  title: 'Chat',
  messageId: 'm1',
  kind: 'message',
  role: 'assistant',
  snippet: 'a \uE000word\uE001 here',
  onCurrentPath: true,
  createdAt: 1,
  ...over,
});

describe('snippets', () => {
  it('split at the markers into text and matches', () => {
    expect(snippetRuns('say \uE000hello\uE001 and \uE000Hello\uE001!')).toEqual([
      { text: 'say ', match: false },
      { text: 'hello', match: true },
      { text: ' and ', match: false },
      { text: 'Hello', match: true },
      { text: '!', match: false },
    ]);
    // An unclosed match runs to the end; a stray close marker is dropped; nothing is empty.
    expect(snippetRuns('\uE001x \uE000y')).toEqual([
      { text: 'x ', match: false },
      { text: 'y', match: true },
    ]);
    expect(matchedTerms('\uE000Hello\uE001 \uE000hello\uE001 \uE000world\uE001')).toEqual(['hello', 'world']);
  });

  it('render as text and <mark>: a snippet holding <script> shows those characters and runs nothing', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const list = await backend.listConversations();
    const c = list[0] as ConversationSummary;
    const hits: SearchHit[] = [
      hit({ conversationId: c.id, title: c.title, snippet: 'before <script>alert(1)</script> \uE000<b>bold</b>\uE001 after', kind: 'toolResult', toolCallId: 'call_1' }),
      hit({ conversationId: c.id, title: c.title, messageId: 'm2', snippet: 'old \uE000answer\uE001', onCurrentPath: false }),
    ];
    Object.assign(backend, { searchMessages: vi.fn(async () => hits) });
    const { app, view } = await start(backend);
    app.setQuery('bold', 0);
    const rows = await screen.findAllByTestId('search-hit');
    expect(rows).toHaveLength(2);
    const [first, second] = rows as [HTMLElement, HTMLElement];
    const snippet = within(first).getByTestId('search-snippet');
    expect(snippet.textContent).toContain('before <script>alert(1)</script> <b>bold</b> after');
    expect(view.container.querySelector('[data-testid="search-results"] script')).toBeNull();
    expect(snippet.querySelector('b')).toBeNull();
    expect([...snippet.querySelectorAll('mark')].map((m) => m.textContent)).toEqual(['<b>bold</b>']);
    expect(within(first).getByTestId('search-hit-place').textContent).toBe('tool result');
    expect(within(first).queryByTestId('search-hit-version')).toBeNull();
    expect(within(second).getByTestId('search-hit-version').textContent).toBe('on another version');
    // Grouped under the conversation's row.
    const group = screen.getByTestId('search-results');
    expect(group.querySelector(`[data-id="${c.id}"]`)).not.toBeNull();
  });
});

describe('the search list', () => {
  it('never lets a slow earlier answer replace a later one', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const pending = new Map<string, () => void>();
    const search = vi.fn(
      (q: string) =>
        new Promise<SearchHit[]>((resolve) => {
          pending.set(q, () => resolve([hit({ snippet: `\uE000${q}\uE001`, title: q })]));
        }),
    );
    Object.assign(backend, { searchMessages: search });
    const { app } = await start(backend);
    app.setQuery('first', 0);
    await waitFor(() => expect(pending.has('first')).toBe(true));
    app.setQuery('second', 0);
    await waitFor(() => expect(pending.has('second')).toBe(true));
    pending.get('second')?.();
    await waitFor(() => expect(app.hits[0]?.title).toBe('second'));
    pending.get('first')?.();
    await new Promise((r) => setTimeout(r, 20));
    expect(app.hits.map((h) => h.title)).toEqual(['second']);
    expect(app.query).toBe('second');
  });

  it('a failed message search still shows the matching chats and says why', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    Object.assign(backend, {
      searchMessages: vi.fn(async () => {
        throw { kind: 'badRequest', message: 'The search could not be read.' };
      }),
    });
    const { app } = await start(backend);
    app.setQuery('quadratic', 0);
    await waitFor(() => expect(screen.getByTestId('search-error').textContent).toBe('The search could not be read.'));
    expect(screen.getAllByTestId('conversation-item')).toHaveLength(1);
  });

  it('arrows and Enter open a tool result in an old message: the conversation opens there with the card open and the word lit', async () => {
    const backend = createFakeBackend({ tickMs: 0, longChat: 240 });
    const older = vi.spyOn(backend, 'olderMessages');
    const { app } = await start(backend);
    const box = screen.getByTestId('search-input') as HTMLInputElement;
    box.value = LONG_CHAT_WORD;
    await fireEvent.input(box);
    const hitRow = await screen.findByTestId('search-hit', undefined, { timeout: 2000 });
    expect(hitRow.dataset.kind).toBe('toolResult');
    expect(within(hitRow).getByTestId('search-hit-place').textContent).toBe('tool result');
    // Down: the conversation's row, down again: its hit; Enter opens it.
    await fireEvent.keyDown(box, { key: 'ArrowDown' });
    const convRow = screen.getByTestId('search-results').querySelector('[data-id]')?.closest('li');
    expect(convRow?.classList.contains('selected')).toBe(true);
    await fireEvent.keyDown(box, { key: 'ArrowDown' });
    expect(hitRow.classList.contains('selected')).toBe(true);
    await fireEvent.keyDown(box, { key: 'Enter' });

    const messageId = hitRow.dataset.messageId as string;
    const message = await waitFor(
      () => {
        const el = document.querySelector<HTMLElement>(`article[data-id="${messageId}"]`);
        expect(el).not.toBeNull();
        return el as HTMLElement;
      },
      { timeout: 3000 },
    );
    expect(app.current.title).toBe(LONG_CHAT_TITLE);
    // Opening sent the last page; the rest came page by page until the message was there.
    expect(older).toHaveBeenCalled();
    const card = within(message).getByTestId('tool-card');
    expect(card.querySelector('.head')?.getAttribute('aria-expanded')).toBe('true');
    await waitFor(() => expect([...card.querySelectorAll('mark.search-flash')].map((m) => m.textContent?.toLowerCase())).toEqual([LONG_CHAT_WORD]));
    expect(app.current.reveal).toBeNull();
  });
});

describe('a hit on another version', () => {
  it('opens the conversation on the branch that holds it (switch_version), the message in view', async () => {
    const backend = createFakeBackend({ tickMs: 0, longChat: 40 });
    const cid = (await backend.listConversations()).find((c) => c.title === LONG_CHAT_TITLE)?.id as string;
    // Edit the 3rd question: its old text stays as version 1, off the current path.
    const view = await backend.openConversation(cid);
    const third = view.messages[4] as { id: string; content: string };
    expect(third.content).toContain('step 3 of the plan');
    const done = new Promise<void>((resolve) => {
      void backend.editMessage(cid, third.id, 'Question 3, asked another way.', null, { onEvent: (e) => e.type === 'done' && resolve() });
    });
    await done;
    const switchVersion = vi.spyOn(backend, 'switchVersion');
    const { app } = await start(backend);
    app.setQuery('step 3 of the plan', 0);
    const row = await screen.findByTestId('search-hit', undefined, { timeout: 2000 });
    expect(row.dataset.messageId).toBe(third.id);
    expect(within(row).getByTestId('search-hit-version').textContent).toBe('on another version');
    await fireEvent.click(row);
    await waitFor(() => expect(switchVersion).toHaveBeenCalledWith(cid, third.id));
    await waitFor(() => expect(document.querySelector(`article[data-id="${third.id}"]`)).not.toBeNull(), { timeout: 3000 });
    expect(app.current.conversationId).toBe(cid);
    // The view follows that branch: the edited question is not on it.
    expect(app.current.messages.some((m) => m.model.content === 'Question 3, asked another way.')).toBe(false);
    await waitFor(() => expect([...document.querySelectorAll('mark.search-flash')].map((m) => m.textContent)).toEqual(['step 3 of the plan']));
  });
});

/** A list like ChatView's: messages with Markdown-like blocks and a folded tool card. */
const hosts: HTMLElement[] = [];
afterEach(() => hosts.splice(0).forEach((d) => d.remove()));

function host(html: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = html;
  document.body.append(div);
  hosts.push(div);
  return div;
}

function page(): HTMLElement {
  const div = host(`
    <div data-testid="message-list">
      <article><div class="markdown"><p>Alpha <strong>beta</strong> gamma</p><p>beta</p></div></article>
      <article><div class="tool-card">
        <button class="head" aria-expanded="false" aria-controls="body-1">get_time</button>
        <div class="body folded" id="body-1"><pre><span class="piece">{"zone": "BETA"}</span></pre></div>
      </div>
      <details><summary>Thought process</summary><div>a beta thought</div></details>
      <span class="katex"><span class="katex-mathml">beta</span><span class="katex-html">x</span></span></article>
    </div>`);
  const root = div.querySelector('[data-testid="message-list"]') as HTMLElement;
  const head = root.querySelector('.head') as HTMLElement;
  head.addEventListener('click', () => {
    head.setAttribute('aria-expanded', 'true');
    root.querySelector('#body-1')?.classList.remove('folded');
  });
  return root;
}

describe('finding in the rendered page', () => {
  it('counts case-insensitively, across inline markup, never across blocks, not in hidden TeX', () => {
    const root = page();
    expect(findMatches(root, 'BETA').map(text)).toEqual(['beta', 'beta', 'BETA', 'beta']);
    expect(findMatches(root, 'alpha beta').map(text)).toEqual(['Alpha beta']);
    // "gamma" ends one paragraph and "beta" starts the next: no match across them.
    expect(findMatches(root, 'gammabeta')).toHaveLength(0);
    expect(findMatches(root, 'gamma beta')).toHaveLength(0);
    expect(findMatches(root, '   ')).toHaveLength(0);
    expect(foldCase('İstanbul')).toHaveLength('İstanbul'.length);
  });

  it('opens the folded card and the closed details that hold a match', () => {
    const root = page();
    const ranges = findMatches(root, 'beta');
    const opened = ranges.reduce((n, r) => n + openAround(r, root), 0);
    expect(opened).toBe(2);
    expect(root.querySelector('.head')?.getAttribute('aria-expanded')).toBe('true');
    expect((root.querySelector('details') as HTMLDetailsElement).open).toBe(true);
  });

  it('marks every match and puts the page back exactly as it was, text nodes and all', () => {
    const root = page();
    const before = root.innerHTML;
    const firstText = root.querySelector('p')?.firstChild;
    const painter = createPainter('find-match', () => root);
    expect(painter.mutates).toBe(true); // jsdom has no CSS Custom Highlight API
    const ranges = findMatches(root, 'a');
    painter.paint(ranges, 1);
    const marks = [...root.querySelectorAll('mark.find-match')];
    expect(marks.length).toBe(ranges.length);
    expect(marks.filter((m) => m.classList.contains('current'))).toEqual([marks[1]]);
    // Moving the current one changes only a class.
    expect(painter.anchor(2)).toBe(marks[2]);
    painter.paint(ranges, 2);
    expect(root.querySelectorAll('mark.find-match').length).toBe(marks.length);
    expect(marks[2]?.classList.contains('current')).toBe(true);
    painter.clear();
    expect(root.innerHTML).toBe(before);
    expect(root.querySelector('p')?.firstChild).toBe(firstText);
  });

  it('uses the Highlight API where there is one, without touching the DOM', () => {
    const root = page();
    const before = root.innerHTML;
    const registry = new Map<string, { ranges: Range[]; priority: number }>();
    class FakeHighlight {
      ranges: Range[];
      priority = 0;
      constructor(...r: Range[]) {
        this.ranges = r;
      }
    }
    vi.stubGlobal('CSS', { highlights: registry, escape: (s: string) => s });
    vi.stubGlobal('Highlight', FakeHighlight);
    try {
      const painter = createPainter('find-match', () => root);
      expect(painter.mutates).toBe(false);
      const ranges = findMatches(root, 'beta');
      painter.paint(ranges, 0);
      expect(registry.get('find-match')?.ranges).toHaveLength(3);
      expect(registry.get('find-match-current')?.ranges).toHaveLength(1);
      expect(registry.get('find-match-current')?.priority).toBe(1);
      expect(root.innerHTML).toBe(before);
      painter.clear();
      expect(registry.size).toBe(0);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('stays fast on a 1,000-message conversation (measured, printed)', () => {
    const parts: string[] = ['<div data-testid="message-list">'];
    for (let i = 0; i < 1000; i++) {
      parts.push(
        i % 2 === 0
          ? `<article><div class="bubble">Question ${i}: what about the plan?</div></article>`
          : `<article><div class="markdown"><p>Answer ${i}: the <strong>plan</strong> works.</p><ul><li>one plan</li><li>two</li></ul><pre><code>let plan = ${i};</code></pre></div>` +
              `<div class="tool-card"><button class="head" aria-expanded="false" aria-controls="b${i}">get_time</button><div class="body folded" id="b${i}"><pre><span class="piece">{"plan": ${i}}</span></pre></div></div></article>`,
      );
    }
    parts.push('</div>');
    const div = host(parts.join(''));
    const root = div.querySelector('[data-testid="message-list"]') as HTMLElement;
    const t0 = performance.now();
    const ranges = findMatches(root, 'plan');
    const t1 = performance.now();
    const painter = createPainter('find-match', () => root);
    painter.paint(ranges, 0);
    const t2 = performance.now();
    painter.clear();
    const t3 = performance.now();
    expect(ranges).toHaveLength(500 + 500 * 4);
    console.log(`find over 1,000 messages (jsdom): ${ranges.length} matches found in ${(t1 - t0).toFixed(1)} ms, marked in ${(t2 - t1).toFixed(1)} ms, cleared in ${(t3 - t2).toFixed(1)} ms`);
  });
});

describe('Find in this chat', () => {
  async function openChat() {
    const backend = createFakeBackend({ tickMs: 0, longChat: 30 });
    const { app } = await start(backend);
    const id = (await backend.listConversations()).find((c) => c.title === LONG_CHAT_TITLE)?.id as string;
    await app.open(id);
    await screen.findAllByTestId('message');
    return app;
  }

  it('Ctrl+F opens it; Enter and Shift+Enter step and wrap; the count follows; Esc closes and clears', async () => {
    const app = await openChat();
    await fireEvent.keyDown(window, { key: 'f', ctrlKey: true });
    const field = (await screen.findByTestId('find-input')) as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(field));
    field.value = 'step 1';
    await fireEvent.input(field);
    const count = screen.getByTestId('find-count');
    // "step 1", "step 10", "step 11", ... in questions and answers of the 30 rendered... (the window is the last 20).
    await waitFor(() => expect(count.textContent).toMatch(/^1 of \d+$/));
    const total = Number(/of (\d+)/.exec(count.textContent ?? '')?.[1]);
    expect(total).toBe(document.querySelectorAll('mark.find-match').length);
    expect(document.querySelectorAll('mark.find-match.current')).toHaveLength(1);
    await fireEvent.keyDown(field, { key: 'Enter' });
    expect(count.textContent).toBe(`2 of ${total}`);
    await fireEvent.keyDown(field, { key: 'Enter', shiftKey: true });
    await fireEvent.keyDown(field, { key: 'Enter', shiftKey: true });
    expect(count.textContent).toBe(`${total} of ${total}`);
    await fireEvent.keyDown(field, { key: 'Enter' });
    expect(count.textContent).toBe(`1 of ${total}`);
    await fireEvent.keyDown(window, { key: 'F3' });
    expect(count.textContent).toBe(`2 of ${total}`);
    // Not every message is rendered: it says so and offers to search them all.
    expect(screen.getByTestId('find-partial').textContent).toContain('Search all 30');
    await fireEvent.keyDown(field, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('find-bar')).toBeNull());
    expect(document.querySelectorAll('mark.find-match')).toHaveLength(0);
    expect(app.findOpen).toBe(false);
  });

  it('opens the folded tool card holding a match, and "Search all" renders every message', async () => {
    const app = await openChat();
    app.openFind();
    const field = (await screen.findByTestId('find-input')) as HTMLInputElement;
    field.value = LONG_CHAT_WORD;
    await fireEvent.input(field);
    // The card is in the 4th message, not rendered yet.
    await waitFor(() => expect(screen.getByTestId('find-count').textContent).toBe('No matches'));
    await fireEvent.click(await screen.findByTestId('find-all'));
    // The folded card's one-line summary shows the start of its output too: the word is there and in the body.
    await waitFor(() => expect(screen.getByTestId('find-count').textContent).toMatch(/^1 of [12]$/), { timeout: 3000 });
    await fireEvent.keyDown(field, { key: 'Enter' });
    const card = document.querySelector('mark.find-match')?.closest('[data-testid="tool-card"]');
    expect(card?.querySelector('.head')?.getAttribute('aria-expanded')).toBe('true');
    expect(screen.getByTestId('message-list').dataset.shown).toBe('30');
  });

  it('is in the shortcut sheet', async () => {
    const app = await openChat();
    app.openShortcuts();
    await waitFor(() => expect(document.querySelector('[data-shortcut="find"]')).not.toBeNull());
    const row = document.querySelector('[data-shortcut="find"]') as HTMLElement;
    expect(row.textContent).toContain('Find in this chat');
    expect(row.textContent).toContain('Ctrl+F');
  });
});
