//! The Switchboard desktop shell: Tauri commands that each call one method of
//! [`switchboard_service::Service`]. Nothing else lives here: no product logic, no SQL, no HTTP.
//!
//! Architecture invariant: this is the only crate that knows Tauri. Every command returns
//! [`IpcError`] on failure (a `kind` the UI can act on), and a turn's events travel over one
//! `Channel<ChatEvent>` per turn.

use serde_json::{Map, Value};
use std::sync::Arc;
use switchboard_core::{ChatEvent, Coalescing, ErrorKind, EventSink, coalesce};
use switchboard_service::agents::{AgentConfig, AgentsOverview, Toolset};
use switchboard_service::connection::DetectedServer;
use switchboard_service::defined_tools::{
    CommandToolConfig, DefinedConfig, DefinedToolInfo, DefinedToolsOverview, HttpToolConfig, TryResult,
};
use switchboard_service::export::ExportFormat;
use switchboard_service::ipc::{
    ApprovalChoice, ChatInstructions, ConnectionReport, ConversationSummary, ConversationView, DataInfo, IpcError,
    KeyInfo, KeyMode, KeychainStatus, MessagePage, ProviderInfo, ProviderProfile, SendRequest, ToolInfo, TurnChoices,
    TurnStarted,
};
use switchboard_service::mcp::{ImportPreview, ImportSource, McpOverview, McpServerInfo, ServerConfig};
use switchboard_service::openapi_docs::{OpenApiImport, OpenApiPreview, OpenApiRequest};
use switchboard_service::settings::Settings;
use switchboard_service::{Confirm, KeychainAccess, Service, Widening};
use tauri::ipc::Channel;
use tauri::{Manager, State};

/// Command result: the typed IPC error on failure.
type Result<T> = std::result::Result<T, IpcError>;

fn ipc(e: switchboard_service::Error) -> IpcError {
    e.into()
}

/// Forwards a turn's events to the webview. A closed window drops the channel; the turn goes on
/// and is recorded, so reopening the conversation shows it.
struct ChannelSink(Channel<ChatEvent>);

/// The sink of one turn: text deltas are merged to at most about one message per frame, since
/// the webview pays for each message on its main thread.
fn turn_sink(on_event: Channel<ChatEvent>) -> Arc<dyn EventSink> {
    Arc::new(Coalescing::new(ChannelSink(on_event), coalesce::FRAME))
}

/// Who answers, for the window, changes that widen what the app may do (a key sent to a new
/// origin, a tool's approval loosened, local addresses allowed). The app manages a
/// [`NativeDialog`]; the command tests manage one that answers as the test says. Never anything
/// the page sends: script in the page can call every command the window may call.
#[derive(Clone)]
pub struct Confirmer(pub Arc<dyn Confirm>);

/// Asks the person in a native dialog, which the page can neither draw nor click. Blocks until
/// they answer: only ever called on a blocking thread ([`blocking`]).
pub struct NativeDialog(pub tauri::AppHandle);

impl Confirm for NativeDialog {
    fn confirm(&self, changes: &[Widening]) -> bool {
        use tauri_plugin_dialog::{DialogExt, MessageDialogButtons, MessageDialogKind};
        let yes = match changes {
            [Widening::KeyOrigin { .. }] => "Send the key there",
            _ => "Allow",
        };
        let mut dialog = self
            .0
            .dialog()
            .message(Widening::describe_all(changes))
            .title(Widening::title(changes))
            .kind(MessageDialogKind::Warning)
            .buttons(MessageDialogButtons::OkCancelCustom(yes.into(), "Cancel".into()));
        if let Some(window) = self.0.get_webview_window("main") {
            dialog = dialog.parent(&window);
        }
        dialog.blocking_show()
    }
}

/// Hands a checked link to the system opener (the person's browser or mail program). The app's
/// opens it for real; the command tests manage one that records what it was given.
#[derive(Clone)]
pub struct Opener(pub Arc<OpenFn>);

