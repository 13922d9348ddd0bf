/**
 * The app's state: conversation list, the open chat, tools and model choice for the next turn,
 * approvals waiting for the person, and error toasts. All I/O goes through the `Backend`.
 */
import { chatParams, generationFor } from './chatParams.svelte';
import { maybeGenerateTitle } from './titles';
import { getContext, setContext } from 'svelte';
import { SvelteMap } from 'svelte/reactivity';
import type { Backend } from '../ipc/backend';
import type { AgentsOverview, ApprovalChoice, Attachment, ChatSetup, ConversationSummary, IpcError, ModelDetails, ProviderInfo, SearchHit, ToolInfo, TurnChoices } from '../ipc/bindings';
import { errorAction, toIpcError, type ErrorAction } from '../ipc/errors';
import { nextFrame, type Scheduler } from '../util/frame';
import { extractMentions } from '../util/mentions';
import { PrefsState } from './prefs.svelte';
import { matchedTerms } from '../search/snippet';
import { ChatSession, type ApprovalRequest, type SessionHost } from './session.svelte';
import { preloadMarkdown } from '../markdown/engine';
import { McpComposer } from '../mcp/state.svelte';
import { AttachmentTray, type SendBytes } from './attachments.svelte';
import { cannotSeeImages, refusesImages } from '../util/attachments';

export interface Toast {
  id: number;
  title: string;
  message: string;
  /** The settings section that fixes the error, if any (`errorAction`). */
  action: ErrorAction | null;
}

/** The sections of the settings screen, in nav order. */
export type SettingsSection = 'providers' | 'keys' | 'web' | 'tools' | 'defined' | 'mcp' | 'agents' | 'limits' | 'chats' | 'usage' | 'appearance' | 'data';

export const SETTINGS_SECTIONS: readonly SettingsSection[] = ['providers', 'keys', 'web', 'tools', 'defined', 'mcp', 'agents', 'limits', 'chats', 'usage', 'appearance', 'data'];

export function isSettingsSection(s: unknown): s is SettingsSection {
  return typeof s === 'string' && (SETTINGS_SECTIONS as readonly string[]).includes(s);
}

export interface ModelChoice {
  provider: string;
  model: string | null;
  /** Typed with "Other model…": kept even when the server does not list it (the server decides). */
  typed?: boolean;
}

/**
 * A message typed while an answer streams: sent by itself when that turn ends normally or is
 * stopped; kept (with `held` saying why) when the turn ended with an error or was cut off.
 */
export interface QueuedMessage {
  /** What the person typed, mentions included (given back to the composer on cancel). */
  raw: string;
  /** The text to send (mentions taken out) and the tools it forces. */
  text: string;
  forced: string[];
  noTools: boolean;
  dryRun: boolean;
  choice: ModelChoice | null;
  /** The files that go with it (the shell's attachments, in order). */
  attachments: Attachment[];
  /** Why it was not sent when the answer ended, or null while it waits. */
  held: string | null;
}

/** A message version the person asked to delete, waiting for confirmation. */
export interface PendingVersionDelete {
  session: ChatSession;
  key: string;
  role: 'user' | 'assistant' | 'system';
}

/** A short confirmation ("Copied"), not an error. */
export interface Notice {
  id: number;
  text: string;
}

const MODEL_KEY = 'switchboard.model';
/** A model list read this recently (ms) is not read again when the picker opens. */
export const MODELS_FRESH_MS = 3000;

/** How many message hits one search asks for. */
export const SEARCH_HIT_LIMIT = 50;
const SIDEBAR_KEY = 'switchboard.sidebar';

function readStorage<T>(key: string): T | null {
  try {
    const raw = localStorage.getItem(key);
    return raw ? (JSON.parse(raw) as T) : null;
  } catch {
    return null;
  }
}

function writeStorage(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Storage can be full or disabled; the choice then lasts for this session only.
  }
}

export class AppState implements SessionHost {
  readonly api: Backend;
  readonly schedule: Scheduler;

  conversations = $state.raw<ConversationSummary[]>([]);
  listLoaded = $state(false);
  query = $state('');
  /** Where the query matched inside messages and tool calls (`search_messages`), best first. */
  hits = $state.raw<SearchHit[]>([]);
  /** Why the message search failed (the conversation list may still have results). */
  hitsError = $state<string | null>(null);
  /** The find bar (Ctrl+F) over the open chat; `findFocus` counts requests to focus its field. */
  findOpen = $state(false);
  findFocus = $state(0);
  /** Counts requests to render every message of the open chat (the find bar's "Search all"). */
  showAllSeq = $state(0);
  current = $state.raw<ChatSession>(null as unknown as ChatSession);

