//! Compacting before a request: when the next request would pass the threshold (a share of the
//! window after the output reserve), older results are sent as stubs; if that is not enough,
//! older messages are summarised by a model ([`Effect::Summarise`], answered by
//! [`Input::Summarised`]) before the request goes out: within that model's own window
//! (`TurnOptions::summariser_context`), in pieces when they are more than one request of it
//! holds, each piece's request carrying the summary so far (`crate::summarising`). A provider's
//! own "too long" refusal compacts once more and asks again; a second refusal ends the turn
//! saying what does not fit.
//!
//! Invariants: the history itself is never changed (a [`Compaction`] is how it is sent); a
//! compaction is kept for every later request of the turn until the next one is needed, so the
//! start of what is sent stays stable; a compaction is announced ([`ChatEvent::Compacted`]) only
//! once it is complete, so a stop or a failure during summarising stores nothing.
//!
//! [`Input::Summarised`]: super::Input::Summarised

use super::{Effect, Machine, Phase};
use crate::compaction::{self, Compaction, DEFAULT_WINDOW};
use crate::error::{ErrorKind, ProviderError};
use crate::event::{ChatEvent, CompactionReason, FinishReason, NoticeKind};
use crate::summarising::{self, SummaryBudget};
use crate::types::{Message, Usage};

/// What the summariser answered.
#[derive(Debug)]
pub struct Summary {
    /// The summary text (empty: it answered nothing).
    pub text: String,
    /// What the request used.
    pub usage: Usage,
}

/// A summary asked for and not yet answered (written in pieces when it is long:
/// `crate::summarising`).
pub(super) struct Pending {
    next: Compaction,
    to: usize,
    before: u64,
    reason: CompactionReason,
    /// The pieces still to summarise after the one asked for, and how many there are in all.
    rest: std::vec::IntoIter<String>,
    count: usize,
    budget: SummaryBudget,
    /// What the pieces answered so far used.
    usage: Usage,
}

/// What a compaction check did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Compacted {
    /// Nothing needed or nothing could be done: the request goes out as it was.
    Unchanged,
    /// Stubs were added; the request goes out now.
    Changed,
    /// A summary was asked for: the request waits for [`super::Input::Summarised`].
    Waiting,
}

