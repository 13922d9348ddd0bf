import { describe, expect, it } from 'vitest';
import { BlockRenderer } from '../src/lib/markdown/blocks';
import { appendedText, BlocksView } from '../src/lib/markdown/blocksDom';
import { renderMarkdown } from '../src/lib/markdown/render';

/** Streams `text` into a container in steps, as a live message does, and returns the container. */
function stream(text: string, step: number): { el: HTMLDivElement; textNodes: Set<Node> } {
  const el = document.createElement('div');
  const renderer = new BlockRenderer();
  const view = new BlocksView();
  const textNodes = new Set<Node>();
  for (let n = step; n < text.length + step; n += step) {
    const final = n >= text.length;
    view.update(
      el,
      renderer.update(text.slice(0, n), final).map((b) => b.html),
    );
    const last = el.querySelector('p:last-of-type')?.firstChild;
    if (last) textNodes.add(last);
  }
  return { el, textNodes };
}

/** What rendering the whole text at once gives. */
function whole(text: string): string {
  return new BlockRenderer()
    .update(text, true)
    .map((b) => b.html)
    .join('');
}

describe('appendedText', () => {
  it('finds plain text added at the end of the last text run', () => {
    expect(appendedText('<p>word1 word2</p>\n', '<p>word1 word2 word3</p>\n')).toEqual({ text: ' word3', closing: ['p'] });
    expect(appendedText('<ul>\n<li>a</li>\n</ul>\n', '<ul>\n<li>ab</li>\n</ul>\n')).toEqual({ text: 'b', closing: ['li', 'ul'] });
    expect(appendedText('<p>a <strong>b</strong></p>\n', '<p>a <strong>bc</strong></p>\n')).toEqual({ text: 'c', closing: ['strong', 'p'] });
  });

  it('refuses anything else', () => {
    expect(appendedText('<p>a</p>\n', '<p>a <em>b</em></p>\n')).toBeNull(); // new markup
    expect(appendedText('<p>a</p>\n', '<p>a &amp; b</p>\n')).toBeNull(); // an entity
    expect(appendedText('<p>a<br></p>\n', '<p>a<br>b</p>\n')).toBeNull(); // the old text ends in a tag
    expect(appendedText('<p>see https://exa</p>\n', '<p>see <a href="https://example.com">https://example.com</a></p>\n')).toBeNull();
    expect(appendedText('<p>a</p>\n', '<h1>a b</h1>\n')).toBeNull(); // other closing tags
    expect(appendedText('<p>a</p>\n', '<p>a</p>\n')).toBeNull(); // nothing added
  });
});

describe('BlocksView', () => {
  it('grows a paragraph in place: one text node, same HTML as rendering it whole', () => {
    const text = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const { el, textNodes } = stream(text, 37);
    expect(el.innerHTML).toBe(whole(text));
    expect(textNodes.size).toBe(1);
  });

  it('ends with the same HTML as rendering it whole, for Markdown of every kind', () => {
    const text = [
      '# Title',
      'Some **bold** and _italic_ text with `code` and a link https://example.com/x?y=1&z=2.',
      '- one\n- two\n  - nested',
      '1. first\n2. second',
      '> a quote\n> over lines',
      '```js\nconst a = 1 < 2 && "x";\n```',
      '| a | b |\n| - | - |\n| 1 | 2 |',
      'Last paragraph, with a line\nbreak and an emoji 😀 and <b>not html</b>.',
    ].join('\n\n');
    for (const step of [1, 3, 17, 64]) {
      expect(stream(text, step).el.innerHTML, `step ${step}`).toBe(whole(text));
    }
  });

  it('replaces and removes blocks when the text is edited or shrinks', () => {
    const el = document.createElement('div');
    const view = new BlocksView();
    view.update(el, ['<p>a</p>\n', '<p>b</p>\n', '<p>c</p>\n']);
    view.update(el, ['<p>a</p>\n', '<h2>x</h2>\n', '<p>c</p>\n']);
    expect(el.innerHTML).toBe('<p>a</p>\n<h2>x</h2>\n<p>c</p>\n');
    view.update(el, ['', '<p>z</p>\n']);
    expect(el.innerHTML).toBe('<p>z</p>\n');
    view.update(el, []);
    expect(el.innerHTML).toBe('');
    view.update(el, [renderMarkdown('<img src=x onerror=alert(1)>')]);
    expect(el.querySelector('img')).toBeNull();
  });
});
