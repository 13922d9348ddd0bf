/**
 * Fenced code blocks: the language label and the Copy button, for whole answers (reopened) and
 * answers that stream in, with the copied text exactly the code.
 */
import { fireEvent, render } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import Markdown from '../src/lib/components/Markdown.svelte';
import { BlockRenderer } from '../src/lib/markdown/blocks';
import { BlocksView } from '../src/lib/markdown/blocksDom';
import { codeText, COPIED_MS, decorateCodeBlocks } from '../src/lib/markdown/codeCopy';

let writeText: ReturnType<typeof vi.fn<(text: string) => Promise<void>>>;

beforeEach(() => {
  writeText = vi.fn<(text: string) => Promise<void>>(() => Promise.resolve());
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
});

afterEach(() => {
  vi.useRealTimers();
  Reflect.deleteProperty(navigator, 'clipboard');
});

const buttons = (root: ParentNode) => [...root.querySelectorAll<HTMLButtonElement>('pre.code-block > button.code-copy')];

/** Lets the click handler's promise chain run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

function renderWhole(text: string) {
  const view = render(Markdown, { props: { text, testid: 'md' } });
  return view.getByTestId('md');
}

describe('a whole (reopened) answer', () => {
  it('labels each block with its language and names its button after it', () => {
    const root = renderWhole('Intro\n\n```python\nprint("hi")\n```\n\n```\nplain\n```\n\n```Rust title="x"\nfn main() {}\n```');
    const pres = [...root.querySelectorAll('pre.code-block')];
    expect(pres).toHaveLength(3);
    expect(pres.map((p) => p.querySelector('.code-lang')?.textContent)).toEqual(['python', '', 'rust']);
    expect(buttons(root).map((b) => b.getAttribute('aria-label'))).toEqual(['Copy python code', 'Copy code', 'Copy rust code']);
    for (const b of buttons(root)) {
      expect(b.type).toBe('button');
      expect(b.tabIndex).toBe(0);
      // The visible word is generated content: "Copy" never joins the answer's text.
      expect(b.textContent).toBe('');
    }
    // The button sits before the code, never inside it.
    expect(root.querySelector('code button')).toBeNull();
  });

  it('copies exactly the code, not the highlighted HTML, and says so for a moment', async () => {
    vi.useFakeTimers();
    const code = 'def f(x):\n    return x * 2  # double\n\n\nprint(f(21))';
    const root = renderWhole(`Some text.\n\n\`\`\`python\n${code}\n\`\`\`\n\nMore text.`);
    expect(root.querySelector('pre.hljs span[class^="hljs-"]')).not.toBeNull();
    const [button] = buttons(root);
    if (!button) throw new Error('no copy button');
    await fireEvent.click(button);
    await vi.advanceTimersByTimeAsync(0);
    expect(writeText).toHaveBeenCalledTimes(1);
    expect(writeText).toHaveBeenCalledWith(code);
    expect(button.dataset.state).toBe('copied');
    expect(document.querySelector('[data-testid="announcer"]')?.textContent).toBe('Copied');
    await vi.advanceTimersByTimeAsync(COPIED_MS + 10);
    expect(button.dataset.state).toBe('idle');
  });

  it('copies HTML-like code as the characters written, entities and all', async () => {
    const code = '<div class="x" onclick="alert(1)">&amp; &lt;b&gt; </div>\n<script>alert("x")</script>\n\'quotes\' & <!-- c -->';
    const root = renderWhole(`\`\`\`html\n${code}\n\`\`\``);
    expect(root.querySelector('script, div.x')).toBeNull();
    const [button] = buttons(root);
    await fireEvent.click(button as HTMLButtonElement);
    await settle();
    expect(writeText).toHaveBeenCalledWith(code);
  });

  it('copies a block in an unregistered language and one inside a list item', async () => {
    const root = renderWhole('1. Install:\n\n   ```zig\n   const x = 1;\n   ```\n\n2. Run it\n\n~~~\na <b> c\n~~~');
    const all = buttons(root);
    expect(all).toHaveLength(2);
    await fireEvent.click(all[0] as HTMLButtonElement);
    await fireEvent.click(all[1] as HTMLButtonElement);
    await settle();
    expect(writeText.mock.calls.map((c) => c[0])).toEqual(['const x = 1;', 'a <b> c']);
  });

  it('when the clipboard refuses, selects the code and says how to copy it', async () => {
    writeText.mockRejectedValueOnce(new DOMException('Write permission denied.', 'NotAllowedError'));
    const root = renderWhole('```sh\nnpm ci\n```');
    const [button] = buttons(root);
    await fireEvent.click(button as HTMLButtonElement);
    await settle();
    expect(button?.dataset.state).toBe('failed');
    expect(button?.title).toMatch(/selected, press (Ctrl\+C|⌘C)/);
    expect(document.getSelection()?.toString()).toBe('npm ci\n');
    expect(button?.getAttribute('aria-label')).toBe('Copy sh code');
  });

  it('works without any clipboard API at all', async () => {
    Reflect.deleteProperty(navigator, 'clipboard');
    const root = renderWhole('```\nx\n```');
    const [button] = buttons(root);
    await fireEvent.click(button as HTMLButtonElement);
    await settle();
    expect(button?.dataset.state).toBe('failed');
  });

  it('makes no button from model text: only our code adds one per fenced block', () => {
    const md = [
      '<button class="code-copy" aria-label="Copy python code">Copy</button>',
      '',
      '<pre class="code-block"><div class="code-lang">py</div><code>x</code></pre>',
      '',
      '    indented code is not fenced',
      '',
      '```js',
      'const b = "<button class=\\"code-copy\\">";',
      '```',
    ].join('\n');
    const root = renderWhole(md);
    expect(root.querySelectorAll('button')).toHaveLength(1);
    expect(buttons(root)).toHaveLength(1);
    expect(root.querySelectorAll('pre.code-block')).toHaveLength(1);
    expect(root.textContent).toContain('<button class="code-copy"');
  });
});

describe('an answer that streams in', () => {
  const answer = [
    'First, install it:',
    '',
    '```bash',
    'npm install --save-dev "left-pad@<2" && echo ok',
    '```',
    '',
    'Then write this:',
    '',
    '```ts',
    'export const pad = (s: string, n: number): string => s.padStart(n, " ");',
    'console.log(pad("a", 3) < "b");',
    '```',
    '',
    'And the **end** of the answer.',
  ].join('\n');

  it('gives each block one button per frame, and a finished block keeps the same one while later text streams', () => {
    const el = document.createElement('div');
    const view = new BlocksView(decorateCodeBlocks);
    const renderer = new BlockRenderer();
    let first: HTMLButtonElement | null = null;
    let firstCode: Element | null = null;
    for (let n = 1; n <= answer.length; n++) {
      view.update(el, renderer.update(answer.slice(0, n), false).map((b) => b.html));
      const pres = el.querySelectorAll('pre.code-block');
      expect(buttons(el).length, `frame ${n}`).toBe(pres.length);
      for (const pre of pres) expect(pre.querySelectorAll('button').length, `frame ${n}`).toBe(1);
      const closed = answer.slice(0, n).includes('echo ok\n```\n\n');
      if (closed && first === null) {
        first = buttons(el)[0] ?? null;
        firstCode = el.querySelector('pre.code-block code');
      }
      if (first) {
        expect(buttons(el)[0], `frame ${n}: the first block's button was made again`).toBe(first);
        expect(el.querySelector('pre.code-block code')).toBe(firstCode);
      }
    }
    view.update(el, renderer.update(answer, true).map((b) => b.html));
    expect(buttons(el)[0]).toBe(first);
    expect(buttons(el).map((b) => b.getAttribute('aria-label'))).toEqual(['Copy bash code', 'Copy ts code']);
    expect(buttons(el).map((b) => codeText(b.nextElementSibling as Element))).toEqual([
      'npm install --save-dev "left-pad@<2" && echo ok',
      'export const pad = (s: string, n: number): string => s.padStart(n, " ");\nconsole.log(pad("a", 3) < "b");',
    ]);
  });

  it('keeps appending to the code of a block that is still growing, under its button', () => {
    const el = document.createElement('div');
    const view = new BlocksView(decorateCodeBlocks);
    const renderer = new BlockRenderer();
    const step = (t: string) => view.update(el, renderer.update(t, false).map((b) => b.html));
    step('```py\nprint');
    const text = el.querySelector('pre code')?.firstChild;
    const button = buttons(el)[0];
    expect(button).toBeDefined();
    step('```py\nprint(1)');
    step('```py\nprint(1)\nprint');
    expect(el.querySelector('pre code')?.firstChild).toBe(text);
    expect(buttons(el)).toEqual([button]);
    expect(codeText(el.querySelector('pre code') as Element)).toBe('print(1)\nprint');
  });

  it('in the component: copy works on a block while the answer goes on streaming, and after it ends', async () => {
    const cut = answer.indexOf('Then write');
    const view = render(Markdown, { props: { text: answer.slice(0, cut), streaming: true, testid: 'md' } });
    const root = view.getByTestId('md');
    const [button] = buttons(root);
    if (!button) throw new Error('no copy button');
    for (let n = cut + 1; n <= answer.length; n += 7) {
      await view.rerender({ text: answer.slice(0, n), streaming: true, testid: 'md' });
      expect(buttons(root)[0]).toBe(button);
    }
    await fireEvent.click(button);
    await settle();
    expect(writeText).toHaveBeenLastCalledWith('npm install --save-dev "left-pad@<2" && echo ok');
    await view.rerender({ text: answer, streaming: false, testid: 'md' });
    expect(buttons(root)).toHaveLength(2);
    expect(buttons(root)[0]).toBe(button);
    await fireEvent.click(buttons(root)[1] as HTMLButtonElement);
    await settle();
    expect(writeText).toHaveBeenLastCalledWith('export const pad = (s: string, n: number): string => s.padStart(n, " ");\nconsole.log(pad("a", 3) < "b");');
  });
});
