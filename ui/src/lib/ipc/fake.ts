/**
 * A scripted, in-memory stand-in for the Tauri shell, used by `npm run dev` in a plain browser (and
 * by tests). It streams an answer with reasoning, a `get_time` tool call placed in the text, and
 * Markdown with code and math; it records turns so reopening a conversation shows the same thing.
 *
 * Words in the message steer it: "error" fails with an auth error, "fetch" or a URL calls
 * `web_fetch` (which asks for approval), "long" streams a longer answer.
 *
 * Settings behave like the shell's: provider profiles, keys that can be set and deleted but never
 * read back (only `isSet` and `last4` leave the fake), a keychain that can be made to fail, and the
 * same validation messages for bad input.
 */
import type { Backend, TurnHandlers } from './backend';
import { LIMIT_BOUNDS, OPEN_PAGE, PROVIDER_KINDS } from './bindings';
import type {
  ApprovalChoice,
  ChatEvent,
  ConversationSummary,
  ConversationView,
  MessagePage,
  IpcError,
  KeychainStatus,
  KeyInfo,
  KeyMode,
  ProviderProfile,
  SendRequest,
  Settings,
  StoredMessage,
  ToolInfo,
  TurnStarted,
  Usage,
} from './bindings';
import { pendingAssistant, reduce, type MessageModel } from '../model/message';
import { scalarLength } from '../model/offsets';

interface FakeConversation {
  summary: ConversationSummary;
  messages: StoredMessage[];
  disabled: Set<string>;
}

export interface FakeOptions {
  /** Milliseconds between streamed chunks (0 in tests). */
  tickMs?: number;
  /** Start with no conversations. */
  empty?: boolean;
  /** Start with no provider profiles (the first-run screen). */
  noProviders?: boolean;
  /**
   * The keychain: "ok" works; "problem" cannot be used (keys come from the environment until the
   * person chooses); "pending" is still being probed and works after `probeMs`.
   */
  keychain?: 'ok' | 'problem' | 'pending';
  /** How long a "pending" keychain probe takes (default 1500 ms). */
  probeMs?: number;
}

/** Dev only: fake options from the page's query (`?providers=0`, `?keychain=problem|pending`). */
export function fakeOptionsFromUrl(search: string): FakeOptions {
  const params = new URLSearchParams(search);
  const keychain = params.get('keychain');
  return {
    noProviders: params.get('providers') === '0',
    keychain: keychain === 'problem' || keychain === 'pending' ? keychain : 'ok',
  };
}

/** What the shell says when the keychain cannot be used (the Linux, no session bus case). */
export const FAKE_KEYCHAIN_PROBLEM =
  'The system keychain cannot be used: there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set and there is no bus socket at /run/user/1000/bus), ' +
  'and the Secret Service keychain is reached through it; this is usual over SSH, in containers and on servers. You can use environment variables instead ' +
  '(SWITCHBOARD_KEY_<NAME>, for example SWITCHBOARD_KEY_OPENAI or SWITCHBOARD_KEY_TAVILY), or keep keys in memory for this session only. Switchboard never writes keys to a file.';

const DATA_DIR = '/home/you/.local/share/switchboard';

