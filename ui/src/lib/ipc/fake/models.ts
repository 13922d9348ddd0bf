/**
 * The fake's model catalogue: a few models the real bundled snapshot knows, with their windows
 * and prices, a "refresh" that dates it today, and what each model of a profile holds and costs in
 * the service's order (the profile's override, then the catalogue, then the safe default that says
 * so); a profile on this computer is free unless priced.
 */
import type { Backend } from '../backend';
import type { CatalogueInfo, ModelDetails, ModelSpec, ProviderProfile } from '../bindings';
import { profileMissing } from './providers';
import type { FakeState } from './state';

/** The window assumed for a model nobody knows (`switchboard_models::UNKNOWN_WINDOW`). */
const UNKNOWN_WINDOW = 32768;

const CATALOGUE: Record<string, ModelSpec> = {
  'gpt-4o': { contextWindow: 128000, maxOutput: 16384, prices: { input: 2.5, output: 10, cachedRead: 1.25 }, tools: true, images: true },
  'gpt-4o-mini': { contextWindow: 128000, maxOutput: 16384, prices: { input: 0.15, output: 0.6, cachedRead: 0.075 }, tools: true, images: true },
  'claude-sonnet-4-5': { contextWindow: 200000, maxOutput: 64000, prices: { input: 3, output: 15, cachedRead: 0.3, cacheWrite: 3.75 }, tools: true, images: true },
  'gemini-2.5-flash': { contextWindow: 1048576, maxOutput: 65535, prices: { input: 0.3, output: 2.5 }, tools: true, images: true },
};

/** The capability table's "no images" rows the fake knows (switchboard_providers::models). */
const NO_IMAGES = ['gpt-3.5-turbo', 'o1-mini', 'o1-preview'];

function isLocal(baseUrl: string): boolean {
  return /^https?:\/\/(localhost|127\.\d+\.\d+\.\d+|\[::1\]|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+)(:|\/|$)/i.test(baseUrl);
}

function lookup(model: string): ModelSpec | null {
  const name = model.toLowerCase().replace(/^models\//, '').split('/').pop() ?? '';
  return CATALOGUE[name] ?? null;
}

export function describe(profile: ProviderProfile, model: string): ModelDetails {
  const known = lookup(model) ?? {};
  const set = profile.options ?? { generation: {} };
  const free = isLocal(profile.baseUrl) && !set.prices;
  const window = set.contextWindow ?? known.contextWindow;
  const source = set.contextWindow !== undefined ? 'profile' : known.contextWindow !== undefined ? 'catalogue' : 'default';
  const maxOutput = set.maxOutputTokens ?? known.maxOutput;
  const prices = free ? { input: 0, output: 0 } : (set.prices ?? known.prices);
  return {
    provider: profile.name,
    model,
    resolved: {
      spec: { ...known, contextWindow: window ?? UNKNOWN_WINDOW, maxOutput, prices },
      source,
      maxOutputSource: set.maxOutputTokens !== undefined ? 'profile' : known.maxOutput !== undefined ? 'catalogue' : null,
      pricesSource: free ? null : set.prices ? 'profile' : known.prices ? 'catalogue' : null,
      free,
    },
    capabilities: { tools: known.tools ?? null, images: NO_IMAGES.some((p) => model.toLowerCase().startsWith(p)) ? false : (known.images ?? null), reasoning: null, sampling: null },
    note: source === 'default' ? `The context window of ${model} is unknown; ${UNKNOWN_WINDOW.toLocaleString('en-US')} tokens are assumed. Set it in the profile if it is larger.` : null,
  };
}

export function modelCommands(st: FakeState): Pick<Backend, 'describeModels' | 'catalogueSpec' | 'modelCatalogue' | 'refreshModelCatalogue'> {
  let info: CatalogueInfo = { source: 'bundled', date: '2026-11-27', models: Object.keys(CATALOGUE).length, problem: null };
  return {
    async describeModels(provider, models) {
      const profile = st.profiles.find((p) => p.name === provider);
      if (!profile) throw profileMissing(st, provider);
      return models.map((m) => describe(profile, m));
    },
    async catalogueSpec(_kind, _baseUrl, model) {
      return lookup(model);
    },
    async modelCatalogue() {
      return info;
    },
    async refreshModelCatalogue() {
      info = { ...info, source: 'refreshed', date: new Date().toISOString().slice(0, 10), problem: null };
      return info;
    },
  };
}
