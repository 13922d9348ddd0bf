/**
 * The context meter in the fake: a conversation's next request counted as the service estimates
 * a model it has no tokenizer for (about 4 characters a token), against a few known windows; a
 * model it does not know has an unknown window, as the service says for one the catalogue lacks.
 */
import type { ContextBreakdown, ConversationContext, StoredMessage } from '../bindings';
import { shownPath } from './tree';
import type { FakeConversation } from './state';

/** Windows of the fake's models (the service reads them from its catalogue). */
const WINDOWS: [prefix: string, window: number][] = [
  ['gpt-4o', 128_000],
  ['gpt-4.1', 1_047_576],
  ['gpt-5', 400_000],
  ['claude', 200_000],
  ['gemini', 1_048_576],
];

export function windowOf(model: string): number | null {
  return WINDOWS.find(([p]) => model.startsWith(p))?.[1] ?? null;
}

const tokens = (text: string) => Math.ceil(text.length / 4);

/** What `messages` would send, part by part (3 tokens around each message, as the engine counts). */
export function breakdownOf(messages: StoredMessage[]): ContextBreakdown {
  const b: ContextBreakdown = { instructions: 0, tools: 0, history: 3, toolResults: 0, attachments: 0 };
  for (const m of messages) {
    b.history += 3 + tokens(m.content);
    for (const c of m.toolCalls) {
      b.history += 8 + tokens(c.name) + tokens(c.arguments);
      if (c.result) {
        b.toolResults += 3 + tokens(c.result.output);
        b.attachments += (c.result.images?.length ?? 0) * 1_600;
      }
    }
  }
  return b;
}

export function contextOf(conv: FakeConversation, model: string, compactAtPercent: number | null): ConversationContext {
  const breakdown = breakdownOf(shownPath(conv).filter((m) => m.status !== 'streaming'));
  const usedTokens = Object.values(breakdown).reduce((a, n) => a + n, 0);
  return { usedTokens, window: windowOf(model), breakdown, estimated: true, compactAt: (compactAtPercent ?? 80) / 100 };
}
