/**
 * The settings screen's state: what the shell reports (settings, profiles, keys, keychain, tools,
 * data paths) and the status of each change ("Saving", "Saved", or the backend's message next to
 * the field). Every change goes to the shell at once; the backend reads settings every turn, so the
 * next turn uses them without a restart.
 *
 * Key values pass through `setKey` only: they are never stored here, never logged, never put in
 * localStorage, and the shell never sends one back (only `isSet` and `last4`).
 */
import type { Backend } from '../ipc/backend';
import { PROVIDER_PRESETS } from '../ipc/bindings';
import type { Budget, ConnectionReport, ConversationImportPreview, ConversationImportReport, DataInfo, PickedFile, DetectedServer, KeychainStatus, KeyInfo, KeyMode, ProviderInfo, ProviderProfile, Settings, TitleMode, ToolInfo } from '../ipc/bindings';
import { toIpcError } from '../ipc/errors';

/** Where the settings screen reports back to the rest of the app. */
export interface SettingsHost {
  readonly api: Backend;
  /** Profiles changed: the model picker reloads them. */
  loadProviders(): Promise<void>;
  /** Tool settings changed: the chat's tools tray reloads them. */
  loadTools(): Promise<void>;
  /** Conversations were imported: the sidebar's list reloads. */
  refreshConversations?(): Promise<void>;
}

/**
 * Importing conversations: nothing chosen yet, the native dialog open, what the picked file would
 * add (nothing written until the person confirms), the import running, what it did, or why not.
 */
export type ImportFlow =
  | { step: 'idle' }
  | { step: 'choosing' }
  | { step: 'preview'; file: PickedFile; preview: ConversationImportPreview }
  | { step: 'importing'; file: PickedFile; preview: ConversationImportPreview }
  | { step: 'done'; report: ConversationImportReport }
  | { step: 'error'; message: string };

export type FieldStatus = { state: 'saving' } | { state: 'saved' } | { state: 'error'; message: string };

/** A profile's "Test connection": running, or what it found. */
export type ConnectionTest = { state: 'running' } | { state: 'done'; report: ConnectionReport };

/** Parts loaded separately, so one failing does not blank the whole screen. */
export type Part = 'settings' | 'providers' | 'keys' | 'keychain' | 'tools' | 'data';

/** How long "Saved" stays visible. */
const SAVED_MS = 2500;

/** Keychain probes after start-up: the shell switches from the environment once the keychain answers. */
const PROBE_POLL_MS = [1200, 3500, 8000];

export class SettingsModel {
  readonly host: SettingsHost;

  settings = $state.raw<Settings | null>(null);
  providers = $state.raw<ProviderInfo[]>([]);
  keys = $state.raw<KeyInfo[]>([]);
  keychain = $state.raw<KeychainStatus | null>(null);
  tools = $state.raw<ToolInfo[]>([]);
  data = $state.raw<DataInfo | null>(null);
  /** Load failures, by part. */
  errors = $state.raw<Partial<Record<Part, string>>>({});
  loaded = $state(false);
  /** Per-field save status, by field id ("tool:web_fetch", "key:openai", "limit:maxIterations", ...). */
  status = $state.raw<Record<string, FieldStatus>>({});
  /** The keychain is still being probed (start-up), so keys read from the environment for now. */
  probing = $state(false);
  /** Connection tests, by profile name (dropped when the profile is saved again or removed). */
  tests = $state.raw<Record<string, ConnectionTest>>({});
  /** Local servers (Ollama, LM Studio) found answering on this computer; see `detectLocalServers`. */
  detected = $state.raw<DetectedServer[]>([]);

  /** The last settings the shell confirmed; `settings` may be ahead of it while saves run. */
  private confirmed: Settings | null = null;
  private queue: Promise<void> = Promise.resolve();
  private pending = 0;
  // Bookkeeping only, never rendered: a plain Map on purpose.
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  private timers = new Map<string, ReturnType<typeof setTimeout>>();
  private disposed = false;

  constructor(host: SettingsHost) {
    this.host = host;
  }

