/**
 * Cost where people look, in the DOM against the in-memory fake: the line under an answer and
 * its details (each request, each sub-agent run), a tool card's "sent N more times", the
 * conversation's total in the header rising as a turn's requests are reported, and Settings →
 * Usage (totals, unpriced requests counted apart, the table, the period and grouping switches).
 * The chart itself is Chart.js on a canvas, which jsdom cannot draw: its chunk is replaced here.
 */
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import CostLine from '../src/lib/components/CostLine.svelte';
import UsageSection from '../src/lib/components/settings/UsageSection.svelte';
import type { TurnHandlers } from '../src/lib/ipc/backend';
import type { ChatEvent, TurnStarted, Usage } from '../src/lib/ipc/bindings';
import { createFakeBackend } from '../src/lib/ipc/fake';
import { pendingAssistant, reduceAll } from '../src/lib/model/message';
import { answerTotals } from '../src/lib/state/spend.svelte';
import App from '../src/App.svelte';
import { AppState } from '../src/lib/state/app.svelte';
import { start } from './defined-helpers';

const drawn: unknown[] = [];
// The chunk, not its loader: setup.ts has loaded Settings (and the loader) before this file's mocks apply.
vi.mock('../src/lib/components/settings/chartChunk', () => ({
  Chart: class {
    data: unknown;
    constructor(_canvas: unknown, config: { data: unknown }) {
      this.data = config.data;
      drawn.push(config.data);
    }
    update() {}
    destroy() {}
    getDatasetMeta() {
      return { data: [] };
    }
    setActiveElements() {}
  },
}));

beforeEach(() => {
  localStorage.clear();
  drawn.length = 0;
  answerTotals.clear();
});

const u = (p: number, c: number, extra: Partial<Usage> = {}): Usage => ({ promptTokens: p, completionTokens: c, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, ...extra });
const priced = (request: number, usage: Usage, total: Usage, costUsd: number | null): ChatEvent => ({ type: 'usage', usage, total, request, costUsd, estimated: false }) as ChatEvent;

describe('the line under an answer', () => {
  const events: ChatEvent[] = [
    { type: 'started', conversationId: 'c', messageId: 'm2', userMessageId: 'm1', provider: 'openai', model: 'gpt-4o-mini' },
    { type: 'toolCall', id: 't1', name: 'web_fetch', source: { kind: 'builtin' }, arguments: '{}', textOffset: 0, iteration: 1, index: 0 },
    priced(1, u(900, 140), u(900, 140), 0.0021),
    { type: 'toolResult', id: 't1', status: 'ok', output: 'page', durationMs: 3 },
    priced(2, u(300, 200, { cachedTokens: 150, reasoningTokens: 40 }), u(1200, 340), 0.002),
    { type: 'done', finishReason: 'stop', usage: u(1200, 340), toolCallsMade: 1 },
  ];

  it('shows tokens and cost, and on click every request with what it decided', async () => {
    const api = createFakeBackend({ tickMs: 0, empty: true });
    render(CostLine, { props: { model: reduceAll(pendingAssistant(), events), api } });
    const line = screen.getByTestId('cost-line');
    expect(line.textContent).toBe('1.2K in · 340 out · $0.0041');
    expect(Number(line.dataset.cost)).toBeCloseTo(0.0041, 10);
    await fireEvent.click(line);
    const details = screen.getByTestId('cost-details');
    const rows = within(details).getAllByTestId('cost-request');
    expect(rows.map((r) => r.dataset.request)).toEqual(['1', '2']);
    expect(rows[0]!.textContent).toContain('web_fetch');
    expect(rows[1]!.textContent).toContain('answer');
    expect(rows[1]!.textContent).toContain('50% cached');
    expect(rows[1]!.textContent).toContain('40 reasoning');
    expect(rows[1]!.textContent).toContain('$0.002');
    await fireEvent.keyDown(details, { key: 'Escape' });
    expect(screen.queryByTestId('cost-details')).toBeNull();
  });

  it('says "price unknown" when the model has none, and "free" on a local server', () => {
    const api = createFakeBackend({ tickMs: 0, empty: true });
    const unknown = reduceAll(pendingAssistant(), [events[0]!, priced(1, u(500, 20), u(500, 20), null)]);
    const { unmount } = render(CostLine, { props: { model: unknown, api } });
    expect(screen.getByTestId('cost-line').textContent).toBe('500 in · 20 out · price unknown');
    expect(screen.getByTestId('cost-line').dataset.cost).toBe('');
    unmount();
    render(CostLine, { props: { model: reduceAll(pendingAssistant(), [events[0]!, priced(1, u(500, 20), u(500, 20), 0)]), api } });
    expect(screen.getByTestId('cost-line').textContent).toBe('500 in · 20 out · free');
  });
});

