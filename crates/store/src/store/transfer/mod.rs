//! Whole conversations as plain records, read out and written back in one transaction: what the
//! service's export and import carry. A record holds every row of a conversation (every branch,
//! tool calls with their results and nested runs, provider state, the chat's settings and setup,
//! the files its messages carry with their bytes: `attachments.rs`) with the stored values
//! unchanged, so a record written back reads out identical.
//!
//! Invariant: an import writes its good conversations in one transaction, each whole or not at
//! all; it never changes a conversation that already exists (one whose id is taken is skipped,
//! reported as such). A record whose rows do not hang together (a parent that is not an earlier
//! message of the same conversation, a head that is not one of its messages, an id used twice),
//! whose setup fails [`ChatSetup::check`], whose files do not match their SHA-256, or whose rows
//! collide with rows already stored (a message id of another conversation) is refused, reported
//! with why ([`RefusedRecord`]), and changes nothing; the others are still written.

mod attachments;

pub use attachments::{AttachmentRecord, MessageAttachmentRecord};

use super::{ChatSetup, Store, from_json, to_json};
use crate::error::{Error, Result};
use crate::model::{MessageStatus, Role, ToolCallStatus};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};

/// One conversation with all of its rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConversationRecord {
    /// Conversation id (kept on import).
    pub id: String,
    /// Title.
    pub title: String,
    /// Unix millis.
    pub created_at: i64,
    /// Unix millis.
    pub updated_at: i64,
    /// Kept at the top of the list.
    #[serde(default)]
    pub pinned: bool,
    /// Kept out of the main list.
    #[serde(default)]
    pub archived: bool,
    /// Its own instructions.
    #[serde(default)]
    pub instructions: Option<String>,
    /// The agent it runs, by name.
    #[serde(default)]
    pub agent: Option<String>,
    /// Tools switched off for this chat.
    #[serde(default)]
    pub disabled_tools: BTreeSet<String>,
    /// Tools approved for the rest of this chat.
    #[serde(default)]
    pub approved_tools: BTreeSet<String>,
    /// The leaf of the current path (`None` when it has no messages).
    #[serde(default)]
    pub head_id: Option<String>,
    /// The chat's setup (toolsets, its own parameters, the profile and model it last used);
    /// `None` when none was stored (left out of the document then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<ChatSetup>,
    /// Every message of every branch, in insertion order (`seq`).
    pub messages: Vec<MessageRecord>,
    /// The files its messages carry, each once (ordered by id); left out of the document when
    /// none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<AttachmentRecord>,
}

/// One message row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageRecord {
    /// Message id (kept on import).
    pub id: String,
    /// The message it follows (`None`: a root; several roots are versions of the first message).
    #[serde(default)]
    pub parent_id: Option<String>,
    /// When it was last put on the current path (Unix millis; 0: never chosen).
    #[serde(default)]
    pub chosen_at: i64,
    /// Position in insertion order, unique in the conversation.
    pub seq: i64,
    /// `user` or `assistant`.
    pub role: Role,
    /// The visible text.
    #[serde(default)]
    pub content: String,
    /// Reasoning text.
    #[serde(default)]
    pub reasoning: String,
    /// Where it is in its life (an imported `streaming` one is stored `interrupted`).
    pub status: MessageStatus,
    /// Provider profile name.
    #[serde(default)]
    pub provider: Option<String>,
    /// Model id.
    #[serde(default)]
    pub model: Option<String>,
    /// Why the turn ended (the stored name).
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Tokens.
    #[serde(default)]
    pub usage: switchboard_core::Usage,
    /// How many tool calls the model made.
    #[serde(default)]
    pub tool_calls_made: u32,
    /// Error kind (the stored name), message and detail.
    #[serde(default)]
    pub error: Option<ErrorRecord>,
    /// Notices shown during the turn (as stored).
    #[serde(default)]
    pub notices: Value,
    /// The provider's id for the response.
    #[serde(default)]
    pub provider_response_id: Option<String>,
    /// The choices the question was asked with (as stored; user messages).
    #[serde(default)]
    pub turn_options: Option<Value>,
    /// What each iteration's API wants back (as stored).
    #[serde(default)]
    pub provider_state: Option<Value>,
    /// Unix millis.
    pub created_at: i64,
    /// Unix millis.
    pub updated_at: i64,
    /// Its tool calls, by (iteration, index).
    #[serde(default)]
    pub tool_calls: Vec<ToolCallRecord>,
    /// The files attached to it (the person's messages), in order; left out when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<MessageAttachmentRecord>,
}

