//! Streaming a response: each provider event becomes answer text, reasoning, or a tool call
//! (mapped back to its registry name), and a finished response ends the iteration: the turn
//! finishes, or the calls the model made become a round.
//!
//! Invariant: `text_offset`s count Unicode scalar values from the start of the turn's answer.

use super::{Effect, Machine, StreamEnd};
use crate::error::ProviderError;
use crate::event::{ChatEvent, FinishReason, NoticeKind, ToolStatus};
use crate::provider::{ProviderEvent, StopReason};
use crate::types::{Message, char_len};
use crate::vocab::ToolSource;

/// What the person is told when a provider's filter ended an answer without saying why.
const FILTERED: &str = "The provider's content filter stopped this answer; what arrived before it is kept. Rephrase the request or ask for something else.";

impl Machine<'_> {
    pub(super) fn on_item(&mut self, item: Result<ProviderEvent, ProviderError>, out: &mut Vec<Effect>) {
        let event = match item {
            Ok(event) => event,
            Err(e) => return self.end_stream(StreamEnd::Failed(e), out),
        };
        match event {
            ProviderEvent::TextDelta(text) => {
                if text.is_empty() {
                    return;
                }
                self.it.output_started = true;
                self.turn_chars += char_len(&text);
                self.it.text.push_str(&text);
                out.push(Effect::Emit(ChatEvent::TextDelta { text }));
            }
            ProviderEvent::ReasoningDelta(text) => {
                self.it.output_started = true;
                out.push(Effect::Emit(ChatEvent::ReasoningDelta { text }));
            }
            ProviderEvent::MalformedToolCall { call, text_chars_before, problem } => {
                self.malformed.push((call.id.clone(), problem));
                self.on_item(Ok(ProviderEvent::ToolCall { call, text_chars_before }), out);
            }
            ProviderEvent::ToolCall { mut call, text_chars_before } => {
                self.it.output_started = true;
                call.name = self.names.original(&call.name).to_owned();
                let source = self.registry.get(&call.name).map_or(ToolSource::Unknown, |t| t.def().source.clone());
                out.push(Effect::Tick);
                out.push(Effect::Emit(ChatEvent::ToolCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    source,
                    arguments: call.arguments.clone(),
                    text_offset: (self.iteration_start + text_chars_before).min(self.turn_chars),
                    iteration: self.iteration_no,
                    index: self.it.calls.len() as u32,
                }));
                self.it.calls.push(call);
            }
            ProviderEvent::Usage(usage) => self.it.usage = usage,
            ProviderEvent::State(state) => self.it.state = Some(state),
            // The driver already reset its idle deadline on this item; it is not output.
            ProviderEvent::KeepAlive => {}
            ProviderEvent::Finish { reason, .. } => {
                self.it.stop = Some(reason);
                self.end_stream(StreamEnd::Finished, out);
            }
        }
    }

    pub(super) fn end_iteration(&mut self, end: StreamEnd, out: &mut Vec<Effect>) {
        let usage = self.it.usage;
        self.usage.add(&usage);
        self.take_report(&usage);
        if !usage.is_empty() {
            out.push(Effect::Emit(ChatEvent::Usage { usage, total: self.usage }));
        }
        let calls = std::mem::take(&mut self.it.calls);
        match end {
            StreamEnd::Finished => {}
            StreamEnd::Cancelled => {
                self.answer_unrun(&calls, ToolStatus::Cancelled, "Stopped by the user before the tool ran.", out);
                return self.finish(FinishReason::Cancelled, None, out);
            }
            StreamEnd::Failed(e) => {
                self.answer_unrun(
                    &calls,
                    ToolStatus::Cancelled,
                    "The model's response failed before the tool ran.",
                    out,
                );
                return self.finish(FinishReason::Error, Some(e), out);
            }
        }
        let text = std::mem::take(&mut self.it.text);
        let state = self.it.state.take();
        if let Some(state) = &state {
            out.push(Effect::Emit(ChatEvent::ProviderState { iteration: self.iteration_no, state: state.clone() }));
        }
        self.history.push(Message::Assistant { text, tool_calls: calls.clone(), state });

        if calls.is_empty() || self.last_call {
            if self.last_call && !calls.is_empty() {
                // Tools were off; the model called anyway. Answer the calls so history stays valid.
                self.answer_unrun(&calls, ToolStatus::Skipped, "Tools are off for this final answer.", out);
            }
            let reason = if self.last_call {
                FinishReason::MaxIterations
            } else {
                match self.it.stop.take() {
                    Some(StopReason::Length) => FinishReason::Length,
                    Some(StopReason::ContentFilter) => {
                        Self::notice(NoticeKind::Filtered, FILTERED.to_owned(), out);
                        FinishReason::ContentFilter
                    }
                    Some(StopReason::Filtered(why)) => {
                        Self::notice(NoticeKind::Filtered, why, out);
                        FinishReason::ContentFilter
                    }
                    _ => FinishReason::Stop,
                }
            };
            return self.finish(reason, None, out);
        }
        self.begin_round(calls, out);
    }
}