  tools = $state.raw<ToolInfo[]>([]);
  forced = $state.raw<string[]>([]);
  noTools = $state(false);
  dryRun = $state(false);

  providers = $state.raw<ProviderInfo[]>([]);
  /** Agents and toolsets (agents.json), for the new-chat picker and the tools tray. */
  agents = $state.raw<AgentsOverview | null>(null);
  /** The provider list was read at least once (an empty list then means "first run"). */
  providersLoaded = $state(false);
  models = $state.raw<Record<string, string[]>>({});
  /** What each listed model holds and costs, by provider then model (absent: not described). */
  modelSpecs = $state.raw<Record<string, Record<string, ModelDetails>>>({});
  /** Why a provider's models could not be listed (the last try), by provider; its list is then the profile's model. */
  modelErrors = $state.raw<Record<string, string>>({});
  /** The profiles and their models are being read again (the lists shown meanwhile are the last ones). */
  modelsRefreshing = $state(false);
  choice = $state.raw<ModelChoice | null>(null);

  approvals = $state.raw<ApprovalRequest[]>([]);
  /** The conversation the person asked to delete, waiting for confirmation. */
  pendingDelete = $state.raw<ConversationSummary | null>(null);
  /** The message version the person asked to delete, waiting for confirmation. */
  pendingVersionDelete = $state.raw<PendingVersionDelete | null>(null);
  toasts = $state.raw<Toast[]>([]);
  sidebarOpen = $state(true);
  /** The settings screen replaces the chat area while open. */
  settingsOpen = $state(false);
  settingsSection = $state<SettingsSection>('providers');
  /** Text to put in the composer (suggestions on the empty screen). */
  composerSeed = $state<{ text: string; n: number } | null>(null);
  /** Messages waiting for the running answer to end, by `ChatSession.key`. */
  queued = $state.raw<Record<string, QueuedMessage>>({});
  /** The keyboard shortcut sheet (Ctrl+/). */
  shortcutsOpen = $state(false);
  /** The latest short confirmation, shown briefly (see `notify`). */
  notice = $state.raw<Notice | null>(null);
  /** The composer's attachments (paste, drop, the paperclip) until they are sent. */
  readonly attachments: AttachmentTray;
  /** The attachment whose preview is open. */
  previewing = $state.raw<Attachment | null>(null);
  /** Theme, text size, zoom and the send key (localStorage). */
  readonly prefs: PrefsState;
  /** The running MCP servers' prompts and resources, and the resources attached to the next message. */
  readonly mcp: McpComposer = new McpComposer(
    () => this.api,
    (a) => this.attachments.addAttached(a),
  );

  /**
   * Sessions with a turn running, so switching away and back shows the live answer. Reactive:
   * the sidebar marks the chats still answering (`answering`).
   */
  private sessions = new SvelteMap<string, ChatSession>();
  /** New chats whose first answer has not ended yet: they get a title after it. */
  // eslint-disable-next-line svelte/prefer-svelte-reactivity
  private untitled = new Set<string>();
  private toastSeq = 0;
  private searchTimer: ReturnType<typeof setTimeout> | null = null;
  private listRequest = 0;
  private toolsRequest = 0;
  private noticeTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(api: Backend, opts: { schedule?: Scheduler; prefs?: PrefsState; sendBytes?: SendBytes } = {}) {
    this.api = api;
    this.schedule = opts.schedule ?? nextFrame;
    this.prefs = opts.prefs ?? new PrefsState();
    this.attachments = new AttachmentTray(api, opts.sendBytes);
    this.current = new ChatSession(this);
    this.sidebarOpen = readStorage<boolean>(SIDEBAR_KEY) ?? true;
    // The parameters dialog writes into the open chat's setup through this app's backend.
    chatParams.connect(api);
  }

  /** Loads everything the first screen needs. */
  async init(): Promise<void> {
    await Promise.all([this.refreshConversations(), this.loadTools(), this.loadProviders(), this.loadAgents()]);
  }

  /** Reads the agents and toolsets again (at start, and after Settings changed them). */
  async loadAgents(): Promise<void> {
    try {
      this.agents = await this.api.agents();
    } catch (e) {
      this.toast(toIpcError(e));
    }
  }

  /** Picks the agent a new chat runs (`null`: none). */
  pickAgent(name: string | null): void {
    if (!this.current.isDraft) return;
    this.current.agent = name;
    // The tray shows what the agent has.
    void this.loadTools();
  }

