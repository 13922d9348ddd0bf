//! The counter a turn counts with, over the token counts stored for its conversation: built by
//! [`turn_counter`] for [`crate::Service::build_turn`], seeded from `Store::token_counts` and
//! storing the counts the turn made when the turn lets go of it, so the next turn's first request
//! tokenizes only what is new. The meter reads and stores them alike ([`meter_counter`]).
//!
//! Invariants: only an exact tokenizer's counts are stored, under its name, so a stored count is
//! the one the tokenizer gives (switching models never reads another tokenizer's counts); a store
//! that cannot read or write the counts only costs counting again (logged), never the turn.

use std::sync::Arc;
use switchboard_core::{Memo, TokenCounter};
use switchboard_models::tokens;
use switchboard_store::Store;

/// The counter for `model` served through `kind` in `conversation_id`: OpenAI's tokenizers over
/// the conversation's stored counts, every other family's estimate as it is.
pub(crate) fn turn_counter(store: &Store, conversation_id: &str, kind: &str, model: &str) -> Arc<dyn TokenCounter> {
    let counter = tokens::counter(kind, model);
    let Some(tokenizer) = tokens::tokenizer(kind, model) else {
        return counter;
    };
    Arc::new(Stored {
        memo: Memo::new(counter, known(store, conversation_id, tokenizer.name())),
        store: store.clone(),
        conversation_id: conversation_id.to_owned(),
        tokenizer: tokenizer.name(),
    })
}

/// [`turn_counter`] for the meter, which must not wait for a tokenizer to load: until it is
/// loaded (which this starts), the stored counts are still used, what they lack is estimated at
/// 4 characters per token, and nothing is stored.
pub(crate) fn meter_counter(store: &Store, conversation_id: &str, kind: &str, model: &str) -> Arc<dyn TokenCounter> {
    match tokens::tokenizer(kind, model) {
        Some(tokenizer) if !tokenizer.ready() => {
            tokenizer.load_in_background();
            let estimate = Arc::new(switchboard_core::CharEstimate::default());
            Arc::new(Memo::new(estimate, known(store, conversation_id, tokenizer.name())))
        }
        _ => turn_counter(store, conversation_id, kind, model),
    }
}

/// The counts stored for `conversation_id` under `tokenizer` (none when they cannot be read).
fn known(store: &Store, conversation_id: &str, tokenizer: &str) -> Vec<(switchboard_core::TextKey, u64)> {
    store.token_counts(conversation_id, tokenizer).unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the stored token counts could not be read; counting again");
        Vec::new()
    })
}

/// A memo that stores what it counted when the turn is done with it.
struct Stored {
    memo: Memo,
    store: Store,
    conversation_id: String,
    tokenizer: &'static str,
}

impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stored").field("tokenizer", &self.tokenizer).field("memo", &self.memo).finish()
    }
}

impl TokenCounter for Stored {
    fn count(&self, text: &str) -> u64 {
        self.memo.count(text)
    }

    fn image(&self, size: Option<(u32, u32)>) -> u64 {
        self.memo.image(size)
    }

    fn exact(&self) -> bool {
        self.memo.exact()
    }
}

impl Drop for Stored {
    fn drop(&mut self) {
        let fresh = self.memo.take_fresh();
        if let Err(e) = self.store.put_token_counts(&self.conversation_id, self.tokenizer, &fresh) {
            tracing::warn!(error = %e, "the turn's token counts could not be stored; the next turn counts them again");
        }
    }
}
