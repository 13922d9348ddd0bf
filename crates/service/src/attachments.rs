//! Attaching files: a file the person picked ([`Service::attach_file`]), bytes a shell holds
//! ([`Service::attach_bytes`]), or bytes the page sends in chunks (`upload_*`); each is
//! inspected by `switchboard-media` and stored by the store's `put_attachment`. Also what the
//! UI shows of one ([`Service::attachment_preview`], [`Service::attachment_thumbnail`]) and
//! what a request carries of the attachments of a message ([`attachment_parts`]).
//!
//! Invariants: a file is refused by its size before it is read, and read at most to the size
//! it had when it was looked at: one that vanishes or changes meanwhile is an error, never a
//! half-read attachment. Inspection, hashing and image fitting run on a blocking thread, never
//! on the async runtime. Uploads are bounded in number, total bytes, chunk size and idle time.
//! Nothing is stored unless the whole file was read and accepted.

use crate::{Error, Result, Service, lock};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Serialize;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};
use switchboard_core::{Attachment, AttachmentKind, ErrorKind, Part, ToolImage};
use switchboard_media::{ImageLimits, MAX_FILE_BYTES, MediaError, fit_image, image_mime, size_text};
use switchboard_store::{NewAttachment, Store};

/// The most decoded bytes one upload chunk carries.
pub const UPLOAD_CHUNK_MAX: usize = 1024 * 1024;
/// The most bytes one request of the desktop's `upload` scheme carries ([`Service::upload_bytes`]).
pub const UPLOAD_BODY_MAX: usize = 8 * 1024 * 1024;
/// The most uploads open at once.
pub const MAX_UPLOADS: usize = 8;
/// The most bytes all open uploads may declare together.
pub const UPLOADS_TOTAL_MAX: u64 = 2 * MAX_FILE_BYTES;
/// An upload no chunk reached for this long is dropped.
pub const UPLOAD_IDLE: Duration = Duration::from_secs(5 * 60);
/// The most text a preview carries.
pub const PREVIEW_TEXT_MAX: usize = 1024 * 1024;
/// The longest edge of a preview image.
pub const PREVIEW_IMAGE_EDGE: u32 = 2048;

/// What the preview of an attachment shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachmentPreview {
    /// The attachment.
    pub attachment: Attachment,
    /// A text file's text, or a PDF's extracted text (at most 1 MiB); `null` for an image or a
    /// PDF without a text layer.
    pub text: Option<String>,
    /// Whether `text` was cut at 1 MiB.
    pub truncated: bool,
    /// An image as a `data:` URL, at most 2048 pixels a side.
    pub image: Option<String>,
}

/// Uploads in progress.
#[derive(Default)]
pub(crate) struct Uploads {
    open: Mutex<HashMap<String, Upload>>,
    next: AtomicU64,
}

struct Upload {
    name: String,
    size: u64,
    bytes: Vec<u8>,
    touched: Instant,
}

impl Uploads {
    /// The open uploads, expired ones dropped.
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, Upload>> {
        let mut open = lock(&self.open);
        open.retain(|_, u| u.touched.elapsed() < UPLOAD_IDLE);
        open
    }
}

fn bad(message: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadRequest, message)
}

fn media(e: MediaError) -> Error {
    bad(e.to_string())
}

fn internal(e: tokio::task::JoinError) -> Error {
    Error::new(ErrorKind::Internal, format!("Attaching stopped: {e}"))
}

/// A file name for display and storage: the last component of `name` (a page may send a path),
/// trimmed; "attachment" when nothing is left.
fn file_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name).trim();
    let cleaned: String = last.chars().filter(|c| !c.is_control()).take(255).collect();
    if cleaned.is_empty() { "attachment".to_owned() } else { cleaned }
}

/// Inspects `bytes` and stores them. Blocking. The bytes are shared with a PDF's parser thread,
/// never copied for it: a 20 MB PDF is held once while it is read.
pub(crate) fn ingest(store: &Store, name: &str, bytes: Vec<u8>) -> Result<Attachment> {
    let bytes = std::sync::Arc::new(bytes);
    let found = switchboard_media::inspect(name, std::sync::Arc::clone(&bytes)).map_err(media)?;
    Ok(store.put_attachment(NewAttachment {
        bytes: &bytes,
        name,
        mime_type: &found.mime_type,
        kind: found.kind,
        width: found.width,
        height: found.height,
        pages: found.pages,
        text_note: found.text_cut.map(|cut| cut.to_string()),
        text: found.text,
        thumbnail: found.thumbnail,
    })?)
}

/// Size and modification time: what says a file is still the one looked at.
fn stamp(meta: &std::fs::Metadata) -> (u64, Option<SystemTime>) {
    (meta.len(), meta.modified().ok())
}