/// Opens a link, or says why it could not.
pub type OpenFn = dyn Fn(&str) -> std::result::Result<(), String> + Send + Sync;

impl Opener {
    /// The system's opener.
    pub fn system() -> Self {
        Opener(Arc::new(switchboard_process::open_external))
    }
}

/// Whether the main window may navigate to `url`: only to the app's own content (the embedded UI
/// under `tauri://localhost`, or `http(s)://tauri.localhost` on Windows; the Vite dev server in a
/// dev build). Anything else — a link in a message, `window.location` set by script — stays where
/// it is; links go to the browser through `open_url`, which checks them.
pub fn navigation_allowed(url: &tauri::Url) -> bool {
    let own = match url.scheme() {
        "tauri" => url.host_str() == Some("localhost"),
        "http" | "https" => url.host_str() == Some("tauri.localhost"),
        // The empty document a webview may start from; it shows nothing and runs nothing.
        "about" => url.as_str() == "about:blank",
        _ => false,
    };
    own || (cfg!(dev) && url.origin() == tauri::Url::parse("http://localhost:1420").expect("dev URL").origin())
}

/// Refuses every navigation [`navigation_allowed`] does not allow, for every webview.
fn navigation_guard<R: tauri::Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri::plugin::Builder::new("navigation-guard")
        .on_navigation(|_, url| {
            let allowed = navigation_allowed(url);
            if !allowed {
                tracing::warn!("refused to navigate the window away from the app (to a {} URL)", url.scheme());
            }
            allowed
        })
        .build()
}

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        if let Err(e) = self.0.send(event) {
            tracing::debug!("event not delivered to the window: {e}");
        }
    }
}

#[tauri::command]
async fn list_conversations(service: State<'_, Service>) -> Result<Vec<ConversationSummary>> {
    service.conversations().map_err(ipc)
}

#[tauri::command]
async fn search_conversations(service: State<'_, Service>, query: String) -> Result<Vec<ConversationSummary>> {
    service.search(&query).map_err(ipc)
}

#[tauri::command]
async fn open_conversation(service: State<'_, Service>, id: String) -> Result<ConversationView> {
    service.open(&id).map_err(ipc)
}

#[tauri::command]
async fn older_messages(service: State<'_, Service>, id: String, before: String, limit: u32) -> Result<MessagePage> {
    service.older_messages(&id, &before, limit).map_err(ipc)
}

#[tauri::command]
async fn rename_conversation(service: State<'_, Service>, id: String, title: String) -> Result<()> {
    service.rename(&id, &title).map_err(ipc)
}

#[tauri::command]
async fn generate_title(service: State<'_, Service>, id: String) -> Result<String> {
    service.generate_title(&id).await.map_err(ipc)
}

/// A chat's instructions: the custom ones, its own, and what its last question was sent with.
#[tauri::command]
async fn chat_instructions(service: State<'_, Service>, id: String) -> Result<ChatInstructions> {
    service.chat_instructions(&id).map_err(ipc)
}

#[tauri::command]
async fn set_chat_instructions(service: State<'_, Service>, id: String, text: String) -> Result<()> {
    service.set_chat_instructions(&id, &text).map_err(ipc)
}

#[tauri::command]
async fn set_conversation_pinned(service: State<'_, Service>, id: String, pinned: bool) -> Result<()> {
    service.set_pinned(&id, pinned).map_err(ipc)
}

#[tauri::command]
async fn set_conversation_archived(service: State<'_, Service>, id: String, archived: bool) -> Result<()> {
    service.set_archived(&id, archived).map_err(ipc)
}

#[tauri::command]
async fn delete_conversation(service: State<'_, Service>, id: String) -> Result<()> {
    service.delete(&id).map_err(ipc)
}

#[tauri::command]
async fn send_message(
    service: State<'_, Service>,
    request: SendRequest,
    on_event: Channel<ChatEvent>,
) -> Result<TurnStarted> {
    service.send(request, turn_sink(on_event)).map_err(ipc)
}