const TOOLS: ToolInfo[] = [
  {
    name: 'get_time',
    description: 'Current date and time in an IANA time zone (UTC by default).',
    source: { kind: 'builtin' },
    enabled: true,
    disabledForChat: false,
    approval: 'auto',
    exclusive: false,
    takesControl: false,
    parameters: { type: 'object', properties: { timezone: { type: 'string' } } },
  },
  {
    name: 'web_fetch',
    description: 'Fetches a web page and returns its readable text.',
    source: { kind: 'builtin' },
    enabled: true,
    disabledForChat: false,
    approval: 'ask',
    exclusive: false,
    takesControl: false,
    parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
  },
  {
    name: 'files__read_file',
    description: 'Reads a file from the allowed directories.',
    source: { kind: 'mcp', server: 'files' },
    enabled: true,
    disabledForChat: false,
    approval: 'auto',
    exclusive: false,
    takesControl: false,
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  {
    name: 'weather',
    description: 'Current weather for a city (HTTP API tool).',
    source: { kind: 'http' },
    enabled: true,
    disabledForChat: false,
    approval: 'auto',
    exclusive: false,
    takesControl: false,
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
  {
    name: 'agent__Researcher',
    description: 'A research sub-agent that searches and summarizes.',
    source: { kind: 'agent' },
    enabled: true,
    disabledForChat: false,
    approval: 'auto',
    exclusive: true,
    takesControl: false,
    parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
  },
  {
    name: 'shell',
    description: 'Runs a shell command. Disabled in settings.',
    source: { kind: 'builtin' },
    enabled: false,
    disabledForChat: false,
    approval: 'ask',
    exclusive: false,
    takesControl: false,
    parameters: { type: 'object', properties: { command: { type: 'string' } } },
  },
];

const PROVIDERS: ProviderProfile[] = [
  { name: 'openai', kind: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini' },
  { name: 'ollama', kind: 'openai', baseUrl: 'http://localhost:11434/v1', model: 'llama3.2' },
  { name: 'lmstudio', kind: 'openai', baseUrl: 'http://localhost:1234/v1', model: 'qwen2.5-7b-instruct' },
];

const MODELS: Record<string, string[]> = {
  openai: ['gpt-4o-mini', 'gpt-4o', 'o3-mini'],
  ollama: ['llama3.2', 'qwen2.5-coder:7b'],
};

function err(kind: IpcError['kind'], message: string): IpcError {
  return { kind, message, retryable: false };
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.host !== '';
  } catch {
    return false;
  }
}

function envVarFor(name: string): string {
  return `SWITCHBOARD_KEY_${name.toUpperCase().replaceAll('-', '_')}`;
}

const NAME_RE = /^[A-Za-z0-9_-]{1,64}$/;

function usage(p: number, c: number, r = 0): Usage {
  return { promptTokens: p, completionTokens: c, reasoningTokens: r, cachedTokens: 0 };
}

function toStored(m: MessageModel, createdAt: number, updatedAt: number): StoredMessage {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    reasoning: m.reasoning,
    status: m.status,
    provider: m.provider,
    model: m.model,
    finishReason: m.finishReason,
    usage: { ...m.usage },
    toolCallsMade: m.toolCallsMade,
    error: m.error,
    notices: m.notices.map((n) => ({ ...n })),
    providerResponseId: null,
    createdAt,
    updatedAt,
    toolCalls: m.toolCalls.map((c) => ({
      callId: c.id,
      name: c.name,
      source: c.source,
      arguments: c.arguments,
      textOffset: c.textOffset,
      iteration: c.iteration,
      index: c.index,
      status: c.status,
      result: c.result,
    })),
  };
}

function zoneFor(text: string): string {
  const t = text.toLowerCase();
  if (t.includes('tokyo') || t.includes('japan')) return 'Asia/Tokyo';
  if (t.includes('new york')) return 'America/New_York';
  if (t.includes('london')) return 'Europe/London';
  return 'Europe/Paris';
}

function timeIn(zone: string, at = new Date()): { hm: string; iso: string; weekday: string } {
  const hm = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit' }).format(at);
  const weekday = new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'long' }).format(at);
  return { hm, iso: at.toISOString(), weekday };
}

/** The scripted steps of one answer, as events (tool rounds are handled by the runner). */
interface Script {
  reasoning: string;
  before: string;
  calls: { name: string; args: unknown; output: string }[];
  after: string;
  error?: IpcError;
}

