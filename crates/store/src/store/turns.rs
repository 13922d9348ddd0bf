//! A turn's rows: creating them before the engine runs, taking the last question back to ask it
//! again, and reading messages (a page at a time) and the provider history back from them.
//!
//! Invariant: the history rebuilt here is the one the live turn sent, iteration by iteration.

use super::attachments::{attachment_columns, attachment_from_row};
use super::tree::PATH;
use super::{Store, new_id, now_millis, title_from};
use crate::error::{Error, Result};
use crate::model::{
    MessagePage, MessageStatus, Question, Role, StoredError, StoredMessage, StoredNotice, StoredToolCall,
    StoredToolResult, ToolCallStatus, TurnRows,
};
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior};
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use switchboard_core::history::{StoredCall, assistant_messages};
use switchboard_core::{Attachment, Message, ToolSource, Usage};

impl Store {
    /// Starts a turn: creates the conversation when `conversation_id` is `None` (titled after the
    /// first line of `user_text`), stores the person's message and an empty `streaming` assistant
    /// message, and marks the conversation updated — all in one transaction.
    pub fn begin_turn(
        &self,
        conversation_id: Option<&str>,
        user_text: &str,
        provider: &str,
        model: &str,
    ) -> Result<TurnRows> {
        self.begin_turn_with(conversation_id, user_text, provider, model, None, &[])
    }

