//! Finishing: calls that will never run are answered, then the error (if any), `done` and
//! [`Effect::Finish`] end the turn.
//!
//! Invariant: `done` is the last event and [`Effect::Finish`] the last effect, on every path.

use super::{Effect, Machine, Phase, result_event};
use crate::config::TurnOutcome;
use crate::error::ProviderError;
use crate::event::{ChatEvent, FinishReason, ToolStatus};
use crate::types::{Message, ToolCall};

impl Machine<'_> {
    fn outcome(&self, finish_reason: FinishReason, error: Option<ProviderError>) -> TurnOutcome {
        TurnOutcome {
            finish_reason,
            usage: self.usage,
            tool_calls_made: self.calls_made,
            error,
            read_untrusted: self.exposure.untrusted.clone(),
        }
    }

    /// Ends the turn: the error event if it failed, then `done`, then [`Effect::Finish`].
    pub(super) fn finish(&mut self, reason: FinishReason, error: Option<ProviderError>, out: &mut Vec<Effect>) {
        if let Some(error) = &error {
            out.push(Effect::Emit(ChatEvent::Error {
                kind: error.kind,
                message: error.message.clone(),
                retryable: error.is_retryable(),
                detail: error.detail.clone(),
            }));
        }
        out.push(Effect::Emit(ChatEvent::Done {
            finish_reason: reason,
            usage: self.usage,
            tool_calls_made: self.calls_made,
        }));
        out.push(Effect::Finish(self.outcome(reason, error)));
        self.phase = Phase::Finished;
    }

    /// Gives calls that will never run a result, so every call id is answered.
    pub(super) fn answer_unrun(&mut self, calls: &[ToolCall], status: ToolStatus, why: &str, out: &mut Vec<Effect>) {
        for call in calls {
            out.push(result_event(call, status, why.to_owned(), 0, Vec::new()));
            self.history.push(Message::Tool {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: why.to_owned(),
                is_error: true,
                images: Vec::new(),
            });
        }
        self.calls_made += calls.len() as u32;
    }
}