  /** Switches a toolset on or off for the current chat's next turns; an existing chat keeps it. */
  async toggleToolset(name: string): Promise<void> {
    const s = this.current;
    const before = s.toolsets;
    s.toolsets = before.includes(name) ? before.filter((t) => t !== name) : [...before, name];
    if (s.isDraft) return; // the first turn carries them
    try {
      await this.api.setChatSetup(s.conversationId as string, { toolsets: [...s.toolsets] });
    } catch (e) {
      s.toolsets = before;
      this.toast(toIpcError(e), 'Could not keep the toolsets for this chat');
    }
  }

  /** A chat opened: the picker shows the profile and model it last used (an agent's chat runs on the agent's). */
  restoreSetup(session: ChatSession, setup: ChatSetup): void {
    if (session.conversationId) chatParams.adopt(session.conversationId, setup.generation);
    if (session.conversationId) chatParams.adoptBudget(session.conversationId, setup.budget);
    if (session.conversationId) chatParams.adoptSummariser(session.conversationId, setup.summariser);
    if (this.current !== session || session.agent || !setup.provider) return;
    if (!this.providers.some((p) => p.name === setup.provider)) return;
    this.choice = { provider: setup.provider, model: setup.model ?? null };
  }

  /** Whether this chat has an answer running (also while another chat is open). */
  answering(id: string): boolean {
    return this.sessions.get(id)?.running ?? false;
  }

  // ---- conversations -------------------------------------------------------------------------

  async refreshConversations(): Promise<void> {
    const req = ++this.listRequest;
    const q = this.query.trim();
    // Both answers of one query are shown together; a slower earlier query never replaces a later one.
    const hits: Promise<{ hits: SearchHit[]; error: string | null }> = q
      ? this.api
          .searchMessages(q, SEARCH_HIT_LIMIT)
          .then(
            (h) => ({ hits: h, error: null }),
            (e: unknown) => ({ hits: [], error: toIpcError(e).message }),
          )
      : Promise.resolve({ hits: [], error: null });
    try {
      const list = q ? await this.api.searchConversations(q) : await this.api.listConversations();
      const found = await hits;
      if (req !== this.listRequest) return;
      this.conversations = q ? list : [...list].sort((a, b) => b.updatedAt - a.updatedAt);
      this.hits = found.hits;
      this.hitsError = found.error;
      this.listLoaded = true;
    } catch (e) {
      if (req === this.listRequest) this.toast(toIpcError(e));
    }
  }

  /** Debounced search as the person types. */
  setQuery(q: string, delayMs = 250): void {
    this.query = q;
    if (this.searchTimer) clearTimeout(this.searchTimer);
    this.searchTimer = setTimeout(() => {
      this.searchTimer = null;
      void this.refreshConversations();
    }, delayMs);
  }

  newChat(): void {
    this.settingsOpen = false;
    if (this.current.isDraft && this.current.messages.length === 0) return;
    this.switchTo(new ChatSession(this));
  }

  async open(id: string): Promise<void> {
    this.settingsOpen = false;
    if (this.current.conversationId === id) return;
    const live = this.sessions.get(id);
    if (live) {
      this.switchTo(live);
      return;
    }
    const s = new ChatSession(this, id);
    s.title = this.conversations.find((c) => c.id === id)?.title ?? '';
    this.switchTo(s);
    await s.load();
  }

  /**
   * Opens a search result: its conversation, on the branch that holds the message when it is not on
   * the current path (`switch_version`), and asks the view to show the message (the tool card
   * opened when the match is in one) with the matched words lit up for a moment.
   */
  async openHit(hit: SearchHit): Promise<void> {
    this.settingsOpen = false;
    const reveal = hit.messageId ? { messageId: hit.messageId, toolCallId: hit.toolCallId ?? null, terms: matchedTerms(hit.snippet) } : null;
    if (reveal && !hit.onCurrentPath) {
      try {
        const view = await this.api.switchVersion(hit.conversationId, reveal.messageId);
        const here = this.current.conversationId === hit.conversationId ? this.current : this.sessions.get(hit.conversationId);
        const s = here ?? new ChatSession(this, hit.conversationId);
        s.applyView(view);
        if (s !== this.current) this.switchTo(s);
        s.reveal = reveal;
      } catch (e) {
        this.toast(toIpcError(e), 'Could not open that version');
      }
      return;
    }
    await this.open(hit.conversationId);
    if (reveal && this.current.conversationId === hit.conversationId) this.current.reveal = reveal;
  }

  openFind(): void {
    this.findOpen = true;
    this.findFocus += 1;
  }

  /** Asks the chat view to load and render every message of the open chat. */
  showAllMessages(): void {
    this.showAllSeq += 1;
  }

