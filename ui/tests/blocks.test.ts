import { describe, expect, it, vi } from 'vitest';
import { BlockRenderer, splitBlocks } from '../src/lib/markdown/blocks';
import { renderMarkdown } from '../src/lib/markdown/render';

describe('splitBlocks', () => {
  it('splits at blank lines outside fences', () => {
    const blocks = splitBlocks('a\n\nb\n\n```\nx\n\ny\n```\n\nc', false);
    expect(blocks.map((b) => b.source)).toEqual(['a', 'b', '```\nx\n\ny\n```', 'c']);
    expect(blocks.map((b) => b.complete)).toEqual([true, true, true, false]);
  });

  it('does not split inside an unclosed fence or a $$ block', () => {
    expect(splitBlocks('```py\na\n\nb', false).map((b) => b.source)).toEqual(['```py\na\n\nb']);
    expect(splitBlocks('$$\na\n\nb\n$$\n\nc', false).map((b) => b.source)).toEqual(['$$\na\n\nb\n$$', 'c']);
  });

  it('keeps indented continuations (list items, nested code) with their block', () => {
    const text = '1. step\n\n   ```sh\n   npm i\n   ```\n\n2. next';
    expect(splitBlocks(text, true).map((b) => b.source)).toEqual(['1. step\n\n   ```sh\n   npm i\n   ```', '2. next']);
  });

  it('marks every block complete once the text is final', () => {
    expect(splitBlocks('a\n\nb', true).every((b) => b.complete)).toBe(true);
  });

  it('renders the same HTML as a whole-text render for simple documents', () => {
    const text = '# T\n\npara *x*\n\n- a\n- b\n\n```js\nlet a;\n```';
    const r = new BlockRenderer();
    expect(r.update(text, true).map((b) => b.html).join('')).toBe(renderMarkdown(text));
  });
});

describe('BlockRenderer while streaming', () => {
  it('renders each completed block once and re-renders only the growing block', () => {
    const render = vi.fn((src: string) => `<p>${src}</p>`);
    const r = new BlockRenderer(render);
    const answer = 'First paragraph.\n\nSecond paragraph.\n\nThird grows word by word';
    let text = '';
    const renderedSources: string[] = [];
    render.mockImplementation((src: string) => {
      renderedSources.push(src);
      return `<p>${src}</p>`;
    });
    for (const ch of answer) {
      text += ch;
      r.update(text, false);
    }
    const count = (s: string) => renderedSources.filter((x) => x === s).length;
    // Each distinct source is rendered once: the growing block's last render is reused when the
    // blank line completes it, and never again after that.
    expect(count('First paragraph.')).toBe(1);
    expect(count('Second paragraph.')).toBe(1);
    expect(new Set(renderedSources).size).toBe(renderedSources.length);
    // One render per update while the answer grew (a blank line adds none: nothing new to render).
    expect(renderedSources.length).toBeLessThan(Array.from(answer).length);
    const callsBefore = render.mock.calls.length;
    // More text in the last block re-renders that block only.
    r.update(text + '!', false);
    expect(render.mock.calls.length - callsBefore).toBe(1);
    expect(render.mock.calls.at(-1)?.[0]).toBe('Third grows word by word!');
  });

  it('does not re-render completed blocks on later updates', () => {
    const render = vi.fn((src: string) => `<p>${src}</p>`);
    const r = new BlockRenderer(render);
    r.update('A\n\nB\n\nC', false);
    expect(render).toHaveBeenCalledTimes(3);
    r.update('A\n\nB\n\nCD', false);
    r.update('A\n\nB\n\nCDE', false);
    expect(render.mock.calls.map((c) => c[0])).toEqual(['A', 'B', 'C', 'CD', 'CDE']);
    const html = r.update('A\n\nB\n\nCDE', true).map((b) => b.html);
    expect(html).toEqual(['<p>A</p>', '<p>B</p>', '<p>CDE</p>']);
    // The final pass renders nothing: every block's source was rendered already.
    expect(render).toHaveBeenCalledTimes(5);
    // Growing text re-renders only the last block.
    r.update('A\n\nB\n\nCDE\n\nF', false);
    expect(render.mock.calls.map((c) => c[0]).slice(5)).toEqual(['F']);
  });
});
