/** What `engine.ts` loads on demand: everything that parses, highlights or sanitizes Markdown. */
export { renderMarkdown } from './render';
export { markdownToPlainText } from './plainText';