  closeFind(): void {
    this.findOpen = false;
  }

  private switchTo(s: ChatSession): void {
    // Keep only sessions whose turn still runs (or that hold a queued message): a finished one is
    // reloaded from the store next time.
    for (const [id, session] of this.sessions) if (!session.running && !this.queued[session.key] && session !== s) this.sessions.delete(id);
    this.current = s;
    this.forced = [];
    this.noTools = false;
    this.dryRun = false;
    void this.loadTools();
  }

  async rename(id: string, title: string): Promise<boolean> {
    const t = title.trim();
    const old = this.conversations.find((c) => c.id === id);
    if (!t || !old || t === old.title) return false;
    try {
      await this.api.renameConversation(id, t);
      this.conversations = this.conversations.map((c) => (c.id === id ? { ...c, title: t } : c));
      if (this.current.conversationId === id) this.current.title = t;
      return true;
    } catch (e) {
      this.toast(toIpcError(e));
      return false;
    }
  }

  async remove(id: string): Promise<void> {
    try {
      const live = this.sessions.get(id);
      if (live?.running) await live.stop();
      await this.api.deleteConversation(id);
      chatParams.forget(id);
      if (live) this.dropQueued(live);
      this.sessions.delete(id);
      this.conversations = this.conversations.filter((c) => c.id !== id);
      if (this.current.conversationId === id) this.switchTo(new ChatSession(this));
    } catch (e) {
      this.toast(toIpcError(e));
    }
  }

  // ---- sending ---------------------------------------------------------------------------------

  /** Sends the composer's text with the current choices; forced tools, "no tools" and dry run reset after. */
  send(rawText: string): boolean {
    const s = this.current;
    // While "Compact now" runs the composer keeps the text: the next request waits for the new history.
    if (s.running || s.compacting) return false;
    // With no provider the turn could only fail (an empty, interrupted answer); the composer says why instead.
    if (!this.hasProviders) return false;
    const message = this.takeMessage(rawText);
    if (!message) return false;
    this.startTurn(s, message);
    return true;
  }

  /**
   * The composer's send: sends now, or, while an answer streams in this chat, queues the message
   * for when it ends (a second one joins the first, so nothing typed is lost).
   */
  submit(rawText: string): boolean {
    const s = this.current;
    if (!s.running) return this.send(rawText);
    if (!this.hasProviders) return false;
    const message = this.takeMessage(rawText);
    if (!message) return false;
    const before = this.queued[s.key];
    const next: QueuedMessage = before
      ? {
          raw: `${before.raw}\n\n${message.raw}`,
          text: `${before.text}\n\n${message.text}`,
          forced: [...before.forced, ...message.forced.filter((f) => !before.forced.includes(f))],
          noTools: before.noTools || message.noTools,
          dryRun: before.dryRun || message.dryRun,
          choice: message.choice,
          attachments: [...before.attachments, ...message.attachments],
          held: null,
        }
      : message;
    this.queued = { ...this.queued, [s.key]: next };
    if (!s.isDraft) this.sessions.set(s.conversationId as string, s);
    return true;
  }

  /** The message queued in the open chat, if any. */
  get currentQueued(): QueuedMessage | null {
    return this.queued[this.current.key] ?? null;
  }

  /** Takes the queued message back (its text and choices return to the composer's hands). */
  cancelQueued(session: ChatSession = this.current): QueuedMessage | null {
    const q = this.queued[session.key] ?? null;
    if (!q) return null;
    this.dropQueued(session);
    if (session === this.current) {
      this.forced = [...this.forced, ...q.forced.filter((f) => !this.forced.includes(f) && this.usableTools.some((t) => t.name === f))];
      this.noTools ||= q.noTools;
      this.dryRun ||= q.dryRun;
      this.attachments.restore(q.attachments);
    }
    return q;
  }

  /** Sends a held message now (after the answer it waited for failed). */
  sendQueuedNow(session: ChatSession = this.current): boolean {
    const q = this.queued[session.key];
    if (!q || session.running || !this.hasProviders) return false;
    this.dropQueued(session);
    this.startTurn(session, q);
    return true;
  }

  private dropQueued(session: ChatSession): void {
    if (!(session.key in this.queued)) return;
    const rest = { ...this.queued };
    delete rest[session.key];
    this.queued = rest;
  }

