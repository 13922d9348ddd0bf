//! Attached files: storing one (its bytes as a content-addressed blob, see `crate::blobs`, and a
//! row of what it is), reading it back, linking a person's message to its files in the
//! transaction that writes the message, reading the files of a page of messages in one query,
//! and collecting the files no message uses any more.
//!
//! Invariants: an `attachments` row exists only once its blob is in place (the blob is published
//! inside the transaction that writes the row); a row that a message names is never deleted; a
//! row no message names is deleted (with its blob) only once older than the grace period, so a
//! file attached in the composer and not yet sent survives; the metadata of a row and its text
//! never change once written (only `created_at` moves when the file is attached again, and a
//! missing thumbnail or dimension may be filled in).

use super::{Store, now_millis};
use crate::blobs::{is_sha256_hex, sha256_hex};
use crate::error::{Error, Result};
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior};
use std::collections::HashSet;
use std::time::{Duration, SystemTime};
use switchboard_core::{Attachment, AttachmentKind};

/// The most files one message may carry.
pub const MAX_ATTACHMENTS_PER_MESSAGE: usize = 100;

/// The largest thumbnail kept with an attachment.
pub const THUMBNAIL_MAX_BYTES: usize = 64 * 1024;

/// The longest attachment name kept (a file name, or an MCP resource's URI), in bytes.
pub const NAME_MAX_BYTES: usize = 4096;

/// How long a file no message uses is kept (a file attached in the composer and not yet sent):
/// the grace the store's own collections (on open, after deletes) use.
pub const ATTACHMENT_GRACE: Duration = Duration::from_secs(24 * 3600);

/// A file to store: its bytes and what the caller found out about them.
#[derive(Clone, Debug)]
pub struct NewAttachment<'a> {
    /// The original bytes.
    pub bytes: &'a [u8],
    /// Its name as attached (never a path), or a resource's URI.
    pub name: &'a str,
    /// The media type, as sniffed from the bytes.
    pub mime_type: &'a str,
    /// How it is sent.
    pub kind: AttachmentKind,
    /// An image's width in pixels.
    pub width: Option<u32>,
    /// An image's height in pixels.
    pub height: Option<u32>,
    /// A PDF's page count.
    pub pages: Option<u32>,
    /// Text extracted from it (a PDF's text layer, a text file's text): searchable, and what a
    /// model that reads no PDFs gets.
    pub text: Option<String>,
    /// Why `text` is not all of the file's (a PDF whose extraction stopped early).
    pub text_note: Option<String>,
    /// A small PNG or JPEG (at most [`THUMBNAIL_MAX_BYTES`]).
    pub thumbnail: Option<Vec<u8>>,
}

/// The columns [`attachment_from_row`] reads, in order, from `attachments a` (the name from
/// `name_column`).
pub(crate) fn attachment_columns(name_column: &str) -> String {
    format!("a.id, {name_column}, a.mime_type, a.kind, a.size, a.width, a.height, a.pages, a.text_note")
}

/// Reads an [`Attachment`] from columns `at..at + 9` (see [`attachment_columns`]).
pub(crate) fn attachment_from_row(r: &Row<'_>, at: usize) -> rusqlite::Result<Attachment> {
    let kind: String = r.get(at + 3)?;
    Ok(Attachment {
        id: r.get(at)?,
        name: r.get(at + 1)?,
        mime_type: r.get(at + 2)?,
        kind: parse_kind(&kind).ok_or_else(|| {
            rusqlite::Error::FromSqlConversionFailure(at + 3, Type::Text, format!("unknown kind '{kind}'").into())
        })?,
        size: r.get::<_, i64>(at + 4)?.max(0) as u64,
        width: r.get(at + 5)?,
        height: r.get(at + 6)?,
        pages: r.get(at + 7)?,
        text_note: r.get(at + 8)?,
    })
}

/// The stored name of a kind.
pub(crate) fn kind_name(kind: AttachmentKind) -> &'static str {
    match kind {
        AttachmentKind::Image => "image",
        AttachmentKind::Pdf => "pdf",
        AttachmentKind::Text => "text",
    }
}

pub(crate) fn parse_kind(name: &str) -> Option<AttachmentKind> {
    Some(match name {
        "image" => AttachmentKind::Image,
        "pdf" => AttachmentKind::Pdf,
        "text" => AttachmentKind::Text,
        _ => return None,
    })
}

