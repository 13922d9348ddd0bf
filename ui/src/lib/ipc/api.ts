/**
 * The only module that talks to the Tauri shell (and the only importer of @tauri-apps/*). Every
 * command of the IPC contract is one typed method; rejections are normalized to `IpcError`.
 * Outside Tauri (plain `npm run dev` in a browser) a scripted in-memory fake stands in; tests swap
 * in their own backend with `setBackend`.
 */
import { Channel, invoke, type InvokeArgs } from '@tauri-apps/api/core';
import type { ChatEvent } from './bindings';
import type { CommandName, Commands } from './commands';
import type { Backend, TurnHandlers } from './backend';
import { toIpcError } from './errors';
import { isAllowedUrl } from '../markdown/links';

export type { Backend, TurnHandlers } from './backend';

/**
 * A Channel for one turn. Tauri sends an end marker when the Rust side drops the channel and then
 * calls the channel's (private) `cleanupCallback`; wrapping it is how the UI learns that the stream
 * ended, so a turn whose channel closes without `done` keeps its partial answer as interrupted.
 */
function channelFor(handlers: TurnHandlers): Channel<ChatEvent> {
  const ch = new Channel<ChatEvent>();
  ch.onmessage = (event) => handlers.onEvent(event);
  const inner = ch as unknown as { cleanupCallback?: () => void };
  const cleanup = inner.cleanupCallback;
  if (typeof cleanup === 'function') {
    inner.cleanupCallback = () => {
      cleanup.call(ch);
      handlers.onClose?.();
    };
  }
  return ch;
}

/**
 * Invokes a command by the names the shell declares (`commands.ts` is generated from its source):
 * an unknown command, a missing or misspelled argument key, or a wrong argument type does not
 * compile.
 */
async function call<C extends CommandName>(cmd: C, args: Commands[C]['args']): Promise<Commands[C]['result']> {
  if (!inTauri()) {
    throw toIpcError({ kind: 'internal', message: 'This window is not connected to the Switchboard app. Open Switchboard from the desktop app.' });
  }
  try {
    return await invoke<Commands[C]['result']>(cmd, args as InvokeArgs);
  } catch (e) {
    throw toIpcError(e);
  }
}