  /** The composer's text and the one-turn choices (forced tools, no tools, dry run), which reset. */
  private takeMessage(rawText: string): QueuedMessage | null {
    // eslint-disable-next-line svelte/prefer-svelte-reactivity -- a local lookup, not state
    const known = new Set(this.tools.map((t) => t.name));
    const { text, forced } = extractMentions(rawText, known);
    // Files alone are a message too; a file still uploading or a model that cannot take them holds it.
    if ((!text.trim() && !this.attachments.hasReady) || this.attachmentsBlock) return null;
    const message: QueuedMessage = {
      raw: rawText,
      text,
      forced: [...this.forced, ...forced.filter((f) => !this.forced.includes(f))],
      noTools: this.noTools,
      dryRun: this.dryRun,
      choice: this.choice,
      attachments: this.attachments.take(),
      held: null,
    };
    this.forced = [];
    this.noTools = false;
    // Like "no tools", dry run is for one turn: left on, the next real question would get fake tool output.
    this.dryRun = false;
    return message;
  }

  private startTurn(s: ChatSession, m: QueuedMessage): void {
    preloadMarkdown(); // usually here already: the composer loads it when the person starts writing
    const request = {
      conversationId: s.conversationId,
      text: m.text,
      // An agent runs on its own profile and model.
      provider: s.agent ? null : (m.choice?.provider ?? null),
      model: s.agent ? null : (m.choice?.model ?? null),
      ...(s.isDraft && s.agent ? { agent: s.agent } : {}),
      // The tray's toolsets once the chat's own are known; before that the chat's stored ones apply.
      ...(s.isDraft || s.setupLoaded ? { toolsets: [...s.toolsets] } : {}),
      forced: m.noTools ? [] : m.forced,
      useTools: !m.noTools,
      dryRun: m.dryRun,
      // A new chat has no id yet: its switched-off tools travel with the first turn.
      disableForChat: s.isDraft ? [...s.draftDisabled] : [],
      generation: generationFor(s.conversationId),
      ...(m.attachments.length > 0 ? { attachments: m.attachments.map((a) => a.id) } : {}),
    };
    void s.send(request, m.attachments);
  }

  // ---- attachments -----------------------------------------------------------------------------

  /** Opens the preview of `a` (null: closes it). */
  previewAttachment(a: Attachment | null): void {
    this.previewing = a;
  }

  /** The model the next message goes to, when the composer knows it (an agent's is its own). */
  get nextModel(): { provider: string; model: string } | null {
    if (this.current.agent) return null;
    const c = this.choice;
    if (!c) return null;
    const model = c.model ?? this.providers.find((p) => p.name === c.provider)?.model ?? null;
    return model ? { provider: c.provider, model } : null;
  }

  /**
   * Why the composer's attachments cannot be sent now, or null: a model that cannot see images
   * (the service's words), a file still uploading.
   */
  get attachmentsBlock(): string | null {
    const t = this.attachments;
    const next = this.nextModel;
    if (t.hasImages && next && refusesImages(this.modelSpecs[next.provider]?.[next.model]?.capabilities)) return cannotSeeImages(next.model);
    if (t.uploading) return 'Wait until the files are attached';
    return null;
  }

  // ---- versions and branches -------------------------------------------------------------------

  /**
   * The choices a turn is asked again with: `choice`'s profile and model (the composer's for an
   * edited question, the one picked in "Regenerate with…"), the chat's toolsets and parameters.
   */
  turnChoices(s: ChatSession, choice: ModelChoice | null): TurnChoices {
    const generation = generationFor(s.conversationId);
    return {
      provider: choice?.provider ?? null,
      model: choice?.model ?? null,
      forced: [],
      useTools: true,
      dryRun: false,
      systemPrompt: null,
      maxIterations: null,
      ...(generation ? { generation } : {}),
      ...(s.toolsets.length > 0 ? { toolsets: [...s.toolsets] } : {}),
    };
  }

  /** Sends `text` in place of the question keyed `key` (a new branch); false when it did not start (the toast says why). */
  async editMessage(s: ChatSession, key: string, text: string): Promise<boolean> {
    if (!this.hasProviders) return false;
    preloadMarkdown();
    // An agent's chat runs on the agent's profile: the edit is asked as the question was.
    return s.edit(key, text, s.agent ? null : this.turnChoices(s, this.choice));
  }

  /** A new version of the answer keyed `key`: as it was asked, or with `choice`'s profile and model. */
  async regenerate(s: ChatSession, key: string, choice: ModelChoice | null = null): Promise<boolean> {
    if (!this.hasProviders) return false;
    return s.regenerate(key, choice ? this.turnChoices(s, choice) : null);
  }

