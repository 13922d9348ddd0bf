//! Attached files in conversation records: each file a conversation's messages use, once, with
//! its metadata, extracted text, thumbnail and bytes (base64), and each message's references to
//! them in order.
//!
//! Invariants: a record's file is accepted only when its bytes decode, have the size it states
//! and hash to its id (SHA-256), so an import never stores a file under a wrong name; a message
//! refers only to files of its own record; files are written (staged) before the import's
//! transaction and published inside it, so a failed import leaves at most unnamed files, which
//! the next collection sweeps.

use super::{ConversationRecord, MessageRecord};
use crate::blobs::{Blobs, Staged, is_sha256_hex, sha256_hex};
use crate::error::{Error, Result};
use crate::model::Role;
use crate::store::attachments::{MAX_ATTACHMENTS_PER_MESSAGE, check_new, kind_name, parse_kind};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use switchboard_core::AttachmentKind;

/// A file a conversation's messages use, with its bytes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttachmentRecord {
    /// The SHA-256 of its bytes, lower-case hex (checked on import).
    pub id: String,
    /// The name it was first attached with.
    pub name: String,
    /// Its media type.
    pub mime_type: String,
    /// How it is sent.
    pub kind: AttachmentKind,
    /// Bytes (checked on import).
    pub size: u64,
    /// An image's width.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<u32>,
    /// An image's height.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<u32>,
    /// A PDF's page count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<u32>,
    /// The text extracted from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Why `text` is not all of the file's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_note: Option<String>,
    /// Its thumbnail, base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thumbnail: Option<String>,
    /// Unix millis it was last attached.
    pub created_at: i64,
    /// Its bytes, base64 (standard alphabet).
    pub data: String,
}

/// A message's reference to one of its record's files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageAttachmentRecord {
    /// The file's id (an [`AttachmentRecord::id`] of the same record).
    pub id: String,
    /// The name it was attached with to this message.
    pub name: String,
}

/// Whether a record's files hang together (see the module's invariants).
pub(super) fn check(r: &ConversationRecord) -> std::result::Result<(), String> {
    let mut ids = HashSet::new();
    for a in &r.attachments {
        if !is_sha256_hex(&a.id) {
            return Err(format!("the attached file '{}' has an id that is not a SHA-256 ('{}')", a.name, a.id));
        }
        if !ids.insert(a.id.as_str()) {
            return Err(format!("the attached file '{}' appears twice", a.name));
        }
        let thumbnail = a
            .thumbnail
            .as_deref()
            .map(|t| BASE64.decode(t).map_err(|e| format!("the thumbnail of '{}' is not base64: {e}", a.name)))
            .transpose()?;
        check_new(&a.name, &a.mime_type, thumbnail.as_ref().map(Vec::len))?;
        let bytes = decode(a)?;
        if bytes.len() as u64 != a.size {
            return Err(format!(
                "the attached file '{}' says it has {} bytes but its data holds {}: the export was changed or cut short",
                a.name,
                a.size,
                bytes.len()
            ));
        }
        if sha256_hex(&bytes) != a.id {
            return Err(format!(
                "the attached file '{}' does not match its SHA-256: the export was changed or damaged",
                a.name
            ));
        }
    }
    for m in &r.messages {
        check_message(m, &ids)?;
    }
    Ok(())
}

fn check_message(m: &MessageRecord, ids: &HashSet<&str>) -> std::result::Result<(), String> {
    if m.attachments.is_empty() {
        return Ok(());
    }
    if m.role != Role::User {
        return Err(format!("message '{}' is an answer but carries attached files", m.id));
    }
    if m.attachments.len() > MAX_ATTACHMENTS_PER_MESSAGE {
        return Err(format!("message '{}' carries more than {MAX_ATTACHMENTS_PER_MESSAGE} files", m.id));
    }
    for a in &m.attachments {
        if !ids.contains(a.id.as_str()) {
            return Err(format!("message '{}' refers to the file '{}', which the export does not hold", m.id, a.name));
        }
        check_new(&a.name, "-", None)?;
    }
    Ok(())
}

fn decode(a: &AttachmentRecord) -> std::result::Result<Vec<u8>, String> {
    BASE64.decode(&a.data).map_err(|e| format!("the data of the attached file '{}' is not base64: {e}", a.name))
}

/// Each message's references, in order, by message id.
type References = HashMap<String, Vec<MessageAttachmentRecord>>;

