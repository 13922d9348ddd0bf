/**
 * One conversation on screen (or a new chat before its first turn) and the turn running in it.
 * Events arrive on the turn's channel, are queued, and are applied at most once per animation frame
 * through the pure reducer, so a fast stream costs one model update and one render per frame.
 */
import type { Backend, TurnHandlers } from '../ipc/backend';
import type { Attachment, BudgetChoice, ChatEvent, ChatSetup, ContextBreakdown, ConversationView, EgressReason, IpcError, SendRequest, StoredCompaction, StoredMessage, ToolSource, TurnChoices, TurnStarted } from '../ipc/bindings';
import { toIpcError } from '../ipc/errors';
import { generationFor } from './chatParams.svelte';
import { fromStored, interrupt, nestedApproval, nestedBudget, pendingAssistant, type BudgetPause, reduce, userMessage, type MessageModel } from '../model/message';
import { compactionFromStored, undoAll } from '../model/compaction';
import type { Scheduler } from '../util/frame';
import { uid } from '../util/id';
import { loadMarkdown } from '../markdown/engine';
import { frameBudget, takeFrame } from '../model/reveal';

/** How many older messages one step up reads from the store. */
export const OLDER_STORE_PAGE = 50;

export interface UiMessage {
  /** Stable key for rendering (the store's id arrives later, with `started`). */
  key: string;
  model: MessageModel;
  /** The request that produced this answer, when it failed before the store had it (Retry resends it). */
  request?: SendRequest;
  /** The ids of this message's versions, oldest first, itself included (absent: it has no other). */
  versions?: readonly string[];
}

/** Where a message stands among its versions: `index` is 0-based. */
export interface VersionPosition {
  index: number;
  count: number;
}

/** Why a message cannot be edited, regenerated or switched now (a tooltip). */
export const BUSY_REASON = 'Wait until the answer finishes, or stop it.';

/** Why a turn or a tree change waits while "Compact now" runs. */
export const COMPACTING_REASON = 'Wait until compaction finishes.';

/** A stored message as the session keeps it, under the key it already has on screen (if any). */
function uiFromStored(m: StoredMessage, keys: ReadonlyMap<string, string> = new Map(), compactions: readonly StoredCompaction[] = []): UiMessage {
  // A shell from before the message tree sends no `versions`: the message then has no other.
  const versions = (m as Partial<StoredMessage>).versions ?? [];
  return { key: keys.get(m.id) ?? (m.id || uid('m')), model: fromStored(m, compactions), ...(versions.length > 1 ? { versions } : {}) };
}

/** Where `m` stands among its versions, or null when it has no other. */
export function versionPosition(m: UiMessage): VersionPosition | null {
  const v = m.versions;
  if (!v || v.length < 2) return null;
  const index = v.indexOf(m.model.id);
  return index < 0 ? null : { index, count: v.length };
}

/** A place to show once the conversation is on screen (a search result): its message, maybe a tool card in it, the words to light up. */
export interface RevealRequest {
  messageId: string;
  toolCallId: string | null;
  terms: string[];
}

export interface ApprovalRequest {
  id: string;
  name: string;
  source: ToolSource;
  arguments: string;
  /** What the call will do in the tool's words (a command line, an HTTP request). */
  preview?: string;
  /** Why it is asked although it would otherwise run: data to a new destination after untrusted content. */
  egress?: EgressReason;
  /** The sub-agent asking (`Scout[1]`, or `Lead[1] › Scout[2]` deeper down); none for the chat's own calls. */
  agent?: string;
  session: ChatSession;
}

/** What a session needs from the app around it. */
export interface SessionHost {
  readonly api: Backend;
  readonly schedule: Scheduler;
  toast(error: IpcError | string, title?: string): void;
  /** A short confirmation at the bottom of the window ("Compacted: …"). */
  notify?(text: string): void;
  /** A new chat got its conversation id from `started`. */
  adopted(session: ChatSession, conversationId: string): void;
  /** A turn is starting (send, edit, regenerate, retry): keep the session while it answers. */
  turnStarting(session: ChatSession): void;
  /** A turn ended (refresh the list: titles and order change). */
  turnEnded(session: ChatSession): void;
  requestApproval(req: ApprovalRequest): void;
  approvalResolved(callId: string): void;
  dropApprovals(session: ChatSession): void;
  /** A chat opened with its stored setup (parameters, profile and model to restore). */
  restoreSetup?(session: ChatSession, setup: ChatSetup): void;
}

