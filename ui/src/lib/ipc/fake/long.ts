/**
 * A long conversation for looking at paging, search and find (`FakeOptions.longChat`, `?long=N` in
 * dev): N messages, questions and answers in turn; the second answer has a `get_time` call whose
 * result holds the word "zebrafish", so a search for it lands on an old message inside a folded
 * tool card.
 */
import { userMessage } from '../../model/message';
import { ANSWER, toStored } from './golden';
import type { FakeState } from './state';

export const LONG_CHAT_TITLE = 'Long conversation';
export const LONG_CHAT_WORD = 'zebrafish';

export function seedLongChat(st: FakeState, n: number): void {
  const cid = st.id('c');
  const t0 = Date.now() - 3 * 24 * 3_600_000;
  const messages = Array.from({ length: Math.max(2, n) }, (_, i) => {
    const at = t0 + i * 60_000;
    if (i % 2 === 0) return toStored(userMessage(st.id('m'), `Question ${i / 2 + 1}: tell me about step ${i / 2 + 1} of the plan.`), at, at);
    const base = structuredClone(ANSWER.stored);
    const withCall = i === 3;
    return {
      ...base,
      id: st.id('m'),
      createdAt: at,
      updatedAt: at,
      reasoning: '',
      content: `Answer ${(i + 1) / 2}: step ${(i + 1) / 2} is **done**. The next step follows the same plan, with one more check of the results.`,
      toolCallsMade: withCall ? 1 : 0,
      toolCalls: withCall
        ? base.toolCalls.slice(0, 1).map((c) => ({
            ...c,
            callId: st.id('call'),
            textOffset: 0,
            result: c.result ? { ...c.result, output: `The aquarium log lists a ${LONG_CHAT_WORD} in tank 4, fed at 09:00.` } : null,
          }))
        : [],
    };
  });
  // One path: each message follows the one before it.
  const chained = messages.map((m, i) => ({ ...m, parentId: messages[i - 1]?.id ?? null, versions: [m.id] }));
  st.conversations.set(cid, {
    summary: { id: cid, title: LONG_CHAT_TITLE, createdAt: t0, updatedAt: t0 + n * 60_000, messageCount: chained.length, pinned: false, archived: false },
    messages: chained,
    chosenAt: new Map(),
    disabled: new Set(),
  });
}