impl Machine<'_> {
    fn threshold(&self) -> u64 {
        let c = self.options.context;
        compaction::threshold(c.window.unwrap_or(DEFAULT_WINDOW), c.max_output, c.compact_at)
    }

    fn estimate_with(&self, compaction: &Compaction) -> u64 {
        self.estimate(&self.request_with(compaction)).total
    }

    /// The history as a request with `compaction` sends it.
    pub(super) fn sent_history_with(&self, compaction: &Compaction) -> Vec<Message> {
        compaction.apply(&self.history, &self.options.pinned)
    }

    /// Before a request: compacts when the request would pass the threshold (always, when
    /// `force`: the provider refused it as too long).
    pub(super) fn compact(&mut self, force: bool, out: &mut Vec<Effect>) -> Compacted {
        let limit = self.threshold();
        let before = self.estimate(&self.request()).total;
        if !force && before <= limit {
            return Compacted::Unchanged;
        }
        let assumed = self.options.context.window.is_none() || self.options.context.window_assumed;
        if assumed && !self.window_noticed {
            self.window_noticed = true;
            Self::notice(
                NoticeKind::Context,
                format!(
                    "The context window of {} is not known, so the conversation is compacted as if it took {DEFAULT_WINDOW} tokens. Set the window in the profile's model settings.",
                    self.model
                ),
                out,
            );
        }
        let reason = if force { CompactionReason::TooLong } else { CompactionReason::Threshold };
        let mut next = self.compaction.clone();
        let added = compaction::stubs_to_add(&self.history, &next);
        next.stubbed.extend(added.iter().cloned());
        let after = self.estimate_with(&next);
        if after <= limit && !(force && added.is_empty()) {
            self.commit(next, before, after, None, reason, out);
            return Compacted::Changed;
        }
        let from = next.covered as usize;
        let Some(to) = compaction::cut(&self.history, from, limit / 2) else {
            if added.is_empty() {
                return Compacted::Unchanged;
            }
            self.commit(next, before, after, None, reason, out);
            return Compacted::Changed;
        };
        // Budgeted with the summariser's own window (a smaller model's, when it is another).
        let limits = self.options.summariser_context.unwrap_or(self.options.context);
        let planned = SummaryBudget::new(&limits, &self.options.generation).and_then(|budget| {
            let previous = next.summary.as_deref().map_or(0, str::len);
            summarising::pieces(previous, &self.history[from..to], &budget).map(|p| (budget, p))
        });
        let Some((budget, pieces)) = planned else {
            if added.is_empty() {
                return Compacted::Unchanged;
            }
            self.commit(next, before, after, None, reason, out);
            return Compacted::Changed;
        };
        let to = from + pieces.through;
        let count = pieces.texts.len();
        let mut rest = pieces.texts.into_iter();
        let first = rest.next().unwrap_or_default();
        let model = self.summariser_model();
        let request = summarising::piece_request(
            &model,
            next.summary.as_deref(),
            &first,
            (0, count),
            &budget,
            self.options.generation,
        );
        self.pending = Some(Pending { next, to, before, reason, rest, count, budget, usage: Usage::default() });
        self.phase = Phase::Compacting;
        out.push(Effect::Flush);
        out.push(Effect::Summarise { request });
        Compacted::Waiting
    }

    fn summariser_model(&self) -> String {
        self.options.summariser.clone().unwrap_or_else(|| self.model.clone())
    }

    /// The summariser answered: the next piece is asked for with the summary so far, or, after
    /// the last, the compaction is complete (or, when it failed, only its stubs are kept), and
    /// the request goes out.
    pub(super) fn on_summary(&mut self, result: Result<Summary, ProviderError>, out: &mut Vec<Effect>) {
        let Some(Pending { mut next, to, before, reason, mut rest, count, budget, mut usage }) = self.pending.take()
        else {
            return self.start_attempt(out);
        };
        let model = self.summariser_model();
        if let Ok(summary) = &result
            && !summary.text.trim().is_empty()
            && let Some(piece) = rest.next()
        {
            self.usage.add(&summary.usage);
            usage.add(&summary.usage);
            let index = count - rest.len() - 1;
            let request = summarising::piece_request(
                &model,
                Some(summary.text.trim()),
                &piece,
                (index, count),
                &budget,
                self.options.generation,
            );
            self.pending = Some(Pending { next, to, before, reason, rest, count, budget, usage });
            out.push(Effect::Summarise { request });
            return;
        }
        let failed = match result {
            Ok(summary) if !summary.text.trim().is_empty() => {
                self.usage.add(&summary.usage);
                usage.add(&summary.usage);
                next.covered = to as u32;
                next.summary = Some(summary.text.trim().to_owned());
                // The question this turn answers stays in its own words.
                if let Some(q) = self.history[..to].iter().rposition(|m| matches!(m, Message::User { .. }))
                    && !next.quoted.contains(&(q as u32))
                {
                    next.quoted.push(q as u32);
                }
                let after = self.estimate_with(&next);
                out.push(Effect::Emit(ChatEvent::Compacted {
                    compaction: next.clone(),
                    tokens_before: before,
                    tokens_after: after,
                    summariser: Some(model),
                    usage: (!usage.is_empty()).then_some(usage),
                    summariser_fallback: self.options.summariser_fallback.clone(),
                    reason,
                }));
                self.compaction = next.clone();
                None
            }
            Ok(_) => Some(format!("{model} returned an empty summary")),
            Err(e) => Some(e.message),
        };
        if let Some(why) = failed {
            Self::notice(
                NoticeKind::Context,
                format!(
                    "Summarising the earlier messages failed ({}), so the whole history is sent (older tool results as stubs the model can read back). If the model refuses it as too long, start a new chat or pick a model with a larger window.",
                    why.trim_end_matches('.')
                ),
                out,
            );
            // `next` holds the stubs only: the summary is set on success alone.
            if next != self.compaction {
                let after = self.estimate_with(&next);
                self.commit(next, before, after, None, reason, out);
            }
        }
        self.start_attempt(out);
    }

    fn commit(
        &mut self,
        next: Compaction,
        before: u64,
        after: u64,
        summariser: Option<String>,
        reason: CompactionReason,
        out: &mut Vec<Effect>,
    ) {
        out.push(Effect::Emit(ChatEvent::Compacted {
            compaction: next.clone(),
            tokens_before: before,
            tokens_after: after,
            summariser,
            usage: None,
            summariser_fallback: None,
            reason,
        }));
        self.compaction = next;
    }

    /// The provider refused the request as too long, before any output: the first time for
    /// this request the history is compacted and the request sent again (`true`); after that the
    /// refusal stands, worded to say what does not fit. The window is corrected for the rest of
    /// the turn (the provider's own figure, else below what it just refused), so later requests
    /// compact before they are refused instead of after.
    pub(super) fn on_too_long(&mut self, error: &mut ProviderError, out: &mut Vec<Effect>) -> bool {
        if !self.too_long_retried {
            self.too_long_retried = true;
            let refused =
                error.overflow.and_then(|o| o.prompt_tokens).unwrap_or_else(|| self.estimate(&self.request()).total);
            let takes = error.overflow.and_then(|o| o.window).unwrap_or(refused.saturating_sub(1));
            let c = &mut self.options.context;
            if takes > 0 && (c.window_assumed || c.window.is_none_or(|known| takes < known)) {
                c.window = Some(takes);
                c.window_assumed = false;
            }
            Self::notice(
                NoticeKind::Context,
                format!(
                    "{} refused the request as too long; the conversation was compacted and the request is sent again.",
                    self.model
                ),
                out,
            );
            match self.compact(true, out) {
                Compacted::Waiting => return true,
                Compacted::Changed => {
                    self.start_attempt(out);
                    return true;
                }
                Compacted::Unchanged => {}
            }
        }
        error.message = self.too_long_message(error);
        false
    }

    /// What does not fit, and what to do (with the provider's own figures when it gave them).
    fn too_long_message(&self, error: &ProviderError) -> String {
        let overflow = error.overflow.unwrap_or_default();
        let known = self.options.context.window.filter(|_| !self.options.context.window_assumed);
        let window = overflow.window.or(known);
        let takes = window.map_or_else(|| "an unknown number of".to_owned(), crate::tokens::thousands);
        let last = self.history.iter().rev().find_map(|m| match m {
            Message::User { text, .. } => Some(text.len()),
            _ => None,
        });
        let message = last.map_or(0, |chars| (chars as u64).div_ceil(4));
        let total = overflow.prompt_tokens.unwrap_or_else(|| self.estimate(&self.request()).total);
        if window.is_some_and(|w| message * 10 > w * 9) {
            format!(
                "Your message alone is about {} tokens; {} takes {takes} tokens. Shorten it or send it in parts (or attach less), or pick a model with a larger context window.",
                crate::tokens::thousands(message),
                self.model
            )
        } else {
            format!(
                "Even compacted, the conversation is about {} tokens and {} refused it as too long (it takes {takes} tokens). Compact it from the chat menu, start a new chat, or pick a model with a larger context window.",
                crate::tokens::thousands(total),
                self.model
            )
        }
    }

    /// A stop while the summary is written: the turn ends as stopped, nothing compacted.
    pub(super) fn cancel_compacting(&mut self, out: &mut Vec<Effect>) {
        self.pending = None;
        self.finish(FinishReason::Cancelled, None, out);
    }
}

/// Whether `error` is a provider's "too long" refusal.
pub(super) fn is_too_long(error: &ProviderError) -> bool {
    error.kind == ErrorKind::ContextLength
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_grouped() {
        use crate::tokens::thousands;
        assert_eq!(thousands(128_000), "128,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
