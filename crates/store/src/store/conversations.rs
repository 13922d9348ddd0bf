//! Conversations: the list (pinned first), search, pin, archive, rename, delete, a chat's own
//! instructions and agent, and its per-chat tool choices (tools switched off, tools approved).
//!
//! Invariant: an id that names no conversation is [`Error::NotFound`], never a silent no-op.

use super::{Store, from_json, to_json};
use crate::error::{Error, Result};
use crate::model::ConversationSummary;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior};
use std::collections::{BTreeSet, HashSet};

impl Store {
    /// All conversations, most recently updated first.
    pub fn conversations(&self) -> Result<Vec<ConversationSummary>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached(&format!("{SUMMARY_SELECT} ORDER BY c.pinned DESC, c.updated_at DESC, c.id DESC"))?;
        let rows = stmt.query_map([], summary_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One conversation's summary.
    pub fn conversation(&self, id: &str) -> Result<ConversationSummary> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{SUMMARY_SELECT} WHERE c.id = ?1"))?;
        stmt.query_row([id], summary_from_row).optional()?.ok_or_else(|| Error::not_found("conversation", id))
    }

    /// Pins a conversation to the top of the list, or unpins it.
    pub fn set_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        let n = self.conn().execute("UPDATE conversations SET pinned = ?2 WHERE id = ?1", (id, pinned))?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// Archives a conversation (out of the main list), or brings it back. An archived one is
    /// never pinned.
    pub fn set_archived(&self, id: &str, archived: bool) -> Result<()> {
        let n = self.conn().execute(
            "UPDATE conversations SET archived = ?2, pinned = CASE WHEN ?2 THEN 0 ELSE pinned END WHERE id = ?1",
            (id, archived),
        )?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// A conversation's own instructions (its system prompt); `None` when it has none.
    pub fn instructions(&self, id: &str) -> Result<Option<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT instructions FROM conversations WHERE id = ?1")?;
        let found: Option<Option<String>> = stmt.query_row([id], |r| r.get(0)).optional()?;
        found.ok_or_else(|| Error::not_found("conversation", id))
    }

    /// Sets a conversation's own instructions; blank or `None` removes them.
    pub fn set_instructions(&self, id: &str, instructions: Option<&str>) -> Result<()> {
        let value = instructions.filter(|t| !t.trim().is_empty());
        let n = self.conn().execute("UPDATE conversations SET instructions = ?2 WHERE id = ?1", (id, value))?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// The agent a conversation runs, by name; `None` for a plain chat.
    pub fn agent(&self, id: &str) -> Result<Option<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT agent FROM conversations WHERE id = ?1")?;
        let found: Option<Option<String>> = stmt.query_row([id], |r| r.get(0)).optional()?;
        found.ok_or_else(|| Error::not_found("conversation", id))
    }

