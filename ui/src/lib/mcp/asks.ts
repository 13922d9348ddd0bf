/**
 * A server's questions during a tool call (elicitation and sampling) in the message model: the
 * live events put each on the call it serves, and its answer marks it resolved.
 *
 * Invariant: an ask only ever attaches to the call named by its `callId` (a sub-agent's call is
 * matched by the end of the path it is asked under, as approvals are); an event for a call the
 * answer does not have changes nothing.
 */
import type { AskEvent, ElicitationAction, ElicitationRequest, SamplingRequest } from './types';

export type CallAsk =
  | { kind: 'elicitation'; request: ElicitationRequest; resolved: ElicitationAction | null }
  | { kind: 'sampling'; request: SamplingRequest; resolved: 'approved' | 'denied' | null };

const ASK_TYPES: readonly string[] = ['elicitationRequested', 'elicitationResolved', 'samplingRequested', 'samplingResolved'];

/** Whether an event of the turn is one of these questions or answers. */
export function isAskEvent(e: { type: string }): e is AskEvent {
  return ASK_TYPES.includes(e.type);
}

/** Whether `callId` (possibly `parent/Name[i]/call`) names the call `id`. */
function forCall(id: string, callId: string): boolean {
  return id === callId || callId.endsWith(`/${id}`);
}

interface WithAsks {
  id: string;
  asks?: CallAsk[];
}

/** The calls after one ask event (new arrays only where something changed). */
export function reduceAsks<C extends WithAsks>(calls: C[], e: AskEvent): C[] {
  switch (e.type) {
    case 'elicitationRequested':
    case 'samplingRequested': {
      const { type: _, ...request } = e;
      const id = e.requestId;
      const ask: CallAsk = e.type === 'elicitationRequested' ? { kind: 'elicitation', request: request as ElicitationRequest, resolved: null } : { kind: 'sampling', request: request as SamplingRequest, resolved: null };
      let hit = false;
      const out = calls.map((c) => {
        if (hit || !forCall(c.id, e.callId) || (c.asks ?? []).some((a) => a.request.requestId === id)) return c;
        hit = true;
        return { ...c, asks: [...(c.asks ?? []), ask] };
      });
      return hit ? out : calls;
    }
    case 'elicitationResolved':
    case 'samplingResolved': {
      let hit = false;
      const out = calls.map((c) => {
        if (!(c.asks ?? []).some((a) => a.request.requestId === e.requestId && a.resolved === null)) return c;
        hit = true;
        const asks = (c.asks ?? []).map((a): CallAsk => {
          if (a.request.requestId !== e.requestId) return a;
          if (a.kind === 'elicitation' && e.type === 'elicitationResolved') return { ...a, resolved: e.action };
          if (a.kind === 'sampling' && e.type === 'samplingResolved') return { ...a, resolved: e.approved ? 'approved' : 'denied' };
          return a;
        });
        return { ...c, asks };
      });
      return hit ? out : calls;
    }
  }
}

/** The asks still waiting for the person. */
export function waitingAsks(asks: readonly CallAsk[] | undefined): CallAsk[] {
  return (asks ?? []).filter((a) => a.resolved === null);
}

/** The asks after the turn ended: an unanswered one was cancelled with it. */
export function endAsks(asks: readonly CallAsk[] | undefined): CallAsk[] | undefined {
  if (!asks || asks.every((a) => a.resolved !== null)) return asks as CallAsk[] | undefined;
  return asks.map((a): CallAsk => (a.resolved !== null ? a : a.kind === 'elicitation' ? { ...a, resolved: 'cancel' } : { ...a, resolved: 'denied' }));
}
