/**
 * A chat's own generation settings (temperature, top-p, output limit), over its profile's. They
 * are part of the chat's setup, which the shell keeps with the conversation: a chat that opens
 * hands them over (`adopt`), the parameters dialog writes them through (`set`), and the send path
 * asks `generationFor(id)` and puts the answer in `SendRequest.generation`. This window's
 * localStorage (`switchboard.chatParams`) held them before; what is found there is moved into the
 * chat's setup the first time that chat opens, then forgotten here.
 */
import type { Backend } from '../ipc/backend';
import type { Budget, GenerationOptions, SummariserChoice } from '../ipc/bindings';

export const CHAT_PARAMS_KEY = 'switchboard.chatParams';

/** What a chat may set; a field left out uses the profile's (or the model's) default. */
export interface ChatParams {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
}

function clean(p: ChatParams): ChatParams {
  const out: ChatParams = {};
  if (typeof p.temperature === 'number' && Number.isFinite(p.temperature) && p.temperature >= 0 && p.temperature <= 2) out.temperature = p.temperature;
  if (typeof p.topP === 'number' && Number.isFinite(p.topP) && p.topP >= 0 && p.topP <= 1) out.topP = p.topP;
  if (typeof p.maxOutputTokens === 'number' && Number.isInteger(p.maxOutputTokens) && p.maxOutputTokens >= 1) out.maxOutputTokens = p.maxOutputTokens;
  return out;
}

function read(): Record<string, ChatParams> {
  try {
    const raw = localStorage.getItem(CHAT_PARAMS_KEY);
    const parsed: unknown = raw ? JSON.parse(raw) : null;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const out: Record<string, ChatParams> = {};
    for (const [id, v] of Object.entries(parsed as Record<string, unknown>)) {
      if (!v || typeof v !== 'object') continue;
      const p = clean(v as ChatParams);
      if (Object.keys(p).length > 0) out[id] = p;
    }
    return out;
  } catch {
    return {};
  }
}

/** A chat's parameters as the shell keeps them ({} for none). */
export function paramsOf(g: GenerationOptions | null | undefined): ChatParams {
  if (!g) return {};
  return clean({ temperature: g.temperature, topP: g.topP, maxOutputTokens: g.maxOutputTokens });
}

/** The shell's form of a chat's parameters (all left out: the profile's). */
export function generationOf(p: ChatParams): GenerationOptions {
  const g: GenerationOptions = {};
  if (p.temperature !== undefined) g.temperature = p.temperature;
  if (p.topP !== undefined) g.topP = p.topP;
  if (p.maxOutputTokens !== undefined) g.maxOutputTokens = p.maxOutputTokens;
  return g;
}

export class ChatParamsStore {
  /** Every open (or opened) chat's parameters, by conversation id (chats without any are left out). */
  all = $state.raw<Record<string, ChatParams>>({});
  /** Parameters this window kept in localStorage before chats kept them; moved on `adopt`. */
  private legacy: Record<string, ChatParams> = read();
  private api: Pick<Backend, 'setChatSetup'> | null;

  constructor(api: Pick<Backend, 'setChatSetup'> | null = null) {
    this.api = api;
  }

  /** Where `set` writes (the app's backend). */
  connect(api: Pick<Backend, 'setChatSetup'>): void {
    this.api = api;
  }

  /** Every open chat's budget (steps, time, cost per turn), by conversation id; none: left out. */
  budgets = $state.raw<Record<string, Budget>>({});

  /** A chat's budget ({} for none). */
  budget(conversationId: string): Budget {
    return this.budgets[conversationId] ?? {};
  }

  /** The budget a chat's stored setup has, as it opens. */
  adoptBudget(conversationId: string, budget: Budget | null | undefined): void {
    const { [conversationId]: _, ...rest } = this.budgets;
    this.budgets = budget && Object.keys(budget).length > 0 ? { ...rest, [conversationId]: { ...budget } } : rest;
  }

  /** Replaces a chat's budget (empty: none) and writes it into the chat's setup. */
  async setBudget(conversationId: string, budget: Budget): Promise<void> {
    await this.api?.setChatSetup(conversationId, { budget });
    this.adoptBudget(conversationId, budget);
  }

  /** Every open chat's pick of the model that writes its summaries, by conversation id; its own model: left out. */
  summarisers = $state.raw<Record<string, SummariserChoice>>({});

