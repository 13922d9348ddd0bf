/**
 * What the UI needs from the shell, as one interface: the Tauri implementation lives in api.ts, a
 * dev/test fake in fake.ts. This file imports nothing from Tauri.
 */
import type {
  AgentConfig,
  AgentsOverview,
  ApprovalChoice,
  ChatEvent,
  ChatInstructions,
  ConnectionReport,
  ConversationSummary,
  ConversationView,
  CommandToolConfig,
  DefinedConfig,
  DefinedToolInfo,
  DefinedToolsOverview,
  HttpToolConfig,
  JsonValue,
  MessagePage,
  OpenApiImport,
  OpenApiPreview,
  OpenApiRequest,
  DataInfo,
  DetectedServer,
  ExportFormat,
  ImportPreview,
  ImportSource,
  KeychainStatus,
  KeyInfo,
  KeyMode,
  McpOverview,
  McpServerInfo,
  ProviderInfo,
  ProviderProfile,
  SendRequest,
  ServerConfig,
  Settings,
  ToolInfo,
  Toolset,
  TryResult,
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
  /**
   * Asks the chat's model for a short title (2 to 6 words) and stores it, unless the settings say
   * `chats.titles: "firstLine"` or the person renamed the chat; resolves with the title it has after.
   */
  generateTitle(id: string): Promise<string>;
  /** A chat's instructions: the custom ones every chat gets, its own, and what its last question was sent with. */
  chatInstructions(id: string): Promise<ChatInstructions>;
  /** Sets a chat's own instructions (blank removes them); its next question is sent with them. */
  setChatInstructions(id: string, text: string): Promise<void>;
  /** Pinned conversations come first in the list. */
  setConversationPinned(id: string, pinned: boolean): Promise<void>;
  /** Archived conversations stay out of the main list (still searchable and openable); archiving unpins. */
  setConversationArchived(id: string, archived: boolean): Promise<void>;
  deleteConversation(id: string): Promise<void>;
  sendMessage(request: SendRequest, handlers: TurnHandlers): Promise<TurnStarted>;
  stopTurn(messageId: string): Promise<boolean>;
  regenerate(conversationId: string, handlers: TurnHandlers): Promise<TurnStarted>;
  /** Every tool with its state; a new chat (no id) with `agent` gets the agent's tools. */
  listTools(conversationId: string | null, agent?: string | null): Promise<ToolInfo[]>;
  setChatToolDisabled(conversationId: string, name: string, disabled: boolean): Promise<void>;
  listProviders(): Promise<ProviderInfo[]>;
  listModels(provider: string): Promise<string[]>;
  /**
   * Tests a saved profile (null: the default one): lists its models and makes one tiny request.
   * Resolves with what works and what does not; rejects only when the profile cannot be used at all.
   */
  testProvider(provider: string | null): Promise<ConnectionReport>;
  /** Ollama and LM Studio answering on their default ports on this computer. */
  detectLocalServers(): Promise<DetectedServer[]>;
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

  // ---- MCP servers ---------------------------------------------------------------------------

  /** The config file, its problem if any, and every server with its status. */
  mcpServers(): Promise<McpOverview>;
  /**
   * Adds a server to the config file. A local command runs only once the person agrees in a native
   * dialog the page cannot see; if they refuse, its status is `needsApproval`.
   */
  mcpAdd(name: string, config: ServerConfig): Promise<McpServerInfo>;
  mcpRemove(name: string): Promise<McpOverview>;
  mcpSetEnabled(name: string, enabled: boolean): Promise<McpServerInfo>;
  /** Shows the command line in a native dialog and runs it if the person agrees. */
  mcpApprove(name: string): Promise<McpServerInfo>;
  mcpRestart(name: string): Promise<McpServerInfo>;
  /** Lists the changed tools in a native dialog; rejects (kind "config") if the person refuses. */
  mcpApproveTools(name: string): Promise<McpServerInfo>;
  /** Opens the server's sign-in page in the browser; resolves when the person finished there. */
  mcpSignIn(name: string): Promise<McpServerInfo>;
  /** Forgets the server's sign-in. */
  mcpSignOut(name: string): Promise<McpServerInfo>;
  /** Claude Desktop and Cursor config files that exist. */
  mcpImportSources(): Promise<ImportSource[]>;
  mcpImportPreview(app: string): Promise<ImportPreview>;
  mcpImport(app: string): Promise<ImportPreview>;

  // ---- tools people define without code (tools.json) ------------------------------------------

  /** The tools file, its problem if any, and every tool with where it stands. */
  definedTools(): Promise<DefinedToolsOverview>;
  /** One tool's whole definition, to edit it. */
  definedToolConfig(name: string): Promise<DefinedConfig>;
  /**
   * Adds or replaces an HTTP tool (by name); rejects (kind "config") with what to fix. One that sends
   * a key is offered once the person agrees in a native dialog; if they refuse it waits in `needsApproval`.
   */
  addHttpTool(config: HttpToolConfig): Promise<DefinedToolInfo>;
  /** Adds or replaces a command tool; it runs only once the person agrees to its command line in a native dialog. */
  addCommandTool(config: CommandToolConfig): Promise<DefinedToolInfo>;
  /** Shows what a waiting tool would be allowed in a native dialog; rejects (kind "cancelled") if the person refuses. */
  approveDefinedTool(name: string): Promise<DefinedToolInfo>;
  /** Removes a tool from the file; resolves with what is left. */
  removeDefinedTool(name: string): Promise<DefinedToolsOverview>;
  /** Calls an HTTP tool once with `args`: the exact request (keys masked) and the response or the error. */
  tryHttpTool(name: string, args: Record<string, JsonValue>): Promise<TryResult>;
  /** Reads an OpenAPI document (a file path or an http(s) URL) and converts it without keeping anything. */
  previewOpenApi(request: OpenApiRequest): Promise<OpenApiPreview>;
  /**
   * Imports an OpenAPI document: a copy is kept and its chosen operations become tools. Keys it sends
   * are offered once the person agrees in a native dialog; if they refuse it waits in `needsApproval`.
   */
  importOpenApi(request: OpenApiRequest): Promise<OpenApiImport>;

  // ---- agents and toolsets (agents.json) --------------------------------------------------------

  /** Every agent and toolset, with what is wrong with each now. */
  agents(): Promise<AgentsOverview>;
  /** Adds or replaces an agent (by name); rejects (kind "config") with what to fix. */
  putAgent(agent: AgentConfig): Promise<AgentsOverview>;
  duplicateAgent(name: string, newName: string): Promise<AgentsOverview>;
  removeAgent(name: string): Promise<AgentsOverview>;
  /** Adds or replaces a toolset (by name). */
  putToolset(toolset: Toolset): Promise<AgentsOverview>;
  /** Removes a toolset; rejects (kind "config") while an agent has it. */
  removeToolset(name: string): Promise<AgentsOverview>;

  // ---- data ------------------------------------------------------------------------------------

  dataInfo(): Promise<DataInfo>;
  /** Writes every conversation to a JSON file; resolves with its path. */
  exportAll(): Promise<string>;
  /** Writes one conversation (Markdown or JSON) to the data folder's `exports`; resolves with its path. */
  exportConversation(id: string, format: ExportFormat): Promise<string>;
  /** Opens the data folder's `exports` in the file manager. */
  openExportsFolder(): Promise<void>;
}
