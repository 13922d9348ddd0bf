/**
 * The fake's spend commands answer like the service: an answer's requests sum to its stored
 * usage, sub-agent runs included; a conversation's total is its answers'; a report groups them;
 * unknown ids and a reversed period fail with the service's errors.
 */
import { describe, expect, it } from 'vitest';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { ipcError } from '../src/lib/ipc/fake/errors';

describe('fake spend', () => {
  it('answers details, totals and reports from the stored answers', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    const [first] = await backend.listConversations();
    const view = await backend.openConversation(first!.id);
    const answer = view.messages.find((m) => m.role === 'assistant' && m.usage.promptTokens > 0)!;
    const details = await backend.messageUsage(answer.id);
    expect(details.total.promptTokens).toBe(answer.usage.promptTokens);
    expect(details.total.completionTokens).toBe(answer.usage.completionTokens);
    expect(details.requests.map((r) => r.request)[0]).toBe(1);
    const conversation = await backend.conversationUsage(first!.id);
    expect(conversation.messages.some((m) => m.messageId === answer.id)).toBe(true);
    expect(conversation.total.requests).toBe(conversation.messages.reduce((n, m) => n + m.total.requests, 0));
    const report = await backend.usageReport({ by: 'day', split: 'model' });
    expect(report.groups.every((g) => /^\d{4}-\d{2}-\d{2}$/.test(g.key) && g.sub !== null)).toBe(true);
    expect(report.total.requests).toBeGreaterThanOrEqual(conversation.total.requests);
  });

  it('fails as the service does', async () => {
    const backend = createFakeBackend({ tickMs: 0 });
    await expect(backend.messageUsage('ghost')).rejects.toEqual(ipcError('messageNotFound', { id: 'ghost' }));
    await expect(backend.conversationUsage('ghost')).rejects.toEqual(ipcError('conversationNotFound', { id: 'ghost' }));
    await expect(backend.usageReport({ by: 'day', since: 2, until: 1 })).rejects.toEqual(ipcError('usagePeriodReversed'));
  });
});
