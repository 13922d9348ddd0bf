// Generated from src-tauri's commands by src-tauri/tests/command_contract.rs. Do not edit.
// Regenerate: UPDATE_COMMANDS=1 cargo test -p switchboard-desktop --test command_contract
import type { AgentConfig, AgentsOverview, ApprovalChoice, Attachment, AttachmentPreview, BudgetChoice, CatalogueInfo, ChatEvent, ChatGrant, ChatInstructions, ChatSetup, ChatSetupChange, CommandToolConfig, Completion, CompletionRef, ConnectionReport, ConversationContext, ConversationImportFile, ConversationImportReport, ConversationSummary, ConversationUsage, ConversationView, DataInfo, DefinedConfig, DefinedToolInfo, DefinedToolsOverview, DetectedServer, ElicitationAction, ExportFormat, HttpToolConfig, ImportPreview, ImportSource, KeyInfo, KeyMode, KeychainStatus, LogLevel, McpEdited, McpOverview, McpPrompts, McpResourceUpdate, McpResources, McpServerInfo, MessagePage, MessageUsage, ModelDetails, ModelSpec, OpenApiImport, OpenApiWindowPreview, OpenApiWindowRequest, PickedAttachments, PromptMessages, ProviderInfo, ProviderProfile, ResourceTemplateInfo, SamplingMessage, SearchHit, SendRequest, ServerConfig, Settings, StoredCompaction, ToolInfo, Toolset, TryResult, TurnChoices, TurnStarted, UsageQuery, UsageReport } from './bindings';

/** What a turn's events arrive on (Tauri's `Channel`). */
export interface EventChannel<T> {
  onmessage: (message: T) => void;
}

