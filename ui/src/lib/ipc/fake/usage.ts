/**
 * Spend in the fake (`message_usage`, `conversation_usage`, `usage_report`), derived from what the
 * fake stores as the service derives it from its rows: each answer's usage split over its tool
 * rounds (one request per round, the last one answering), each sub-agent run's `done` usage one
 * request of that run, priced from a small table like the model catalogue's (a model not in it:
 * price unknown, never $0; a local profile's: free), and attributed the same way: the calls each
 * request decided, how often each tool result was sent again, each run's total with its children.
 */
import type { Backend } from '../backend';
import type {
  ConversationUsage,
  MessageUsage,
  NestedEvent,
  RequestUsage,
  ResultResend,
  RunUsage,
  StoredMessage,
  Usage,
  UsageGroup,
  UsageGrouping,
  UsageQuery,
  UsageTotals,
} from '../bindings';
import { ipcError } from './errors';
import type { FakeConversation, FakeState } from './state';
import { pathOf } from './tree';

/** US dollars per million tokens: input, output, cached read. */
const PRICES: Record<string, [number, number, number]> = {
  'mock-model': [2.5, 10, 1.25],
  'gpt-4o': [2.5, 10, 1.25],
  'gpt-4o-mini': [0.15, 0.6, 0.075],
  'claude-sonnet-4-5': [3, 15, 0.3],
  'gemini-2.5-flash': [0.3, 2.5, 0.075],
};

/** Profiles served from this computer: free. */
const LOCAL = new Set(['ollama', 'lmstudio', 'llamacpp', 'vllm']);

const API: Record<string, string> = { openai: 'openai', anthropic: 'anthropic', gemini: 'gemini' };

function cost(profile: string, model: string, u: Usage): number | null {
  if (LOCAL.has(profile)) return 0;
  const p = PRICES[model];
  if (!p) return null;
  const cached = Math.min(u.cachedTokens, u.promptTokens);
  return ((u.promptTokens - cached) * p[0] + cached * p[2] + u.completionTokens * p[1]) / 1e6;
}

const zero = (): Usage => ({ promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0 });

function minus(a: Usage, b: Usage): Usage {
  const d = (x: number, y: number) => Math.max(0, x - y);
  return {
    promptTokens: d(a.promptTokens, b.promptTokens),
    completionTokens: d(a.completionTokens, b.completionTokens),
    reasoningTokens: d(a.reasoningTokens, b.reasoningTokens),
    cachedTokens: d(a.cachedTokens, b.cachedTokens),
    cacheWriteTokens: d(a.cacheWriteTokens ?? 0, b.cacheWriteTokens ?? 0),
  };
}

/** `u` split into `n` parts, later ones larger (each round re-sends the earlier ones). */
function split(u: Usage, n: number): Usage[] {
  const weights = Array.from({ length: n }, (_, i) => i + 1);
  const sum = weights.reduce((a, b) => a + b, 0);
  const parts: Usage[] = weights.map((w) => {
    const f = (x: number) => Math.floor((x * w) / sum);
    return { promptTokens: f(u.promptTokens), completionTokens: f(u.completionTokens), reasoningTokens: f(u.reasoningTokens), cachedTokens: f(u.cachedTokens), cacheWriteTokens: f(u.cacheWriteTokens ?? 0) };
  });
  // The remainder goes to the last request, so the parts sum to the whole exactly.
  parts[n - 1] = minus(u, parts.slice(0, -1).reduce(add, zero()));
  return parts;
}

function add(a: Usage, b: Usage): Usage {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    cacheWriteTokens: (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0),
  };
}

