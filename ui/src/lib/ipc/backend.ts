/**
 * What the UI needs from the shell, as one type derived from the generated command list
 * (`commands.ts`, rendered from src-tauri's source): one method per command, named in camelCase
 * (`list_conversations` -> `listConversations`), taking the command's arguments in the order Rust
 * declares them and resolving with its result. A turn's event channel is passed as `TurnHandlers`.
 * Adding a command in Rust and regenerating `commands.ts` adds its method here, in the Tauri
 * backend and in the forwarding `api` (api.ts); the fake (fake/) then has to implement it.
 * This file imports nothing from Tauri.
 */
import type { ChatEvent } from './bindings';
import { COMMANDS, type CommandName, type Commands, type EventChannel } from './commands';

/** Where one turn's events go. */
export interface TurnHandlers {
  /** Each event, in order: `started` first, `done` last. */
  onEvent(event: ChatEvent): void;
  /** The event channel ended (the shell dropped it). After `done` this is expected; before, the turn was lost. */
  onClose?(): void;
}

/** A command's name as a method: snake_case to camelCase. */
export type MethodName<C extends string> = C extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<MethodName<Tail>>}` : C;

/** Arguments as a method takes them: the event channel becomes the turn's handlers. */
type WithHandlers<P extends unknown[]> = { [K in keyof P]: P[K] extends EventChannel<ChatEvent> ? TurnHandlers : P[K] };

/** A command's arguments as its method takes them, in the order Rust declares them. */
export type MethodParams<C extends CommandName> = WithHandlers<Commands[C]['params']>;

/** Every command of the shell as a typed method. */
export type Backend = {
  [C in CommandName as MethodName<C>]: (...params: MethodParams<C>) => Promise<Commands[C]['result']>;
};

/** Every command the shell registers. */
export const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[];

/** The method name of a command (see `MethodName`). */
export function methodName<C extends CommandName>(command: C): MethodName<C> {
  return command.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) as MethodName<C>;
}