/** The real backend: one command per method. */
export const tauriBackend: Backend = {
  listConversations: () => call('list_conversations', {}),
  searchConversations: (query) => call('search_conversations', { query }),
  openConversation: (id) => call('open_conversation', { id }),
  olderMessages: (id, before, limit) => call('older_messages', { id, before, limit }),
  renameConversation: (id, title) => call('rename_conversation', { id, title }),
  generateTitle: (id) => call('generate_title', { id }),
  chatInstructions: (id) => call('chat_instructions', { id }),
  setChatInstructions: (id, text) => call('set_chat_instructions', { id, text }),
  setConversationPinned: (id, pinned) => call('set_conversation_pinned', { id, pinned }),
  setConversationArchived: (id, archived) => call('set_conversation_archived', { id, archived }),
  deleteConversation: (id) => call('delete_conversation', { id }),
  sendMessage: (request, handlers) => call('send_message', { request, onEvent: channelFor(handlers) }),
  stopTurn: (messageId) => call('stop_turn', { messageId }),
  regenerate: (conversationId, handlers) => call('regenerate', { conversationId, onEvent: channelFor(handlers) }),
  listTools: (conversationId, agent = null) => call('list_tools', { conversationId, agent }),
  setChatToolDisabled: (conversationId, name, disabled) => call('set_chat_tool_disabled', { conversationId, name, disabled }),
  listProviders: () => call('list_providers', {}),
  listModels: (provider) => call('list_models', { provider }),
  testProvider: (provider) => call('test_provider', { provider }),
  detectLocalServers: () => call('detect_local_servers', {}),
  resolveApproval: (callId, choice) => call('resolve_approval', { callId, choice }),
  // The shell checks the link again in Rust (the page is not trusted to) and opens it; this first
  // check only spares a round trip for links the markdown renderer would not have made.
  openUrl: async (url) => {
    if (!isAllowedUrl(url)) throw toIpcError({ kind: 'badRequest', message: 'This link cannot be opened.' });
    await call('open_url', { url });
  },
  getSettings: () => call('get_settings', {}),
  updateSettings: (settings) => call('update_settings', { settings }),
  addProvider: (profile, makeDefault) => call('add_provider', { profile, makeDefault }),
  removeProvider: (name) => call('remove_provider', { name }),
  listKeys: () => call('list_keys', {}),
  setKey: (name, value) => call('set_key', { name, value }),
  deleteKey: (name) => call('delete_key', { name }),
  keychainStatus: () => call('keychain_status', {}),
  useKeyFallback: (mode) => call('use_key_fallback', { mode }),
  mcpServers: () => call('mcp_servers', {}),
  mcpAdd: (name, config) => call('mcp_add', { name, config }),
  mcpRemove: (name) => call('mcp_remove', { name }),
  mcpSetEnabled: (name, enabled) => call('mcp_set_enabled', { name, enabled }),
  mcpApprove: (name) => call('mcp_approve', { name }),
  mcpRestart: (name) => call('mcp_restart', { name }),
  mcpApproveTools: (name) => call('mcp_approve_tools', { name }),
  mcpSignIn: (name) => call('mcp_sign_in', { name }),
  mcpSignOut: (name) => call('mcp_sign_out', { name }),
  mcpImportSources: () => call('mcp_import_sources', {}),
  mcpImportPreview: (app) => call('mcp_import_preview', { app }),
  mcpImport: (app) => call('mcp_import', { app }),
  definedTools: () => call('defined_tools', {}),
  definedToolConfig: (name) => call('defined_tool_config', { name }),
  addHttpTool: (config) => call('add_http_tool', { config }),
  addCommandTool: (config) => call('add_command_tool', { config }),
  approveDefinedTool: (name) => call('approve_defined_tool', { name }),
  removeDefinedTool: (name) => call('remove_defined_tool', { name }),
  tryHttpTool: (name, args) => call('try_http_tool', { name, args }),
  previewOpenApi: (request) => call('preview_openapi', { request }),
  importOpenApi: (request) => call('import_openapi', { request }),
  agents: () => call('agents', {}),
  putAgent: (agent) => call('put_agent', { agent }),
  duplicateAgent: (name, newName) => call('duplicate_agent', { name, newName }),
  removeAgent: (name) => call('remove_agent', { name }),
  putToolset: (toolset) => call('put_toolset', { toolset }),
  removeToolset: (name) => call('remove_toolset', { name }),
  dataInfo: () => call('data_info', {}),
  exportAll: () => call('export_all', {}),
  exportConversation: (id, format) => call('export_conversation', { id, format }),
  openExportsFolder: () => call('open_exports_folder', {}),
};

