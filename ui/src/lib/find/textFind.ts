/**
 * Finding text in what the page rendered (Find in this chat, and the words a search result opens
 * on). It reads the text nodes under a root in document order, as the person sees them: Markdown
 * output, code, tool cards (folded ones too: their bodies stay in the page, hidden), sub-agent
 * runs. Matching is case-insensitive, within one block (a match never joins the end of one
 * paragraph to the start of the next) and across inline markup (`foo **bar**` matches "foo bar").
 *
 * Invariant: finding never changes the page. Painting uses the CSS Custom Highlight API where the
 * engine has it (WebKitGTK 2.42+, every current browser): no node is added, split or moved, so the
 * Markdown renderer's append-in-place (blocksDom.ts) and streaming are untouched. Without it
 * (jsdom), matches are wrapped in `<mark>` and `clear` puts every text node back as it was, the
 * original node keeping its identity.
 */

/** Subtrees never searched: not visible text (KaTeX's MathML copy holds the TeX source). */
const SKIP = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'SVG', 'TEXTAREA', 'INPUT', 'SELECT']);
const SKIP_CLASSES = ['katex-mathml'];

/** Elements that do not start a new block of text. */
const INLINE = new Set(['A', 'ABBR', 'B', 'BDI', 'BDO', 'CITE', 'CODE', 'DEL', 'DFN', 'EM', 'I', 'INS', 'KBD', 'MARK', 'Q', 'S', 'SAMP', 'SMALL', 'STRONG', 'SUB', 'SUP', 'TIME', 'U', 'VAR', 'WBR']);

function skipped(el: Element): boolean {
  if (SKIP.has(el.tagName.toUpperCase())) return true;
  if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('data-find-skip')) return true;
  for (const c of SKIP_CLASSES) if (el.classList.contains(c)) return true;
  return false;
}

/** The nearest ancestor that is not inline (a `span` is inline unless it is a tool card's block piece or KaTeX). */
function blockOf(node: Node, root: Element): Node {
  let el = node.parentElement;
  while (el && el !== root) {
    const tag = el.tagName.toUpperCase();
    if (!(INLINE.has(tag) || (tag === 'SPAN' && !el.classList.contains('piece')))) return el;
    el = el.parentElement;
  }
  return root;
}

/** Lowercase with the same length (a character whose lowercase is longer stays as it is), so offsets carry over. */
export function foldCase(s: string): string {
  const lower = s.toLowerCase();
  if (lower.length === s.length) return lower;
  let out = '';
  for (const ch of s) {
    const l = ch.toLowerCase();
    out += l.length === ch.length ? l : ch;
  }
  return out;
}

interface TextIndex {
  /** The folded text of every node, blocks separated by '\n'. */
  text: string;
  nodes: Text[];
  /** Where each node's text starts in `text`. */
  starts: number[];
}

function indexText(root: Element): TextIndex {
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, 0x1 | 0x4 /* SHOW_ELEMENT | SHOW_TEXT */, {
    acceptNode: (n) => (n.nodeType === 1 && skipped(n as Element) ? 2 /* FILTER_REJECT */ : 1 /* FILTER_ACCEPT */),
  });
  const parts: string[] = [];
  const nodes: Text[] = [];
  const starts: number[] = [];
  let length = 0;
  let block: Node | null = null;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.nodeType !== 3) continue;
    const data = (n as Text).data;
    if (data === '') continue;
    const b = blockOf(n, root);
    if (block !== null && b !== block) {
      parts.push('\n');
      length += 1;
    }
    block = b;
    nodes.push(n as Text);
    starts.push(length);
    const folded = foldCase(data);
    parts.push(folded);
    length += folded.length;
  }
  return { text: parts.join(''), nodes, starts };
}

