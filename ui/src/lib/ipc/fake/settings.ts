/** Settings in the fake: read and replaced whole, checked with the service's words. */
import type { Backend } from '../backend';
import type { Settings } from '../bindings';
import { LIMIT_BOUNDS } from '../bindings';
import { ipcError } from './errors';
import type { FakeOptions } from './options';
import { profileMissing } from './providers';
import type { FakeState } from './state';
import { isHttpUrl } from './util';

/** The settings every fake starts with. */
export function settingsSeed(opts: FakeOptions): Settings {
  return {
    defaultProvider: opts.noProviders ? null : 'openai',
    tools: { disabled: ['shell'], approval: {}, egressExempt: [] },
    limits: { maxIterations: null, maxToolCallsPerRound: null, toolTimeoutSecs: null, idleTimeoutSecs: null, compactAtPercent: null },
    retry: { maxRetries: null, baseDelayMs: null },
    web: { searchBackend: 'tavily', searxngUrl: null, allowLocalAddresses: false },
    chats: { titles: 'model', instructions: '' },
  };
}

export function settingsCommands(st: FakeState): Pick<Backend, 'getSettings' | 'updateSettings'> {
  return {
    async getSettings() {
      return structuredClone(st.settings);
    },
    async updateSettings(next) {
      if (next.defaultProvider !== null && !st.profiles.some((p) => p.name === next.defaultProvider)) throw profileMissing(st, next.defaultProvider);
      for (const [group, fields] of Object.entries(LIMIT_BOUNDS) as [keyof typeof LIMIT_BOUNDS, Record<string, { min: number; max: number }>][]) {
        for (const [field, { min, max }] of Object.entries(fields)) {
          const v = (next[group] as Record<string, number | null>)[field];
          if (v != null && (v < min || v > max)) throw ipcError('settingsLimit', { field: `${group}.${field}`, min, max, value: v });
        }
      }
      const url = next.web.searxngUrl?.trim() ?? '';
      if (url && !isHttpUrl(url)) throw ipcError('settingsSearxngUrl', { url });
      if (!url && next.web.searchBackend === 'searxng') throw ipcError('settingsSearxngMissing');
      st.settings = structuredClone({ ...next, tools: { ...next.tools, disabled: [...new Set(next.tools.disabled)].sort() } });
      return structuredClone(st.settings);
    },
  };
}
