/**
 * The fake backend's compaction commands behave as the service's: compact now adds a row that
 * summarises the path before its latest question, undo only marks it, pins mark a message, and
 * unknown ids get the service's own errors. Nothing is removed from the conversation.
 */
import { describe, expect, it } from 'vitest';
import { createFakeBackend } from '../src/lib/ipc/fake';

import type { SendRequest } from '../src/lib/ipc/bindings';

const ask = (conversationId: string | null, text: string): SendRequest => ({
  conversationId,
  text,
  provider: null,
  model: null,
  forced: [],
  useTools: false,
  dryRun: false,
  disableForChat: [],
});

async function chatWithTwoQuestions() {
  const b = createFakeBackend({ tickMs: 0, empty: true });
  const started = await new Promise<string>((resolve) => {
    void b.sendMessage(ask(null, 'First question'), {
      onEvent: (e) => {
        if (e.type === 'done') resolve('done');
      },
    });
  });
  expect(started).toBe('done');
  const cid = (await b.listConversations())[0]!.id;
  await new Promise<void>((resolve) => {
    void b.sendMessage(ask(cid, 'Second question'), {
      onEvent: (e) => {
        if (e.type === 'done') resolve();
      },
    });
  });
  return { b, cid };
}

describe('fake compaction', () => {
  it('compacts, lists, shows, undoes and pins without changing a message', async () => {
    const { b, cid } = await chatWithTwoQuestions();
    const before = (await b.openConversation(cid)).messages;
    const row = await b.compactConversation(cid);
    expect(row.reason).toBe('manual');
    expect(row.compaction.summary).toContain('First question');
    expect(row.throughMessageId).toBe(before[1]!.id);
    expect((await b.listCompactions(cid)).map((r) => r.id)).toEqual([row.id]);
    await b.setCompactionUndone(cid, row.id, true);
    expect((await b.getCompaction(cid, row.id)).undone).toBe(true);
    await b.setMessagePinned(cid, before[0]!.id, true);
    const after = (await b.openConversation(cid)).messages;
    expect(after[0]!.pinned).toBe(true);
    expect(after.map((m) => m.content)).toEqual(before.map((m) => m.content));
    await expect(b.getCompaction(cid, 'ghost')).rejects.toMatchObject({ message: "compaction 'ghost' not found" });
    await expect(b.setMessagePinned(cid, 'ghost', true)).rejects.toMatchObject({ message: "message 'ghost' not found" });
  });
});
