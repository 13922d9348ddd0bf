//! Compaction the person asks for ("Compact now", `switchboard conversations compact ID`), undo,
//! the summary shown, and pins. The loop compacts by itself before a request (see
//! `switchboard_core::compaction`); this is the same decision taken between turns, with the
//! summary written by the model the chat picked for it (`crate::summariser`; its own model when
//! none is picked or the pick is gone).
//!
//! Invariant: a compaction is stored only once its summary is complete; a failure, a timeout or
//! an empty summary stores nothing and says why. Nothing here deletes or rewrites a message.

use crate::{Error, Result, Service};
use futures::StreamExt;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::compaction::{self, Compaction};
use switchboard_core::summarising::{self, SummaryBudget};
use switchboard_core::{CompactionReason, ErrorKind, Message, ProviderEvent, ProviderRequest, Usage};
use switchboard_store::{NewCompaction, StoredCompaction};

/// The summary may take this long.
const TIMEOUT: Duration = Duration::from_secs(180);

impl Service {
    /// The compactions of the conversation's current path, oldest first (undone ones included).
    pub fn compactions(&self, conversation_id: &str) -> Result<Vec<StoredCompaction>> {
        Ok(self.inner.store.compactions(conversation_id)?)
    }

    /// One compaction, with its summary.
    pub fn compaction(&self, conversation_id: &str, compaction_id: &str) -> Result<StoredCompaction> {
        Ok(self.inner.store.compaction(conversation_id, compaction_id)?)
    }

    /// Undoes a compaction (the full history is sent from the next request on) or, with
    /// `undone = false`, applies it again.
    pub fn set_compaction_undone(&self, conversation_id: &str, compaction_id: &str, undone: bool) -> Result<()> {
        Ok(self.inner.store.set_compaction_undone(conversation_id, compaction_id, undone)?)
    }

    /// Pins a message (it is never summarised: it is sent verbatim) or unpins it.
    pub fn set_message_pinned(&self, conversation_id: &str, message_id: &str, pinned: bool) -> Result<()> {
        Ok(self.inner.store.set_message_pinned(conversation_id, message_id, pinned)?)
    }