/// Reads the file at `path`: refused by size before reading, read at most to the size it had,
/// and checked unchanged afterwards. Blocking.
fn read_file(path: &Path, name: &str) -> Result<Vec<u8>> {
    read_file_then(path, name, || ())
}

/// [`read_file`], running `during` once the file is open (tests change the file there).
fn read_file_then(path: &Path, name: &str, during: impl FnOnce()) -> Result<Vec<u8>> {
    let gone = || {
        Error::new(
            ErrorKind::NotFound,
            format!("{name} is no longer there (moved or deleted after it was picked): pick it again."),
        )
    };
    let changed = || bad(format!("{name} changed while it was being read: attach it again once it is saved."));
    let unreadable = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => gone(),
        _ => Error::new(ErrorKind::Storage, format!("{name} can't be read: {e}.")),
    };
    let before = std::fs::metadata(path).map_err(unreadable)?;
    if !before.is_file() {
        return Err(bad(format!("{name} is not a file: pick a file.")));
    }
    if before.len() > MAX_FILE_BYTES {
        return Err(media(MediaError::TooLarge {
            name: name.to_owned(),
            what: "a file",
            size: before.len(),
            limit: MAX_FILE_BYTES,
        }));
    }
    let file = std::fs::File::open(path).map_err(unreadable)?;
    if stamp(&file.metadata().map_err(unreadable)?) != stamp(&before) {
        return Err(changed());
    }
    during();
    let mut bytes = Vec::with_capacity(before.len() as usize);
    // One byte more than expected tells a file that grew.
    file.take(before.len() + 1).read_to_end(&mut bytes).map_err(unreadable)?;
    if bytes.len() as u64 != before.len() {
        return Err(changed());
    }
    let after = std::fs::metadata(path).map_err(unreadable)?;
    if stamp(&after) != stamp(&before) {
        return Err(changed());
    }
    Ok(bytes)
}

/// `bytes` as a `data:` URL of type `mime`.
fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", BASE64.encode(bytes))
}

impl Service {
    /// Attaches the file at `path` (one the person picked): read within the size limit, checked
    /// unchanged while read, inspected and stored.
    pub async fn attach_file(&self, path: &Path) -> Result<Attachment> {
        let store = self.inner.store.clone();
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || {
            let name = file_name(&path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
            let bytes = read_file(&path, &name)?;
            ingest(&store, &name, bytes)
        })
        .await
        .map_err(internal)?
    }

    /// Attaches `bytes` a shell holds (pasted, read from stdin) under `name`.
    pub async fn attach_bytes(&self, name: &str, bytes: Vec<u8>) -> Result<Attachment> {
        let store = self.inner.store.clone();
        let name = file_name(name);
        tokio::task::spawn_blocking(move || ingest(&store, &name, bytes)).await.map_err(internal)?
    }

    /// Opens an upload of a file of `size` bytes called `name`; returns its id. Refused when the
    /// file is over the largest size any kind takes, or too many or too large uploads are open.
    pub fn upload_begin(&self, name: &str, size: u64) -> Result<String> {
        let name = file_name(name);
        if size == 0 {
            return Err(media(MediaError::Empty { name }));
        }
        if size > MAX_FILE_BYTES {
            return Err(media(MediaError::TooLarge { name, what: "a file", size, limit: MAX_FILE_BYTES }));
        }
        let uploads = &self.inner.uploads;
        let mut open = uploads.open();
        if open.len() >= MAX_UPLOADS {
            return Err(bad(format!(
                "{MAX_UPLOADS} files are already being attached: wait for them before adding {name}."
            )));
        }
        let declared: u64 = open.values().map(|u| u.size).sum();
        if declared + size > UPLOADS_TOTAL_MAX {
            return Err(bad(format!(
                "{name} would make more than {} being attached at once: wait for the others first.",
                size_text(UPLOADS_TOTAL_MAX)
            )));
        }
        let id = format!("upload-{}", uploads.next.fetch_add(1, Ordering::Relaxed) + 1);
        open.insert(id.clone(), Upload { name, size, bytes: Vec::new(), touched: Instant::now() });
        Ok(id)
    }

    /// Adds a chunk (base64, at most [`UPLOAD_CHUNK_MAX`] bytes decoded) to the upload `id`;
    /// returns the bytes received so far. A chunk past the declared size ends the upload.
    pub fn upload_chunk(&self, id: &str, data: &str) -> Result<u64> {
        let too_large = || bad(format!("An upload chunk is larger than {}.", size_text(UPLOAD_CHUNK_MAX as u64)));
        if data.len() > UPLOAD_CHUNK_MAX.div_ceil(3) * 4 {
            self.upload_cancel(id);
            return Err(too_large());
        }
        let chunk = BASE64.decode(data).map_err(|e| {
            self.upload_cancel(id);
            bad(format!("An upload chunk is not base64: {e}."))
        })?;
        if chunk.len() > UPLOAD_CHUNK_MAX {
            self.upload_cancel(id);
            return Err(too_large());
        }
        self.upload_append(id, &chunk)
    }

