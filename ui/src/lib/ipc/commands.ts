// Generated from src-tauri's commands by src-tauri/tests/command_contract.rs. Do not edit.
// Regenerate: UPDATE_COMMANDS=1 cargo test -p switchboard-desktop --test command_contract
import type { AgentConfig, AgentsOverview, ApprovalChoice, ChatEvent, ChatInstructions, CommandToolConfig, ConnectionReport, ConversationSummary, ConversationView, DataInfo, DefinedConfig, DefinedToolInfo, DefinedToolsOverview, DetectedServer, ExportFormat, HttpToolConfig, ImportPreview, ImportSource, KeyInfo, KeyMode, KeychainStatus, McpOverview, McpServerInfo, MessagePage, OpenApiImport, OpenApiPreview, OpenApiRequest, ProviderInfo, ProviderProfile, SendRequest, ServerConfig, Settings, ToolInfo, Toolset, TryResult, TurnChoices, TurnStarted } from './bindings';

/** What a turn's events arrive on (Tauri's `Channel`). */
export interface EventChannel<T> {
  onmessage: (message: T) => void;
}

/** Every command the shell registers: the arguments it reads and what it resolves with. */
export interface Commands {
  list_conversations: { args: Record<string, never>; result: ConversationSummary[] };
  search_conversations: { args: { query: string }; result: ConversationSummary[] };
  open_conversation: { args: { id: string }; result: ConversationView };
  older_messages: { args: { id: string; before: string; limit: number }; result: MessagePage };
  rename_conversation: { args: { id: string; title: string }; result: void };
  generate_title: { args: { id: string }; result: string };
  chat_instructions: { args: { id: string }; result: ChatInstructions };
  set_chat_instructions: { args: { id: string; text: string }; result: void };
  set_conversation_pinned: { args: { id: string; pinned: boolean }; result: void };
  set_conversation_archived: { args: { id: string; archived: boolean }; result: void };
  delete_conversation: { args: { id: string }; result: void };
  send_message: { args: { request: SendRequest; onEvent: EventChannel<ChatEvent> }; result: TurnStarted };
  stop_turn: { args: { messageId: string }; result: boolean };
  regenerate: { args: { conversationId: string; choices?: TurnChoices | null; onEvent: EventChannel<ChatEvent> }; result: TurnStarted };
  list_tools: { args: { conversationId?: string | null; agent?: string | null }; result: ToolInfo[] };
  set_chat_tool_disabled: { args: { conversationId: string; name: string; disabled: boolean }; result: void };
  list_providers: { args: Record<string, never>; result: ProviderInfo[] };
  list_models: { args: { provider?: string | null }; result: string[] };
  detect_local_servers: { args: Record<string, never>; result: DetectedServer[] };
  test_provider: { args: { provider?: string | null }; result: ConnectionReport };
  resolve_approval: { args: { callId: string; choice: ApprovalChoice }; result: void };
  get_settings: { args: Record<string, never>; result: Settings };
  update_settings: { args: { settings: Settings }; result: Settings };
  add_provider: { args: { profile: ProviderProfile; makeDefault: boolean }; result: ProviderInfo[] };
  remove_provider: { args: { name: string }; result: ProviderInfo[] };
  mcp_servers: { args: Record<string, never>; result: McpOverview };
  mcp_add: { args: { name: string; config: ServerConfig }; result: McpServerInfo };
  mcp_remove: { args: { name: string }; result: McpOverview };
  mcp_set_enabled: { args: { name: string; enabled: boolean }; result: McpServerInfo };
  mcp_approve: { args: { name: string }; result: McpServerInfo };
  mcp_restart: { args: { name: string }; result: McpServerInfo };
  mcp_approve_tools: { args: { name: string }; result: McpServerInfo };
  mcp_sign_in: { args: { name: string }; result: McpServerInfo };
  mcp_sign_out: { args: { name: string }; result: McpServerInfo };
  mcp_import_sources: { args: Record<string, never>; result: ImportSource[] };
  mcp_import_preview: { args: { app: string }; result: ImportPreview };
  mcp_import: { args: { app: string }; result: ImportPreview };
  defined_tools: { args: Record<string, never>; result: DefinedToolsOverview };
  defined_tool_config: { args: { name: string }; result: DefinedConfig };
  add_http_tool: { args: { config: HttpToolConfig }; result: DefinedToolInfo };
  add_command_tool: { args: { config: CommandToolConfig }; result: DefinedToolInfo };
  approve_defined_tool: { args: { name: string }; result: DefinedToolInfo };
  remove_defined_tool: { args: { name: string }; result: DefinedToolsOverview };
  agents: { args: Record<string, never>; result: AgentsOverview };
  put_agent: { args: { agent: AgentConfig }; result: AgentsOverview };
  duplicate_agent: { args: { name: string; newName: string }; result: AgentsOverview };
  remove_agent: { args: { name: string }; result: AgentsOverview };
  put_toolset: { args: { toolset: Toolset }; result: AgentsOverview };
  remove_toolset: { args: { name: string }; result: AgentsOverview };
  try_http_tool: { args: { name: string; args: { [key: string]: unknown } }; result: TryResult };
  preview_openapi: { args: { request: OpenApiRequest }; result: OpenApiPreview };
  import_openapi: { args: { request: OpenApiRequest }; result: OpenApiImport };
  list_keys: { args: Record<string, never>; result: KeyInfo[] };
  set_key: { args: { name: string; value: string }; result: KeyInfo };
  delete_key: { args: { name: string }; result: KeyInfo };
  keychain_status: { args: Record<string, never>; result: KeychainStatus };
  use_key_fallback: { args: { mode: KeyMode }; result: KeychainStatus };
  open_url: { args: { url: string }; result: void };
  data_info: { args: Record<string, never>; result: DataInfo };
  export_all: { args: Record<string, never>; result: string };
  export_conversation: { args: { id: string; format: ExportFormat }; result: string };
  open_exports_folder: { args: Record<string, never>; result: void };
}

