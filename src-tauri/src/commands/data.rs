//! The data folder, exports and imports of conversations, and what the system opens for the
//! person (a link, the exports folder).
//!
//! Invariant: the opener gets only checked links and folders the service owns or the person chose
//! in a native dialog; exports are saved and imports read only where the person chose in a native
//! file dialog, never at a path from the page.

use super::{Result, blocking, ipc, logged};
use crate::platform::dialog::{FileDialog, FilePicker};
use crate::platform::opener::Opener;
use switchboard_core::ErrorKind;
use switchboard_service::Service;
use switchboard_service::export::ExportFormat;
use switchboard_service::export::import::{ConversationImportFile, ConversationImportReport};
use switchboard_service::ipc::DataInfo;
use switchboard_service::openapi_docs::PickedFiles;
use tauri::State;

#[tauri::command]
pub async fn data_info(service: State<'_, Service>) -> Result<DataInfo> {
    logged("data_info", async move { Ok(service.data_info()) }).await
}

/// Every conversation as one JSON document, saved where the person chooses in the native save
/// dialog (a cancelled dialog is `Cancelled`); returns the path.
#[tauri::command]
pub async fn export_all(
    service: State<'_, Service>,
    picker: State<'_, FilePicker>,
    last: State<'_, LastExport>,
) -> Result<String> {
    logged("export_all", async move {
        let dialog = FileDialog::SaveExport {
            file_name: "switchboard-conversations.json".to_owned(),
            folder: service.exports_dir().ok(),
            extension: "json",
        };
        let path = save_to(&picker, dialog).await?;
        let s = service.inner().clone();
        let saved = blocking(move || s.export_all_to(&path)).await?;
        last.remember(&saved);
        Ok(saved)
    })
    .await
}

/// One conversation as Markdown (its current path) or JSON, saved where the person chooses in the
/// native save dialog (a cancelled dialog is `Cancelled`); returns the path.
#[tauri::command]
pub async fn export_conversation(
    service: State<'_, Service>,
    picker: State<'_, FilePicker>,
    last: State<'_, LastExport>,
    id: String,
    format: ExportFormat,
) -> Result<String> {
    logged("export_conversation", async move {
        let dialog = FileDialog::SaveExport {
            file_name: service.export_file_name(&id, format).map_err(ipc)?,
            folder: service.exports_dir().ok(),
            extension: if format == ExportFormat::Markdown { "md" } else { "json" },
        };
        let path = save_to(&picker, dialog).await?;
        let s = service.inner().clone();
        let saved = blocking(move || s.export_conversation_to(&id, format, &path)).await?;
        last.remember(&saved);
        Ok(saved)
    })
    .await
}

/// Asks the person where to save, in the native dialog.
async fn save_to(picker: &FilePicker, dialog: FileDialog) -> Result<std::path::PathBuf> {
    let pick = picker.clone();
    blocking(move || Ok(pick.pick(&dialog))).await?.ok_or_else(|| {
        ipc(switchboard_service::Error::new(ErrorKind::Cancelled, "Nothing was exported: no file was chosen."))
    })
}

/// Asks the person for a conversations export in the native file dialog and previews importing
/// it (the window gets a pick and the file's name, never its path); nothing is written.
#[tauri::command]
pub async fn preview_conversation_import(
    service: State<'_, Service>,
    picker: State<'_, FilePicker>,
    picks: State<'_, PickedFiles>,
) -> Result<ConversationImportFile> {
    logged("preview_conversation_import", async move {
        let pick = picker.inner().clone();
        let chosen = blocking(move || Ok(pick.pick(&FileDialog::ConversationsImport))).await?;
        let Some(path) = chosen else {
            return Err(ipc(switchboard_service::Error::new(ErrorKind::Cancelled, "No file was chosen.")));
        };
        let s = service.inner().clone();
        let read = path.clone();
        let preview = blocking(move || s.preview_import(&read)).await?;
        Ok(ConversationImportFile { file: picks.remember(path), preview })
    })
    .await
}

/// Imports the conversations of the file the person picked (by its pick), in one transaction;
/// conversations already present are skipped, never overwritten.
#[tauri::command]
pub async fn import_conversations(
    service: State<'_, Service>,
    picks: State<'_, PickedFiles>,
    pick: String,
) -> Result<ConversationImportReport> {
    logged("import_conversations", async move {
        let (path, _) = picks.path(&pick).map_err(ipc)?;
        let s = service.inner().clone();
        blocking(move || s.import_conversations(&path)).await
    })
    .await
}

/// Where the last export was saved, so "Open folder" shows the folder the person chose. Only
/// ever a path the native save dialog returned, never one from the page.
#[derive(Default)]
pub struct LastExport(std::sync::Mutex<Option<std::path::PathBuf>>);

impl LastExport {
    fn remember(&self, saved: &str) {
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(saved.into());
    }

    fn folder(&self) -> Option<std::path::PathBuf> {
        let last = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        last.as_ref().and_then(|p| p.parent()).map(std::path::Path::to_path_buf)
    }
}

/// Shows the folder of the last export (else the exports folder) in the system's file manager.
/// The folder is one the person chose in the native dialog or the service's own, never a path
/// from the page.
#[tauri::command]
pub async fn open_exports_folder(
    service: State<'_, Service>,
    opener: State<'_, Opener>,
    last: State<'_, LastExport>,
) -> Result<()> {
    logged("open_exports_folder", async move {
        let dir = match last.folder() {
            Some(dir) => dir,
            None => service.exports_dir().map_err(ipc)?,
        };
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
