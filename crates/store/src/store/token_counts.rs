//! Each text's token count per tokenizer, per conversation (migration 14): read when a turn
//! starts, so its first request tokenizes only what is new
//! ([`switchboard_core::Memo`]), and written with the counts the turn made.
//!
//! Invariants: a cache only (a missing row costs counting again, never a different count); rows
//! go with their conversation; writing counts already stored changes nothing.

use super::Store;
use crate::error::{Error, Result};
use switchboard_core::TextKey;

impl Store {
    /// The token counts stored for `conversation_id`'s texts by `tokenizer`.
    pub fn token_counts(&self, conversation_id: &str, tokenizer: &str) -> Result<Vec<(TextKey, u64)>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(
            "SELECT text_len, text_hash, tokens FROM token_counts WHERE conversation_id = ?1 AND tokenizer = ?2",
        )?;
        let rows = stmt.query_map([conversation_id, tokenizer], |r| {
            // The bits of the u64s, stored as SQLite's signed integers.
            let key = TextKey { len: r.get::<_, i64>(0)? as u64, hash: r.get::<_, i64>(1)? as u64 };
            Ok((key, r.get::<_, i64>(2)?.max(0) as u64))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Stores counts `tokenizer` made for `conversation_id`'s texts, in one transaction.
    pub fn put_token_counts(&self, conversation_id: &str, tokenizer: &str, counts: &[(TextKey, u64)]) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let conn = self.conn();
        let tx = conn.unchecked_transaction()?;
        let exists: bool = tx
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1)")?
            .query_row([conversation_id], |r| r.get(0))?;
        if !exists {
            return Err(Error::not_found("conversation", conversation_id));
        }
        {
            let mut stmt = tx.prepare_cached(
                "INSERT OR IGNORE INTO token_counts (conversation_id, tokenizer, text_len, text_hash, tokens)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for (key, tokens) in counts {
                stmt.execute(rusqlite::params![
                    conversation_id,
                    tokenizer,
                    key.len as i64,
                    key.hash as i64,
                    i64::try_from(*tokens).unwrap_or(i64::MAX)
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
