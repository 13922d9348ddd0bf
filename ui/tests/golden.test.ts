/**
 * Live equals stored: for every golden turn (captured from the real service by
 * crates/service/tests/golden.rs), the model the UI builds from the live events must be the model
 * it builds from the stored message that reopening the conversation returns.
 */
import { describe, expect, it } from 'vitest';
import type { ChatEvent, StoredMessage, TurnStarted } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { fromStored, pendingAssistant, reduceAll, type MessageModel } from '../src/lib/model/message';
import { splitAtOffsets } from '../src/lib/model/offsets';
import golden from './fixtures/golden-turns.json';

interface Scenario {
  name: string;
  prompt: string;
  events: ChatEvent[];
  stored: StoredMessage;
}

const scenarios = (golden as unknown as { scenarios: Scenario[] }).scenarios;

/**
 * What the person sees of a message: everything but live-only bookkeeping of a finished turn.
 * Request rows too: the store keeps them in their own table (`message_usage` reads them), so a
 * reopened answer has none in its model; its cost line reads the stored total instead.
 */
function seen(m: MessageModel): object {
  const { requests: _, ...rest } = m;
  return {
    ...rest,
    toolCalls: m.toolCalls.map(({ progress, awaitingApproval, runs, ...c }) => ({ ...c, runs: runs.map((r) => ({ ...r, model: seen(r.model) })), spinning: progress.length > 0 || awaitingApproval })),
    // Where each card sits between the text runs, as the view lays them out.
    layout: splitAtOffsets(m.content, m.toolCalls).map((p) => (p.kind === 'text' ? p.text : p.calls.map((c) => c.id))),
  };
}

describe('golden turns: live equals stored', () => {
  it('has the scenarios the fixture promises', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(5);
    for (const s of scenarios) expect(s.events.at(-1)?.type).toBe('done');
  });

  for (const s of scenarios) {
    it(s.name, () => {
      const live = reduceAll(pendingAssistant(), s.events);
      const stored = fromStored(s.stored);
      expect(seen(live)).toEqual(seen(stored));
      expect(live.status).not.toBe('streaming');
      for (const c of live.toolCalls) expect(c.status === 'pending' || c.status === 'running').toBe(false);
    });
  }

  it('places a card after text counted in scalar values (emoji with a skin tone, CJK)', () => {
    const s = scenarios.find((x) => x.name.includes('emoji'));
    expect(s).toBeDefined();
    const m = reduceAll(pendingAssistant(), s?.events ?? []);
    const parts = splitAtOffsets(m.content, m.toolCalls);
    expect(parts[0]).toMatchObject({ kind: 'text', text: 'Let me check 東京 for you 👋🏽. ' });
    expect(parts[1]).toMatchObject({ kind: 'calls' });
  });
});

describe('the dev/test fake backend', () => {
  /** A stored message without what differs by design: ids, times, and the provider that answered. */
  function comparable(m: StoredMessage) {
    const { id: _id, createdAt: _c, updatedAt: _u, provider: _p, model: _m, parentId: _parent, versions: _versions, ...rest } = m;
    return { ...rest, toolCalls: m.toolCalls.map(({ callId: _call, ...c }) => c) };
  }

  async function turn(text: string) {
    const fake = createFakeBackend({ tickMs: 0, empty: true });
    const events: ChatEvent[] = [];
    let started: TurnStarted | undefined;
    await new Promise<void>((resolve) => {
      void fake
        .sendMessage(
          { conversationId: null, text, provider: null, model: null, forced: [], useTools: true, dryRun: false, disableForChat: [] },
          { onEvent: (e) => events.push(e), onClose: resolve },
        )
        .then((s) => (started = s));
    });
    const view = await fake.openConversation(started?.conversationId ?? '');
    return { events, started, stored: view.messages.at(-1) };
  }

  it('replays a golden turn under its own ids and stores it as the service stored it', async () => {
    const s = scenarios.find((x) => x.name.includes('emoji')) as Scenario;
    const { events, started, stored } = await turn('What time is it in Tokyo?');
    expect(events.map((e) => e.type)).toEqual(s.events.map((e) => e.type));
    expect(events[0]).toMatchObject({ type: 'started', ...started, provider: 'openai', model: 'gpt-4o-mini' });
    const call = events.find((e) => e.type === 'toolCall');
    expect(call && 'id' in call ? call.id : '').toMatch(/^call_/);
    expect(call && 'id' in call ? call.id : '').not.toBe(s.stored.toolCalls[0]?.callId);
    expect(stored?.id).toBe(started?.messageId);
    expect(comparable(stored as StoredMessage)).toEqual(comparable(s.stored));
  });

  it('replays the error turn for a message that says "error"', async () => {
    const s = scenarios.find((x) => x.name.includes('error after partial text')) as Scenario;
    const { stored } = await turn('show me an error');
    expect(comparable(stored as StoredMessage)).toEqual(comparable(s.stored));
  });
});