  /** The profile and model that write a chat's summaries (null: the chat's own model). */
  summariser(conversationId: string): SummariserChoice | null {
    return this.summarisers[conversationId] ?? null;
  }

  /** The summariser a chat's stored setup has, as it opens. */
  adoptSummariser(conversationId: string, pick: SummariserChoice | null | undefined): void {
    const { [conversationId]: _, ...rest } = this.summarisers;
    this.summarisers = pick ? { ...rest, [conversationId]: { provider: pick.provider, model: pick.model } } : rest;
  }

  /** Picks who writes a chat's summaries (null: its own model) and writes it into the chat's setup. */
  async setSummariser(conversationId: string, pick: SummariserChoice | null): Promise<void> {
    await this.api?.setChatSetup(conversationId, { summariser: pick ? { kind: 'pick', ...pick } : { kind: 'chat' } });
    this.adoptSummariser(conversationId, pick);
  }

  /** A chat's parameters ({} for none). */
  get(conversationId: string): ChatParams {
    return this.all[conversationId] ?? {};
  }

  /** Whether a chat sets any parameter of its own. */
  has(conversationId: string): boolean {
    return conversationId in this.all;
  }

  /**
   * The parameters a chat's stored setup has, as it opens. Parameters this window kept for it
   * in localStorage (and the setup lacks) are written into the setup, then forgotten here.
   */
  adopt(conversationId: string, generation: GenerationOptions | null | undefined): void {
    const p = paramsOf(generation);
    const old = this.legacy[conversationId];
    if (old) {
      const { [conversationId]: _, ...rest } = this.legacy;
      this.legacy = rest;
      this.writeLegacy();
      if (Object.keys(p).length === 0) {
        void this.set(conversationId, old).catch(() => undefined);
        return;
      }
    }
    this.put(conversationId, p);
  }

  /** Replaces a chat's parameters (an empty set: the profile's) and writes them into the chat's setup. */
  async set(conversationId: string, params: ChatParams): Promise<void> {
    const p = clean(params);
    await this.api?.setChatSetup(conversationId, { generation: generationOf(p) });
    this.put(conversationId, p);
  }

  /** Forgets a chat's parameters here (when the chat is deleted). */
  forget(conversationId: string): void {
    this.put(conversationId, {});
  }

  /** Reads what localStorage still holds again (tests). */
  reload(): void {
    this.legacy = read();
  }

  private put(conversationId: string, p: ChatParams): void {
    const { [conversationId]: _, ...rest } = this.all;
    this.all = Object.keys(p).length > 0 ? { ...rest, [conversationId]: p } : rest;
  }

  private writeLegacy(): void {
    try {
      if (Object.keys(this.legacy).length > 0) localStorage.setItem(CHAT_PARAMS_KEY, JSON.stringify(this.legacy));
      else localStorage.removeItem(CHAT_PARAMS_KEY);
    } catch {
      // Storage can be disabled: nothing was kept there then.
    }
  }
}

/** The one store of this window. */
export const chatParams = new ChatParamsStore();

/**
 * What to send as `SendRequest.generation` (and `TurnChoices.generation`) for a chat: its own
 * parameters, or undefined when it has none (or is a new chat without an id yet), so the
 * profile's apply.
 */
export function generationFor(conversationId: string | null | undefined, store: ChatParamsStore = chatParams): GenerationOptions | undefined {
  if (!conversationId) return undefined;
  const p = store.all[conversationId];
  if (!p) return undefined;
  const g = generationOf(p);
  return Object.keys(g).length > 0 ? g : undefined;
}

/**
 * The chat dialog open now, if any: opened from a chat's menu (<ChatMenu>), shown by <ChatDialogs>
 * outside the window's layout, which <App> makes inert while it is open (a dialog inside the inert
 * layout could be neither focused nor clicked).
 */
export const chatDialog = $state<{ kind: 'params' | 'instructions' | null; conversationId: string; title: string; store: ChatParamsStore | null }>({
  kind: null,
  conversationId: '',
  title: '',
  store: null,
});

/** Opens a chat's parameters (with `store`) or instructions dialog. */
export function openChatDialog(kind: 'params' | 'instructions', conversationId: string, title: string, store: ChatParamsStore | null = null): void {
  Object.assign(chatDialog, { kind, conversationId, title, store });
}

/** Closes the chat dialog. */
export function closeChatDialog(): void {
  chatDialog.kind = null;
}
