/**
 * What the UI needs from the shell, as one interface: the Tauri implementation lives in api.ts, a
 * dev/test fake in fake.ts. This file imports nothing from Tauri.
 */
import type {
  ApprovalChoice,
  ChatEvent,
  ConversationSummary,
  ConversationView,
  ProviderInfo,
  SendRequest,
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
  openConversation(id: string): Promise<ConversationView>;
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
}
