//! Attaching files to the next message: the native picker (`attach_pick`), the page's chunked
//! uploads of what the person pasted or dropped (`upload_*`), and what a sent or waiting
//! attachment shows (`attachment_preview`, `attachment_thumbnail`).
//!
//! Invariants: a path is only ever one the person chose in the native dialog (the page gets the
//! attachments, never a path); each upload call carries at most one chunk (the isolation hook
//! bounds a string to 1 MiB of characters); reading, sniffing and thumbnailing run on blocking
//! threads (the service's), never on the async workers.

use super::{Result, blocking, ipc, logged};
use crate::platform::dialog::{FileDialog, FilePicker};
use switchboard_core::Attachment;
use switchboard_service::Service;
use switchboard_service::attachments::AttachmentPreview;
use switchboard_service::ipc::{AttachRefusal, PickedAttachments};
use tauri::State;

/// The most files one pick attaches (the rest are refused with a reason).
pub const MAX_PICKED: usize = 20;

/// Asks the person for files in the native dialog (several at once: images, PDFs, text files)
/// and attaches each; a cancelled dialog attaches nothing.
#[tauri::command]
pub async fn attach_pick(service: State<'_, Service>, picker: State<'_, FilePicker>) -> Result<PickedAttachments> {
    logged("attach_pick", async move {
        let pick = picker.inner().clone();
        let paths = blocking(move || Ok(pick.pick_all(&FileDialog::Attachments))).await?;
        let mut picked = PickedAttachments::default();
        for (i, path) in paths.iter().enumerate() {
            let name = path.file_name().map_or_else(|| "file".to_owned(), |n| n.to_string_lossy().into_owned());
            if i >= MAX_PICKED {
                let message = format!("Not attached: one pick attaches at most {MAX_PICKED} files.");
                picked.refused.push(AttachRefusal { name, message });
                continue;
            }
            match service.attach_file(path).await {
                Ok(a) => picked.attached.push(a),
                Err(e) => picked.refused.push(AttachRefusal { name, message: ipc(e).message }),
            }
        }
        Ok(picked)
    })
    .await
}

/// Starts an upload of `size` bytes named `name` (what the person pasted or dropped); returns its id.
#[tauri::command]
pub async fn upload_begin(service: State<'_, Service>, name: String, size: u64) -> Result<String> {
    logged("upload_begin", async move { service.upload_begin(&name, size).map_err(ipc) }).await
}

/// The next chunk of upload `id`, base64 (at most 1 MiB of characters).
#[tauri::command]
pub async fn upload_chunk(service: State<'_, Service>, id: String, data: String) -> Result<()> {
    logged("upload_chunk", async move {
        let s = service.inner().clone();
        blocking(move || s.upload_chunk(&id, &data)).await.map(drop)
    })
    .await
}

/// Ends upload `id`: the bytes are checked, stored and described.
#[tauri::command]
pub async fn upload_finish(service: State<'_, Service>, id: String) -> Result<Attachment> {
    logged("upload_finish", async move { service.upload_finish(&id).await.map_err(ipc) }).await
}

/// Drops upload `id` and what it received.
#[tauri::command]
pub async fn upload_cancel(service: State<'_, Service>, id: String) -> Result<()> {
    logged("upload_cancel", async move {
        service.upload_cancel(&id);
        Ok(())
    })
    .await
}

/// What the preview shows: the image (at most 2048 px), a text file's or a PDF's text.
#[tauri::command]
pub async fn attachment_preview(service: State<'_, Service>, id: String) -> Result<AttachmentPreview> {
    logged("attachment_preview", async move { service.attachment_preview(&id).await.map_err(ipc) }).await
}

/// An image attachment's thumbnail as a data URL (`None` for other kinds).
#[tauri::command]
pub async fn attachment_thumbnail(service: State<'_, Service>, id: String) -> Result<Option<String>> {
    logged("attachment_thumbnail", async move {
        let s = service.inner().clone();
        blocking(move || s.attachment_thumbnail(&id)).await
    })
    .await
}
