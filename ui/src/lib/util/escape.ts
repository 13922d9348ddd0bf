/** Escape on an element (a form that opens inside Settings) calls `onescape` and goes no further (Settings stays open). */
export function cancelOnEscape(node: HTMLElement, onescape: () => void) {
  let handler = onescape;
  const onKeydown = (e: KeyboardEvent) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    handler();
  };
  node.addEventListener('keydown', onKeydown);
  return {
    update(next: () => void) {
      handler = next;
    },
    destroy() {
      node.removeEventListener('keydown', onKeydown);
    },
  };
}
