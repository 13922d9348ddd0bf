/**
 * The only module that talks to the Tauri shell (and the only importer of @tauri-apps/*). Every
 * command of the IPC contract is one typed method; rejections are normalized to `IpcError`.
 * Outside Tauri (plain `npm run dev` in a browser) a scripted in-memory fake stands in; tests swap
 * in their own backend with `setBackend`.
 */
import { Channel, convertFileSrc, invoke, type InvokeArgs } from '@tauri-apps/api/core';
import type { ChatEvent } from './bindings';
import { CHANNEL_ARGS, COMMANDS, type CommandName, type Commands } from './commands';
import { COMMAND_NAMES, methodName, type Backend, type TurnHandlers } from './backend';
import { toIpcError } from './errors';
import { isAllowedUrl } from '../markdown/links';
import { releaseBytes } from '../util/attachments';

export type { Backend, TurnHandlers } from './backend';

/**
 * A Channel for one turn. Tauri sends an end marker when the Rust side drops the channel and then
 * calls the channel's (private) `cleanupCallback`; wrapping it is how the UI learns that the stream
 * ended, so a turn whose channel closes without `done` keeps its partial answer as interrupted.
 */
function channelFor(handlers: TurnHandlers): Channel<ChatEvent> {
  const ch = new Channel<ChatEvent>();
  ch.onmessage = (event) => handlers.onEvent(event);
  const inner = ch as unknown as { cleanupCallback?: () => void };
  const cleanup = inner.cleanupCallback;
  if (typeof cleanup === 'function') {
    inner.cleanupCallback = () => {
      cleanup.call(ch);
      handlers.onClose?.();
    };
  }
  return ch;
}

/**
 * Invokes a command by the names the shell declares (`commands.ts` is generated from its source):
 * an unknown command, a missing or misspelled argument key, or a wrong argument type does not
 * compile.
 */
async function call<C extends CommandName>(cmd: C, args: Commands[C]['args']): Promise<Commands[C]['result']> {
  if (!inTauri()) {
    throw toIpcError({ kind: 'internal', message: 'This window is not connected to the Switchboard app. Open Switchboard from the desktop app.' });
  }
  try {
    return await invoke<Commands[C]['result']>(cmd, args as InvokeArgs);
  } catch (e) {
    throw toIpcError(e);
  }
}

/**
 * The method of one command: its positional arguments become the argument keys the shell reads
 * (in `COMMANDS` order), a turn's handlers become its event channel.
 */
function commandMethod<C extends CommandName>(cmd: C): (...params: unknown[]) => Promise<Commands[C]['result']> {
  const keys: readonly string[] = COMMANDS[cmd];
  const channel: string | undefined = (CHANNEL_ARGS as Partial<Record<CommandName, string>>)[cmd];
  return (...params) => {
    const args: Record<string, unknown> = {};
    keys.forEach((key, i) => {
      // A left-out optional argument is sent as null (Tauri reads both as `None`).
      args[key] = key === channel ? channelFor(params[i] as TurnHandlers) : (params[i] ?? null);
    });
    return call(cmd, args as Commands[C]['args']);
  };
}

/** Every command as a method, derived from the generated command list. */
const commandMethods = Object.fromEntries(COMMAND_NAMES.map((c) => [methodName(c), commandMethod(c)])) as unknown as Backend;

/** The real backend: one command per method. */
export const tauriBackend: Backend = {
  ...commandMethods,
  // The shell checks the link again in Rust (the page is not trusted to) and opens it; this first
  // check only spares a round trip for links the markdown renderer would not have made.
  openUrl: async (url) => {
    if (!isAllowedUrl(url)) throw toIpcError({ kind: 'badRequest', message: 'This link cannot be opened.' });
    await commandMethods.openUrl(url);
  },
};

/** Whether the page runs inside the Tauri webview. */
export function inTauri(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

let current: Backend | null = null;
let loading: Promise<Backend> | null = null;

async function pickBackend(): Promise<Backend> {
  if (inTauri()) return tauriBackend;
  if (import.meta.env.DEV) {
    const { createFakeBackend, fakeOptionsFromUrl } = await import('./fake');
    return createFakeBackend(fakeOptionsFromUrl(location.search));
  }
  return tauriBackend;
}

/** The backend in use (chosen once). */
export function backend(): Promise<Backend> {
  if (current) return Promise.resolve(current);
  loading ??= pickBackend().then((b) => (current ??= b));
  return loading;
}

/** Replaces the backend (tests; the dev fake). */
export function setBackend(b: Backend): void {
  current = b;
  loading = null;
}

/** Every command, typed; each call goes to the backend in use. */
export const api: Backend = Object.fromEntries(
  COMMAND_NAMES.map((c) => {
    const name = methodName(c);
    return [name, async (...params: unknown[]) => ((await backend())[name] as (...p: unknown[]) => Promise<unknown>)(...params)];
  }),
) as unknown as Backend;

/**
 * Sends `blob` as the next bytes of upload `id` through the shell's `upload` scheme: the web engine
 * hands the body to the shell, so the window's thread neither encodes it nor pushes it through the
 * isolation frame (an IPC call costs it about 0.27 ms per KiB). Resolves `false` where the scheme
 * cannot be reached (outside the app, a web engine that drops request bodies): the caller sends
 * the bytes as `upload_chunk` calls instead. `end` is where the slice ends in the file: a body
 * that arrives shorter ends the upload. A refusal of the shell's rejects with its `IpcError`.
 */
export async function uploadBytes(id: string, blob: Blob, end: number): Promise<boolean> {
  if (!inTauri()) return false;
  let response: Response;
  try {
    // The bytes, not the Blob: WebKitGTK hands a scheme handler a file-backed body as a stream
    // that is read on the shell's main thread, where it can stall; an in-memory body cannot.
    const body = await blob.arrayBuffer();
    try {
      response = await fetch(`${convertFileSrc(id, 'upload')}?end=${end}`, { method: 'POST', body });
    } finally {
      releaseBytes(body);
    }
  } catch {
    return false;
  }
  if (response.ok) {
    // The shell answers with the bytes it holds, which it checked against `end`.
    return Number(await response.text()) === end;
  }
  const refused: unknown = await response.json().catch(() => ({ kind: 'internal', message: `The file could not be handed to Switchboard (${response.status}).` }));
  throw toIpcError(refused);
}
