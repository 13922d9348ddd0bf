/**
 * KaTeX is a chunk of its own, loaded the first time math is rendered. This file starts with it
 * not loaded (Vitest gives each test file its own modules).
 */
import { describe, expect, it } from 'vitest';
import { BlockRenderer } from '../src/lib/markdown/blocks';
import { hasPendingMath, loadMath, mathLoaded, needsMathRender } from '../src/lib/markdown/math';
import { renderMarkdown } from '../src/lib/markdown/render';

function dom(html: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = html;
  return div;
}

describe('math before and after KaTeX has loaded', () => {
  it('shows the escaped TeX source until KaTeX arrives, then renders the block again as math', async () => {
    expect(mathLoaded()).toBe(false);
    const r = new BlockRenderer();
    const text = 'Before.\n\nInline $x^2 <b>$ and\n\n$$\n\\frac{1}{2}\n$$';

    const first = r.update(text, true);
    const root = dom(first.map((b) => b.html).join(''));
    expect(root.querySelector('.katex')).toBeNull();
    const pending = [...root.querySelectorAll('.math-pending')].map((e) => e.textContent);
    expect(pending).toEqual(['$x^2 <b>$', '$$\\frac{1}{2}\n$$']);
    expect(root.querySelector('b')).toBeNull(); // the source is text, never markup
    expect(first.map((b) => hasPendingMath(b.html))).toEqual([false, true, true]);

    await loadMath();
    expect(mathLoaded()).toBe(true);
    expect(first.map((b) => needsMathRender(b.html))).toEqual([false, true, true]);

    const second = r.update(text, true);
    expect(second[0]?.html).toBe(first[0]?.html);
    const after = dom(second.map((b) => b.html).join(''));
    expect(after.querySelectorAll('.katex')).toHaveLength(2);
    expect(after.querySelector('.math-pending')).toBeNull();
    expect(second.map((b) => b.html).join('')).toBe(renderMarkdown(text));
  });

  it('does not treat text that mentions the placeholder as pending math', () => {
    const html = renderMarkdown('`<span class="math-pending">` and <span class="math-pending">x</span>');
    expect(hasPendingMath(html)).toBe(false);
  });
});
