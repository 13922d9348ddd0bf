/**
 * Remote images are never loaded (issue 14): each shows as visible, escaped text with its alt text
 * and its address, never as an element that loads or links anything.
 */
import { describe, expect, it } from 'vitest';
import { BLOCKED_IMAGE_URL_CHARS, blockedImageText } from '../src/lib/markdown/links';
import { renderMarkdown } from '../src/lib/markdown/render';
import { sanitizeHtml } from '../src/lib/markdown/sanitize';

function dom(html: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = html;
  return div;
}

/** Nothing that can fetch, navigate or run: no img, a, script or handler, and no attribute holding the address. */
function expectNothingLoads(root: HTMLElement, host: string) {
  expect(root.querySelectorAll('img, a, script, iframe, object, embed, link, source, video, audio').length).toBe(0);
  for (const el of root.querySelectorAll('*')) {
    for (const a of el.getAttributeNames()) {
      expect(a.startsWith('on'), `${el.tagName} has ${a}`).toBe(false);
      expect(el.getAttribute(a) ?? '', `${el.tagName}[${a}]`).not.toContain(host);
    }
  }
}

const placeholders = (root: HTMLElement) => [...root.querySelectorAll('.image-blocked')].map((e) => e.textContent);

describe('an image that is not loaded shows where it points', () => {
  it('shows the alt text and the address', () => {
    const root = dom(renderMarkdown('Look: ![a cat](https://img.example/cat.png?user=alice&chat=42)'));
    expect(placeholders(root)).toEqual(['[image: a cat — https://img.example/cat.png?user=alice&chat=42]']);
    expectNothingLoads(root, 'img.example');
  });

  it('shows the address alone when there is no alt text', () => {
    const root = dom(renderMarkdown('![](https://img.example/x.png)'));
    expect(placeholders(root)).toEqual(['[image: https://img.example/x.png]']);
  });

  it('keeps quotes and markup in the alt text as text', () => {
    const root = dom(renderMarkdown('![x" onerror="alert(1)" <script>alert(2)</script>](https://evil.example/a.png)'));
    expect(placeholders(root)).toEqual(['[image: x" onerror="alert(1)" <script>alert(2)</script> — https://evil.example/a.png]']);
    expectNothingLoads(root, 'evil.example');
  });

  it('keeps quotes in the address as text (percent-encoded as markdown-it normalizes it)', () => {
    const root = dom(renderMarkdown(`![q](https://evil.example/a"b'c.png)`));
    const [text] = placeholders(root);
    expect(text).toMatch(/^\[image: q — https:\/\/evil\.example\/a(%22|")b'c\.png\]$/);
    expectNothingLoads(root, 'evil.example');
  });

  it('never turns a javascript: or SVG data address into anything but text', () => {
    const root = dom(renderMarkdown('![j](javascript:alert(1)) ![s](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)'));
    expect(root.textContent).toContain('javascript:alert(1)');
    expect(root.textContent).toContain('data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=');
    expectNothingLoads(root, 'javascript:');
    expect(root.querySelectorAll('img').length).toBe(0);
  });

  it('cuts a very long address and says how long it was', () => {
    const url = `https://evil.example/?d=${'A'.repeat(100_000)}`;
    const root = dom(renderMarkdown(`![leak](${url})`));
    const [text] = placeholders(root);
    expect(text).toBe(`[image: leak — ${url.slice(0, BLOCKED_IMAGE_URL_CHARS)}… (${url.length} characters)]`);
    expectNothingLoads(root, 'evil.example');
  });

  it('shows a remote <img> that reaches the sanitizer the same way', () => {
    const root = dom(sanitizeHtml(`<img src="https://evil.example/p.png?a=&quot;1" alt="say &quot;hi&quot; &amp; bye" onerror="alert(1)">`));
    expect(placeholders(root)).toEqual(['[image: say "hi" & bye — https://evil.example/p.png?a="1]']);
    expectNothingLoads(root, 'evil.example');
  });

  it('builds the text from the parts it has', () => {
    expect(blockedImageText('', '')).toBe('[image: ]');
    expect(blockedImageText('  alt ', '')).toBe('[image: alt]');
  });
});
