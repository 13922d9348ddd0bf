/**
 * The Markdown engine (markdown-it, highlight.js with its languages, DOMPurify, the plain-text
 * reader) is a chunk of its own, loaded the first time a chat needs it. Evaluating it at start-up
 * cost about 6 MB of the web process, which the app does not spend while it waits on its start
 * screen.
 *
 * Opening a chat waits for it, and starting to write a message loads it, so an answer rarely
 * renders before it is here. If one does, its text shows as escaped plain text in a
 * `markdown-pending` paragraph, and the block renderer renders it again on arrival
 * (`needsMarkdownRender`), the way math waits for KaTeX; callers stay synchronous.
 */
import { escapeHtml } from './escape';
import { loadOnce } from '../util/loadOnce';

type Engine = typeof import('./engineChunk');

let engine: Engine | null = null;
const loadEngine = loadOnce(() => import('./engineChunk'));

/** The class of text rendered before the engine was loaded. */
export const MARKDOWN_PENDING_CLASS = 'markdown-pending';
const PENDING_MARK = `<p class="${MARKDOWN_PENDING_CLASS}">`;

/** Loads the engine (once); resolves when Markdown renders as Markdown. */
export async function loadMarkdown(): Promise<void> {
  engine = await loadEngine();
}

/** Starts loading the engine where nothing waits for it (a failure is tried again later). */
export function preloadMarkdown(): void {
  if (!engine) void loadMarkdown().catch(() => undefined);
}

/** Whether the engine is loaded. */
export function markdownLoaded(): boolean {
  return engine !== null;
}

/** True for HTML rendered while the engine was not loaded. */
export function hasPendingMarkdown(html: string): boolean {
  return html.startsWith(PENDING_MARK);
}

/** True when `html` was rendered before the engine arrived and it has arrived since. */
export function needsMarkdownRender(html: string): boolean {
  return engine !== null && hasPendingMarkdown(html);
}

/** Sanitized HTML for Markdown `src`; escaped plain text (and a load) until the engine is here. */
export function renderMarkdownNow(src: string): string {
  if (engine) return engine.renderMarkdown(src);
  preloadMarkdown();
  return `${PENDING_MARK}${escapeHtml(src)}</p>`;
}

/** The words of Markdown `src` without its syntax ("Copy as plain text"); `src` itself until the engine is here. */
export function markdownToPlainTextNow(src: string): string {
  if (engine) return engine.markdownToPlainText(src);
  preloadMarkdown();
  return src;
}
