/**
 * A small markdown-it rule for TeX: `$inline$`, `$$display$$` (inline or as a block), rendered by
 * KaTeX with `trust: false` (no \href, \url, \includegraphics, \html*) and `throwOnError: false`
 * (bad TeX shows as red source text instead of breaking the message).
 *
 * KaTeX is a chunk of its own, loaded the first time math is rendered. Until it arrives, math
 * renders as its escaped TeX source in a `math-pending` span and the block renderer renders such
 * blocks again once it is loaded (see `needsMathRender`), so callers stay synchronous.
 */
import type { MarkdownIt, StateBlock, StateInline } from 'markdown-it';
import type Katex from 'katex';
import { escapeHtml } from './escape';
import { loadOnce } from '../util/loadOnce';

let katex: typeof Katex | null = null;
const loadKatex = loadOnce(() => import('./katex'));

/** The class of math rendered before KaTeX was loaded. */
export const MATH_PENDING_CLASS = 'math-pending';
const PENDING_MARK = `<span class="${MATH_PENDING_CLASS}"`;

/** Loads KaTeX (once); resolves when math renders as math. */
export async function loadMath(): Promise<void> {
  katex = (await loadKatex()).default;
}

/** Whether KaTeX is loaded. */
export function mathLoaded(): boolean {
  return katex !== null;
}

/** True for HTML rendered with math pending while KaTeX was not loaded (render it again once it is). */
export function hasPendingMath(html: string): boolean {
  return html.includes(PENDING_MARK);
}

/** True when `html` has pending math and KaTeX has arrived since. */
export function needsMathRender(html: string): boolean {
  return katex !== null && hasPendingMath(html);
}

export function renderTex(tex: string, displayMode: boolean): string {
  if (!katex) {
    void loadMath().catch(() => undefined);
    const fence = displayMode ? '$$' : '$';
    return `${PENDING_MARK}>${escapeHtml(fence + tex + fence)}</span>`;
  }
  return katex.renderToString(tex, {
    displayMode,
    throwOnError: false,
    trust: false,
    strict: 'ignore',
    output: 'htmlAndMathml',
    maxSize: 20,
    maxExpand: 500,
  });
}

function isWhitespace(ch: number | undefined): boolean {
  return ch === 0x20 || ch === 0x09 || ch === 0x0a || ch === 0x0d;
}

function isDigit(ch: number | undefined): boolean {
  return ch !== undefined && ch >= 0x30 && ch <= 0x39;
}

function mathInline(state: StateInline, silent: boolean): boolean {
  const src = state.src;
  const start = state.pos;
  if (src.charCodeAt(start) !== 0x24 /* $ */) return false;
  const display = src.charCodeAt(start + 1) === 0x24;
  const open = display ? 2 : 1;
  const first = src.charCodeAt(start + open);
  // "$ 5" or "$" at the end is not math; neither is "$$$".
  if (first === undefined || Number.isNaN(first) || isWhitespace(first) || first === 0x24) return false;
  let pos = start + open;
  while (pos < state.posMax) {
    const ch = src.charCodeAt(pos);
    if (ch === 0x5c /* \ */) {
      pos += 2;
      continue;
    }
    if (ch === 0x24) {
      if (display) {
        if (src.charCodeAt(pos + 1) === 0x24) break;
      } else if (!isWhitespace(src.charCodeAt(pos - 1)) && !isDigit(src.charCodeAt(pos + 1))) {
        // "$5 and $10": a closing "$" may not follow a space nor precede a digit.
        break;
      }
    }
    pos++;
  }
  if (pos >= state.posMax) return false;
  const content = src.slice(start + open, pos);
  if (content.trim() === '') return false;
  if (!silent) {
    const token = state.push(display ? 'math_display_inline' : 'math_inline', 'math', 0);
    token.markup = display ? '$$' : '$';
    token.content = content;
  }
  state.pos = pos + open;
  return true;
}

function mathBlock(state: StateBlock, startLine: number, endLine: number, silent: boolean): boolean {
  const lineStart = (line: number) => (state.bMarks[line] ?? 0) + (state.tShift[line] ?? 0);
  const lineEnd = (line: number) => state.eMarks[line] ?? 0;
  let pos = lineStart(startLine);
  let max = lineEnd(startLine);
  if ((state.sCount[startLine] ?? 0) - state.blkIndent >= 4) return false;
  if (pos + 2 > max || state.src.slice(pos, pos + 2) !== '$$') return false;
  pos += 2;
  let firstLine = state.src.slice(pos, max);
  let lastLine = '';
  let next = startLine;
  let found = false;
  if (firstLine.trim().endsWith('$$')) {
    // One line: $$ x $$
    firstLine = firstLine.trim().slice(0, -2);
    found = true;
  }
  if (silent) return true;
  while (!found) {
    next++;
    if (next >= endLine) break;
    pos = lineStart(next);
    max = lineEnd(next);
    if (pos < max && (state.sCount[next] ?? 0) < state.blkIndent) break;
    const line = state.src.slice(pos, max).trim();
    if (line.endsWith('$$')) {
      lastLine = line.slice(0, -2);
      found = true;
    }
  }
  // An unclosed block (still streaming) renders as math once closed; until then it stays source.
  if (!found) return false;
  state.line = next + 1;
  const token = state.push('math_block', 'math', 0);
  token.block = true;
  token.content =
    (firstLine.trim() ? firstLine + '\n' : '') + state.getLines(startLine + 1, next, state.tShift[startLine] ?? 0, true) + (lastLine.trim() ? lastLine : '');
  token.map = [startLine, state.line];
  token.markup = '$$';
  return true;
}

export function mathPlugin(md: MarkdownIt): void {
  md.inline.ruler.after('escape', 'math_inline', mathInline);
  md.block.ruler.after('blockquote', 'math_block', mathBlock, { alt: ['paragraph', 'reference', 'blockquote', 'list'] });
  md.renderer.rules.math_inline = (tokens, idx) => renderTex(tokens[idx]?.content ?? '', false);
  md.renderer.rules.math_display_inline = (tokens, idx) => renderTex(tokens[idx]?.content ?? '', true);
  md.renderer.rules.math_block = (tokens, idx) => `<div class="math-block">${renderTex(tokens[idx]?.content ?? '', true)}</div>\n`;
}