/// A message's error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorRecord {
    /// The stored kind name.
    #[serde(default)]
    pub kind: Option<String>,
    /// The message shown.
    #[serde(default)]
    pub message: Option<String>,
    /// The technical detail.
    #[serde(default)]
    pub detail: Option<String>,
}

/// One tool call row with its result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolCallRecord {
    /// Row id (kept on import).
    pub id: String,
    /// The provider's call id.
    pub call_id: String,
    /// 1-based iteration.
    pub iteration: u32,
    /// 0-based position in its iteration.
    pub index: u32,
    /// Registry name.
    pub name: String,
    /// Where the tool comes from (as stored).
    pub source: Value,
    /// Raw argument text.
    pub arguments: String,
    /// Chars of the turn's text before the call.
    pub text_offset: u64,
    /// Where it is in its life (an imported `pending` or `running` one is stored `cancelled`).
    pub status: ToolCallStatus,
    /// Unix millis.
    pub created_at: i64,
    /// What its sub-agents did (as stored).
    #[serde(default)]
    pub nested: Option<Value>,
    /// Its result.
    #[serde(default)]
    pub result: Option<ToolResultRecord>,
}

/// A tool call's result row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolResultRecord {
    /// The stored status name.
    pub status: String,
    /// What the model saw.
    pub output: String,
    /// Wall time.
    pub duration_ms: u64,
    /// Unix millis.
    pub created_at: i64,
    /// Images (as stored).
    #[serde(default)]
    pub images: Option<Value>,
}

/// What [`Store::import_records`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportOutcome {
    /// Ids of the conversations written.
    pub imported: Vec<String>,
    /// Ids of the conversations skipped because one with that id already exists.
    pub skipped: Vec<String>,
    /// The conversations not written because they cannot be, each with why (in file order).
    pub refused: Vec<RefusedRecord>,
}

/// A conversation an import did not write, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedRecord {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Why, for the person ("message 'm2' follows 'm9', which is not one of its messages").
    pub reason: String,
}

impl Store {
    /// The records of the conversations `ids`, read in one transaction (the attached files'
    /// bytes after it, without holding the database). A file whose stored copy is missing or
    /// damaged fails it ([`Error::AttachmentMissing`], [`Error::AttachmentDamaged`]).
    pub fn conversation_records(&self, ids: &[String]) -> Result<Vec<ConversationRecord>> {
        let mut records = {
            let conn = self.conn();
            let tx = conn.unchecked_transaction()?;
            let records = ids.iter().map(|id| read_record(&tx, id)).collect::<Result<Vec<_>>>()?;
            tx.commit()?;
            records
        };
        attachments::fill_data(&self.inner.blobs, &mut records)?;
        Ok(records)
    }

