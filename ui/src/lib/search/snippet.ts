/**
 * A search snippet as text runs: the service wraps each match in U+E000 … U+E001 (private-use
 * characters, never in stored text as markup). The runs are rendered as text nodes and `<mark>`
 * elements, never as HTML, so a snippet holding `<script>` shows those characters and nothing else.
 * Pure.
 */

export const MATCH_OPEN = '\uE000';
export const MATCH_CLOSE = '\uE001';

export interface SnippetRun {
  text: string;
  match: boolean;
}

/**
 * Splits a snippet at its markers. An unclosed match runs to the end; a stray close marker is
 * dropped; empty runs are left out; adjacent runs of the same kind are joined.
 */
export function snippetRuns(snippet: string): SnippetRun[] {
  const runs: SnippetRun[] = [];
  let match = false;
  let buf = '';
  const push = () => {
    if (buf === '') return;
    const last = runs[runs.length - 1];
    if (last && last.match === match) last.text += buf;
    else runs.push({ text: buf, match });
    buf = '';
  };
  for (const ch of snippet) {
    if (ch === MATCH_OPEN || ch === MATCH_CLOSE) {
      push();
      match = ch === MATCH_OPEN;
      continue;
    }
    buf += ch;
  }
  push();
  return runs;
}

/** The snippet's text without markers (for titles and screen readers). */
export function snippetText(snippet: string): string {
  return snippet.replace(/[\uE000\uE001]/g, '');
}

/** The words a person searched for, for highlighting them where a hit opens: the marked runs, distinct. */
export function matchedTerms(snippet: string): string[] {
  const seen = new Set<string>();
  for (const r of snippetRuns(snippet)) if (r.match && r.text.trim()) seen.add(r.text.trim().toLowerCase());
  return [...seen];
}
