/** The data folder in the fake: where exports would go, and what the system would open. */
import type { Backend } from '../backend';
import type { StoredMessage } from '../bindings';
import { conversation } from './conversations';
import type { FakeState } from './state';
import { DATA_DIR, fileStem } from './util';

/** The file the fake's native dialog "chooses" for an import: ChatGPT's export of three chats. */
const IMPORT_FILE = { name: 'conversations.json', titles: ['Tokyo trip 🗾', 'Primes with Python', 'Cat picture, then Rust news'] };

export function dataCommands(
  st: FakeState,
): Pick<Backend, 'openUrl' | 'dataInfo' | 'exportAll' | 'exportConversation' | 'openExportsFolder' | 'previewConversationImport' | 'importConversations'> {
  const importedId = (title: string) => `chatgpt-${fileStem(title)}`;
  const pending = () => IMPORT_FILE.titles.filter((t) => !st.conversations.has(importedId(t)));
  return {
    async openUrl(url) {
      window.open(url, '_blank', 'noopener,noreferrer');
    },
    async dataInfo() {
      return { dataDir: DATA_DIR, database: `${DATA_DIR}/switchboard.db` };
    },
    async exportAll() {
      return `${DATA_DIR}/exports/switchboard-export-${Math.floor(Date.now() / 1000)}.json`;
    },
    async exportConversation(cid, format) {
      const c = conversation(st, cid);
      return `${DATA_DIR}/exports/${fileStem(c.summary.title)}.${format === 'markdown' ? 'md' : 'json'}`;
    },
    async openExportsFolder() {
      // Nothing to open in a browser; the shell opens the folder in the file manager.
    },
    async previewConversationImport() {
      const fresh = pending();
      const already = IMPORT_FILE.titles.length - fresh.length;
      return {
        file: { pick: 'pick-import', name: IMPORT_FILE.name },
        preview: {
          format: 'chatgpt',
          conversations: IMPORT_FILE.titles.length,
          alreadyImported: already,
          messages: fresh.length * 2,
          titles: fresh,
          refused: [],
          summary: `ChatGPT export: ${IMPORT_FILE.titles.length} conversations${already ? `, ${already} already imported` : ''}`,
        },
      };
    },
    async importConversations(pick) {
      if (pick !== 'pick-import') throw new Error(`The file chosen as '${pick}' is no longer known: choose it again.`);
      const fresh = pending();
      const at = Date.now() - 30 * 24 * 3_600_000;
      for (const title of fresh) {
        const cid = importedId(title);
        const question = { ...blank(st.id('m'), 'user', at), content: title };
        const answer = { ...blank(st.id('m'), 'assistant', at), parentId: question.id, content: `Imported answer to “${title}”.`, provider: 'chatgpt', model: 'gpt-4o' };
        const messages = [question, { ...answer, versions: [answer.id] }];
        st.conversations.set(cid, { summary: { id: cid, title, createdAt: at, updatedAt: at, messageCount: 2, pinned: false, archived: false }, messages, chosenAt: new Map(), disabled: new Set() });
      }
      const skipped = IMPORT_FILE.titles.length - fresh.length;
      const summary =
        fresh.length === 0
          ? `Nothing imported: already imported: ${skipped} conversation${skipped === 1 ? '' : 's'} skipped.`
          : `Imported ${fresh.length} conversation${fresh.length === 1 ? '' : 's'} (${fresh.length * 2} messages)${skipped ? `; already imported: ${skipped} skipped` : ''}.`;
      return { format: 'chatgpt', imported: fresh.map(importedId), skipped, messages: fresh.length * 2, refused: [], summary };
    },
  };
}

/** A stored message with nothing in it yet. */
function blank(id: string, role: 'user' | 'assistant', at: number): StoredMessage {
  return {
    id,
    parentId: null,
    versions: [id],
    role,
    content: '',
    reasoning: '',
    status: 'complete',
    provider: null,
    model: null,
    finishReason: role === 'assistant' ? 'stop' : null,
    usage: { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 },
    toolCallsMade: 0,
    error: null,
    notices: [],
    providerResponseId: null,
    createdAt: at,
    updatedAt: at,
    toolCalls: [],
  };
}