/** Every command the shell registers: the arguments it reads and what it resolves with. */
export interface Commands {
  agents: { args: Record<string, never>; params: []; result: AgentsOverview };
  put_agent: { args: { agent: AgentConfig }; params: [agent: AgentConfig]; result: AgentsOverview };
  duplicate_agent: { args: { name: string; newName: string }; params: [name: string, newName: string]; result: AgentsOverview };
  remove_agent: { args: { name: string }; params: [name: string]; result: AgentsOverview };
  put_toolset: { args: { toolset: Toolset }; params: [toolset: Toolset]; result: AgentsOverview };
  remove_toolset: { args: { name: string }; params: [name: string]; result: AgentsOverview };
  answer_elicitation: { args: { requestId: string; action: ElicitationAction; content?: { [key: string]: unknown } | null }; params: [requestId: string, action: ElicitationAction, content?: { [key: string]: unknown } | null]; result: void };
  answer_sampling: { args: { requestId: string; approve: boolean; messages?: SamplingMessage[] | null }; params: [requestId: string, approve: boolean, messages?: SamplingMessage[] | null]; result: void };
  attach_pick: { args: Record<string, never>; params: []; result: PickedAttachments };
  upload_begin: { args: { name: string; size: number }; params: [name: string, size: number]; result: string };
  upload_chunk: { args: { id: string; data: string }; params: [id: string, data: string]; result: void };
  upload_finish: { args: { id: string }; params: [id: string]; result: Attachment };
  upload_cancel: { args: { id: string }; params: [id: string]; result: void };
  attachment_preview: { args: { id: string }; params: [id: string]; result: AttachmentPreview };
  attachment_thumbnail: { args: { id: string }; params: [id: string]; result: string | null };
  list_conversations: { args: Record<string, never>; params: []; result: ConversationSummary[] };
  search_conversations: { args: { query: string }; params: [query: string]; result: ConversationSummary[] };
  search_messages: { args: { query: string; limit?: number | null }; params: [query: string, limit?: number | null]; result: SearchHit[] };
  open_conversation: { args: { id: string }; params: [id: string]; result: ConversationView };
  older_messages: { args: { id: string; before: string; limit: number }; params: [id: string, before: string, limit: number]; result: MessagePage };
  rename_conversation: { args: { id: string; title: string }; params: [id: string, title: string]; result: void };
  generate_title: { args: { id: string }; params: [id: string]; result: string };
  chat_instructions: { args: { id: string }; params: [id: string]; result: ChatInstructions };
  conversation_context: { args: { id: string; provider?: string | null; model?: string | null }; params: [id: string, provider?: string | null, model?: string | null]; result: ConversationContext };
  set_chat_instructions: { args: { id: string; text: string }; params: [id: string, text: string]; result: void };
  set_chat_setup: { args: { id: string; change: ChatSetupChange }; params: [id: string, change: ChatSetupChange]; result: ChatSetup };
  chat_grants: { args: { id: string }; params: [id: string]; result: ChatGrant[] };
  revoke_chat_grant: { args: { id: string; grant: ChatGrant }; params: [id: string, grant: ChatGrant]; result: ChatGrant[] };
  set_conversation_pinned: { args: { id: string; pinned: boolean }; params: [id: string, pinned: boolean]; result: void };
  set_conversation_archived: { args: { id: string; archived: boolean }; params: [id: string, archived: boolean]; result: void };
  compact_conversation: { args: { id: string }; params: [id: string]; result: StoredCompaction };
  list_compactions: { args: { id: string }; params: [id: string]; result: StoredCompaction[] };
  get_compaction: { args: { id: string; compactionId: string }; params: [id: string, compactionId: string]; result: StoredCompaction };
  set_compaction_undone: { args: { id: string; compactionId: string; undone: boolean }; params: [id: string, compactionId: string, undone: boolean]; result: void };
  set_message_pinned: { args: { id: string; messageId: string; pinned: boolean }; params: [id: string, messageId: string, pinned: boolean]; result: void };
  delete_conversation: { args: { id: string }; params: [id: string]; result: void };
  switch_version: { args: { conversationId: string; messageId: string }; params: [conversationId: string, messageId: string]; result: ConversationView };
  delete_version: { args: { conversationId: string; messageId: string }; params: [conversationId: string, messageId: string]; result: ConversationView };
  branch_conversation: { args: { conversationId: string; messageId: string }; params: [conversationId: string, messageId: string]; result: string };
  message_markdown: { args: { conversationId: string; messageId: string }; params: [conversationId: string, messageId: string]; result: string };
  data_info: { args: Record<string, never>; params: []; result: DataInfo };
  export_all: { args: Record<string, never>; params: []; result: string };
  export_conversation: { args: { id: string; format: ExportFormat }; params: [id: string, format: ExportFormat]; result: string };
  preview_conversation_import: { args: Record<string, never>; params: []; result: ConversationImportFile };
  import_conversations: { args: { pick: string }; params: [pick: string]; result: ConversationImportReport };
  open_exports_folder: { args: Record<string, never>; params: []; result: void };
  open_url: { args: { url: string }; params: [url: string]; result: void };
  defined_tools: { args: Record<string, never>; params: []; result: DefinedToolsOverview };
  defined_tool_config: { args: { name: string }; params: [name: string]; result: DefinedConfig };
  add_http_tool: { args: { config: HttpToolConfig }; params: [config: HttpToolConfig]; result: DefinedToolInfo };
  add_command_tool: { args: { config: CommandToolConfig }; params: [config: CommandToolConfig]; result: DefinedToolInfo };
  approve_defined_tool: { args: { name: string }; params: [name: string]; result: DefinedToolInfo };
  remove_defined_tool: { args: { name: string }; params: [name: string]; result: DefinedToolsOverview };
  try_http_tool: { args: { name: string; args: { [key: string]: unknown } }; params: [name: string, args: { [key: string]: unknown }]; result: TryResult };
  preview_openapi: { args: { request: OpenApiWindowRequest }; params: [request: OpenApiWindowRequest]; result: OpenApiWindowPreview };
  import_openapi: { args: { request: OpenApiWindowRequest }; params: [request: OpenApiWindowRequest]; result: OpenApiImport };
  list_keys: { args: Record<string, never>; params: []; result: KeyInfo[] };
  set_key: { args: { name: string; value: string }; params: [name: string, value: string]; result: KeyInfo };
  delete_key: { args: { name: string }; params: [name: string]; result: KeyInfo };
  keychain_status: { args: Record<string, never>; params: []; result: KeychainStatus };
  use_key_fallback: { args: { mode: KeyMode }; params: [mode: KeyMode]; result: KeychainStatus };
  mcp_servers: { args: Record<string, never>; params: []; result: McpOverview };
  mcp_add: { args: { name: string; config: ServerConfig }; params: [name: string, config: ServerConfig]; result: McpServerInfo };
  mcp_edit: { args: { name: string; newName: string; config: ServerConfig }; params: [name: string, newName: string, config: ServerConfig]; result: McpEdited };
  mcp_remove: { args: { name: string }; params: [name: string]; result: McpOverview };
  mcp_set_enabled: { args: { name: string; enabled: boolean }; params: [name: string, enabled: boolean]; result: McpServerInfo };
  mcp_approve: { args: { name: string }; params: [name: string]; result: McpServerInfo };
  mcp_restart: { args: { name: string }; params: [name: string]; result: McpServerInfo };
  mcp_approve_tools: { args: { name: string }; params: [name: string]; result: McpServerInfo };
  mcp_sign_in: { args: { name: string }; params: [name: string]; result: McpServerInfo };
  mcp_sign_out: { args: { name: string }; params: [name: string]; result: McpServerInfo };
  mcp_import_sources: { args: Record<string, never>; params: []; result: ImportSource[] };
  mcp_import_preview: { args: { app: string }; params: [app: string]; result: ImportPreview };
  mcp_import: { args: { app: string }; params: [app: string]; result: ImportPreview };
  mcp_paste_preview: { args: { text: string }; params: [text: string]; result: ImportPreview };
  mcp_paste: { args: { text: string }; params: [text: string]; result: ImportPreview };
  mcp_prompts: { args: { server: string }; params: [server: string]; result: McpPrompts };
  mcp_get_prompt: { args: { server: string; name: string; args: { [key: string]: string } }; params: [server: string, name: string, args: { [key: string]: string }]; result: PromptMessages };
  mcp_resources: { args: { server: string }; params: [server: string]; result: McpResources };
  mcp_resource_templates: { args: { server: string }; params: [server: string]; result: ResourceTemplateInfo[] };
  mcp_expand_template: { args: { uriTemplate: string; values: { [key: string]: string } }; params: [uriTemplate: string, values: { [key: string]: string }]; result: string };
  mcp_complete: { args: { server: string; reference: CompletionRef; argument: string; value: string; context: { [key: string]: string } }; params: [server: string, reference: CompletionRef, argument: string, value: string, context: { [key: string]: string }]; result: Completion };
  mcp_attach_resource: { args: { server: string; uri: string }; params: [server: string, uri: string]; result: Attachment };
  mcp_resource_updates: { args: Record<string, never>; params: []; result: McpResourceUpdate[] };
  mcp_set_log_level: { args: { server: string; level: LogLevel }; params: [server: string, level: LogLevel]; result: McpServerInfo };
  list_providers: { args: Record<string, never>; params: []; result: ProviderInfo[] };
  list_models: { args: { provider?: string | null }; params: [provider?: string | null]; result: string[] };
  describe_models: { args: { provider: string; models: string[] }; params: [provider: string, models: string[]]; result: ModelDetails[] };
  catalogue_spec: { args: { kind: string; baseUrl: string; model: string }; params: [kind: string, baseUrl: string, model: string]; result: ModelSpec | null };
  model_catalogue: { args: Record<string, never>; params: []; result: CatalogueInfo };
  refresh_model_catalogue: { args: Record<string, never>; params: []; result: CatalogueInfo };
  detect_local_servers: { args: Record<string, never>; params: []; result: DetectedServer[] };
  test_provider: { args: { provider?: string | null }; params: [provider?: string | null]; result: ConnectionReport };
  add_provider: { args: { profile: ProviderProfile; makeDefault: boolean }; params: [profile: ProviderProfile, makeDefault: boolean]; result: ProviderInfo[] };
  remove_provider: { args: { name: string }; params: [name: string]; result: ProviderInfo[] };
  refused_call: { args: { command: string; reason: string }; params: [command: string, reason: string]; result: void };
  mcp_roots: { args: { server?: string | null }; params: [server?: string | null]; result: string[] };
  mcp_add_root: { args: { server?: string | null }; params: [server?: string | null]; result: string[] };
  mcp_remove_root: { args: { server?: string | null; path: string }; params: [server: string | null, path: string]; result: string[] };
  get_settings: { args: Record<string, never>; params: []; result: Settings };
  update_settings: { args: { settings: Settings }; params: [settings: Settings]; result: Settings };
  list_tools: { args: { conversationId?: string | null; agent?: string | null }; params: [conversationId?: string | null, agent?: string | null]; result: ToolInfo[] };
  set_chat_tool_disabled: { args: { conversationId: string; name: string; disabled: boolean }; params: [conversationId: string, name: string, disabled: boolean]; result: void };
  set_chat_tools_disabled: { args: { conversationId: string; names: string[]; disabled: boolean }; params: [conversationId: string, names: string[], disabled: boolean]; result: void };
  send_message: { args: { request: SendRequest; onEvent: EventChannel<ChatEvent> }; params: [request: SendRequest, onEvent: EventChannel<ChatEvent>]; result: TurnStarted };
  stop_turn: { args: { messageId: string }; params: [messageId: string]; result: boolean };
  regenerate: { args: { conversationId: string; messageId?: string | null; choices?: TurnChoices | null; onEvent: EventChannel<ChatEvent> }; params: [conversationId: string, messageId: string | null, choices: TurnChoices | null, onEvent: EventChannel<ChatEvent>]; result: TurnStarted };
  edit_message: { args: { conversationId: string; messageId: string; text: string; choices?: TurnChoices | null; onEvent: EventChannel<ChatEvent> }; params: [conversationId: string, messageId: string, text: string, choices: TurnChoices | null, onEvent: EventChannel<ChatEvent>]; result: TurnStarted };
  resolve_budget: { args: { pauseId: string; choice: BudgetChoice }; params: [pauseId: string, choice: BudgetChoice]; result: void };
  resolve_approval: { args: { callId: string; choice: ApprovalChoice }; params: [callId: string, choice: ApprovalChoice]; result: void };
  message_usage: { args: { messageId: string }; params: [messageId: string]; result: MessageUsage };
  conversation_usage: { args: { conversationId: string }; params: [conversationId: string]; result: ConversationUsage };
  usage_report: { args: { query: UsageQuery }; params: [query: UsageQuery]; result: UsageReport };
}

