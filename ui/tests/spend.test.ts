/**
 * What a chat costs, as data and as words: the amounts and token counts as they read, "price
 * unknown" (never $0) and "free", the request rows a turn's usage events build (live), the
 * details of a stored answer (from `message_usage`), and the Usage chart's data shaping.
 */
import { describe, expect, it } from 'vitest';
import type { ChatEvent, Usage } from '../src/lib/ipc/bindings';
import type { MessageUsage, RequestUsage, UsageReport } from '../src/lib/ipc/usage';
import { ZERO_TOTALS } from '../src/lib/ipc/usage';
import { detailsFromLive, fromStored, messageSpend, pendingAssistant, reduceAll } from '../src/lib/model/message';
import { detailsFromStored, isFree, runLabel, spendFromTotals, sumRequests, type RequestSpend } from '../src/lib/model/spend';
import { dayLabel, OTHER_KEY, periodDays, periodQuery, rowsFromReport, shapeUsage, type UsageRow } from '../src/lib/model/usageReport';
import { costLine, costTitle, formatCost, formatTokens, formatUsd, formatUsdTick, resentText } from '../src/lib/util/money';

const u = (p: number, c: number, extra: Partial<Usage> = {}): Usage => ({ promptTokens: p, completionTokens: c, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, ...extra });
const row = (request: number, usage: Usage, costUsd: number | null, estimated = false): RequestSpend => ({ request, provider: 'p', model: 'm', usage, costUsd, estimated, toolCalls: [] });

describe('how spend reads', () => {
  it('counts tokens compactly', () => {
    expect(formatTokens(0)).toBe('0');
    expect(formatTokens(340)).toBe('340');
    expect(formatTokens(999)).toBe('999');
    expect(formatTokens(1_200)).toBe('1.2K');
    expect(formatTokens(15_049)).toBe('15K');
    expect(formatTokens(1_500_000)).toBe('1.5M');
  });

  it('shows dollars with the precision an amount needs', () => {
    expect(formatUsd(0)).toBe('$0');
    expect(formatUsd(0.0041)).toBe('$0.0041');
    expect(formatUsd(0.00413)).toBe('$0.0041');
    expect(formatUsd(0.00005)).toBe('$0.00005');
    expect(formatUsd(0.0000456)).toBe('$0.000046');
    expect(formatUsd(0.0000004)).toBe('<$0.000001');
    expect(formatUsd(0.0099)).toBe('$0.0099');
    expect(formatUsd(0.012)).toBe('$0.012');
    expect(formatUsd(0.036)).toBe('$0.036');
    expect(formatUsd(0.00999)).toBe('$0.01');
    expect(formatUsd(0.5)).toBe('$0.50');
    expect(formatUsd(0.12345)).toBe('$0.12');
    expect(formatUsd(12.345)).toBe('$12.35');
    expect(formatUsd(1234.5)).toBe('$1,235');
    expect(formatUsd(Number.NaN)).toBe('—');
    expect(formatUsdTick(0)).toBe('$0');
    expect(formatUsdTick(0.25)).toBe('$0.25');
    expect(formatUsdTick(0.004)).toBe('$0.004');
    expect(formatUsdTick(40)).toBe('$40');
  });

  it('writes the line under an answer: tokens in and out, then the cost', () => {
    const t = sumRequests([row(1, u(900, 140), 0.0021), row(2, u(300, 200), 0.002)]);
    expect(costLine(t)).toBe('1.2K in · 340 out · $0.0041');
    expect(costTitle(t)).toContain('1,200 input tokens, 340 output tokens; $0.0041.');
  });

  it('says "price unknown" for a model without a price, never $0', () => {
    const t = sumRequests([row(1, u(500, 20), null)]);
    expect(t.costUsd).toBe(0);
    expect(formatCost(t)).toBe('price unknown');
    expect(costLine(t)).toBe('500 in · 20 out · price unknown');
    // Some priced, some not: the known part, and how many are not in it.
    const mixed = sumRequests([row(1, u(500, 20), 0.003), row(2, u(500, 20), null)]);
    expect(formatCost(mixed)).toBe('$0.003 + 1 unpriced');
    expect(costTitle(mixed)).toContain('the price of 1 request is unknown');
  });

  it('says "free" for a local server (priced at zero), and nothing about a cost it does not know', () => {
    const t = sumRequests([row(1, u(800, 60), 0)]);
    expect(isFree(t)).toBe(true);
    expect(costLine(t)).toBe('800 in · 60 out · free');
    // No request rows (an answer stored before costs were kept): tokens only.
    expect(costLine({ ...sumRequests([]), usage: u(20, 10) })).toBe('20 in · 10 out');
  });

  it('marks estimated counts with ≈', () => {
    const t = sumRequests([row(1, u(1000, 100), 0.001, true)]);
    expect(costLine(t)).toBe('≈ 1K in · 100 out · ≈ $0.001');
    expect(costTitle(t)).toContain('estimates');
  });

  it('says how often a result was sent again', () => {
    expect(resentText({ times: 3, tokens: 4_200 })).toBe('This result was sent 3 more times, ≈ 4.2K tokens.');
    expect(resentText({ times: 1, tokens: 90 })).toBe('This result was sent once more, ≈ 90 tokens.');
  });
});

