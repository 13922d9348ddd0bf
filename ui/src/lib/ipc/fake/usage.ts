/**
 * Spend in the fake, as the service's usage commands give it: a ledger of request rows per
 * answer (what a replayed turn's usage events reported; for a seeded answer, plausible rows made
 * from its total and priced from a small price table: local servers free, an unknown model
 * unpriced), and from it `message_usage`, `conversation_usage` and `usage_report` (the fake's
 * answers plus 90 days of made-up, deterministic history, so screenshots and tests see the same chart).
 */
import type { StoredMessage, Usage } from '../bindings';
import type { MessageModel } from '../../model/message';
import type { ConversationUsage, MessageUsage, RequestUsage, UsageBackend, UsageGrouping, UsageReport, UsageTotals } from '../usage';
import { ZERO_TOTALS } from '../usage';
import type { FakeState } from './state';

/** USD per million tokens. */
type Price = { input: number; output: number; cached?: number; cacheWrite?: number };

const PRICES: Record<string, Price> = {
  'gpt-4o-mini': { input: 0.15, output: 0.6, cached: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cached: 0.5 },
  'claude-sonnet-4-5': { input: 3, output: 15, cached: 0.3, cacheWrite: 3.75 },
};
const FREE_PROFILES = new Set(['ollama', 'lmstudio']);

/** What a request cost in the fake: free on a local server, null for a model it has no price for. */
export function fakeCost(provider: string | null, model: string | null, u: Usage): number | null {
  if (provider && FREE_PROFILES.has(provider)) return 0;
  const p = model ? PRICES[model] : undefined;
  if (!p) return null;
  const write = u.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, u.promptTokens - u.cachedTokens - write);
  const cost = fresh * p.input + u.cachedTokens * (p.cached ?? p.input) + write * (p.cacheWrite ?? p.input) + u.completionTokens * p.output;
  return cost / 1_000_000;
}

/** Each fake's request rows, by answer id. */
const ledgers = new WeakMap<FakeState, Map<string, RequestUsage[]>>();
function ledger(st: FakeState): Map<string, RequestUsage[]> {
  let l = ledgers.get(st);
  if (!l) ledgers.set(st, (l = new Map()));
  return l;
}

/** Keeps what a streaming answer's events reported (its requests and its sub-agent runs'). */
export function recordLive(st: FakeState, messageId: string, m: MessageModel, at: number): void {
  const rows: RequestUsage[] = [];
  const walk = (x: MessageModel, path: string, callId: string | null, agent: string | null) => {
    for (const r of x.requests) {
      rows.push({ request: r.request, callId, agent, runPath: path, decided: [...r.toolCalls], profile: r.provider, api: 'openai', model: r.model, usage: { ...r.usage }, costUsd: r.costUsd, estimated: r.estimated, createdAt: at });
    }
    for (const c of x.toolCalls) {
      for (const run of c.runs) walk(run.model, path ? `${path}/${c.id}/${run.instance}` : `${c.id}/${run.instance}`, callId ?? c.id, run.instance.replace(/\[\d+\]$/, ''));
    }
  };
  walk(m, '', null, null);
  if (rows.length > 0) ledger(st).set(messageId, rows);
}

/**
 * Request rows for a seeded (golden) answer, which has only its total: one request per iteration
 * that decided calls and one that answered, the input growing as history does, a later request
 * reading the earlier prefix from the cache. Returns the cached tokens of its rows (the answer's own count).
 */