#[tauri::command]
async fn stop_turn(service: State<'_, Service>, message_id: String) -> Result<bool> {
    Ok(service.stop(&message_id))
}

/// Asks the last question again: with `choices` when the person picked new ones, else exactly
/// as it was asked (the service remembers).
#[tauri::command]
async fn regenerate(
    service: State<'_, Service>,
    conversation_id: String,
    choices: Option<TurnChoices>,
    on_event: Channel<ChatEvent>,
) -> Result<TurnStarted> {
    service.regenerate(&conversation_id, choices, turn_sink(on_event)).map_err(ipc)
}

/// Every tool with its state in Settings and in a chat; a new chat with `agent` gets the agent's.
#[tauri::command]
async fn list_tools(
    service: State<'_, Service>,
    conversation_id: Option<String>,
    agent: Option<String>,
) -> Result<Vec<ToolInfo>> {
    match (conversation_id, agent) {
        (None, Some(agent)) => service.agent_tools(&agent),
        (id, _) => service.tools(id.as_deref()),
    }
    .map_err(ipc)
}

#[tauri::command]
async fn set_chat_tool_disabled(
    service: State<'_, Service>,
    conversation_id: String,
    name: String,
    disabled: bool,
) -> Result<()> {
    service.set_chat_tool_disabled(&conversation_id, &name, disabled).map_err(ipc)
}

#[tauri::command]
async fn list_providers(service: State<'_, Service>) -> Result<Vec<ProviderInfo>> {
    service.providers().map_err(ipc)
}

#[tauri::command]
async fn list_models(service: State<'_, Service>, provider: Option<String>) -> Result<Vec<String>> {
    service.models(provider.as_deref()).await.map_err(ipc)
}

#[tauri::command]
async fn detect_local_servers(service: State<'_, Service>) -> Result<Vec<DetectedServer>> {
    service.detect_local_servers().await.map_err(ipc)
}

#[tauri::command]
async fn test_provider(service: State<'_, Service>, provider: Option<String>) -> Result<ConnectionReport> {
    service.test_provider(provider.as_deref()).await.map_err(ipc)
}

#[tauri::command]
async fn resolve_approval(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    call_id: String,
    choice: ApprovalChoice,
) -> Result<()> {
    // "Always" stops the tool asking: the person confirms that natively (a blocking dialog).
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    blocking(move || s.resolve_approval_confirmed(&call_id, choice, confirm.0.as_ref())).await
}

#[tauri::command]
async fn get_settings(service: State<'_, Service>) -> Result<Settings> {
    service.settings().map_err(ipc)
}

/// Saves settings; a change that widens what the app may do is applied only after the person
/// agrees in a native dialog (on a blocking thread, as it waits for them).
#[tauri::command]
async fn update_settings(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    settings: Settings,
) -> Result<Settings> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    blocking(move || {
        s.update_settings_confirmed(&settings, confirm.0.as_ref())?;
        s.settings()
    })
    .await
}

/// Saves a profile; moving one whose key is stored to another origin asks in a native dialog.
#[tauri::command]
async fn add_provider(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    profile: ProviderProfile,
    make_default: bool,
) -> Result<Vec<ProviderInfo>> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    blocking(move || {
        s.add_provider_confirmed(&profile, make_default, confirm.0.as_ref())?;
        s.providers()
    })
    .await
}

#[tauri::command]
async fn remove_provider(service: State<'_, Service>, name: String) -> Result<Vec<ProviderInfo>> {
    let s = service.inner().clone();
    blocking(move || s.remove_provider_and_key(&name)).await?;
    service.providers().map_err(ipc)
}

#[tauri::command]
async fn mcp_servers(service: State<'_, Service>) -> Result<McpOverview> {
    service.mcp_servers().map_err(ipc)
}

