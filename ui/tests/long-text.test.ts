/**
 * Pathological answers (issue 14): a block too long to format is shown as escaped plain text in
 * chunks, and a frame of a stream only builds the growing tail. Behavior is checked by counting
 * renders and by object and node identity, never by time.
 */
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import ToolCard from '../src/lib/components/ToolCard.svelte';
import { BlockRenderer } from '../src/lib/markdown/blocks';
import { BlocksView } from '../src/lib/markdown/blocksDom';
import {
  isTooLongToFormat,
  PLAIN_BLOCK_CHARS,
  PLAIN_CHUNK_CHARS,
  PLAIN_LINE_CHARS,
  plainPieces,
  renderPlain,
} from '../src/lib/markdown/plain';
import type { ToolCallModel } from '../src/lib/model/message';
import { REVEAL_CHARS_PER_FRAME } from '../src/lib/model/reveal';

const MB = 1 << 20;

/** A line of `n` characters without a break, with Markdown and HTML in it. */
function longLine(n: number): string {
  const unit = 'a*b_c`d[e](https://x.example/f) <script>g</script> & "h" ';
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

describe('which blocks are too long to format', () => {
  it('is decided by the longest line and by the block size', () => {
    expect(isTooLongToFormat('x'.repeat(PLAIN_LINE_CHARS))).toBe(false);
    expect(isTooLongToFormat('x'.repeat(PLAIN_LINE_CHARS + 1))).toBe(true);
    expect(isTooLongToFormat(`short\n${'x'.repeat(PLAIN_LINE_CHARS + 1)}\nshort`)).toBe(true);
    const code = '```js\n' + 'let a = 1;\n'.repeat(Math.floor((PLAIN_BLOCK_CHARS - 10) / 11)) + '```';
    expect(code.length).toBeLessThanOrEqual(PLAIN_BLOCK_CHARS);
    expect(isTooLongToFormat(code)).toBe(false);
    expect(isTooLongToFormat(code + '\n' + 'let b;\n'.repeat(10))).toBe(true);
  });
});

describe('plainPieces', () => {
  it('cuts a line without a break into pieces that join back to it', () => {
    const text = 'x'.repeat(3 * PLAIN_CHUNK_CHARS + 5);
    const pieces = plainPieces(text);
    expect(pieces.map((p) => p.length)).toEqual([PLAIN_CHUNK_CHARS, PLAIN_CHUNK_CHARS, PLAIN_CHUNK_CHARS, 5]);
    expect(pieces.join('')).toBe(text);
  });

  it('prefers to cut after a line break in the second half of a piece', () => {
    const text = 'a'.repeat(30) + '\n' + 'b'.repeat(5) + '\n' + 'c'.repeat(40);
    expect(plainPieces(text, 40)).toEqual(['a'.repeat(30) + '\n' + 'b'.repeat(5) + '\n', 'c'.repeat(40)]);
    // A break early in the window would leave a short piece: the cut is made at the full size instead.
    expect(plainPieces('a'.repeat(10) + '\n' + 'b'.repeat(50), 40)).toEqual(['a'.repeat(10) + '\n' + 'b'.repeat(29), 'b'.repeat(21)]);
  });

  it('never separates a surrogate pair', () => {
    const text = 'a' + '😀'.repeat(20);
    const pieces = plainPieces(text, 8);
    expect(pieces.join('')).toBe(text);
    for (const p of pieces) expect(p).toBe(Array.from(p).join('')); // no lone surrogate at either end
    for (const p of pieces) expect(/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(p)).toBe(false);
  });
});

describe('a 1 MB line in an answer', () => {
  it('renders as escaped plain text in chunks, without Markdown', () => {
    const render = vi.fn((src: string) => `<p>${src}</p>`);
    const source = longLine(MB);
    const blocks = new BlockRenderer(render).update(`Intro.\n\n${source}\n\nOutro.`, true);
    // Only the two short paragraphs went through Markdown.
    expect(render.mock.calls.map((c) => c[0])).toEqual(['Intro.', 'Outro.']);
    const el = document.createElement('div');
    new BlocksView().update(el, blocks.map((b) => b.html));
    expect(el.querySelector('.plain-note')?.textContent).toMatch(/plain text/);
    const chunks = [...el.querySelectorAll('.plain-chunk')];
    expect(chunks.length).toBe(Math.ceil(MB / PLAIN_CHUNK_CHARS));
    expect(chunks.every((c) => (c.textContent ?? '').length <= PLAIN_CHUNK_CHARS && c.children.length === 0)).toBe(true);
    expect(chunks.map((c) => c.textContent).join('')).toBe(source);
    expect(el.querySelector('script, a, code, em')).toBeNull();
  });

  it('is never parsed again from the start while it streams: a frame escapes only the growing chunk', () => {
    const render = vi.fn((src: string) => `<p>${src}</p>`);
    const renderer = new BlockRenderer(render);
    const view = new BlocksView();
    const el = document.createElement('div');
    const source = longLine(MB);
    let firstChunk: Element | null = null;
    let frames = 0;
    for (let n = REVEAL_CHARS_PER_FRAME; n < source.length + REVEAL_CHARS_PER_FRAME; n += REVEAL_CHARS_PER_FRAME) {
      view.update(el, renderer.update(source.slice(0, n), n >= source.length).map((b) => b.html));
      frames++;
      firstChunk ??= el.querySelector('.plain-chunk');
    }
    // Markdown saw the line only while it was short enough to format.
    expect(render.mock.calls.length).toBe(Math.floor(PLAIN_LINE_CHARS / REVEAL_CHARS_PER_FRAME));
    expect(frames).toBeGreaterThan(500);
    // The first chunk's element was put in once and never replaced.
    expect(firstChunk).not.toBeNull();
    expect(el.querySelector('.plain-chunk')).toBe(firstChunk);
    expect([...el.querySelectorAll('.plain-chunk')].map((c) => c.textContent).join('')).toBe(source);
  });

  it('keeps every finished chunk of a growing block (the same objects) and builds only the tail', () => {
    const source = longLine(10 * PLAIN_CHUNK_CHARS);
    const before = renderPlain(source.slice(0, 5 * PLAIN_CHUNK_CHARS + 100));
    const after = renderPlain(source, before);
    expect(before.chunks).toHaveLength(6);
    for (let i = 0; i < 5; i++) expect(after.chunks[i]).toBe(before.chunks[i]);
    expect(after.chunks[5]).not.toBe(before.chunks[5]);
    expect(after).toEqual(renderPlain(source));
  });

  it('starts over when the text is not an extension of the last render', () => {
    const a = renderPlain('a'.repeat(3 * PLAIN_CHUNK_CHARS));
    const b = renderPlain('b'.repeat(3 * PLAIN_CHUNK_CHARS), a);
    expect(b).toEqual(renderPlain('b'.repeat(3 * PLAIN_CHUNK_CHARS)));
  });
});

describe('a 1 MB line in a tool card', () => {
  const call = (output: string): ToolCallModel => ({
    id: 'c1',
    name: 'web_fetch',
    source: { kind: 'builtin' },
    arguments: '{"url":"https://example.com"}',
    textOffset: 0,
    iteration: 0,
    index: 0,
    status: 'ok',
    result: { status: 'ok', output, durationMs: 12 },
    progress: [],
    awaitingApproval: false,
    runs: [],
  });

  it('shows the output in pieces of bounded size, collapsed and expanded', async () => {
    const output = longLine(MB);
    render(ToolCard, { props: { call: call(output), live: false } });
    // A finished card is folded to one line; open it.
    await fireEvent.click(screen.getAllByRole('button')[0] as HTMLElement);
    const pre = () => screen.getByText('Output').nextElementSibling as HTMLElement;
    expect((pre().textContent ?? '').length).toBeLessThan(1000);
    await fireEvent.click(screen.getByRole('button', { name: 'Show more' }));
    const pieces = [...pre().querySelectorAll('.piece')];
    expect(pieces.length).toBe(Math.ceil(MB / PLAIN_CHUNK_CHARS));
    expect(pieces.every((p) => (p.textContent ?? '').length <= PLAIN_CHUNK_CHARS)).toBe(true);
    expect(pre().textContent).toBe(output);
    expect(pre().querySelector('script')).toBeNull();
  });
});