export function recordSeeded(st: FakeState, m: StoredMessage): number {
  if (m.role !== 'assistant' || m.usage.promptTokens + m.usage.completionTokens === 0) return m.usage.cachedTokens;
  const n = Math.max(1, ...m.toolCalls.map((c) => c.iteration + 1));
  const weights = Array.from({ length: n }, (_, i) => 1 + i * 0.35);
  const sum = weights.reduce((a, b) => a + b, 0);
  let inLeft = m.usage.promptTokens;
  let outLeft = m.usage.completionTokens;
  const rows = weights.map((w, i): RequestUsage => {
    const last = i === n - 1;
    const promptTokens = last ? inLeft : Math.round((m.usage.promptTokens * w) / sum);
    const completionTokens = last ? outLeft : Math.round((m.usage.completionTokens * w) / sum);
    inLeft -= promptTokens;
    outLeft -= completionTokens;
    const usage = { promptTokens, completionTokens, reasoningTokens: 0, cachedTokens: i === 0 ? 0 : Math.round(promptTokens * 0.6), cacheWriteTokens: 0 };
    return {
      request: i + 1,
      callId: null,
      agent: null,
      runPath: '',
      decided: m.toolCalls.filter((c) => c.iteration === i + 1).map((c) => c.callId),
      profile: m.provider,
      api: 'openai',
      model: m.model,
      usage,
      costUsd: fakeCost(m.provider, m.model, usage),
      estimated: false,
      createdAt: m.createdAt,
    };
  });
  ledger(st).set(m.id, rows);
  return rows.reduce((a, r) => a + r.usage.cachedTokens, 0);
}

function totalsOf(rows: readonly RequestUsage[]): UsageTotals {
  const t = { ...ZERO_TOTALS };
  for (const r of rows) {
    t.requests += 1;
    t.promptTokens += r.usage.promptTokens;
    t.completionTokens += r.usage.completionTokens;
    t.reasoningTokens += r.usage.reasoningTokens;
    t.cachedTokens += r.usage.cachedTokens;
    t.cacheWriteTokens += r.usage.cacheWriteTokens ?? 0;
    if (r.costUsd === null) t.unpricedRequests += 1;
    else t.costUsd += r.costUsd;
    if (r.estimated) t.estimatedRequests += 1;
  }
  return t;
}

function messageOf(st: FakeState, id: string): StoredMessage | undefined {
  for (const c of st.conversations.values()) {
    const m = c.messages.find((x) => x.id === id);
    if (m) return m;
  }
  return undefined;
}

/** A day of the person's calendar: YYYY-MM-DD at `offset` minutes from UTC. */
function dayAt(ms: number, offsetMinutes: number): string {
  return new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 10);
}

/** A small deterministic generator (mulberry32), so the made-up history is the same every time. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Who spent in the made-up history: profile, model, agent, and how busy each is. */
const HISTORY: { profile: string; model: string; agent: string; weight: number; input: number; output: number }[] = [
  { profile: 'openai', model: 'gpt-4o-mini', agent: '', weight: 1, input: 9_000, output: 900 },
  { profile: 'anthropic', model: 'claude-sonnet-4-5', agent: '', weight: 0.55, input: 14_000, output: 1_400 },
  { profile: 'openai', model: 'gpt-4.1', agent: 'Researcher', weight: 0.35, input: 22_000, output: 1_800 },
  { profile: 'openai', model: 'gpt-4o-mini', agent: 'Scout', weight: 0.5, input: 6_000, output: 500 },
  { profile: 'ollama', model: 'llama3.2', agent: '', weight: 0.4, input: 5_000, output: 700 },
  { profile: 'work-proxy', model: 'house-model-v2', agent: '', weight: 0.12, input: 4_000, output: 400 },
];

type Row = { profile: string | null; model: string | null; agent: string | null; conversation: string; usage: RequestUsage['usage']; costUsd: number | null; estimated: boolean; at: number };

function keyOf(g: UsageGrouping, r: Row, offset: number): string {
  switch (g) {
    case 'day':
      return dayAt(r.at, offset);
    case 'model':
      return r.model ?? '';
    case 'profile':
      return r.profile ?? '';
    case 'agent':
      return r.agent ?? '';
    case 'conversation':
      return r.conversation;
  }
}

