/**
 * Settings → MCP → roots: the folders servers may work in, for all servers and per server. A
 * folder is added only through the shell's native folder dialog (the page never names a path it
 * did not get from there); removing one only narrows what servers see.
 *
 * Invariant: the list shown is the last one the backend returned; a failed change leaves it as it
 * was and says why.
 */
import type { Backend } from '../ipc/backend';
import { toIpcError } from '../ipc/errors';
import { features } from './state.svelte';
import type { McpRoots } from './types';

export class RootsModel {
  config = $state.raw<McpRoots | null>(null);
  error = $state<string | null>(null);
  busy = $state(false);
  private readonly api: () => Backend;

  constructor(api: () => Backend) {
    this.api = api;
  }

  get available(): boolean {
    return features(this.api()) !== null;
  }

  /** The folders of `server` (null: those every server gets). */
  of(server: string | null): string[] {
    if (!this.config) return [];
    return server === null ? this.config.all : (this.config.servers[server] ?? []);
  }

  async load(): Promise<void> {
    await this.run((f) => f.mcpRoots());
  }

  /** Asks for a folder in the native dialog and adds it (a closed dialog changes nothing). */
  async add(server: string | null): Promise<void> {
    await this.run((f) => f.mcpAddRoot(server));
  }

  async remove(server: string | null, path: string): Promise<void> {
    await this.run((f) => f.mcpRemoveRoot(server, path));
  }

  private async run(op: (f: NonNullable<ReturnType<typeof features>>) => Promise<McpRoots>): Promise<void> {
    const f = features(this.api());
    if (!f) return;
    this.busy = true;
    try {
      this.config = await op(f);
      this.error = null;
    } catch (e) {
      const err = toIpcError(e);
      // A closed dialog is the person's choice, not a problem.
      this.error = err.kind === 'cancelled' ? null : err.message;
    } finally {
      this.busy = false;
    }
  }
}
