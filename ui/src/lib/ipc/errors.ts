/** IPC errors as the UI handles them, and the words it shows for each kind. */
import { ERROR_KINDS, type ErrorKind, type IpcError } from './bindings';

function isKind(k: unknown): k is ErrorKind {
  return typeof k === 'string' && (ERROR_KINDS as readonly string[]).includes(k);
}

/** Normalizes whatever a rejected `invoke` (or a thrown exception) carries into an `IpcError`. */
export function toIpcError(e: unknown): IpcError {
  if (e && typeof e === 'object' && 'message' in e) {
    const o = e as { kind?: unknown; message?: unknown; retryable?: unknown };
    return {
      kind: isKind(o.kind) ? o.kind : 'internal',
      message: typeof o.message === 'string' && o.message ? o.message : 'Something went wrong.',
      retryable: o.retryable === true,
    };
  }
  if (typeof e === 'string' && e) return { kind: 'internal', message: e, retryable: false };
  return { kind: 'internal', message: 'Something went wrong.', retryable: false };
}

/** A person-readable headline for each error kind. */
export function describeErrorKind(kind: ErrorKind): string {
  switch (kind) {
    case 'auth':
      return 'The provider rejected the API key';
    case 'rateLimited':
      return 'The provider is rate-limiting requests';
    case 'overloaded':
      return 'The provider is overloaded right now';
    case 'contextLength':
      return 'The conversation is too long for this model';
    case 'badRequest':
      return 'The provider rejected the request';
    case 'notFound':
      return 'The model or endpoint was not found';
    case 'server':
      return 'The provider had a server error';
    case 'network':
      return 'Could not reach the provider';
    case 'timeout':
      return 'The provider took too long to answer';
    case 'cancelled':
      return 'The request was cancelled';
    case 'protocol':
      return 'The provider sent a response Switchboard could not read';
    case 'config':
      return 'Switchboard is not configured for this';
    case 'storage':
      return 'Could not read or write the local database';
    case 'internal':
      return 'Something went wrong inside Switchboard';
  }
}

/** Where the person fixes an error: a button that opens that settings section. */
export interface ErrorAction {
  label: string;
  section: 'keys' | 'providers';
}

/**
 * The action that fixes an error of this kind, if the person can fix it in Settings. The one place
 * that maps error kinds to actions: toasts and the error callout of a failed answer both use it.
 */
export function errorAction(kind: ErrorKind, ctx: { hasProviders: boolean }): ErrorAction | null {
  switch (kind) {
    case 'auth':
      return { label: 'Open Keys', section: 'keys' };
    case 'network':
      return { label: 'Open Providers', section: 'providers' };
    case 'config':
      // Other configuration errors name their own fix in the message; no provider at all has one place to go.
      return ctx.hasProviders ? null : { label: 'Add a provider', section: 'providers' };
    default:
      return null;
  }
}
