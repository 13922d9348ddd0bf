import { describe, expect, it } from 'vitest';
import { anchoredScrollTop, INITIAL_WINDOW, OLDER_PAGE, olderStart, windowStart } from '../src/lib/util/window';

const list = (n: number, prefix = 'm') => Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i}` }));

describe('windowStart: which messages a conversation renders', () => {
  it.each([
    ['an empty conversation', 0, 0],
    ['a short conversation: all of it', 12, 0],
    ['exactly the initial window: all of it', INITIAL_WINDOW, 0],
    ['a long conversation: only its last messages', 1000, 1000 - INITIAL_WINDOW],
  ])('%s', (_name, n, start) => {
    expect(windowStart(list(n), null)).toBe(start);
  });

  it('starts at the first rendered message once it has one', () => {
    expect(windowStart(list(1000), 'm400')).toBe(400);
  });

  it('keeps its first message while messages are added at the end (a turn streaming)', () => {
    const before = list(100);
    const start = windowStart(before, null);
    const first = before[start]?.key ?? null;
    const after = [...before, { key: 'new-user' }, { key: 'new-assistant' }];
    expect(windowStart(after, first)).toBe(start);
    expect(after.slice(windowStart(after, first)).map((m) => m.key).slice(-2)).toEqual(['new-user', 'new-assistant']);
  });

  it('starts again at the end of a list that does not have its first message (another conversation)', () => {
    expect(windowStart(list(500, 'other'), 'm400')).toBe(500 - INITIAL_WINDOW);
  });

  it('renders at least the last message', () => {
    expect(windowStart(list(10), null, 0)).toBe(9);
  });
});

describe('olderStart: a page of older messages', () => {
  it.each([
    [970, 970 - OLDER_PAGE],
    [OLDER_PAGE, 0],
    [5, 0],
    [0, 0],
  ])('from %i', (start, next) => {
    expect(olderStart(start)).toBe(next);
  });

  it('reaches the first message of a 1,000-message conversation in pages', () => {
    let start = windowStart(list(1000), null);
    let pages = 0;
    while (start > 0) {
      start = olderStart(start);
      pages++;
    }
    expect(pages).toBe(Math.ceil((1000 - INITIAL_WINDOW) / OLDER_PAGE));
  });
});

describe('anchoredScrollTop: adding messages above the view does not move it', () => {
  it('keeps the distance from the bottom', () => {
    // 600 px of older messages added above a view scrolled to 300 of 2,000.
    expect(anchoredScrollTop({ scrollTop: 300, scrollHeight: 2000 }, 2600)).toBe(900);
  });

  it('stays at the bottom when the view was at the bottom', () => {
    const clientHeight = 700;
    expect(anchoredScrollTop({ scrollTop: 2000 - clientHeight, scrollHeight: 2000 }, 2600)).toBe(2600 - clientHeight);
  });

  it('never goes below zero', () => {
    expect(anchoredScrollTop({ scrollTop: 0, scrollHeight: 500 }, 400)).toBe(0);
  });
});