/// Adds or replaces an MCP server. A command line runs only after the person agrees to it in a
/// native dialog: adding a server from the page is never enough to run a process.
#[tauri::command]
async fn mcp_add(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
    config: ServerConfig,
) -> Result<McpServerInfo> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    asking(move || async move { s.mcp_add(&name, config, confirm.0.as_ref()).await }).await
}

#[tauri::command]
async fn mcp_remove(service: State<'_, Service>, name: String) -> Result<McpOverview> {
    service.mcp_remove(&name).await.map_err(ipc)?;
    service.mcp_servers().map_err(ipc)
}

/// Enables (asking natively about a command not yet allowed) or disables a server.
#[tauri::command]
async fn mcp_set_enabled(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
    enabled: bool,
) -> Result<McpServerInfo> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    asking(move || async move { s.mcp_set_enabled(&name, enabled, confirm.0.as_ref()).await }).await
}

/// Shows a waiting server's command line in a native dialog and runs it if the person agrees.
#[tauri::command]
async fn mcp_approve(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
) -> Result<McpServerInfo> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    asking(move || async move { s.mcp_approve(&name, confirm.0.as_ref()).await }).await
}

#[tauri::command]
async fn mcp_restart(service: State<'_, Service>, name: String) -> Result<McpServerInfo> {
    service.mcp_restart(&name).await.map_err(ipc)
}

/// Offers tools whose definitions changed once the person agrees in a native dialog.
#[tauri::command]
async fn mcp_approve_tools(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
) -> Result<McpServerInfo> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    blocking(move || s.mcp_approve_tools(&name, confirm.0.as_ref())).await
}

/// Opens a remote server's sign-in address in the person's browser (the engine checked that it
/// is `https:` or loopback `http:` first).
struct SystemBrowser(Opener);

impl switchboard_service::mcp::Browser for SystemBrowser {
    fn open(&self, url: &str) -> std::result::Result<(), String> {
        (self.0.0)(url)
    }
}

/// Signs in to a remote MCP server that asks for it; resolves once the person finished in the
/// browser (or after five minutes).
#[tauri::command]
async fn mcp_sign_in(service: State<'_, Service>, opener: State<'_, Opener>, name: String) -> Result<McpServerInfo> {
    service.mcp_sign_in(&name, &SystemBrowser(opener.inner().clone())).await.map_err(ipc)
}

#[tauri::command]
async fn mcp_sign_out(service: State<'_, Service>, name: String) -> Result<McpServerInfo> {
    service.mcp_sign_out(&name).await.map_err(ipc)
}

/// The other apps' MCP configs found on this computer (Claude Desktop, Cursor).
#[tauri::command]
async fn mcp_import_sources(service: State<'_, Service>) -> Result<Vec<ImportSource>> {
    Ok(service.mcp_import_sources())
}

/// What importing another app's config would add. The page names the app, never a path.
#[tauri::command]
async fn mcp_import_preview(service: State<'_, Service>, app: String) -> Result<ImportPreview> {
    let path = import_path(&service, &app)?;
    service.mcp_import_preview(&path).map_err(ipc)
}

/// Imports another app's servers; their command lines are shown together in a native dialog.
#[tauri::command]
async fn mcp_import(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    app: String,
) -> Result<ImportPreview> {
    let path = import_path(&service, &app)?;
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    asking(move || async move { s.mcp_import(&path, confirm.0.as_ref()).await }).await
}

fn import_path(service: &Service, app: &str) -> Result<std::path::PathBuf> {
    service.mcp_import_sources().into_iter().find(|s| s.app == app).map(|s| s.path.into()).ok_or_else(|| IpcError {
        kind: ErrorKind::NotFound,
        message: format!("No MCP config of '{app}' was found on this computer."),
        retryable: false,
    })
}

/// The tools people define without code (`tools.json`), each with where it stands.
#[tauri::command]
async fn defined_tools(service: State<'_, Service>) -> Result<DefinedToolsOverview> {
    service.defined_tools().map_err(ipc)
}

