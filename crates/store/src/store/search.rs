//! Full-text search over titles, messages, tool arguments, tool results and attached files (name
//! and extracted text, migration 15), through the `search_index` FTS5 table (migration 9; text
//! handling in `crate::fts`).
//!
//! Ranking: FTS5's bm25 picks the best [`CANDIDATES`] matches; among them a recent one counts up
//! to twice as much as an old one (the boost halves every [`RECENCY_HALF_LIFE_DAYS`] days). A
//! query found in more than [`BROAD_MATCHES`] places (a very common word, where bm25 tells little
//! apart and scoring every match would take long) lists the newest entries of each kind instead,
//! newest first: no bm25 at all there, since FTS5 computes a phrase's bm25 weight by scanning every
//! row holding its words (70 ms for a phrase of two common words in 100,000 messages). So every
//! search stays bounded.
//! An answer is found once it ends, not while it streams: its checkpoints do not touch the index,
//! so writing an answer costs no more with it (see migration 9).
//! Invariant: every hit names rows that exist (the index is kept in step by triggers, and a
//! candidate whose row is gone is skipped), and its snippet is cut from the stored text.

use super::tree::PATH;
use super::{Store, now_millis};
use crate::error::Result;
use crate::fts::{self, Query};
use crate::model::Role;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// Hits returned when the caller does not say how many.
pub const SEARCH_LIMIT_DEFAULT: usize = 50;
/// The most hits one search returns.
pub const SEARCH_LIMIT_MAX: usize = 200;
/// How many of the best matches by relevance are ranked again with recency.
const CANDIDATES: usize = 1000;
/// A query with more matches than this takes its candidates from the newest entries.
const BROAD_MATCHES: usize = 1000;
/// How many of the newest matches a broad query ranks (a quarter from each kind).
const BROAD_CANDIDATES: usize = 400;
/// An index rowid is `kind << KIND_SHIFT | source rowid` (see migration 9).
const KIND_SHIFT: u32 = 40;
/// A hit this many days old gets half the recency boost of one written now.
const RECENCY_HALF_LIFE_DAYS: f64 = 30.0;
const DAY_MS: f64 = 86_400_000.0;

/// What part of a conversation a search hit is in.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SearchHitKind {
    /// The conversation's title.
    Title,
    /// A message's text (the person's or the model's).
    Message,
    /// The arguments a tool was called with.
    ToolArguments,
    /// What a tool returned.
    ToolResult,
    /// A file attached to a message (its name or the text extracted from it).
    Attachment,
}

impl SearchHitKind {
    const ALL: [SearchHitKind; 5] = [
        SearchHitKind::Title,
        SearchHitKind::Message,
        SearchHitKind::ToolArguments,
        SearchHitKind::ToolResult,
        SearchHitKind::Attachment,
    ];

    fn from_rowid(rowid: i64) -> (Self, i64) {
        let kind = Self::ALL[usize::try_from(rowid >> KIND_SHIFT).unwrap_or(0).min(Self::ALL.len() - 1)];
        (kind, rowid & ((1 << KIND_SHIFT) - 1))
    }

    /// The index rowids of this kind.
    fn rowids(self) -> (i64, i64) {
        let k = self as i64;
        (k << KIND_SHIFT, ((k + 1) << KIND_SHIFT) - 1)
    }
}

/// One place a search found.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The conversation.
    pub conversation_id: String,
    /// Its title.
    pub title: String,
    /// The message that matched, or that holds the tool call that did (none for a title).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub message_id: Option<String>,
    /// The tool call that matched (its `callId` within the message), for tool hits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tool_call_id: Option<String>,
    /// The attached file that matched (its name), for attachment hits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub attachment: Option<String>,
    /// Where the match is.
    pub kind: SearchHitKind,
    /// Who wrote the message, for message hits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub role: Option<Role>,
    /// A short excerpt around the match, each match between U+E000 and U+E001.
    pub snippet: String,
    /// The message is on the conversation's current path (else open it by switching to it).
    pub on_current_path: bool,
    /// Unix millis the matched row was written (a title: the conversation's creation).
    pub created_at: i64,
}

