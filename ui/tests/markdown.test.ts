import { beforeAll, describe, expect, it } from 'vitest';
import { loadMath } from '../src/lib/markdown/math';
import { renderMarkdown } from '../src/lib/markdown/render';
import { isSafeMathStyle, sanitizeHtml } from '../src/lib/markdown/sanitize';

// KaTeX is loaded on first use in the app; these tests look at math as it renders once it is.
beforeAll(() => loadMath());

/** Parses rendered HTML so assertions look at the DOM a webview would build, not at strings. */
function dom(md: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = renderMarkdown(md);
  return div;
}

/** Nothing in the output can run script, load a resource or navigate anywhere unsafe. */
function expectInert(root: HTMLElement) {
  expect(root.querySelectorAll('script, iframe, object, embed, form, style, link, meta, base, foreignObject, use, animate, set').length).toBe(0);
  for (const el of root.querySelectorAll('*')) {
    for (const attr of el.getAttributeNames()) {
      expect(attr.startsWith('on'), `${el.tagName} has ${attr}`).toBe(false);
      expect(attr, `${el.tagName} keeps ${attr}`).not.toBe('target');
      if (attr === 'style') expect(el.closest('.katex'), 'style outside KaTeX').not.toBeNull();
    }
    const href = el.getAttribute('href') ?? el.getAttribute('xlink:href');
    if (href !== null) expect(href).toMatch(/^(https?:|mailto:)/i);
    const src = el.getAttribute('src');
    if (src !== null) expect(src).toMatch(/^data:image\/(png|gif|jpe?g|webp);base64,/);
  }
  for (const img of root.querySelectorAll('img')) expect(img.getAttribute('src') ?? '').not.toMatch(/^https?:|^\/\//i);
}

describe('the Markdown pipeline renders hostile input inert', () => {
  it.each([
    ['raw script', '<script>alert(1)</script>'],
    ['img onerror', '<img src=x onerror=alert(1)>'],
    ['iframe', '<iframe src="https://evil.example"></iframe>'],
    ['svg script', '<svg><script>alert(1)</script></svg>'],
    ['svg onload', '<svg onload=alert(1)>'],
    ['anchor with target', '<a href="https://x" target=_top>x</a>'],
    ['object', '<object data="x.swf"></object>'],
    ['form', '<form action="https://evil"><button>go</button></form>'],
    ['style tag', '<style>body{display:none}</style>'],
  ])('%s stays text', (_name, payload) => {
    const root = dom(payload);
    expectInert(root);
    // html: false -> the payload is shown as literal text, never parsed as markup.
    expect(root.textContent).toContain(payload.slice(0, 6));
  });

  it.each([
    ['javascript:', '[x](javascript:alert(1))'],
    ['mixed case', '[x](JaVaScRiPt:alert(1))'],
    ['tab inside', '[x](java\tscript:alert(1))'],
    ['entity encoded', '[x](&#106;avascript:alert(1))'],
    ['data: html', '[x](data:text/html,<script>alert(1)</script>)'],
    ['data: html base64', '[x](data:text/html;base64,PHNjcmlwdD4=)'],
    ['vbscript:', '[x](vbscript:msgbox(1))'],
    ['file:', '[x](file:///etc/passwd)'],
    ['autolink javascript', '<javascript:alert(1)>'],
    ['reference link', '[x][1]\n\n[1]: javascript:alert(1)'],
  ])('a %s link keeps no dangerous href', (_name, payload) => {
    const root = dom(payload);
    expectInert(root);
    for (const a of root.querySelectorAll('a')) expect(a.getAttribute('href') ?? '').toMatch(/^(https?:|mailto:)/);
  });

  it('keeps safe links with rel="noopener noreferrer" and no target', () => {
    const root = dom('[site](https://example.com/a) and <https://example.org> and mail@example.com');
    const links = [...root.querySelectorAll('a')];
    expect(links.map((a) => a.getAttribute('href'))).toEqual(['https://example.com/a', 'https://example.org', 'mailto:mail@example.com']);
    for (const a of links) {
      expect(a.getAttribute('rel')).toBe('noopener noreferrer');
      expect(a.hasAttribute('target')).toBe(false);
    }
  });

  it('linkifies bare URLs', () => {
    expect(dom('see https://example.com/x today').querySelector('a')?.getAttribute('href')).toBe('https://example.com/x');
  });

  it('never renders a remote image: a placeholder with the alt text and the address as text instead', () => {
    const root = dom('![secret plans](https://evil.example/?q=secret)');
    expect(root.querySelector('img')).toBeNull();
    expect(root.textContent).toContain('[image: secret plans — https://evil.example/?q=secret]');
    // The address is text only: no attribute (src, href, title...) carries it.
    for (const el of root.querySelectorAll('*')) for (const a of el.getAttributeNames()) expect(el.getAttribute(a)).not.toContain('evil.example');
    expectInert(root);
  });

  it('blocks protocol-relative and reference-style remote images too', () => {
    const root = dom('![a](//evil.example/x.png) ![b][r]\n\n[r]: http://evil.example/y.png');
    expect(root.querySelector('img')).toBeNull();
    expect(root.textContent).toContain('[image: a — //evil.example/x.png]');
    expect(root.textContent).toContain('[image: b — http://evil.example/y.png]');
  });

  it('renders KaTeX and keeps \\href{javascript:...} inert', () => {
    const root = dom('Math $x^2$ and $\\href{javascript:alert(1)}{click}$ and $$\\url{javascript:alert(2)}$$');
    expect(root.querySelector('.katex')).not.toBeNull();
    expectInert(root);
    expect(root.querySelector('a')).toBeNull();
  });

  it('keeps the SVG parts of KaTeX output (the radical of \\sqrt)', () => {
    const root = dom('$\\sqrt{b^2 - 4ac}$');
    const svg = root.querySelector('.katex svg');
    expect(svg?.getAttribute('viewBox')).toBeTruthy();
    expect(svg?.querySelector('path')?.getAttribute('d')).toMatch(/^M/);
    expectInert(root);
  });

  it('renders inline and display math', () => {
    const root = dom('Inline $a+b$.\n\n$$\n\\frac{1}{2}\n$$');
    expect(root.querySelectorAll('.katex').length).toBe(2);
    expect(root.querySelector('.katex-display')).not.toBeNull();
    expectInert(root);
  });

  it('does not read prices as math', () => {
    const root = dom('It costs $5 and $10 today.');
    expect(root.querySelector('.katex')).toBeNull();
    expect(root.textContent).toContain('$5 and $10');
  });

  it('keeps only KaTeX-shaped style declarations', () => {
    expect(isSafeMathStyle('height:0.6833em;vertical-align:-0.25em;')).toBe(true);
    expect(isSafeMathStyle('color:#cc0000;')).toBe(true);
    expect(isSafeMathStyle('background:url(https://evil.example/x)')).toBe(false);
    expect(isSafeMathStyle('background-image:url(x)')).toBe(false);
    expect(isSafeMathStyle('position:fixed;top:0')).toBe(false);
    expect(isSafeMathStyle('width:expression(alert(1))')).toBe(false);
    expect(isSafeMathStyle('')).toBe(false);
  });

  it('highlights a closed fenced code block', () => {
    const root = dom('```js\nconst x = 1;\n```');
    const pre = root.querySelector('pre');
    expect(pre?.classList.contains('hljs')).toBe(true);
    expect(root.querySelector('pre code span[class^="hljs-"]')).not.toBeNull();
  });

  it('leaves an unclosed fence (still streaming) as plain text', () => {
    const root = dom('```js\nconst x = 1;');
    const pre = root.querySelector('pre');
    expect(pre).not.toBeNull();
    expect(pre?.classList.contains('hljs')).toBe(false);
    expect(pre?.classList.contains('code-open')).toBe(true);
    expect(root.querySelector('pre code span')).toBeNull();
    expect(root.querySelector('pre code')?.textContent).toBe('const x = 1;');
  });

  it('escapes code content and renders no markup from it', () => {
    const root = dom('```html\n<script>alert(1)</script>\n```');
    expectInert(root);
    expect(root.querySelector('pre code')?.textContent).toContain('<script>alert(1)</script>');
  });

  it('renders ordinary Markdown', () => {
    const root = dom('# Title\n\n**bold** and *it* and `code`\n\n- a\n- b\n\n| h |\n|---|\n| c |');
    expect(root.querySelector('h1')?.textContent).toBe('Title');
    expect(root.querySelector('strong')?.textContent).toBe('bold');
    expect(root.querySelectorAll('li').length).toBe(2);
    expect(root.querySelector('table td')?.textContent).toBe('c');
  });
});

describe('sanitizeHtml: the last pass, whatever a renderer plugin might emit', () => {
  function clean(html: string): HTMLElement {
    const div = document.createElement('div');
    div.innerHTML = sanitizeHtml(html);
    return div;
  }

  it.each([
    '<script>alert(1)</script>',
    '<img src=x onerror=alert(1)>',
    '<img src="https://evil.example/?q=secret" alt="s">',
    '<iframe src="https://evil.example"></iframe>',
    '<svg><script>alert(1)</script></svg>',
    '<svg onload=alert(1)><circle r="1"/></svg>',
    '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
    '<svg><use href="https://evil.example/s.svg#x"/></svg>',
    '<svg><foreignObject><iframe src="https://evil"></iframe></foreignObject></svg>',
    '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
    '<a href="JaVaScRiPt:alert(1)">x</a>',
    '<a href="java&#x09;script:alert(1)">x</a>',
    '<a href="&#106;avascript:alert(1)">x</a>',
    '<a href="data:text/html,<script>alert(1)</script>">x</a>',
    '<a href="vbscript:msgbox(1)">x</a>',
    '<a href="/relative">x</a>',
    '<a href="https://x" target="_top">x</a>',
    '<form action="https://evil"><input name="q"><button>go</button></form>',
    '<object data="x"></object><embed src="x">',
    '<p style="background:url(https://evil.example/x)">styled</p>',
    '<span class="katex"><span style="background:url(https://evil.example/x)">m</span></span>',
    '<div id="app" name="x">clobber</div>',
  ])('%s', (html) => {
    const root = clean(html);
    expectInert(root);
    expect(root.querySelector('[id], [name]')).toBeNull();
  });

  it('keeps safe links with rel and KaTeX layout styles', () => {
    const root = clean('<a href="https://example.com">x</a><span class="katex"><span style="height:1em;vertical-align:-0.25em;">m</span></span>');
    expect(root.querySelector('a')?.getAttribute('rel')).toBe('noopener noreferrer');
    expect(root.querySelector('.katex span')?.getAttribute('style')).toBe('height:1em;vertical-align:-0.25em;');
  });

  it('turns a remote <img> into the placeholder', () => {
    const root = clean('<p><img src="https://evil.example/a.png" alt="chart"></p>');
    expect(root.querySelector('img')).toBeNull();
    expect(root.textContent).toBe('[image: chart — https://evil.example/a.png]');
  });
});