/// Checks what [`Store::put_attachment`] and an import keep: a name, a media type, a thumbnail
/// within its bound.
pub(crate) fn check_new(name: &str, mime_type: &str, thumbnail: Option<usize>) -> std::result::Result<(), String> {
    if name.trim().is_empty() {
        return Err("an attached file needs a name".to_owned());
    }
    if name.len() > NAME_MAX_BYTES {
        return Err(format!("an attached file's name is longer than {NAME_MAX_BYTES} bytes"));
    }
    if mime_type.trim().is_empty() || mime_type.len() > 255 {
        return Err(format!("'{name}' has no usable media type"));
    }
    if thumbnail.is_some_and(|n| n > THUMBNAIL_MAX_BYTES) {
        return Err(format!("the thumbnail of '{name}' is larger than {} KB", THUMBNAIL_MAX_BYTES / 1024));
    }
    Ok(())
}

impl Store {
    /// Stores a file: its bytes once under their SHA-256 (however often it is attached), and a
    /// row of what it is. Attaching the same bytes again stores nothing new (it fills in a
    /// thumbnail or dimensions the first time lacked, and restarts the grace period); the
    /// returned reference carries the name given now. Nothing is stored when it fails.
    pub fn put_attachment(&self, new: NewAttachment<'_>) -> Result<Attachment> {
        check_new(new.name, new.mime_type, new.thumbnail.as_ref().map(Vec::len)).map_err(Error::Invalid)?;
        let id = sha256_hex(new.bytes);
        // The slow part (writing the file) runs before the database is held.
        let staged = self.inner.blobs.stage(&id, new.bytes)?;
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Published while the write lock is held: a collection cannot remove it between the
        // rename and the row (it takes the same lock).
        self.inner.blobs.publish(staged)?;
        tx.execute(
            "INSERT INTO attachments (id, name, mime_type, kind, size, width, height, pages, text, thumbnail,
                                      created_at, text_note)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
             ON CONFLICT (id) DO UPDATE SET
                 created_at = MAX(created_at, excluded.created_at),
                 thumbnail = COALESCE(thumbnail, excluded.thumbnail),
                 width = COALESCE(width, excluded.width),
                 height = COALESCE(height, excluded.height),
                 pages = COALESCE(pages, excluded.pages)",
            rusqlite::params![
                id,
                new.name,
                new.mime_type,
                kind_name(new.kind),
                new.bytes.len() as i64,
                new.width,
                new.height,
                new.pages,
                new.text,
                new.thumbnail,
                now_millis(),
                new.text_note,
            ],
        )?;
        let mut stored = read_attachment(&tx, &id)?.ok_or_else(|| Error::not_found("attachment", &id))?;
        tx.commit()?;
        stored.name = new.name.to_owned();
        Ok(stored)
    }

    /// The attachment `id` (under the name it was first attached with), if stored.
    pub fn attachment(&self, id: &str) -> Result<Option<Attachment>> {
        read_attachment(&self.conn(), id)
    }

    /// The bytes of the attachment `id`, checked against its SHA-256. A file missing from the
    /// data folder or changed there is [`Error::AttachmentMissing`] or
    /// [`Error::AttachmentDamaged`], naming it.
    pub fn attachment_bytes(&self, id: &str) -> Result<Vec<u8>> {
        let found = self.attachment(id)?.ok_or_else(|| Error::not_found("attachment", id))?;
        self.inner.blobs.read(&found.id, found.size, &found.name)
    }

    /// The text extracted from the attachment `id`, if any.
    pub fn attachment_text(&self, id: &str) -> Result<Option<String>> {
        self.attachment_column(id, "text")
    }

    /// The thumbnail of the attachment `id`, if it has one.
    pub fn attachment_thumbnail(&self, id: &str) -> Result<Option<Vec<u8>>> {
        self.attachment_column(id, "thumbnail")
    }

    /// One optional column of an attachment (`column` is a fixed name, never input).
    fn attachment_column<T: rusqlite::types::FromSql>(&self, id: &str, column: &str) -> Result<Option<T>> {
        let conn = self.conn();
        let found: Option<Option<T>> = conn
            .prepare_cached(&format!("SELECT {column} FROM attachments WHERE id = ?1"))?
            .query_row([id], |r| r.get(0))
            .optional()?;
        found.ok_or_else(|| Error::not_found("attachment", id))
    }

    /// Deletes the attachments no message uses that were last attached more than `grace` ago,
    /// rows and files, and files no row names older than `grace` (left by an attach or an
    /// import that failed after writing). Returns how many files went. The store runs it when
    /// it opens and after deletes, with [`ATTACHMENT_GRACE`].
    pub fn collect_attachments(&self, grace: Duration) -> Result<usize> {
        let grace_ms = i64::try_from(grace.as_millis()).unwrap_or(i64::MAX);
        let cutoff_ms = now_millis().saturating_sub(grace_ms);
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let unused: Vec<String> = {
            let mut stmt = tx.prepare_cached(
                "DELETE FROM attachments WHERE created_at <= ?1
                   AND NOT EXISTS (SELECT 1 FROM message_attachments ma WHERE ma.attachment_id = attachments.id)
                 RETURNING id",
            )?;
            stmt.query_map([cutoff_ms], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
        };
        // Files go while the write lock is held, so an attach of the same bytes waits; a commit
        // that failed after this leaves rows without files, which the next attach writes again.
        for id in unused.iter().filter(|id| is_sha256_hex(id)) {
            self.inner.blobs.remove(id)?;
        }
        let known: HashSet<String> = tx
            .prepare_cached("SELECT id FROM attachments")?
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        let cutoff = SystemTime::now().checked_sub(grace).unwrap_or(SystemTime::UNIX_EPOCH);
        let strays = self.inner.blobs.sweep(&known, cutoff);
        tx.commit()?;
        if !unused.is_empty() || strays > 0 {
            tracing::info!(unused = unused.len(), strays, "removed attachments no message uses");
        }
        Ok(unused.len() + strays)
    }

    /// [`Store::collect_attachments`] with [`ATTACHMENT_GRACE`] after a delete: a failure is
    /// logged, never the delete's error (what was deleted stays deleted; the next collection
    /// tries again).
    pub(crate) fn collect_after_delete(&self) {
        if let Err(e) = self.collect_attachments(ATTACHMENT_GRACE) {
            tracing::warn!("could not remove attachments no message uses: {e}");
        }
    }
}

