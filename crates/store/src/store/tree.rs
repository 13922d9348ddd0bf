//! The message tree: where a new question or answer goes, which branch is shown (the current
//! path: the conversation's head walked up through parents), switching versions, deleting a
//! version with what follows it, and copying a branch into a new conversation.
//!
//! Invariants: a message's parent is an older message of the same conversation (so the tree has
//! no cycles and seq increases along any path); the head is a message of the conversation or
//! NULL when it has none; every message on the current path has a `chosen_at` no older than any
//! of its siblings', so a switch follows the branch chosen last. A message still `streaming` is
//! always on the current path: nothing that would move it off or delete it is allowed while it
//! streams (Busy). Each operation is one transaction.

use super::{Store, new_id, now_millis};
use crate::error::{Error, Result};
use crate::model::{Role, TurnRows};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};
use switchboard_core::Attachment;

/// A CTE `path(id)`: the current path of conversation `?1`, head first. The depth bound only
/// guards against a damaged file; a real path is far shorter.
pub(crate) const PATH: &str = "WITH RECURSIVE path(id, depth) AS (
        SELECT head_id, 0 FROM conversations WHERE id = ?1 AND head_id IS NOT NULL
        UNION ALL
        SELECT m.parent_id, path.depth + 1 FROM messages m JOIN path ON m.id = path.id
        WHERE m.parent_id IS NOT NULL AND path.depth < 10000000)";

/// A CTE `line(id)`: message `?1` and its ancestors.
const LINE: &str = "WITH RECURSIVE line(id, depth) AS (
        SELECT ?1, 0
        UNION ALL
        SELECT m.parent_id, line.depth + 1 FROM messages m JOIN line ON m.id = line.id
        WHERE m.parent_id IS NOT NULL AND line.depth < 10000000)";

/// A CTE `sub(id)`: message `?1` and everything below it.
const SUBTREE: &str = "WITH RECURSIVE sub(id) AS (
        SELECT ?1
        UNION
        SELECT m.id FROM messages m JOIN sub ON m.parent_id = sub.id)";

const STREAMING: &str = "an answer is still streaming in this conversation; stop it first";

impl Store {
    /// Puts `message_id` on the conversation's current path: the head becomes the message
    /// reached from it by following, at each step, the child chosen last (ties: the newest).
    /// Refused while an answer that would leave the path is streaming.
    pub fn select_message(&self, conversation_id: &str, message_id: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        role_and_parent(&tx, conversation_id, message_id)?;
        let head = descend(&tx, message_id)?;
        put_on_path(&tx, conversation_id, &head)?;
        let stray: i64 = tx.query_row(
            &format!(
                "{PATH} SELECT COUNT(*) FROM messages WHERE conversation_id = ?1 AND status = 'streaming'
                 AND id NOT IN (SELECT id FROM path)"
            ),
            [conversation_id],
            |r| r.get(0),
        )?;
        if stray > 0 {
            return Err(Error::Busy(STREAMING.into()));
        }
        tx.commit()?;
        Ok(())
    }

