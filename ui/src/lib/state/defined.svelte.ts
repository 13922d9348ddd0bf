/**
 * The "Your tools" section's state: the tools people define without code (`tools.json`: HTTP API
 * tools and command tools), the status of each tool's last action, and trying an HTTP tool. What
 * needs the person's approval (a command line, a key sent to an origin) is asked by the shell in a
 * dialog of its own; the page only learns the outcome.
 */
import type { Backend } from '../ipc/backend';
import type {
  CommandToolConfig,
  DefinedConfig,
  DefinedToolInfo,
  DefinedToolsOverview,
  HttpToolConfig,
  IpcError,
  JsonValue,
  OpenApiImport,
  OpenApiWindowPreview,
  OpenApiWindowRequest,
  TryResult,
} from '../ipc/bindings';
import { toIpcError } from '../ipc/errors';
import type { FieldStatus, SettingsModel } from './settings.svelte';

export type AddOutcome = { info: DefinedToolInfo } | { error: IpcError };
export type Outcome<T> = { value: T } | { error: IpcError };

export class DefinedModel {
  overview = $state.raw<DefinedToolsOverview | null>(null);
  /** Why the tools could not be read. */
  error = $state<string | null>(null);
  /** Each tool's last action: "Saving…" while it runs, then nothing or the backend's message. */
  status = $state.raw<Record<string, FieldStatus>>({});

  private readonly settings: SettingsModel;

  constructor(settings: SettingsModel) {
    this.settings = settings;
  }

  private get api(): Backend {
    return this.settings.host.api;
  }

  get tools(): DefinedToolInfo[] {
    return this.overview?.tools ?? [];
  }

  async load(): Promise<void> {
    try {
      this.overview = await this.api.definedTools();
      this.error = null;
    } catch (e) {
      this.error = toIpcError(e).message;
    }
  }

  /** The chat's tools follow a change (a tool added, allowed or removed). */
  private async toolsChanged(): Promise<void> {
    await Promise.all([this.settings.reloadTools(), this.settings.host.loadTools()]);
  }

  private setStatus(name: string, s: FieldStatus | null): void {
    const { [name]: _, ...rest } = this.status;
    this.status = s ? { ...rest, [name]: s } : rest;
  }

  /** One tool's whole definition, to edit it. */
  config(name: string): Promise<DefinedConfig> {
    return this.api.definedToolConfig(name);
  }

  /** Runs a change, then reads the list and the chat's tools again. */
  private async changed<T>(run: () => Promise<T>): Promise<Outcome<T>> {
    let value: T;
    try {
      value = await run();
    } catch (e) {
      return { error: toIpcError(e) };
    }
    await this.load();
    await this.toolsChanged();
    return { value };
  }

  private async added(run: () => Promise<DefinedToolInfo>): Promise<AddOutcome> {
    const out = await this.changed(run);
    return 'error' in out ? out : { info: out.value };
  }

  /** Reads and converts an OpenAPI document (a URL, or a file the shell's native dialog chooses) without keeping anything, or says why it cannot. */
  async previewOpenApi(request: OpenApiWindowRequest): Promise<Outcome<OpenApiWindowPreview>> {
    try {
      return { value: await this.api.previewOpenapi(request) };
    } catch (e) {
      return { error: toIpcError(e) };
    }
  }

  /** Imports an OpenAPI document (the shell asks about its keys in its own dialog); the list follows. */
  importOpenApi(request: OpenApiWindowRequest): Promise<Outcome<OpenApiImport>> {
    return this.changed(() => this.api.importOpenapi(request));
  }

  /** Adds or replaces an HTTP tool; resolves with where it stands, or the backend's error. */
  addHttp(config: HttpToolConfig): Promise<AddOutcome> {
    return this.added(() => this.api.addHttpTool(config));
  }

  /** Adds or replaces a command tool; resolves with where it stands, or the backend's error. */
  addCommand(config: CommandToolConfig): Promise<AddOutcome> {
    return this.added(() => this.api.addCommandTool(config));
  }

  /** Asks (in the shell's own dialog) to allow a waiting tool. Resolves with whether it is allowed. */
  async approve(name: string): Promise<boolean> {
    this.setStatus(name, { state: 'saving' });
    try {
      await this.api.approveDefinedTool(name);
      this.setStatus(name, null);
    } catch (e) {
      this.setStatus(name, { state: 'error', message: toIpcError(e).message });
      return false;
    }
    await this.load();
    await this.toolsChanged();
    return true;
  }

  async remove(name: string): Promise<void> {
    this.setStatus(name, { state: 'saving' });
    try {
      this.overview = await this.api.removeDefinedTool(name);
      this.setStatus(name, null);
    } catch (e) {
      this.setStatus(name, { state: 'error', message: toIpcError(e).message });
      return;
    }
    await this.toolsChanged();
  }

  /** Runs an HTTP tool once: the request it sent and what came back (or why it could not run). */
  async tryTool(name: string, args: Record<string, JsonValue>): Promise<TryResult> {
    try {
      return await this.api.tryHttpTool(name, args);
    } catch (e) {
      return { request: '', ok: null, error: toIpcError(e).message };
    }
  }
}