    /// Adds `bytes` (at most [`UPLOAD_BODY_MAX`], as they came, not encoded) to the upload `id`:
    /// the desktop's `upload` scheme, whose request bodies reach the shell without crossing the
    /// page's IPC bridge. Returns the bytes received so far; past the declared size the upload ends.
    pub fn upload_bytes(&self, id: &str, bytes: &[u8]) -> Result<u64> {
        if bytes.len() > UPLOAD_BODY_MAX {
            self.upload_cancel(id);
            return Err(bad(format!("An upload request is larger than {}.", size_text(UPLOAD_BODY_MAX as u64))));
        }
        self.upload_append(id, bytes)
    }

    fn upload_append(&self, id: &str, chunk: &[u8]) -> Result<u64> {
        let mut open = self.inner.uploads.open();
        let upload = open.get_mut(id).ok_or_else(|| unknown_upload(id))?;
        if upload.bytes.len() as u64 + chunk.len() as u64 > upload.size {
            let name = open.remove(id).map(|u| u.name).unwrap_or_default();
            return Err(bad(format!("{name} sent more bytes than it said it has: attach it again.")));
        }
        if upload.bytes.capacity() == 0 {
            upload.bytes.reserve_exact(upload.size as usize);
        }
        upload.bytes.extend_from_slice(chunk);
        upload.touched = Instant::now();
        Ok(upload.bytes.len() as u64)
    }

    /// Completes the upload `id`: every declared byte must have arrived; then the file is
    /// inspected and stored like [`Service::attach_bytes`].
    pub async fn upload_finish(&self, id: &str) -> Result<Attachment> {
        let upload = self.inner.uploads.open().remove(id).ok_or_else(|| unknown_upload(id))?;
        if upload.bytes.len() as u64 != upload.size {
            return Err(bad(format!(
                "{} arrived incomplete ({} of {}): attach it again.",
                upload.name,
                size_text(upload.bytes.len() as u64),
                size_text(upload.size)
            )));
        }
        self.attach_bytes(&upload.name, upload.bytes).await
    }

    /// Drops the upload `id` (unknown: nothing to do).
    pub fn upload_cancel(&self, id: &str) {
        self.inner.uploads.open().remove(id);
    }

    /// What the preview of the attachment `id` shows: text (at most 1 MiB) or the image at most
    /// 2048 pixels a side.
    pub async fn attachment_preview(&self, id: &str) -> Result<AttachmentPreview> {
        let store = self.inner.store.clone();
        let id = id.to_owned();
        tokio::task::spawn_blocking(move || preview(&store, &id)).await.map_err(internal)?
    }

    /// The thumbnail of the attachment `id` as a `data:` URL (`None`: it has none).
    pub fn attachment_thumbnail(&self, id: &str) -> Result<Option<String>> {
        stored(&self.inner.store, id)?;
        let thumbnail = self.inner.store.attachment_thumbnail(id)?;
        Ok(thumbnail.map(|t| data_url(image_mime(&t).unwrap_or("image/png"), &t)))
    }
}

fn unknown_upload(id: &str) -> Error {
    Error::new(
        ErrorKind::NotFound,
        format!(
            "The upload {id} is not open (finished, cancelled, or idle for over 5 minutes): attach the file again."
        ),
    )
}

/// The stored attachment `id`, or an error the person can act on.
fn stored(store: &Store, id: &str) -> Result<Attachment> {
    store.attachment(id)?.ok_or_else(|| {
        Error::new(ErrorKind::NotFound, format!("The attached file {id} is no longer stored: attach it again."))
    })
}

/// See [`Service::attachment_preview`]. Blocking.
fn preview(store: &Store, id: &str) -> Result<AttachmentPreview> {
    let attachment = stored(store, id)?;
    let (mut text, mut truncated, mut image) = (None, false, None);
    match attachment.kind {
        AttachmentKind::Image => {
            let bytes = store.attachment_bytes(id)?;
            let limits = ImageLimits {
                max_edge: PREVIEW_IMAGE_EDGE,
                max_short_edge: None,
                max_pixels: u64::from(PREVIEW_IMAGE_EDGE).pow(2),
                max_bytes: 16 * 1024 * 1024,
            };
            let (mime, shown) = fit_image(&bytes, &attachment.mime_type, limits).map_err(media)?;
            image = Some(data_url(&mime, &shown));
        }
        AttachmentKind::Pdf | AttachmentKind::Text => {
            if let Some(mut full) = store.attachment_text(id)? {
                if full.len() > PREVIEW_TEXT_MAX {
                    let mut end = PREVIEW_TEXT_MAX;
                    while !full.is_char_boundary(end) {
                        end -= 1;
                    }
                    full.truncate(end);
                    truncated = true;
                }
                text = Some(full);
            }
        }
    }
    Ok(AttachmentPreview { attachment, text, truncated, image })
}