    /// [`Store::begin_turn`], also keeping `turn_options` (opaque JSON: the choices the question
    /// was asked with) on the person's message, where [`Store::question`] finds them, and the
    /// files attached to it, in order (each stored by [`Store::put_attachment`] first; one that
    /// is not is [`Error::NotFound`] and nothing is written).
    pub fn begin_turn_with(
        &self,
        conversation_id: Option<&str>,
        user_text: &str,
        provider: &str,
        model: &str,
        turn_options: Option<&str>,
        attachments: &[Attachment],
    ) -> Result<TurnRows> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = now_millis();
        let conversation_id = match conversation_id {
            Some(id) => {
                let n = tx.execute("UPDATE conversations SET updated_at = ?2 WHERE id = ?1", (id, now))?;
                if n == 0 {
                    return Err(Error::not_found("conversation", id));
                }
                id.to_owned()
            }
            None => {
                let id = new_id();
                tx.execute(
                    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
                    (&id, title_from(user_text), now),
                )?;
                id
            }
        };
        let head = super::tree::head(&tx, &conversation_id)?;
        let user_message_id =
            super::tree::insert_question(&tx, &conversation_id, head.as_deref(), user_text, turn_options, now)?;
        super::attachments::link(&tx, &user_message_id, attachments)?;
        let message_id = super::tree::insert_answer(&tx, &conversation_id, &user_message_id, provider, model, now)?;
        super::tree::extend_path(&tx, &conversation_id, &[&user_message_id, &message_id])?;
        tx.commit()?;
        Ok(TurnRows { conversation_id, user_message_id, message_id })
    }

    /// The last question on the conversation's current path, with the choices it was asked with
    /// and who answered it.
    pub fn last_question(&self, conversation_id: &str) -> Result<Question> {
        let conn = self.conn();
        ensure_conversation(&conn, conversation_id)?;
        let id: Option<String> = conn
            .prepare_cached(&format!(
                "{PATH} SELECT m.id FROM messages m JOIN path p ON p.id = m.id WHERE m.role = 'user'
                 ORDER BY m.seq DESC LIMIT 1"
            ))?
            .query_row([conversation_id], |r| r.get(0))
            .optional()?;
        let id = id.ok_or_else(|| Error::not_found("question in conversation", conversation_id))?;
        question_in(&conn, conversation_id, &id)
    }

    /// The question `message_id` names: itself when it is the person's message, the one it
    /// answers when it is an answer.
    pub fn question(&self, conversation_id: &str, message_id: &str) -> Result<Question> {
        let conn = self.conn();
        let (role, parent) = super::tree::role_and_parent(&conn, conversation_id, message_id)?;
        match (role, parent) {
            (Role::User, _) => question_in(&conn, conversation_id, message_id),
            (Role::Assistant, Some(parent)) => question_in(&conn, conversation_id, &parent),
            (Role::Assistant, None) => Err(Error::not_found("question of message", message_id)),
        }
    }

    /// The canonical history to send a provider: the person's messages, and each finished
    /// assistant message split back into its iterations (text, calls, results) exactly as the
    /// live turn sent them. The turn in progress (`streaming`) and assistant messages with neither
    /// text nor calls are left out, so right after [`Store::begin_turn`] it ends with the new
    /// user message.
    pub fn history(&self, conversation_id: &str) -> Result<Vec<Message>> {
        Ok(self.history_marked(conversation_id, &|_| None, switchboard_core::paging::DEFAULT_LIMIT)?.0)
    }

    /// The files of [`Store::history`]'s messages: the index in it of each of the person's
    /// messages that has any, with them in order (the caller turns them into the parts an API
    /// takes).
    pub fn history_attachments(&self, conversation_id: &str) -> Result<Vec<(usize, Vec<Attachment>)>> {
        Ok(canonical_path(self, conversation_id, &|_| None, usize::MAX)?.attachments)
    }

    /// [`Store::history`] with each result `untrusted` names a source for framed as untrusted
    /// data (as the live turn sent it), and the first such source: the context is tainted. A
    /// result longer than `result_limit` characters is cut as the live turn cut it
    /// ([`switchboard_core::paging::cut`]).
    pub fn history_marked(
        &self,
        conversation_id: &str,
        untrusted: &dyn Fn(&StoredToolCall) -> Option<String>,
        result_limit: usize,
    ) -> Result<(Vec<Message>, Option<String>)> {
        let path = canonical_path(self, conversation_id, untrusted, result_limit)?;
        Ok((path.messages, path.untrusted))
    }

    /// The messages of a conversation's current path in order, with their tool calls, results
    /// and versions: enough to redraw it exactly as it looked live.
    pub fn messages(&self, conversation_id: &str) -> Result<Vec<StoredMessage>> {
        Ok(self.messages_page(conversation_id, None, usize::MAX)?.messages)
    }

    /// The last `limit` (at least one) messages of the conversation's current path that come
    /// before the message `before` (or before its end when `None`), oldest first and drawn as
    /// [`Store::messages`] draws them, with how many of the path come earlier still. Opening a
    /// long conversation reads its last page; scrolling up reads the pages before it.
    pub fn messages_page(&self, conversation_id: &str, before: Option<&str>, limit: usize) -> Result<MessagePage> {
        let conn = self.conn();
        // One read transaction: the page, its calls and the count come from the same snapshot
        // even while another process is recording a turn.
        let tx = conn.unchecked_transaction()?;
        ensure_conversation(&tx, conversation_id)?;
        let end: i64 = match before {
            None => i64::MAX,
            Some(id) => tx
                .prepare_cached(&format!(
                    "{PATH} SELECT m.seq FROM messages m JOIN path p ON p.id = m.id WHERE m.id = ?2"
                ))?
                .query_row([conversation_id, id], |r| r.get(0))
                .optional()?
                .ok_or_else(|| Error::not_found("message", id))?,
        };
        let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
        // Along a path seq increases, so a page of the path is a seq range of it.
        let first: Option<i64> = tx
            .prepare_cached(&format!(
                "{PATH} SELECT MIN(seq) FROM (SELECT m.seq FROM messages m JOIN path p ON p.id = m.id
                                            WHERE m.seq < ?2 ORDER BY m.seq DESC LIMIT ?3)"
            ))?
            .query_row(rusqlite::params![conversation_id, end, limit], |r| r.get(0))?;
        let Some(first) = first else {
            return Ok(MessagePage { messages: Vec::new(), earlier: 0 });
        };
        let earlier: i64 = tx
            .prepare_cached(&format!(
                "{PATH} SELECT COUNT(*) FROM messages m JOIN path p ON p.id = m.id WHERE m.seq < ?2"
            ))?
            .query_row(rusqlite::params![conversation_id, first], |r| r.get(0))?;
        let mut calls: HashMap<String, Vec<StoredToolCall>> = HashMap::new();
        {
            let mut stmt = tx.prepare_cached(&format!(
                "{PATH} SELECT tc.message_id, tc.call_id, tc.name, tc.source, tc.arguments, tc.text_offset,
                        tc.iteration, tc.idx, tc.status, tr.status, tr.output, tr.duration_ms, tr.images,
                        tc.nested
                 FROM path p
                 JOIN messages m ON m.id = p.id
                 JOIN tool_calls tc ON tc.message_id = m.id
                 LEFT JOIN tool_results tr ON tr.tool_call_id = tc.id
                 WHERE m.seq >= ?2 AND m.seq < ?3
                 ORDER BY m.seq, tc.iteration, tc.idx"
            ))?;
            let rows = stmt.query_map(rusqlite::params![conversation_id, first, end], |r| {
                Ok((r.get::<_, String>(0)?, tool_call_from_row(r)?))
            })?;
            for row in rows {
                let (message_id, call) = row?;
                calls.entry(message_id).or_default().push(call);
            }
        }
        let mut versions: HashMap<String, Vec<String>> = HashMap::new();
        {
            // Versions: the same role under the same parent (roots: of the same conversation).
            let mut stmt = tx.prepare_cached(&format!(
                "{PATH} SELECT m.id, s.id, s.seq FROM path p
                 JOIN messages m ON m.id = p.id
                 JOIN messages s ON s.parent_id = m.parent_id AND s.role = m.role
                 WHERE m.seq >= ?2 AND m.seq < ?3 AND m.parent_id IS NOT NULL
                 UNION ALL
                 SELECT m.id, s.id, s.seq FROM path p
                 JOIN messages m ON m.id = p.id
                 JOIN messages s ON s.conversation_id = m.conversation_id AND s.parent_id IS NULL AND s.role = m.role
                 WHERE m.seq >= ?2 AND m.seq < ?3 AND m.parent_id IS NULL
                 ORDER BY 1, 3"
            ))?;
            let rows = stmt.query_map(rusqlite::params![conversation_id, first, end], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?;
            for row in rows {
                let (message_id, version) = row?;
                versions.entry(message_id).or_default().push(version);
            }
        }
        // The files of the whole page in one query (metadata only: bytes and thumbnails are
        // read on demand), so a page with a hundred costs what a page with none does.
        let mut attachments: HashMap<String, Vec<Attachment>> = HashMap::new();
        {
            let mut stmt = tx.prepare_cached(&format!(
                "{PATH} SELECT ma.message_id, {}
                 FROM path p
                 JOIN messages m ON m.id = p.id
                 JOIN message_attachments ma ON ma.message_id = m.id
                 JOIN attachments a ON a.id = ma.attachment_id
                 WHERE m.seq >= ?2 AND m.seq < ?3
                 ORDER BY m.seq, ma.position",
                attachment_columns("ma.name")
            ))?;
            let rows = stmt.query_map(rusqlite::params![conversation_id, first, end], |r| {
                Ok((r.get::<_, String>(0)?, attachment_from_row(r, 1)?))
            })?;
            for row in rows {
                let (message_id, attachment) = row?;
                attachments.entry(message_id).or_default().push(attachment);
            }
        }
        let mut messages = Vec::new();
        {
            let mut stmt = tx.prepare_cached(&format!(
                "{PATH} SELECT m.id, m.role, m.content, m.reasoning, m.status, m.provider, m.model, m.finish_reason,
                        m.prompt_tokens, m.completion_tokens, m.reasoning_tokens, m.cached_tokens,
                        m.tool_calls_made, m.error_kind, m.error_message, m.notices, m.provider_response_id,
                        m.created_at, m.updated_at, m.provider_state, m.cache_write_tokens, m.error_detail,
                        m.parent_id, m.pinned
                 FROM path p JOIN messages m ON m.id = p.id
                 WHERE m.seq >= ?2 AND m.seq < ?3 ORDER BY m.seq"
            ))?;
            for row in stmt.query_map(rusqlite::params![conversation_id, first, end], message_from_row)? {
                let mut m = row?;
                m.tool_calls = calls.remove(&m.id).unwrap_or_default();
                m.versions = versions.remove(&m.id).unwrap_or_else(|| vec![m.id.clone()]);
                m.attachments = attachments.remove(&m.id).unwrap_or_default();
                messages.push(m);
            }
        }
        tx.commit()?;
        Ok(MessagePage { messages, earlier: u32::try_from(earlier).unwrap_or(u32::MAX) })
    }

    /// One message of the conversation, on any branch, drawn as [`Store::messages`] draws it.
    pub fn message(&self, conversation_id: &str, message_id: &str) -> Result<StoredMessage> {
        let conn = self.conn();
        let tx = conn.unchecked_transaction()?;
        let mut m = tx
            .prepare_cached(
                "SELECT id, role, content, reasoning, status, provider, model, finish_reason,
                        prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, tool_calls_made,
                        error_kind, error_message, notices, provider_response_id, created_at, updated_at,
                        provider_state, cache_write_tokens, error_detail, parent_id, pinned
                 FROM messages WHERE id = ?1 AND conversation_id = ?2",
            )?
            .query_row([message_id, conversation_id], message_from_row)
            .optional()?
            .ok_or_else(|| Error::not_found("message", message_id))?;
        let mut stmt = tx.prepare_cached(
            "SELECT tc.message_id, tc.call_id, tc.name, tc.source, tc.arguments, tc.text_offset,
                    tc.iteration, tc.idx, tc.status, tr.status, tr.output, tr.duration_ms, tr.images, tc.nested
             FROM tool_calls tc LEFT JOIN tool_results tr ON tr.tool_call_id = tc.id
             WHERE tc.message_id = ?1 ORDER BY tc.iteration, tc.idx",
        )?;
        m.tool_calls = stmt.query_map([message_id], tool_call_from_row)?.collect::<rusqlite::Result<_>>()?;
        drop(stmt);
        m.versions = super::tree::versions_of(&tx, conversation_id, message_id)?;
        m.attachments = super::attachments::of_message(&tx, message_id)?;
        tx.commit()?;
        Ok(m)
    }

    /// Stores the provider's id for a response (for APIs that continue from it).
    pub fn set_provider_response_id(&self, message_id: &str, response_id: &str) -> Result<()> {
        let n = self
            .conn()
            .execute("UPDATE messages SET provider_response_id = ?2 WHERE id = ?1", (message_id, response_id))?;
        if n == 0 {
            return Err(Error::not_found("message", message_id));
        }
        Ok(())
    }
}

