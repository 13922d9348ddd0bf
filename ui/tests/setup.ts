/**
 * The app loads the Markdown engine and the Settings screen on demand. Tests render with both
 * loaded, as the app is once they were first used; `lazy-chunks.test.ts` covers the first use.
 */
import { loadSettings } from '../src/lib/components/settings/lazy';
import { loadMarkdown } from '../src/lib/markdown/engine';

await Promise.all([loadMarkdown(), loadSettings()]);