function scriptFor(text: string, req: Pick<SendRequest, 'useTools' | 'forced' | 'dryRun'>, available: ToolInfo[]): Script {
  const zone = zoneFor(text);
  const t = timeIn(zone);
  const city = zone.split('/')[1]?.replace('_', ' ') ?? zone;
  if (/\berror\b/i.test(text)) {
    return {
      reasoning: '',
      before: '',
      calls: [],
      after: '',
      error: err('auth', 'HTTP 401 from openai: Incorrect API key provided. Check the key in Settings → Providers.'),
    };
  }
  const names = new Set(available.map((x) => x.name));
  const calls: Script['calls'] = [];
  if (req.useTools) {
    const wanted = req.forced.length > 0 ? req.forced : /https?:\/\/|\bfetch\b/i.test(text) ? ['web_fetch'] : ['get_time'];
    for (const name of wanted) {
      if (!names.has(name)) continue;
      if (name === 'get_time') {
        calls.push({ name, args: { timezone: zone }, output: JSON.stringify({ timezone: zone, datetime: t.iso, weekday: t.weekday, local: t.hm }, null, 2) });
      } else if (name === 'web_fetch') {
        const url = /https?:\/\/\S+/.exec(text)?.[0] ?? 'https://example.com/';
        calls.push({ name, args: { url }, output: 'Example Domain\n\nThis domain is for use in illustrative examples in documents.' });
      } else {
        calls.push({ name, args: {}, output: `${name} finished.` });
      }
    }
  }
  const long = /\blong\b/i.test(text);
  const fetched = calls.find((c) => c.name === 'web_fetch');
  if (fetched) {
    const url = (fetched.args as { url: string }).url;
    return {
      reasoning: `The person wants the page at ${url}. I need web_fetch for that, which asks for approval first.`,
      before: 'Let me fetch that page. ',
      calls,
      after:
        `The page at <${url}> is a placeholder:\n\n> **Example Domain.** This domain is for use in illustrative examples in documents.\n\n` +
        'In short, it exists so documentation has a safe address to point at; there is nothing else on it.',
    };
  }
  const extra = long
    ? '\n\n' +
      Array.from({ length: 6 }, (_, i) => `${i + 1}. **Step ${i + 1}.** Time zones are political as much as geographic; offsets change by law, so always use the IANA database rather than fixed offsets.`).join('\n')
    : '';
  return {
    reasoning: `The person asks about the time in ${city}. I should call get_time with the IANA zone ${zone} rather than guess, then answer briefly and show how to do it in code.`,
    before: calls.length > 0 ? `Let me check the current time in ${city}. ` : '',
    calls,
    after:
      (calls.length > 0 ? `It is **${t.hm}** in ${city} right now (${t.weekday}).` : `I can't look up the time without tools, but ${city} uses the \`${zone}\` time zone.`) +
      `\n\nHere is the same lookup in Python:\n\n\`\`\`python\nfrom datetime import datetime\nfrom zoneinfo import ZoneInfo\n\nnow = datetime.now(ZoneInfo("${zone}"))\nprint(now.strftime("%H:%M, %A"))\n\`\`\`\n\n` +
      `| Zone | UTC offset |\n| --- | --- |\n| ${zone} | ${new Intl.DateTimeFormat('en-GB', { timeZone: zone, timeZoneName: 'shortOffset' }).format(new Date()).split(' ').pop()} |\n\n` +
      `A day has $24 \\times 60 = 1440$ minutes, and converting between zones is just $t_{local} = t_{UTC} + \\Delta$.` +
      extra,
  };
}

/** Splits text into stream-sized chunks (a few words each), by code point. */
function chunks(text: string): string[] {
  const out: string[] = [];
  const re = /\S+\s*|\s+/g;
  let buf = '';
  let n = 0;
  for (const m of text.matchAll(re)) {
    buf += m[0];
    if (++n % 2 === 0) {
      out.push(buf);
      buf = '';
    }
  }
  if (buf) out.push(buf);
  return out;
}

