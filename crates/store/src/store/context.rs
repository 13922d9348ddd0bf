//! The last `context` count of each answer ([`StoredContext`]): written by the recorder before
//! every request, with the prompt tokens the provider then reported, and read when a chat opens
//! (the meter) or its next turn starts (counting from that report).
//!
//! Invariant: one row per assistant message, replaced whole by the next request's count; it goes
//! with its message.

use super::Store;
use crate::error::Result;
use rusqlite::OptionalExtension;
use serde::Serialize;
use switchboard_core::ContextBreakdown;

/// The count of the last request an answer sent.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredContext {
    /// The assistant message.
    pub message_id: String,
    /// The model that answered.
    pub model: Option<String>,
    /// Tokens the request sent, as the `context` event said.
    pub used_tokens: u64,
    /// The window it was measured against (`None`: unknown).
    pub window: Option<u64>,
    /// Where the tokens went.
    pub breakdown: ContextBreakdown,
    /// No provider report was part of `used_tokens`.
    pub estimated: bool,
    /// The engine's own estimate of that request.
    pub estimate: u64,
    /// The prompt tokens the provider reported for it.
    pub reported_prompt: Option<u64>,
}

impl Store {
    /// Replaces the count of `message_id`'s last request.
    pub(crate) fn put_context(&self, c: &StoredContext) -> Result<()> {
        let b = &c.breakdown;
        self.conn()
            .prepare_cached(
                "INSERT OR REPLACE INTO message_context (message_id, used_tokens, context_window, instructions, tools,
                     history, tool_results, attachments, estimated, estimate, reported_prompt)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(rusqlite::params![
                c.message_id,
                c.used_tokens,
                c.window,
                b.instructions,
                b.tools,
                b.history,
                b.tool_results,
                b.attachments,
                c.estimated,
                c.estimate,
                c.reported_prompt
            ])?;
        Ok(())
    }

    /// Records the prompt tokens the provider reported for `message_id`'s last request.
    pub(crate) fn put_reported_prompt(&self, message_id: &str, prompt_tokens: u64) -> Result<()> {
        self.conn()
            .prepare_cached("UPDATE message_context SET reported_prompt = ?2 WHERE message_id = ?1")?
            .execute(rusqlite::params![message_id, prompt_tokens])?;
        Ok(())
    }

    /// The count of the last request of the conversation's latest answer that has one.
    pub fn last_context(&self, conversation_id: &str) -> Result<Option<StoredContext>> {
        let conn = self.conn();
        let row = conn
            .prepare_cached(
                "SELECT c.message_id, m.model, c.used_tokens, c.context_window, c.instructions, c.tools, c.history,
                        c.tool_results, c.attachments, c.estimated, c.estimate, c.reported_prompt
                 FROM message_context c JOIN messages m ON m.id = c.message_id
                 WHERE m.conversation_id = ?1
                 ORDER BY m.seq DESC LIMIT 1",
            )?
            .query_row([conversation_id], |r| {
                Ok(StoredContext {
                    message_id: r.get(0)?,
                    model: r.get(1)?,
                    used_tokens: r.get(2)?,
                    window: r.get(3)?,
                    breakdown: ContextBreakdown {
                        instructions: r.get(4)?,
                        tools: r.get(5)?,
                        history: r.get(6)?,
                        tool_results: r.get(7)?,
                        attachments: r.get(8)?,
                    },
                    estimated: r.get(9)?,
                    estimate: r.get(10)?,
                    reported_prompt: r.get(11)?,
                })
            })
            .optional()?;
        Ok(row)
    }
}
