/**
 * A polite live region for short confirmations that have no place of their own on screen ("Copied"
 * after a code block's copy button). One element, made on first use, outside any message, so the
 * words never become part of a message's text.
 */
let region: HTMLElement | null = null;
let clearTimer: ReturnType<typeof setTimeout> | null = null;

/** Says `text` to screen readers (and clears it after a moment, so the same words can be said again). */
export function announce(text: string, doc: Document = document): void {
  if (!region || !region.isConnected || region.ownerDocument !== doc) {
    region = doc.createElement('div');
    region.className = 'sr-only';
    region.setAttribute('role', 'status');
    region.setAttribute('aria-live', 'polite');
    region.dataset.testid = 'announcer';
    doc.body.append(region);
  }
  region.textContent = text;
  if (clearTimer) clearTimeout(clearTimer);
  clearTimer = setTimeout(() => {
    clearTimer = null;
    if (region) region.textContent = '';
  }, 2000);
}