  /** Copies the conversation up to the message keyed `key` into a new chat, and opens it. */
  async branchFrom(s: ChatSession, key: string): Promise<string | null> {
    const cid = s.conversationId;
    const mid = s.messages.find((m) => m.key === key)?.model.id;
    if (!cid || !mid) return null;
    try {
      // The store copies the chat's setup (its parameters too) into the branch; opening it restores them.
      const id = await this.api.branchConversation(cid, mid);
      await this.refreshConversations();
      await this.open(id);
      return id;
    } catch (e) {
      this.toast(toIpcError(e), 'Could not branch the chat');
      return null;
    }
  }

  /** Deletes the version waiting for confirmation. */
  async confirmVersionDelete(): Promise<boolean> {
    const p = this.pendingVersionDelete;
    this.pendingVersionDelete = null;
    if (!p) return false;
    const done = await p.session.deleteVersion(p.key);
    if (done) void this.refreshConversations();
    return done;
  }

  /** After a turn ended: send its queued message, or hold it and say why when the answer failed. */
  private afterTurn(s: ChatSession): void {
    const q = this.queued[s.key];
    if (!q || q.held) return;
    const last = s.messages[s.messages.length - 1]?.model;
    const ok = !last || last.role !== 'assistant' || last.status === 'complete' || last.status === 'cancelled';
    if (!ok || !this.hasProviders) {
      const why = !this.hasProviders
        ? 'Not sent: there is no provider.'
        : last?.status === 'interrupted' && !last.error
          ? 'Not sent: the answer before it was cut off.'
          : 'Not sent: the answer before it failed.';
      this.queued = { ...this.queued, [s.key]: { ...q, held: why } };
      return;
    }
    this.dropQueued(s);
    this.startTurn(s, q);
  }

  // ---- SessionHost -----------------------------------------------------------------------------

  turnStarting(session: ChatSession): void {
    if (session.conversationId) this.sessions.set(session.conversationId, session);
  }

  adopted(session: ChatSession, conversationId: string): void {
    this.sessions.set(conversationId, session);
    this.untitled.add(conversationId);
    // The first turn carried the draft's switched-off tools (`disableForChat`); the store has them now.
    session.draftDisabled = [];
    if (this.current === session) void this.loadTools();
    void this.refreshConversations();
  }

  turnEnded(session: ChatSession): void {
    const id = session.conversationId;
    if (id && this.untitled.delete(id)) {
      const last = session.messages[session.messages.length - 1]?.model;
      void maybeGenerateTitle(this.api, id, last?.role === 'assistant' && last.status === 'complete').then((t) => {
        if (!t) return;
        this.conversations = this.conversations.map((c) => (c.id === id ? { ...c, title: t } : c));
        if (session.conversationId === id) session.title = t;
      });
    }
    if (session.conversationId && this.current !== session && !this.queued[session.key]) this.sessions.delete(session.conversationId);
    void this.refreshConversations();
    // After the session has finished ending the turn (this runs inside it).
    if (this.queued[session.key]) queueMicrotask(() => this.afterTurn(session));
  }

  requestApproval(req: ApprovalRequest): void {
    if (this.approvals.some((a) => a.id === req.id)) return;
    this.approvals = [...this.approvals, req];
  }

  approvalResolved(callId: string): void {
    this.approvals = this.approvals.filter((a) => a.id !== callId);
  }

  dropApprovals(session: ChatSession): void {
    this.approvals = this.approvals.filter((a) => a.session !== session);
  }

  async resolveApproval(callId: string, choice: ApprovalChoice): Promise<void> {
    // Closed right away; `approvalResolved` confirms it.
    this.approvals = this.approvals.filter((a) => a.id !== callId);
    try {
      await this.api.resolveApproval(callId, choice);
    } catch (e) {
      this.toast(toIpcError(e));
    }
  }

  // ---- tools -----------------------------------------------------------------------------------

  async loadTools(): Promise<void> {
    const req = ++this.toolsRequest;
    const s = this.current;
    try {
      const tools = await this.api.listTools(s.conversationId, s.isDraft ? s.agent : null);
      if (req !== this.toolsRequest) return;
      this.tools = s.isDraft ? tools.map((t) => ({ ...t, disabledForChat: s.draftDisabled.includes(t.name) })) : tools;
      this.forced = this.forced.filter((f) => this.tools.some((t) => t.name === f && t.enabled && !t.disabledForChat));
    } catch (e) {
      if (req === this.toolsRequest) this.toast(toIpcError(e));
    }
  }

  /** Tools that can be forced or mentioned (enabled in settings and in this chat). */
  get usableTools(): ToolInfo[] {
    return this.tools.filter((t) => t.enabled && !t.disabledForChat);
  }

  toggleForced(name: string): void {
    if (this.forced.includes(name)) this.forced = this.forced.filter((f) => f !== name);
    else if (this.usableTools.some((t) => t.name === name)) this.forced = [...this.forced, name];
  }

