//! Compactions and pins: the rows that say how a conversation's history is sent once it no
//! longer fits (see `switchboard_core::compaction`), and the history a turn starts from with the
//! compaction in force applied by the loop.
//!
//! Invariants: compacting adds a row and never deletes or rewrites a message or a result; undo
//! only marks a row; the compaction in force is the latest one on the current path that is not
//! undone, so the next turn sends what the live turn sent.

use super::Store;
use super::turns::canonical_path;
use crate::error::{Error, Result};
use crate::model::StoredToolCall;
use serde::Serialize;
use switchboard_core::{Compaction, CompactionReason, Message, Usage};

/// A compaction as the UI and the CLI show it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredCompaction {
    /// Row id (for show and undo).
    pub id: String,
    /// The answer during which it was made (the head of the path, for "compact now").
    pub message_id: String,
    /// The last message of the path the summary covers: the conversation shows its boundary
    /// after it. `None`: no summary (stubs only), or the path no longer holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub through_message_id: Option<String>,
    /// What is sent differently.
    pub compaction: Compaction,
    /// Estimated tokens of the next request before and after.
    pub tokens_before: u64,
    /// After.
    pub tokens_after: u64,
    /// Why it was made.
    pub reason: CompactionReason,
    /// The model that wrote the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub summariser: Option<String>,
    /// What writing it used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub usage: Option<Usage>,
    /// Why the model picked to write the chat's summaries did not write this one (`summariser`
    /// is the chat's own model instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub summariser_fallback: Option<String>,
    /// Unix millis.
    pub created_at: i64,
    /// Undone: the full history is sent again.
    pub undone: bool,
}

/// A compaction to store.
#[derive(Clone, Copy, Debug)]
pub struct NewCompaction<'a> {
    /// What is sent differently from now on.
    pub compaction: &'a Compaction,
    /// Estimated tokens before.
    pub tokens_before: u64,
    /// And after.
    pub tokens_after: u64,
    /// Why.
    pub reason: CompactionReason,
    /// The model that wrote the summary.
    pub summariser: Option<&'a str>,
    /// What writing it used.
    pub usage: Option<&'a Usage>,
    /// Why the picked summariser did not write it.
    pub summariser_fallback: Option<&'a str>,
}

/// The history a turn starts from, with what the loop needs to send it as the live turn did.
#[derive(Clone, Debug, Default)]
pub struct TurnHistory {
    /// The whole canonical history of the current path.
    pub messages: Vec<Message>,
    /// The first untrusted source its results came from, if any.
    pub untrusted: Option<String>,
    /// The compaction in force (empty when none).
    pub compaction: Compaction,
    /// Indexes into `messages` of the messages the person pinned.
    pub pinned: Vec<usize>,
    /// The index into `messages` of each of the person's messages that has files, with them in
    /// order (the service turns them into the parts the request's API takes).
    pub attachments: Vec<(usize, Vec<switchboard_core::Attachment>)>,
}

const COLUMNS: &str = "id, message_id, covered, summary, stubbed, quoted, tokens_before, tokens_after, reason,
                       summariser, usage, created_at, undone, summariser_fallback";