export function usageCommands(st: FakeState): UsageBackend {
  return {
    async messageUsage(messageId): Promise<MessageUsage> {
      const rows = ledger(st).get(messageId) ?? [];
      const paths = [...new Set(rows.map((r) => r.runPath).filter((p) => p !== ''))];
      const m = messageOf(st, messageId);
      const own = rows.filter((r) => r.runPath === '');
      const resends = (m?.toolCalls ?? []).flatMap((c) => {
        const times = own.filter((r) => r.request > c.iteration).length;
        return c.result && times > 0 ? [{ callId: c.callId, name: c.name, resentTimes: times, approxTokens: times * Math.ceil(c.result.output.length / 4) }] : [];
      });
      return {
        messageId,
        total: totalsOf(rows),
        requests: rows.map((r) => structuredClone(r)),
        runs: paths.map((p) => {
          const under = rows.filter((r) => r.runPath === p || r.runPath.startsWith(`${p}/`));
          return { callId: under[0]?.callId ?? '', runPath: p, agent: under[0]?.agent ?? null, total: totalsOf(under) };
        }),
        resends,
      };
    },
    async conversationUsage(conversationId): Promise<ConversationUsage> {
      const c = st.conversations.get(conversationId);
      const messages = (c?.messages ?? []).filter((m) => m.role === 'assistant' && ledger(st).has(m.id)).map((m) => ({ messageId: m.id, total: totalsOf(ledger(st).get(m.id) ?? []) }));
      return { total: totalsOf(messages.flatMap((m) => ledger(st).get(m.messageId) ?? [])), messages };
    },
    async usageReport(query): Promise<UsageReport> {
      const offset = query.utcOffsetMinutes ?? 0;
      const now = Date.now();
      const since = query.since ?? now - 90 * 86_400_000;
      const until = query.until ?? now + 86_400_000;
      const rows: Row[] = [];
      // The made-up history: weekdays busier than weekends, a slow rise over the quarter.
      for (let back = 90; back >= 1; back--) {
        const at = now - back * 86_400_000;
        if (at < since || at >= until) continue;
        const r = rng(back * 7919);
        const weekday = new Date(at).getDay() % 6 !== 0;
        for (const h of HISTORY) {
          const n = Math.floor(r() * (weekday ? 9 : 3) * h.weight * (1 + (90 - back) / 120));
          for (let i = 0; i < n; i++) {
            const promptTokens = Math.round(h.input * (0.4 + r()));
            const usage = { promptTokens, completionTokens: Math.round(h.output * (0.4 + r())), reasoningTokens: 0, cachedTokens: Math.round(promptTokens * 0.5 * r()), cacheWriteTokens: 0 };
            rows.push({ profile: h.profile, model: h.model, agent: h.agent || null, conversation: '', usage, costUsd: fakeCost(h.profile, h.model, usage), estimated: false, at });
          }
        }
      }
      // The fake's own answers, when they were written.
      for (const c of st.conversations.values()) {
        for (const m of c.messages) {
          for (const r of ledger(st).get(m.id) ?? []) {
            if (r.createdAt < since || r.createdAt >= until) continue;
            rows.push({ profile: r.profile, model: r.model, agent: r.agent ?? c.agent ?? null, conversation: c.summary.id, usage: r.usage, costUsd: r.costUsd, estimated: r.estimated, at: r.createdAt });
          }
        }
      }
      const groups = new Map<string, { key: string; sub: string | null; rows: RequestUsage[] }>();
      for (const r of rows) {
        const key = keyOf(query.by, r, offset);
        const sub = query.split ? keyOf(query.split, r, offset) : null;
        const k = `${key}\u0000${sub ?? ''}`;
        const g = groups.get(k) ?? { key, sub, rows: [] };
        g.rows.push({ request: 1, callId: null, agent: r.agent, runPath: '', decided: [], profile: r.profile, api: null, model: r.model, usage: r.usage, costUsd: r.costUsd, estimated: r.estimated, createdAt: r.at });
        groups.set(k, g);
      }
      const list = [...groups.values()].sort((a, b) => a.key.localeCompare(b.key) || (a.sub ?? '').localeCompare(b.sub ?? ''));
      return {
        by: query.by,
        split: query.split ?? null,
        groups: list.map((g) => ({ key: g.key, label: g.key, sub: g.sub, total: totalsOf(g.rows) })),
        total: totalsOf(list.flatMap((g) => g.rows)),
      };
    },
  };
}
