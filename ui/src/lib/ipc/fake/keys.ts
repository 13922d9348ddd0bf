/**
 * Keys in the fake: set, replaced and deleted but never read back (only `isSet` and `last4` leave
 * it), in the keychain, the session memory or the (read-only) environment, and a keychain that can
 * be made to fail or to take a while.
 */
import type { Backend } from '../backend';
import type { KeyInfo, KeyMode, KeychainStatus } from '../bindings';
import { fakeOnlyError, ipcError } from './errors';
import { FAKE_KEYCHAIN_PROBLEM, type FakeOptions } from './options';
import type { FakeState } from './state';
import { envVarFor, NAME_RE } from './util';

const DESCRIBE: Record<KeyMode, string> = { keychain: 'the system keychain', memory: 'the session memory', environment: 'the environment' };

/** The key stores every fake starts with. */
export function storesSeed(opts: FakeOptions): FakeState['stores'] {
  return {
    keychain: new Map(opts.noProviders ? [] : [['openai', 'fake-demo-key-7f3a']]),
    memory: new Map(),
    environment: new Map([['exa', 'exa-from-the-environment-9c1d']]),
  };
}

/** The keychain as the fake starts (a "pending" one works after `probeMs`: see `startKeychainProbe`). */
export function keychainSeed(opts: FakeOptions): KeychainStatus {
  return opts.keychain === 'problem' ? { mode: 'environment', problem: FAKE_KEYCHAIN_PROBLEM } : opts.keychain === 'pending' ? { mode: 'environment', problem: null } : { mode: 'keychain', problem: null };
}

/** A "pending" keychain works once its probe ends. */
export function startKeychainProbe(st: FakeState): void {
  if (st.opts.keychain !== 'pending') return;
  setTimeout(() => {
    if (st.keychain.mode === 'environment' && st.keychain.problem === null) st.keychain = { mode: 'keychain', problem: null };
  }, st.opts.probeMs ?? 1500);
}

/** The stores asked, in order: the chosen one, then the environment (read-only). */
function layers(st: FakeState): KeyMode[] {
  return st.keychain.mode === 'environment' ? ['environment'] : [st.keychain.mode, 'environment'];
}

export function keyInfo(st: FakeState, name: string): KeyInfo {
  const { profiles, stores } = st;
  const profile = profiles.find((p) => p.name === name);
  const label = profile ? `Provider '${name}' (${profile.baseUrl})` : name === 'tavily' ? 'Tavily (web search)' : name === 'exa' ? 'Exa (web search)' : name;
  const holder = layers(st).find((m) => stores[m].has(name));
  const value = holder ? stores[holder].get(name) : undefined;
  return {
    name,
    label,
    purpose: profile ? 'provider' : 'tool',
    isSet: value !== undefined,
    last4: value !== undefined && [...value].length >= 8 ? [...value].slice(-4).join('') : null,
    source: DESCRIBE[holder ?? layers(st)[0] ?? 'environment'],
    envVar: envVarFor(name),
  };
}

function checkKeyName(name: string) {
  if (!NAME_RE.test(name)) throw ipcError('keyName', { name });
}

function writableStore(st: FakeState): Map<string, string> {
  if (st.keychain.mode === 'environment') throw ipcError('keyEnvironment');
  return st.stores[st.keychain.mode];
}

export function keyCommands(st: FakeState): Pick<Backend, 'listKeys' | 'setKey' | 'deleteKey' | 'keychainStatus' | 'useKeyFallback'> {
  const { opts, profiles, stores } = st;
  return {
    async listKeys() {
      return [...profiles.map((p) => p.name), 'tavily', 'exa'].map((name) => keyInfo(st, name));
    },
    async setKey(name, value) {
      const v = value.trim();
      if (!v) throw ipcError('keyEmpty');
      checkKeyName(name);
      writableStore(st).set(name, v);
      return keyInfo(st, name);
    },
    async deleteKey(name) {
      checkKeyName(name);
      writableStore(st).delete(name);
      return keyInfo(st, name);
    },
    async keychainStatus() {
      return { ...st.keychain };
    },
    async useKeyFallback(mode) {
      if (mode === 'keychain') {
        if (opts.keychain === 'problem') throw fakeOnlyError('auth', FAKE_KEYCHAIN_PROBLEM, true);
        st.keychain = { mode: 'keychain', problem: null };
      } else {
        if (mode === 'memory' && st.keychain.mode !== 'memory') stores.memory.clear();
        st.keychain = { mode, problem: st.keychain.problem };
      }
      return { ...st.keychain };
    },
  };
}