/// One defined tool's whole definition, for editing it.
#[tauri::command]
async fn defined_tool_config(service: State<'_, Service>, name: String) -> Result<DefinedConfig> {
    service.defined_tool_config(&name).map_err(ipc)
}

/// Adds or replaces an HTTP tool. One that sends a key is offered only after the person agrees,
/// in a native dialog, to the key going to its origin.
#[tauri::command]
async fn add_http_tool(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    config: HttpToolConfig,
) -> Result<DefinedToolInfo> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    blocking(move || s.add_http_tool(config, confirm.0.as_ref())).await
}

/// Adds or replaces a command tool. It is offered only after the person agrees to its exact
/// command line in a native dialog: adding it from the page is never enough to run a program.
#[tauri::command]
async fn add_command_tool(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    config: CommandToolConfig,
) -> Result<DefinedToolInfo> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    blocking(move || s.add_command_tool(config, confirm.0.as_ref())).await
}

/// Shows what a waiting tool would be allowed in a native dialog and offers it if the person agrees.
#[tauri::command]
async fn approve_defined_tool(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
) -> Result<DefinedToolInfo> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    blocking(move || s.approve_defined_tool(&name, confirm.0.as_ref())).await
}

#[tauri::command]
async fn remove_defined_tool(service: State<'_, Service>, name: String) -> Result<DefinedToolsOverview> {
    let s = service.inner().clone();
    blocking(move || s.remove_defined_tool(&name)).await?;
    service.defined_tools().map_err(ipc)
}

/// Every agent and toolset, with what is wrong with each now.
#[tauri::command]
async fn agents(service: State<'_, Service>) -> Result<AgentsOverview> {
    service.agents().map_err(ipc)
}

/// Adds an agent, or replaces the one of the same name.
#[tauri::command]
async fn put_agent(service: State<'_, Service>, agent: AgentConfig) -> Result<AgentsOverview> {
    service.put_agent(agent).map_err(ipc)?;
    service.agents().map_err(ipc)
}

#[tauri::command]
async fn duplicate_agent(service: State<'_, Service>, name: String, new_name: String) -> Result<AgentsOverview> {
    service.duplicate_agent(&name, &new_name).map_err(ipc)?;
    service.agents().map_err(ipc)
}

#[tauri::command]
async fn remove_agent(service: State<'_, Service>, name: String) -> Result<AgentsOverview> {
    service.remove_agent(&name).map_err(ipc)?;
    service.agents().map_err(ipc)
}

/// Adds a toolset, or replaces the one of the same name.
#[tauri::command]
async fn put_toolset(service: State<'_, Service>, toolset: Toolset) -> Result<AgentsOverview> {
    service.put_toolset(toolset).map_err(ipc)?;
    service.agents().map_err(ipc)
}

#[tauri::command]
async fn remove_toolset(service: State<'_, Service>, name: String) -> Result<AgentsOverview> {
    service.remove_toolset(&name).map_err(ipc)?;
    service.agents().map_err(ipc)
}

/// Runs an HTTP tool once with `args` (the person's own act): the exact request, keys masked,
/// and what came back.
#[tauri::command]
async fn try_http_tool(service: State<'_, Service>, name: String, args: Map<String, Value>) -> Result<TryResult> {
    service.try_http_tool(&name, Value::Object(args)).await.map(TryResult::from).map_err(ipc)
}

/// Reads an OpenAPI document (a file path or an http(s) URL) and converts it without keeping
/// anything: its operations, servers, security schemes and what would be left out.
#[tauri::command]
async fn preview_openapi(service: State<'_, Service>, request: OpenApiRequest) -> Result<OpenApiPreview> {
    service.preview_openapi(&request).await.map_err(ipc)
}