/** How a turn joins the messages on screen (edit and regenerate start from an earlier point). */
interface TurnPlace {
  /** The messages to show again when the turn could not start (nothing is lost). */
  restore: UiMessage[];
  /** The question stays (regenerate): only a new answer is added under it. */
  questionKey?: string;
  /** The versions the new question (edit) or answer (regenerate) joins as the newest. */
  userVersions?: readonly string[];
  answerVersions?: readonly string[];
}

interface LiveTurn {
  assistantKey: string;
  userKey: string;
  place: TurnPlace | null;
  messageId: string | null;
  queue: ChatEvent[];
  /** The text budget of the last frame while a backlog drains (`frameBudget`); 0 when the queue is empty. */
  budget: number;
  scheduled: boolean;
  closed: boolean;
  finished: boolean;
  started: boolean;
  stopRequested: boolean;
}

/** What the context meter shows: tokens the next request sends, the window, where they go. */
export interface ContextFigure {
  usedTokens: number;
  window: number | null;
  breakdown: ContextBreakdown;
  estimated: boolean;
  /** The fraction of the window past which the loop compacts. */
  compactAt: number;
}

export class ChatSession {
  readonly key = uid('s');
  conversationId = $state<string | null>(null);
  title = $state('New chat');
  messages = $state.raw<UiMessage[]>([]);
  loading = $state(false);
  loadError = $state<IpcError | null>(null);
  /** How many of the conversation's messages come before `messages` and are not loaded yet. */
  earlier = $state(0);
  /** Whether a turn runs in this conversation (the composer is disabled meanwhile). */
  running = $state(false);
  /** The budget pause the running turn waits at (its own, or a sub-agent's), if any. */
  budgetPause = $state.raw<BudgetPause | null>(null);
  stopping = $state(false);
  /** Tools switched off in a new chat, applied once `started` names the conversation. */
  draftDisabled = $state.raw<string[]>([]);
  /** The agent the chat runs: picked for a new chat, then kept by the conversation. */
  agent = $state<string | null>(null);
  /** Toolsets switched on in this chat: its turns get their tools (with the agent's, if any). */
  toolsets = $state.raw<string[]>([]);
  /** Where the view should go next (ChatView takes it, loading older pages as needed, then clears it). */
  reveal = $state.raw<RevealRequest | null>(null);
  /**
   * The question being edited in place and its text so far. Kept here, not in the message's
   * component, so the text survives an edit that could not be sent (the message is shown again).
   */
  editing = $state.raw<{ key: string; text: string } | null>(null);
  /** The chat's stored setup was read (`toolsets` is the chat's, so a turn may send it). */
  setupLoaded = $state(false);
  /**
   * How full the model's context is for the next request (the meter): the last `context` event
   * of a turn, or the chat's stored figure for the chosen model; `null` for a new chat.
   */
  context = $state.raw<ContextFigure | null>(null);

  private turn: LiveTurn | null = null;
  private readonly host: SessionHost;

  constructor(host: SessionHost, conversationId: string | null = null) {
    this.host = host;
    this.conversationId = conversationId;
  }

  get isDraft(): boolean {
    return this.conversationId === null;
  }

  /**
   * The meter's figure before a new request: what the next request sends before the new message
   * (its attached files in the form `provider`/`model` takes them; `null`: the chat's), counted as
   * that request will be. Kept as it was if it cannot be read.
   */
  async refreshContext(provider: string | null, model: string | null): Promise<void> {
    const id = this.conversationId;
    if (!id) {
      this.context = null;
      return;
    }
    try {
      const figure = await this.host.api.conversationContext(id, provider, model);
      if (!this.running && this.conversationId === id) this.context = figure;
    } catch {
      // The meter is a hint: the figure it had stays until the next request says more.
    }
  }