    /// Which of `ids` name an existing conversation.
    pub fn existing_conversations(&self, ids: &[&str]) -> Result<HashSet<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1)")?;
        let mut found = HashSet::new();
        for id in ids {
            if stmt.query_row([id], |r| r.get::<_, bool>(0))? {
                found.insert((*id).to_owned());
            }
        }
        Ok(found)
    }

    /// Writes `records` in one transaction: each conversation whose id is new, with all its rows
    /// as given; one whose id exists is skipped. A record that fails [`check_record`], repeats an
    /// earlier record's id, or whose rows collide with stored ones (a message or tool call id
    /// already used) is refused with why and leaves nothing behind; the others are written. Only
    /// a failure of the database itself (or of writing a file) fails the import, and then nothing
    /// is written.
    pub fn import_records(&self, records: &[ConversationRecord]) -> Result<ImportOutcome> {
        let mut outcome = ImportOutcome::default();
        let mut seen = HashSet::new();
        let mut good = Vec::with_capacity(records.len());
        for r in records {
            let why = if seen.insert(r.id.as_str()) {
                check_record(r).err()
            } else {
                Some("it appears twice in the file (the first was taken)".to_owned())
            };
            match why {
                Some(reason) => outcome.refused.push(refused(r, reason)),
                None => good.push(r),
            }
        }
        // Files are written before the database is held; those of a conversation that is
        // skipped or refused, or of an import that fails, are removed when `staged` drops.
        let mut staged = attachments::stage_all(&self.inner.blobs, good.iter().copied())?;
        let mut conn = self.conn();
        let mut tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for r in good {
            let exists: bool =
                tx.query_row("SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1)", [&r.id], |row| row.get(0))?;
            if exists {
                outcome.skipped.push(r.id.clone());
                continue;
            }
            // Each conversation under its own savepoint: one whose ids are taken by stored rows
            // (found while writing it) is rolled back alone.
            let sp = tx.savepoint()?;
            let written =
                attachments::write_files(&sp, &self.inner.blobs, &mut staged, r).and_then(|()| write_record(&sp, r));
            match written {
                Ok(()) => {
                    sp.commit()?;
                    outcome.imported.push(r.id.clone());
                }
                Err(Error::Invalid(reason)) => {
                    drop(sp);
                    outcome.refused.push(refused(r, reason));
                }
                Err(e) => return Err(e),
            }
        }
        tx.commit()?;
        // Refusals in file order, wherever they were found.
        let order: HashMap<&str, usize> = records.iter().enumerate().rev().map(|(i, r)| (r.id.as_str(), i)).collect();
        outcome.refused.sort_by_key(|f| order.get(f.id.as_str()).copied().unwrap_or(usize::MAX));
        Ok(outcome)
    }
}

fn refused(r: &ConversationRecord, reason: String) -> RefusedRecord {
    RefusedRecord { id: r.id.clone(), title: r.title.clone(), reason }
}

/// Whether a record's rows hang together: unique message, seq and tool-call ids; every parent an
/// earlier message of the same conversation (so there is no cycle); known stored names; a setup
/// the store keeps ([`ChatSetup::check`]); attached files whose bytes have the size and SHA-256
/// they claim, each message referring only to the record's own files.
pub fn check_record(r: &ConversationRecord) -> std::result::Result<(), String> {
    if let Some(setup) = &r.setup {
        setup.check().map_err(|e| format!("its chat setup is not valid: {e}"))?;
    }
    let mut ids = HashSet::new();
    let mut seqs = HashSet::new();
    let mut call_rows = HashSet::new();
    for m in &r.messages {
        if !ids.insert(m.id.as_str()) {
            return Err(format!("message '{}' appears twice", m.id));
        }
        if !seqs.insert(m.seq) {
            return Err(format!("two messages have position {}", m.seq));
        }
    }
    let seq_of: HashMap<&str, i64> = r.messages.iter().map(|m| (m.id.as_str(), m.seq)).collect();
    match &r.head_id {
        Some(head) if !seq_of.contains_key(head.as_str()) => {
            return Err(format!("its current message '{head}' is not one of its messages"));
        }
        None if !r.messages.is_empty() => return Err("it names no current message (headId)".to_owned()),
        _ => {}
    }
    for m in &r.messages {
        if let Some(parent) = &m.parent_id {
            match seq_of.get(parent.as_str()) {
                None => return Err(format!("message '{}' follows '{parent}', which is not one of its messages", m.id)),
                // Along any path positions increase: a later parent would allow a cycle.
                Some(&seq) if seq >= m.seq => {
                    return Err(format!("message '{}' follows '{parent}', which comes after it (a cycle)", m.id));
                }
                Some(_) => {}
            }
        }
        if !m.notices.is_null() {
            serde_json::from_value::<Vec<crate::model::StoredNotice>>(m.notices.clone())
                .map_err(|e| format!("message '{}' has notices this version cannot read: {e}", m.id))?;
        }
        if let Some(name) = &m.finish_reason {
            known::<switchboard_core::FinishReason>(name, "finish reason")?;
        }
        if let Some(kind) = m.error.as_ref().and_then(|e| e.kind.as_ref()) {
            known::<switchboard_core::ErrorKind>(kind, "error kind")?;
        }
        let mut call_ids = HashSet::new();
        for c in &m.tool_calls {
            if !call_rows.insert(c.id.as_str()) {
                return Err(format!("tool call '{}' appears twice", c.id));
            }
            if !call_ids.insert(c.call_id.as_str()) {
                return Err(format!("message '{}' has two calls with the id '{}'", m.id, c.call_id));
            }
            if let Some(res) = &c.result {
                switchboard_core::ToolStatus::parse(&res.status)
                    .ok_or_else(|| format!("unknown tool result status '{}'", res.status))?;
            }
        }
    }
    attachments::check(r)
}

