/**
 * Markdown -> safe HTML: markdown-it (`html: false`, linkify), highlight.js for closed fences only
 * (a common set of languages, highlight.ts), KaTeX for $...$ / $$...$$ (loaded on first use,
 * math.ts), and DOMPurify as the last pass.
 */
import markdownIt from 'markdown-it';
import type { Env, MarkdownIt, Token } from 'markdown-it';
import { escapeHtml } from './escape';
import { highlightCode } from './highlight';
import { mathPlugin } from './math';
import { sanitizeHtml } from './sanitize';
import { blockedImageText, isInlineImage } from './links';

/** The source lines of the text being rendered, kept in the render env for the fence rule. */
function envLines(env: Env | undefined): string[] | undefined {
  const lines = env?.['lines'];
  return Array.isArray(lines) ? (lines as string[]) : undefined;
}

export { escapeHtml };

const CLOSING_FENCE = /^[\s>]*(`{3,}|~{3,})\s*$/;

/** A fence is closed when its last source line is a closing fence of the same kind and length. */
export function isFenceClosed(token: Token, lines: string[] | undefined): boolean {
  if (!token.map || !lines) return false;
  const [start, end] = token.map;
  if (end - start < 2) return false;
  const last = lines[end - 1];
  if (last === undefined) return false;
  const m = CLOSING_FENCE.exec(last);
  const fence = m?.[1];
  return !!fence && fence[0] === token.markup[0] && fence.length >= token.markup.length;
}

function createMarkdown(): MarkdownIt {
  const md = markdownIt({ html: false, linkify: true, breaks: true, typographer: false });
  md.use(mathPlugin);

  md.renderer.rules.fence = (tokens, idx, _options, env) => {
    const token = tokens[idx];
    if (!token) return '';
    const info = md.utils.unescapeAll(token.info).trim();
    const lang = (info.split(/\s+/)[0] ?? '').toLowerCase();
    const closed = isFenceClosed(token, envLines(env));
    const hl = closed ? highlightCode(token.content, lang) : null;
    const highlighted = hl !== null;
    const body = hl ?? escapeHtml(token.content);
    // Always there, empty without a language (the stylesheet shows "text"): the header the copy
    // button (codeCopy.ts) sits in, so a block looks the same with and without one.
    const label = `<div class="code-lang">${escapeHtml(lang)}</div>`;
    const cls = `code-block${highlighted ? ' hljs' : ''}${closed ? '' : ' code-open'}`;
    return `<pre class="${cls}">${label}<code>${body}</code></pre>\n`;
  };

  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    if (!token) return '';
    const alt = self.renderInlineAsText(token.children ?? [], options, env);
    const src = String(token.attrGet('src') ?? '');
    if (isInlineImage(src)) return `<img src="${escapeHtml(src)}" alt="${escapeHtml(alt)}">`;
    // Remote images are never fetched: a URL can carry the conversation to a stranger's server.
    // Its address shows as text, so the person sees where it pointed.
    return `<span class="image-blocked" title="Remote images are not loaded">${escapeHtml(blockedImageText(alt, src))}</span>`;
  };

  // Tables: a wrapper that scrolls sideways when the table is wider than the column (words stay
  // whole), and the column alignment as a class (the sanitizer drops style attributes).
  md.renderer.rules.table_open = () => '<div class="table-wrap"><table>\n';
  md.renderer.rules.table_close = () => '</table></div>\n';
  const aligned = (tag: 'th' | 'td') => (tokens: Token[], idx: number) => {
    const align = /text-align:\s*(left|center|right)/.exec(String(tokens[idx]?.attrGet('style') ?? ''))?.[1];
    return align ? `<${tag} class="align-${align}">` : `<${tag}>`;
  };
  md.renderer.rules.th_open = aligned('th');
  md.renderer.rules.td_open = aligned('td');

  return md;
}

let instance: MarkdownIt | null = null;

/** The configured parser (the same rules as `renderMarkdown`), for reading tokens (plainText.ts). */
export function markdownParser(): MarkdownIt {
  instance ??= createMarkdown();
  return instance;
}

/** Renders Markdown to sanitized HTML. */
export function renderMarkdown(src: string): string {
  const env: Env = { lines: src.split('\n') };
  return sanitizeHtml(markdownParser().render(src, env));
}