    /// Edits a question: a new version of the person's message `message_id` (under the same
    /// parent) with `user_text`, `turn_options` and the files `attachments` (in order; to keep
    /// the old version's, pass [`Question::attachments`](crate::Question)), and an empty
    /// `streaming` answer to it, put on the current path. The earlier version and its branch are
    /// kept. Refused while an answer streams in the conversation.
    pub fn begin_edit(
        &self,
        conversation_id: &str,
        message_id: &str,
        user_text: &str,
        (provider, model): (&str, &str),
        turn_options: Option<&str>,
        attachments: &[Attachment],
    ) -> Result<TurnRows> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (role, parent) = role_and_parent(&tx, conversation_id, message_id)?;
        if role != Role::User {
            return Err(Error::Refused(
                "Only the person's messages can be edited; regenerate an answer instead.".into(),
            ));
        }
        refuse_streaming(&tx, conversation_id)?;
        let now = touch(&tx, conversation_id)?;
        let user_message_id = insert_question(&tx, conversation_id, parent.as_deref(), user_text, turn_options, now)?;
        super::attachments::link(&tx, &user_message_id, attachments)?;
        let message_id = insert_answer(&tx, conversation_id, &user_message_id, provider, model, now)?;
        put_on_path(&tx, conversation_id, &message_id)?;
        tx.commit()?;
        Ok(TurnRows { conversation_id: conversation_id.to_owned(), user_message_id, message_id })
    }

    /// Answers the question `user_message_id` again: a new `streaming` answer beside its earlier
    /// ones (which are kept as versions), put on the current path. `turn_options`, when given,
    /// replace the choices stored on the question (asking it again with other ones). Refused
    /// while an answer streams in the conversation.
    pub fn begin_answer(
        &self,
        conversation_id: &str,
        user_message_id: &str,
        (provider, model): (&str, &str),
        turn_options: Option<&str>,
    ) -> Result<TurnRows> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (role, _) = role_and_parent(&tx, conversation_id, user_message_id)?;
        if role != Role::User {
            return Err(Error::Refused("An answer is regenerated from its question.".into()));
        }
        refuse_streaming(&tx, conversation_id)?;
        let now = touch(&tx, conversation_id)?;
        if let Some(options) = turn_options {
            tx.execute("UPDATE messages SET turn_options = ?2 WHERE id = ?1", (user_message_id, options))?;
        }
        let message_id = insert_answer(&tx, conversation_id, user_message_id, provider, model, now)?;
        put_on_path(&tx, conversation_id, &message_id)?;
        tx.commit()?;
        Ok(TurnRows {
            conversation_id: conversation_id.to_owned(),
            user_message_id: user_message_id.to_owned(),
            message_id,
        })
    }

    /// Deletes the version `message_id` with everything that follows it. When it was on the
    /// current path, the path moves to the next version (else the previous one, else its
    /// parent). Refused while anything in it streams, and for a conversation's only first
    /// message (delete the conversation instead).
    pub fn delete_version(&self, conversation_id: &str, message_id: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (_, parent) = role_and_parent(&tx, conversation_id, message_id)?;
        let streaming: i64 = tx.query_row(
            &format!(
                "{SUBTREE} SELECT COUNT(*) FROM messages m JOIN sub ON sub.id = m.id WHERE m.status = 'streaming'"
            ),
            [message_id],
            |r| r.get(0),
        )?;
        if streaming > 0 {
            return Err(Error::Busy("this branch is still being answered; stop it first".into()));
        }
        let siblings = versions_of(&tx, conversation_id, message_id)?;
        if parent.is_none() && siblings.len() == 1 {
            return Err(Error::Refused(
                "This is the conversation's only first message; delete the conversation instead.".into(),
            ));
        }
        let on_path: bool = tx.query_row(
            &format!("{PATH} SELECT EXISTS (SELECT 1 FROM path WHERE id = ?2)"),
            [conversation_id, message_id],
            |r| r.get(0),
        )?;
        delete_subtree(&tx, message_id)?;
        if on_path {
            let at = siblings.iter().position(|s| s == message_id).unwrap_or(0);
            let neighbour = siblings.get(at + 1).or_else(|| at.checked_sub(1).and_then(|i| siblings.get(i)));
            let head = match (neighbour, parent) {
                (Some(next), _) => descend(&tx, next)?,
                (None, Some(parent)) => parent,
                (None, None) => unreachable!("an only first message was refused above"),
            };
            put_on_path(&tx, conversation_id, &head)?;
        }
        tx.commit()?;
        drop(conn);
        self.collect_after_delete();
        Ok(())
    }

    /// Copies the branch from the first message to `message_id` into a new conversation (new
    /// ids for its messages, tool calls and results; nested runs, images, provider state and
    /// attached files (references: the bytes are shared) kept), with the chat's instructions, agent, tools switched off and setup, titled
    /// "<title> (branch)". Returns the new conversation's id. Refused while an answer on that
    /// branch streams.
    pub fn branch_to_new_conversation(&self, conversation_id: &str, message_id: &str) -> Result<String> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        role_and_parent(&tx, conversation_id, message_id)?;
        let line: Vec<(String, String)> = {
            let mut stmt = tx.prepare(&format!(
                "{LINE} SELECT m.id, m.status FROM line JOIN messages m ON m.id = line.id ORDER BY m.seq"
            ))?;
            stmt.query_map([message_id], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?
        };
        if line.iter().any(|(_, status)| status == "streaming") {
            return Err(Error::Busy("an answer on this branch is still streaming; stop it first".into()));
        }
        let now = now_millis();
        let new_conversation = new_id();
        tx.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at, disabled_tools, instructions, agent, setup)
             SELECT ?2, title || ' (branch)', ?3, ?3, disabled_tools, instructions, agent, setup
             FROM conversations WHERE id = ?1",
            (conversation_id, &new_conversation, now),
        )?;
        let mut parent: Option<String> = None;
        for (seq, (old, _)) in (1_i64..).zip(&line) {
            let id = new_id();
            tx.execute(
                "INSERT INTO messages (id, conversation_id, seq, parent_id, chosen_at, role, content, reasoning,
                     status, provider, model, finish_reason, prompt_tokens, completion_tokens, reasoning_tokens,
                     cached_tokens, tool_calls_made, error_kind, error_message, notices, provider_response_id,
                     created_at, updated_at, turn_options, provider_state, cache_write_tokens, error_detail)
                 SELECT ?2, ?3, ?4, ?5, ?6, role, content, reasoning,
                     status, provider, model, finish_reason, prompt_tokens, completion_tokens, reasoning_tokens,
                     cached_tokens, tool_calls_made, error_kind, error_message, notices, provider_response_id,
                     created_at, updated_at, turn_options, provider_state, cache_write_tokens, error_detail
                 FROM messages WHERE id = ?1",
                rusqlite::params![old, id, new_conversation, seq, parent, now],
            )?;
            super::attachments::copy_links(&tx, old, &id)?;
            let calls: Vec<String> = {
                let mut stmt = tx.prepare_cached("SELECT id FROM tool_calls WHERE message_id = ?1")?;
                stmt.query_map([old], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
            };
            for call in calls {
                let new_call = new_id();
                tx.execute(
                    "INSERT INTO tool_calls (id, message_id, call_id, iteration, idx, name, source, arguments,
                         text_offset, status, created_at, nested)
                     SELECT ?2, ?3, call_id, iteration, idx, name, source, arguments,
                         text_offset, status, created_at, nested
                     FROM tool_calls WHERE id = ?1",
                    (&call, &new_call, &id),
                )?;
                tx.execute(
                    "INSERT INTO tool_results (tool_call_id, status, output, duration_ms, created_at, images)
                     SELECT ?2, status, output, duration_ms, created_at, images FROM tool_results
                     WHERE tool_call_id = ?1",
                    (&call, &new_call),
                )?;
            }
            parent = Some(id);
        }
        if let Some(head) = parent {
            tx.execute("UPDATE conversations SET head_id = ?2 WHERE id = ?1", (&new_conversation, head))?;
        }
        tx.commit()?;
        Ok(new_conversation)
    }

    /// [`Error::Busy`] while an answer streams in the conversation: a caller checks this before
    /// the work that precedes an edit or a regenerate (the write checks again).
    pub fn ensure_idle(&self, conversation_id: &str) -> Result<()> {
        refuse_streaming(&self.conn(), conversation_id)
    }

    /// The versions of `message_id` (itself included), oldest first.
    pub fn versions(&self, conversation_id: &str, message_id: &str) -> Result<Vec<String>> {
        let conn = self.conn();
        role_and_parent(&conn, conversation_id, message_id)?;
        versions_of(&conn, conversation_id, message_id)
    }
}