    /// Compacts the conversation now: older results become stubs, and everything before the
    /// latest question or round is summarised by the chat's summariser (within its own window, in
    /// pieces when it is long). Answers the stored compaction, which says why when the picked
    /// summariser could not be used (`summariser_fallback`).
    pub async fn compact_conversation(&self, conversation_id: &str) -> Result<StoredCompaction> {
        let store = &self.inner.store;
        store.ensure_idle(conversation_id)?;
        let registry = self.inner.tools.catalog.registry();
        let marker = crate::untrusted::Marker::new(&registry);
        let limit = self.settings()?.engine_config().tool_result_limit;
        let turn = store.turn_history(conversation_id, &|call| marker.mark(call), limit)?;
        let head =
            store.messages(conversation_id)?.last().map(|m| m.id.clone()).ok_or_else(|| {
                Error::new(ErrorKind::Config, "The conversation is empty: there is nothing to compact.")
            })?;
        let choices = self.last_choices(conversation_id)?;
        let keys = self.turn_keys();
        let resolved = self.provider_factory().resolve_with(&choices, &keys)?;
        let limits = self.context_limits(&resolved.profile, &resolved.model, &self.settings()?);
        let limit = compaction::threshold(
            limits.window.unwrap_or(compaction::DEFAULT_WINDOW),
            limits.max_output,
            limits.compact_at,
        );
        let sent = |c: &Compaction| estimate(&c.apply(&turn.messages, &turn.pinned));
        let before = sent(&turn.compaction);
        let mut next = turn.compaction.clone();
        next.stubbed.extend(compaction::stubs_to_add(&turn.messages, &next));
        let from = next.covered as usize;
        let Some(to) = compaction::cut(&turn.messages, from, limit / 4) else {
            if next == turn.compaction {
                return Err(Error::new(
                    ErrorKind::Config,
                    "Nothing to compact yet: everything before the latest question is already summarised or short.",
                ));
            }
            return self.store_compaction(conversation_id, &head, &next, before, sent(&next), None);
        };
        let settings = self.settings()?;
        let picked = self.chat_summariser(conversation_id, &resolved.profile, &resolved.model, &keys, &settings)?;
        if let Some(why) = &picked.notice {
            tracing::warn!("{why}");
        }
        let model = picked.model.unwrap_or_else(|| resolved.model.clone());
        let provider = picked.provider.unwrap_or_else(|| Arc::from(resolved.provider));
        // What the summariser is sent fits its own window, in pieces when it is long.
        let generation = Default::default();
        let planned = SummaryBudget::new(&picked.limits.unwrap_or(limits), &generation).and_then(|budget| {
            let previous = next.summary.as_deref().map_or(0, str::len);
            summarising::pieces(previous, &turn.messages[from..to], &budget).map(|p| (budget, p))
        });
        let Some((budget, pieces)) = planned else {
            if next == turn.compaction {
                return Err(Error::new(
                    ErrorKind::Config,
                    format!(
                        "The context window of {model} is too small to write a summary in; the conversation is unchanged."
                    ),
                ));
            }
            return self.store_compaction(conversation_id, &head, &next, before, sent(&next), None);
        };
        let to = from + pieces.through;
        let count = pieces.texts.len();
        // Each piece's request carries the summary so far (the one in force, to start with).
        let (mut text, mut usage) = (next.summary.clone(), Usage::default());
        for (index, piece) in pieces.texts.iter().enumerate() {
            let request =
                summarising::piece_request(&model, text.as_deref(), piece, (index, count), &budget, generation);
            let (written, used) = tokio::time::timeout(TIMEOUT, summarise(&*provider, request))
                .await
                .map_err(|_| {
                    Error::new(ErrorKind::Timeout, "The summary took too long; the conversation is unchanged.")
                })?
                .map_err(|e| {
                    let mut e = Error::from(e);
                    e.message = format!(
                        "{} The conversation is unchanged.",
                        keys.redactor().redact(&e.message).trim_end_matches('.')
                    );
                    e
                })?;
            usage.add(&used);
            if written.trim().is_empty() {
                text = None;
                break;
            }
            text = Some(written.trim().to_owned());
        }
        let text = text.unwrap_or_default();
        let text = keys.redactor().redact(text.trim()).into_owned();
        if text.is_empty() {
            return Err(Error::new(
                ErrorKind::Internal,
                format!(
                    "{model} returned an empty summary; the conversation is unchanged. Try again, or pick another model for summaries."
                ),
            ));
        }
        next.covered = to as u32;
        next.summary = Some(text);
        if let Some(q) = turn.messages[..to].iter().rposition(|m| matches!(m, Message::User { .. }))
            && !next.quoted.contains(&(q as u32))
        {
            next.quoted.push(q as u32);
        }
        let after = sent(&next);
        let summariser = Summariser { model: &model, usage: &usage, fallback: picked.notice.as_deref() };
        self.store_compaction(conversation_id, &head, &next, before, after, Some(summariser))
    }

    fn store_compaction(
        &self,
        conversation_id: &str,
        head: &str,
        next: &Compaction,
        before: u64,
        after: u64,
        summariser: Option<Summariser<'_>>,
    ) -> Result<StoredCompaction> {
        let new = NewCompaction {
            compaction: next,
            tokens_before: before,
            tokens_after: after,
            reason: CompactionReason::Manual,
            summariser: summariser.map(|s| s.model),
            usage: summariser.map(|s| s.usage).filter(|u| !u.is_empty()),
            summariser_fallback: summariser.and_then(|s| s.fallback),
        };
        let id = self.inner.store.record_compaction(head, &new)?;
        Ok(self.inner.store.compaction(conversation_id, &id)?)
    }
}

/// Who wrote a summary, what it used, and why it was not the model picked for it.
#[derive(Clone, Copy)]
struct Summariser<'a> {
    model: &'a str,
    usage: &'a Usage,
    fallback: Option<&'a str>,
}

/// Estimated tokens of a history.
fn estimate(messages: &[Message]) -> u64 {
    let request = ProviderRequest {
        model: String::new(),
        system: None,
        messages: messages.to_vec(),
        tools: Vec::new(),
        tool_choice: Default::default(),
        options: Default::default(),
    };
    compaction::estimate(&request)
}

/// Streams the summariser's request and collects its text.
async fn summarise(
    provider: &dyn switchboard_core::Provider,
    request: ProviderRequest,
) -> std::result::Result<(String, Usage), switchboard_core::ProviderError> {
    let mut stream = provider.stream(request);
    let (mut text, mut usage) = (String::new(), Usage::default());
    while let Some(item) = stream.next().await {
        match item? {
            ProviderEvent::TextDelta(t) => text.push_str(&t),
            ProviderEvent::Usage(u) => usage = u,
            ProviderEvent::Finish { .. } => break,
            _ => {}
        }
    }
    Ok((text, usage))
}
