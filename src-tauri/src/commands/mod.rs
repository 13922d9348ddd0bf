//! The commands the window may call, one file per concern. Each command is a few lines that call
//! one method of [`switchboard_service::Service`]: no product logic, no SQL, no HTTP here.
//!
//! Invariants: every command returns [`IpcError`] on failure (a `kind` the UI can act on); a call
//! that may touch a key store or show a native dialog runs on a blocking thread ([`blocking`],
//! [`asking`]); `build.rs` reads the commands and the `generate_handler!` list below from this
//! folder's source, so a command is declared by writing it here and listing it once. Each command's
//! body runs inside [`logged`], so a call it refuses leaves a line in the log.

use switchboard_core::ErrorKind;
use switchboard_service::ipc::IpcError;

mod agents;
mod asks;
mod attachments;
mod conversations;
mod data;
mod defined_tools;
mod keys;
mod mcp;
mod mcp_context;
mod providers;
mod refused;
mod roots;
mod settings;
mod tools;
mod turns;
mod usage;

/// Command result: the typed IPC error on failure.
type Result<T> = std::result::Result<T, IpcError>;

use crate::platform::refusals::logged;

fn ipc(e: switchboard_service::Error) -> IpcError {
    e.into()
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

/// Registers the commands on a builder (shared by the app and the command tests).
pub fn with_commands<R: tauri::Runtime>(builder: tauri::Builder<R>) -> tauri::Builder<R> {
    let handler: Box<dyn Fn(tauri::ipc::Invoke<R>) -> bool + Send + Sync> = Box::new(tauri::generate_handler![
        conversations::list_conversations,
        conversations::search_conversations,
        conversations::search_messages,
        conversations::open_conversation,
        conversations::older_messages,
        conversations::rename_conversation,
        conversations::generate_title,
        conversations::chat_instructions,
        conversations::conversation_context,
        conversations::set_chat_instructions,
        conversations::set_chat_setup,
        conversations::chat_grants,
        conversations::revoke_chat_grant,
        conversations::set_conversation_pinned,
        conversations::set_conversation_archived,
        conversations::delete_conversation,
        conversations::compact_conversation,
        conversations::list_compactions,
        conversations::get_compaction,
        conversations::set_compaction_undone,
        conversations::set_message_pinned,
        conversations::switch_version,
        conversations::delete_version,
        conversations::branch_conversation,
        conversations::message_markdown,
        usage::message_usage,
        usage::conversation_usage,
        usage::usage_report,
        turns::send_message,
        attachments::attach_pick,
        attachments::upload_begin,
        attachments::upload_chunk,
        attachments::upload_finish,
        attachments::upload_cancel,
        attachments::attachment_preview,
        attachments::attachment_thumbnail,
        turns::stop_turn,
        turns::regenerate,
        turns::edit_message,
        turns::resolve_approval,
        turns::resolve_budget,
        tools::list_tools,
        tools::set_chat_tool_disabled,
        tools::set_chat_tools_disabled,
        providers::list_providers,
        providers::list_models,
        providers::describe_models,
        providers::catalogue_spec,
        providers::model_catalogue,
        providers::refresh_model_catalogue,
        providers::detect_local_servers,
        providers::test_provider,
        providers::add_provider,
        providers::remove_provider,
        settings::get_settings,
        settings::update_settings,
        keys::list_keys,
        keys::set_key,
        keys::delete_key,
        keys::keychain_status,
        keys::use_key_fallback,
        mcp::mcp_servers,
        asks::answer_elicitation,
        asks::answer_sampling,
        roots::mcp_roots,
        roots::mcp_add_root,
        roots::mcp_remove_root,
        mcp::mcp_add,
        mcp::mcp_edit,
        mcp::mcp_remove,
        mcp::mcp_set_enabled,
        mcp::mcp_approve,
        mcp::mcp_restart,
        mcp::mcp_approve_tools,
        mcp::mcp_sign_in,
        mcp::mcp_sign_out,
        mcp::mcp_import_sources,
        mcp::mcp_import_preview,
        mcp::mcp_import,
        mcp::mcp_paste_preview,
        mcp::mcp_paste,
        mcp_context::mcp_prompts,
        mcp_context::mcp_get_prompt,
        mcp_context::mcp_resources,
        mcp_context::mcp_resource_templates,
        mcp_context::mcp_expand_template,
        mcp_context::mcp_complete,
        mcp_context::mcp_attach_resource,
        mcp_context::mcp_resource_updates,
        mcp_context::mcp_set_log_level,
        defined_tools::defined_tools,
        defined_tools::defined_tool_config,
        defined_tools::add_http_tool,
        defined_tools::add_command_tool,
        defined_tools::approve_defined_tool,
        defined_tools::remove_defined_tool,
        defined_tools::try_http_tool,
        defined_tools::preview_openapi,
        defined_tools::import_openapi,
        agents::agents,
        agents::put_agent,
        agents::duplicate_agent,
        agents::remove_agent,
        agents::put_toolset,
        agents::remove_toolset,
        data::data_info,
        data::export_all,
        data::export_conversation,
        data::open_exports_folder,
        data::preview_conversation_import,
        data::import_conversations,
        data::open_url,
        refused::refused_call,
    ]);
    // Every app command passed the isolation hook, or is refused here before it runs. The files
    // the person picked for the window live as long as the app.
    builder
        .manage(switchboard_service::openapi_docs::PickedFiles::default())
        .manage(data::LastExport::default())
        .plugin(crate::platform::navigation::navigation_guard())
        .invoke_handler(move |invoke| {
            if let Some(refusal) =
                crate::platform::refusals::unchecked(invoke.message.command(), invoke.message.payload())
            {
                invoke.resolver.reject(refusal);
                return true;
            }
            handler(invoke)
        })
}