impl Store {
    /// Searches titles, messages, tool arguments and tool results for `query` (words, `"phrases"`,
    /// `prefix*`, `-excluded`, `OR`; see [`fts::parse_query`]), best first, at most `limit` hits
    /// (capped at [`SEARCH_LIMIT_MAX`]). A query with nothing to look for finds nothing; one that
    /// cannot be run is [`Error::Search`](crate::Error::Search) with what to change.
    pub fn search_messages(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>> {
        let limit = limit.clamp(1, SEARCH_LIMIT_MAX);
        let Some(query) = fts::parse_query(query)? else {
            return Ok(Vec::new());
        };
        let conn = self.conn();
        let candidates = candidates(&conn, &query.to_match())?;
        let now = now_millis();
        let mut scored = Vec::with_capacity(candidates.len());
        for (rowid, rank) in candidates {
            let Some(created_at) = written_at(&conn, rowid)? else { continue };
            let age_days = (now - created_at).max(0) as f64 / DAY_MS;
            // bm25 is negative: the more relevant, the lower.
            let score = -rank * (1.0 + 0.5_f64.powf(age_days / RECENCY_HALF_LIFE_DAYS));
            scored.push((score, created_at, rowid));
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        let mut hits = Vec::with_capacity(limit.min(scored.len()));
        let mut paths = Paths::default();
        for (_, _, rowid) in scored.into_iter().take(limit) {
            if let Some(hit) = hit(&conn, rowid, &query, &mut paths)? {
                hits.push(hit);
            }
        }
        Ok(hits)
    }
}

/// The matches to rank: the [`CANDIDATES`] most relevant, or for a query found in more than
/// [`BROAD_MATCHES`] places, the [`BROAD_CANDIDATES`] newest (as many of each kind). Each with its
/// bm25 (lower: more relevant; the same for all of a broad query's, so recency orders them).
fn candidates(conn: &Connection, expr: &str) -> Result<Vec<(i64, f64)>> {
    let matches: i64 = conn
        .prepare_cached("SELECT count(*) FROM (SELECT 1 FROM search_index WHERE search_index MATCH ?1 LIMIT ?2)")?
        .query_row((expr, BROAD_MATCHES as i64 + 1), |r| r.get(0))?;
    let read = |r: &rusqlite::Row<'_>| Ok((r.get(0)?, r.get(1)?));
    if matches <= BROAD_MATCHES as i64 {
        let mut stmt = conn.prepare_cached(
            "SELECT rowid, rank FROM search_index WHERE search_index MATCH ?1 ORDER BY rank LIMIT ?2",
        )?;
        return Ok(stmt.query_map((expr, CANDIDATES as i64), read)?.collect::<rusqlite::Result<_>>()?);
    }
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, -1.0 FROM search_index
         WHERE search_index MATCH ?1 AND rowid BETWEEN ?2 AND ?3 ORDER BY rowid DESC LIMIT ?4",
    )?;
    let mut out = Vec::with_capacity(BROAD_CANDIDATES);
    for kind in SearchHitKind::ALL {
        let (lo, hi) = kind.rowids();
        let per_kind = (BROAD_CANDIDATES / SearchHitKind::ALL.len()) as i64;
        for row in stmt.query_map((expr, lo, hi, per_kind), read)? {
            out.push(row?);
        }
    }
    Ok(out)
}

/// When the row behind an index entry was written; `None` if it is gone.
fn written_at(conn: &Connection, rowid: i64) -> rusqlite::Result<Option<i64>> {
    let (kind, source) = SearchHitKind::from_rowid(rowid);
    let sql = match kind {
        SearchHitKind::Title => "SELECT created_at FROM conversations WHERE rowid = ?1",
        SearchHitKind::Message => "SELECT created_at FROM messages WHERE rowid = ?1",
        SearchHitKind::ToolArguments => "SELECT created_at FROM tool_calls WHERE rowid = ?1",
        SearchHitKind::ToolResult => "SELECT created_at FROM tool_results WHERE rowid = ?1",
        SearchHitKind::Attachment => {
            "SELECT m.created_at FROM message_attachments ma JOIN messages m ON m.id = ma.message_id
             WHERE ma.rowid = ?1"
        }
    };
    conn.prepare_cached(sql)?.query_row([source], |r| r.get(0)).optional()
}

/// The hit for one index entry, its snippet cut from the stored text.
fn hit(conn: &Connection, rowid: i64, query: &Query, paths: &mut Paths) -> Result<Option<SearchHit>> {
    let (kind, source) = SearchHitKind::from_rowid(rowid);
    let sql = match kind {
        SearchHitKind::Title => {
            "SELECT c.id, c.title, NULL, NULL, NULL, c.title, c.created_at FROM conversations c WHERE c.rowid = ?1"
        }
        SearchHitKind::Message => {
            "SELECT c.id, c.title, m.id, NULL, m.role, m.content, m.created_at
             FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE m.rowid = ?1"
        }
        SearchHitKind::ToolArguments => {
            "SELECT c.id, c.title, m.id, t.call_id, NULL, t.arguments, t.created_at
             FROM tool_calls t JOIN messages m ON m.id = t.message_id
             JOIN conversations c ON c.id = m.conversation_id WHERE t.rowid = ?1"
        }
        SearchHitKind::ToolResult => {
            "SELECT c.id, c.title, m.id, t.call_id, NULL, r.output, r.created_at
             FROM tool_results r JOIN tool_calls t ON t.id = r.tool_call_id JOIN messages m ON m.id = t.message_id
             JOIN conversations c ON c.id = m.conversation_id WHERE r.rowid = ?1"
        }
        // The text indexed is the name and the extracted text (migration 15); the file's name
        // travels in the call-id column's place.
        SearchHitKind::Attachment => {
            "SELECT c.id, c.title, m.id, ma.name, m.role, ma.name || char(10) || COALESCE(a.text, ''), m.created_at
             FROM message_attachments ma JOIN attachments a ON a.id = ma.attachment_id
             JOIN messages m ON m.id = ma.message_id
             JOIN conversations c ON c.id = m.conversation_id WHERE ma.rowid = ?1"
        }
    };
    type Row = (String, String, Option<String>, Option<String>, Option<String>, String, i64);
    let row: Option<Row> = conn
        .prepare_cached(sql)?
        .query_row([source], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)))
        .optional()?;
    let Some((conversation_id, title, message_id, named, role, text, created_at)) = row else {
        return Ok(None);
    };
    let (tool_call_id, attachment) = if kind == SearchHitKind::Attachment { (None, named) } else { (named, None) };
    let role = match role.as_deref() {
        Some("user") => Some(Role::User),
        Some("assistant") => Some(Role::Assistant),
        _ => None,
    };
    let on_current_path = match &message_id {
        Some(id) => paths.contains(conn, &conversation_id, id)?,
        None => true,
    };
    Ok(Some(SearchHit {
        snippet: fts::snippet(&text, query),
        conversation_id,
        title,
        message_id,
        tool_call_id,
        attachment,
        kind,
        role,
        on_current_path,
        created_at,
    }))
}

/// The ids of the messages on each conversation's current path, read once per search.
#[derive(Default)]
struct Paths(HashMap<String, HashSet<String>>);

impl Paths {
    fn contains(&mut self, conn: &Connection, conversation_id: &str, message_id: &str) -> Result<bool> {
        if !self.0.contains_key(conversation_id) {
            let ids: HashSet<String> = conn
                .prepare_cached(&format!("{PATH} SELECT id FROM path"))?
                .query_map([conversation_id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            self.0.insert(conversation_id.to_owned(), ids);
        }
        Ok(self.0.get(conversation_id).is_some_and(|ids| ids.contains(message_id)))
    }
}
