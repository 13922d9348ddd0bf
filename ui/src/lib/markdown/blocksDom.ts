/**
 * Puts rendered Markdown blocks into a container, touching only what changed.
 *
 * A growing paragraph is rendered again every frame. Replacing its DOM each time makes WebKit lay
 * the whole paragraph out again (40-65 ms for 2,000 words without a GPU); when the new HTML only
 * adds plain text at the end, appending it to the existing text node costs about a millisecond.
 * Everything else (a new or changed block, markup in the added part) is replaced the ordinary way,
 * from the same sanitized HTML.
 */

/** Closing tags (and the whitespace between them) at the end of a block's HTML. */
const TAIL = /(?:<\/([a-z][a-z0-9]*)>\s*)+$/i;

/**
 * The plain text `next` adds at the end of `prev`'s last text run, when that is all it adds: both
 * end in the same closing tags, `next` before them starts with `prev` before them, and the
 * addition has no markup or entity. Otherwise `null`.
 */
export function appendedText(prev: string, next: string): { text: string; closing: string[] } | null {
  const a = TAIL.exec(prev);
  const b = TAIL.exec(next);
  if (!a || !b || a[0] !== b[0]) return null;
  const prevCore = prev.slice(0, prev.length - a[0].length);
  const nextCore = next.slice(0, next.length - b[0].length);
  if (prevCore.endsWith('>') || !nextCore.startsWith(prevCore)) return null;
  const text = nextCore.slice(prevCore.length);
  if (text === '' || /[<>&"]/.test(text)) return null;
  const closing = [...a[0].matchAll(/<\/([a-z][a-z0-9]*)>/gi)].map((m) => (m[1] ?? '').toLowerCase());
  return { text, closing };
}

const isBlank = (n: Node | null): boolean => n !== null && n.nodeType === Node.TEXT_NODE && (n.textContent ?? '').trim() === '';

/** The text node `closing` (innermost first) leads to from the block's last element, if it is one. */
function lastTextNode(nodes: readonly Node[], closing: readonly string[]): Text | null {
  let i = nodes.length - 1;
  while (i >= 0 && isBlank(nodes[i] ?? null)) i--;
  let el = nodes[i] ?? null;
  for (let depth = closing.length - 1; depth >= 0; depth--) {
    if (!(el instanceof Element) || el.tagName.toLowerCase() !== closing[depth]) return null;
    if (depth === 0) break;
    let child = el.lastChild;
    while (isBlank(child)) child = child?.previousSibling ?? null;
    el = child;
  }
  const last = el instanceof Element ? el.lastChild : null;
  return last !== null && last.nodeType === Node.TEXT_NODE ? (last as Text) : null;
}

function parse(doc: Document, html: string): Node[] {
  const t = doc.createElement('template');
  // Sanitized by DOMPurify in renderMarkdown (the last pass of the pipeline), as for {@html}.
  t.innerHTML = html;
  return [...t.content.childNodes];
}

interface View {
  html: string;
  nodes: Node[];
}

/**
 * Called with the nodes of a block each time it is parsed into the DOM (new or changed, never for
 * text appended to a growing block, never for an unchanged block): adds the controls our own code
 * makes, such as code copy buttons (codeCopy.ts). It must not append after a block's last text.
 */
export type Decorate = (nodes: readonly Node[], html: string) => void;

/** The blocks currently in one container. */
export class BlocksView {
  private views: View[] = [];
  private readonly decorate: Decorate | null;

  constructor(decorate: Decorate | null = null) {
    this.decorate = decorate;
  }

  /** Makes `container` show `htmls`, one entry per block, in order. */
  update(container: Element, htmls: readonly string[]): void {
    const doc = container.ownerDocument;
    for (let i = 0; i < htmls.length; i++) {
      const html = htmls[i] ?? '';
      const view = this.views[i];
      if (view && view.html === html) continue;
      if (view && i === htmls.length - 1 && i === this.views.length - 1) {
        const grow = appendedText(view.html, html);
        const node = grow && lastTextNode(view.nodes, grow.closing);
        if (grow && node) {
          node.appendData(grow.text);
          view.html = html;
          continue;
        }
      }
      const nodes = parse(doc, html);
      const anchor = this.anchorAfter(i);
      for (const n of nodes) container.insertBefore(n, anchor);
      this.decorate?.(nodes, html);
      for (const n of view?.nodes ?? []) n.parentNode?.removeChild(n);
      this.views[i] = { html, nodes };
    }
    for (const view of this.views.splice(htmls.length)) for (const n of view.nodes) n.parentNode?.removeChild(n);
  }

  /** The first node of the next block that has any, or `null` (the end of the container). */
  private anchorAfter(i: number): Node | null {
    for (let j = i + 1; j < this.views.length; j++) {
      const first = this.views[j]?.nodes[0];
      if (first) return first;
    }
    return null;
  }
}