/// Imports an OpenAPI document as tools. Operations that send a key are offered only after the
/// person agrees, in a native dialog, to the keys going to its server.
#[tauri::command]
async fn import_openapi(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    request: OpenApiRequest,
) -> Result<OpenApiImport> {
    let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
    asking(move || async move { s.import_openapi(request, confirm.0.as_ref()).await }).await
}

/// Like [`blocking`], for a service call that is async and may ask the person (a native dialog
/// blocks its thread until they answer).
async fn asking<T, F>(f: impl FnOnce() -> F + Send + 'static) -> Result<T>
where
    T: Send + 'static,
    F: std::future::Future<Output = switchboard_service::Result<T>>,
{
    blocking(move || tauri::async_runtime::block_on(f())).await
}

/// Key stores may block (a keychain waiting on D-Bus): keep them off the async workers.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> switchboard_service::Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| IpcError { kind: ErrorKind::Internal, message: e.to_string(), retryable: false })?
        .map_err(ipc)
}

#[tauri::command]
async fn list_keys(service: State<'_, Service>) -> Result<Vec<KeyInfo>> {
    let s = service.inner().clone();
    blocking(move || s.keys_overview()).await
}

#[tauri::command]
async fn set_key(service: State<'_, Service>, name: String, value: String) -> Result<KeyInfo> {
    let s = service.inner().clone();
    blocking(move || s.set_key(&name, &value)).await
}

#[tauri::command]
async fn delete_key(service: State<'_, Service>, name: String) -> Result<KeyInfo> {
    let s = service.inner().clone();
    blocking(move || s.delete_key(&name)).await
}

#[tauri::command]
async fn keychain_status(service: State<'_, Service>) -> Result<KeychainStatus> {
    Ok(service.keychain_status())
}

/// The person's choice when the keychain cannot be used: environment variables only, or keys
/// kept in memory for this session. Never a file.
#[tauri::command]
async fn use_key_fallback(service: State<'_, Service>, mode: KeyMode) -> Result<KeychainStatus> {
    let s = service.inner().clone();
    blocking(move || s.use_key_fallback(mode)).await
}

/// Opens a link in the person's browser or mail program after checking it in Rust
/// (`switchboard_service::links`): http, https and mailto only, nothing hidden in it.
#[tauri::command]
async fn open_url(opener: State<'_, Opener>, url: String) -> Result<()> {
    let url = switchboard_service::links::external_url(&url).map_err(ipc)?;
    let open = opener.inner().clone();
    tokio::task::spawn_blocking(move || (open.0)(&url))
        .await
        .map_err(|e| IpcError { kind: ErrorKind::Internal, message: e.to_string(), retryable: false })?
        .map_err(|e| IpcError {
            kind: ErrorKind::Internal,
            message: format!("The link could not be opened: {e}"),
            retryable: false,
        })
}

#[tauri::command]
async fn data_info(service: State<'_, Service>) -> Result<DataInfo> {
    Ok(service.data_info())
}

#[tauri::command]
async fn export_all(service: State<'_, Service>) -> Result<String> {
    let s = service.inner().clone();
    blocking(move || s.export_all_to_file()).await
}

#[tauri::command]
async fn export_conversation(service: State<'_, Service>, id: String, format: ExportFormat) -> Result<String> {
    let s = service.inner().clone();
    blocking(move || s.export_conversation_to_file(&id, format)).await
}

/// Shows the exports folder in the system's file manager. The folder is the service's own, never
/// a path from the page.
#[tauri::command]
async fn open_exports_folder(service: State<'_, Service>, opener: State<'_, Opener>) -> Result<()> {
    let dir = service.exports_dir().map_err(ipc)?;
    let url = format!("file://{}", dir.display());
    let open = opener.inner().clone();
    tokio::task::spawn_blocking(move || (open.0)(&url))
        .await
        .map_err(|e| IpcError { kind: ErrorKind::Internal, message: e.to_string(), retryable: false })?
        .map_err(|e| IpcError {
            kind: ErrorKind::Internal,
            message: format!("The folder could not be opened: {e}"),
            retryable: false,
        })
}