describe('request rows from a turn as it streams', () => {
  const priced = (request: number, usage: Usage, total: Usage, costUsd: number | null, more: object = {}): ChatEvent => ({ type: 'usage', usage, total, request, costUsd, estimated: false, ...more }) as ChatEvent;
  const call = (id: string, iteration: number, index = 0): ChatEvent => ({ type: 'toolCall', id, name: `tool_${id}`, source: { kind: 'builtin' }, arguments: '{}', textOffset: 0, iteration, index });
  const nested = (instance: string, event: ChatEvent): ChatEvent => ({ type: 'toolProgress', id: 'a1', instance, event });

  const turn: ChatEvent[] = [
    { type: 'started', conversationId: 'c', messageId: 'm2', userMessageId: 'm1', provider: 'openai', model: 'gpt-4o-mini' },
    call('t1', 1, 0),
    call('t2', 1, 1),
    priced(1, u(1200, 80, { cachedTokens: 0 }), u(1200, 80), 0.000228),
    { type: 'toolResult', id: 't1', status: 'ok', output: 'x', durationMs: 1 },
    { type: 'toolResult', id: 't2', status: 'ok', output: 'y', durationMs: 1 },
    call('a1', 2),
    nested('Scout[1]', { type: 'started', conversationId: 'c', messageId: 'a1/Scout[1]', userMessageId: '', provider: 'ollama', model: 'llama3.2' }),
    nested('Scout[1]', priced(1, u(400, 30), u(400, 30), 0)),
    nested('Scout[1]', priced(2, u(500, 40), u(900, 70), 0)),
    priced(2, u(1500, 20, { cachedTokens: 1200 }), u(2700, 100), 0.0003),
    // The sub-agent call's total: counts in `total`, is not a request of this turn.
    priced(2, u(900, 70), u(3600, 170), 0, { agentCall: 'a1' }),
    { type: 'toolResult', id: 'a1', status: 'ok', output: 'found it', durationMs: 5 },
    priced(3, u(2000, 150, { cachedTokens: 1500 }), u(5600, 320), null),
    { type: 'done', finishReason: 'stop', usage: u(5600, 320), toolCallsMade: 3 },
  ];

  it('keeps one row per request with its cost and the calls it decided', () => {
    const m = reduceAll(pendingAssistant(), turn);
    expect(m.requests.map((r) => [r.request, r.usage.promptTokens, r.costUsd, r.toolCalls])).toEqual([
      [1, 1200, 0.000228, ['t1', 't2']],
      [2, 1500, 0.0003, ['a1']],
      [3, 2000, null, []],
    ]);
    expect(m.usage).toEqual(u(5600, 320));
    expect(m.toolCalls[2]!.runs[0]!.model.requests.map((r) => r.costUsd)).toEqual([0, 0]);
  });

  it("sums the answer's requests and its sub-agents', unpriced apart", () => {
    const s = messageSpend(reduceAll(pendingAssistant(), turn));
    expect(s.own.requests).toBe(3);
    expect(s.total.requests).toBe(5);
    expect(s.total.usage.promptTokens).toBe(1200 + 1500 + 2000 + 400 + 500);
    expect(s.total.costUsd).toBeCloseTo(0.000528, 9);
    expect(s.total.unpriced).toBe(1);
    expect(formatCost(s.total)).toBe('$0.00053 + 1 unpriced');
  });

  it('gives the details: own requests, each run labelled with its own total', () => {
    const d = detailsFromLive(reduceAll(pendingAssistant(), turn));
    expect(d.own).toHaveLength(3);
    expect(d.runs.map((r) => [r.path, r.label, r.total.requests, formatCost(r.total)])).toEqual([['a1/Scout[1]', 'Scout[1]', 2, 'free']]);
    expect(d.names.get('t2')).toBe('tool_t2');
  });

  it('keeps no rows from an engine that reports totals only, so live equals stored', () => {
    const totalOnly = { type: 'usage', usage: u(10, 2), total: u(10, 2) } as unknown as ChatEvent;
    const old: ChatEvent[] = [turn[0]!, totalOnly, { type: 'done', finishReason: 'stop', usage: u(10, 2), toolCallsMade: 0 }];
    const m = reduceAll(pendingAssistant(), old);
    expect(m.requests).toEqual([]);
    expect(m.usage).toEqual(u(10, 2));
  });

  it('reads no rows from a stored message: they are read with message_usage', () => {
    const m = reduceAll(pendingAssistant(), turn);
    const stored = fromStored({
      id: 'm2',
      parentId: null,
      versions: ['m2'],
      role: 'assistant',
      content: '',
      reasoning: '',
      status: 'complete',
      provider: 'openai',
      model: 'gpt-4o-mini',
      finishReason: 'stop',
      usage: m.usage,
      toolCallsMade: 3,
      error: null,
      notices: [],
      providerResponseId: null,
      createdAt: 0,
      updatedAt: 0,
      toolCalls: [],
    });
    expect(stored.requests).toEqual([]);
  });
});

