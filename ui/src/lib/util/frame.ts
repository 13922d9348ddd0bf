/**
 * Runs `cb` before the next paint (requestAnimationFrame). While the window is hidden, browsers
 * pause animation frames, so a short timer keeps a turn moving in the background.
 */
export type Scheduler = (cb: () => void) => void;

export const nextFrame: Scheduler = (cb) => {
  if (typeof document !== 'undefined' && document.hidden) {
    setTimeout(cb, 100);
  } else if (typeof requestAnimationFrame === 'function') {
    requestAnimationFrame(() => cb());
  } else {
    setTimeout(cb, 16);
  }
};
