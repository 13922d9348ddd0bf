//! Running a round: calls answered without running get their result at once, the rest start
//! together; as each finishes its result is worded for the model; when all are done the results
//! go into the history in call order and the turn goes on (or ends, if a tool took control).
//!
//! A result longer than the limit goes into the history cut, with a note on how to read the rest
//! ([`crate::paging::cut`]); the `toolResult` event (what is shown and stored) keeps it whole.
//!
//! A result from a tool that returns untrusted data goes into the history framed as such
//! ([`crate::egress::frame`]), and from then on the context counts as holding untrusted
//! content; the `toolResult` event (what is shown and stored) keeps the tool's own text.
//!
//! Invariant: every call id of the round gets exactly one result, even when the turn is stopped.

use super::{Effect, Machine, Phase, Round, Slot, ToolEnd, ToolFinished, ToolRun, result_event, seconds};
use crate::event::{ChatEvent, FinishReason, ToolStatus};
use crate::types::Message;
use crate::vocab::ToolError;

impl Machine<'_> {
    /// Answers what needs no running, starts the rest.
    pub(super) fn start_round(&mut self, out: &mut Vec<Effect>) {
        let round = &mut self.round;
        let mut runs = Vec::new();
        let exposure = std::sync::Arc::new(self.exposure.clone());
        for (i, (call, slot)) in round.calls.iter().zip(&mut round.slots).enumerate() {
            match slot {
                Slot::Answered(status, text) => {
                    out.push(result_event(call, *status, text.clone(), 0, Vec::new()));
                    round.results[i] = Some((*status, std::mem::take(text), Vec::new()));
                }
                Slot::DryRun(text) => {
                    out.push(Effect::Emit(ChatEvent::ToolStarted { id: call.id.clone() }));
                    out.push(result_event(call, ToolStatus::Ok, text.clone(), 0, Vec::new()));
                    round.results[i] = Some((ToolStatus::Ok, std::mem::take(text), Vec::new()));
                }
                Slot::Duplicate(_) => {}
                Slot::Run(args) => {
                    let Some(tool) = self.registry.get(&call.name) else { continue };
                    let def = tool.def();
                    if def.takes_control {
                        round.control_call = Some(i);
                    }
                    out.push(Effect::Emit(ChatEvent::ToolStarted { id: call.id.clone() }));
                    runs.push(ToolRun {
                        index: i,
                        call: call.clone(),
                        args: std::mem::take(args),
                        timeout: def.timeout.unwrap_or(self.config.tool_timeout),
                        takes_control: def.takes_control,
                        exposure: exposure.clone(),
                    });
                }
            }
        }
        round.running = runs.len();
        if !runs.is_empty() {
            out.push(Effect::RunTools(runs));
        }
        out.push(Effect::Flush);
        self.phase = Phase::RunningTools;
        if self.round.running == 0 {
            self.finish_round(false, out);
        }
    }

    pub(super) fn on_tool_finished(&mut self, done: ToolFinished, out: &mut Vec<Effect>) {
        let ToolFinished { index, end, duration_ms, answer_chars, usage, cost_usd } = done;
        let Some(call_id) = self.round.calls.get(index).map(|c| c.id.clone()) else { return };
        if !matches!(self.round.slots.get(index), Some(Slot::Run(_))) || self.round.results[index].is_some() {
            return;
        }
        self.account_agent_call(&call_id, usage, cost_usd, out);
        let call = &self.round.calls[index];
        let name = &call.name;
        let tool = self.registry.get(name);
        let mut images = Vec::new();
        // What a server or the web wrote, its errors included, is untrusted; what the loop
        // itself says (a timeout, a crash, a stop) is not.
        let mut untrusted = match &end {
            ToolEnd::Returned(Err(ToolError::Cancelled)) | ToolEnd::TimedOut | ToolEnd::Panicked(_) => None,
            ToolEnd::Returned(_) => tool.filter(|t| t.untrusted_output()).map(|_| name.clone()),
        };
        let (status, text) = match end {
            ToolEnd::TimedOut => {
                let timeout = self.registry.get(name).and_then(|t| t.def().timeout).unwrap_or(self.config.tool_timeout);
                (ToolStatus::Timeout, format!("'{name}' did not finish within {} and was stopped.", seconds(timeout)))
            }
            ToolEnd::Panicked(what) => (ToolStatus::Error, format!("'{name}' crashed: {what}")),
            ToolEnd::Returned(Ok(output)) => {
                images = output.images;
                if untrusted.is_none() {
                    untrusted = output.untrusted.map(|read| format!("{name} (which read {read})"));
                }
                (ToolStatus::Ok, output.text)
            }
            ToolEnd::Returned(Err(ToolError::Cancelled)) => {
                (ToolStatus::Cancelled, "Stopped by the user while the tool was running.".into())
            }
            ToolEnd::Returned(Err(e @ ToolError::InvalidArguments(_))) => {
                (ToolStatus::Error, format!("'{name}' failed: {e}"))
            }
            ToolEnd::Returned(Err(e)) => (ToolStatus::Error, e.to_string()),
        };
        out.push(result_event(call, status, text.clone(), duration_ms, images.clone()));
        self.round.results[index] = Some((status, text, images));
        self.round.untrusted[index] = untrusted;
        self.round.answer_chars += answer_chars;
        self.round.running -= 1;
        if self.round.running == 0 {
            self.finish_round(false, out);
        }
    }

    /// Duplicates get their original's result, unfinished calls a cancellation; results go into
    /// the history in call order; then the turn goes on, or ends.
    pub(super) fn finish_round(&mut self, cancelled: bool, out: &mut Vec<Effect>) {
        let round = std::mem::take(&mut self.round);
        let Round { calls, slots, mut results, mut untrusted, control_call, answer_chars, .. } = round;
        for (i, slot) in slots.iter().enumerate() {
            if let Slot::Duplicate(first) = slot
                && let Some((status, text, images)) = results[*first].clone()
            {
                out.push(result_event(&calls[i], status, text.clone(), 0, images.clone()));
                results[i] = Some((status, text, images));
                untrusted[i] = untrusted[*first].clone();
            }
        }
        for (i, call) in calls.iter().enumerate() {
            if results[i].is_none() {
                let text = "Stopped by the user while the tool was running.".to_owned();
                out.push(result_event(call, ToolStatus::Cancelled, text.clone(), 0, Vec::new()));
                results[i] = Some((ToolStatus::Cancelled, text, Vec::new()));
            }
        }
        // Text a control-taking tool streamed is part of the answer: later offsets must count it.
        self.turn_chars += answer_chars;
        // A control-taking tool that failed hands the turn back to the model, which sees the error.
        let took_control = control_call.is_some_and(|i| matches!(results[i], Some((ToolStatus::Ok, _, _))));
        for ((call, result), source) in calls.into_iter().zip(results).zip(untrusted) {
            let (status, mut content, mut images) =
                result.unwrap_or((ToolStatus::Cancelled, String::new(), Vec::new()));
            if let std::borrow::Cow::Owned(cut) = crate::paging::cut(&call.id, &content, self.config.tool_result_limit)
            {
                content = cut;
            }
            if let Some(source) = source {
                content = crate::egress::frame(&source, &content);
                self.exposure.untrusted.get_or_insert(source);
            }
            if let Some(note) = self.options.tool_images_left_out.as_deref().filter(|_| !images.is_empty()) {
                // The person sees the images (the result event has them); the model only the
                // loop's note, outside any untrusted frame.
                images.clear();
                content = format!("{content}\n\n{note}");
            }
            self.history.push(Message::Tool {
                call_id: call.id,
                name: call.name,
                content,
                is_error: status.is_error(),
                images,
            });
        }
        if cancelled {
            self.finish(FinishReason::Cancelled, None, out);
        } else if took_control {
            self.finish(FinishReason::ToolTookControl, None, out);
        } else {
            self.begin_iteration(out);
        }
    }
}
