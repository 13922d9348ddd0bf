//! The tool loop as a pure state machine: inputs in, effects out as data.
//!
//! A [`Machine`] holds one turn's state (history, usage, offsets, approvals, the round in flight)
//! and makes every decision of the loop: which tools to offer, when to retry and for how long,
//! how a round is planned, validated and approved, what each call id is answered, and how the turn
//! ends. It does no I/O, owns no timers and never awaits: the driver ([`crate::turn`]) feeds it
//! [`Input`]s (a stream item, a timeout that fired, a decision, a finished tool) and performs the
//! [`Effect`]s it pushes, in order, into a buffer the driver owns and reuses.
//!
//! Nesting needs no second loop: a machine is a plain value and the driver keeps nothing between
//! turns, so a tool (an agent) can run a child turn with `Engine::run_turn` and its own sink.
//!
//! Invariants: every call id gets exactly one `toolResult`, on every path; `done` is the last
//! event and [`Effect::Finish`] the last effect; a request is retried only before any output.

use crate::approval::{ApprovalDecision, ApprovalRequest};
use crate::config::{EngineConfig, TurnInput, TurnOptions, TurnOutcome};
use crate::error::{ErrorKind, ProviderError};
use crate::event::{ChatEvent, FinishReason, NoticeKind, ToolStatus};
use crate::names::NameMap;
use crate::policy::{self, Forcing, Offer, Selection};
use crate::provider::{ProviderEvent, ProviderRequest, StopReason, ToolChoice, ToolSpec};
use crate::registry::ToolRegistry;
use crate::round::{self, Plan};
use crate::types::{Message, ProviderState, ToolCall, Usage, char_len};
use crate::vocab::{ApprovalPolicy, ToolError, ToolImage, ToolOutput, ToolSource};
use std::collections::HashSet;
use std::time::Duration;

/// What the person is told when a provider's filter ended an answer without saying why.
const FILTERED: &str = "The provider's content filter stopped this answer; what arrived before it is kept. Rephrase the request or ask for something else.";

/// Something that happened, for the machine to decide about.
#[derive(Debug)]
pub enum Input {
    /// The turn begins: `started`, then the first request.
    Start,
    /// One item of the provider stream of the current request.
    Stream(Result<ProviderEvent, ProviderError>),
    /// The provider stream ended (without `Finish` this is a network error).
    StreamEnded,
    /// The wait of [`Effect::WaitRetry`] is over.
    RetryElapsed,
    /// The provider sent nothing for [`EngineConfig::idle_timeout`].
    IdleTimeout,
    /// The answer to the last [`Effect::Ask`].
    Approval(ApprovalDecision),
    /// A call of [`Effect::RunTools`] ended.
    ToolFinished(ToolFinished),
    /// The person stopped the turn.
    Cancel,
}

/// How one call of [`Effect::RunTools`] went.
#[derive(Debug)]
pub struct ToolFinished {
    /// [`ToolRun::index`] of the call.
    pub index: usize,
    /// What the tool did.
    pub end: ToolEnd,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// Unicode scalar values of answer text the tool streamed (control-taking tools): later
    /// offsets count them.
    pub answer_chars: usize,
    /// What the sub-agent turns the call ran used; it counts toward this turn's usage.
    pub usage: Usage,
}

/// How a tool call ended, before it is worded for the model.
#[derive(Debug)]
pub enum ToolEnd {
    /// The tool returned.
    Returned(Result<ToolOutput, ToolError>),
    /// The tool panicked, with this message.
    Panicked(String),
    /// The tool ran past [`ToolRun::timeout`] and was stopped.
    TimedOut,
}

/// One call to run: validated, approved, not a duplicate.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolRun {
    /// Position of the call in its round; reported back in [`ToolFinished::index`].
    pub index: usize,
    /// The call (registry name; `name` is the tool to run).
    pub call: ToolCall,
    /// Arguments, parsed and valid against the tool's schema.
    pub args: serde_json::Value,
    /// The call's time limit.
    pub timeout: Duration,
    /// A control-taking tool: alone in its round, and its streamed text is the answer.
    pub takes_control: bool,
}

