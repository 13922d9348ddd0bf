/**
 * The Markdown engine and the Settings screen are chunks of their own, loaded on first use: the
 * start screen spends no memory on them. Every other test file runs with both loaded (setup.ts);
 * here each test starts from fresh modules, as the app does when it starts (the testing library
 * too, so that it mounts with the same fresh Svelte runtime as the components).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

beforeEach(() => {
  vi.resetModules();
  localStorage.clear();
});

// The fresh testing library is not the one whose automatic cleanup is registered.
afterEach(async () => (await import('@testing-library/svelte')).cleanup());

function dom(html: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = html;
  return div;
}

const TEXT = 'A **bold** <b>tag</b> and\n  two spaces.\n\n```js\nlet a = 1;\n```';

describe('the Markdown engine, before and after it has loaded', () => {
  it('shows text as written until the engine arrives, then renders it again as Markdown', async () => {
    const engine = await import('../src/lib/markdown/engine');
    const { BlockRenderer } = await import('../src/lib/markdown/blocks');
    expect(engine.markdownLoaded()).toBe(false);

    const renderer = new BlockRenderer();
    const first = renderer.update(TEXT, true);
    expect(first.map((b) => engine.hasPendingMarkdown(b.html))).toEqual([true, true]);
    const before = dom(first.map((b) => b.html).join(''));
    expect(before.querySelector('strong, b, pre')).toBeNull(); // the text is text, never markup
    expect(before.textContent).toContain('A **bold** <b>tag</b> and\n  two spaces.');
    expect(engine.markdownToPlainTextNow('**x**')).toBe('**x**');

    await engine.loadMarkdown(); // rendering pending text started the load
    expect(engine.markdownLoaded()).toBe(true);
    expect(first.map((b) => engine.needsMarkdownRender(b.html))).toEqual([true, true]);
    const second = renderer.update(TEXT, true);
    expect(second.some((b) => engine.hasPendingMarkdown(b.html))).toBe(false);
    expect(second).toEqual(new BlockRenderer().update(TEXT, true));
    const after = dom(second.map((b) => b.html).join(''));
    expect(after.querySelector('strong')?.textContent).toBe('bold');
    expect(after.querySelector('b')).toBeNull(); // raw HTML is still escaped
    expect(after.querySelector('pre code')?.textContent).toContain('let a = 1;');
    expect(engine.markdownToPlainTextNow('**x**')).toBe('x');
  });

  it('does not take text that merely starts like the placeholder for pending text', async () => {
    const engine = await import('../src/lib/markdown/engine');
    await engine.loadMarkdown();
    const html = engine.renderMarkdownNow('<p class="markdown-pending">hello</p>');
    expect(engine.hasPendingMarkdown(html)).toBe(false);
  });

  it('a Markdown view renders again by itself once the engine arrives', async () => {
    const { render, waitFor } = await import('@testing-library/svelte');
    const { default: Markdown } = await import('../src/lib/components/Markdown.svelte');
    const engine = await import('../src/lib/markdown/engine');
    const { container } = render(Markdown, { props: { text: TEXT } });
    expect(container.querySelector('p.markdown-pending')?.textContent).toContain('**bold**');
    await waitFor(() => expect(container.querySelector('strong')?.textContent).toBe('bold'));
    expect(container.querySelector('.markdown-pending')).toBeNull();
    expect(engine.markdownLoaded()).toBe(true);
  });
});

async function startApp() {
  const tl = await import('@testing-library/svelte');
  const { default: App } = await import('../src/App.svelte');
  const { AppState } = await import('../src/lib/state/app.svelte');
  const { createFakeBackend } = await import('../src/lib/ipc/fake');
  const engine = await import('../src/lib/markdown/engine');
  const lazy = await import('../src/lib/components/settings/lazy');
  const app = new AppState(createFakeBackend(), { schedule: (cb: () => void) => setTimeout(cb, 0) });
  tl.render(App, { props: { app } });
  await app.init();
  return { app, engine, lazy, ...tl };
}

describe('the app loads them when they are needed, not at start', () => {
  it('the start screen loads neither; writing a message loads the engine', async () => {
    const { engine, lazy, screen, fireEvent, waitFor } = await startApp();
    await new Promise((r) => setTimeout(r, 20));
    expect(engine.markdownLoaded()).toBe(false);
    expect(lazy.settingsView()).toBeNull();

    const input = screen.getByTestId('composer-input') as HTMLTextAreaElement;
    input.value = 'H';
    await fireEvent.input(input);
    await waitFor(() => expect(engine.markdownLoaded()).toBe(true));
  });

  it('opening a chat waits for the engine, so its messages first show rendered', async () => {
    const { app, engine, screen, waitFor } = await startApp();
    const first = app.conversations[0];
    expect(first).toBeDefined();
    await app.open(first!.id);
    expect(engine.markdownLoaded()).toBe(true);
    expect(app.current.messages.length).toBeGreaterThan(0);
    await waitFor(() => expect(screen.getAllByTestId('message-text').length).toBeGreaterThan(0));
    expect(document.querySelector('.markdown-pending')).toBeNull();
  });

  it('Settings opens once its chunk has arrived', async () => {
    const { lazy, screen, fireEvent } = await startApp();
    await fireEvent.click(screen.getByTestId('open-settings'));
    expect(await screen.findByTestId('settings-nav')).toBeTruthy();
    expect(lazy.settingsView()).not.toBeNull();
  });
});