export type CommandName = keyof Commands;

/** Every command and its argument keys. */
export const COMMANDS = {
  list_conversations: [],
  search_conversations: ['query'],
  open_conversation: ['id'],
  older_messages: ['id', 'before', 'limit'],
  rename_conversation: ['id', 'title'],
  generate_title: ['id'],
  chat_instructions: ['id'],
  set_chat_instructions: ['id', 'text'],
  set_conversation_pinned: ['id', 'pinned'],
  set_conversation_archived: ['id', 'archived'],
  delete_conversation: ['id'],
  send_message: ['request', 'onEvent'],
  stop_turn: ['messageId'],
  regenerate: ['conversationId', 'choices', 'onEvent'],
  list_tools: ['conversationId', 'agent'],
  set_chat_tool_disabled: ['conversationId', 'name', 'disabled'],
  list_providers: [],
  list_models: ['provider'],
  detect_local_servers: [],
  test_provider: ['provider'],
  resolve_approval: ['callId', 'choice'],
  get_settings: [],
  update_settings: ['settings'],
  add_provider: ['profile', 'makeDefault'],
  remove_provider: ['name'],
  mcp_servers: [],
  mcp_add: ['name', 'config'],
  mcp_remove: ['name'],
  mcp_set_enabled: ['name', 'enabled'],
  mcp_approve: ['name'],
  mcp_restart: ['name'],
  mcp_approve_tools: ['name'],
  mcp_sign_in: ['name'],
  mcp_sign_out: ['name'],
  mcp_import_sources: [],
  mcp_import_preview: ['app'],
  mcp_import: ['app'],
  defined_tools: [],
  defined_tool_config: ['name'],
  add_http_tool: ['config'],
  add_command_tool: ['config'],
  approve_defined_tool: ['name'],
  remove_defined_tool: ['name'],
  agents: [],
  put_agent: ['agent'],
  duplicate_agent: ['name', 'newName'],
  remove_agent: ['name'],
  put_toolset: ['toolset'],
  remove_toolset: ['name'],
  try_http_tool: ['name', 'args'],
  preview_openapi: ['request'],
  import_openapi: ['request'],
  list_keys: [],
  set_key: ['name', 'value'],
  delete_key: ['name'],
  keychain_status: [],
  use_key_fallback: ['mode'],
  open_url: ['url'],
  data_info: [],
  export_all: [],
  export_conversation: ['id', 'format'],
  open_exports_folder: [],
} as const satisfies { [C in CommandName]: readonly (keyof Commands[C]['args'])[] };
