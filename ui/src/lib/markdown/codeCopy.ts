/**
 * Copy buttons on fenced code blocks.
 *
 * The sanitizer allows no buttons (sanitize.ts), and model text never reaches the DOM as markup, so
 * every button here is made by this file, after the sanitized block is in the page (a `Decorate`
 * for BlocksView), with its listener attached to that element: there is no delegated handler a
 * look-alike element could trigger, and what it copies is the `<code>` it was made for, read as
 * text when clicked (never the highlighted HTML).
 *
 * BlocksView calls this only for a block it has just parsed, so a finished block gets its button
 * once and keeps it while later blocks stream. Its visible words come from the stylesheet
 * (`data-state`), not from text nodes: "Copy" never becomes part of the answer's text (selection,
 * `innerText`). The accessible name is `aria-label`.
 */
import { announce } from '../util/announce';
import { isMac } from '../util/shortcuts';

/** How long "Copied" (or the failure hint) shows before the button reads "Copy" again. */
export const COPIED_MS = 1500;
const FAILED_MS = 4000;

export type CopyState = 'idle' | 'copied' | 'failed';

const MARK = 'class="code-block';

/** The text a code block's button copies: the code as written, without the newline that ends its last line. */
export function codeText(code: Element): string {
  const text = code.textContent ?? '';
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** The button's accessible name: "Copy python code", or "Copy code" without a language. */
export function copyLabel(lang: string): string {
  return lang ? `Copy ${lang} code` : 'Copy code';
}

/** Adds a copy button to every fenced code block in `nodes` (a block just put into the page). */
export function decorateCodeBlocks(nodes: readonly Node[], html: string): void {
  // Most blocks have no code: skip the DOM queries for them.
  if (!html.includes(MARK)) return;
  for (const n of nodes) {
    if (n.nodeType !== Node.ELEMENT_NODE) continue;
    const el = n as Element;
    if (el.matches('pre.code-block')) addCopyButton(el);
    for (const pre of el.querySelectorAll('pre.code-block')) addCopyButton(pre);
  }
}

function addCopyButton(pre: Element): void {
  const code = pre.querySelector(':scope > code');
  if (!code || pre.querySelector(':scope > button.code-copy')) return;
  const lang = pre.querySelector(':scope > .code-lang')?.textContent?.trim() ?? '';
  const doc = pre.ownerDocument;
  const button = doc.createElement('button');
  button.type = 'button';
  button.className = 'code-copy';
  button.dataset.state = 'idle';
  button.setAttribute('aria-label', copyLabel(lang));
  const title = 'Copy code';
  button.title = title;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const show = (state: CopyState, ms: number, hint = title) => {
    button.dataset.state = state;
    button.title = hint;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      button.dataset.state = 'idle';
      button.title = title;
    }, ms);
  };
  button.addEventListener('click', () => {
    void copyText(codeText(code)).then((ok) => {
      if (ok) {
        show('copied', COPIED_MS);
        announce('Copied', doc);
        return;
      }
      // Clipboard access can be refused: select the code so the keyboard shortcut copies it.
      selectContents(code);
      const hint = `Copying failed: the code is selected, press ${isMac() ? '⌘C' : 'Ctrl+C'}`;
      show('failed', FAILED_MS, hint);
      announce(hint, doc);
    });
  });
  // Before the code, never after it: a growing block's text is appended to the code's last text node.
  pre.insertBefore(button, code);
}

/** Writes `text` to the clipboard; false when the clipboard is missing or refuses. */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (typeof navigator === 'undefined' || !navigator.clipboard) return false;
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

function selectContents(el: Element): void {
  const sel = el.ownerDocument.getSelection();
  if (!sel) return;
  const range = el.ownerDocument.createRange();
  range.selectNodeContents(el);
  sel.removeAllRanges();
  sel.addRange(range);
}