/// The conversation's head (`None` when it has no messages); NotFound for no conversation.
pub(crate) fn head(conn: &Connection, conversation_id: &str) -> Result<Option<String>> {
    conn.prepare_cached("SELECT head_id FROM conversations WHERE id = ?1")?
        .query_row([conversation_id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| Error::not_found("conversation", conversation_id))
}

/// The role and parent of a message of the conversation; NotFound when it is not one of its.
pub(crate) fn role_and_parent(conn: &Connection, conversation_id: &str, id: &str) -> Result<(Role, Option<String>)> {
    let found: Option<(String, Option<String>)> = conn
        .prepare_cached("SELECT role, parent_id FROM messages WHERE id = ?1 AND conversation_id = ?2")?
        .query_row([id, conversation_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let (role, parent) = found.ok_or_else(|| Error::not_found("message", id))?;
    let role = Role::parse(&role).ok_or_else(|| Error::not_found("message with a known role", id))?;
    Ok((role, parent))
}

/// Inserts the person's message under `parent` (`None`: a first message).
pub(crate) fn insert_question(
    conn: &Connection,
    conversation_id: &str,
    parent: Option<&str>,
    text: &str,
    turn_options: Option<&str>,
    now: i64,
) -> Result<String> {
    let id = new_id();
    conn.execute(
        "INSERT INTO messages (id, conversation_id, seq, parent_id, role, content, status, turn_options,
                               created_at, updated_at)
         VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?2), ?3,
                 'user', ?4, 'complete', ?5, ?6, ?6)",
        rusqlite::params![id, conversation_id, parent, text, turn_options, now],
    )?;
    Ok(id)
}

/// Inserts an empty `streaming` answer to the question `parent`.
pub(crate) fn insert_answer(
    conn: &Connection,
    conversation_id: &str,
    parent: &str,
    provider: &str,
    model: &str,
    now: i64,
) -> Result<String> {
    let id = new_id();
    conn.execute(
        "INSERT INTO messages (id, conversation_id, seq, parent_id, role, status, provider, model, created_at,
                               updated_at)
         VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE conversation_id = ?2), ?3,
                 'assistant', 'streaming', ?4, ?5, ?6, ?6)",
        rusqlite::params![id, conversation_id, parent, provider, model, now],
    )?;
    Ok(id)
}

