/**
 * Markdown -> plain text, for "Copy as plain text": the words as they read on screen, without
 * Markdown syntax. Paragraphs and headings are separated by a blank line, list items keep a "- " or
 * "1. " marker (indented two spaces per level), code and math keep their source, a link whose words
 * differ from its address is followed by the address in parentheses, an image becomes its alt text,
 * and table cells are separated by tabs. Parsed with the same rules as the rendered view; run on a
 * click, never per frame.
 */
import type { Token } from 'markdown-it';
import { markdownParser } from './render';

function inlineText(tokens: readonly Token[]): string {
  let out = '';
  const links: { href: string; start: number }[] = [];
  for (const t of tokens) {
    switch (t.type) {
      case 'text':
      case 'code_inline':
      case 'math_inline':
      case 'math_display_inline':
      case 'html_inline':
        out += t.content;
        break;
      case 'softbreak':
      case 'hardbreak':
        out += '\n';
        break;
      case 'image':
        out += inlineText(t.children ?? []);
        break;
      case 'link_open':
        links.push({ href: String(t.attrGet('href') ?? ''), start: out.length });
        break;
      case 'link_close': {
        const link = links.pop();
        if (!link) break;
        const words = out.slice(link.start);
        const bare = (s: string) => s.replace(/^(?:mailto:|https?:\/\/)/i, '').replace(/\/$/, '');
        if (link.href && bare(words) !== bare(link.href)) out += ` (${link.href})`;
        break;
      }
      default:
        break;
    }
  }
  return out;
}

/** Plain text of Markdown `src`. */
export function markdownToPlainText(src: string): string {
  const tokens = markdownParser().parse(src, {});
  const lists: { ordered: boolean; next: number }[] = [];
  let out = '';
  let cell = 0;

  /** Ends a block: a blank line after it, or a line break inside a list. */
  const endBlock = () => {
    if (out === '') return;
    out = out.replace(/[ \t]+$/, '');
    const want = lists.length > 0 ? '\n' : '\n\n';
    while (!out.endsWith(want)) out += '\n';
  };
  const newLine = () => {
    if (out !== '' && !out.endsWith('\n')) out += '\n';
  };

  for (const t of tokens) {
    switch (t.type) {
      case 'inline':
        out += inlineText(t.children ?? []);
        break;
      case 'paragraph_close':
      case 'heading_close':
      case 'blockquote_close':
      case 'hr':
      case 'table_close':
        endBlock();
        break;
      case 'fence':
      case 'code_block':
      case 'math_block':
        newLine();
        out += t.content.replace(/\n$/, '');
        endBlock();
        break;
      case 'bullet_list_open':
      case 'ordered_list_open':
        newLine();
        lists.push({ ordered: t.type === 'ordered_list_open', next: Number(t.attrGet('start') ?? 1) || 1 });
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        endBlock();
        break;
      case 'list_item_open': {
        newLine();
        const list = lists.at(-1);
        const marker = list?.ordered ? `${list.next++}. ` : '- ';
        out += '  '.repeat(Math.max(0, lists.length - 1)) + marker;
        break;
      }
      case 'list_item_close':
        newLine();
        break;
      case 'tr_open':
        cell = 0;
        break;
      case 'th_open':
      case 'td_open':
        if (cell++ > 0) out += '\t';
        break;
      case 'tr_close':
        out += '\n';
        break;
      default:
        break;
    }
  }
  return out.trim();
}
