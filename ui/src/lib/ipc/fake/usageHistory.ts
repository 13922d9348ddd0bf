/**
 * Made-up spend history for the fake's usage report: 90 days before today of plausible requests
 * (weekdays busier than weekends, a slow rise, several models and profiles, two agents, a local
 * server that is free and a model without a known price), deterministic so screenshots and tests
 * see the same chart. Added to what `usage_report` finds in the fake's conversations; the other
 * usage commands are left as they are.
 */
import type { Backend } from '../backend';
import type { RequestUsage, Usage, UsageGrouping, UsageReport, UsageTotals } from '../bindings';

type UsageCommands = Pick<Backend, 'messageUsage' | 'conversationUsage' | 'usageReport'>;

/** USD per million tokens: input, output, cached read (a local profile: free; an unknown model: null). */
const PRICES: Record<string, [number, number, number]> = {
  'gpt-4o-mini': [0.15, 0.6, 0.075],
  'gpt-4o': [2.5, 10, 1.25],
  'claude-sonnet-4-5': [3, 15, 0.3],
};

/** Who spent: profile, model, agent, how busy, typical input and output per request. */
const WHO: { profile: string; model: string; agent: string | null; weight: number; input: number; output: number }[] = [
  { profile: 'openai', model: 'gpt-4o-mini', agent: null, weight: 1, input: 9_000, output: 900 },
  { profile: 'anthropic', model: 'claude-sonnet-4-5', agent: null, weight: 0.55, input: 14_000, output: 1_400 },
  { profile: 'openai', model: 'gpt-4o', agent: 'Researcher', weight: 0.35, input: 22_000, output: 1_800 },
  { profile: 'openai', model: 'gpt-4o-mini', agent: 'Scout', weight: 0.5, input: 6_000, output: 500 },
  { profile: 'ollama', model: 'llama3.2', agent: null, weight: 0.4, input: 5_000, output: 700 },
  { profile: 'work-proxy', model: 'house-model-v2', agent: null, weight: 0.12, input: 4_000, output: 400 },
];

/** A small deterministic generator (mulberry32). */
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

function cost(profile: string, model: string, u: Usage): number | null {
  if (profile === 'ollama') return 0;
  const p = PRICES[model];
  if (!p) return null;
  return ((u.promptTokens - u.cachedTokens) * p[0] + u.cachedTokens * p[2] + u.completionTokens * p[1]) / 1e6;
}

/** The history's requests from 90 days before `now` up to the day before. */
export function historyRequests(now: number): RequestUsage[] {
  const out: RequestUsage[] = [];
  for (let back = 90; back >= 1; back--) {
    const at = now - back * 86_400_000;
    const r = rng(back * 7919);
    const weekday = new Date(at).getDay() % 6 !== 0;
    for (const w of WHO) {
      const n = Math.floor(r() * (weekday ? 9 : 3) * w.weight * (1 + (90 - back) / 120));
      for (let i = 0; i < n; i++) {
        const promptTokens = Math.round(w.input * (0.4 + r()));
        const usage: Usage = { promptTokens, completionTokens: Math.round(w.output * (0.4 + r())), reasoningTokens: 0, cachedTokens: Math.round(promptTokens * 0.5 * r()), cacheWriteTokens: 0 };
        out.push({ request: 1, callId: null, runPath: '', agent: w.agent, decided: [], profile: w.profile, api: 'openai', model: w.model, usage, costUsd: cost(w.profile, w.model, usage), estimated: false, createdAt: at });
      }
    }
  }
  return out;
}

function add(t: UsageTotals, r: RequestUsage): UsageTotals {
  return {
    requests: t.requests + 1,
    promptTokens: t.promptTokens + r.usage.promptTokens,
    completionTokens: t.completionTokens + r.usage.completionTokens,
    reasoningTokens: t.reasoningTokens + r.usage.reasoningTokens,
    cachedTokens: t.cachedTokens + r.usage.cachedTokens,
    cacheWriteTokens: t.cacheWriteTokens + (r.usage.cacheWriteTokens ?? 0),
    costUsd: t.costUsd + (r.costUsd ?? 0),
    unpricedRequests: t.unpricedRequests + (r.costUsd === null ? 1 : 0),
    estimatedRequests: t.estimatedRequests + (r.estimated ? 1 : 0),
  };
}

function keyOf(by: UsageGrouping, r: RequestUsage, offsetMinutes: number): string {
  switch (by) {
    case 'day':
      return new Date(r.createdAt + offsetMinutes * 60_000).toISOString().slice(0, 10);
    case 'model':
      return r.model;
    case 'profile':
      return r.profile;
    case 'agent':
      return r.agent ?? '';
    case 'conversation':
      return '';
  }
}

/** `commands` with the history added to every report (by conversation: none, it has no chats). */
export function withHistory(commands: UsageCommands, now = Date.now()): UsageCommands {
  const history = historyRequests(now);
  return {
    ...commands,
    async usageReport(query): Promise<UsageReport> {
      const report = await commands.usageReport(query);
      if (query.by === 'conversation' || query.split === 'conversation') return report;
      const offset = query.utcOffsetMinutes ?? 0;
      const groups = new Map(report.groups.map((g) => [`${g.key}\u0000${g.sub ?? ''}`, { ...g }]));
      let total = report.total;
      for (const r of history) {
        if ((query.since != null && r.createdAt < query.since) || (query.until != null && r.createdAt >= query.until)) continue;
        const key = keyOf(query.by, r, offset);
        const sub = query.split ? keyOf(query.split, r, offset) : null;
        const id = `${key}\u0000${sub ?? ''}`;
        const g = groups.get(id) ?? { key, label: key, sub, total: { requests: 0, promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, costUsd: 0, unpricedRequests: 0, estimatedRequests: 0 } };
        g.total = add(g.total, r);
        groups.set(id, g);
        total = add(total, r);
      }
      const list = [...groups.values()].sort((a, b) => (query.by === 'day' ? 0 : b.total.costUsd - a.total.costUsd) || a.key.localeCompare(b.key) || (a.sub ?? '').localeCompare(b.sub ?? ''));
      return { ...report, groups: list, total };
    },
  };
}