    /// Sets the agent a conversation runs (`None`: a plain chat).
    pub fn set_agent(&self, id: &str, agent: Option<&str>) -> Result<()> {
        let n = self.conn().execute("UPDATE conversations SET agent = ?2 WHERE id = ?1", (id, agent))?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// Renames a conversation. Does not change its place in the list.
    pub fn rename(&self, id: &str, title: &str) -> Result<()> {
        let n = self.conn().execute("UPDATE conversations SET title = ?2 WHERE id = ?1", (id, title))?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// Deletes a conversation with its messages, tool calls and results (and then the attached
    /// files no other message uses, once past their grace period).
    pub fn delete(&self, id: &str) -> Result<()> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        // Links cut first: SQLite bounds how deep a cascade may go, and a branch can be longer.
        tx.execute("UPDATE messages SET parent_id = NULL WHERE conversation_id = ?1", [id])?;
        let n = tx.execute("DELETE FROM conversations WHERE id = ?1", [id])?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        tx.commit()?;
        drop(conn);
        self.collect_after_delete();
        Ok(())
    }

    /// Conversations whose title or any message contains `query` literally (`%` and `_` are not
    /// wildcards), most recently updated first. Case-insensitive for ASCII letters only: SQLite's
    /// LIKE does not fold other scripts.
    pub fn search(&self, query: &str) -> Result<Vec<ConversationSummary>> {
        let pattern = format!("%{}%", escape_like(query));
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "{SUMMARY_SELECT}
             WHERE c.title LIKE ?1 ESCAPE '\\'
                OR EXISTS (SELECT 1 FROM messages m
                           WHERE m.conversation_id = c.id AND m.content LIKE ?1 ESCAPE '\\')
             ORDER BY c.updated_at DESC, c.id DESC"
        ))?;
        let rows = stmt.query_map([pattern], summary_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    // ----- per-chat tool choices ---------------------------------------------------------------

    /// Replaces the tools switched off for this chat.
    pub fn set_disabled_tools(&self, conversation_id: &str, tools: &BTreeSet<String>) -> Result<()> {
        let json = to_json(tools, "disabled tools")?;
        let n = self
            .conn()
            .execute("UPDATE conversations SET disabled_tools = ?2 WHERE id = ?1", (conversation_id, json))?;
        if n == 0 {
            return Err(Error::not_found("conversation", conversation_id));
        }
        Ok(())
    }

    /// The tools switched off for this chat.
    pub fn disabled_tools(&self, conversation_id: &str) -> Result<BTreeSet<String>> {
        let conn = self.conn();
        let json = tool_list(&conn, conversation_id, "disabled_tools")?;
        from_json(&json, || format!("disabled tools of conversation '{conversation_id}'"))
    }

    /// Remembers that the person approved `tool` for the rest of this chat.
    pub fn approve_tool_for_chat(&self, conversation_id: &str, tool: &str) -> Result<()> {
        let mut conn = self.conn();
        // Read-modify-write: IMMEDIATE so another process cannot slip a write in between.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let json = tool_list(&tx, conversation_id, "approved_tools")?;
        let mut tools: BTreeSet<String> =
            from_json(&json, || format!("approved tools of conversation '{conversation_id}'"))?;
        if tools.insert(tool.to_owned()) {
            tx.execute(
                "UPDATE conversations SET approved_tools = ?2 WHERE id = ?1",
                (conversation_id, to_json(&tools, "approved tools")?),
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The tools approved for this chat (the shape `TurnOptions::approved_tools` takes).
    pub fn approved_tools(&self, conversation_id: &str) -> Result<HashSet<String>> {
        let conn = self.conn();
        let json = tool_list(&conn, conversation_id, "approved_tools")?;
        from_json(&json, || format!("approved tools of conversation '{conversation_id}'"))
    }
}

const SUMMARY_SELECT: &str = "SELECT c.id, c.title, c.created_at, c.updated_at,
        (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id), c.pinned, c.archived
    FROM conversations c";

fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<ConversationSummary> {
    Ok(ConversationSummary {
        id: r.get(0)?,
        title: r.get(1)?,
        created_at: r.get(2)?,
        updated_at: r.get(3)?,
        message_count: r.get(4)?,
        pinned: r.get(5)?,
        archived: r.get(6)?,
    })
}

/// Reads one of the conversation's JSON tool-list columns (`column` is a fixed name, never input).
fn tool_list(conn: &Connection, conversation_id: &str, column: &str) -> Result<String> {
    conn.prepare_cached(&format!("SELECT {column} FROM conversations WHERE id = ?1"))?
        .query_row([conversation_id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| Error::not_found("conversation", conversation_id))
}

/// Makes `query` match literally inside a `LIKE ... ESCAPE '\'` pattern.
pub(crate) fn escape_like(query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    for c in query.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_escaping_covers_wildcards_and_the_escape_char() {
        assert_eq!(escape_like(r"50%_a\b"), r"50\%\_a\\b");
    }
}