/// The canonical history of a conversation's current path, with where each stored message is
/// in it.
pub(crate) struct CanonicalPath {
    pub messages: Vec<Message>,
    pub untrusted: Option<String>,
    /// Per stored message of the path, in order: its id, whether it is pinned, and the range of
    /// `messages` it became (empty: left out).
    pub ranges: Vec<(String, bool, std::ops::Range<usize>)>,
    /// The index in `messages` of each of the person's messages that has files, with them.
    pub attachments: Vec<(usize, Vec<Attachment>)>,
}

impl CanonicalPath {
    /// The stored message whose canonical messages end at or include index `covered - 1`.
    pub fn message_through(&self, covered: usize) -> Option<String> {
        if covered == 0 {
            return None;
        }
        self.ranges.iter().find(|(_, _, r)| r.contains(&(covered - 1))).map(|(id, ..)| id.clone())
    }
}

/// See [`Store::history_marked`]: the person's messages, and each finished assistant message
/// split back into its iterations.
pub(crate) fn canonical_path(
    store: &Store,
    conversation_id: &str,
    untrusted: &dyn Fn(&StoredToolCall) -> Option<String>,
    result_limit: usize,
) -> Result<CanonicalPath> {
    let mut first = None;
    let mut out = Vec::new();
    let mut ranges = Vec::new();
    let mut attachments = Vec::new();
    for m in path_rows(store, conversation_id)? {
        let start = out.len();
        match m.role {
            Role::User => {
                if !m.attachments.is_empty() {
                    attachments.push((start, m.attachments));
                }
                out.push(Message::user(m.content));
            }
            Role::Assistant => {
                if m.status == MessageStatus::Streaming || (m.content.is_empty() && m.tool_calls.is_empty()) {
                    ranges.push((m.id, m.pinned, start..start));
                    continue;
                }
                let calls: Vec<StoredCall> = m
                    .tool_calls
                    .into_iter()
                    .map(|c| StoredCall {
                        untrusted: untrusted(&c).inspect(|source| {
                            first.get_or_insert_with(|| source.clone());
                        }),
                        images: c.result.as_ref().map(|r| r.images.clone()).unwrap_or_default(),
                        id: c.call_id,
                        name: c.name,
                        arguments: c.arguments,
                        text_offset: c.text_offset,
                        iteration: c.iteration,
                        result: c.result.map(|r| (r.status, r.output)),
                    })
                    .collect();
                // State that cannot be read only costs the next request its continuation data.
                let states: Vec<(u32, switchboard_core::ProviderState)> =
                    m.provider_state.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default();
                out.extend(assistant_messages(&m.content, &calls, &states, result_limit));
            }
        }
        ranges.push((m.id, m.pinned, start..out.len()));
    }
    Ok(CanonicalPath { messages: out, untrusted: first, ranges, attachments })
}