/// The parts a request to the API `api_kind` (a provider kind id) carries for `attachments`,
/// in order: images fitted to that API ([`ImageLimits::for_api`]), text files as text, PDFs as
/// PDFs when `pdf_ok` (the model reads them) and otherwise as their locally extracted text
/// with a note saying so (and, when extraction stopped early, which pages it holds and why). Blocking and CPU-bound (images are decoded and re-encoded when they
/// do not fit): call it where the turn is prepared, off the async runtime.
pub fn attachment_parts(store: &Store, attachments: &[Attachment], api_kind: &str, pdf_ok: bool) -> Result<Vec<Part>> {
    let limits = ImageLimits::for_api(api_kind);
    attachments
        .iter()
        .map(|a| {
            let name = a.name.clone();
            Ok(match a.kind {
                AttachmentKind::Image => {
                    let bytes = store.attachment_bytes(&a.id)?;
                    let (mime_type, fitted) = fit_image(&bytes, &a.mime_type, limits)
                        .map_err(|e| bad(format!("{name}: {e}")))?;
                    Part::Image { name, image: ToolImage { mime_type, data: BASE64.encode(fitted) } }
                }
                AttachmentKind::Pdf if pdf_ok => {
                    // The file's bytes are let go before the text is made shared (a copy), so a
                    // 20 MB PDF is held at most as two copies of its base64, never beside it.
                    let text = BASE64.encode(store.attachment_bytes(&a.id)?);
                    Part::Pdf { name, data: text.into() }
                }
                AttachmentKind::Pdf => {
                    let pages = a.pages.unwrap_or(0);
                    let (text, note) = match store.attachment_text(&a.id)? {
                        Some(text) => {
                            let mut note =
                                format!("text extracted locally from a {pages}-page PDF; the model cannot read PDFs");
                            if let Some(cut) = &a.text_note {
                                note.push_str("; ");
                                note.push_str(cut);
                            }
                            (text, note)
                        }
                        None => (
                            String::new(),
                            format!("a {pages}-page PDF that has no text layer (a scan?), so no text could be extracted; the model cannot read PDFs"),
                        ),
                    };
                    Part::Text { name, mime_type: a.mime_type.clone(), text, note: Some(note) }
                }
                AttachmentKind::Text => {
                    let text = match store.attachment_text(&a.id)? {
                        Some(text) => text,
                        None => String::from_utf8_lossy(&store.attachment_bytes(&a.id)?).into_owned(),
                    };
                    Part::Text { name, mime_type: a.mime_type.clone(), text, note: None }
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, bytes).unwrap();
        (dir, path)
    }

    #[test]
    fn a_file_read_unchanged_is_its_bytes() {
        let (_dir, path) = file_with(b"hello");
        assert_eq!(read_file(&path, "notes.txt").unwrap(), b"hello");
    }

    #[test]
    fn a_file_that_vanishes_while_read_is_an_error() {
        let (_dir, path) = file_with(b"hello");
        let err = read_file_then(&path, "notes.txt", || std::fs::remove_file(&path).unwrap()).unwrap_err();
        assert_eq!(err.kind, ErrorKind::NotFound);
        assert!(err.message.starts_with("notes.txt is no longer there"), "{}", err.message);
    }

    #[test]
    fn a_file_that_grows_or_is_rewritten_while_read_is_an_error() {
        let (_dir, path) = file_with(b"hello");
        let grow = || {
            let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
            std::io::Write::write_all(&mut f, b" and more").unwrap();
        };
        let err = read_file_then(&path, "notes.txt", grow).unwrap_err();
        assert!(err.message.contains("changed while it was being read"), "{}", err.message);
        // Same size, new contents and a new modification time.
        let rewrite = || {
            std::fs::write(&path, b"HELLO").unwrap();
            let later = SystemTime::now() + Duration::from_secs(5);
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(later).unwrap();
        };
        let err = read_file_then(&path, "notes.txt", rewrite).unwrap_err();
        assert!(err.message.contains("changed while it was being read"), "{}", err.message);
    }

    #[test]
    fn names_never_carry_a_path() {
        assert_eq!(file_name("../../etc/passwd"), "passwd");
        assert_eq!(file_name("C:\\Users\\me\\shot.png"), "shot.png");
        assert_eq!(file_name("  "), "attachment");
        assert_eq!(file_name("a\u{7}b.txt"), "ab.txt");
    }
}