  force(name: string): void {
    if (!this.forced.includes(name)) this.toggleForced(name);
  }

  async toggleDisabled(name: string): Promise<void> {
    const s = this.current;
    const tool = this.tools.find((t) => t.name === name);
    if (!tool) return;
    const disabled = !tool.disabledForChat;
    const apply = () => {
      this.tools = this.tools.map((t) => (t.name === name ? { ...t, disabledForChat: disabled } : t));
      if (disabled) this.forced = this.forced.filter((f) => f !== name);
    };
    if (s.isDraft) {
      s.draftDisabled = disabled ? [...s.draftDisabled, name] : s.draftDisabled.filter((n) => n !== name);
      apply();
      return;
    }
    try {
      await this.api.setChatToolDisabled(s.conversationId as string, name, disabled);
      if (this.current === s) apply();
    } catch (e) {
      this.toast(toIpcError(e));
    }
  }

  /**
   * Switches several tools off (or back on) for this chat at once: a whole MCP server or source.
   * One write; on failure nothing changed and the toast says why.
   */
  async setDisabledMany(names: readonly string[], disabled: boolean): Promise<void> {
    const s = this.current;
    const change = names.filter((n) => this.tools.some((t) => t.name === n && t.disabledForChat !== disabled));
    if (change.length === 0) return;
    const apply = () => {
      this.tools = this.tools.map((t) => (change.includes(t.name) ? { ...t, disabledForChat: disabled } : t));
      if (disabled) this.forced = this.forced.filter((f) => !change.includes(f));
    };
    if (s.isDraft) {
      s.draftDisabled = disabled ? [...s.draftDisabled, ...change] : s.draftDisabled.filter((n) => !change.includes(n));
      apply();
      return;
    }
    try {
      await this.api.setChatToolsDisabled(s.conversationId as string, change, disabled);
      if (this.current === s) apply();
    } catch (e) {
      this.toast(toIpcError(e));
    }
  }

  // ---- models ----------------------------------------------------------------------------------

  async loadProviders(): Promise<void> {
    try {
      this.providers = await this.api.listProviders();
      this.providersLoaded = true;
    } catch (e) {
      this.toast(toIpcError(e));
      return;
    }
    const errors: Record<string, string> = {};
    const entries = await Promise.all(
      this.providers.map(async (p): Promise<[string, string[]]> => {
        try {
          const list = await this.api.listModels(p.name);
          const all = p.model && !list.includes(p.model) ? [p.model, ...list] : list;
          return [p.name, all];
        } catch (e) {
          // The provider could not list its models: offer the profile's model, and say why.
          errors[p.name] = toIpcError(e).message;
          return [p.name, p.model ? [p.model] : []];
        }
      }),
    );
    this.models = Object.fromEntries(entries);
    this.modelErrors = errors;
    void this.describeModels(entries);
    this.choice = this.keptChoice() ?? this.pickInitialChoice();
    this.modelsReadAt = Date.now();
  }

  /** Reads what each listed model holds and costs (for the picker); a provider that fails is left out. */
  private async describeModels(entries: [string, string[]][]): Promise<void> {
    const described = await Promise.all(
      entries.map(async ([provider, models]): Promise<[string, Record<string, ModelDetails>]> => {
        try {
          const details = models.length > 0 ? await this.api.describeModels(provider, models) : [];
          return [provider, Object.fromEntries(details.map((d) => [d.model, d]))];
        } catch {
          return [provider, {}];
        }
      }),
    );
    this.modelSpecs = Object.fromEntries(described);
  }

  /** When the profiles and models were last read (ms), for `refreshModels`. */
  private modelsReadAt = 0;
  private modelsReading: Promise<void> | null = null;

  /**
   * Reads the profiles and their models again (when the picker opens, when the window gets focus:
   * another process may have added a provider). The lists on screen stay until the new ones arrive;
   * a read within `MODELS_FRESH_MS` of the last one is skipped unless `force`.
   */
  refreshModels(force = false): Promise<void> {
    if (this.modelsReading) return this.modelsReading;
    if (!force && Date.now() - this.modelsReadAt < MODELS_FRESH_MS) return Promise.resolve();
    this.modelsRefreshing = true;
    this.modelsReading = this.loadProviders().finally(() => {
      this.modelsReading = null;
      this.modelsRefreshing = false;
    });
    return this.modelsReading;
  }

  /** The current choice, while its provider still exists (a typed model id is kept: the server decides). */
  private keptChoice(): ModelChoice | null {
    const c = this.choice;
    return c && this.providers.some((p) => p.name === c.provider) ? c : null;
  }

