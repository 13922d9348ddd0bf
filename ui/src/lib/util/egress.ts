import type { EgressReason } from '../ipc/bindings';

/** What leaves is said inline up to this many characters on one line (Rust's `INLINE_SENDS`). */
const INLINE_SENDS = 200;

/**
 * The egress question in words, as the CLI says it (`EgressReason::describe`): the sentence, and
 * what would leave when it is too long or too many lines to say inline (`block`).
 */
export function describeEgress(reason: EgressReason): { sentence: string; block: string | null } {
  const inline = reason.sends.length <= INLINE_SENDS && !reason.sends.includes('\n');
  const what = inline ? reason.sends : 'the text below';
  return {
    sentence: `This would send ${what} to ${reason.destination}, a destination not used in this chat, after the chat read output from ${reason.after}.`,
    block: inline ? null : reason.sends,
  };
}