function totals(requests: RequestUsage[]): UsageTotals {
  const t: UsageTotals = { requests: 0, promptTokens: 0, completionTokens: 0, reasoningTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, costUsd: 0, unpricedRequests: 0, estimatedRequests: 0 };
  for (const r of requests) {
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

/** Each sub-agent run's `done` usage in a call's nested events, by instance. */
function runsOf(nested: NestedEvent[] | undefined): [string, Usage][] {
  const out: [string, Usage][] = [];
  for (const n of nested ?? []) if (n.event.type === 'done') out.push([n.instance, n.event.usage]);
  return out;
}

/** The requests an answer made, as the recorder would have stored them. */
function requestsOf(c: FakeConversation, m: StoredMessage): RequestUsage[] {
  if (m.role !== 'assistant') return [];
  const profile = m.provider ?? 'mock';
  const model = m.model ?? 'mock-model';
  const rounds = Math.max(0, ...m.toolCalls.map((t) => t.iteration));
  // A stopped or failed answer may have ended in its last round.
  const n = rounds + (m.status === 'complete' ? 1 : 0) || 1;
  const children: RequestUsage[] = [];
  for (const call of m.toolCalls) {
    for (const [instance, usage] of runsOf(call.nested)) {
      children.push({
        request: 1,
        callId: call.callId,
        runPath: `${call.callId}/${instance}`,
        agent: instance.replace(/\[\d+\]$/, ''),
        decided: (call.nested ?? []).filter((e) => e.instance === instance && e.event.type === 'toolCall').map((e) => (e.event as { id: string }).id),
        profile: 'mock',
        api: 'openai',
        model: 'gpt-4o-mini',
        usage,
        costUsd: cost('mock', 'gpt-4o-mini', usage),
        estimated: false,
        createdAt: m.createdAt,
      });
    }
  }
  const own = minus(m.usage, children.map((r) => r.usage).reduce(add, zero()));
  if (own.promptTokens + own.completionTokens === 0 && children.length === 0) return [];
  const parts = split(own, n);
  const requests: RequestUsage[] = parts.map((usage, i) => ({
    request: i + 1,
    callId: null,
    runPath: '',
    agent: c.agent ?? null,
    decided: m.toolCalls.filter((t) => t.iteration === i + 1).map((t) => t.callId),
    profile,
    api: API[profile] ?? 'openai',
    model,
    usage,
    costUsd: cost(profile, model, usage),
    estimated: false,
    createdAt: m.createdAt,
  }));
  // A sub-agent's requests come after the request that decided its call.
  for (const child of children) {
    const at = m.toolCalls.find((t) => t.callId === child.callId)?.iteration ?? 1;
    requests.splice(at, 0, child);
  }
  return requests;
}

function find(st: FakeState, messageId: string): [FakeConversation, StoredMessage] | null {
  for (const c of st.conversations.values()) {
    const m = c.messages.find((x) => x.id === messageId);
    if (m) return [c, m];
  }
  return null;
}

function messageUsage(c: FakeConversation, m: StoredMessage): MessageUsage {
  const requests = requestsOf(c, m);
  const runs: RunUsage[] = [...new Set(requests.filter((r) => r.runPath).map((r) => r.runPath))].sort().map((path) => ({
    callId: path.split('/')[0] ?? path,
    runPath: path,
    agent: (path.split('/').at(-1) ?? '').replace(/\[\d+\]$/, ''),
    total: totals(requests.filter((r) => r.runPath === path || r.runPath.startsWith(`${path}/`))),
  }));
  const path = pathOf(c);
  const at = path.findIndex((x) => x.id === m.id);
  const laterOnPath = at < 0 ? 0 : path.slice(at + 1).flatMap((x) => requestsOf(c, x)).filter((r) => !r.runPath).length;
  const own = requests.filter((r) => !r.runPath);
  const resends: ResultResend[] = [];
  for (const call of m.toolCalls) {
    if (!call.result) continue;
    const times = own.filter((r) => r.request > call.iteration).length + laterOnPath;
    if (times > 0) resends.push({ callId: call.callId, name: call.name, resentTimes: times, approxTokens: Math.ceil(call.result.output.length / 4) * times });
  }
  return { messageId: m.id, total: totals(requests), requests, runs, resends };
}

function keyOf(by: UsageGrouping, c: FakeConversation, r: RequestUsage, offsetMinutes: number): [string, string] {
  switch (by) {
    case 'day': {
      const day = new Date(r.createdAt + offsetMinutes * 60_000).toISOString().slice(0, 10);
      return [day, day];
    }
    case 'model':
      return [r.model, r.model];
    case 'profile':
      return [r.profile, r.profile];
    case 'agent':
      return [r.agent ?? '', r.agent ?? ''];
    case 'conversation':
      return [c.summary.id, c.summary.title];
  }
}

export function usageCommands(st: FakeState): Pick<Backend, 'messageUsage' | 'conversationUsage' | 'usageReport'> {
  return {
    async messageUsage(messageId) {
      const found = find(st, messageId);
      if (!found) throw ipcError('messageNotFound', { id: messageId });
      return messageUsage(...found);
    },
    async conversationUsage(conversationId): Promise<ConversationUsage> {
      const c = st.conversations.get(conversationId);
      if (!c) throw ipcError('conversationNotFound', { id: conversationId });
      const messages = c.messages
        .map((m) => ({ messageId: m.id, requests: requestsOf(c, m) }))
        .filter((x) => x.requests.length > 0)
        .map((x) => ({ messageId: x.messageId, total: totals(x.requests) }));
      return { total: totals(c.messages.flatMap((m) => requestsOf(c, m))), messages };
    },
    async usageReport(query: UsageQuery) {
      if (query.since != null && query.until != null && query.until < query.since) throw ipcError('usagePeriodReversed');
      const offset = query.utcOffsetMinutes ?? 0;
      const inPeriod = (r: RequestUsage) => (query.since == null || r.createdAt >= query.since) && (query.until == null || r.createdAt < query.until);
      const groups = new Map<string, { group: UsageGroup; requests: RequestUsage[] }>();
      const all: RequestUsage[] = [];
      for (const c of st.conversations.values()) {
        for (const r of c.messages.flatMap((m) => requestsOf(c, m)).filter(inPeriod)) {
          all.push(r);
          const [key, label] = keyOf(query.by, c, r, offset);
          const sub = query.split ? keyOf(query.split, c, r, offset)[0] : null;
          const id = `${key}\u0000${sub ?? ''}`;
          const entry = groups.get(id) ?? { group: { key, label, sub, total: totals([]) }, requests: [] };
          entry.requests.push(r);
          groups.set(id, entry);
        }
      }
      const list = [...groups.values()].map(({ group, requests }) => ({ ...group, total: totals(requests) }));
      list.sort((a, b) => (query.by === 'day' ? 0 : b.total.costUsd - a.total.costUsd) || a.key.localeCompare(b.key) || (a.sub ?? '').localeCompare(b.sub ?? ''));
      return { by: query.by, split: query.split ?? null, groups: list, total: totals(all) };
    },
  };
}