/// The attachment row `id`, under the name it was first attached with.
fn read_attachment(conn: &Connection, id: &str) -> Result<Option<Attachment>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {} FROM attachments a WHERE a.id = ?1", attachment_columns("a.name")))?
        .query_row([id], |r| attachment_from_row(r, 0))
        .optional()?)
}

/// Writes `message_id`'s attachments, in order, under their names; each must be stored. Run in
/// the transaction that writes the message.
pub(crate) fn link(conn: &Connection, message_id: &str, attachments: &[Attachment]) -> Result<()> {
    if attachments.len() > MAX_ATTACHMENTS_PER_MESSAGE {
        return Err(Error::Invalid(format!(
            "A message can carry at most {MAX_ATTACHMENTS_PER_MESSAGE} files; this one has {}. Remove some.",
            attachments.len()
        )));
    }
    let mut exists = conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM attachments WHERE id = ?1)")?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO message_attachments (message_id, position, attachment_id, name) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (position, a) in attachments.iter().enumerate() {
        if !exists.query_row([&a.id], |r| r.get::<_, bool>(0))? {
            return Err(Error::NotFound { what: "attached file", id: a.name.clone() });
        }
        check_new(&a.name, &a.mime_type, None).map_err(Error::Invalid)?;
        insert.execute(rusqlite::params![message_id, position as i64, a.id, a.name])?;
    }
    Ok(())
}

/// Copies `from`'s attachment references to `to` (a branch copy: the bytes are shared).
pub(crate) fn copy_links(conn: &Connection, from: &str, to: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO message_attachments (message_id, position, attachment_id, name)
         SELECT ?2, position, attachment_id, name FROM message_attachments WHERE message_id = ?1",
    )?
    .execute([from, to])?;
    Ok(())
}

/// The attachments of one message, in order, under the names they were attached with.
pub(crate) fn of_message(conn: &Connection, message_id: &str) -> Result<Vec<Attachment>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM message_attachments ma JOIN attachments a ON a.id = ma.attachment_id
         WHERE ma.message_id = ?1 ORDER BY ma.position",
        attachment_columns("ma.name")
    ))?;
    Ok(stmt.query_map([message_id], |r| attachment_from_row(r, 0))?.collect::<rusqlite::Result<_>>()?)
}