/// Something the driver must do, in the order the machine pushed it.
#[derive(Debug, PartialEq)]
pub enum Effect {
    /// Send this event to the sink.
    Emit(ChatEvent),
    /// Tell the sink the loop is about to wait.
    Flush,
    /// Let a durable sink checkpoint (before each tool call, so it is stored with its text).
    Tick,
    /// Open a provider stream for this request, dropping any previous one. `attempt` is 1-based.
    StartRequest {
        /// The request.
        request: ProviderRequest,
        /// 1 for the first try, 2 for the first retry, ...
        attempt: u32,
    },
    /// Wait this long, then send [`Input::RetryElapsed`] (or [`Input::Cancel`]).
    WaitRetry {
        /// How long.
        delay: Duration,
    },
    /// Ask the approver, before performing the effects that follow (they announce the question),
    /// and send its answer as [`Input::Approval`].
    Ask(ApprovalRequest),
    /// Run these calls concurrently; send an [`Input::ToolFinished`] for each.
    RunTools(Vec<ToolRun>),
    /// Stop the running calls; their results are no longer wanted.
    CancelTools,
    /// The turn is over (`done` was emitted just before).
    Finish(TurnOutcome),
}

/// What the machine is waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// [`Input::Start`].
    NotStarted,
    /// Stream items, the stream's end, the idle timeout.
    Streaming,
    /// [`Input::RetryElapsed`].
    WaitingRetry,
    /// [`Input::Approval`].
    Approving,
    /// [`Input::ToolFinished`].
    RunningTools,
    /// Nothing: the turn is over.
    Finished,
}

/// What one model call produced so far.
#[derive(Default)]
struct Iteration {
    text: String,
    calls: Vec<ToolCall>,
    usage: Usage,
    stop: Option<StopReason>,
    /// Text, reasoning or a call arrived: no retry from here on.
    output_started: bool,
    /// What the API wants back with this response.
    state: Option<ProviderState>,
}

enum StreamEnd {
    Finished,
    Failed(ProviderError),
    Cancelled,
}

/// One call of a round, as far as it got before running.
enum Slot {
    /// Answered without running (error, denial, skip).
    Answered(ToolStatus, String),
    /// Gets the result of the call at this index.
    Duplicate(usize),
    Run(serde_json::Value),
    DryRun(String),
}

/// The round in flight.
#[derive(Default)]
struct Round {
    calls: Vec<ToolCall>,
    plans: Vec<Plan>,
    /// Prepared so far, in call order (validation and approval go one call at a time).
    slots: Vec<Slot>,
    /// Arguments of the call waiting for approval.
    asking: Option<serde_json::Value>,
    results: Vec<Option<(ToolStatus, String, Vec<ToolImage>)>>,
    control_call: Option<usize>,
    running: usize,
    answer_chars: usize,
}

/// The state of one turn. See the module docs.
pub struct Machine<'a> {
    config: &'a EngineConfig,
    registry: &'a ToolRegistry,
    conversation_id: String,
    user_message_id: String,
    message_id: String,
    provider_name: String,
    model: String,
    system_prompt: Option<String>,
    options: TurnOptions,
    history: Vec<Message>,
    max_iterations: u32,
    phase: Phase,
    iteration: u32,
    usage: Usage,
    calls_made: u32,
    /// Chars of answer text so far in the whole turn: the origin of every `text_offset`.
    turn_chars: usize,
    approved: HashSet<String>,
    dry_run_noticed: bool,
    last_call: bool,
    offer: Offer,
    names: NameMap,
    /// The 1-based iteration number `ToolCall` events carry.
    iteration_no: u32,
    iteration_start: usize,
    /// Retries of the current request so far.
    retries: u32,
    /// Calls of this iteration the provider could not assemble (id -> what was wrong): answered
    /// with an error, never run.
    malformed: Vec<(String, String)>,
    /// State of the retry jitter's generator (xorshift); 0: no jitter. Seeded by the driver, so
    /// the machine stays free of clocks and randomness and its tests stay exact.
    jitter: u64,
    /// The API refused tools for this model: the rest of the turn offers none.
    tools_refused: bool,
    it: Iteration,
    round: Round,
}