fn known<T: serde::de::DeserializeOwned>(name: &str, what: &str) -> std::result::Result<T, String> {
    serde_json::from_value(Value::String(name.to_owned())).map_err(|_| format!("unknown {what} '{name}'"))
}

/// A JSON column's value: the parsed text, or `Null` for none (or text this build cannot read).
fn column_json(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Value::Null)
}

/// The text to store for a JSON column; `Null` is no value.
fn json_column(value: Option<&Value>) -> Option<String> {
    value.filter(|v| !v.is_null()).map(Value::to_string)
}

fn read_record(conn: &Connection, id: &str) -> Result<ConversationRecord> {
    let found: Option<(ConversationRecord, String, String, Option<String>)> = conn
        .prepare_cached(
            "SELECT title, created_at, updated_at, pinned, archived, instructions, agent, disabled_tools,
                    approved_tools, head_id, setup
             FROM conversations WHERE id = ?1",
        )?
        .query_row([id], |r| {
            let record = ConversationRecord {
                id: id.to_owned(),
                title: r.get(0)?,
                created_at: r.get(1)?,
                updated_at: r.get(2)?,
                pinned: r.get(3)?,
                archived: r.get(4)?,
                instructions: r.get(5)?,
                agent: r.get(6)?,
                disabled_tools: BTreeSet::new(),
                approved_tools: BTreeSet::new(),
                head_id: r.get(9)?,
                setup: None,
                messages: Vec::new(),
                attachments: Vec::new(),
            };
            Ok((record, r.get(7)?, r.get(8)?, r.get(10)?))
        })
        .optional()?;
    let Some((mut record, disabled, approved, setup)) = found else {
        return Err(Error::not_found("conversation", id));
    };
    let mut calls: HashMap<String, Vec<ToolCallRecord>> = HashMap::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT tc.message_id, tc.id, tc.call_id, tc.iteration, tc.idx, tc.name, tc.source, tc.arguments,
                    tc.text_offset, tc.status, tc.created_at, tc.nested,
                    tr.status, tr.output, tr.duration_ms, tr.created_at, tr.images
             FROM tool_calls tc JOIN messages m ON m.id = tc.message_id
             LEFT JOIN tool_results tr ON tr.tool_call_id = tc.id
             WHERE m.conversation_id = ?1 ORDER BY m.seq, tc.iteration, tc.idx, tc.id",
        )?;
        let rows = stmt.query_map([id], |r| {
            let status: String = r.get(9)?;
            let result_status: Option<String> = r.get(12)?;
            Ok((
                r.get::<_, String>(0)?,
                ToolCallRecord {
                    id: r.get(1)?,
                    call_id: r.get(2)?,
                    iteration: r.get(3)?,
                    index: r.get(4)?,
                    name: r.get(5)?,
                    source: column_json(r.get(6)?),
                    arguments: r.get(7)?,
                    text_offset: r.get(8)?,
                    status: ToolCallStatus::parse(&status).unwrap_or(ToolCallStatus::Cancelled),
                    created_at: r.get(10)?,
                    nested: Some(column_json(r.get(11)?)).filter(|v| !v.is_null()),
                    result: match result_status {
                        None => None,
                        Some(status) => Some(ToolResultRecord {
                            status,
                            output: r.get(13)?,
                            duration_ms: r.get(14)?,
                            created_at: r.get(15)?,
                            images: Some(column_json(r.get(16)?)).filter(|v| !v.is_null()),
                        }),
                    },
                },
            ))
        })?;
        for row in rows {
            let (message_id, call) = row?;
            calls.entry(message_id).or_default().push(call);
        }
    }
    let (mut refs, files) = attachments::read(conn, id)?;
    let mut messages = Vec::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT id, seq, role, content, reasoning, status, provider, model, finish_reason,
                    prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, cache_write_tokens,
                    tool_calls_made, error_kind, error_message, error_detail, notices, provider_response_id,
                    turn_options, provider_state, created_at, updated_at, parent_id, chosen_at
             FROM messages WHERE conversation_id = ?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map([id], |r| {
            let role: String = r.get(2)?;
            let status: String = r.get(5)?;
            let (kind, message, detail): (Option<String>, Option<String>, Option<String>) =
                (r.get(15)?, r.get(16)?, r.get(17)?);
            Ok(MessageRecord {
                id: r.get(0)?,
                parent_id: r.get(24)?,
                chosen_at: r.get(25)?,
                seq: r.get(1)?,
                role: Role::parse(&role).unwrap_or(Role::Assistant),
                content: r.get(3)?,
                reasoning: r.get(4)?,
                status: MessageStatus::parse(&status).unwrap_or(MessageStatus::Interrupted),
                provider: r.get(6)?,
                model: r.get(7)?,
                finish_reason: r.get(8)?,
                usage: switchboard_core::Usage {
                    prompt_tokens: r.get(9)?,
                    completion_tokens: r.get(10)?,
                    reasoning_tokens: r.get(11)?,
                    cached_tokens: r.get(12)?,
                    cache_write_tokens: r.get(13)?,
                },
                tool_calls_made: r.get(14)?,
                error: (kind.is_some() || message.is_some()).then_some(ErrorRecord { kind, message, detail }),
                notices: column_json(r.get(18)?),
                provider_response_id: r.get(19)?,
                turn_options: Some(column_json(r.get(20)?)).filter(|v| !v.is_null()),
                provider_state: Some(column_json(r.get(21)?)).filter(|v| !v.is_null()),
                created_at: r.get(22)?,
                updated_at: r.get(23)?,
                tool_calls: Vec::new(),
                attachments: Vec::new(),
            })
        })?;
        for row in rows {
            let mut m: MessageRecord = row?;
            m.tool_calls = calls.remove(&m.id).unwrap_or_default();
            m.attachments = refs.remove(&m.id).unwrap_or_default();
            messages.push(m);
        }
    }
    record.disabled_tools = from_json(&disabled, || format!("disabled tools of conversation '{id}'"))?;
    record.approved_tools = from_json(&approved, || format!("approved tools of conversation '{id}'"))?;
    record.setup = setup.map(|json| from_json(&json, || format!("setup of conversation '{id}'"))).transpose()?;
    record.messages = messages;
    record.attachments = files;
    Ok(record)
}