/// Opens the data directory's database and builds the service the commands share. Keys come
/// from the environment until the keychain is probed, after start-up.
pub fn open_service() -> std::result::Result<Service, IpcError> {
    Service::load(None, KeychainAccess::Deferred).map_err(IpcError::from)
}

/// Registers the commands on a builder (shared by the app and the command tests).
pub fn with_commands<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    builder.plugin(navigation_guard()).invoke_handler(tauri::generate_handler![
        list_conversations,
        search_conversations,
        open_conversation,
        older_messages,
        rename_conversation,
        delete_conversation,
        send_message,
        stop_turn,
        regenerate,
        list_tools,
        set_chat_tool_disabled,
        list_providers,
        list_models,
        test_provider,
        detect_local_servers,
        resolve_approval,
        get_settings,
        update_settings,
        add_provider,
        remove_provider,
        list_keys,
        set_key,
        delete_key,
        keychain_status,
        use_key_fallback,
        data_info,
        export_all,
        export_conversation,
        open_exports_folder,
        set_conversation_pinned,
        generate_title,
        set_conversation_archived,
        chat_instructions,
        set_chat_instructions,
        open_url,
        mcp_servers,
        mcp_add,
        mcp_remove,
        mcp_set_enabled,
        mcp_approve,
        mcp_restart,
        mcp_approve_tools,
        mcp_import_sources,
        mcp_import_preview,
        mcp_import,
        mcp_sign_in,
        mcp_sign_out,
        defined_tools,
        defined_tool_config,
        add_http_tool,
        add_command_tool,
        approve_defined_tool,
        remove_defined_tool,
        try_http_tool,
        preview_openapi,
        import_openapi,
        agents,
        put_agent,
        duplicate_agent,
        remove_agent,
        put_toolset,
        remove_toolset,
    ])
}

/// The app's context (config, embedded UI, icons, capabilities), for any runtime: the app uses
/// Wry, the command tests the mock runtime, both under the same capabilities.
pub fn context<R: tauri::Runtime>() -> tauri::Context<R> {
    tauri::generate_context!()
}

/// Saves the window's size and place half a second after it last moved or changed size. The
/// window-state plugin alone saves only on a clean exit; a session that ends with SIGTERM (a
/// logout, a crash, `kill`) would otherwise lose it.
fn save_window_state_soon(app: &tauri::AppHandle) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tauri_plugin_window_state::{AppHandleExt, StateFlags};
    static LATEST: AtomicU64 = AtomicU64::new(0);
    let this = LATEST.fetch_add(1, Ordering::SeqCst) + 1;
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        if LATEST.load(Ordering::SeqCst) == this
            && let Err(e) = app.save_window_state(StateFlags::all())
        {
            tracing::warn!("the window's size and place could not be saved: {e}");
        }
    });
}

/// What GTK and WebKit are told on a machine without a GPU (no DRM render node: virtual machines,
/// remote desktops, minimal installs), where all their GL would run in software, through Mesa's
/// software driver and with it about 20 MB of libLLVM in each process that loads it:
/// - WebKit draws directly instead of compositing every frame in software GL, which costs tens of
///   megabytes and CPU for nothing;
/// - it shares no GPU buffers (there are none to share);
/// - it looks for no render device: otherwise the app process opens a software GL display only to
///   learn there is none. The value is never opened while the two above hold; `/dev/null` is not a
///   GPU, should anything open it;
/// - GTK does not probe GL when it connects to the display (nothing in the app draws with GTK's GL).
///
/// The web process still opens a GL display (WebKit aborts without one), so libLLVM stays there.
/// Empty when there is a render node, and when the person set any of these: then they decide.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn gl_env_without_gpu(has_render_node: bool, is_set: impl Fn(&str) -> bool) -> Vec<(&'static str, &'static str)> {
    const VARS: [(&str, &str); 4] = [
        ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
        ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
        ("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/null"),
        ("GDK_GL", "disable"),
    ];
    if has_render_node || VARS.iter().any(|(var, _)| is_set(var)) {
        return Vec::new();
    }
    VARS.to_vec()
}