  private pickInitialChoice(): ModelChoice | null {
    const saved = readStorage<ModelChoice>(MODEL_KEY);
    if (saved && this.providers.some((p) => p.name === saved.provider)) {
      const models = this.models[saved.provider] ?? [];
      if (saved.model === null || models.includes(saved.model) || saved.typed === true) return saved;
    }
    const p = this.providers.find((x) => x.isDefault) ?? this.providers[0];
    if (!p) return null;
    return { provider: p.name, model: p.model ?? this.models[p.name]?.[0] ?? null };
  }

  /** The picker's choice: for new chats (localStorage), and kept by the open chat. */
  choose(choice: ModelChoice): void {
    this.choice = choice;
    writeStorage(MODEL_KEY, choice);
    const s = this.current;
    if (s.isDraft || s.agent) return;
    this.api.setChatSetup(s.conversationId as string, { provider: choice.provider, ...(choice.model ? { model: choice.model } : {}) }).catch((e: unknown) => this.toast(toIpcError(e), 'Could not keep the model for this chat'));
  }

  // ---- chrome ----------------------------------------------------------------------------------

  openSettings(section?: SettingsSection): void {
    if (section) this.settingsSection = section;
    this.settingsOpen = true;
  }

  closeSettings(): void {
    this.settingsOpen = false;
  }

  toggleSidebar(): void {
    this.sidebarOpen = !this.sidebarOpen;
    writeStorage(SIDEBAR_KEY, this.sidebarOpen);
  }

  /** False only once the provider list was read and is empty (before that, nothing is known). */
  get hasProviders(): boolean {
    return !this.providersLoaded || this.providers.length > 0;
  }

  /** Follows an error's action: opens the settings section that fixes it. */
  runAction(action: ErrorAction): void {
    this.openSettings(action.section);
  }

  toast(error: IpcError | string, title = 'Something went wrong'): void {
    const e = typeof error === 'string' ? { kind: 'internal' as const, message: error, retryable: false } : error;
    const id = ++this.toastSeq;
    const action = errorAction(e.kind, { hasProviders: this.hasProviders });
    this.toasts = [...this.toasts.filter((t) => t.message !== e.message), { id, title, message: e.message, action }].slice(-4);
    setTimeout(() => this.dismiss(id), 10_000);
  }

  dismiss(id: number): void {
    this.toasts = this.toasts.filter((t) => t.id !== id);
  }

  seedComposer(text: string): void {
    this.composerSeed = { text, n: (this.composerSeed?.n ?? 0) + 1 };
  }

  /** A short confirmation ("Copied") shown for a moment; not an error toast. */
  notify(text: string, ms = 2500): void {
    this.notice = { id: (this.notice?.id ?? 0) + 1, text };
    if (this.noticeTimer) clearTimeout(this.noticeTimer);
    this.noticeTimer = setTimeout(() => {
      this.noticeTimer = null;
      this.notice = null;
    }, ms);
  }

  openShortcuts(): void {
    this.shortcutsOpen = true;
  }

  closeShortcuts(): void {
    this.shortcutsOpen = false;
  }

  /** Stops the answer streaming in the open chat; false when none runs. */
  stopCurrent(): boolean {
    const s = this.current;
    if (!s.running || s.stopping) return false;
    void s.stop();
    return true;
  }

  /** The Markdown of the open chat's last answer with text, or null. */
  lastAnswerMarkdown(): string | null {
    for (let i = this.current.messages.length - 1; i >= 0; i--) {
      const m = this.current.messages[i]?.model;
      if (m?.role === 'assistant' && m.content.trim()) return m.content;
    }
    return null;
  }

  /** Copies the last answer's Markdown to the clipboard and says so. */
  async copyLastAnswer(): Promise<boolean> {
    const text = this.lastAnswerMarkdown();
    if (text === null) {
      this.notify('No answer to copy yet');
      return false;
    }
    try {
      await navigator.clipboard.writeText(text);
      this.notify('Copied');
      return true;
    } catch (e) {
      this.toast(toIpcError(e), 'Could not copy the answer');
      return false;
    }
  }
}

const KEY = Symbol('switchboard-app');

export function provideApp(app: AppState): void {
  setContext(KEY, app);
}

export function useApp(): AppState {
  const app = getContext<AppState | undefined>(KEY);
  if (!app) throw new Error('AppState missing: render inside <App>.');
  return app;
}

/** The app when there is one (a card rendered on its own, in a test, has none). */
export function maybeApp(): AppState | undefined {
  return getContext<AppState | undefined>(KEY);
}