/** Whether the page runs inside the Tauri webview. */
export function inTauri(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

let current: Backend | null = null;
let loading: Promise<Backend> | null = null;

async function pickBackend(): Promise<Backend> {
  if (inTauri()) return tauriBackend;
  if (import.meta.env.DEV) {
    const { createFakeBackend, fakeOptionsFromUrl } = await import('./fake');
    return createFakeBackend(fakeOptionsFromUrl(location.search));
  }
  return tauriBackend;
}

/** The backend in use (chosen once). */
export function backend(): Promise<Backend> {
  if (current) return Promise.resolve(current);
  loading ??= pickBackend().then((b) => (current ??= b));
  return loading;
}

/** Replaces the backend (tests; the dev fake). */
export function setBackend(b: Backend): void {
  current = b;
  loading = null;
}

/** Every command, typed; each call goes to the backend in use. */
export const api: Backend = {
  listConversations: async () => (await backend()).listConversations(),
  searchConversations: async (q) => (await backend()).searchConversations(q),
  openConversation: async (id) => (await backend()).openConversation(id),
  olderMessages: async (id, before, limit) => (await backend()).olderMessages(id, before, limit),
  renameConversation: async (id, title) => (await backend()).renameConversation(id, title),
  generateTitle: async (id) => (await backend()).generateTitle(id),
  chatInstructions: async (id) => (await backend()).chatInstructions(id),
  setChatInstructions: async (id, text) => (await backend()).setChatInstructions(id, text),
  setConversationPinned: async (id, pinned) => (await backend()).setConversationPinned(id, pinned),
  setConversationArchived: async (id, archived) => (await backend()).setConversationArchived(id, archived),
  deleteConversation: async (id) => (await backend()).deleteConversation(id),
  sendMessage: async (request, handlers) => (await backend()).sendMessage(request, handlers),
  stopTurn: async (messageId) => (await backend()).stopTurn(messageId),
  regenerate: async (conversationId, handlers) => (await backend()).regenerate(conversationId, handlers),
  listTools: async (conversationId, agent) => (await backend()).listTools(conversationId, agent),
  setChatToolDisabled: async (conversationId, name, disabled) => (await backend()).setChatToolDisabled(conversationId, name, disabled),
  listProviders: async () => (await backend()).listProviders(),
  listModels: async (provider) => (await backend()).listModels(provider),
  testProvider: async (provider) => (await backend()).testProvider(provider),
  detectLocalServers: async () => (await backend()).detectLocalServers(),
  resolveApproval: async (callId, choice) => (await backend()).resolveApproval(callId, choice),
  openUrl: async (url) => (await backend()).openUrl(url),
  getSettings: async () => (await backend()).getSettings(),
  updateSettings: async (settings) => (await backend()).updateSettings(settings),
  addProvider: async (profile, makeDefault) => (await backend()).addProvider(profile, makeDefault),
  removeProvider: async (name) => (await backend()).removeProvider(name),
  listKeys: async () => (await backend()).listKeys(),
  setKey: async (name, value) => (await backend()).setKey(name, value),
  deleteKey: async (name) => (await backend()).deleteKey(name),
  keychainStatus: async () => (await backend()).keychainStatus(),
  useKeyFallback: async (mode) => (await backend()).useKeyFallback(mode),
  mcpServers: async () => (await backend()).mcpServers(),
  mcpAdd: async (name, config) => (await backend()).mcpAdd(name, config),
  mcpRemove: async (name) => (await backend()).mcpRemove(name),
  mcpSetEnabled: async (name, enabled) => (await backend()).mcpSetEnabled(name, enabled),
  mcpApprove: async (name) => (await backend()).mcpApprove(name),
  mcpRestart: async (name) => (await backend()).mcpRestart(name),
  mcpApproveTools: async (name) => (await backend()).mcpApproveTools(name),
  mcpSignIn: async (name) => (await backend()).mcpSignIn(name),
  mcpSignOut: async (name) => (await backend()).mcpSignOut(name),
  mcpImportSources: async () => (await backend()).mcpImportSources(),
  mcpImportPreview: async (app) => (await backend()).mcpImportPreview(app),
  mcpImport: async (app) => (await backend()).mcpImport(app),
  definedTools: async () => (await backend()).definedTools(),
  definedToolConfig: async (name) => (await backend()).definedToolConfig(name),
  addHttpTool: async (config) => (await backend()).addHttpTool(config),
  addCommandTool: async (config) => (await backend()).addCommandTool(config),
  approveDefinedTool: async (name) => (await backend()).approveDefinedTool(name),
  removeDefinedTool: async (name) => (await backend()).removeDefinedTool(name),
  tryHttpTool: async (name, args) => (await backend()).tryHttpTool(name, args),
  previewOpenApi: async (request) => (await backend()).previewOpenApi(request),
  importOpenApi: async (request) => (await backend()).importOpenApi(request),
  agents: async () => (await backend()).agents(),
  putAgent: async (agent) => (await backend()).putAgent(agent),
  duplicateAgent: async (name, newName) => (await backend()).duplicateAgent(name, newName),
  removeAgent: async (name) => (await backend()).removeAgent(name),
  putToolset: async (toolset) => (await backend()).putToolset(toolset),
  removeToolset: async (name) => (await backend()).removeToolset(name),
  dataInfo: async () => (await backend()).dataInfo(),
  exportAll: async () => (await backend()).exportAll(),
  exportConversation: async (id, format) => (await backend()).exportConversation(id, format),
  openExportsFolder: async () => (await backend()).openExportsFolder(),
};
