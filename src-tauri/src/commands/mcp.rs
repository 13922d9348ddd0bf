//! MCP servers: the overview, adding, enabling, approving and restarting one, signing in, and
//! importing other apps' configs.
//!
//! Invariant: a command line runs only after the person agrees to it in a native dialog, and an
//! import reads only a config the service found itself (the page names the app, never a path).

use super::{Result, asking, blocking, ipc, logged};
use crate::platform::dialog::Confirmer;
use crate::platform::opener::{Opener, SystemBrowser};
use switchboard_core::ErrorKind;
use switchboard_service::Service;
use switchboard_service::ipc::IpcError;
use switchboard_service::mcp::{ImportPreview, ImportSource, McpEdited, McpOverview, McpServerInfo, ServerConfig};
use tauri::State;

#[tauri::command]
pub async fn mcp_servers(service: State<'_, Service>) -> Result<McpOverview> {
    logged("mcp_servers", async move { service.mcp_servers().map_err(ipc) }).await
}

/// Adds or replaces an MCP server. A command line runs only after the person agrees to it in a
/// native dialog: adding a server from the page is never enough to run a process.
#[tauri::command]
pub async fn mcp_add(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
    config: ServerConfig,
) -> Result<McpServerInfo> {
    logged("mcp_add", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        asking(move || async move { s.mcp_add(&name, config, confirm.0.as_ref()).await }).await
    })
    .await
}

/// Edits a server (its name too, if no other server has the new one). As when adding, a changed
/// command line runs only after the person agrees in a native dialog; a call the server was
/// running is stopped with a notice.
#[tauri::command]
pub async fn mcp_edit(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
    new_name: String,
    config: ServerConfig,
) -> Result<McpEdited> {
    logged("mcp_edit", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        asking(move || async move { s.mcp_edit(&name, &new_name, config, confirm.0.as_ref()).await }).await
    })
    .await
}

#[tauri::command]
pub async fn mcp_remove(service: State<'_, Service>, name: String) -> Result<McpOverview> {
    logged("mcp_remove", async move {
        service.mcp_remove(&name).await.map_err(ipc)?;
        service.mcp_servers().map_err(ipc)
    })
    .await
}

/// Enables (asking natively about a command not yet allowed) or disables a server.
#[tauri::command]
pub async fn mcp_set_enabled(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
    enabled: bool,
) -> Result<McpServerInfo> {
    logged("mcp_set_enabled", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        asking(move || async move { s.mcp_set_enabled(&name, enabled, confirm.0.as_ref()).await }).await
    })
    .await
}

/// Shows a waiting server's command line in a native dialog and runs it if the person agrees.
#[tauri::command]
pub async fn mcp_approve(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
) -> Result<McpServerInfo> {
    logged("mcp_approve", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        asking(move || async move { s.mcp_approve(&name, confirm.0.as_ref()).await }).await
    })
    .await
}

#[tauri::command]
pub async fn mcp_restart(service: State<'_, Service>, name: String) -> Result<McpServerInfo> {
    logged("mcp_restart", async move { service.mcp_restart(&name).await.map_err(ipc) }).await
}

/// Offers tools whose definitions changed once the person agrees in a native dialog.
#[tauri::command]
pub async fn mcp_approve_tools(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
) -> Result<McpServerInfo> {
    logged("mcp_approve_tools", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        blocking(move || s.mcp_approve_tools(&name, confirm.0.as_ref())).await
    })
    .await
}

/// Signs in to a remote MCP server that asks for it; resolves once the person finished in the
/// browser (or after five minutes).
#[tauri::command]
pub async fn mcp_sign_in(
    service: State<'_, Service>,
    opener: State<'_, Opener>,
    name: String,
) -> Result<McpServerInfo> {
    logged("mcp_sign_in", async move {
        service.mcp_sign_in(&name, &SystemBrowser(opener.inner().clone())).await.map_err(ipc)
    })
    .await
}

#[tauri::command]
pub async fn mcp_sign_out(service: State<'_, Service>, name: String) -> Result<McpServerInfo> {
    logged("mcp_sign_out", async move { service.mcp_sign_out(&name).await.map_err(ipc) }).await
}

/// The other apps' MCP configs found on this computer (Claude Desktop, Cursor).
#[tauri::command]
pub async fn mcp_import_sources(service: State<'_, Service>) -> Result<Vec<ImportSource>> {
    logged("mcp_import_sources", async move { Ok(service.mcp_import_sources()) }).await
}

/// What importing another app's config would add. The page names the app, never a path.
#[tauri::command]
pub async fn mcp_import_preview(service: State<'_, Service>, app: String) -> Result<ImportPreview> {
    logged("mcp_import_preview", async move {
        let path = import_path(&service, &app)?;
        service.mcp_import_preview(&path).map_err(ipc)
    })
    .await
}

/// Imports another app's servers; their command lines are shown together in a native dialog.
#[tauri::command]
pub async fn mcp_import(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    app: String,
) -> Result<ImportPreview> {
    logged("mcp_import", async move {
        let path = import_path(&service, &app)?;
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        asking(move || async move { s.mcp_import(&path, confirm.0.as_ref()).await }).await
    })
    .await
}

/// What adding the servers in pasted JSON would add.
#[tauri::command]
pub async fn mcp_paste_preview(service: State<'_, Service>, text: String) -> Result<ImportPreview> {
    logged("mcp_paste_preview", async move { service.mcp_paste_preview(&text).map_err(ipc) }).await
}

/// Adds the servers in pasted JSON; their command lines are shown together in a native dialog.
#[tauri::command]
pub async fn mcp_paste(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    text: String,
) -> Result<ImportPreview> {
    logged("mcp_paste", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        asking(move || async move { s.mcp_paste(&text, confirm.0.as_ref()).await }).await
    })
    .await
}

/// The path of the config another app keeps, as the service found it; `NotFound` for an app it
/// did not find.
fn import_path(service: &Service, app: &str) -> Result<std::path::PathBuf> {
    service.mcp_import_sources().into_iter().find(|s| s.app == app).map(|s| s.path.into()).ok_or_else(|| IpcError {
        kind: ErrorKind::NotFound,
        message: format!("No MCP config of '{app}' was found on this computer."),
        retryable: false,
    })
}