/// What the canonical history needs of one stored message of the path (not how it is drawn:
/// no versions, notices, usage or errors).
struct PathRow {
    id: String,
    role: Role,
    content: String,
    status: MessageStatus,
    /// The provider states' JSON, parsed only when the message is sent.
    provider_state: Option<String>,
    pinned: bool,
    tool_calls: Vec<StoredToolCall>,
    attachments: Vec<Attachment>,
}

/// The current path's messages with their calls, results and files, oldest first, read in one
/// snapshot: three queries, whatever the length of the conversation.
fn path_rows(store: &Store, conversation_id: &str) -> Result<Vec<PathRow>> {
    let conn = store.conn();
    let tx = conn.unchecked_transaction()?;
    ensure_conversation(&tx, conversation_id)?;
    let mut rows = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    {
        let mut stmt = tx.prepare_cached(&format!(
            "{PATH} SELECT m.id, m.role, m.content, m.status, m.provider_state, m.pinned
             FROM path p JOIN messages m ON m.id = p.id ORDER BY m.seq"
        ))?;
        let mut q = stmt.query([conversation_id])?;
        while let Some(r) = q.next()? {
            let role: String = r.get(1)?;
            let status: String = r.get(3)?;
            let row = PathRow {
                id: r.get(0)?,
                role: Role::parse(&role).ok_or_else(|| bad_value(1, "role", &role))?,
                content: r.get(2)?,
                status: MessageStatus::parse(&status).ok_or_else(|| bad_value(3, "message status", &status))?,
                provider_state: r.get(4)?,
                pinned: r.get(5)?,
                tool_calls: Vec::new(),
                attachments: Vec::new(),
            };
            at.insert(row.id.clone(), rows.len());
            rows.push(row);
        }
    }
    {
        let mut stmt = tx.prepare_cached(&format!(
            "{PATH} SELECT tc.message_id, tc.call_id, tc.name, tc.source, tc.arguments, tc.text_offset,
                    tc.iteration, tc.idx, tc.status, tr.status, tr.output, tr.duration_ms, tr.images, tc.nested
             FROM path p
             JOIN tool_calls tc ON tc.message_id = p.id
             LEFT JOIN tool_results tr ON tr.tool_call_id = tc.id
             ORDER BY tc.iteration, tc.idx"
        ))?;
        let calls = stmt.query_map([conversation_id], |r| Ok((r.get::<_, String>(0)?, tool_call_from_row(r)?)))?;
        for call in calls {
            let (message_id, call) = call?;
            if let Some(&i) = at.get(&message_id) {
                rows[i].tool_calls.push(call);
            }
        }
    }
    {
        let mut stmt = tx.prepare_cached(&format!(
            "{PATH} SELECT ma.message_id, {}
             FROM path p
             JOIN message_attachments ma ON ma.message_id = p.id
             JOIN attachments a ON a.id = ma.attachment_id
             ORDER BY ma.position",
            attachment_columns("ma.name")
        ))?;
        let found = stmt.query_map([conversation_id], |r| Ok((r.get::<_, String>(0)?, attachment_from_row(r, 1)?)))?;
        for attachment in found {
            let (message_id, attachment) = attachment?;
            if let Some(&i) = at.get(&message_id) {
                rows[i].attachments.push(attachment);
            }
        }
    }
    tx.commit()?;
    Ok(rows)
}