describe('in the app, against the fake', () => {
  it('shows a stored answer its cost, its details read from the store, and a re-sent result on its card', async () => {
    // A seeded chat: its answer ran one tool, then answered (two requests, priced as gpt-4o-mini).
    const { app, backend } = await startSeeded();
    const tokyo = (await backend.listConversations()).find((c) => c.title.startsWith('What time is it in Tokyo'))!;
    await app.open(tokyo.id);
    const line = await screen.findByTestId('cost-line');
    await waitFor(() => expect(line.textContent).toMatch(/^1\.4K in · 90 out · \$0\.0002\d$/));
    expect(screen.getByTestId('chat-cost').textContent).toMatch(/\$0\.0002\d\s*·\s*1\.5K tokens/);
    await fireEvent.click(line);
    await waitFor(() => expect(screen.getAllByTestId('cost-request')).toHaveLength(2));
    expect(screen.getAllByTestId('cost-request')[0]!.textContent).toContain('get_time');
    const resent = await screen.findByTestId('tool-resent');
    expect(resent.textContent).toMatch(/^This result was sent once more, ≈ \d+ tokens\.$/);
  });

  it("rises in the header as a turn's requests are reported", async () => {
    let handlers: TurnHandlers | null = null;
    const { app } = await start({
      sendMessage: async (_req: unknown, h: TurnHandlers): Promise<TurnStarted> => {
        handlers = h;
        return { conversationId: 'c_live', messageId: 'm_live', userMessageId: 'q_live' };
      },
      conversationUsage: async () => ({ total: { requests: 0, promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, costUsd: 0, unpricedRequests: 0, estimatedRequests: 0 }, messages: [] }),
    });
    const el = screen.getByTestId('composer-input') as HTMLTextAreaElement;
    el.value = 'Look it up';
    await fireEvent.input(el);
    await fireEvent.keyDown(el, { key: 'Enter' });
    await waitFor(() => expect(handlers).not.toBeNull());
    const emit = (e: ChatEvent) => handlers!.onEvent(e);
    emit({ type: 'started', conversationId: 'c_live', messageId: 'm_live', userMessageId: 'q_live', provider: 'openai', model: 'gpt-4o-mini' });
    emit(priced(1, u(1000, 50), u(1000, 50), 0.01));
    await waitFor(() => expect(screen.getByTestId('chat-cost').textContent).toContain('$0.01'));
    emit(priced(2, u(2000, 100), u(3000, 150), 0.02));
    await waitFor(() => expect(screen.getByTestId('chat-cost').textContent).toContain('$0.03'));
    expect(screen.getByTestId('chat-cost').textContent).toContain('3.2K tokens');
    expect(app.current.running).toBe(true);
  });
});

/** The app over a fake with its seeded chats. */
async function startSeeded() {
  const backend = createFakeBackend({ tickMs: 0 });
  const app = new AppState(backend, { schedule: (cb: () => void) => setTimeout(cb, 0) });
  render(App, { props: { app } });
  await app.init();
  return { app, backend };
}

describe('Settings → Usage', () => {
  it('shows the period’s totals, unpriced requests apart, a chart and a table; switches period and grouping', async () => {
    const api = createFakeBackend({ tickMs: 0 });
    const report = vi.spyOn(api, 'usageReport');
    render(UsageSection, { props: { api } });
    const cost = await screen.findByTestId('usage-total-cost');
    expect(cost.textContent).toMatch(/^\$\d+\.\d\d$/);
    expect(Number(cost.dataset.cost)).toBeGreaterThan(0);
    expect(report).toHaveBeenLastCalledWith(expect.objectContaining({ by: 'day', split: 'model' }));
    // The made-up history has a model without a price: its requests are counted, not priced at $0.
    expect(screen.getByTestId('usage-unpriced').textContent).toMatch(/\d+ requests/);
    const rows = screen.getAllByTestId('usage-row');
    const house = rows.find((r) => r.dataset.key === 'house-model-v2')!;
    expect(house.textContent).toContain('price unknown');
    expect(rows.find((r) => r.dataset.key === 'llama3.2')!.textContent).toContain('free');
    await waitFor(() => expect(drawn).toHaveLength(1));
    const data = drawn[0] as { labels: string[]; datasets: { label: string; data: number[] }[] };
    expect(data.labels).toHaveLength(30);
    expect(data.datasets.map((d) => d.label)).toContain('claude-sonnet-4-5');

    await fireEvent.click(screen.getByTestId('usage-group-agent'));
    await waitFor(() => expect(screen.getAllByTestId('usage-row').map((r) => r.dataset.key)).toContain('Researcher'));
    expect(screen.getAllByTestId('usage-row').find((r) => r.dataset.key === '')!.textContent).toContain('Chats (no agent)');
    expect(report).toHaveBeenLastCalledWith(expect.objectContaining({ split: 'agent' }));

    const seven = screen.getByTestId('usage-period-7');
    await fireEvent.click(seven);
    expect(seven.getAttribute('aria-checked')).toBe('true');
    await waitFor(() => expect(report).toHaveBeenLastCalledWith(expect.objectContaining({ split: 'agent', since: expect.any(Number) })));
    const q = report.mock.calls.at(-1)![0];
    expect((q.until! - q.since!) / 86_400_000).toBeCloseTo(7, 0);
  });

  it('moves between periods with the arrow keys (a radio group)', async () => {
    const api = createFakeBackend({ tickMs: 0 });
    render(UsageSection, { props: { api } });
    const thirty = await screen.findByTestId('usage-period-30');
    await fireEvent.keyDown(thirty, { key: 'ArrowRight' });
    expect(screen.getByTestId('usage-period-90').getAttribute('aria-checked')).toBe('true');
  });

  it('says so when there is nothing in the period, and when the report cannot be read', async () => {
    const api = createFakeBackend({ tickMs: 0, empty: true });
    const empty = { requests: 0, promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, costUsd: 0, unpricedRequests: 0, estimatedRequests: 0 };
    const b = api;
    vi.spyOn(b, 'usageReport').mockResolvedValueOnce({ by: 'day', split: 'model', groups: [], total: empty });
    const { unmount } = render(UsageSection, { props: { api } });
    expect((await screen.findByTestId('usage-empty')).textContent).toContain('last 30 days');
    unmount();
    vi.spyOn(b, 'usageReport').mockRejectedValueOnce({ kind: 'storage', message: 'The database is locked.' });
    render(UsageSection, { props: { api } });
    expect((await screen.findByTestId('usage-error')).textContent).toBe('The database is locked.');
  });
});