/// Applies [`gl_env_without_gpu`] to this process (WebKit's processes inherit it). Linux only.
#[allow(unsafe_code)] // setting environment variables; see the SAFETY note
fn spare_software_gl_without_gpu() {
    #[cfg(target_os = "linux")]
    {
        let has_render_node = std::fs::read_dir("/dev/dri")
            .is_ok_and(|entries| entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD")));
        for (var, value) in gl_env_without_gpu(has_render_node, |var| std::env::var_os(var).is_some()) {
            // SAFETY: called first thing in `run`, before any other thread exists (no runtime,
            // no logger, no GTK yet), so nothing can read the environment concurrently.
            unsafe { std::env::set_var(var, value) };
        }
    }
}

/// Runs the desktop app.
pub fn run() {
    spare_software_gl_without_gpu();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        // Log lines may quote a server's error text, which may quote a key: masked like every output.
        .with_writer(|| switchboard_service::redact::RedactingWriter(std::io::stderr()))
        .try_init();
    let service = match open_service() {
        Ok(s) => s,
        Err(e) => {
            // Without a database there is nothing to show; say why instead of a blank window.
            eprintln!("Switchboard cannot start: {}", e.message);
            std::process::exit(1);
        }
    };
    let app = with_commands(
        tauri::Builder::default()
            .plugin(tauri_plugin_dialog::init())
            .plugin(tauri_plugin_window_state::Builder::default().build()),
    )
    .on_window_event(|window, event| {
        if matches!(event, tauri::WindowEvent::Moved(_) | tauri::WindowEvent::Resized(_)) {
            save_window_state_soon(window.app_handle());
        }
    })
    .manage(service.clone())
    .manage(Opener::system())
    .setup({
        let service = service.clone();
        move |app| {
            app.manage(Confirmer(Arc::new(NativeDialog(app.handle().clone()))));
            if let Some(window) = app.get_webview_window("main") {
                window.set_title("Switchboard")?;
            }
            // Both may take seconds; the window and the composer never wait for them.
            let keychain = service.clone();
            std::thread::spawn(move || keychain.connect_keychain());
            let sources = service.clone();
            tauri::async_runtime::spawn(async move { sources.start_tool_sources().await });
            Ok(())
        }
    });
    let app = match app.build(context()) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("Switchboard stopped: {e}");
            std::process::exit(1);
        }
    };
    app.run(move |_, event| {
        if let tauri::RunEvent::Exit = event {
            // Tool sources own processes and connections: end them before the process does.
            tauri::async_runtime::block_on(service.shutdown());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::gl_env_without_gpu;

    #[test]
    fn without_a_gpu_webkit_draws_directly_and_nothing_probes_gl_in_the_app_process() {
        let env = gl_env_without_gpu(false, |_| false);
        assert_eq!(
            env,
            [
                ("WEBKIT_DISABLE_COMPOSITING_MODE", "1"),
                ("WEBKIT_DISABLE_DMABUF_RENDERER", "1"),
                ("WEBKIT_WEB_RENDER_DEVICE_FILE", "/dev/null"),
                ("GDK_GL", "disable"),
            ]
        );
    }

    #[test]
    fn a_gpu_or_a_choice_of_the_person_leaves_gtk_and_webkit_alone() {
        assert!(gl_env_without_gpu(true, |_| false).is_empty());
        for chosen in [
            "WEBKIT_DISABLE_COMPOSITING_MODE",
            "WEBKIT_DISABLE_DMABUF_RENDERER",
            "WEBKIT_WEB_RENDER_DEVICE_FILE",
            "GDK_GL",
        ] {
            assert!(gl_env_without_gpu(false, |var| var == chosen).is_empty(), "{chosen}");
        }
    }
}
