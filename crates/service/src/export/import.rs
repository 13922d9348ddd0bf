//! Importing conversations from a file: the app's own JSON document or ChatGPT's
//! `conversations.json`, told apart by their shape. A preview says what an import would do
//! without writing anything.
//!
//! Invariant: an import is one store transaction of the file's good conversations; it never
//! overwrites a conversation (one already present, by id, is skipped and counted). A conversation
//! that cannot be read or whose rows do not hang together is left out and listed with why
//! ([`RefusedConversation`]), in the preview and in the report; the others are imported. A file
//! that is too large, not JSON, of a newer version or of neither format stores nothing.

use super::{chatgpt, document};
use crate::openapi_docs::PickedFile;
use crate::{Error, Result, Service};
use serde::Serialize;
use std::path::Path;
use switchboard_store::ConversationRecord;

/// The largest file an import reads.
pub const MAX_IMPORT_BYTES: u64 = 512 * 1024 * 1024;

/// The most conversations one import holds.
pub const MAX_CONVERSATIONS: usize = 100_000;

/// What kind of file an import read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ImportFormat {
    /// Switchboard's own export.
    Switchboard,
    /// ChatGPT's `conversations.json`.
    Chatgpt,
}

impl ImportFormat {
    fn label(self) -> &'static str {
        match self {
            ImportFormat::Switchboard => "Switchboard export",
            ImportFormat::Chatgpt => "ChatGPT export",
        }
    }
}

/// A conversation of the file that an import leaves out, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RefusedConversation {
    /// Its id, when the file gives one.
    pub id: Option<String>,
    /// Its title, or where it is in the file ("conversation #3") when it has none.
    pub title: String,
    /// Why, for the person.
    pub reason: String,
}

impl RefusedConversation {
    /// One conversation of a file's list, at `index`, that cannot be read: named by the id and
    /// title it carries, else by its place.
    pub(crate) fn unreadable(conversation: &serde_json::Value, index: usize, reason: String) -> Self {
        let text = |key: &str| conversation.get(key).and_then(serde_json::Value::as_str).map(str::to_owned);
        RefusedConversation {
            id: text("id").or_else(|| text("conversation_id")),
            title: text("title")
                .filter(|t| !t.trim().is_empty())
                .unwrap_or_else(|| format!("conversation #{}", index + 1)),
            reason,
        }
    }
}

/// What a file holds: its kind, the conversations an import can write, those it leaves out.
#[derive(Clone, Debug)]
pub struct Parsed {
    /// What the file is.
    pub format: ImportFormat,
    /// The conversations whose rows hang together, in file order.
    pub records: Vec<ConversationRecord>,
    /// The ones that cannot be imported, with why, in file order.
    pub refused: Vec<RefusedConversation>,
}

/// What importing a file would do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConversationImportPreview {
    /// What the file is.
    pub format: ImportFormat,
    /// Conversations in the file.
    pub conversations: u32,
    /// Of those, already in this app (they would be skipped).
    pub already_imported: u32,
    /// Messages in the conversations that would be imported (every version counted).
    pub messages: u32,
    /// Titles of the first conversations that would be imported (at most 20).
    pub titles: Vec<String>,
    /// The conversations that cannot be imported, with why (the others still can).
    pub refused: Vec<RefusedConversation>,
    /// One line for the person, e.g. "3 conversations, 1 already imported".
    pub summary: String,
}

/// A preview for the window: the file the person picked in the native dialog (by pick and name,
/// never its path) and what importing it would do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConversationImportFile {
    /// The picked file.
    pub file: PickedFile,
    /// What importing it would do.
    pub preview: ConversationImportPreview,
}

/// What an import did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConversationImportReport {
    /// What the file was.
    pub format: ImportFormat,
    /// Ids of the conversations imported.
    pub imported: Vec<String>,
    /// How many were skipped because they were already imported.
    pub skipped: u32,
    /// Messages written.
    pub messages: u32,
    /// The conversations left out because they cannot be imported, each with why.
    pub refused: Vec<RefusedConversation>,
    /// One line for the person.
    pub summary: String,
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") }
}

