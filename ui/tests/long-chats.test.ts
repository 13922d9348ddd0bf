/**
 * Long chats (issue 30, item 5): a chat still answering in the background is marked in the
 * sidebar, "Jump to latest" appears when the person scrolls up during an answer and returns to
 * following it, and tables keep words whole, keep their column alignment and scroll sideways. A
 * narrow page (item 7: a small window or a large zoom) lays the sidebar over the chat.
 */
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { beforeEach, describe, expect, it } from 'vitest';
import App from '../src/App.svelte';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { renderMarkdown } from '../src/lib/markdown/render';
import { AppState } from '../src/lib/state/app.svelte';
import { PrefsState } from '../src/lib/state/prefs.svelte';

const schedule = (cb: () => void) => setTimeout(cb, 0);

async function start() {
  const app = new AppState(createFakeBackend({ tickMs: 0, empty: true }), { schedule });
  render(App, { props: { app } });
  await app.init();
  return app;
}

async function send(text: string) {
  const el = screen.getByTestId('composer-input') as HTMLTextAreaElement;
  el.value = text;
  await fireEvent.input(el);
  await fireEvent.keyDown(el, { key: 'Enter' });
}

/** jsdom lays nothing out: the scroller gets a tall content and a short view. */
function tallScroller(): HTMLElement {
  const el = document.querySelector('.scroller') as HTMLElement;
  Object.defineProperty(el, 'scrollHeight', { configurable: true, get: () => 5000 });
  Object.defineProperty(el, 'clientHeight', { configurable: true, get: () => 500 });
  return el;
}

beforeEach(() => localStorage.clear());

describe('a chat still answering', () => {
  it('is marked in the sidebar while it answers in the background, and not once it has ended', async () => {
    const app = await start();
    // "approve" waits for the person: the answer keeps running.
    await send('Please approve the time lookup');
    await waitFor(() => expect(app.current.conversationId).not.toBeNull());
    const id = app.current.conversationId as string;
    await waitFor(() => expect(app.approvals.length).toBe(1));
    app.newChat();
    const marker = await screen.findByTestId('conversation-answering');
    expect(marker.closest('[data-testid="conversation-item"]')?.getAttribute('data-id')).toBe(id);
    expect(marker.getAttribute('aria-label')).toBe('Still answering');

    await app.resolveApproval(app.approvals[0]!.id, 'deny');
    await waitFor(() => expect(screen.queryByTestId('conversation-answering')).toBeNull());
  });
});

describe('jump to latest', () => {
  it('appears when scrolled up during an answer and returns to following it', async () => {
    const app = await start();
    await send('Please approve the time lookup');
    await waitFor(() => expect(app.approvals.length).toBe(1));
    const el = tallScroller();
    expect(screen.queryByTestId('jump-to-latest')).toBeNull();

    el.scrollTop = 1000;
    await fireEvent.scroll(el);
    const jump = await screen.findByTestId('jump-to-latest');
    expect(jump.textContent).toContain('Jump to latest');

    await fireEvent.click(jump);
    expect(el.scrollTop).toBe(5000);
    await waitFor(() => expect(screen.queryByTestId('jump-to-latest')).toBeNull());

    // Scrolled up again, then the answer ends: nothing to jump to.
    el.scrollTop = 0;
    await fireEvent.scroll(el);
    await screen.findByTestId('jump-to-latest');
    await app.resolveApproval(app.approvals[0]!.id, 'deny');
    await waitFor(() => expect(app.current.running).toBe(false));
    expect(screen.queryByTestId('jump-to-latest')).toBeNull();
  });
});

describe('a Markdown table', () => {
  const table = '| Name | Count | Note |\n|:-----|------:|:----:|\n| apples | 12 | fresh |\n';

  it('is inside a wrapper that scrolls sideways, with the column alignment as classes', () => {
    const html = renderMarkdown(table);
    const box = document.createElement('div');
    box.innerHTML = html;
    const wrap = box.querySelector('.table-wrap');
    expect(wrap?.firstElementChild?.tagName).toBe('TABLE');
    const cls = (sel: string) => [...box.querySelectorAll(sel)].map((c) => c.className);
    expect(cls('th')).toEqual(['align-left', 'align-right', 'align-center']);
    expect(cls('td')).toEqual(['align-left', 'align-right', 'align-center']);
    expect(box.querySelector('[style]')).toBeNull();
  });
});

describe('a narrow page', () => {
  it('lays the sidebar over the chat when the window divided by the zoom is under 560 px', async () => {
    Object.defineProperty(window, 'innerWidth', { configurable: true, value: 760 });
    const prefs = new PrefsState({ theme: 'system', fontSize: 'default', zoom: 1, sendKey: 'enter' });
    const app = new AppState(createFakeBackend({ tickMs: 0, empty: true }), { schedule, prefs });
    render(App, { props: { app } });
    await app.init();
    const layout = document.querySelector('.layout') as HTMLElement;
    expect(layout.classList.contains('narrow')).toBe(false);
    prefs.zoom = 2;
    await waitFor(() => expect(layout.classList.contains('narrow')).toBe(true));
    prefs.zoom = 1;
    Object.defineProperty(window, 'innerWidth', { configurable: true, value: 500 });
    window.dispatchEvent(new Event('resize'));
    await waitFor(() => expect(layout.classList.contains('narrow')).toBe(true));
    Object.defineProperty(window, 'innerWidth', { configurable: true, value: 1024 });
    window.dispatchEvent(new Event('resize'));
  });
});
