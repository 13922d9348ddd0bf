//! The data folder, exports, and what the system opens for the person (a link, the exports
//! folder).
//!
//! Invariant: the opener gets only checked links and the service's own folder, never a path from
//! the page.

use super::{Result, blocking, ipc, logged};
use crate::platform::opener::Opener;
use switchboard_service::Service;
use switchboard_service::export::ExportFormat;
use switchboard_service::ipc::DataInfo;
use tauri::State;

#[tauri::command]
pub async fn data_info(service: State<'_, Service>) -> Result<DataInfo> {
    logged("data_info", async move { Ok(service.data_info()) }).await
}

#[tauri::command]
pub async fn export_all(service: State<'_, Service>) -> Result<String> {
    logged("export_all", async move {
        let s = service.inner().clone();
        blocking(move || s.export_all_to_file()).await
    })
    .await
}

#[tauri::command]
pub async fn export_conversation(service: State<'_, Service>, id: String, format: ExportFormat) -> Result<String> {
    logged("export_conversation", async move {
        let s = service.inner().clone();
        blocking(move || s.export_conversation_to_file(&id, format)).await
    })
    .await
}

/// Shows the exports folder in the system's file manager. The folder is the service's own, never
/// a path from the page.
#[tauri::command]
pub async fn open_exports_folder(service: State<'_, Service>, opener: State<'_, Opener>) -> Result<()> {
    logged("open_exports_folder", async move {
        let dir = service.exports_dir().map_err(ipc)?;
        opener.open(format!("file://{}", dir.display()), "The folder").await
    })
    .await
}

/// Opens a link in the person's browser or mail program after checking it in Rust
/// (`switchboard_service::links`): http, https and mailto only, nothing hidden in it.
#[tauri::command]
pub async fn open_url(opener: State<'_, Opener>, url: String) -> Result<()> {
    logged("open_url", async move {
        let url = switchboard_service::links::external_url(&url).map_err(ipc)?;
        opener.open(url, "The link").await
    })
    .await
}
