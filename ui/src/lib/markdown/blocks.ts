/**
 * Streaming Markdown without re-parsing the whole answer per token: the text is split into blocks at
 * blank lines outside fences and display math; completed blocks are rendered once and cached; only
 * the last (growing) block is rendered again as text arrives. A block too long to format becomes
 * several blocks of plain text (`plain.ts`), of which a frame renders only the growing tail.
 */
import { needsMathRender } from './math';
import { isTooLongToFormat, plainHtmls, renderPlain, type PlainRender } from './plain';
import { needsMarkdownRender, renderMarkdownNow } from './engine';

export interface Block {
  source: string;
  /** False only for the last block of a text that is still growing. */
  complete: boolean;
}

const FENCE_OPEN = /^\s*(`{3,}|~{3,})/;

interface Fence {
  char: string;
  len: number;
}

function fenceClose(line: string, open: Fence): boolean {
  const m = /^[\s>]*(`{3,}|~{3,})\s*$/.exec(line);
  const f = m?.[1];
  return !!f && f[0] === open.char && f.length >= open.len;
}

/**
 * Splits Markdown into blocks. A blank line ends a block only when it is outside a code fence or a
 * `$$` block and the next non-blank line starts at column 0 (an indented line continues a list item
 * or a code block, and must be parsed with what comes before it).
 */
export function splitBlocks(text: string, final: boolean): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  let current: string[] = [];
  let fence: Fence | null = null;
  let math = false;
  let pendingBlank = 0;

  const flush = () => {
    if (current.length > 0) blocks.push({ source: current.join('\n'), complete: true });
    current = [];
  };

  for (const line of lines) {
    const blank = line.trim() === '';
    if (fence) {
      current.push(line);
      if (fenceClose(line, fence)) fence = null;
      continue;
    }
    if (math) {
      current.push(line);
      if (line.trim().endsWith('$$')) math = false;
      continue;
    }
    if (blank) {
      pendingBlank++;
      continue;
    }
    if (pendingBlank > 0) {
      if (/^\S/.test(line)) flush();
      else for (let i = 0; i < pendingBlank; i++) current.push('');
      pendingBlank = 0;
    }
    current.push(line);
    const f = FENCE_OPEN.exec(line);
    if (f?.[1]) {
      // A backtick fence whose info string has a backtick is not a fence (CommonMark).
      const rest = line.slice(line.indexOf(f[1]) + f[1].length);
      if (!(f[1][0] === '`' && rest.includes('`'))) fence = { char: f[1][0] ?? '`', len: f[1].length };
    } else if (line.trim().startsWith('$$')) {
      const t = line.trim();
      if (t === '$$' || !t.slice(2).trimEnd().endsWith('$$')) math = true;
    }
  }
  if (current.length > 0) blocks.push({ source: current.join('\n'), complete: final || (pendingBlank > 0 && !fence && !math) });
  return blocks;
}

export type RenderFn = (src: string) => string;

function needsRenderAgain(html: string): boolean {
  return needsMarkdownRender(html) || needsMathRender(html);
}

export interface RenderedBlock {
  html: string;
  complete: boolean;
}

/** One source block's HTML: one entry, or the note and chunks of a block too long to format. */
interface Rendered {
  htmls: string[];
  plain: PlainRender | null;
}

/** Keeps the rendered HTML of completed blocks; one instance per text run on screen. */
export class BlockRenderer {
  private cache = new Map<string, Rendered>();
  /** The last render of the growing block: when it completes unchanged, it is not rendered again. */
  private growing: { source: string; rendered: Rendered } | null = null;
  private readonly render: RenderFn;

  constructor(render: RenderFn = renderMarkdownNow) {
    this.render = render;
  }

  /** Renders `text`; `final` once the text will not grow any more. */
  update(text: string, final: boolean): RenderedBlock[] {
    const blocks = splitBlocks(text, final);
    const out: RenderedBlock[] = [];
    const used = new Map<string, Rendered>();
    let growing: { source: string; rendered: Rendered } | null = null;
    for (const b of blocks) {
      let known = this.cache.get(b.source) ?? used.get(b.source) ?? (this.growing?.source === b.source ? this.growing.rendered : undefined);
      // Rendered before the Markdown engine or KaTeX arrived: render again now that they are here.
      if (known !== undefined && !known.plain && known.htmls.some(needsRenderAgain)) known = undefined;
      const rendered = known ?? this.renderBlock(b.source);
      if (b.complete) used.set(b.source, rendered);
      else growing = { source: b.source, rendered };
      for (const html of rendered.htmls) out.push({ html, complete: b.complete });
    }
    this.growing = growing;
    // Only blocks still on screen stay cached: an edited or regenerated text frees the old ones.
    this.cache = used;
    return out;
  }

  private renderBlock(source: string): Rendered {
    if (!isTooLongToFormat(source)) return { htmls: [this.render(source)], plain: null };
    // A growing block keeps the chunks it already had: a frame escapes only the new tail.
    const plain = renderPlain(source, this.growing?.rendered.plain ?? null);
    return { htmls: plainHtmls(plain), plain };
  }
}
