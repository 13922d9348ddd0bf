/**
 * Provider profiles in the fake: three to start with (one whose server does not answer), their
 * models, local servers found, and a connection test said in one line, like the shell's.
 */
import type { Backend } from '../backend';
import type { ConnectionReport, DetectedServer, IpcError, ProviderInfo, ProviderProfile } from '../bindings';
import { PROVIDER_KINDS, PROVIDER_PRESETS } from '../bindings';
import { fakeOnlyError, ipcError } from './errors';
import { keyInfo } from './keys';
import type { FakeOptions } from './options';
import type { FakeState } from './state';
import { envVarFor, isHttpUrl, LMSTUDIO_MODELS, NAME_RE } from './util';

const OPENAI = PROVIDER_KINDS[0];
const PROVIDERS: ProviderProfile[] = [
  { name: 'openai', kind: OPENAI.id, baseUrl: OPENAI.defaultBaseUrl, model: 'gpt-4o-mini' },
  { name: 'ollama', kind: OPENAI.id, baseUrl: 'http://localhost:11434/v1', model: 'llama3.2' },
  { name: 'lmstudio', kind: OPENAI.id, baseUrl: 'http://localhost:1234/v1', model: 'qwen2.5-7b-instruct' },
];

const MODELS: Record<string, string[]> = {
  openai: ['gpt-4o-mini', 'gpt-4o', 'o3-mini'],
  ollama: ['llama3.2', 'qwen2.5-coder:7b'],
};


/** The profiles every fake starts with. */
export function profilesSeed(opts: FakeOptions): ProviderProfile[] {
  return opts.noProviders ? [] : PROVIDERS.map((p) => ({ ...p }));
}

/** The service's answer for a profile that does not exist. */
export function profileMissing(st: FakeState, name: string): IpcError {
  return st.profiles.length === 0 ? ipcError('noProfiles', { name }) : ipcError('profileNotFound', { name, names: st.profiles.map((p) => p.name).join(', ') });
}

/** What a profile's server lists, or undefined when it cannot be reached. */
export function modelsOf(st: FakeState, profile: ProviderProfile): string[] | undefined {
  const known = MODELS[profile.name] ?? (profile.baseUrl.includes(':11434') ? MODELS.ollama : undefined);
  if (known) return known;
  if (!st.opts.noLocalServers && !st.stale.has(profile.name) && profile.baseUrl.includes(':1234')) return LMSTUDIO_MODELS;
  return undefined;
}

export function providerList(st: FakeState): ProviderInfo[] {
  const { profiles, settings } = st;
  return profiles.map((p) => ({
    ...p,
    options: structuredClone(p.options ?? { generation: {} }),
    isDefault: settings.defaultProvider === p.name || (settings.defaultProvider === null && profiles.length === 1),
  }));
}

/** Like the shell's "Test connection": the listing, then one tiny request, said in one line. */
function testConnection(st: FakeState, profile: ProviderProfile): ConnectionReport {
  const report: ConnectionReport = { ok: false, summary: '', keyAccepted: null, models: null, modelListed: null, tools: null, errorKind: null, detail: null };
  const root = profile.baseUrl.replace(/\/+$/, '');
  const host = isHttpUrl(root) ? new URL(root).host : root;
  const models = modelsOf(st, profile);
  if (!models) {
    return {
      ...report,
      summary: `Couldn't connect to ${host} — is the server running, and is the address right?`,
      errorKind: 'network',
      detail: `error sending request for url (${root}/models): client error (Connect): tcp connect error: Connection refused (os error 111)`,
    };
  }
  const local = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:|\/|$)/i.test(root);
  if (!local && !keyInfo(st, profile.name).isSet) {
    const env = PROVIDER_KINDS.find((k) => k.id === profile.kind)?.keyEnv ?? envVarFor(profile.name);
    return {
      ...report,
      summary: `The key was refused. Set the key of '${profile.name}' in Keys (or ${env}), then test again.`,
      keyAccepted: false,
      errorKind: 'auth',
      detail: 'HTTP 401 Unauthorized: You didn\'t provide an API key.',
    };
  }
  const listed = `, ${models.length} ${models.length === 1 ? 'model' : 'models'}`;
  const found = { ...report, keyAccepted: true, models: models.length };
  if (!profile.model) return { ...found, summary: `Connected${listed}. Pick a default model for this profile.` };
  const modelListed = models.includes(profile.model);
  const unlisted = modelListed ? '' : ' (it is not in the list, but it works)';
  return { ...found, ok: true, modelListed, tools: true, summary: `Connected${listed}; '${profile.model}' answered and takes tools${unlisted}.` };
}

