/**
 * A chat's own generation settings (temperature, top-p, output limit), over its profile's. Kept in
 * this window's localStorage (`switchboard.chatParams`) by conversation id; the send path asks
 * `generationFor(id)` and puts the answer in `SendRequest.generation`.
 */
import type { GenerationOptions } from '../ipc/bindings';

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

export class ChatParamsStore {
  /** Every chat's parameters, by conversation id (chats without any are left out). */
  all = $state.raw<Record<string, ChatParams>>(read());

  /** A chat's parameters ({} for none). */
  get(conversationId: string): ChatParams {
    return this.all[conversationId] ?? {};
  }

  /** Whether a chat sets any parameter of its own. */
  has(conversationId: string): boolean {
    return conversationId in this.all;
  }

  /** Replaces a chat's parameters; an empty set forgets them. */
  set(conversationId: string, params: ChatParams): void {
    const p = clean(params);
    const { [conversationId]: _, ...rest } = this.all;
    this.all = Object.keys(p).length > 0 ? { ...rest, [conversationId]: p } : rest;
    this.write();
  }

  /** Forgets a chat's parameters (when the chat is deleted). */
  forget(conversationId: string): void {
    if (this.has(conversationId)) this.set(conversationId, {});
  }

  /** Reads localStorage again (tests; another window changed it). */
  reload(): void {
    this.all = read();
  }

  private write(): void {
    try {
      localStorage.setItem(CHAT_PARAMS_KEY, JSON.stringify(this.all));
    } catch {
      // Storage can be full or disabled: the parameters then last for this session only.
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
  const g: GenerationOptions = {};
  if (p.temperature !== undefined) g.temperature = p.temperature;
  if (p.topP !== undefined) g.topP = p.topP;
  if (p.maxOutputTokens !== undefined) g.maxOutputTokens = p.maxOutputTokens;
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