impl Store {
    /// Stores a compaction made during (or, for "compact now", after) the message `message_id`.
    pub fn record_compaction(&self, message_id: &str, new: &NewCompaction<'_>) -> Result<String> {
        let id = super::new_id();
        let json =
            |what: &str, v: &dyn erased::Json| v.json().map_err(|source| Error::Json { what: what.to_owned(), source });
        let stubbed = json("stubbed calls", &new.compaction.stubbed)?;
        let quoted = json("quoted messages", &new.compaction.quoted)?;
        let usage = new.usage.map(|u| json("usage", u)).transpose()?;
        let reason = serde_json::to_value(new.reason).ok().and_then(|v| v.as_str().map(str::to_owned));
        let n = self.conn().execute(
            "INSERT INTO compactions (id, conversation_id, message_id, covered, summary, stubbed, quoted,
                                      tokens_before, tokens_after, reason, summariser, usage, created_at,
                                      summariser_fallback)
             SELECT ?1, conversation_id, id, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13 FROM messages WHERE id = ?2",
            rusqlite::params![
                id,
                message_id,
                new.compaction.covered,
                new.compaction.summary,
                stubbed,
                quoted,
                new.tokens_before as i64,
                new.tokens_after as i64,
                reason.unwrap_or_else(|| "threshold".into()),
                new.summariser,
                usage,
                super::now_millis(),
                new.summariser_fallback,
            ],
        )?;
        if n == 0 {
            return Err(Error::not_found("message", message_id));
        }
        Ok(id)
    }

    /// The compactions of the conversation's current path, oldest first, undone ones included.
    pub fn compactions(&self, conversation_id: &str) -> Result<Vec<StoredCompaction>> {
        let path = canonical_path(self, conversation_id, &|_| None, usize::MAX)?;
        let mut out = self.compaction_rows(conversation_id)?;
        out.retain(|c| path.ranges.iter().any(|(id, ..)| *id == c.message_id));
        for c in &mut out {
            c.through_message_id = path.message_through(c.compaction.covered as usize);
        }
        Ok(out)
    }

    /// One compaction of the conversation (any branch): its summary, its stubs.
    pub fn compaction(&self, conversation_id: &str, id: &str) -> Result<StoredCompaction> {
        self.compaction_rows(conversation_id)?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or_else(|| Error::not_found("compaction", id))
    }

    /// Marks a compaction undone (the full history is sent again from the next request) or
    /// applies it again.
    pub fn set_compaction_undone(&self, conversation_id: &str, id: &str, undone: bool) -> Result<()> {
        let n = self.conn().execute(
            "UPDATE compactions SET undone = ?3 WHERE id = ?1 AND conversation_id = ?2",
            rusqlite::params![id, conversation_id, undone],
        )?;
        if n == 0 { Err(Error::not_found("compaction", id)) } else { Ok(()) }
    }

    /// Pins or unpins a message: a pinned message is never summarised.
    pub fn set_message_pinned(&self, conversation_id: &str, message_id: &str, pinned: bool) -> Result<()> {
        let n = self.conn().execute(
            "UPDATE messages SET pinned = ?3 WHERE id = ?1 AND conversation_id = ?2",
            rusqlite::params![message_id, conversation_id, pinned],
        )?;
        if n == 0 { Err(Error::not_found("message", message_id)) } else { Ok(()) }
    }

    /// The history a turn on the current path starts from: the whole canonical history (each
    /// result `untrusted` names a source for framed as untrusted data, each longer than
    /// `result_limit` characters cut as the live turn cut it), the compaction in force and the
    /// pinned messages.
    pub fn turn_history(
        &self,
        conversation_id: &str,
        untrusted: &dyn Fn(&StoredToolCall) -> Option<String>,
        result_limit: usize,
    ) -> Result<TurnHistory> {
        let path = canonical_path(self, conversation_id, untrusted, result_limit)?;
        let latest = self
            .compaction_rows(conversation_id)?
            .into_iter()
            .rev()
            .filter(|c| !c.undone)
            .find(|c| path.ranges.iter().any(|(id, ..)| *id == c.message_id));
        let compaction = latest.map(|c| c.compaction).filter(|c| c.fits(&path.messages)).unwrap_or_default();
        let pinned = path.ranges.iter().filter(|(_, pinned, _)| *pinned).flat_map(|(_, _, r)| r.clone()).collect();
        Ok(TurnHistory {
            messages: path.messages,
            untrusted: path.untrusted,
            compaction,
            pinned,
            attachments: path.attachments,
        })
    }

    fn compaction_rows(&self, conversation_id: &str) -> Result<Vec<StoredCompaction>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM compactions WHERE conversation_id = ?1 ORDER BY created_at, rowid"
        ))?;
        let rows = stmt.query_map([conversation_id], |r| {
            let stubbed: String = r.get(4)?;
            let quoted: String = r.get(5)?;
            let reason: String = r.get(8)?;
            let usage: Option<String> = r.get(10)?;
            Ok(StoredCompaction {
                id: r.get(0)?,
                message_id: r.get(1)?,
                through_message_id: None,
                compaction: Compaction {
                    covered: r.get(2)?,
                    summary: r.get(3)?,
                    // A list this build cannot read sends those results whole: nothing is lost.
                    stubbed: serde_json::from_str(&stubbed).unwrap_or_default(),
                    quoted: serde_json::from_str(&quoted).unwrap_or_default(),
                },
                tokens_before: r.get::<_, i64>(6)?.max(0) as u64,
                tokens_after: r.get::<_, i64>(7)?.max(0) as u64,
                reason: serde_json::from_value(serde_json::Value::String(reason))
                    .unwrap_or(CompactionReason::Threshold),
                summariser: r.get(9)?,
                usage: usage.and_then(|u| serde_json::from_str(&u).ok()),
                created_at: r.get(11)?,
                undone: r.get(12)?,
                summariser_fallback: r.get(13)?,
            })
        })?;
        let rows = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(rows)
    }
}

/// Serialising the few JSON columns without naming each type.
mod erased {
    pub trait Json {
        fn json(&self) -> serde_json::Result<String>;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> serde_json::Result<String> {
            serde_json::to_string(self)
        }
    }
}