fn write_record(tx: &Connection, r: &ConversationRecord) -> Result<()> {
    tx.execute(
        "INSERT INTO conversations (id, title, created_at, updated_at, pinned, archived, instructions, agent,
                                    disabled_tools, approved_tools, setup)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        rusqlite::params![
            r.id,
            r.title,
            r.created_at,
            r.updated_at,
            r.pinned && !r.archived,
            r.archived,
            r.instructions,
            r.agent,
            to_json(&r.disabled_tools, "disabled tools")?,
            to_json(&r.approved_tools, "approved tools")?,
            r.setup.as_ref().map(|s| to_json(s, "chat setup")).transpose()?,
        ],
    )?;
    let mut taken = tx.prepare_cached("SELECT conversation_id FROM messages WHERE id = ?1")?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO messages (id, conversation_id, seq, role, content, reasoning, status, provider, model,
                               finish_reason, prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens,
                               cache_write_tokens, tool_calls_made, error_kind, error_message, error_detail, notices,
                               provider_response_id, turn_options, provider_state, created_at, updated_at,
                               parent_id, chosen_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
                 ?22, ?23, ?24, ?25, ?26, ?27)",
    )?;
    let mut messages: Vec<&MessageRecord> = r.messages.iter().collect();
    messages.sort_by_key(|m| m.seq);
    for m in messages {
        if let Some(other) = taken.query_row([&m.id], |row| row.get::<_, String>(0)).optional()? {
            return Err(Error::Invalid(format!(
                "message '{}' of conversation '{}' is already stored in conversation '{other}'",
                m.id, r.id
            )));
        }
        // Nothing is producing it here: stored as start-up recovery would leave it.
        let status = if m.status == MessageStatus::Streaming { MessageStatus::Interrupted } else { m.status }.as_str();
        let error = m.error.as_ref();
        insert.execute(rusqlite::params![
            m.id,
            r.id,
            m.seq,
            m.role.as_str(),
            m.content,
            m.reasoning,
            status,
            m.provider,
            m.model,
            m.finish_reason,
            m.usage.prompt_tokens,
            m.usage.completion_tokens,
            m.usage.reasoning_tokens,
            m.usage.cached_tokens,
            m.usage.cache_write_tokens,
            m.tool_calls_made,
            error.and_then(|e| e.kind.clone()),
            error.and_then(|e| e.message.clone()),
            error.and_then(|e| e.detail.clone()),
            json_column(Some(&m.notices)).unwrap_or_else(|| "[]".to_owned()),
            m.provider_response_id,
            json_column(m.turn_options.as_ref()),
            json_column(m.provider_state.as_ref()),
            m.created_at,
            m.updated_at,
            m.parent_id,
            m.chosen_at,
        ])?;
        write_calls(tx, &r.id, m)?;
        attachments::write_refs(tx, m)?;
    }
    // Written once its messages exist.
    tx.execute("UPDATE conversations SET head_id = ?2 WHERE id = ?1", (&r.id, &r.head_id))?;
    Ok(())
}

