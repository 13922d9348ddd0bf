//! Beginning an iteration: which tools are offered this time (the policy's [`Offer`] fitted to
//! the provider's limits, or none on the last call, after a refusal, or for a model that takes
//! none), the provider-safe names,
//! and the one request every attempt of the iteration sends.
//!
//! Invariant: a retry sends exactly the request the first attempt sent.

use super::{Effect, Iteration, Machine, Phase};
use crate::catalogue::FIND_TOOLS;
use crate::compaction::Compaction;
use crate::event::NoticeKind;
use crate::names::NameMap;
use crate::policy::{self, Forcing, Offer, Selection};
use crate::provider::{ProviderRequest, ToolChoice, ToolSpec};
use crate::types::Message;

impl Machine<'_> {
    pub(super) fn begin_iteration(&mut self, out: &mut Vec<Effect>) {
        // (1) A budget (or the step limit) may pause before the request: budget.rs.
        if self.budget_pauses(out) {
            return;
        }
        self.iteration += 1;
        self.last_call = self.iteration > self.max_iterations || self.budget_last_call();
        self.offer = if self.last_call {
            let max = self.max_iterations;
            if self.iteration > max {
                Self::notice(
                    NoticeKind::MaxIterations,
                    format!(
                        "The model used tools in {max} rounds, the most allowed per turn; it was asked to answer with what it has."
                    ),
                    out,
                );
            }
            Offer { tools: Vec::new(), forcing: Forcing::None, unavailable: Vec::new() }
        } else if self.tools_refused || self.options.tools_unsupported.is_some() {
            if self.iteration == 1
                && let Some(why) = &self.options.tools_unsupported
                && self.options.use_tools
            {
                Self::notice(NoticeKind::ToolUnavailable, why.clone(), out);
            }
            Offer::none()
        } else {
            let sel = Selection {
                use_tools: self.options.use_tools,
                forced: &self.options.forced,
                disabled_for_chat: &self.options.disabled_for_chat,
                settings: &self.config.tool_settings,
                iteration: self.iteration,
            };
            // The paging tool stays in the offer; `request_with` sends it once a result is cut
            // or compacted (a compaction made before this iteration's request included).
            let offer = policy::offer(self.registry.defs(), &sel);
            self.fit_offer(offer, out)
        };
        if self.iteration == 1 {
            for (name, why) in &self.offer.unavailable {
                Self::notice(
                    NoticeKind::ToolUnavailable,
                    format!("The tool '{name}' could not be forced: it is {why}."),
                    out,
                );
            }
        }
        // Tool names already in the history are sent provider-safe too, under the same mapping.
        let mut all_names: Vec<&str> = self.offer.tools.iter().map(String::as_str).collect();
        for m in &self.history {
            let in_history: Vec<&str> = match m {
                Message::Assistant { tool_calls, .. } => tool_calls.iter().map(|c| c.name.as_str()).collect(),
                Message::Tool { name, .. } => vec![name.as_str()],
                Message::User { .. } => Vec::new(),
            };
            for name in in_history {
                if !all_names.contains(&name) {
                    all_names.push(name);
                }
            }
        }
        self.names = NameMap::new(all_names);
        // Counted from the history this turn added (the input ends with the person's message).
        let assistant_turns = self
            .history
            .iter()
            .rev()
            .take_while(|m| !matches!(m, Message::User { .. }))
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        self.iteration_no = assistant_turns as u32 + 1;
        self.retries = 0;
        // Each request may be refused as too long, compacted and sent again once.
        self.too_long_retried = false;
        // COMPACT: over the threshold, older results become stubs and older messages a summary.
        if self.compact(false, out) == super::compact::Compacted::Waiting {
            return;
        }
        self.start_attempt(out);
    }

    /// Sends the iteration's request (again, after a retry wait); a retry sends the same request.
    pub(super) fn start_attempt(&mut self, out: &mut Vec<Effect>) {
        self.it = Iteration::default();
        self.malformed.clear();
        self.iteration_start = self.turn_chars;
        self.phase = Phase::Streaming;
        let request = self.request();
        self.it.exchanged.sent = super::spend::request_chars(&request);
        self.announce_context(&request, out);
        out.push(Effect::StartRequest { request, attempt: self.retries + 1 });
    }

    pub(super) fn request(&self) -> ProviderRequest {
        self.request_with(&self.compaction)
    }

    /// The request as sent with `compaction`: its history, and the paging tool only when some
    /// result is not sent whole (cut with a note, a stub, or under a summary).
    pub(super) fn request_with(&self, compaction: &Compaction) -> ProviderRequest {
        let names = &self.names;
        let paging =
            self.offer.forcing == Forcing::Auto && (crate::paging::needed(&self.history) || !compaction.is_empty());
        let mut system = self.system_prompt.clone().unwrap_or_default();
        let mut tools = Vec::with_capacity(self.offer.tools.len());
        // A prompt several tools share (an MCP server's instructions) is added once.
        let mut prompts: Vec<&str> = Vec::new();
        let find_tools = self.offer.tools.iter().any(|n| n == FIND_TOOLS).then(|| self.find_tools_def());
        for name in self.offer.tools.iter().filter(|n| paging || n.as_str() != crate::paging::TOOL) {
            let def = match self.registry.get(name) {
                Some(tool) => tool.def(),
                None if name == FIND_TOOLS
                    && let Some(def) = &find_tools =>
                {
                    def
                }
                None => continue,
            };
            if let Some(prompt) = def.prompt.as_deref().filter(|p| !prompts.contains(p)) {
                prompts.push(prompt);
                if !system.is_empty() {
                    system.push_str("\n\n");
                }
                system.push_str(prompt);
            }
            tools.push(ToolSpec {
                name: names.safe(name).to_owned(),
                description: def.description.clone(),
                parameters: def.parameters.clone(),
            });
        }
        let tool_choice = match &self.offer.forcing {
            Forcing::Auto => ToolChoice::Auto,
            Forcing::None => ToolChoice::None,
            Forcing::One(n) => ToolChoice::Named(names.safe(n).to_owned()),
            Forcing::AnyOf(ns) => ToolChoice::OneOf(ns.iter().map(|n| names.safe(n).to_owned()).collect()),
        };
        ProviderRequest {
            model: self.model.clone(),
            system: (!system.is_empty()).then_some(system),
            messages: self.sent_history_with(compaction).iter().map(|m| with_safe_names(m, names)).collect(),
            tools,
            tool_choice,
            options: self.options.generation,
        }
    }
}

/// `message` with its tool names as `names` sends them to the provider.
fn with_safe_names(message: &Message, names: &NameMap) -> Message {
    let mut message = message.clone();
    match &mut message {
        Message::Assistant { tool_calls, .. } => {
            for call in tool_calls {
                call.name = names.safe(&call.name).to_owned();
            }
        }
        Message::Tool { name, .. } => *name = names.safe(name).to_owned(),
        Message::User { .. } => {}
    }
    message
}