describe("a stored answer's details (message_usage)", () => {
  const req = (request: number, runPath: string, costUsd: number | null, decided: string[] = []): RequestUsage => ({
    request,
    callId: runPath ? 'a1' : null,
    agent: runPath ? 'Scout' : null,
    runPath,
    decided,
    profile: 'openai',
    api: 'openai',
    model: 'gpt-4o-mini',
    usage: u(1000 * request, 50, { cachedTokens: request > 1 ? 600 : 0 }),
    costUsd,
    estimated: false,
    createdAt: 0,
  });
  const usage: MessageUsage = {
    messageId: 'm2',
    total: { ...ZERO_TOTALS, requests: 4, promptTokens: 7000, completionTokens: 200, cachedTokens: 1800, costUsd: 0.0012, unpricedRequests: 1 },
    requests: [req(1, '', 0.0002, ['t1', 'a1']), req(2, '', 0.0004), req(1, 'a1/Scout[1]', 0.0006), req(3, 'a1/Scout[1]/k9/Helper[2]', null)],
    runs: [
      { callId: 'a1', runPath: 'a1/Scout[1]', agent: 'Scout', total: { ...ZERO_TOTALS, requests: 2, promptTokens: 4000, completionTokens: 100, costUsd: 0.0006, unpricedRequests: 1 } },
      { callId: 'a1', runPath: 'a1/Scout[1]/k9/Helper[2]', agent: 'Helper', total: { ...ZERO_TOTALS, requests: 1, promptTokens: 3000, completionTokens: 50, unpricedRequests: 1 } },
    ],
    resends: [{ callId: 't1', name: 'web_fetch', resentTimes: 2, approxTokens: 3100 }],
  };

  it('splits own requests from each run, with its label and total', () => {
    const d = detailsFromStored(usage, new Map([['a1', 'agent__Scout']]));
    expect(d.own.map((r) => [r.request, r.toolCalls])).toEqual([
      [1, ['t1', 'a1']],
      [2, []],
    ]);
    expect(d.runs.map((r) => [r.label, r.requests.length, formatCost(r.total)])).toEqual([
      ['Scout[1]', 1, '$0.0006 + 1 unpriced'],
      ['Scout[1] › Helper[2]', 1, 'price unknown'],
    ]);
    expect(d.resends.get('t1')).toEqual({ times: 2, tokens: 3100 });
    expect(d.names.get('t1')).toBe('web_fetch');
    expect(d.names.get('a1')).toBe('agent__Scout');
    expect(formatCost(d.total)).toBe('$0.0012 + 1 unpriced');
  });

  it('reads totals as the UI sums them', () => {
    const t = spendFromTotals({ ...ZERO_TOTALS, requests: 2, promptTokens: 10, completionTokens: 5, costUsd: 0, estimatedRequests: 1 });
    expect(t).toMatchObject({ requests: 2, unpriced: 0, estimated: true, costUsd: 0 });
    expect(isFree(t)).toBe(true);
    expect(runLabel('a1/Scout[1]')).toBe('Scout[1]');
  });
});

