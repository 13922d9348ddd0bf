/**
 * What stored answers cost, as read from the service: each answer's total (from
 * `conversation_usage`, one call per opened conversation) and, per answer read with
 * `message_usage`, its details and the tool results it re-sent. Keyed by message id (ids are
 * unique across conversations). An answer streaming now is not read here: its own events say
 * what it cost (`MessageModel.requests`).
 *
 * Invariant: a read that fails leaves what was there; nothing here is ever shown as $0 for lack
 * of data (a missing total shows the answer's tokens only).
 */
import { SvelteMap } from 'svelte/reactivity';
import type { Backend } from '../ipc/backend';
import type { ConversationUsage, MessageUsage } from '../ipc/usage';
import { spendFromTotals, type Resent, type SpendTotal } from '../model/spend';

/** Each stored answer's total, by message id. */
export const answerTotals = new SvelteMap<string, SpendTotal>();
/** Re-sent tool results, by tool call id. */
export const resends = new SvelteMap<string, Resent>();
/** Read answers' usage, by message id (the promise, so two views asking at once share one read). Not state: nothing renders from it. */
// eslint-disable-next-line svelte/prefer-svelte-reactivity
const read = new Map<string, Promise<MessageUsage | null>>();

/** Puts a conversation's totals in place (each answer's, for its cost line). */
export function rememberConversation(u: ConversationUsage): void {
  for (const m of u.messages) answerTotals.set(m.messageId, spendFromTotals(m.total));
}

/** Reads an answer's usage once (again after `forget`); null when the read failed (it is tried again next time). */
export function messageUsage(api: Backend, messageId: string): Promise<MessageUsage | null> {
  let p = read.get(messageId);
  if (!p) {
    p = (async () => {
      try {
        const u = await api.messageUsage(messageId);
        answerTotals.set(messageId, spendFromTotals(u.total));
        for (const r of u.resends) if (r.resentTimes > 0) resends.set(r.callId, { times: r.resentTimes, tokens: r.approxTokens });
        return u;
      } catch {
        read.delete(messageId);
        return null;
      }
    })();
    read.set(messageId, p);
  }
  return p;
}

/** Drops what is known of an answer (it changed: read it again next time). */
export function forget(messageId: string): void {
  read.delete(messageId);
}
