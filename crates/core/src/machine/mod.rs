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
//!
//! This file holds the machine's inputs, effects and state, and [`Machine::handle`], which routes
//! an input to its phase. The phases, in the order a turn meets them, one file each:
//! `request.rs` (an iteration's offer and request), `catalogue.rs` (fitting the offer to the
//! provider's limits, and answering `find_tools`), `stream.rs` (a response streaming in, and
//! how it ends), `retry.rs` (asking again after a failure before any output), `calls.rs`
//! (deciding a round's calls: plan, validate, approve), `budget.rs` (pausing before a request
//! that would pass a budget), `context.rs` (counting what each request sends), `compact.rs`
//! (compacting before a request that would pass the threshold), `tools.rs` (running them and
//! collecting their results) and `finish.rs` (ending the turn); `spend.rs` accounts what each
//! request used and cost.

mod budget;
mod calls;
mod catalogue;
mod compact;
mod context;
mod finish;
mod request;
mod retry;
pub mod spend;
mod stream;
mod tools;

pub use compact::Summary;

use crate::approval::{ApprovalDecision, ApprovalRequest};
use crate::budget::{BudgetChoice, BudgetKind, BudgetMeter, BudgetPause};
use crate::catalogue::ToolLimits;
use crate::compaction::Compaction;
use crate::config::{EngineConfig, TurnInput, TurnOptions, TurnOutcome};
use crate::egress::Exposure;
use crate::error::{ErrorKind, ProviderError};
use crate::event::{ChatEvent, FinishReason, NoticeKind, ToolStatus};
use crate::names::NameMap;
use crate::policy::{Forcing, Offer};
use crate::provider::{ProviderEvent, ProviderRequest, StopReason};
use crate::registry::ToolRegistry;
use crate::round::Plan;
use crate::types::{Message, ProviderState, ToolCall, Usage};
use crate::vocab::{ToolError, ToolImage, ToolOutput};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

pub use context::{ContextEstimate, Estimator, believable, combine, combine_handed_in, pdf_tokens};

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
    /// The answer to the last [`Effect::AskBudget`].
    Budget(BudgetChoice),
    /// A call of [`Effect::RunTools`] ended.
    ToolFinished(ToolFinished),
    /// The summary asked for with [`Effect::Summarise`].
    Summarised(Result<Summary, ProviderError>),
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
    /// What those turns cost in US dollars; `None` when any of their prices is unknown.
    pub cost_usd: Option<f64>,
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
    /// What the turn's context had read when the call was made (a sub-agent starts from it).
    pub exposure: std::sync::Arc<Exposure>,
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
    /// Ask the provider for this summary (tools off) and send the text as [`Input::Summarised`]
    /// (or [`Input::Cancel`]).
    Summarise {
        /// The summariser's request.
        request: ProviderRequest,
    },
    /// Wait this long, then send [`Input::RetryElapsed`] (or [`Input::Cancel`]).
    WaitRetry {
        /// How long.
        delay: Duration,
    },
    /// Ask the approver, before performing the effects that follow (they announce the question),
    /// and send its answer as [`Input::Approval`].
    Ask(ApprovalRequest),
    /// Ask the approver about a budget pause (before performing the effects that announce it),
    /// and send its answer as [`Input::Budget`].
    AskBudget(BudgetPause),
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
    /// [`Input::Summarised`]: older messages are being summarised before the request.
    Compacting,
    /// [`Input::Approval`].
    Approving,
    /// [`Input::ToolFinished`].
    RunningTools,
    /// [`Input::Budget`].
    BudgetPaused,
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
    /// Characters sent and received, for the estimate when the provider reports no usage.
    exchanged: spend::Exchanged,
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
    /// The destination it is asked about, when it is the egress question.
    asking_egress: Option<String>,
    /// Per call, the untrusted source its result came from: framed so for the model.
    untrusted: Vec<Option<String>>,
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
    /// What the context has read and where the person has sent things (the egress check).
    exposure: Exposure,
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
    /// How many tools and bytes of definitions one request to the provider may carry.
    limits: ToolLimits,
    /// When the policy offered more than fit `limits`: everything it offered (registry order),
    /// which `find_tools` searches; empty when everything fit.
    enabled: Vec<String>,
    /// Tools `find_tools` found this turn, the latest first: they take direct places first.
    found: Vec<String>,
    /// The "more tools than fit" notice was shown this turn.
    over_limit_noticed: bool,
    /// How the history is sent (see [`crate::compaction`]); grows when the loop compacts.
    compaction: Compaction,
    /// The summary being written.
    pending: Option<compact::Pending>,
    /// A "too long" refusal of this iteration's request was answered by compacting once.
    too_long_retried: bool,
    /// The "window not known" note was shown this turn.
    window_noticed: bool,
    /// Counting what each request sends (the `context` event).
    counting: context::Counting,
    it: Iteration,
    round: Round,
    /// What this turn and the turns it shares a meter with spent, and their limits.
    meter: Arc<BudgetMeter>,
    /// Time since the outermost turn began, fed by the driver.
    elapsed: Duration,
    /// Budget pauses so far (their ids count them).
    pauses: u32,
    /// Budget pause ids start with this (the turn's message id).
    pause_prefix: String,
    /// The pause waiting for the person.
    pausing: Option<BudgetPause>,
    /// A budget (of this kind) asked for one last request with tools off.
    answering_now: Option<BudgetKind>,
    /// The "price unknown, cost budget not kept" notice was shown.
    cost_unknown_noticed: bool,
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
        let exposure = std::mem::take(&mut options.exposure);
        let meter = options
            .meter
            .take()
            .unwrap_or_else(|| Arc::new(BudgetMeter::new(options.budget).with_chat(options.chat_budget)));
        let pause_prefix = message_id.clone();
        let compaction = std::mem::take(&mut options.compaction);
        let counting = context::Counting::new(options.counter.take(), options.reported.take());
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
            exposure,
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
            limits: ToolLimits::default(),
            enabled: Vec::new(),
            found: Vec::new(),
            over_limit_noticed: false,
            compaction,
            pending: None,
            too_long_retried: false,
            window_noticed: false,
            counting,
            it: Iteration::default(),
            round: Round::default(),
            meter,
            elapsed: Duration::ZERO,
            pauses: 0,
            pause_prefix,
            pausing: None,
            answering_now: None,
            cost_unknown_noticed: false,
        }
    }

    /// With the provider's catalogue bounds (default: [`ToolLimits::default`]): no request
    /// offers more, and what does not fit is reached through `find_tools`.
    #[must_use]
    pub fn with_tool_limits(mut self, limits: ToolLimits) -> Self {
        self.limits = limits;
        self
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
            (Phase::Compacting, Input::Summarised(result)) => self.on_summary(result, out),
            (Phase::Compacting, Input::Cancel) => self.cancel_compacting(out),
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
            (Phase::BudgetPaused, Input::Budget(choice)) => self.on_budget_choice(choice, out),
            (Phase::BudgetPaused, Input::Cancel) => self.cancel_budget_pause(out),
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
        for what in std::mem::take(&mut self.options.attachment_notices) {
            Self::notice(NoticeKind::Attachment, what, out);
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

    fn notice(kind: NoticeKind, message: String, out: &mut Vec<Effect>) {
        out.push(Effect::Emit(ChatEvent::Notice { kind, message }));
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

/// "2 s", "1.5 s", "0.1 s": durations as a person reads them.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 { format!("{s:.0} s") } else { format!("{:.1} s", s) }
}
