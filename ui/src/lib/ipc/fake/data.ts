/** The data folder in the fake: where exports would go, and what the system would open. */
import type { Backend } from '../backend';
import { conversation } from './conversations';
import type { FakeState } from './state';
import { DATA_DIR, fileStem } from './util';

export function dataCommands(st: FakeState): Pick<Backend, 'openUrl' | 'dataInfo' | 'exportAll' | 'exportConversation' | 'openExportsFolder'> {
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
  };
}