  private get api(): Backend {
    return this.host.api;
  }

  /** The backend, for a part of Settings that keeps its own state (the model catalogue line). */
  get backend(): Backend {
    return this.host.api;
  }

  // ---- loading ---------------------------------------------------------------------------------

  async load(): Promise<void> {
    await Promise.all([
      this.loadPart('settings', async () => this.setConfirmed(await this.api.getSettings())),
      this.loadPart('providers', async () => void (this.providers = await this.api.listProviders())),
      this.loadPart('keys', async () => void (this.keys = await this.api.listKeys())),
      this.loadPart('keychain', async () => void (this.keychain = await this.api.keychainStatus())),
      this.loadPart('tools', async () => void (this.tools = await this.api.listTools(null))),
      this.loadPart('data', async () => void (this.data = await this.api.dataInfo())),
    ]);
    this.loaded = true;
    void this.watchProbe();
  }

  private async loadPart(part: Part, run: () => Promise<void>): Promise<void> {
    try {
      await run();
      if (this.errors[part]) {
        const { [part]: _, ...rest } = this.errors;
        this.errors = rest;
      }
    } catch (e) {
      this.errors = { ...this.errors, [part]: toIpcError(e).message };
    }
  }

  reloadKeys(): Promise<void> {
    return this.loadPart('keys', async () => void (this.keys = await this.api.listKeys()));
  }

  reloadTools(): Promise<void> {
    return this.loadPart('tools', async () => void (this.tools = await this.api.listTools(null)));
  }

  private reloadSettings(): Promise<void> {
    return this.loadPart('settings', async () => {
      const s = await this.api.getSettings();
      if (this.pending === 0) this.setConfirmed(s);
      else this.confirmed = s;
    });
  }

  private setConfirmed(s: Settings) {
    this.confirmed = s;
    this.settings = s;
  }

  /**
   * At start-up the shell reads keys from the environment while it probes the keychain in the
   * background (mode "environment" with no problem). Ask again once or twice.
   */
  private async watchProbe(): Promise<void> {
    if (!this.isProbing()) return;
    this.probing = true;
    for (const ms of PROBE_POLL_MS) {
      await new Promise((r) => setTimeout(r, ms));
      if (this.disposed) return;
      try {
        this.keychain = await this.api.keychainStatus();
      } catch {
        // Keep the last known status; the Keys section still works.
      }
      if (!this.isProbing()) {
        await this.reloadKeys();
        break;
      }
    }
    this.probing = false;
  }

  private isProbing(): boolean {
    return this.keychain?.mode === 'environment' && this.keychain.problem === null;
  }

  /** Keys can only be read (not set) right now: they come from environment variables. */
  get keysReadOnly(): boolean {
    return this.keychain?.mode === 'environment';
  }