  /** Loads the conversation from the store. */
  async load(): Promise<void> {
    const id = this.conversationId;
    if (!id) return;
    this.loading = true;
    this.loadError = null;
    try {
      // The Markdown engine loads alongside, so the chat's first paint is its rendered messages.
      const [view, rows] = await Promise.all([this.host.api.openConversation(id), this.readCompactions(id), loadMarkdown().catch(() => undefined)]);
      if (this.running) return; // a turn started meanwhile: its live state wins
      this.applyView(view, rows);
    } catch (e) {
      this.loadError = toIpcError(e);
      this.host.toast(this.loadError);
    } finally {
      this.loading = false;
    }
  }

  /**
   * The compaction rows of the conversation's current path. A failure shows the chat without its
   * boundaries (the messages are all there) rather than not at all.
   */
  private async readCompactions(id: string): Promise<StoredCompaction[]> {
    try {
      return await this.host.api.listCompactions(id);
    } catch {
      return [];
    }
  }

  /**
   * Shows `view` (from opening the conversation, or from switching it to another branch) with the
   * path's compaction rows (`rows`; absent: read them, and place them once they arrive).
   */
  applyView(view: ConversationView, rows?: readonly StoredCompaction[]): void {
    this.title = view.conversation.title;
    this.agent = view.agent ?? null;
    if (view.setup) {
      this.toolsets = [...view.setup.toolsets];
      this.setupLoaded = true;
      this.host.restoreSetup?.(this, view.setup);
    }
    this.compactionRows = rows ?? [];
    this.messages = view.messages.map((m) => uiFromStored(m, undefined, this.compactionRows));
    this.earlier = view.earlier;
    if (!rows && this.conversationId) void this.refreshCompactions(this.conversationId);
  }

  /** Reads the path's compaction rows again and shows them on the messages they belong to. */
  private async refreshCompactions(id: string): Promise<void> {
    const rows = await this.readCompactions(id);
    if (this.conversationId !== id || this.running) return;
    this.compactionRows = rows;
    this.messages = this.messages.map((m) => {
      const mine = rows.filter((c) => c.messageId === m.model.id);
      if (mine.length === 0 && m.model.compactions.length === 0) return m;
      return { ...m, model: { ...m.model, compactions: mine.map(compactionFromStored) } };
    });
  }

  private older: Promise<number> | null = null;

  /**
   * Loads up to `limit` of the messages before the first loaded one (a long conversation opens
   * with its last page). Resolves to how many were added; one load at a time.
   */
  loadOlder(limit = OLDER_STORE_PAGE): Promise<number> {
    this.older ??= this.fetchOlder(limit).finally(() => (this.older = null));
    return this.older;
  }

  private async fetchOlder(limit: number): Promise<number> {
    const id = this.conversationId;
    const first = this.messages[0]?.model.id;
    if (!id || !first || this.earlier === 0) return 0;
    try {
      const page = await this.host.api.olderMessages(id, first, limit);
      // The conversation may have been reloaded meanwhile: add the page only where it belongs.
      if (this.conversationId !== id || this.messages[0]?.model.id !== first) return 0;
      const have = this.messages.map((m) => m.key);
      const added = page.messages.filter((m) => !have.includes(m.id)).map((m) => uiFromStored(m, undefined, this.compactionRows));
      this.messages = [...added, ...this.messages];
      this.earlier = page.earlier;
      return added.length;
    } catch (e) {
      this.host.toast(toIpcError(e));
      return 0;
    }
  }

  /** Sends a message in this conversation. */
  send(request: SendRequest, attachments: readonly Attachment[] = []): Promise<boolean> {
    return this.runTurn(request.text, (h) => this.host.api.sendMessage({ ...request, conversationId: this.conversationId }, h), request, null, attachments);
  }

  /** Whether the last answer can be retried (it failed, stopped or was cut off) and no turn runs. */
  canRetry(key: string): boolean {
    if (this.running) return false;
    const last = this.messages[this.messages.length - 1];
    return !!last && last.key === key && last.model.role === 'assistant' && last.model.status !== 'streaming';
  }

