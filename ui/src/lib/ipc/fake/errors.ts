/**
 * The errors the fake throws: the service's own, for the same bad input. Each case in
 * `../errors.generated.json` was produced by running that input through the real service
 * (crates/service/tests/ipc_errors.rs); the parts that came from the input are `{placeholders}`,
 * filled in here with this call's values. Regenerate the file with
 * `UPDATE_IPC_ERRORS=1 cargo test -p switchboard-service --test ipc_errors`.
 */
import type { IpcError } from '../bindings';
import generated from '../errors.generated.json';

/** A case of the generated file. */
export type ErrorCase = keyof typeof generated;

const CASES: Record<ErrorCase, IpcError> = generated as Record<ErrorCase, IpcError>;

/** The message of `name` with its placeholders filled in. */
export function errorText(name: ErrorCase, vars: Record<string, string | number> = {}): string {
  let message = CASES[name].message;
  for (const [key, value] of Object.entries(vars)) message = message.replaceAll(`{${key}}`, String(value));
  return message;
}

/** The error the service answers case `name` with (throw it). */
export function ipcError(name: ErrorCase, vars: Record<string, string | number> = {}): IpcError {
  return { ...CASES[name], message: errorText(name, vars) };
}

/**
 * An error the generator cannot produce from the service alone, written here: what the shell
 * says itself (an unknown app to import from), what needs a network or a server that runs (a
 * listing that fails, a sign-in), or a keychain that cannot be used.
 */
export function fakeOnlyError(kind: IpcError['kind'], message: string, retryable = false): IpcError {
  return { kind, message, retryable };
}