/// Reads and recognises an import file: its kind, its good conversations as records, the others.
pub fn read_file(path: &Path) -> Result<Parsed> {
    let name = path.display();
    let size = std::fs::metadata(path).map_err(|e| Error::config(format!("Could not read {name}: {e}.")))?.len();
    if size > MAX_IMPORT_BYTES {
        return Err(Error::config(format!(
            "{name} is {} MB; an import reads at most {} MB. Split the export, or export fewer conversations.",
            size / (1024 * 1024),
            MAX_IMPORT_BYTES / (1024 * 1024)
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| Error::config(format!("Could not read {name}: {e}.")))?;
    parse(&bytes).map_err(|e| Error::config(format!("Nothing was imported: {name} {e}")))
}

/// Recognises and converts a file's bytes; a conversation that cannot be read or does not hang
/// together goes to [`Parsed::refused`]. `Err` (the whole file) completes "Nothing was imported:
/// FILE …".
pub fn parse(bytes: &[u8]) -> std::result::Result<Parsed, String> {
    if bytes.starts_with(b"PK\x03\x04") {
        return Err(
            "is a zip archive. ChatGPT's export is a zip: extract it and import the conversations.json inside."
                .to_owned(),
        );
    }
    // serde_json refuses nesting deeper than 128 levels: a bound on depth as well as size.
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| format!("is not JSON ({e}). Choose a Switchboard or ChatGPT export."))?;
    let (format, (records, mut refused)) = if document::looks_like(&value) {
        (ImportFormat::Switchboard, document::read(value).map_err(|e| format!("cannot be imported: {e}"))?)
    } else if chatgpt::looks_like(&value) {
        (ImportFormat::Chatgpt, chatgpt::convert(value).map_err(|e| format!("cannot be imported: {e}"))?)
    } else if value.get("format").and_then(serde_json::Value::as_str) == Some("switchboard-export") {
        return Err("is an \"Export all\" file of an earlier Switchboard, which did not keep enough to import (no branches, choices or settings). Export again from the app it came from.".to_owned());
    } else {
        return Err("is JSON but neither a Switchboard export nor ChatGPT's conversations.json.".to_owned());
    };
    let total = records.len() + refused.len();
    if total > MAX_CONVERSATIONS {
        return Err(format!("holds {total} conversations; one import takes at most {MAX_CONVERSATIONS}."));
    }
    let mut good = Vec::with_capacity(records.len());
    for r in records {
        match switchboard_store::check_record(&r) {
            Ok(()) => good.push(r),
            Err(reason) => refused.push(RefusedConversation { id: Some(r.id), title: r.title, reason }),
        }
    }
    Ok(Parsed { format, records: good, refused })
}

/// ", 2 cannot be imported" (empty for none).
fn refused_part(refused: usize) -> String {
    match refused {
        0 => String::new(),
        n => format!(", {n} cannot be imported"),
    }
}

impl Service {
    /// What importing `path` would do; writes nothing.
    pub fn preview_import(&self, path: &Path) -> Result<ConversationImportPreview> {
        let Parsed { format, records, refused } = read_file(path)?;
        let ids: Vec<&str> = records.iter().map(|r| r.id.as_str()).collect();
        let existing = self.inner.store.existing_conversations(&ids)?;
        let new: Vec<&ConversationRecord> = records.iter().filter(|r| !existing.contains(&r.id)).collect();
        let mut summary = format!("{}: {}", format.label(), plural(records.len() + refused.len(), "conversation"));
        if !existing.is_empty() {
            summary.push_str(&format!(", {} already imported", existing.len()));
        }
        summary.push_str(&refused_part(refused.len()));
        Ok(ConversationImportPreview {
            format,
            conversations: count(records.len() + refused.len()),
            already_imported: count(existing.len()),
            messages: count(new.iter().map(|r| r.messages.len()).sum()),
            titles: new.iter().take(20).map(|r| r.title.clone()).collect(),
            refused,
            summary,
        })
    }

    /// Imports the good conversations of `path` in one transaction, skipping those already
    /// present and listing those that cannot be imported with why.
    pub fn import_conversations(&self, path: &Path) -> Result<ConversationImportReport> {
        let Parsed { format, records, mut refused } = read_file(path)?;
        let outcome = self.inner.store.import_records(&records)?;
        refused.extend(outcome.refused.into_iter().map(|r| RefusedConversation {
            id: Some(r.id),
            title: r.title,
            reason: r.reason,
        }));
        let messages =
            records.iter().filter(|r| outcome.imported.contains(&r.id)).map(|r| r.messages.len()).sum::<usize>();
        let mut summary = match (outcome.imported.len(), outcome.skipped.len()) {
            (0, 0) if refused.is_empty() => "The file holds no conversations.".to_owned(),
            (0, 0) => "Nothing imported".to_owned(),
            (0, skipped) => format!("Nothing imported: already imported: {} skipped", plural(skipped, "conversation")),
            (n, 0) => format!("Imported {} ({})", plural(n, "conversation"), plural(messages, "message")),
            (n, skipped) => format!(
                "Imported {} ({}); already imported: {} skipped",
                plural(n, "conversation"),
                plural(messages, "message"),
                plural(skipped, "conversation")
            ),
        };
        match refused.len() {
            0 => {}
            1 => summary.push_str("; 1 conversation could not be imported"),
            n => summary.push_str(&format!("; {n} conversations could not be imported")),
        }
        if !summary.ends_with('.') {
            summary.push('.');
        }
        if !outcome.imported.is_empty() || !refused.is_empty() {
            tracing::info!(
                imported = outcome.imported.len(),
                skipped = outcome.skipped.len(),
                refused = refused.len(),
                "imported conversations"
            );
        }
        Ok(ConversationImportReport {
            format,
            skipped: count(outcome.skipped.len()),
            messages: count(messages),
            imported: outcome.imported,
            refused,
            summary,
        })
    }
}