  /**
   * Asks the last question again: `regenerate` when the store has the failed answer, or the same
   * request again when the turn never started.
   */
  async retry(model: { provider: string; model: string } | null = null): Promise<void> {
    if (this.running) return;
    const n = this.messages.length;
    const answer = this.messages[n - 1];
    const question = this.messages[n - 2];
    if (!answer || answer.model.role !== 'assistant') return;
    if (answer.request && !answer.model.id) {
      this.messages = this.messages.slice(0, question?.model.role === 'user' ? n - 2 : n - 1);
      await this.send(model ? { ...answer.request, ...model } : answer.request, question?.model.role === 'user' ? (question.model.attachments ?? []) : []);
      return;
    }
    // The failed answer stays as a version; the new one is added beside it. Another model ("model
    // not found" offers the server's): the chat's other choices stay as they were.
    const cid = this.conversationId;
    const choices = model && cid ? { ...model, forced: [], useTools: true, dryRun: false, systemPrompt: null, maxIterations: null, generation: generationFor(cid), ...(this.toolsets.length > 0 ? { toolsets: [...this.toolsets] } : {}) } : null;
    await this.regenerate(answer.key, choices);
  }

  /** Why edit, regenerate and version switching are not offered now (a tooltip), or null. */
  get treeBusy(): string | null {
    return this.running ? BUSY_REASON : this.compacting ? COMPACTING_REASON : null;
  }

  /** The compactions of the path as the conversation opened (older pages take theirs from here). */
  private compactionRows: readonly StoredCompaction[] = [];

  /** "Compact now" runs: the chat menu shows it, the composer and tree changes wait. */
  compacting = $state(false);

  /** Shows "Compact now"'s compaction where it applies: below the last message. */
  private placeCompaction(c: StoredCompaction): void {
    this.compactionRows = [...this.compactionRows, c];
    this.messages = this.messages.map((m) => (m.model.id === c.messageId ? { ...m, model: { ...m.model, compactions: [...m.model.compactions, compactionFromStored(c)] } } : m));
  }

  /**
   * Compacts what this chat sends now (the chat menu's "Compact now"). Resolves with the
   * compaction, or undefined when it failed: then nothing changed, and the toast says why.
   */
  async compactNow(): Promise<StoredCompaction | undefined> {
    const id = this.conversationId;
    if (!id || this.running || this.compacting) return undefined;
    this.compacting = true;
    try {
      const c = await this.host.api.compactConversation(id);
      if (this.conversationId === id) this.placeCompaction(c);
      return c;
    } catch (e) {
      const err = toIpcError(e);
      // The service's words say the conversation is unchanged; an error that does not is told so.
      const message = /unchanged/i.test(err.message) ? err.message : `${err.message.replace(/\.?$/, '.')} Nothing changed: the full history is still sent.`;
      this.host.toast({ ...err, message }, 'Could not compact');
      return undefined;
    } finally {
      this.compacting = false;
    }
  }

  /**
   * Undoes compaction: every compaction in force on this path is marked undone, so the full
   * history goes with the next request. Nothing is deleted; a row that could not be marked is
   * said in the toast, and what is shown is read back from the store.
   */
  async undoCompaction(): Promise<boolean> {
    const id = this.conversationId;
    if (!id || this.treeBusy) return false;
    try {
      const rows = await this.host.api.listCompactions(id);
      for (const c of rows) if (!c.undone) await this.host.api.setCompactionUndone(id, c.id, true);
    } catch (e) {
      this.host.toast(toIpcError(e), 'Could not undo the compaction');
      await this.refreshCompactions(id);
      return false;
    }
    this.compactionRows = this.compactionRows.map((c) => (c.undone ? c : { ...c, undone: true }));
    this.messages = this.messages.map((m) => {
      const model = undoAll(m.model);
      return model === m.model ? m : { ...m, model };
    });
    this.host.notify?.('Undone: the full history goes with the next request');
    return true;
  }

  /** Pins (never summarised) or unpins the message keyed `key`; shown at once, put back if refused. */
  async setMessagePinned(key: string, pinned: boolean): Promise<boolean> {
    const id = this.conversationId;
    const target = this.messages.find((m) => m.key === key);
    if (!id || !target || !target.model.id) return false;
    const set = (v: boolean) => (this.messages = this.messages.map((m) => (m.key === key ? { ...m, model: { ...m.model, pinned: v } } : m)));
    set(pinned);
    try {
      await this.host.api.setMessagePinned(id, target.model.id, pinned);
      return true;
    } catch (e) {
      set(!pinned);
      this.host.toast(toIpcError(e), pinned ? 'Could not pin the message' : 'Could not unpin the message');
      return false;
    }
  }


