//! Deciding a round's tool calls, one at a time in call order: planned (duplicates, the
//! per-round cap, control-taking tools alone), validated against the offer and the schema, and
//! put to the approval policy, which may stop the machine to ask the person.
//!
//! The egress check comes between the `deny` policy and the rest: once the context holds
//! untrusted content, a call that would send data to a destination the person has not used is
//! asked about, with its reason, even when its policy is `auto` or the chat approved the tool;
//! only the person's per-tool exemption (Settings) skips it. Approving it "for this chat" adds
//! the destination, never the tool, to what the person has used.
//!
//! Invariant: every call gets a slot before any runs; a malformed call is never run and never
//! borrows a duplicate's result.

use super::{Effect, Machine, Phase, Round, Slot};
use crate::approval::{ApprovalDecision, ApprovalRequest};
use crate::catalogue::FIND_TOOLS;
use crate::event::{ChatEvent, NoticeKind, ToolStatus};
use crate::policy;
use crate::round::{self, Plan};
use crate::types::ToolCall;
use crate::vocab::ApprovalPolicy;

impl Machine<'_> {
    pub(super) fn begin_round(&mut self, calls: Vec<ToolCall>, out: &mut Vec<Effect>) {
        self.calls_made += calls.len() as u32;
        let registry = self.registry;
        let plans = round::plan_round(&calls, self.config.max_tool_calls_per_round, |name| {
            registry.get(name).is_some_and(|t| t.def().takes_control)
        });
        let n = calls.len();
        self.round = Round {
            calls,
            plans,
            slots: Vec::with_capacity(n),
            results: vec![None; n],
            untrusted: vec![None; n],
            ..Round::default()
        };
        self.prepare_rest(out);
    }

    /// Validates and approves the calls not prepared yet, in call order; stops at a question.
    fn prepare_rest(&mut self, out: &mut Vec<Effect>) {
        while self.round.slots.len() < self.round.calls.len() {
            let i = self.round.slots.len();
            let call = &self.round.calls[i];
            let malformed = self.malformed.iter().find(|(id, _)| *id == call.id).map(|(_, why)| why);
            let slot = match &self.round.plans[i] {
                // Before anything else: a malformed call must not borrow a duplicate's result.
                _ if let Some(problem) = malformed => Slot::Answered(
                    ToolStatus::Error,
                    format!(
                        "Malformed tool call: {problem}, so it was not run. Arguments received: {}. Call the tool again, one complete call per id.",
                        if call.arguments.is_empty() { "(none)" } else { call.arguments.as_str() }
                    ),
                ),
                Plan::DuplicateOf(first) => Slot::Duplicate(*first),
                Plan::OverCap => Slot::Answered(
                    ToolStatus::Skipped,
                    format!(
                        "Skipped: at most {} tool calls run per round. Call '{}' again in a later round if you still need it.",
                        self.config.max_tool_calls_per_round, self.round.calls[i].name
                    ),
                ),
                Plan::NotAlone { control_tool } => Slot::Answered(
                    ToolStatus::Error,
                    format!(
                        "Not run: '{control_tool}' takes over the answer and must be called alone, with no other tool calls in the same response. Call it by itself."
                    ),
                ),
                Plan::Run => match self.check(i, out) {
                    Some(slot) => slot,
                    None => return,
                },
            };
            self.round.slots.push(slot);
        }
        self.start_round(out);
    }

    /// Validates call `i` and applies the approval policy. `None`: the person is being asked.
    fn check(&mut self, i: usize, out: &mut Vec<Effect>) -> Option<Slot> {
        let call = &self.round.calls[i];
        let offered = &self.offer.tools;
        if call.name == FIND_TOOLS && offered.contains(&call.name) {
            let arguments = call.arguments.clone();
            return Some(self.answer_find_tools(&arguments));
        }
        let tool = match self.registry.get(&call.name) {
            Some(tool) if offered.contains(&call.name) => tool,
            _ => return Some(self.answer_not_offered(&call.name)),
        };
        let raw = call.arguments.trim();
        let args: serde_json::Value = if raw.is_empty() {
            serde_json::Value::Object(Default::default())
        } else {
            match serde_json::from_str(raw) {
                Ok(v) => v,
                Err(e) => {
                    return Some(Slot::Answered(
                        ToolStatus::Error,
                        format!(
                            "Invalid JSON arguments for '{}': {e}. Arguments received: {}. Send the arguments as one JSON object.",
                            call.name, call.arguments
                        ),
                    ));
                }
            }
        };
        if let Err(problem) = self.registry.validate(&call.name, &args) {
            return Some(Slot::Answered(
                ToolStatus::Error,
                format!("Invalid arguments for '{}': {problem}. Fix the arguments and call it again.", call.name),
            ));
        }
        let def = tool.def();
        let policy = policy::approval_for(def, &self.config.tool_settings);
        if policy == ApprovalPolicy::Deny {
            return Some(Slot::Answered(
                ToolStatus::Denied,
                format!("The user's settings do not allow '{}' to run. Answer without it.", call.name),
            ));
        }
        if self.options.dry_run {
            return Some(self.runnable(i, args, out));
        }
        let egress = if self.config.tool_settings.egress_exempt.contains(&call.name) {
            None
        } else {
            tool.egress(&args).and_then(|e| self.exposure.question(&e))
        };
        if egress.is_some() || (policy == ApprovalPolicy::Ask && !self.approved.contains(&call.name)) {
            // Asked before the event goes out, so an answer sent the moment the event
            // arrives finds the question registered.
            let preview = tool.preview(&args);
            out.push(Effect::Ask(ApprovalRequest {
                conversation_id: self.conversation_id.clone(),
                call_id: call.id.clone(),
                name: call.name.clone(),
                source: def.source.clone(),
                arguments: call.arguments.clone(),
                preview: preview.clone(),
                egress: egress.clone(),
            }));
            self.round.asking_egress = egress.as_ref().map(|e| e.destination.clone());
            out.push(Effect::Emit(ChatEvent::ApprovalRequested {
                id: call.id.clone(),
                name: call.name.clone(),
                source: def.source.clone(),
                arguments: call.arguments.clone(),
                preview,
                egress,
            }));
            out.push(Effect::Flush);
            self.round.asking = Some(args);
            self.phase = Phase::Approving;
            return None;
        }
        Some(self.runnable(i, args, out))
    }

    /// The answer to a call of a tool this request does not offer. A tool the person switched
    /// off (for this chat or in Settings) is said to be off, shortly, and not run; only a name
    /// no source has is "unknown", with the names the model may call instead.
    fn answer_not_offered(&self, name: &str) -> Slot {
        let offered = &self.offer.tools;
        let known = self.registry.get(name).is_some();
        if known && self.options.disabled_for_chat.contains(name) {
            return Slot::Answered(
                ToolStatus::Skipped,
                format!(
                    "{name} is switched off in this chat. Answer without it, or ask the user to switch it back on."
                ),
            );
        }
        if known && self.config.tool_settings.disabled.contains(name) {
            return Slot::Answered(
                ToolStatus::Skipped,
                format!(
                    "{name} is switched off in Settings → Tools. Answer without it, or ask the user to switch it on there."
                ),
            );
        }
        let text = if self.enabled_not_offered(name) {
            format!(
                "'{name}' is not offered in this step: more tools are enabled than one request can carry. Call {FIND_TOOLS} with what it does, and it is offered from the next step on."
            )
        } else if offered.is_empty() {
            format!("Unknown tool '{name}'. No tools are available in this request.")
        } else {
            format!("Unknown tool '{name}'. Available tools: {}.", offered.join(", "))
        };
        Slot::Answered(ToolStatus::Error, text)
    }

    pub(super) fn on_decision(&mut self, decision: ApprovalDecision, out: &mut Vec<Effect>) {
        let i = self.round.slots.len();
        let args = self.round.asking.take().unwrap_or_default();
        let egress = self.round.asking_egress.take();
        let call = &self.round.calls[i];
        let approved = decision != ApprovalDecision::Deny;
        out.push(Effect::Emit(ChatEvent::ApprovalResolved { id: call.id.clone(), approved }));
        let slot = match (decision, egress) {
            (ApprovalDecision::Deny, Some(destination)) => Slot::Answered(
                ToolStatus::Denied,
                format!(
                    "Not run: this call to '{}' would send data to {destination}, a destination the user has not used \
                     in this chat, after the chat read untrusted content, and the user did not allow it. Do not \
                     retry it or send this data elsewhere; answer without it, or ask the user.",
                    call.name
                ),
            ),
            (ApprovalDecision::ForChat | ApprovalDecision::Always, Some(destination)) => {
                // The person allowed the destination, not the tool: its next call elsewhere asks again.
                self.exposure.known.insert(crate::egress::normal_host(&destination));
                self.runnable(i, args, out)
            }
            (ApprovalDecision::Once, Some(_)) => self.runnable(i, args, out),
            (ApprovalDecision::Deny, None) => Slot::Answered(
                ToolStatus::Denied,
                format!(
                    "The user denied this call to '{}'. Do not retry it; answer without it or ask the user.",
                    call.name
                ),
            ),
            (ApprovalDecision::ForChat | ApprovalDecision::Always, None) => {
                self.approved.insert(call.name.clone());
                self.runnable(i, args, out)
            }
            (ApprovalDecision::Once, None) => self.runnable(i, args, out),
        };
        self.round.slots.push(slot);
        self.prepare_rest(out);
    }

    /// A valid, allowed call: run it, or in a dry run answer with its example output.
    fn runnable(&mut self, i: usize, args: serde_json::Value, out: &mut Vec<Effect>) -> Slot {
        if !self.options.dry_run {
            return Slot::Run(args);
        }
        if !self.dry_run_noticed {
            self.dry_run_noticed = true;
            Self::notice(NoticeKind::DryRun, "Dry run: tools return their example output and do not run.".into(), out);
        }
        let call = &self.round.calls[i];
        let example = self.registry.get(&call.name).and_then(|t| t.def().example_output.clone());
        Slot::DryRun(example.unwrap_or_else(|| {
            format!("(dry run) '{}' would run with arguments {}; it has no example output.", call.name, args)
        }))
    }
}