/// The person's message `id` and who answered it last (its newest answer).
fn question_in(conn: &Connection, conversation_id: &str, id: &str) -> Result<Question> {
    let (text, turn_options): (String, Option<String>) = conn
        .prepare_cached(
            "SELECT content, turn_options FROM messages WHERE id = ?1 AND conversation_id = ?2 AND role = 'user'",
        )?
        .query_row([id, conversation_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
        .ok_or_else(|| Error::not_found("question", id))?;
    let (provider, model): (Option<String>, Option<String>) = conn
        .prepare_cached("SELECT provider, model FROM messages WHERE parent_id = ?1 ORDER BY seq DESC LIMIT 1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
        .unwrap_or_default();
    let attachments = super::attachments::of_message(conn, id)?;
    Ok(Question { id: id.to_owned(), text, turn_options, provider, model, attachments })
}

fn message_from_row(r: &Row<'_>) -> rusqlite::Result<StoredMessage> {
    let role: String = r.get(1)?;
    let status: String = r.get(4)?;
    let finish_reason: Option<String> = r.get(7)?;
    let error_kind: Option<String> = r.get(13)?;
    let error_message: Option<String> = r.get(14)?;
    let notices: String = r.get(15)?;
    Ok(StoredMessage {
        id: r.get(0)?,
        role: Role::parse(&role).ok_or_else(|| bad_value(1, "role", &role))?,
        content: r.get(2)?,
        reasoning: r.get(3)?,
        status: MessageStatus::parse(&status).ok_or_else(|| bad_value(4, "message status", &status))?,
        provider: r.get(5)?,
        model: r.get(6)?,
        finish_reason: finish_reason.map(|s| parse_name(7, "finish reason", &s)).transpose()?,
        usage: Usage {
            prompt_tokens: r.get(8)?,
            completion_tokens: r.get(9)?,
            reasoning_tokens: r.get(10)?,
            cached_tokens: r.get(11)?,
            cache_write_tokens: r.get(20)?,
        },
        tool_calls_made: r.get(12)?,
        error: match (error_kind, error_message) {
            (None, None) => None,
            (kind, message) => Some(StoredError {
                kind: kind
                    .map(|k| parse_name(13, "error kind", &k))
                    .transpose()?
                    .unwrap_or(switchboard_core::ErrorKind::Internal),
                message: message.unwrap_or_default(),
                detail: r.get(21)?,
            }),
        },
        notices: serde_json::from_str::<Vec<StoredNotice>>(&notices)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(15, Type::Text, Box::new(e)))?,
        provider_response_id: r.get(16)?,
        created_at: r.get(17)?,
        updated_at: r.get(18)?,
        tool_calls: Vec::new(),
        parent_id: r.get(22)?,
        versions: Vec::new(),
        pinned: r.get(23)?,
        attachments: Vec::new(),
        // State that cannot be read only costs the next request its continuation data.
        provider_states: r
            .get::<_, Option<String>>(19)?
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default(),
    })
}

/// Reads columns 1.. of the tool-call query in [`Store::messages`].
fn tool_call_from_row(r: &Row<'_>) -> rusqlite::Result<StoredToolCall> {
    let source: String = r.get(3)?;
    let status: String = r.get(8)?;
    let result_status: Option<String> = r.get(9)?;
    let result = match result_status {
        None => None,
        Some(s) => Some(StoredToolResult {
            status: switchboard_core::ToolStatus::parse(&s).ok_or_else(|| bad_value(9, "tool result status", &s))?,
            output: r.get(10)?,
            duration_ms: r.get(11)?,
            // Images that cannot be read only cost the card its pictures.
            images: r
                .get::<_, Option<String>>(12)?
                .and_then(|json| serde_json::from_str(&json).ok())
                .unwrap_or_default(),
        }),
    };
    Ok(StoredToolCall {
        call_id: r.get(1)?,
        name: r.get(2)?,
        // A source this build cannot parse only affects the card's label; the call still counts.
        source: serde_json::from_str(&source).unwrap_or(ToolSource::Unknown),
        arguments: r.get(4)?,
        text_offset: r.get(5)?,
        iteration: r.get(6)?,
        index: r.get(7)?,
        status: ToolCallStatus::parse(&status).ok_or_else(|| bad_value(8, "tool call status", &status))?,
        result,
        // A log this build cannot read only costs the card its nested progress.
        nested: r.get::<_, Option<String>>(13)?.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default(),
    })
}

fn bad_value(col: usize, what: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(col, Type::Text, format!("unknown {what} '{value}'").into())
}

/// Parses a camelCase name stored with `as_str` back into the core enum it came from.
fn parse_name<T: DeserializeOwned>(col: usize, what: &str, value: &str) -> rusqlite::Result<T> {
    serde_json::from_value(serde_json::Value::String(value.to_owned())).map_err(|_| bad_value(col, what, value))
}

fn ensure_conversation(conn: &Connection, id: &str) -> Result<()> {
    let exists: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1)")?
        .query_row([id], |r| r.get(0))?;
    if exists { Ok(()) } else { Err(Error::not_found("conversation", id)) }
}
