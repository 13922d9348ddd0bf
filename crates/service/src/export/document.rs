//! The app's own export document: `{"format": "switchboard.conversations", "version": 1,
//! "conversations": [ConversationRecord…]}`, each conversation with every stored row (every
//! branch with its parent links and current message, tool calls at their offsets with arguments,
//! results, images and nested runs, notices, errors, usage, provider state, turn options,
//! instructions, agent, the chat's setup (optional: left out when none is stored), title,
//! pinned/archived, times, and the files its messages carry: each once per conversation with its
//! metadata, extracted text, thumbnail and bytes in base64, checked by size and SHA-256 on
//! import). Ids are kept, so an import into an empty store exports again identical.
//!
//! Versions: 2 added attached files, 3 the note on a PDF whose extracted text was cut
//! (`textNote`). A document is written at the lowest version that holds what it carries (1
//! without files, 2 with files but no such note), so an older build still imports it.
//!
//! Invariant: a reader refuses a document of a newer version than [`VERSION`] rather than
//! guessing at it.

use super::import::RefusedConversation;
use crate::{Error, Result, Service};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use switchboard_core::ErrorKind;
use switchboard_store::ConversationRecord;

/// The `format` field of the document.
pub const FORMAT: &str = "switchboard.conversations";

/// The newest version this build reads, and the one it writes when a file's text note travels.
pub const VERSION: u64 = 3;

/// The version written when files travel but no note on cut text (what builds before it read).
const VERSION_WITH_FILES: u64 = 2;

/// The version written when no conversation carries files (what builds before attachments read).
const VERSION_WITHOUT_FILES: u64 = 1;

/// The document.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] when written by this build.
    pub version: u64,
    /// The conversations.
    pub conversations: Vec<ConversationRecord>,
}

/// Whether a parsed file is (any version of) this document.
pub fn looks_like(value: &Value) -> bool {
    value.get("format").and_then(Value::as_str) == Some(FORMAT)
}

/// The document as read: its conversations left as JSON, so one that is malformed is refused alone.
#[derive(Deserialize)]
struct Loose {
    conversations: Vec<Value>,
}

/// The conversations of a parsed document, and those that are not valid records (with why); a
/// newer or malformed document is refused with what to do.
pub fn read(value: Value) -> std::result::Result<(Vec<ConversationRecord>, Vec<RefusedConversation>), String> {
    match value.get("version").and_then(Value::as_u64) {
        Some(v) if v > VERSION => {
            return Err(format!(
                "it was exported by a newer Switchboard (format version {v}; this one reads up to {VERSION}). Update Switchboard to import it."
            ));
        }
        Some(_) => {}
        None => return Err("it has no format version".to_owned()),
    }
    let doc: Loose = serde_json::from_value(value).map_err(|e| format!("it is not a valid Switchboard export: {e}"))?;
    let (mut records, mut refused) = (Vec::with_capacity(doc.conversations.len()), Vec::new());
    for (i, c) in doc.conversations.into_iter().enumerate() {
        let mut named = RefusedConversation::unreadable(&c, i, String::new());
        match serde_json::from_value::<ConversationRecord>(c) {
            Ok(r) => records.push(r),
            Err(e) => {
                named.reason = format!("it is not a valid conversation record: {e}");
                refused.push(named);
            }
        }
    }
    Ok((records, refused))
}

impl Service {
    /// The JSON document of the conversations `ids` (every conversation for `None`, in the
    /// list's order).
    pub fn export_document(&self, ids: Option<&[String]>) -> Result<String> {
        let store = &self.inner.store;
        let ids = match ids {
            Some(ids) => ids.to_vec(),
            None => store.conversations()?.into_iter().map(|c| c.id).collect(),
        };
        let conversations = store.conversation_records(&ids)?;
        let files = || conversations.iter().flat_map(|c| &c.attachments);
        let version = if files().any(|a| a.text_note.is_some()) {
            VERSION
        } else if files().next().is_some() {
            VERSION_WITH_FILES
        } else {
            VERSION_WITHOUT_FILES
        };
        let doc = Document { format: FORMAT.to_owned(), version, conversations };
        serde_json::to_string_pretty(&doc).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
    }
}