fn write_calls(tx: &Connection, conversation_id: &str, m: &MessageRecord) -> Result<()> {
    let mut taken = tx.prepare_cached("SELECT EXISTS (SELECT 1 FROM tool_calls WHERE id = ?1)")?;
    let mut call = tx.prepare_cached(
        "INSERT INTO tool_calls (id, message_id, call_id, iteration, idx, name, source, arguments, text_offset,
                                 status, created_at, nested)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    let mut result = tx.prepare_cached(
        "INSERT INTO tool_results (tool_call_id, status, output, duration_ms, created_at, images)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for c in &m.tool_calls {
        if taken.query_row([&c.id], |row| row.get::<_, bool>(0))? {
            return Err(Error::Invalid(format!(
                "tool call '{}' of conversation '{conversation_id}' is already stored elsewhere",
                c.id
            )));
        }
        let status = match c.status {
            ToolCallStatus::Pending | ToolCallStatus::Running => ToolCallStatus::Cancelled,
            other => other,
        };
        call.execute(rusqlite::params![
            c.id,
            m.id,
            c.call_id,
            c.iteration,
            c.index,
            c.name,
            json_column(Some(&c.source)).unwrap_or_else(|| "{\"kind\":\"unknown\"}".to_owned()),
            c.arguments,
            c.text_offset,
            status.as_str(),
            c.created_at,
            json_column(c.nested.as_ref()),
        ])?;
        if let Some(res) = &c.result {
            result.execute(rusqlite::params![
                c.id,
                res.status,
                res.output,
                res.duration_ms,
                res.created_at,
                json_column(res.images.as_ref())
            ])?;
        }
    }
    Ok(())
}