export type CommandName = keyof Commands;

/** Every command and its argument keys, in declaration order (the order of `params`). */
export const COMMANDS = {
  agents: [],
  put_agent: ['agent'],
  duplicate_agent: ['name', 'newName'],
  remove_agent: ['name'],
  put_toolset: ['toolset'],
  remove_toolset: ['name'],
  answer_elicitation: ['requestId', 'action', 'content'],
  answer_sampling: ['requestId', 'approve', 'messages'],
  attach_pick: [],
  upload_begin: ['name', 'size'],
  upload_chunk: ['id', 'data'],
  upload_finish: ['id'],
  upload_cancel: ['id'],
  attachment_preview: ['id'],
  attachment_thumbnail: ['id'],
  list_conversations: [],
  search_conversations: ['query'],
  search_messages: ['query', 'limit'],
  open_conversation: ['id'],
  older_messages: ['id', 'before', 'limit'],
  rename_conversation: ['id', 'title'],
  generate_title: ['id'],
  chat_instructions: ['id'],
  conversation_context: ['id', 'provider', 'model'],
  set_chat_instructions: ['id', 'text'],
  set_chat_setup: ['id', 'change'],
  chat_grants: ['id'],
  revoke_chat_grant: ['id', 'grant'],
  set_conversation_pinned: ['id', 'pinned'],
  set_conversation_archived: ['id', 'archived'],
  compact_conversation: ['id'],
  list_compactions: ['id'],
  get_compaction: ['id', 'compactionId'],
  set_compaction_undone: ['id', 'compactionId', 'undone'],
  set_message_pinned: ['id', 'messageId', 'pinned'],
  delete_conversation: ['id'],
  switch_version: ['conversationId', 'messageId'],
  delete_version: ['conversationId', 'messageId'],
  branch_conversation: ['conversationId', 'messageId'],
  message_markdown: ['conversationId', 'messageId'],
  data_info: [],
  export_all: [],
  export_conversation: ['id', 'format'],
  preview_conversation_import: [],
  import_conversations: ['pick'],
  open_exports_folder: [],
  open_url: ['url'],
  defined_tools: [],
  defined_tool_config: ['name'],
  add_http_tool: ['config'],
  add_command_tool: ['config'],
  approve_defined_tool: ['name'],
  remove_defined_tool: ['name'],
  try_http_tool: ['name', 'args'],
  preview_openapi: ['request'],
  import_openapi: ['request'],
  list_keys: [],
  set_key: ['name', 'value'],
  delete_key: ['name'],
  keychain_status: [],
  use_key_fallback: ['mode'],
  mcp_servers: [],
  mcp_add: ['name', 'config'],
  mcp_edit: ['name', 'newName', 'config'],
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
  mcp_paste_preview: ['text'],
  mcp_paste: ['text'],
  mcp_prompts: ['server'],
  mcp_get_prompt: ['server', 'name', 'args'],
  mcp_resources: ['server'],
  mcp_resource_templates: ['server'],
  mcp_expand_template: ['uriTemplate', 'values'],
  mcp_complete: ['server', 'reference', 'argument', 'value', 'context'],
  mcp_attach_resource: ['server', 'uri'],
  mcp_resource_updates: [],
  mcp_set_log_level: ['server', 'level'],
  list_providers: [],
  list_models: ['provider'],
  describe_models: ['provider', 'models'],
  catalogue_spec: ['kind', 'baseUrl', 'model'],
  model_catalogue: [],
  refresh_model_catalogue: [],
  detect_local_servers: [],
  test_provider: ['provider'],
  add_provider: ['profile', 'makeDefault'],
  remove_provider: ['name'],
  refused_call: ['command', 'reason'],
  mcp_roots: ['server'],
  mcp_add_root: ['server'],
  mcp_remove_root: ['server', 'path'],
  get_settings: [],
  update_settings: ['settings'],
  list_tools: ['conversationId', 'agent'],
  set_chat_tool_disabled: ['conversationId', 'name', 'disabled'],
  set_chat_tools_disabled: ['conversationId', 'names', 'disabled'],
  send_message: ['request', 'onEvent'],
  stop_turn: ['messageId'],
  regenerate: ['conversationId', 'messageId', 'choices', 'onEvent'],
  edit_message: ['conversationId', 'messageId', 'text', 'choices', 'onEvent'],
  resolve_budget: ['pauseId', 'choice'],
  resolve_approval: ['callId', 'choice'],
  message_usage: ['messageId'],
  conversation_usage: ['conversationId'],
  usage_report: ['query'],
} as const satisfies { [C in CommandName]: readonly (keyof Commands[C]['args'])[] };

/** The argument that carries a turn's events, for the commands that have one. */
export const CHANNEL_ARGS = {
  send_message: 'onEvent',
  regenerate: 'onEvent',
  edit_message: 'onEvent',
} as const satisfies { [C in CommandName]?: keyof Commands[C]['args'] };
