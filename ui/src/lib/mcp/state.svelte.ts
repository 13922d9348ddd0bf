/**
 * What the composer knows of the running MCP servers' prompts and resources, and the resources
 * attached to the next message. Lists are read when a menu opens (at most every few seconds, and
 * each server on its own, so a slow or broken one never hides the others).
 *
 * Invariant: a menu shows only what the servers answered; one server's failure is kept as its own
 * line and never empties another's list. An attached resource (or a prompt's file) joins the
 * composer's attachments (`AttachmentTray`), so it goes out, and is stored, like any file.
 */
import type { Backend } from '../ipc/backend';
import { toIpcError } from '../ipc/errors';
import type { Attachment, CompletionRef, ElicitationAction, McpFeatures, McpPrompts, McpResources, PromptMessages, SamplingMessage } from './types';

/** Lists are read again at most this often (ms). */
export const LIST_EVERY_MS = 5000;

/** The commands of these features if the backend has them (an older shell does not). */
export function features(api: Backend): McpFeatures | null {
  const f = api as unknown as Partial<McpFeatures>;
  return typeof f.mcpPrompts === 'function' ? (api as unknown as McpFeatures) : null;
}

export interface ServerLists<T> {
  server: string;
  items: T | null;
  error: string | null;
}

export class McpComposer {
  /** The servers that run, by name. */
  servers = $state.raw<string[]>([]);
  prompts = $state.raw<ServerLists<McpPrompts>[]>([]);
  resources = $state.raw<ServerLists<McpResources>[]>([]);
  loading = $state(false);

  private readonly api: () => Backend;
  /** Where an attached resource goes: the composer's attachments. */
  private readonly attachTo: (a: Attachment) => void;
  private readAt = 0;
  private reading: Promise<void> | null = null;

  constructor(api: () => Backend, attachTo: (a: Attachment) => void) {
    this.api = api;
    this.attachTo = attachTo;
  }

  get available(): boolean {
    return features(this.api()) !== null;
  }

  private get f(): McpFeatures {
    const f = features(this.api());
    if (!f) throw new Error('This version of the app cannot read MCP prompts or resources.');
    return f;
  }

  /** Reads the running servers and their prompts and resources (again when older than `LIST_EVERY_MS`, or `force`). */
  load(force = false): Promise<void> {
    if (!this.available) return Promise.resolve();
    if (this.reading) return this.reading;
    if (!force && Date.now() - this.readAt < LIST_EVERY_MS) return Promise.resolve();
    this.loading = true;
    this.reading = this.read().finally(() => {
      this.loading = false;
      this.reading = null;
      this.readAt = Date.now();
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    let names: string[];
    try {
      const overview = await this.api().mcpServers();
      names = overview.servers.filter((s) => s.enabled && s.detail.status.state === 'ready').map((s) => s.detail.name);
    } catch {
      names = [];
    }
    this.servers = names;
    const f = this.f;
    const settle = async <T>(server: string, p: Promise<T>): Promise<ServerLists<T>> => {
      try {
        return { server, items: await p, error: null };
      } catch (e) {
        return { server, items: null, error: toIpcError(e).message };
      }
    };
    const [prompts, resources] = await Promise.all([
      Promise.all(names.map((s) => settle(s, f.mcpPrompts(s)))),
      Promise.all(names.map((s) => settle(s, f.mcpResources(s)))),
    ]);
    this.prompts = prompts;
    this.resources = resources;
  }

  getPrompt(server: string, name: string, args: Record<string, string>): Promise<PromptMessages> {
    return this.f.mcpGetPrompt(server, name, args);
  }

  /** The server's suggestions for one argument (none when it offers no completion or fails). */
  async complete(server: string, reference: CompletionRef, argument: string, value: string, context: Record<string, string>): Promise<string[]> {
    try {
      return (await this.f.mcpComplete(server, reference, argument, value, context)).values.slice(0, 100);
    } catch {
      return [];
    }
  }

  /** A template with its parameters filled in, checked by the service (another scheme is refused). */
  async expand(uriTemplate: string, values: Record<string, string>): Promise<{ uri: string } | { error: string }> {
    try {
      return { uri: await this.f.mcpExpandTemplate(uriTemplate, values) };
    } catch (e) {
      return { error: toIpcError(e).message };
    }
  }

  /** Attaches a resource to the next message; resolves with the backend's message on failure. */
  async attach(server: string, uri: string): Promise<string | null> {
    try {
      this.attachTo(await this.f.mcpAttachResource(server, uri));
      return null;
    } catch (e) {
      return toIpcError(e).message;
    }
  }

  /** Adds the files a prompt carried (images, embedded resources). */
  addAttachments(list: readonly Attachment[]): void {
    for (const a of list) this.attachTo(a);
  }
}

/** Sends the person's answer to a server's form or URL request; resolves with the backend's message on failure. */
export async function answerElicitation(api: Backend, id: string, action: ElicitationAction, content: Record<string, unknown> | null): Promise<string | null> {
  const f = features(api);
  if (!f) return 'This version of the app cannot answer a server’s questions.';
  try {
    await f.answerElicitation(id, action, action === 'accept' ? content : null);
    return null;
  } catch (e) {
    return toIpcError(e).message;
  }
}

/** Sends the person's decision on a sampling request (`messages`: the edited messages, or null as asked). */
export async function answerSampling(api: Backend, id: string, approve: boolean, messages: SamplingMessage[] | null): Promise<string | null> {
  const f = features(api);
  if (!f) return 'This version of the app cannot answer a server’s questions.';
  try {
    await f.answerSampling(id, approve, approve ? messages : null);
    return null;
  } catch (e) {
    return toIpcError(e).message;
  }
}