/// Makes `head` the conversation's head and marks its path chosen now: later than any earlier
/// choice, even within the same millisecond.
pub(crate) fn put_on_path(conn: &Connection, conversation_id: &str, head: &str) -> Result<()> {
    conn.execute("UPDATE conversations SET head_id = ?2 WHERE id = ?1", (conversation_id, head))?;
    let last: i64 = conn
        .prepare_cached("SELECT COALESCE(MAX(chosen_at), 0) FROM messages WHERE conversation_id = ?1")?
        .query_row([conversation_id], |r| r.get(0))?;
    let now = now_millis().max(last + 1);
    conn.execute(
        &format!("{PATH} UPDATE messages SET chosen_at = ?2 WHERE id IN (SELECT id FROM path)"),
        (conversation_id, now),
    )?;
    Ok(())
}

/// Makes `added` (new messages under the head, the last of them the new head) the end of the
/// current path. The path above them is already the latest choice at every step, so only the new
/// rows are marked chosen: a question costs the same writes however long the chat.
pub(crate) fn extend_path(conn: &Connection, conversation_id: &str, added: &[&str]) -> Result<()> {
    let Some(head) = added.last() else { return Ok(()) };
    conn.execute("UPDATE conversations SET head_id = ?2 WHERE id = ?1", (conversation_id, head))?;
    let last: i64 = conn
        .prepare_cached("SELECT COALESCE(MAX(chosen_at), 0) FROM messages WHERE conversation_id = ?1")?
        .query_row([conversation_id], |r| r.get(0))?;
    let now = now_millis().max(last + 1);
    let mut mark = conn.prepare_cached("UPDATE messages SET chosen_at = ?2 WHERE id = ?1")?;
    for id in added {
        mark.execute((id, now))?;
    }
    Ok(())
}

/// The message reached from `from` by following, at each step, the child chosen last.
fn descend(conn: &Connection, from: &str) -> Result<String> {
    let mut stmt =
        conn.prepare_cached("SELECT id FROM messages WHERE parent_id = ?1 ORDER BY chosen_at DESC, seq DESC LIMIT 1")?;
    let mut at = from.to_owned();
    while let Some(child) = stmt.query_row([&at], |r| r.get::<_, String>(0)).optional()? {
        at = child;
    }
    Ok(at)
}

/// The versions of a message: the same role under the same parent (roots: of the conversation).
pub(crate) fn versions_of(conn: &Connection, conversation_id: &str, message_id: &str) -> Result<Vec<String>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id FROM messages m JOIN messages s
           ON s.conversation_id = m.conversation_id AND s.parent_id IS m.parent_id AND s.role = m.role
         WHERE m.id = ?1 AND m.conversation_id = ?2 ORDER BY s.seq",
    )?;
    Ok(stmt.query_map([message_id, conversation_id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?)
}

/// Busy when any answer of the conversation is streaming.
fn refuse_streaming(conn: &Connection, conversation_id: &str) -> Result<()> {
    let streaming: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM messages WHERE conversation_id = ?1 AND status = 'streaming')")?
        .query_row([conversation_id], |r| r.get(0))?;
    if streaming { Err(Error::Busy(STREAMING.into())) } else { Ok(()) }
}

/// Marks the conversation updated now (NotFound when there is none); returns now.
fn touch(conn: &Connection, conversation_id: &str) -> Result<i64> {
    let now = now_millis();
    let n = conn.execute("UPDATE conversations SET updated_at = ?2 WHERE id = ?1", (conversation_id, now))?;
    if n == 0 {
        return Err(Error::not_found("conversation", conversation_id));
    }
    Ok(now)
}

/// Deletes a message and everything below it. The links are cut first, so no cascade runs
/// through a long branch (SQLite bounds the depth of cascading deletes).
pub(crate) fn delete_subtree(conn: &Connection, message_id: &str) -> Result<()> {
    let ids: Vec<String> = {
        let mut stmt = conn.prepare_cached(&format!("{SUBTREE} SELECT id FROM sub"))?;
        stmt.query_map([message_id], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?
    };
    let mut unlink = conn.prepare_cached("UPDATE messages SET parent_id = NULL WHERE id = ?1")?;
    for id in &ids {
        unlink.execute([id])?;
    }
    let mut delete = conn.prepare_cached("DELETE FROM messages WHERE id = ?1")?;
    for id in &ids {
        delete.execute([id])?;
    }
    Ok(())
}