export function providerCommands(st: FakeState): Pick<Backend, 'listProviders' | 'listModels' | 'testProvider' | 'detectLocalServers' | 'addProvider' | 'removeProvider'> {
  const { opts, profiles, stale, stores } = st;
  return {
    async listProviders() {
      return providerList(st);
    },
    async listModels(provider) {
      const profile = profiles.find((p) => p.name === provider);
      if (!profile) throw profileMissing(st, provider ?? '');
      const models = modelsOf(st, profile);
      // A listing that fails needs a server that does not answer; the generator has none.
      if (!models) throw fakeOnlyError('network', `Could not list the models of ${provider}: connection refused.`);
      return [...models];
    },
    async testProvider(provider) {
      const name = provider ?? providerList(st).find((p) => p.isDefault)?.name;
      const profile = profiles.find((p) => p.name === name);
      if (!profile) throw provider == null ? ipcError('noProviderChosen') : profileMissing(st, provider);
      return testConnection(st, profile);
    },
    async detectLocalServers(): Promise<DetectedServer[]> {
      if (opts.noLocalServers) return [];
      const preset = PROVIDER_PRESETS.find((p) => p.id === 'lmstudio');
      if (!preset) return [];
      const same = (u: string) => u.replace(/\/+$/, '').toLowerCase() === preset.baseUrl.toLowerCase();
      return [{ preset: preset.id, label: preset.label, baseUrl: preset.baseUrl, models: [...LMSTUDIO_MODELS], profile: profiles.find((p) => same(p.baseUrl))?.name ?? null }];
    },
    async addProvider(profile, makeDefault) {
      if (!PROVIDER_KINDS.some((k) => k.id === profile.kind)) throw ipcError('profileKind', { kind: profile.kind });
      if (!NAME_RE.test(profile.name)) throw ipcError('profileName', { name: profile.name });
      if (!(profile.baseUrl.startsWith('http://') || profile.baseUrl.startsWith('https://'))) throw ipcError('profileBaseUrl', { url: profile.baseUrl });
      const o = profile.options;
      if (o?.contextWindow === 0) throw ipcError('profileContextWindow');
      if (o?.maxOutputTokens === 0) throw ipcError('profileMaxOutput');
      const p = o?.prices;
      if (p && [p.input, p.output, p.cachedRead, p.cacheWrite, p.reasoning].some((v) => v !== undefined && !(Number.isFinite(v) && v >= 0))) throw ipcError('profilePrices');
      const stored = structuredClone(profile);
      stale.delete(profile.name);
      const at = profiles.findIndex((p) => p.name === profile.name);
      if (at >= 0) profiles[at] = stored;
      else profiles.push(stored);
      if (makeDefault || st.settings.defaultProvider === null) st.settings = { ...st.settings, defaultProvider: profile.name };
      return providerList(st);
    },
    async removeProvider(name) {
      const at = profiles.findIndex((p) => p.name === name);
      if (at < 0) throw profileMissing(st, name);
      profiles.splice(at, 1);
      if (st.settings.defaultProvider === name) st.settings = { ...st.settings, defaultProvider: null };
      if (st.keychain.mode !== 'environment') stores[st.keychain.mode].delete(name);
      return providerList(st);
    },
  };
}
