/**
 * What the UI needs from the shell, as one interface: the Tauri implementation lives in api.ts, a
 * dev/test fake in fake.ts. This file imports nothing from Tauri.
 */
import type {
  ApprovalChoice,
  ChatEvent,
  ConversationSummary,
  ConversationView,
  MessagePage,
  DataInfo,
  KeychainStatus,
  KeyInfo,
  KeyMode,
  ProviderInfo,
  ProviderProfile,
  SendRequest,
  Settings,
  ToolInfo,
  TurnStarted,
} from './bindings';

/** Where one turn's events go. */
export interface TurnHandlers {
  /** Each event, in order: `started` first, `done` last. */
  onEvent(event: ChatEvent): void;
  /** The event channel ended (the shell dropped it). After `done` this is expected; before, the turn was lost. */
  onClose?(): void;
}

export interface Backend {
  listConversations(): Promise<ConversationSummary[]>;
  searchConversations(query: string): Promise<ConversationSummary[]>;
  /** The conversation and its last messages (`earlier` counts the ones before them). */
  openConversation(id: string): Promise<ConversationView>;
  /** Up to `limit` messages just before the message `before`, oldest first. */
  olderMessages(id: string, before: string, limit: number): Promise<MessagePage>;
  renameConversation(id: string, title: string): Promise<void>;
  deleteConversation(id: string): Promise<void>;
  sendMessage(request: SendRequest, handlers: TurnHandlers): Promise<TurnStarted>;
  stopTurn(messageId: string): Promise<boolean>;
  regenerate(conversationId: string, handlers: TurnHandlers): Promise<TurnStarted>;
  listTools(conversationId: string | null): Promise<ToolInfo[]>;
  setChatToolDisabled(conversationId: string, name: string, disabled: boolean): Promise<void>;
  listProviders(): Promise<ProviderInfo[]>;
  listModels(provider: string): Promise<string[]>;
  resolveApproval(callId: string, choice: ApprovalChoice): Promise<void>;
  /** Opens an allowed URL in the person's browser (never in the app's webview). */
  openUrl(url: string): Promise<void>;

  // ---- settings ------------------------------------------------------------------------------

  getSettings(): Promise<Settings>;
  /** Replaces every setting; resolves with what was stored, rejects (kind "config") on invalid input. */
  updateSettings(settings: Settings): Promise<Settings>;
  /** Adds or replaces a profile (by name); resolves with every profile. */
  addProvider(profile: ProviderProfile, makeDefault: boolean): Promise<ProviderInfo[]>;
  /** Removes a profile and its key; resolves with every profile left. */
  removeProvider(name: string): Promise<ProviderInfo[]>;

  // ---- keys: set, replaced and deleted, never read back ------------------------------------------

  listKeys(): Promise<KeyInfo[]>;
  /** The value goes to the key store and nowhere else; the answer has only `isSet` and `last4`. */
  setKey(name: string, value: string): Promise<KeyInfo>;
  deleteKey(name: string): Promise<KeyInfo>;
  keychainStatus(): Promise<KeychainStatus>;
  /** The person's choice when the keychain cannot be used ("keychain" tries it again). */
  useKeyFallback(mode: KeyMode): Promise<KeychainStatus>;

  // ---- data ------------------------------------------------------------------------------------

  dataInfo(): Promise<DataInfo>;
  /** Writes every conversation to a JSON file; resolves with its path. */
  exportAll(): Promise<string>;
}