impl std::fmt::Debug for Machine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Machine")
            .field("phase", &self.phase)
            .field("iteration", &self.iteration)
            .field("turn_chars", &self.turn_chars)
            .field("calls_made", &self.calls_made)
            .finish_non_exhaustive()
    }
}

impl<'a> Machine<'a> {
    /// A turn over `registry` under `config`, waiting for [`Input::Start`].
    pub fn new(config: &'a EngineConfig, registry: &'a ToolRegistry, input: TurnInput) -> Self {
        let TurnInput {
            conversation_id,
            user_message_id,
            message_id,
            provider_name,
            model,
            system_prompt,
            history,
            mut options,
        } = input;
        let max_iterations = options.max_iterations.unwrap_or(config.max_iterations).max(1);
        let approved = std::mem::take(&mut options.approved_tools);
        Self {
            config,
            registry,
            conversation_id,
            user_message_id,
            message_id,
            provider_name,
            model,
            system_prompt,
            options,
            history,
            max_iterations,
            phase: Phase::NotStarted,
            iteration: 0,
            usage: Usage::default(),
            calls_made: 0,
            turn_chars: 0,
            approved,
            dry_run_noticed: false,
            last_call: false,
            offer: Offer { tools: Vec::new(), forcing: Forcing::None, unavailable: Vec::new() },
            names: NameMap::default(),
            iteration_no: 1,
            iteration_start: 0,
            retries: 0,
            malformed: Vec::new(),
            jitter: 0,
            tools_refused: false,
            it: Iteration::default(),
            round: Round::default(),
        }
    }

    /// Spreads retry backoff with jitter drawn from `seed` (the driver passes a random one), so
    /// many clients failing together do not retry together: each backoff wait becomes a value
    /// between half of it and all of it, still under `retry_max_delay`. A wait the server asked
    /// for is kept as asked. Without a seed (or with 0) waits are exact.
    #[must_use]
    pub fn with_retry_jitter(mut self, seed: u64) -> Self {
        self.jitter = seed;
        self
    }

