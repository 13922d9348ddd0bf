/**
 * The MCP servers section's state: the overview the shell reports (config file, its problem, every
 * server), the status of each server's last action, and the import from other apps. A server that
 * is starting is asked about again every second until none is.
 */
import type { Backend } from '../ipc/backend';
import type { ImportPreview, ImportSource, McpEdited, McpOverview, McpServerInfo, ServerConfig } from '../ipc/bindings';
import { toIpcError } from '../ipc/errors';
import type { FieldStatus, SettingsModel } from './settings.svelte';

/** How often the servers are asked about while one is starting. */
export const MCP_POLL_MS = 1000;

export class McpModel {
  overview = $state.raw<McpOverview | null>(null);
  /** Why the servers could not be read. */
  error = $state<string | null>(null);
  /** Each server's last action: "Saving…" while it runs, then nothing or the backend's message. */
  status = $state.raw<Record<string, FieldStatus>>({});
  sources = $state.raw<ImportSource[]>([]);

  private readonly settings: SettingsModel;

  constructor(settings: SettingsModel) {
    this.settings = settings;
  }

  get api(): Backend {
    return this.settings.host.api;
  }

  get servers(): McpServerInfo[] {
    return this.overview?.servers ?? [];
  }

  get anyStarting(): boolean {
    return this.servers.some((s) => s.enabled && s.detail.status.state === 'starting');
  }

  async load(): Promise<void> {
    await Promise.all([this.refresh(), this.loadSources()]);
  }

  /** Reads the servers again; the chat's tools follow when a server's tools may have changed. */
  async refresh(): Promise<void> {
    const before = this.toolsKey();
    try {
      this.overview = await this.api.mcpServers();
      this.error = null;
    } catch (e) {
      this.error = toIpcError(e).message;
      return;
    }
    if (before !== null && before !== this.toolsKey()) await this.toolsChanged();
  }

  private async loadSources(): Promise<void> {
    try {
      this.sources = await this.api.mcpImportSources();
    } catch {
      // Importing is an extra; without the list the section just does not offer it.
      this.sources = [];
    }
  }

  /** What the offered tools depend on, to tell when they changed. */
  private toolsKey(): string | null {
    if (!this.overview) return null;
    return this.servers.map((s) => `${s.detail.name}:${s.enabled}:${s.detail.status.state}:${s.detail.tools.map((t) => t.name).join(',')}`).join('|');
  }

  private async toolsChanged(): Promise<void> {
    await Promise.all([this.settings.reloadTools(), this.settings.host.loadTools()]);
  }

  private put(info: McpServerInfo): void {
    const o = this.overview ?? { configPath: null, problem: null, servers: [] };
    const has = o.servers.some((s) => s.detail.name === info.detail.name);
    const servers = has ? o.servers.map((s) => (s.detail.name === info.detail.name ? info : s)) : [...o.servers, info].sort((a, b) => a.detail.name.localeCompare(b.detail.name));
    this.overview = { ...o, servers };
  }

  private setStatus(name: string, s: FieldStatus | null): void {
    const { [name]: _, ...rest } = this.status;
    this.status = s ? { ...rest, [name]: s } : rest;
  }

  /** Runs one action on a server; its answer replaces the server's row. Resolves with whether it worked. */
  private async act(name: string, run: () => Promise<McpServerInfo>): Promise<boolean> {
    this.setStatus(name, { state: 'saving' });
    try {
      this.put(await run());
      this.setStatus(name, null);
    } catch (e) {
      this.setStatus(name, { state: 'error', message: toIpcError(e).message });
      return false;
    }
    await this.refresh();
    await this.toolsChanged();
    return true;
  }

  setEnabled(name: string, enabled: boolean): Promise<boolean> {
    return this.act(name, () => this.api.mcpSetEnabled(name, enabled));
  }

  approve(name: string): Promise<boolean> {
    return this.act(name, () => this.api.mcpApprove(name));
  }

  restart(name: string): Promise<boolean> {
    return this.act(name, () => this.api.mcpRestart(name));
  }

  approveTools(name: string): Promise<boolean> {
    return this.act(name, () => this.api.mcpApproveTools(name));
  }

  signIn(name: string): Promise<boolean> {
    return this.act(name, () => this.api.mcpSignIn(name));
  }

  async remove(name: string): Promise<void> {
    this.setStatus(name, { state: 'saving' });
    try {
      this.overview = await this.api.mcpRemove(name);
      this.setStatus(name, null);
    } catch (e) {
      this.setStatus(name, { state: 'error', message: toIpcError(e).message });
      return;
    }
    await this.toolsChanged();
  }

  /** Adds a server. Resolves with the server, or with the backend's message. */
  async add(name: string, config: ServerConfig): Promise<{ info: McpServerInfo } | { error: string }> {
    let info: McpServerInfo;
    try {
      info = await this.api.mcpAdd(name, config);
    } catch (e) {
      return { error: toIpcError(e).message };
    }
    this.put(info);
    await this.refresh();
    await this.toolsChanged();
    return { info };
  }

  /**
   * Edits a server (its name too). Resolves with the server and how many of its running calls were
   * stopped, or with the backend's message (a name another server has, a bad URL...).
   */
  async edit(name: string, newName: string, config: ServerConfig): Promise<{ info: McpServerInfo; stoppedCalls: number } | { error: string }> {
    this.setStatus(name, { state: 'saving' });
    let out: McpEdited;
    try {
      out = await this.api.mcpEdit(name, newName, config);
    } catch (e) {
      this.setStatus(name, null);
      return { error: toIpcError(e).message };
    }
    this.setStatus(name, null);
    if (this.overview && newName !== name) this.overview = { ...this.overview, servers: this.servers.filter((s) => s.detail.name !== name) };
    this.put(out.server);
    await this.refresh();
    await this.toolsChanged();
    return { info: out.server, stoppedCalls: out.stoppedCalls };
  }

  preview(app: string): Promise<ImportPreview> {
    return this.api.mcpImportPreview(app);
  }

  pastePreview(text: string): Promise<ImportPreview> {
    return this.api.mcpPastePreview(text);
  }

  async paste(text: string): Promise<ImportPreview> {
    const done = await this.api.mcpPaste(text);
    await this.refresh();
    await this.toolsChanged();
    return done;
  }

  async import(app: string): Promise<ImportPreview> {
    const done = await this.api.mcpImport(app);
    await this.refresh();
    await this.toolsChanged();
    return done;
  }
}
