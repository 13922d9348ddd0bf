/**
 * Which messages of a conversation are rendered. Opening a long conversation renders only its
 * last messages; older ones are added a page at a time as the person scrolls up. The window is
 * named by its first message's key, so messages added at the end (a turn streaming) join it and
 * a reload of the same conversation keeps it, while a different list starts again at its end.
 * Pure.
 */

/**
 * How many of the last messages opening a conversation renders: a few screens' worth (when they
 * do not fill the view, the list adds older ones at once).
 */
export const INITIAL_WINDOW = 20;

/** How many older messages one step up adds (small: each step is one task while the person scrolls). */
export const OLDER_PAGE = 10;

/**
 * The index of the first message to render: the one keyed `first` when it is in the list, else
 * the start of the last `initial` messages (a conversation just opened, or its first message gone).
 */
export function windowStart(messages: readonly { key: string }[], first: string | null, initial = INITIAL_WINDOW): number {
  if (first !== null) {
    const i = messages.findIndex((m) => m.key === first);
    if (i >= 0) return i;
  }
  return Math.max(0, messages.length - Math.max(1, initial));
}

/** The first index once `page` more older messages are rendered. */
export function olderStart(start: number, page = OLDER_PAGE): number {
  return Math.max(0, start - Math.max(1, page));
}

/**
 * The scroll offset that keeps what the person sees in place after content was added above it:
 * the distance from the bottom is unchanged (nothing below the view changes when older messages
 * are added).
 */
export function anchoredScrollTop(before: { scrollTop: number; scrollHeight: number }, scrollHeightAfter: number): number {
  return Math.max(0, scrollHeightAfter - (before.scrollHeight - before.scrollTop));
}