export function createFakeBackend(opts: FakeOptions = {}): Backend {
  const tick = opts.tickMs ?? 28;
  const conversations = new Map<string, FakeConversation>();
  const alwaysAllowed = new Set<string>();
  const chatAllowed = new Map<string, Set<string>>();
  const running = new Map<string, { cancelled: boolean; approval: Map<string, (choice: ApprovalChoice) => void> }>();
  let seq = 0;
  const id = (p: string) => `${p}-${Date.now().toString(36)}-${(seq++).toString(36)}`;
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  if (!opts.empty) seed();

  function seed() {
    const now = Date.now();
    const min = 60_000;
    const day = 24 * 60 * min;
    const add = (title: string, at: number, msgs: StoredMessage[]) => {
      const cid = id('c');
      conversations.set(cid, {
        summary: { id: cid, title, createdAt: at - 5 * min, updatedAt: at, messageCount: msgs.length },
        messages: msgs,
        disabled: new Set(),
      });
    };
    const user = (text: string, at: number): StoredMessage => toStored({ ...pendingAssistant(id('m')), role: 'user', content: text, status: 'complete' }, at, at);
    const t = timeIn('Asia/Tokyo', new Date(now - 8 * min));
    const before = 'Let me look that up. ';
    const tokyo: MessageModel = {
      ...pendingAssistant(id('m')),
      content:
        before +
        `It is **${t.hm}** in Tokyo (${t.weekday}). Japan uses **Japan Standard Time** (UTC+09:00) all year: it has not observed daylight saving time since 1951, so the offset never changes.\n\n` +
        '- No clock changes in spring or autumn\n- The IANA zone is `Asia/Tokyo`\n- Scheduling across zones: convert with $t_{JST} = t_{UTC} + 9\\,\\text{h}$',
      reasoning: 'The user wants the current time in Tokyo and whether DST applies. Call get_time with Asia/Tokyo, then explain JST.',
      status: 'complete',
      provider: 'openai',
      model: 'gpt-4o-mini',
      finishReason: 'stop',
      usage: usage(412, 168, 64),
      toolCallsMade: 1,
      toolCalls: [
        {
          id: 'call_tokyo_1',
          name: 'get_time',
          source: { kind: 'builtin' },
          arguments: '{"timezone":"Asia/Tokyo"}',
          textOffset: scalarLength(before),
          iteration: 1,
          index: 0,
          status: 'ok',
          result: { status: 'ok', output: JSON.stringify({ timezone: 'Asia/Tokyo', datetime: t.iso, weekday: t.weekday, local: t.hm }, null, 2), durationMs: 3 },
          progress: [],
          awaitingApproval: false,
        },
      ],
    };
    add('Tokyo time and daylight saving', now - 8 * min, [user('What time is it in Tokyo right now, and does Japan use daylight saving time?', now - 9 * min), toStored(tokyo, now - 9 * min, now - 8 * min)]);

    const quad: MessageModel = {
      ...pendingAssistant(id('m')),
      content:
        'The roots of $ax^2 + bx + c = 0$ are\n\n$$\nx = \\frac{-b \\pm \\sqrt{b^2 - 4ac}}{2a}\n$$\n\nThe discriminant $\\Delta = b^2 - 4ac$ tells you how many real roots there are. In Rust:\n\n```rust\nfn roots(a: f64, b: f64, c: f64) -> Option<(f64, f64)> {\n    let d = b * b - 4.0 * a * c;\n    if d < 0.0 {\n        return None;\n    }\n    let s = d.sqrt();\n    Some(((-b + s) / (2.0 * a), (-b - s) / (2.0 * a)))\n}\n```',
      status: 'complete',
      provider: 'ollama',
      model: 'llama3.2',
      finishReason: 'stop',
      usage: usage(96, 221),
    };
    add('Quadratic formula refresher', now - 1.2 * day, [user('Remind me of the quadratic formula, with a Rust example', now - 1.2 * day - min), toStored(quad, now - 1.2 * day, now - 1.2 * day)]);

    const failed: MessageModel = {
      ...pendingAssistant(id('m')),
      status: 'error',
      provider: 'openai',
      model: 'gpt-4o',
      finishReason: 'error',
      error: { kind: 'rateLimited', message: 'HTTP 429 from openai: Rate limit reached for gpt-4o. Try again in 20s.' },
    };
    add('Summarize the release notes', now - 3 * day, [user('Summarize the release notes of Tauri 2.0', now - 3 * day), toStored(failed, now - 3 * day, now - 3 * day)]);

    const stopped: MessageModel = {
      ...pendingAssistant(id('m')),
      content: 'Here is a plan for the migration:\n\n1. Inventory every table and its owners\n2. Freeze writes to',
      status: 'cancelled',
      provider: 'openai',
      model: 'gpt-4o-mini',
      finishReason: 'cancelled',
      usage: usage(120, 24),
    };
    add('Database migration plan', now - 9 * day, [user('Draft a migration plan from MySQL to Postgres', now - 9 * day), toStored(stopped, now - 9 * day, now - 9 * day)]);
  }

  function summaries(): ConversationSummary[] {
    return [...conversations.values()].map((c) => ({ ...c.summary, messageCount: c.messages.length })).sort((a, b) => b.updatedAt - a.updatedAt);
  }

  function toolsFor(cid: string | null): ToolInfo[] {
    const conv = cid ? conversations.get(cid) : undefined;
    return TOOLS.map((t) => ({
      ...t,
      enabled: !settings.tools.disabled.includes(t.name),
      approval: settings.tools.approval[t.name] ?? t.approval,
      disabledForChat: conv?.disabled.has(t.name) ?? false,
    }));
  }

  // ---- settings, providers, keys ----------------------------------------------------------------

  const profiles: ProviderProfile[] = opts.noProviders ? [] : PROVIDERS.map((p) => ({ ...p }));
  let settings: Settings = {
    defaultProvider: opts.noProviders ? null : 'openai',
    tools: { disabled: ['shell'], approval: {} },
    limits: { maxIterations: null, maxToolCallsPerRound: null, toolTimeoutSecs: null, idleTimeoutSecs: null },
    retry: { maxRetries: null, baseDelayMs: null },
    web: { searchBackend: 'tavily', searxngUrl: null, allowLocalAddresses: false },
  };
  // The stores hold values; nothing below ever returns one.
  const stores: Record<KeyMode, Map<string, string>> = {
    keychain: new Map(opts.noProviders ? [] : [['openai', 'sk-demo-not-a-real-key-7f3a']]),
    memory: new Map(),
    environment: new Map([['exa', 'exa-from-the-environment-9c1d']]),
  };
  const DESCRIBE: Record<KeyMode, string> = { keychain: 'the system keychain', memory: 'the session memory', environment: 'the environment' };
  let keychain: KeychainStatus =
    opts.keychain === 'problem' ? { mode: 'environment', problem: FAKE_KEYCHAIN_PROBLEM } : opts.keychain === 'pending' ? { mode: 'environment', problem: null } : { mode: 'keychain', problem: null };
  if (opts.keychain === 'pending') {
    setTimeout(() => {
      if (keychain.mode === 'environment' && keychain.problem === null) keychain = { mode: 'keychain', problem: null };
    }, opts.probeMs ?? 1500);
  }

  function providerList() {
    return profiles.map((p) => ({ ...p, isDefault: settings.defaultProvider === p.name || (settings.defaultProvider === null && profiles.length === 1) }));
  }

  function knownProfiles(): string {
    return profiles.length === 0 ? 'No provider profiles exist yet.' : `Known profiles: ${profiles.map((p) => p.name).join(', ')}.`;
  }

  /** The stores asked, in order: the chosen one, then the environment (read-only). */
  function layers(): KeyMode[] {
    return keychain.mode === 'environment' ? ['environment'] : [keychain.mode, 'environment'];
  }

  function keyInfo(name: string): KeyInfo {
    const profile = profiles.find((p) => p.name === name);
    const label = profile ? `Provider '${name}' (${profile.baseUrl})` : name === 'tavily' ? 'Tavily (web search)' : name === 'exa' ? 'Exa (web search)' : name;
    const holder = layers().find((m) => stores[m].has(name));
    const value = holder ? stores[holder].get(name) : undefined;
    return {
      name,
      label,
      purpose: profile ? 'provider' : 'tool',
      isSet: value !== undefined,
      last4: value !== undefined && [...value].length >= 8 ? [...value].slice(-4).join('') : null,
      source: DESCRIBE[holder ?? layers()[0] ?? 'environment'],
      envVar: envVarFor(name),
    };
  }

  function checkKeyName(name: string) {
    if (!NAME_RE.test(name)) throw err('config', `invalid key name '${name}': use letters, digits, '-' and '_' (at most 64)`);
  }

  function writableStore(): Map<string, string> {
    if (keychain.mode === 'environment') throw err('auth', 'the environment is read-only; set the key there yourself');
    return stores[keychain.mode];
  }

  async function runTurn(conv: FakeConversation, text: string, req: SendRequest, handlers: TurnHandlers): Promise<TurnStarted> {
    const now = Date.now();
    const userId = id('m');
    const messageId = id('m');
    conv.messages.push(toStored({ ...pendingAssistant(userId), role: 'user', content: text, status: 'complete' }, now, now));
    const provider = req.provider ?? providerList().find((p) => p.isDefault)?.name ?? 'openai';
    const model = req.model ?? profiles.find((p) => p.name === provider)?.model ?? 'gpt-4o-mini';
    let state = pendingAssistant(messageId);
    const slot = conv.messages.length;
    conv.messages.push(toStored(state, now, now));
    conv.summary.updatedAt = now;
    const turn = { cancelled: false, approval: new Map<string, (c: ApprovalChoice) => void>() };
    running.set(messageId, turn);

    const emit = (e: ChatEvent) => {
      state = reduce(state, e);
      conv.messages[slot] = toStored(state, now, Date.now());
      handlers.onEvent(e);
    };
    const started: TurnStarted = { conversationId: conv.summary.id, messageId, userMessageId: userId };
    const available = toolsFor(conv.summary.id).filter((t) => t.enabled && !t.disabledForChat);
    const script = scriptFor(text, req, available);

    const stream = async (kind: 'textDelta' | 'reasoningDelta', s: string) => {
      for (const c of chunks(s)) {
        if (turn.cancelled) return;
        emit({ type: kind, text: c });
        if (tick) await sleep(tick);
      }
    };

    const run = async () => {
      await Promise.resolve();
      emit({ type: 'started', conversationId: conv.summary.id, messageId, userMessageId: userId, provider, model });
      if (tick) await sleep(tick * 8);
      let calls = 0;
      const total = usage(0, 0);
      const finish = (reason: 'stop' | 'cancelled' | 'error') => {
        emit({ type: 'done', finishReason: reason, usage: { ...total }, toolCallsMade: calls });
        running.delete(messageId);
        handlers.onClose?.();
      };
      if (script.error) {
        emit({ type: 'error', kind: script.error.kind, message: script.error.message, retryable: script.error.retryable });
        return finish('error');
      }
      if (req.forced.some((f) => !available.some((t) => t.name === f))) {
        emit({ type: 'notice', kind: 'toolUnavailable', message: `A forced tool is not available in this chat: ${req.forced.filter((f) => !available.some((t) => t.name === f)).join(', ')}` });
      }
      await stream('reasoningDelta', script.reasoning);
      await stream('textDelta', script.before);
      if (turn.cancelled) return finish('cancelled');
      if (req.dryRun && script.calls.length > 0) emit({ type: 'notice', kind: 'dryRun', message: 'Dry run: tools returned example output and had no effect.' });
      const offset = scalarLength(state.content);
      const ids = script.calls.map((_, i) => `call_${messageId}_${i}`);
      script.calls.forEach((c, i) => {
        const tool = available.find((t) => t.name === c.name);
        emit({ type: 'toolCall', id: ids[i] ?? '', name: c.name, source: tool?.source ?? { kind: 'unknown' }, arguments: JSON.stringify(c.args), textOffset: offset, iteration: 1, index: i });
      });
      calls = script.calls.length;
      Object.assign(total, usage(180, 40, 32));
      if (calls > 0) emit({ type: 'usage', usage: usage(180, 40, 32), total: { ...total } });
      for (const [i, c] of script.calls.entries()) {
        const callId = ids[i] ?? '';
        const tool = available.find((t) => t.name === c.name);
        if (tool?.approval === 'ask' && !alwaysAllowed.has(c.name) && !chatAllowed.get(conv.summary.id)?.has(c.name) && !req.dryRun) {
          emit({ type: 'approvalRequested', id: callId, name: c.name, source: tool.source, arguments: JSON.stringify(c.args, null, 2) });
          const choice = await new Promise<ApprovalChoice>((resolve) => turn.approval.set(callId, resolve));
          turn.approval.delete(callId);
          emit({ type: 'approvalResolved', id: callId, approved: choice !== 'deny' });
          if (choice === 'chat') chatAllowed.set(conv.summary.id, new Set([...(chatAllowed.get(conv.summary.id) ?? []), c.name]));
          if (choice === 'always') alwaysAllowed.add(c.name);
          if (choice === 'deny') {
            emit({ type: 'toolResult', id: callId, status: 'denied', output: 'The person denied this call.', durationMs: 0 });
            continue;
          }
        }
        if (turn.cancelled) {
          emit({ type: 'toolResult', id: callId, status: 'cancelled', output: 'Stopped.', durationMs: 0 });
          continue;
        }
        emit({ type: 'toolStarted', id: callId });
        if (tick) await sleep(tick * 25);
        emit({ type: 'toolResult', id: callId, status: 'ok', output: req.dryRun ? `(dry run) ${c.output}` : c.output, durationMs: tick ? tick * 25 + 3 : 1 });
      }
      if (turn.cancelled) return finish('cancelled');
      await stream('textDelta', script.after);
      if (turn.cancelled) return finish('cancelled');
      const last = usage(260, 190, 0);
      total.promptTokens += last.promptTokens;
      total.completionTokens += last.completionTokens;
      emit({ type: 'usage', usage: last, total: { ...total } });
      finish('stop');
    };
    void run();
    return started;
  }

  const backend: Backend = {
    async listConversations() {
      return summaries();
    },
    async searchConversations(query) {
      const q = query.trim().toLowerCase();
      if (!q) return summaries();
      return summaries().filter((s) => {
        const c = conversations.get(s.id);
        return s.title.toLowerCase().includes(q) || (c?.messages.some((m) => m.content.toLowerCase().includes(q)) ?? false);
      });
    },
    async openConversation(cid): Promise<ConversationView> {
      const c = conversations.get(cid);
      if (!c) throw err('notFound', `No conversation ${cid}.`);
      // Like the shell: the last OPEN_PAGE messages, the rest read with olderMessages.
      const from = Math.max(0, c.messages.length - OPEN_PAGE);
      return {
        conversation: { ...c.summary, messageCount: c.messages.length },
        messages: c.messages.slice(from).map((m) => structuredClone(m)),
        earlier: from,
        disabledTools: [...c.disabled],
      };
    },
    async olderMessages(cid, before, limit): Promise<MessagePage> {
      const c = conversations.get(cid);
      if (!c) throw err('notFound', `No conversation ${cid}.`);
      const end = c.messages.findIndex((m) => m.id === before);
      if (end < 0) throw err('config', `No message ${before} in this conversation.`);
      const from = Math.max(0, end - Math.max(1, limit));
      return { messages: c.messages.slice(from, end).map((m) => structuredClone(m)), earlier: from };
    },
    async renameConversation(cid, title) {
      const c = conversations.get(cid);
      if (!c) throw err('notFound', `No conversation ${cid}.`);
      const t = title.trim();
      if (!t) throw err('badRequest', 'A title cannot be empty.');
      c.summary.title = t;
    },
    async deleteConversation(cid) {
      if (!conversations.delete(cid)) throw err('notFound', `No conversation ${cid}.`);
    },
    async sendMessage(request, handlers) {
      if (!request.text.trim()) throw err('badRequest', 'The message is empty.');
      if (profiles.length === 0) throw err('config', 'No provider chosen. Add one (kind, base URL, model) in Settings → Providers and make it the default.');
      let conv = request.conversationId ? conversations.get(request.conversationId) : undefined;
      if (request.conversationId && !conv) throw err('notFound', `No conversation ${request.conversationId}.`);
      if (!conv) {
        const cid = id('c');
        const now = Date.now();
        const title = request.text.trim().replace(/\s+/g, ' ').slice(0, 48);
        conv = { summary: { id: cid, title, createdAt: now, updatedAt: now, messageCount: 0 }, messages: [], disabled: new Set() };
        conversations.set(cid, conv);
      }
      for (const name of request.disableForChat) conv.disabled.add(name);
      return runTurn(conv, request.text, request, handlers);
    },
    async stopTurn(messageId) {
      const t = running.get(messageId);
      if (!t) return false;
      t.cancelled = true;
      for (const resolve of t.approval.values()) resolve('deny');
      return true;
    },
    async regenerate(conversationId, handlers) {
      const c = conversations.get(conversationId);
      if (!c) throw err('notFound', `No conversation ${conversationId}.`);
      const lastUser = c.messages.map((m) => m.role).lastIndexOf('user');
      if (lastUser < 0) throw err('badRequest', 'Nothing to regenerate.');
      const text = c.messages[lastUser]?.content ?? '';
      c.messages.splice(lastUser);
      return runTurn(c, text, { conversationId, text, provider: null, model: null, forced: [], useTools: true, dryRun: false, disableForChat: [] }, handlers);
    },
    async listTools(cid) {
      return toolsFor(cid);
    },
    async setChatToolDisabled(cid, name, disabled) {
      const c = conversations.get(cid);
      if (!c) throw err('notFound', `No conversation ${cid}.`);
      if (!TOOLS.some((t) => t.name === name)) throw err('notFound', `No tool ${name}.`);
      if (disabled) c.disabled.add(name);
      else c.disabled.delete(name);
    },
    async listProviders() {
      return providerList();
    },
    async listModels(provider) {
      const profile = profiles.find((p) => p.name === provider);
      if (!profile) throw err('config', `No provider profile '${provider}'. ${knownProfiles()}`);
      const models = MODELS[provider] ?? (profile.baseUrl.includes(':11434') ? MODELS.ollama : undefined);
      if (!models) throw err('network', `Could not list the models of ${provider}: connection refused.`);
      return [...models];
    },
    async resolveApproval(callId, choice) {
      for (const t of running.values()) {
        const resolve = t.approval.get(callId);
        if (resolve) return resolve(choice);
      }
      throw err('notFound', `No approval is pending for ${callId}.`);
    },
    async openUrl(url) {
      window.open(url, '_blank', 'noopener,noreferrer');
    },
    async getSettings() {
      return structuredClone(settings);
    },
    async updateSettings(next) {
      if (next.defaultProvider !== null && !profiles.some((p) => p.name === next.defaultProvider)) {
        throw err('config', `No provider profile '${next.defaultProvider}'. ${knownProfiles()}`);
      }
      for (const [group, fields] of Object.entries(LIMIT_BOUNDS) as [keyof typeof LIMIT_BOUNDS, Record<string, { min: number; max: number }>][]) {
        for (const [field, { min, max }] of Object.entries(fields)) {
          const v = (next[group] as Record<string, number | null>)[field];
          if (v != null && (v < min || v > max)) throw err('config', `'${group}.${field}' must be from ${min} to ${max}; it is ${v}.`);
        }
      }
      const url = next.web.searxngUrl?.trim() ?? '';
      if (url && !isHttpUrl(url)) throw err('config', `the SearXNG URL '${url}' is not an http:// or https:// URL`);
      if (!url && next.web.searchBackend === 'searxng') {
        throw err('config', 'web search is set to SearXNG but no SearXNG URL is set; add it in Settings → Search & web tools');
      }
      settings = structuredClone({ ...next, tools: { ...next.tools, disabled: [...new Set(next.tools.disabled)].sort() } });
      return structuredClone(settings);
    },
    async addProvider(profile, makeDefault) {
      if (!PROVIDER_KINDS.some((k) => k.id === profile.kind)) {
        throw err('config', `Unknown provider kind '${profile.kind}'. Supported: ${PROVIDER_KINDS.map((k) => k.id).join(', ')}.`);
      }
      if (!NAME_RE.test(profile.name)) throw err('config', `Invalid profile name: invalid key name '${profile.name}': use letters, digits, '-' and '_' (at most 64)`);
      if (!(profile.baseUrl.startsWith('http://') || profile.baseUrl.startsWith('https://'))) {
        throw err('config', `The base URL '${profile.baseUrl}' must start with http:// or https://.`);
      }
      const stored = { ...profile };
      const at = profiles.findIndex((p) => p.name === profile.name);
      if (at >= 0) profiles[at] = stored;
      else profiles.push(stored);
      if (makeDefault || settings.defaultProvider === null) settings = { ...settings, defaultProvider: profile.name };
      return providerList();
    },
    async removeProvider(name) {
      const at = profiles.findIndex((p) => p.name === name);
      if (at < 0) throw err('config', `No provider profile '${name}'. ${knownProfiles()}`);
      profiles.splice(at, 1);
      if (settings.defaultProvider === name) settings = { ...settings, defaultProvider: null };
      if (keychain.mode !== 'environment') stores[keychain.mode].delete(name);
      return providerList();
    },
    async listKeys() {
      return [...profiles.map((p) => p.name), 'tavily', 'exa'].map(keyInfo);
    },
    async setKey(name, value) {
      const v = value.trim();
      if (!v) throw err('config', 'The key is empty.');
      checkKeyName(name);
      writableStore().set(name, v);
      return keyInfo(name);
    },
    async deleteKey(name) {
      checkKeyName(name);
      writableStore().delete(name);
      return keyInfo(name);
    },
    async keychainStatus() {
      return { ...keychain };
    },
    async useKeyFallback(mode) {
      if (mode === 'keychain') {
        if (opts.keychain === 'problem') throw { ...err('auth', FAKE_KEYCHAIN_PROBLEM), retryable: true };
        keychain = { mode: 'keychain', problem: null };
      } else {
        if (mode === 'memory' && keychain.mode !== 'memory') stores.memory.clear();
        keychain = { mode, problem: keychain.problem };
      }
      return { ...keychain };
    },
    async dataInfo() {
      return { dataDir: DATA_DIR, database: `${DATA_DIR}/switchboard.db` };
    },
    async exportAll() {
      return `${DATA_DIR}/exports/switchboard-export-${Math.floor(Date.now() / 1000)}.json`;
    },
  };
  return backend;
}