describe('the Usage chart data', () => {
  const today = new Date(2026, 2, 2, 15, 30); // Mar 2 2026, local time
  const r = (day: string, key: string, costUsd: number, requests = 1, unpricedRequests = 0, tokens = 1000): UsageRow => ({
    day,
    key,
    usage: u(tokens, tokens / 10),
    costUsd,
    requests,
    unpricedRequests,
  });

  it('has every day of the period, across a month end', () => {
    expect(periodDays(7, today)).toEqual(['2026-02-24', '2026-02-25', '2026-02-26', '2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02']);
    expect(periodDays(30, today)).toHaveLength(30);
    expect(periodDays(90, today).at(-1)).toBe('2026-03-02');
    expect(dayLabel('2026-03-01', 7)).toBe('Sun 1');
    expect(dayLabel('2026-03-01', 30)).toBe('Mar 1');
  });

  it('asks for the period in the person’s days', () => {
    const q = periodQuery(7, today, 'agent');
    expect(q).toMatchObject({ by: 'day', split: 'agent', utcOffsetMinutes: -today.getTimezoneOffset() });
    expect(q.since).toBe(new Date(2026, 1, 24).getTime());
    expect(q.until).toBe(new Date(2026, 2, 3).getTime());
  });

  it('lines each series up with the days (0 where nothing was spent) and totals the period', () => {
    const days = periodDays(7, today);
    const s = shapeUsage([r('2026-02-25', 'gpt-4o-mini', 0.5, 3), r('2026-03-02', 'gpt-4o-mini', 0.25, 2), r('2026-03-02', 'claude-sonnet-4-5', 1.5, 1), r('2026-01-01', 'old', 9)], days, 'model');
    expect(s.series.map((x) => x.key)).toEqual(['claude-sonnet-4-5', 'gpt-4o-mini']);
    expect(s.series[1]!.cost).toEqual([0, 0.5, 0, 0, 0, 0, 0.25]);
    expect(s.totals).toMatchObject({ costUsd: 2.25, requests: 6, unpricedRequests: 0 });
    expect(s.busiest).toEqual({ day: '2026-03-02', costUsd: 1.75 });
    expect(s.table.map((t) => [t.label, t.costUsd])).toEqual([
      ['claude-sonnet-4-5', 1.5],
      ['gpt-4o-mini', 0.75],
    ]);
  });

  it('counts requests with an unknown price apart, never as $0', () => {
    const days = periodDays(7, today);
    const s = shapeUsage([r('2026-03-01', 'house-model', 0, 4, 4), r('2026-03-01', 'gpt-4o-mini', 0.1, 3, 1), r('2026-03-01', 'llama3.2', 0, 2, 0)], days, 'model');
    const byKey = new Map(s.table.map((t) => [t.key, t]));
    expect(byKey.get('house-model')?.costUsd).toBeNull();
    expect(byKey.get('llama3.2')?.costUsd).toBe(0);
    expect(byKey.get('gpt-4o-mini')).toMatchObject({ costUsd: 0.1, unpricedRequests: 1 });
    expect(s.totals).toMatchObject({ costUsd: 0.1, requests: 9, unpricedRequests: 5 });
    expect(s.series.find((x) => x.key === 'house-model')?.unpriced[5]).toBe(4);
  });

  it('keeps the biggest keys and folds the rest into "Other"', () => {
    const days = periodDays(7, today);
    const rows = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((k, i) => r('2026-03-02', k, 8 - i));
    const s = shapeUsage(rows, days, 'profile', 6);
    expect(s.series.map((x) => x.label)).toEqual(['a', 'b', 'c', 'd', 'e', 'Other (3)']);
    expect(s.series.at(-1)!.key).toBe(OTHER_KEY);
    expect(s.series.at(-1)!.cost[6]).toBe(3 + 2 + 1);
    expect(s.table).toHaveLength(8);
  });

  it('names the chat itself when grouping by agent', () => {
    const s = shapeUsage([r('2026-03-02', '', 1), r('2026-03-02', 'Researcher', 2)], periodDays(7, today), 'agent');
    expect(s.table.map((t) => t.label)).toEqual(['Researcher', 'Chats (no agent)']);
  });

  it('reads the service report (by day, split by a key) as rows', () => {
    const report: UsageReport = {
      by: 'day',
      split: 'model',
      groups: [{ key: '2026-03-02', label: 'Mar 2', sub: 'gpt-4o-mini', total: { ...ZERO_TOTALS, requests: 2, promptTokens: 100, completionTokens: 10, costUsd: 0.01, unpricedRequests: 0 } }],
      total: { ...ZERO_TOTALS },
    };
    expect(rowsFromReport(report)).toEqual([{ day: '2026-03-02', key: 'gpt-4o-mini', usage: u(100, 10), costUsd: 0.01, requests: 2, unpricedRequests: 0 }]);
  });
});