  dispose(): void {
    this.disposed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  // ---- status ----------------------------------------------------------------------------------

  private setStatus(field: string, s: FieldStatus | null): void {
    const t = this.timers.get(field);
    if (t) clearTimeout(t);
    this.timers.delete(field);
    if (s === null) {
      const { [field]: _, ...rest } = this.status;
      this.status = rest;
      return;
    }
    this.status = { ...this.status, [field]: s };
    if (s.state === 'saved' && !this.disposed) {
      this.timers.set(
        field,
        setTimeout(() => {
          this.timers.delete(field);
          if (this.status[field]?.state === 'saved') this.setStatus(field, null);
        }, SAVED_MS),
      );
    }
  }

  fail(field: string, message: string): void {
    this.setStatus(field, { state: 'error', message });
  }

  clear(field: string): void {
    if (this.status[field]) this.setStatus(field, null);
  }

  private async track<T>(field: string, run: () => Promise<T>): Promise<T | undefined> {
    this.setStatus(field, { state: 'saving' });
    try {
      const out = await run();
      this.setStatus(field, { state: 'saved' });
      return out;
    } catch (e) {
      this.setStatus(field, { state: 'error', message: toIpcError(e).message });
      return undefined;
    }
  }

  // ---- settings --------------------------------------------------------------------------------

  /**
   * Saves one change: `change` edits a copy of the settings. Shown at once; saves run one after
   * the other, each on top of what the shell confirmed, and a rejected change is rolled back.
   * Resolves with whether it was stored.
   */
  save(field: string, change: (s: Settings) => void): Promise<boolean> {
    const base = this.settings;
    if (!base) return Promise.resolve(false);
    const optimistic = structuredClone(base);
    change(optimistic);
    this.settings = optimistic;
    this.pending++;
    this.setStatus(field, { state: 'saving' });
    const job = this.queue.then(async () => {
      const next = structuredClone(this.confirmed ?? base);
      change(next);
      let ok = false;
      try {
        this.confirmed = await this.api.updateSettings(next);
        ok = true;
        this.setStatus(field, { state: 'saved' });
      } catch (e) {
        this.setStatus(field, { state: 'error', message: toIpcError(e).message });
      }
      if (--this.pending === 0 && this.confirmed) this.settings = this.confirmed;
      return ok;
    });
    this.queue = job.then(() => undefined);
    return job;
  }

  async setToolEnabled(name: string, enabled: boolean): Promise<void> {
    const ok = await this.save(`tool:${name}`, (s) => {
      const rest = s.tools.disabled.filter((n) => n !== name);
      s.tools.disabled = enabled ? rest : [...rest, name].sort();
    });
    if (ok) await this.toolsChanged();
  }

  /** Switches every tool of one source on or off in Settings (one save; `key` names its status). */
  async setToolsEnabled(key: string, names: readonly string[], enabled: boolean): Promise<void> {
    const ok = await this.save(`tools:${key}`, (s) => {
      const rest = s.tools.disabled.filter((n) => !names.includes(n));
      s.tools.disabled = enabled ? rest : [...rest, ...names].sort();
    });
    if (ok) await this.toolsChanged();
  }

  async setToolApproval(name: string, policy: ToolInfo['approval']): Promise<void> {
    const ok = await this.save(`tool:${name}`, (s) => {
      s.tools.approval = { ...s.tools.approval, [name]: policy };
    });
    if (ok) await this.toolsChanged();
  }

  /**
   * Lets a tool send data to new destinations after untrusted content without asking, or asks
   * again. Letting it is a widening: the shell asks the person natively before it is saved.
   */
  async setToolEgressExempt(name: string, exempt: boolean): Promise<void> {
    const ok = await this.save(`tool:${name}`, (s) => {
      const rest = s.tools.egressExempt.filter((t) => t !== name);
      s.tools.egressExempt = exempt ? [...rest, name] : rest;
    });
    if (ok) await this.toolsChanged();
  }

  private async toolsChanged(): Promise<void> {
    await Promise.all([this.reloadTools(), this.host.loadTools()]);
  }

  // ---- providers -------------------------------------------------------------------------------

  /** Adds or replaces a profile. Resolves with an error message, or null when saved. */
  async saveProvider(profile: ProviderProfile, makeDefault: boolean): Promise<string | null> {
    try {
      this.providers = await this.api.addProvider(profile, makeDefault);
    } catch (e) {
      return toIpcError(e).message;
    }
    this.setStatus(`provider:${profile.name}`, { state: 'saved' });
    // What an earlier test found may not hold for the saved profile.
    this.setTest(profile.name, null);
    await this.providersChanged();
    return null;
  }

  async removeProvider(name: string): Promise<void> {
    const ok = await this.track('providers', async () => (this.providers = await this.api.removeProvider(name)));
    if (ok) {
      this.setTest(name, null);
      await this.providersChanged();
    }
  }

  private setTest(name: string, t: ConnectionTest | null): void {
    if (t === null) {
      if (!(name in this.tests)) return;
      const { [name]: _, ...rest } = this.tests;
      this.tests = rest;
    } else {
      this.tests = { ...this.tests, [name]: t };
    }
  }

  /**
   * Tests a saved profile: the report says what works and what is wrong. A call that fails outright
   * (the profile is gone, the shell cannot be reached) is shown like any other error, under `test:<name>`.
   */
  async testProvider(name: string): Promise<void> {
    if (this.tests[name]?.state === 'running') return;
    this.clear(`test:${name}`);
    const running: ConnectionTest = { state: 'running' };
    this.setTest(name, running);
    // Saving or removing the profile meanwhile makes the answer stale: it is dropped.
    const current = () => this.tests[name] === running;
    try {
      const report = await this.api.testProvider(name);
      if (current()) this.setTest(name, { state: 'done', report });
    } catch (e) {
      if (!current()) return;
      this.setTest(name, null);
      this.fail(`test:${name}`, toIpcError(e).message);
    }
  }

  /**
   * Looks for Ollama and LM Studio on their default ports. Best effort: a failure leaves the list
   * empty (nothing is offered) and is not shown.
   */
  async detectLocalServers(): Promise<void> {
    try {
      this.detected = await this.api.detectLocalServers();
    } catch {
      this.detected = [];
    }
  }

  /** Detected servers no profile points at yet (by the shell's answer, or the same base URL). */
  get offers(): DetectedServer[] {
    const same = (a: string, b: string) => a.trim().replace(/\/+$/, '').toLowerCase() === b.trim().replace(/\/+$/, '').toLowerCase();
    return this.detected.filter((d) => d.profile === null && !this.providers.some((p) => same(p.baseUrl, d.baseUrl)));
  }

  /** Makes `model` a saved profile's default model, then tests it again. Resolves with an error message, or null. */
  async setDefaultModel(name: string, model: string): Promise<string | null> {
    const p = this.providers.find((x) => x.name === name);
    if (!p) return `There is no provider named '${name}'.`;
    const { isDefault, ...profile } = p;
    const message = await this.saveProvider({ ...profile, model }, isDefault);
    if (message) this.fail(`test:${name}`, message);
    else void this.testProvider(name);
    return message;
  }

  /** A profile name not taken yet: `base`, else `base-2`, `base-3`, ... */
  freeName(base: string): string {
    const taken = (n: string) => this.providers.some((p) => p.name === n);
    if (!taken(base)) return base;
    for (let i = 2; ; i++) if (!taken(`${base}-${i}`)) return `${base}-${i}`;
  }

  /**
   * Adds a detected local server as a profile with `model` (the person picked it from what the server
   * has) as its default model, then tests it. Resolves with the new profile's name, or null (the
   * error is under `detect:<baseUrl>`).
   */
  async addDetected(server: DetectedServer, model: string | null = server.models[0] ?? null): Promise<string | null> {
    const preset = PROVIDER_PRESETS.find((p) => p.id === server.preset);
    const name = this.freeName(server.preset.replace(/[^A-Za-z0-9_-]/g, '') || 'local');
    const profile: ProviderProfile = { name, kind: preset?.kind ?? 'openai', baseUrl: server.baseUrl, model, options: { generation: {} } };
    const field = `detect:${server.baseUrl}`;
    this.setStatus(field, { state: 'saving' });
    const message = await this.saveProvider(profile, this.providers.length === 0);
    if (message) {
      this.fail(field, message);
      return null;
    }
    this.clear(field);
    this.detected = this.detected.map((d) => (d.baseUrl === server.baseUrl ? { ...d, profile: name } : d));
    void this.testProvider(name);
    return name;
  }

  async makeDefault(name: string): Promise<void> {
    const ok = await this.save(`provider:${name}`, (s) => {
      s.defaultProvider = name;
    });
    if (ok) {
      await this.loadPart('providers', async () => void (this.providers = await this.api.listProviders()));
      await this.host.loadProviders();
    }
  }

  private async providersChanged(): Promise<void> {
    await Promise.all([this.reloadKeys(), this.reloadSettings(), this.host.loadProviders()]);
  }

  /** A saved profile's models, from the provider itself. */
  async fetchModels(provider: string): Promise<string[]> {
    return this.api.listModels(provider);
  }

  // ---- keys ------------------------------------------------------------------------------------

  key(name: string): KeyInfo | undefined {
    return this.keys.find((k) => k.name === name);
  }

  private putKey(info: KeyInfo) {
    this.keys = this.keys.some((k) => k.name === info.name) ? this.keys.map((k) => (k.name === info.name ? info : k)) : [...this.keys, info];
  }

  /** Stores a key. The caller has already dropped the value from its own state. */
  async setKey(name: string, value: string): Promise<boolean> {
    const info = await this.track(`key:${name}`, () => this.api.setKey(name, value));
    if (info) this.putKey(info);
    return info !== undefined;
  }

  async deleteKey(name: string): Promise<boolean> {
    const info = await this.track(`key:${name}`, () => this.api.deleteKey(name));
    if (info) this.putKey(info);
    return info !== undefined;
  }

  /** The person's choice when the keychain cannot be used, or another try of the keychain. */
  async useKeyFallback(mode: KeyMode): Promise<void> {
    const status = await this.track('keychain', () => this.api.useKeyFallback(mode));
    if (status) {
      this.keychain = status;
      await this.reloadKeys();
    }
  }

  // ---- data ------------------------------------------------------------------------------------

  /**
   * Writes every conversation to a JSON file where the person chooses (the native save dialog);
   * resolves with its path. A cancelled dialog is not an error: nothing happens.
   */
  async exportAll(): Promise<string | undefined> {
    this.setStatus('export', { state: 'saving' });
    try {
      const path = await this.api.exportAll();
      this.setStatus('export', { state: 'saved' });
      return path;
    } catch (e) {
      const err = toIpcError(e);
      if (err.kind === 'cancelled') this.clear('export');
      else this.fail('export', err.message);
      return undefined;
    }
  }

  /** Where importing conversations stands. */
  importFlow = $state.raw<ImportFlow>({ step: 'idle' });

  /** Asks for a file in the native dialog and shows what importing it would do; writes nothing. */
  async chooseImport(): Promise<void> {
    this.importFlow = { step: 'choosing' };
    try {
      const { file, preview } = await this.api.previewConversationImport();
      this.importFlow = { step: 'preview', file, preview };
    } catch (e) {
      const err = toIpcError(e);
      this.importFlow = err.kind === 'cancelled' ? { step: 'idle' } : { step: 'error', message: err.message };
    }
  }

  /** Imports the previewed file (the person confirmed). */
  async confirmImport(): Promise<void> {
    const flow = this.importFlow;
    if (flow.step !== 'preview') return;
    this.importFlow = { step: 'importing', file: flow.file, preview: flow.preview };
    try {
      const report = await this.api.importConversations(flow.file.pick);
      this.importFlow = { step: 'done', report };
      if (report.imported.length > 0) await this.host.refreshConversations?.();
    } catch (e) {
      this.importFlow = { step: 'error', message: toIpcError(e).message };
    }
  }

  /** Closes the preview, the result or the error. */
  dismissImport(): void {
    this.importFlow = { step: 'idle' };
  }

  /** Opens the exports folder in the file manager; a failure shows under `exports-folder`. */
  async openExportsFolder(): Promise<void> {
    this.clear('exports-folder');
    try {
      await this.api.openExportsFolder();
    } catch (e) {
      this.fail('exports-folder', toIpcError(e).message);
    }
  }

  // ---- chats -----------------------------------------------------------------------------------

  /** How new chats get their title. */
  setTitleMode(mode: TitleMode): Promise<boolean> {
    return this.save('chats:titles', (s) => {
      s.chats = { ...s.chats, titles: mode };
    });
  }

  /** The budget a new chat starts with (empty: none). */
  setDefaultBudget(budget: Budget): Promise<boolean> {
    return this.save('chats:budget', (s) => {
      s.chats = { ...s.chats, budget };
    });
  }

  /** The custom instructions every chat is sent with, before its own. */
  setInstructions(text: string): Promise<boolean> {
    return this.save('chats:instructions', (s) => {
      s.chats = { ...s.chats, instructions: text };
    });
  }
}
