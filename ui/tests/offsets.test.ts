import { describe, expect, it } from 'vitest';
import { scalarLength, splitAtOffsets, type Placed } from '../src/lib/model/offsets';

const call = (id: string, textOffset: number, iteration = 1, index = 0) => ({ id, textOffset, iteration, index });
type C = ReturnType<typeof call> & Placed;

/** The text runs and call ids, in order, as a compact shape to compare. */
function shape(text: string, calls: C[]) {
  return splitAtOffsets(text, calls).map((p) => (p.kind === 'text' ? p.text : p.calls.map((c) => `[${c.id}]`).join('')));
}

describe('scalarLength counts Unicode scalar values, as the engine does', () => {
  it.each([
    ['ascii', 'hello', 5],
    ['emoji with skin tone (2 scalars, 4 UTF-16 units)', '👋🏽', 2],
    ['family ZWJ sequence (7 scalars, 11 UTF-16 units)', '👨‍👩‍👧‍👦', 7],
    ['CJK in the BMP', '你好世界', 4],
    ['CJK outside the BMP', '𠀀𠀁', 2],
    ['combining marks', 'e\u0301a\u0308', 4],
  ])('%s', (_name, text, n) => {
    expect(scalarLength(text)).toBe(n);
  });
});

describe('splitAtOffsets places tool calls at scalar-value offsets', () => {
  it('splits after an emoji with a skin-tone modifier', () => {
    const text = 'Hi 👋🏽 there';
    // "Hi 👋🏽 " is 6 scalar values but 8 UTF-16 units.
    expect(shape(text, [call('a', 6)])).toEqual(['Hi 👋🏽 ', '[a]', 'there']);
  });

  it('splits after a family ZWJ sequence counted as several scalar values', () => {
    const family = '👨‍👩‍👧‍👦';
    const text = `${family}!done`;
    expect(shape(text, [call('a', 8)])).toEqual([`${family}!`, '[a]', 'done']);
    // Offset 7 lands right after the sequence: the engine counts its parts, not one grapheme.
    expect(shape(text, [call('a', 7)])).toEqual([family, '[a]', '!done']);
  });

  it('splits CJK text, including characters outside the BMP', () => {
    expect(shape('你好𠀀世界', [call('a', 3)])).toEqual(['你好𠀀', '[a]', '世界']);
  });

  it('keeps combining marks with what precedes the call', () => {
    const text = 'Cafe\u0301 ok';
    expect(shape(text, [call('a', 5)])).toEqual(['Cafe\u0301', '[a]', ' ok']);
  });

  it('stacks several calls at one offset in order (iteration, then index)', () => {
    const calls = [call('b', 3, 1, 1), call('c', 3, 2, 0), call('a', 3, 1, 0)];
    expect(shape('abcdef', calls)).toEqual(['abc', '[a][b][c]', 'def']);
  });

  it('places calls at several offsets, and at the start', () => {
    expect(shape('abcdef', [call('x', 0), call('y', 2), call('z', 6)])).toEqual(['[x]', 'ab', '[y]', 'cdef', '[z]']);
  });

  it('clamps an offset beyond the end of the text', () => {
    expect(shape('short', [call('a', 999)])).toEqual(['short', '[a]']);
    const parts = splitAtOffsets('short', [call('a', 999)]);
    expect(parts[1]).toMatchObject({ kind: 'calls', offset: 5 });
  });

  it('clamps calls at different offsets past the end into one stack, in order', () => {
    expect(shape('ab', [call('b', 50, 2, 0), call('a', 10, 1, 0)])).toEqual(['ab', '[a][b]']);
  });

  it('returns the text alone when there are no calls, and nothing for empty text', () => {
    expect(shape('plain', [])).toEqual(['plain']);
    expect(shape('', [])).toEqual([]);
    expect(shape('', [call('a', 3)])).toEqual(['[a]']);
  });

  it('records scalar-value ranges of the text runs', () => {
    const parts = splitAtOffsets('👋🏽ab', [call('a', 2)]);
    expect(parts[0]).toMatchObject({ kind: 'text', start: 0, end: 2 });
    expect(parts[2]).toMatchObject({ kind: 'text', start: 2, end: 4 });
  });
});