  /**
   * Sends `text` in place of the question keyed `key`: a new version of it, answered on a new
   * branch (the old branch is kept). Resolves to whether the turn started; when it did not (the
   * conversation is busy, the text is empty), the messages are as before and the error was shown.
   */
  edit(key: string, text: string, choices: TurnChoices | null): Promise<boolean> {
    const id = this.conversationId;
    const at = this.messages.findIndex((m) => m.key === key);
    const m = this.messages[at];
    if (!id || this.running || !m || m.model.role !== 'user' || !m.model.id || (!text.trim() && !m.model.attachments?.length)) return Promise.resolve(false);
    const messageId = m.model.id;
    const place: TurnPlace = { restore: this.messages, userVersions: m.versions ?? [messageId] };
    this.messages = this.messages.slice(0, at);
    // The edited question keeps its attachments (the service carries them to the new version).
    return this.runTurn(text, (h) => this.host.api.editMessage(id, messageId, text, choices, h), undefined, place, m.model.attachments ?? []);
  }

  /**
   * Asks for a new version of the answer keyed `key` (`choices`: another profile or model; null:
   * as it was asked). The earlier answer stays as a version. Resolves to whether the turn started.
   */
  regenerate(key: string, choices: TurnChoices | null): Promise<boolean> {
    const id = this.conversationId;
    const at = this.messages.findIndex((m) => m.key === key);
    const named = this.messages[at];
    if (!id || this.running || !named?.model.id) return Promise.resolve(false);
    if (named.model.role === 'user') {
      // A question whose answers were all deleted: a first answer under it.
      const questionId = named.model.id;
      const place: TurnPlace = { restore: this.messages, answerVersions: [], questionKey: named.key };
      this.messages = this.messages.slice(0, at + 1);
      return this.runTurn(named.model.content, (h) => this.host.api.regenerate(id, questionId, choices, h), undefined, place);
    }
    const answer = named;
    const question = this.messages[at - 1];
    if (answer.model.role !== 'assistant') return Promise.resolve(false);
    const messageId = answer.model.id;
    const place: TurnPlace = {
      restore: this.messages,
      answerVersions: answer.versions ?? [messageId],
      ...(question?.model.role === 'user' ? { questionKey: question.key } : {}),
    };
    this.messages = this.messages.slice(0, at);
    return this.runTurn(question?.model.content ?? '', (h) => this.host.api.regenerate(id, messageId, choices, h), undefined, place);
  }

  /** Shows the previous (`-1`) or next (`1`) version of the message keyed `key`; the view follows its branch. */
  async switchVersion(key: string, step: -1 | 1): Promise<boolean> {
    const id = this.conversationId;
    const at = this.messages.findIndex((m) => m.key === key);
    const m = this.messages[at];
    const pos = m ? versionPosition(m) : null;
    const target = pos && m?.versions?.[pos.index + step];
    if (!id || this.running || !target) return false;
    try {
      const view = await this.host.api.switchVersion(id, target);
      return await this.showBranch(id, at, view);
    } catch (e) {
      this.host.toast(toIpcError(e));
      return false;
    }
  }

  /** Deletes the version keyed `key` and everything below it; the view shows the version the store chose instead. */
  async deleteVersion(key: string): Promise<boolean> {
    const id = this.conversationId;
    const at = this.messages.findIndex((m) => m.key === key);
    const messageId = this.messages[at]?.model.id;
    if (!id || this.running || !messageId) return false;
    try {
      const view = await this.host.api.deleteVersion(id, messageId);
      return await this.showBranch(id, at, view);
    } catch (e) {
      this.host.toast(toIpcError(e));
      return false;
    }
  }

