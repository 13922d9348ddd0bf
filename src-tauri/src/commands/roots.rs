//! The folders MCP servers are told of (roots): every server's and each server's own. A folder is
//! added only as the person chose it in the native folder dialog; the page may remove one (which
//! only narrows what servers are told) but never names one to add.
//!
//! Invariant: the path added comes from the native dialog, never from the page's arguments.

use super::{Result, blocking, ipc, logged};
use crate::platform::dialog::{FileDialog, FilePicker};
use std::path::PathBuf;
use switchboard_core::ErrorKind;
use switchboard_service::Service;
use tauri::State;

fn shown(roots: Vec<PathBuf>) -> Vec<String> {
    roots.into_iter().map(|p| p.display().to_string()).collect()
}

/// The roots of `server` (its own), or every server's when `server` is absent.
#[tauri::command]
pub async fn mcp_roots(service: State<'_, Service>, server: Option<String>) -> Result<Vec<String>> {
    logged("mcp_roots", async move { service.mcp_roots(server.as_deref()).map(shown).map_err(ipc) }).await
}

/// Asks for a folder in the native dialog and adds it to the roots of `server` (or every
/// server's); a closed dialog is `Cancelled` and changes nothing. Returns the list.
#[tauri::command]
pub async fn mcp_add_root(
    service: State<'_, Service>,
    picker: State<'_, FilePicker>,
    server: Option<String>,
) -> Result<Vec<String>> {
    logged("mcp_add_root", async move {
        let (s, pick) = (service.inner().clone(), picker.inner().clone());
        blocking(move || {
            let title = match &server {
                Some(name) => format!("A folder the MCP server “{name}” may work in"),
                None => "A folder every MCP server may work in".to_owned(),
            };
            let Some(folder) = pick.pick(&FileDialog::Folder { title }) else {
                return Err(switchboard_service::Error::new(
                    ErrorKind::Cancelled,
                    "No folder was added: none was chosen.",
                ));
            };
            let mut roots = s.mcp_roots(server.as_deref())?;
            if !roots.contains(&folder) {
                roots.push(folder);
            }
            s.mcp_set_roots(server.as_deref(), roots)?;
            s.mcp_roots(server.as_deref()).map(shown)
        })
        .await
    })
    .await
}

/// Removes `path` from the roots of `server` (or every server's). Returns the list.
#[tauri::command]
pub async fn mcp_remove_root(service: State<'_, Service>, server: Option<String>, path: String) -> Result<Vec<String>> {
    logged("mcp_remove_root", async move {
        let s = service.inner().clone();
        blocking(move || {
            let roots: Vec<PathBuf> =
                s.mcp_roots(server.as_deref())?.into_iter().filter(|p| p.display().to_string() != path).collect();
            s.mcp_set_roots(server.as_deref(), roots)?;
            s.mcp_roots(server.as_deref()).map(shown)
        })
        .await
    })
    .await
}