/** The node holding position `pos` (the last node starting at or before it). */
function nodeAt(ix: TextIndex, pos: number): number {
  let lo = 0;
  let hi = ix.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((ix.starts[mid] ?? 0) <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** At most this many matches are kept (a one-letter query in a long chat). */
export const MAX_MATCHES = 10_000;

/**
 * One match: the pieces of text nodes it covers, in order, as [node, start, end]. Plain data, not
 * live `Range`s: a live range is kept up to date by the engine on every change to the page, which
 * thousands of them would slow down (and jsdom creates each in linear time).
 */
export interface TextMatch {
  segments: [Text, number, number][];
}

/**
 * Every match of `query` under `root`, in document order (case-insensitive; an all-space query
 * finds nothing).
 */
export function findMatches(root: Element, query: string, max = MAX_MATCHES): TextMatch[] {
  const q = foldCase(query);
  if (q.trim() === '') return [];
  const ix = indexText(root);
  const out: TextMatch[] = [];
  let from = 0;
  while (out.length < max) {
    const at = ix.text.indexOf(q, from);
    if (at < 0) break;
    from = at + q.length;
    const end = at + q.length;
    const segments: [Text, number, number][] = [];
    for (let k = nodeAt(ix, at); k < ix.nodes.length; k++) {
      const node = ix.nodes[k] as Text;
      const start = ix.starts[k] ?? 0;
      if (start >= end) break;
      const s = Math.max(0, at - start);
      const e = Math.min(node.data.length, end - start);
      if (e > s) segments.push([node, s, e]);
    }
    if (segments.length > 0) out.push({ segments });
  }
  return out;
}

/** A live `Range` over a match (for measuring it). */
export function toRange(m: TextMatch): Range | null {
  const first = m.segments[0];
  const last = m.segments[m.segments.length - 1];
  if (!first || !last) return null;
  const r = first[0].ownerDocument.createRange();
  r.setStart(first[0], first[1]);
  r.setEnd(last[0], last[2]);
  return r;
}

/** Document order of two matches. */
export function compareMatches(a: TextMatch, b: TextMatch): number {
  const x = a.segments[0];
  const y = b.segments[0];
  if (!x || !y) return 0;
  if (x[0] === y[0]) return x[1] - y[1];
  return x[0].compareDocumentPosition(y[0]) & 4 /* FOLLOWING */ ? -1 : 1;
}

function startElement(m: TextMatch): Element | null {
  return m.segments[0]?.[0].parentElement ?? null;
}

/**
 * Opens what hides a match: a folded tool card or sub-agent run (its head button, whose
 * `aria-controls` names the folded body, is pressed as the person would) and a closed `<details>`.
 * Returns how many it opened.
 */
export function openAround(m: TextMatch, root: Element): number {
  let opened = 0;
  let el: Element | null = startElement(m);
  while (el && el !== root) {
    if (el.tagName === 'DETAILS' && !(el as HTMLDetailsElement).open) {
      (el as HTMLDetailsElement).open = true;
      opened++;
    } else if (el.classList.contains('folded') && el.id) {
      const head = root.querySelector<HTMLElement>(`[aria-controls="${cssEscape(el.id)}"]`);
      if (head && head.getAttribute('aria-expanded') === 'false') {
        head.click();
        opened++;
      }
    }
    el = el.parentElement;
  }
  return opened;
}

/** `CSS.escape`, or a plain quote escape where the engine lacks it (jsdom). */
export function cssEscape(s: string): string {
  return typeof CSS !== 'undefined' && typeof CSS.escape === 'function' ? CSS.escape(s) : s.replace(/["\\]/g, '\\$&');
}

/** Whether a match is inside something folded or closed (so showing it needs `openAround`). */
export function isHidden(m: TextMatch, root: Element): boolean {
  const start = startElement(m);
  let el: Element | null = start;
  while (el && el !== root) {
    if (el.tagName === 'DETAILS' && !(el as HTMLDetailsElement).open) return !start?.closest('summary');
    if (el.classList.contains('folded') && el.id) return true;
    el = el.parentElement;
  }
  return false;
}

/** Scrolls `scroller` so the match (or `anchor`, the element painted on it) is in view, centred when it was not. */
export function scrollToMatch(scroller: Element, m: TextMatch, anchor: Element | null = null): void {
  const range = anchor ? null : toRange(m);
  const rect = anchor ? anchor.getBoundingClientRect() : typeof range?.getBoundingClientRect === 'function' ? range.getBoundingClientRect() : null;
  if (!rect || (rect.width === 0 && rect.height === 0 && rect.top === 0)) {
    (anchor ?? startElement(m))?.scrollIntoView?.({ block: 'center' });
    return;
  }
  const box = scroller.getBoundingClientRect();
  if (rect.top >= box.top + 24 && rect.bottom <= box.bottom - 24) return;
  scroller.scrollTop += rect.top - box.top - scroller.clientHeight / 2 + rect.height / 2;
}

// ---- painting ---------------------------------------------------------------------------------

/** Paints a set of matches and the current one. */
export interface Painter {
  paint(matches: readonly TextMatch[], current: number): void;
  clear(): void;
  /** The element painted on match `i`, when painting makes elements (the `<mark>` fallback). */
  anchor(i: number): Element | null;
  /** Whether painting changes the DOM (the `<mark>` fallback): a MutationObserver should ignore it. */
  readonly mutates: boolean;
}

interface HighlightRegistry {
  set(name: string, h: unknown): void;
  delete(name: string): boolean;
}
type HighlightCtor = new (...ranges: AbstractRange[]) => { priority: number };
type StaticRangeCtor = new (init: { startContainer: Node; startOffset: number; endContainer: Node; endOffset: number }) => AbstractRange;

function highlightApi(): { registry: HighlightRegistry; Highlight: HighlightCtor } | null {
  const css = (globalThis as { CSS?: { highlights?: HighlightRegistry } }).CSS;
  const Highlight = (globalThis as { Highlight?: HighlightCtor }).Highlight;
  if (!css?.highlights || typeof Highlight !== 'function') return null;
  return { registry: css.highlights, Highlight };
}

/** A `StaticRange` over a match (not kept up to date by the engine, so thousands cost nothing), or a live one. */
function staticRange(m: TextMatch): AbstractRange | null {
  const first = m.segments[0];
  const last = m.segments[m.segments.length - 1];
  if (!first || !last) return null;
  const Static = (globalThis as { StaticRange?: StaticRangeCtor }).StaticRange;
  if (typeof Static === 'function') return new Static({ startContainer: first[0], startOffset: first[1], endContainer: last[0], endOffset: last[2] });
  return toRange(m);
}

/**
 * A painter under the highlight names `name` (every match) and `${name}-current` (the current
 * one); the stylesheet gives them their colours (`::highlight(find-match)` in app.css).
 */
export function createPainter(name: string, root: () => Element | null): Painter {
  const api = highlightApi();
  if (api) {
    return {
      mutates: false,
      anchor: () => null,
      paint(matches, current) {
        const all = matches.filter((_, i) => i !== current).map(staticRange).filter((r): r is AbstractRange => r !== null);
        const cur = matches[current];
        const curRange = cur ? staticRange(cur) : null;
        api.registry.set(name, new api.Highlight(...all));
        const h = new api.Highlight(...(curRange ? [curRange] : []));
        h.priority = 1;
        api.registry.set(`${name}-current`, h);
      },
      clear() {
        api.registry.delete(name);
        api.registry.delete(`${name}-current`);
      },
    };
  }
  return markPainter(name, root);
}

interface Wrapped {
  node: Text;
  data: string;
  added: Node[];
}

/**
 * The fallback: `<mark class="{name}">` around each match (class `current` on the current one).
 * Painting the same matches again only moves `current`; painting new ones clears first (find
 * again only after `clear`: the matches name the text nodes as they were).
 */
function markPainter(name: string, root: () => Element | null): Painter {
  let wrapped: Wrapped[] = [];
  let painted: readonly TextMatch[] | null = null;
  let marks: Element[][] = [];
  const clear = () => {
    for (const w of wrapped.reverse()) {
      for (const n of w.added) n.parentNode?.removeChild(n);
      w.node.data = w.data;
    }
    wrapped = [];
    painted = null;
    marks = [];
  };
  const setCurrent = (current: number) => marks.forEach((ms, i) => ms.forEach((m) => m.classList.toggle('current', i === current)));
  return {
    mutates: true,
    clear,
    anchor: (i) => marks[i]?.[0] ?? null,
    paint(matches, current) {
      if (matches === painted) {
        setCurrent(current);
        return;
      }
      clear();
      if (!root()) return;
      const pieces = new Map<Text, [number, number, number][]>();
      matches.forEach((m, i) => {
        for (const [node, s, e] of m.segments) {
          const list = pieces.get(node) ?? [];
          list.push([s, e, i]);
          pieces.set(node, list);
        }
      });
      marks = matches.map(() => []);
      for (const [node, list] of pieces) {
        const parent = node.parentNode;
        if (!parent) continue;
        list.sort((a, b) => a[0] - b[0]);
        const doc = node.ownerDocument;
        const text = node.data;
        const after = node.nextSibling;
        const added: Node[] = [];
        let pos = list[0]?.[0] ?? 0;
        for (const [s, e, i] of list) {
          if (s < pos) continue;
          if (s > pos) added.push(doc.createTextNode(text.slice(pos, s)));
          const mark = doc.createElement('mark');
          mark.className = name;
          mark.textContent = text.slice(s, e);
          added.push(mark);
          marks[i]?.push(mark);
          pos = e;
        }
        if (pos < text.length) added.push(doc.createTextNode(text.slice(pos)));
        // The original node keeps the text before the first match (possibly none) and its identity.
        node.data = text.slice(0, list[0]?.[0] ?? 0);
        for (const n of added) parent.insertBefore(n, after);
        wrapped.push({ node, data: text, added });
      }
      painted = matches;
      setCurrent(current);
    },
  };
}