    /// The next jitter factor in [0.5, 1.0], or 1.0 without jitter.
    fn jitter_factor(&mut self) -> f64 {
        if self.jitter == 0 {
            return 1.0;
        }
        let mut x = self.jitter;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.jitter = x;
        0.5 + 0.5 * ((x >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// What the machine waits for.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The canonical history so far: the input's, then per iteration the model's message and its
    /// tool results.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Chars of answer text in the turn so far (model text and control-taking tools' text).
    pub fn answer_chars(&self) -> usize {
        self.turn_chars
    }

    /// Handles one input, pushing what to do onto `out` (not cleared: the caller drains it).
    /// An input the current phase does not expect is ignored.
    pub fn handle(&mut self, input: Input, out: &mut Vec<Effect>) {
        match (self.phase, input) {
            (Phase::NotStarted, Input::Start) => self.start(out),
            (Phase::NotStarted, Input::Cancel) => {
                self.emit_started(out);
                self.finish(FinishReason::Cancelled, None, out);
            }
            (Phase::Streaming, Input::Stream(item)) => self.on_item(item, out),
            (Phase::Streaming, Input::StreamEnded) => self.end_stream(
                StreamEnd::Failed(ProviderError::new(
                    ErrorKind::Network,
                    "The provider's stream ended before the response was complete.",
                )),
                out,
            ),
            (Phase::Streaming, Input::IdleTimeout) => {
                let message = format!(
                    "The provider sent nothing for {}; the response was abandoned.",
                    seconds(self.config.idle_timeout)
                );
                self.end_stream(StreamEnd::Failed(ProviderError::new(ErrorKind::Timeout, message)), out);
            }
            (Phase::Streaming | Phase::WaitingRetry, Input::Cancel) => self.end_iteration(StreamEnd::Cancelled, out),
            (Phase::WaitingRetry, Input::RetryElapsed) => self.start_attempt(out),
            (Phase::Approving, Input::Approval(decision)) => self.on_decision(decision, out),
            (Phase::Approving, Input::Cancel) => {
                let i = self.round.slots.len();
                let id = self.round.calls[i].id.clone();
                out.push(Effect::Emit(ChatEvent::ApprovalResolved { id, approved: false }));
                let calls = std::mem::take(&mut self.round.calls);
                // Counted when the round began; answering them counts them again.
                self.calls_made -= calls.len() as u32;
                self.answer_unrun(&calls, ToolStatus::Cancelled, "Stopped by the user before the tool ran.", out);
                self.finish(FinishReason::Cancelled, None, out);
            }
            (Phase::RunningTools, Input::ToolFinished(done)) => self.on_tool_finished(done, out),
            (Phase::RunningTools, Input::Cancel) => {
                out.push(Effect::CancelTools);
                self.finish_round(true, out);
            }
            _ => {}
        }
    }

    fn start(&mut self, out: &mut Vec<Effect>) {
        self.emit_started(out);
        for why in std::mem::take(&mut self.options.unavailable) {
            Self::notice(NoticeKind::ToolUnavailable, why, out);
        }
        self.begin_iteration(out);
    }

    fn emit_started(&mut self, out: &mut Vec<Effect>) {
        out.push(Effect::Emit(ChatEvent::Started {
            conversation_id: self.conversation_id.clone(),
            message_id: std::mem::take(&mut self.message_id),
            user_message_id: std::mem::take(&mut self.user_message_id),
            provider: std::mem::take(&mut self.provider_name),
            model: self.model.clone(),
        }));
    }

    fn outcome(&self, finish_reason: FinishReason, error: Option<ProviderError>) -> TurnOutcome {
        TurnOutcome { finish_reason, usage: self.usage, tool_calls_made: self.calls_made, error }
    }

    /// Ends the turn: the error event if it failed, then `done`, then [`Effect::Finish`].
    fn finish(&mut self, reason: FinishReason, error: Option<ProviderError>, out: &mut Vec<Effect>) {
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

    fn notice(kind: NoticeKind, message: String, out: &mut Vec<Effect>) {
        out.push(Effect::Emit(ChatEvent::Notice { kind, message }));
    }

    // -- iterations and requests ------------------------------------------------------------------

    fn begin_iteration(&mut self, out: &mut Vec<Effect>) {
        self.iteration += 1;
        self.last_call = self.iteration > self.max_iterations;
        self.offer = if self.last_call {
            let max = self.max_iterations;
            Self::notice(
                NoticeKind::MaxIterations,
                format!(
                    "The model used tools in {max} rounds, the most allowed per turn; it was asked to answer with what it has."
                ),
                out,
            );
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
            policy::offer(self.registry.defs(), &sel)
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
        self.start_attempt(out);
    }

    /// Sends the iteration's request (again, after a retry wait); a retry sends the same request.
    fn start_attempt(&mut self, out: &mut Vec<Effect>) {
        self.it = Iteration::default();
        self.malformed.clear();
        self.iteration_start = self.turn_chars;
        self.phase = Phase::Streaming;
        out.push(Effect::StartRequest { request: self.request(), attempt: self.retries + 1 });
    }

    fn request(&self) -> ProviderRequest {
        let names = &self.names;
        let mut system = self.system_prompt.clone().unwrap_or_default();
        let mut tools = Vec::with_capacity(self.offer.tools.len());
        // A prompt several tools share (an MCP server's instructions) is added once.
        let mut prompts: Vec<&str> = Vec::new();
        for name in &self.offer.tools {
            let Some(tool) = self.registry.get(name) else { continue };
            let def = tool.def();
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
            messages: self.history.iter().map(|m| with_safe_names(m, names)).collect(),
            tools,
            tool_choice,
            options: self.options.generation,
        }
    }

    // -- the stream ---------------------------------------------------------------------------------

    fn on_item(&mut self, item: Result<ProviderEvent, ProviderError>, out: &mut Vec<Effect>) {
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

    /// A response ended: retried while nothing was output, else the iteration ends.
    fn end_stream(&mut self, end: StreamEnd, out: &mut Vec<Effect>) {
        if let StreamEnd::Failed(error) = &end
            && error.tools_unsupported
            && !self.it.output_started
            && !self.offer.tools.is_empty()
        {
            // Asking again without tools costs one request and answers the person; an error
            // would only tell them to turn tools off by hand.
            self.tools_refused = true;
            self.offer = Offer::none();
            Self::notice(
                NoticeKind::ToolUnavailable,
                format!(
                    "{} does not take tools, so it is answering without them. To stop offering them, set \"Tools\" to off in the profile.",
                    self.model
                ),
                out,
            );
            return self.start_attempt(out);
        }
        if let StreamEnd::Failed(error) = &end
            && !self.it.output_started
            && error.is_retryable()
            && self.retries < self.config.max_retries
        {
            self.retries += 1;
            let backoff = self.config.retry_base_delay.saturating_mul(1 << (self.retries - 1).min(16));
            let backoff = backoff.min(self.config.retry_max_delay).mul_f64(self.jitter_factor());
            let delay = error.retry_after.unwrap_or(backoff).min(self.config.retry_max_delay);
            Self::notice(
                NoticeKind::Retrying,
                format!(
                    "{} Retrying in {:.1} s (attempt {} of {}).",
                    error.message,
                    delay.as_secs_f32(),
                    self.retries + 1,
                    self.config.max_retries + 1
                ),
                out,
            );
            out.push(Effect::Flush);
            out.push(Effect::WaitRetry { delay });
            self.phase = Phase::WaitingRetry;
            return;
        }
        self.end_iteration(end, out);
    }

    fn end_iteration(&mut self, end: StreamEnd, out: &mut Vec<Effect>) {
        let usage = self.it.usage;
        self.usage.add(&usage);
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

    /// Gives calls that will never run a result, so every call id is answered.
    fn answer_unrun(&mut self, calls: &[ToolCall], status: ToolStatus, why: &str, out: &mut Vec<Effect>) {
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

    // -- rounds -----------------------------------------------------------------------------------

    fn begin_round(&mut self, calls: Vec<ToolCall>, out: &mut Vec<Effect>) {
        self.calls_made += calls.len() as u32;
        let registry = self.registry;
        let plans = round::plan_round(&calls, self.config.max_tool_calls_per_round, |name| {
            registry.get(name).is_some_and(|t| t.def().takes_control)
        });
        let n = calls.len();
        self.round = Round { calls, plans, slots: Vec::with_capacity(n), results: vec![None; n], ..Round::default() };
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
        let tool = match self.registry.get(&call.name) {
            Some(tool) if offered.contains(&call.name) => tool,
            _ => {
                let text = if offered.is_empty() {
                    format!("Unknown tool '{}'. No tools are available in this request.", call.name)
                } else {
                    format!("Unknown tool '{}'. Available tools: {}.", call.name, offered.join(", "))
                };
                return Some(Slot::Answered(ToolStatus::Error, text));
            }
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
        match policy::approval_for(def, &self.config.tool_settings) {
            ApprovalPolicy::Deny => {
                return Some(Slot::Answered(
                    ToolStatus::Denied,
                    format!("The user's settings do not allow '{}' to run. Answer without it.", call.name),
                ));
            }
            ApprovalPolicy::Ask if !self.approved.contains(&call.name) && !self.options.dry_run => {
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
                }));
                out.push(Effect::Emit(ChatEvent::ApprovalRequested {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    source: def.source.clone(),
                    arguments: call.arguments.clone(),
                    preview,
                }));
                out.push(Effect::Flush);
                self.round.asking = Some(args);
                self.phase = Phase::Approving;
                return None;
            }
            _ => {}
        }
        Some(self.runnable(i, args, out))
    }

    fn on_decision(&mut self, decision: ApprovalDecision, out: &mut Vec<Effect>) {
        let i = self.round.slots.len();
        let args = self.round.asking.take().unwrap_or_default();
        let call = &self.round.calls[i];
        let approved = decision != ApprovalDecision::Deny;
        out.push(Effect::Emit(ChatEvent::ApprovalResolved { id: call.id.clone(), approved }));
        let slot = match decision {
            ApprovalDecision::Deny => Slot::Answered(
                ToolStatus::Denied,
                format!(
                    "The user denied this call to '{}'. Do not retry it; answer without it or ask the user.",
                    call.name
                ),
            ),
            ApprovalDecision::ForChat | ApprovalDecision::Always => {
                self.approved.insert(call.name.clone());
                self.runnable(i, args, out)
            }
            ApprovalDecision::Once => self.runnable(i, args, out),
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

    /// Answers what needs no running, starts the rest.
    fn start_round(&mut self, out: &mut Vec<Effect>) {
        let round = &mut self.round;
        let mut runs = Vec::new();
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

    fn on_tool_finished(&mut self, done: ToolFinished, out: &mut Vec<Effect>) {
        let ToolFinished { index, end, duration_ms, answer_chars, usage } = done;
        let Some(call) = self.round.calls.get(index) else { return };
        if !matches!(self.round.slots.get(index), Some(Slot::Run(_))) || self.round.results[index].is_some() {
            return;
        }
        if !usage.is_empty() {
            self.usage.add(&usage);
            out.push(Effect::Emit(ChatEvent::Usage { usage, total: self.usage }));
        }
        let name = &call.name;
        let mut images = Vec::new();
        let (status, text) = match end {
            ToolEnd::TimedOut => {
                let timeout = self.registry.get(name).and_then(|t| t.def().timeout).unwrap_or(self.config.tool_timeout);
                (ToolStatus::Timeout, format!("'{name}' did not finish within {} and was stopped.", seconds(timeout)))
            }
            ToolEnd::Panicked(what) => (ToolStatus::Error, format!("'{name}' crashed: {what}")),
            ToolEnd::Returned(Ok(output)) => {
                images = output.images;
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
        self.round.answer_chars += answer_chars;
        self.round.running -= 1;
        if self.round.running == 0 {
            self.finish_round(false, out);
        }
    }

    /// Duplicates get their original's result, unfinished calls a cancellation; results go into
    /// the history in call order; then the turn goes on, or ends.
    fn finish_round(&mut self, cancelled: bool, out: &mut Vec<Effect>) {
        let round = std::mem::take(&mut self.round);
        let Round { calls, slots, mut results, control_call, answer_chars, .. } = round;
        for (i, slot) in slots.iter().enumerate() {
            if let Slot::Duplicate(first) = slot
                && let Some((status, text, images)) = results[*first].clone()
            {
                out.push(result_event(&calls[i], status, text.clone(), 0, images.clone()));
                results[i] = Some((status, text, images));
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
        for (call, result) in calls.into_iter().zip(results) {
            let (status, content, images) = result.unwrap_or((ToolStatus::Cancelled, String::new(), Vec::new()));
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

fn result_event(
    call: &ToolCall,
    status: ToolStatus,
    output: String,
    duration_ms: u64,
    images: Vec<ToolImage>,
) -> Effect {
    let images = (!images.is_empty()).then_some(images);
    Effect::Emit(ChatEvent::ToolResult { id: call.id.clone(), status, output, duration_ms, images })
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

/// "2 s", "1.5 s", "0.1 s": durations as a person reads them.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 { format!("{s:.0} s") } else { format!("{:.1} s", s) }
}