  /**
   * Shows the path `view` ends, which differs from the one on screen from message `at` on (the
   * messages above it are the same and keep their elements). When the new part is longer than
   * the view's page, the pages between are read first, so the changed message stays where it was.
   */
  private async showBranch(id: string, at: number, view: ConversationView): Promise<boolean> {
    if (this.conversationId !== id || this.running) return false;
    // A local lookup, not state.
    // eslint-disable-next-line svelte/prefer-svelte-reactivity
    const keys = new Map(this.messages.map((m) => [m.model.id, m.key]));
    // The changed message's place in the whole path.
    const from = this.earlier + at;
    let page = view.messages;
    let earlier = view.earlier;
    while (earlier > from && page[0]) {
      const older = await this.host.api.olderMessages(id, page[0].id, earlier - from);
      if (older.messages.length === 0) break;
      page = [...older.messages, ...page];
      earlier = older.earlier;
    }
    if (this.conversationId !== id || this.running) return false;
    const prefix = this.messages.slice(0, at);
    const joins = earlier <= from && (at === 0 || from - earlier === 0 || page[from - earlier - 1]?.id === prefix[at - 1]?.model.id);
    if (joins) {
      const tail = page.slice(from - earlier).map((m) => uiFromStored(m, keys, this.compactionRows));
      // The message shown in the changed one's place keeps its element (and the focus on its buttons).
      const replaced = this.messages[at];
      if (tail[0] && replaced && !tail.some((m) => m.key === replaced.key)) tail[0] = { ...tail[0], key: replaced.key };
      this.messages = [...prefix, ...tail];
    } else {
      // Not the path above it any more (changed elsewhere meanwhile): show the view as it is.
      this.messages = view.messages.map((m) => uiFromStored(m, keys, this.compactionRows));
      this.earlier = view.earlier;
    }
    this.title = view.conversation.title;
    // Another branch: its own compactions, read after the messages are shown.
    void this.refreshCompactions(id);
    return true;
  }

  /** Answers the budget pause the turn waits at; the card closes at once (`budgetResolved` confirms it). */
  async resolveBudget(choice: BudgetChoice): Promise<void> {
    const pause = this.budgetPause;
    if (!pause) return;
    this.budgetPause = null;
    try {
      await this.host.api.resolveBudget(pause.id, choice);
    } catch (e) {
      this.budgetPause = pause;
      this.host.toast(toIpcError(e));
    }
  }

  /** Stops the running turn (now, or as soon as `started` gives its message id). */
  async stop(): Promise<void> {
    const t = this.turn;
    if (!t || t.finished) return;
    this.stopping = true;
    if (!t.messageId) {
      t.stopRequested = true;
      return;
    }
    try {
      await this.host.api.stopTurn(t.messageId);
    } catch (e) {
      this.stopping = false;
      this.host.toast(toIpcError(e));
    }
  }

  private async runTurn(text: string, start: (h: TurnHandlers) => Promise<TurnStarted>, request?: SendRequest, place: TurnPlace | null = null, attachments: readonly Attachment[] = []): Promise<boolean> {
    this.host.turnStarting(this);
    const t: LiveTurn = {
      assistantKey: uid('m'),
      userKey: place?.questionKey ?? uid('m'),
      place,
      messageId: null,
      queue: [],
      budget: 0,
      scheduled: false,
      closed: false,
      finished: false,
      started: false,
      stopRequested: false,
    };
    this.turn = t;
    this.running = true;
    this.stopping = false;
    const question: UiMessage[] = place?.questionKey ? [] : [{ key: t.userKey, model: userMessage('', text, attachments) }];
    this.messages = [...this.messages, ...question, { key: t.assistantKey, model: pendingAssistant(), request }];
    const handlers: TurnHandlers = {
      onEvent: (e) => {
        t.queue.push(e);
        this.schedule(t);
      },
      onClose: () => {
        t.closed = true;
        this.schedule(t);
      },
    };
    try {
      const started = await start(handlers);
      t.messageId ??= started.messageId;
      if (this.conversationId === null && !t.finished) this.adopt(started.conversationId);
      if (t.stopRequested) await this.stop();
      return true;
    } catch (e) {
      const err = toIpcError(e);
      if (place && !t.started) {
        // Refused before it began (busy, not found): the view is as it was, nothing lost.
        t.queue = [];
        this.messages = place.restore;
        this.end(t, null);
      } else {
        this.flush(t, Infinity);
        this.end(t, err);
      }
      this.host.toast(err);
      return false;
    }
  }

