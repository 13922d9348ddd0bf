/**
 * Spend in the fake: a small price table (the catalogue's prices for the fake's models; local
 * servers free; anything else unknown), the per-request cost a replayed `usage` event carries, a
 * conversation's total, and the per-day report, which is the fake's conversations plus 90 days of
 * made-up but plausible history (deterministic, so screenshots and tests see the same chart).
 */
import type { StoredMessage, Usage } from '../bindings';
import { fromStored, messageSpend } from '../../model/message';
import { addUsage, ZERO_SPEND, type RequestSpend, type SpendTotal } from '../../model/spend';
import type { UsageBackend, UsageGroup, UsageReport, UsageRow, UsageTotals } from '../usage';
import type { FakeState } from './state';

/** USD per million tokens: input, output, cached read. */
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

/**
 * Request rows for a seeded (golden) answer, which has only its total: one request per
 * iteration that decided calls and one that answered, the input growing as history does.
 */
export function seededRequests(m: StoredMessage): RequestSpend[] {
  if (m.role !== 'assistant' || m.usage.promptTokens + m.usage.completionTokens === 0) return [];
  const n = Math.max(1, ...m.toolCalls.map((c) => c.iteration + 1));
  const weights = Array.from({ length: n }, (_, i) => 1 + i * 0.35);
  const sum = weights.reduce((a, b) => a + b, 0);
  let inLeft = m.usage.promptTokens;
  let outLeft = m.usage.completionTokens;
  return weights.map((w, i) => {
    const last = i === n - 1;
    const promptTokens = last ? inLeft : Math.round((m.usage.promptTokens * w) / sum);
    const completionTokens = last ? outLeft : Math.round((m.usage.completionTokens * w) / sum);
    // A later request reads the earlier prefix from the cache.
    const cachedTokens = i === 0 ? 0 : Math.round(promptTokens * 0.6);
    inLeft -= promptTokens;
    outLeft -= completionTokens;
    const usage = { promptTokens, completionTokens, reasoningTokens: 0, cachedTokens, cacheWriteTokens: 0 };
    return {
      request: i + 1,
      provider: m.provider,
      model: m.model,
      usage,
      costUsd: fakeCost(m.provider, m.model, usage),
      estimated: false,
      toolCalls: m.toolCalls.filter((c) => c.iteration === i + 1).map((c) => c.callId),
    };
  });
}

function totalsOf(t: SpendTotal): UsageTotals {
  return { usage: t.usage, costUsd: t.costUsd, requests: t.requests, unpricedRequests: t.unpriced, estimated: t.estimated };
}

function localDay(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
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

function keyOf(group: UsageGroup, profile: string, model: string, agent: string): string {
  return group === 'model' ? model : group === 'profile' ? profile : agent;
}

function add(rows: Map<string, UsageRow>, day: string, key: string, usage: Usage, cost: number | null) {
  const k = `${day}\u0000${key}`;
  const row = rows.get(k) ?? { day, key, usage: { ...ZERO_SPEND.usage }, costUsd: 0, requests: 0, unpricedRequests: 0 };
  row.usage = addUsage(row.usage, usage);
  row.costUsd += cost ?? 0;
  row.requests += 1;
  if (cost === null) row.unpricedRequests += 1;
  rows.set(k, row);
}

export function usageCommands(st: FakeState): UsageBackend {
  return {
    async conversationUsage(conversationId) {
      const c = st.conversations.get(conversationId);
      if (!c) return totalsOf(ZERO_SPEND);
      let t: SpendTotal = ZERO_SPEND;
      for (const m of c.messages) {
        if (m.role !== 'assistant') continue;
        const s = messageSpend(fromStored(m)).total;
        t = { usage: addUsage(t.usage, s.usage), costUsd: t.costUsd + s.costUsd, requests: t.requests + s.requests, unpriced: t.unpriced + s.unpriced, estimated: t.estimated || s.estimated };
      }
      return totalsOf(t);
    },
    async usageReport(fromDay, toDay, groupBy) {
      const rows = new Map<string, UsageRow>();
      const now = Date.now();
      // The made-up history: weekdays busier than weekends, a slow rise over the quarter.
      for (let back = 90; back >= 1; back--) {
        const at = now - back * 86_400_000;
        const day = localDay(at);
        if (day < fromDay || day > toDay) continue;
        const r = rng(back * 7919);
        const weekday = new Date(at).getDay() % 6 !== 0;
        for (const h of HISTORY) {
          const n = Math.floor(r() * (weekday ? 9 : 3) * h.weight * (1 + (90 - back) / 120));
          for (let i = 0; i < n; i++) {
            const usage = { promptTokens: Math.round(h.input * (0.4 + r())), completionTokens: Math.round(h.output * (0.4 + r())), reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 };
            usage.cachedTokens = Math.round(usage.promptTokens * 0.5 * r());
            add(rows, day, keyOf(groupBy, h.profile, h.model, h.agent), usage, fakeCost(h.profile, h.model, usage));
          }
        }
      }
      // The fake's own conversations, on the days their answers were written.
      for (const c of st.conversations.values()) {
        for (const m of c.messages) {
          const day = localDay(m.createdAt);
          if (m.role !== 'assistant' || day < fromDay || day > toDay) continue;
          const model = fromStored(m);
          const each = (mm: typeof model, agent: string) => {
            for (const r of mm.requests) add(rows, day, keyOf(groupBy, r.provider ?? '', r.model ?? '', agent), r.usage, r.costUsd);
          };
          each(model, c.agent ?? '');
          for (const call of model.toolCalls) for (const run of call.runs) each(run.model, run.instance.replace(/\[\d+\]$/, ''));
        }
      }
      const report: UsageReport = { rows: [...rows.values()].sort((a, b) => a.day.localeCompare(b.day) || a.key.localeCompare(b.key)) };
      return report;
    },
  };
}
