/**
 * Settings → MCP → roots: the folders servers are told of, for every server and per server. A
 * folder is added only through the shell's native folder dialog (the page never names a path it
 * did not get from there); removing one only narrows what servers are told.
 *
 * Invariant: each list shown is the last one the backend returned for it; a failed change leaves
 * it as it was and says why (a closed dialog is no failure).
 */
import type { Backend } from '../ipc/backend';
import { toIpcError } from '../ipc/errors';
import { features } from './state.svelte';

/** The key of a list: a server's name, or `*` for every server's. */
const key = (server: string | null): string => server ?? '*';

export class RootsModel {
  lists = $state.raw<Record<string, string[]>>({});
  errors = $state.raw<Record<string, string>>({});
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
    return this.lists[key(server)] ?? [];
  }

  error(server: string | null): string | null {
    return this.errors[key(server)] ?? null;
  }

  async load(server: string | null): Promise<void> {
    await this.run(server, (f) => f.mcpRoots(server));
  }

  /** Asks for a folder in the native dialog and adds it. */
  async add(server: string | null): Promise<void> {
    await this.run(server, (f) => f.mcpAddRoot(server));
  }

  async remove(server: string | null, path: string): Promise<void> {
    await this.run(server, (f) => f.mcpRemoveRoot(server, path));
  }

  private async run(server: string | null, op: (f: NonNullable<ReturnType<typeof features>>) => Promise<string[]>): Promise<void> {
    const f = features(this.api());
    if (!f) return;
    const k = key(server);
    this.busy = true;
    try {
      // Awaited first: read before the await, `this.lists` would become a dependency of the
      // effect that loads a list, which the write below would run again, forever.
      const list = await op(f);
      this.lists = { ...this.lists, [k]: list };
      const { [k]: _, ...rest } = this.errors;
      this.errors = rest;
    } catch (e) {
      const err = toIpcError(e);
      if (err.kind !== 'cancelled') this.errors = { ...this.errors, [k]: err.message };
    } finally {
      this.busy = false;
    }
  }
}
