/**
 * Blocks too long to format, shown as escaped plain text instead.
 *
 * markdown-it, DOMPurify and highlight.js are each roughly linear in a block's size, but a
 * streaming block is rendered again every frame, so a block that keeps growing costs the square of
 * its size over a stream (a 1 MB line took over 20 s of frozen window). And WebKit lays a long run
 * of text out again whenever it changes. Past the limits below, a block is cut into chunks of at
 * most `PLAIN_CHUNK_CHARS`, each its own block element: a frame escapes and replaces only the last,
 * growing chunk, and a change lays out only that chunk.
 */
import { escapeHtml } from './escape';

/** A line longer than this is data (base64, minified JSON, a dump), not prose anyone will read formatted. */
export const PLAIN_LINE_CHARS = 10_000;
/** A block longer than this (about 1,000 lines of code) is shown as plain text. */
export const PLAIN_BLOCK_CHARS = 40_000;
/** The most characters in one chunk, so the work a frame does on a plain block is bounded. */
export const PLAIN_CHUNK_CHARS = 4_096;

export const PLAIN_NOTE_HTML = '<div class="plain-note" role="note">Too long to format: shown as plain text.</div>';

/** Whether `src` is rendered as plain text: longer than `PLAIN_BLOCK_CHARS` or with a line longer than `PLAIN_LINE_CHARS`. */
export function isTooLongToFormat(src: string): boolean {
  if (src.length > PLAIN_BLOCK_CHARS) return true;
  if (src.length <= PLAIN_LINE_CHARS) return false;
  let start = 0;
  for (;;) {
    const nl = src.indexOf('\n', start);
    const end = nl === -1 ? src.length : nl;
    if (end - start > PLAIN_LINE_CHARS) return true;
    if (nl === -1) return false;
    start = nl + 1;
  }
}

/**
 * Where the chunk that starts at `start` ends, or null while the text does not fill its window
 * (the last chunk, still growing). The end depends only on the window's own text, so a chunk,
 * once cut, stays the same however the text grows. It prefers to end after a line break in the
 * second half of the window, and never separates a surrogate pair.
 */
function chunkEnd(text: string, start: number, size: number): number | null {
  if (text.length - start <= size) return null;
  // The search stays inside the window: a line with no break would otherwise be scanned back to its start for every chunk.
  const nl = text.slice(start, start + size).lastIndexOf('\n');
  if (nl >= size / 2) return start + nl + 1;
  const code = text.charCodeAt(start + size - 1);
  return code >= 0xd800 && code <= 0xdbff ? start + size - 1 : start + size;
}

/** `text` cut into pieces of at most `size` characters (see `chunkEnd`), in order; joined they are `text`. */
export function plainPieces(text: string, size = PLAIN_CHUNK_CHARS): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    const end = chunkEnd(text, start, size) ?? text.length;
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

export interface PlainChunk {
  /** Where the chunk ends in the block's source. */
  end: number;
  html: string;
}

export interface PlainRender {
  source: string;
  chunks: PlainChunk[];
}

/**
 * Renders `source` as plain-text chunks. When it extends `prev.source` (a growing block), every
 * chunk of `prev` but the last is kept as it is (the same objects), and only the rest is escaped.
 */
export function renderPlain(source: string, prev: PlainRender | null = null, size = PLAIN_CHUNK_CHARS): PlainRender {
  const chunks: PlainChunk[] = prev && source.startsWith(prev.source) ? prev.chunks.slice(0, -1) : [];
  let start = chunks.at(-1)?.end ?? 0;
  while (start < source.length) {
    const end = chunkEnd(source, start, size) ?? source.length;
    // Escaped text in a fixed element: there is no markup left for DOMPurify to judge.
    chunks.push({ end, html: `<div class="plain-chunk">${escapeHtml(source.slice(start, end))}</div>` });
    start = end;
  }
  return { source, chunks };
}

/** The HTML blocks of a plain render: the note, then one per chunk. */
export function plainHtmls(r: PlainRender): string[] {
  return [PLAIN_NOTE_HTML, ...r.chunks.map((c) => c.html)];
}