/// The references of conversation `id`'s messages, by message, in order; and the files they use,
/// without their bytes (see [`fill_data`]).
pub(super) fn read(conn: &Connection, id: &str) -> Result<(References, Vec<AttachmentRecord>)> {
    let mut refs: HashMap<String, Vec<MessageAttachmentRecord>> = HashMap::new();
    let mut stmt = conn.prepare_cached(
        "SELECT ma.message_id, ma.attachment_id, ma.name
         FROM message_attachments ma JOIN messages m ON m.id = ma.message_id
         WHERE m.conversation_id = ?1 ORDER BY m.seq, ma.position",
    )?;
    let rows = stmt.query_map([id], |r| {
        Ok((r.get::<_, String>(0)?, MessageAttachmentRecord { id: r.get(1)?, name: r.get(2)? }))
    })?;
    for row in rows {
        let (message_id, reference) = row?;
        refs.entry(message_id).or_default().push(reference);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT a.id, a.name, a.mime_type, a.kind, a.size, a.width, a.height, a.pages, a.text, a.thumbnail,
                a.created_at, a.text_note
         FROM attachments a
         WHERE a.id IN (SELECT ma.attachment_id FROM message_attachments ma JOIN messages m ON m.id = ma.message_id
                        WHERE m.conversation_id = ?1)
         ORDER BY a.id",
    )?;
    let rows = stmt.query_map([id], |r| {
        let kind: String = r.get(3)?;
        let thumbnail: Option<Vec<u8>> = r.get(9)?;
        Ok(AttachmentRecord {
            id: r.get(0)?,
            name: r.get(1)?,
            mime_type: r.get(2)?,
            // A kind this build does not know is sent as a file's text would be.
            kind: parse_kind(&kind).unwrap_or(AttachmentKind::Text),
            size: r.get::<_, i64>(4)?.max(0) as u64,
            width: r.get(5)?,
            height: r.get(6)?,
            pages: r.get(7)?,
            text: r.get(8)?,
            text_note: r.get(11)?,
            thumbnail: thumbnail.map(|t| BASE64.encode(t)),
            created_at: r.get(10)?,
            data: String::new(),
        })
    })?;
    let files = rows.collect::<rusqlite::Result<_>>()?;
    Ok((refs, files))
}

/// Reads each record's files' bytes into it (without holding the database): a missing or
/// damaged copy fails the export, naming the file.
pub(super) fn fill_data(blobs: &Blobs, records: &mut [ConversationRecord]) -> Result<()> {
    for r in records {
        for a in &mut r.attachments {
            a.data = BASE64.encode(blobs.read(&a.id, a.size, &a.name)?);
        }
    }
    Ok(())
}

/// Writes each distinct file of `records` to a temporary file beside its place (before the
/// import's transaction), keyed by id. Run on checked records only.
pub(super) fn stage_all<'a>(
    blobs: &Blobs,
    records: impl Iterator<Item = &'a ConversationRecord>,
) -> Result<HashMap<String, Staged>> {
    let mut staged = HashMap::new();
    for a in records.flat_map(|r| &r.attachments) {
        if staged.contains_key(&a.id) {
            continue;
        }
        let bytes = decode(a).map_err(Error::Invalid)?;
        staged.insert(a.id.clone(), blobs.stage(&a.id, &bytes)?);
    }
    Ok(staged)
}

/// Publishes and records `r`'s files (a file already stored keeps its row). Inside the import's
/// transaction, before its messages are written.
pub(super) fn write_files(
    tx: &Connection,
    blobs: &Blobs,
    staged: &mut HashMap<String, Staged>,
    r: &ConversationRecord,
) -> Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO attachments (id, name, mime_type, kind, size, width, height, pages, text, thumbnail, created_at,
                                  text_note)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT (id) DO NOTHING",
    )?;
    for a in &r.attachments {
        if let Some(file) = staged.remove(&a.id) {
            blobs.publish(file)?;
        }
        let thumbnail = a
            .thumbnail
            .as_deref()
            .map(|t| BASE64.decode(t))
            .transpose()
            .map_err(|e| Error::Invalid(format!("the thumbnail of '{}' is not base64: {e}", a.name)))?;
        insert.execute(rusqlite::params![
            a.id,
            a.name,
            a.mime_type,
            kind_name(a.kind),
            a.size as i64,
            a.width,
            a.height,
            a.pages,
            a.text,
            thumbnail,
            a.created_at,
            a.text_note,
        ])?;
    }
    Ok(())
}

/// Writes a message's references, in order.
pub(super) fn write_refs(tx: &Connection, m: &MessageRecord) -> Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO message_attachments (message_id, position, attachment_id, name) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (position, a) in m.attachments.iter().enumerate() {
        insert.execute(rusqlite::params![m.id, position as i64, a.id, a.name])?;
    }
    Ok(())
}
