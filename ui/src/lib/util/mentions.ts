/** `@toolname` in the composer: autocomplete and forcing. */

const NAME = '[A-Za-z_][A-Za-z0-9_-]*';

/** The `@query` being typed right before the caret, if any. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const m = new RegExp(`(^|\\s)@(${NAME})?$`).exec(before);
  if (!m) return null;
  const query = m[2] ?? '';
  return { start: caret - query.length - 1, query };
}

/**
 * Removes `@name` tokens of known tools from `text` and returns them as forced tools. Unknown
 * `@words` (an e-mail address, a handle) stay in the text.
 */
export function extractMentions(text: string, known: ReadonlySet<string>): { text: string; forced: string[] } {
  const forced: string[] = [];
  const re = new RegExp(`(^|\\s)@(${NAME})(?=$|[\\s,;:!?.)])`, 'g');
  const out = text.replace(re, (all, lead: string, name: string) => {
    if (!known.has(name)) return all;
    if (!forced.includes(name)) forced.push(name);
    return lead;
  });
  return { text: out.replace(/[ \t]{2,}/g, ' ').trim(), forced };
}