  private schedule(t: LiveTurn): void {
    if (t.scheduled) return;
    t.scheduled = true;
    this.host.schedule(() => this.flush(t));
  }

  /**
   * Applies the queued events one frame can show (at most `budget` characters of text, see
   * `takeFrame`, `frameBudget`) as one model update, and leaves the rest for the next frame.
   */
  private flush(t: LiveTurn, budget?: number): void {
    t.scheduled = false;
    if (t.finished) return;
    t.budget = budget ?? frameBudget(t.queue, t.budget);
    const { now: events, rest } = takeFrame(t.queue, t.budget);
    t.queue = rest;
    if (rest.length === 0) t.budget = 0;
    if (events.length > 0) {
      let model = this.messages.find((m) => m.key === t.assistantKey)?.model ?? pendingAssistant();
      let userId: string | null = null;
      let done = false;
      for (const e of events) {
        switch (e.type) {
          case 'started':
            t.started = true;
            t.messageId = e.messageId;
            userId = e.userMessageId;
            if (this.conversationId === null) this.adopt(e.conversationId);
            if (t.stopRequested) void this.stop();
            break;
          case 'budgetPaused':
          case 'budgetResolved':
          case 'approvalRequested':
          case 'approvalResolved':
          case 'toolProgress': {
            const paused = nestedBudget(e);
            if (paused) {
              this.budgetPause = paused.event.type === 'budgetPaused' ? { ...paused.event, agent: paused.agent } : null;
              break;
            }
            // A sub-agent's calls ask the person here, in the chat that runs it.
            const asked = nestedApproval(e);
            if (asked?.event.type === 'approvalRequested') {
              const q = asked.event;
              this.host.requestApproval({ id: q.id, name: q.name, source: q.source, arguments: q.arguments, preview: q.preview, ...(q.egress ? { egress: q.egress } : {}), ...(asked.agent ? { agent: asked.agent } : {}), session: this });
            } else if (asked) {
              this.host.approvalResolved(asked.event.id);
            }
            break;
          }
          case 'context':
            this.context = { usedTokens: e.usedTokens, window: e.window, breakdown: e.breakdown, estimated: e.estimated, compactAt: this.context?.compactAt ?? 0.8 };
            break;
          case 'done':
            done = true;
            break;
          default:
            break;
        }
        model = reduce(model, e);
      }
      const answerVersions = t.place?.answerVersions;
      const userVersions = t.place?.userVersions;
      this.messages = this.messages.map((m) => {
        if (m.key === t.assistantKey) return { key: m.key, model, ...(model.id ? {} : { request: m.request }), ...(answerVersions && model.id ? { versions: [...answerVersions, model.id] } : {}) };
        if (userId !== null && m.key === t.userKey) return { ...m, model: { ...m.model, id: userId }, ...(userVersions ? { versions: [...userVersions, userId] } : {}) };
        return m;
      });
      if (done) {
        this.end(t, null);
        return;
      }
    }
    if (t.queue.length > 0) {
      this.schedule(t); // the rest of a burst, next frame
      return;
    }
    if (t.closed) {
      // The channel ended without `done`: keep what arrived, marked as interrupted.
      this.end(t, null, true);
      this.host.toast({ kind: 'internal', message: 'The connection to this answer was lost. The partial answer is kept.', retryable: true });
    }
  }

  private end(t: LiveTurn, error: IpcError | null, lost = false): void {
    if (t.finished) return;
    t.finished = true;
    if (error || lost) {
      this.messages = this.messages.map((m) => (m.key === t.assistantKey ? { ...m, model: interrupt(m.model, error ? { kind: error.kind, message: error.message } : null) } : m));
    }
    if (this.turn === t) this.turn = null;
    this.running = false;
    this.stopping = false;
    this.budgetPause = null;
    this.host.dropApprovals(this);
    this.host.turnEnded(this);
  }

  private adopt(conversationId: string): void {
    if (this.conversationId !== null) return;
    this.conversationId = conversationId;
    const first = this.messages.find((m) => m.model.role === 'user');
    if (first) this.title = first.model.content.slice(0, 60);
    this.host.adopted(this, conversationId);
  }
}
