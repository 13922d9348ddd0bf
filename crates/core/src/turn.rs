//! The tool loop: user message -> (model call -> tool calls -> tool results)* -> final answer.
//!
//! The pure decisions live in [`policy`](crate::policy), [`round`](crate::round) and
//! [`names`](crate::names); this module is the driver that performs them, streams every step to an
//! [`EventSink`] and never lets a failure escape as anything but an event.

use crate::error::{ErrorKind, ProviderError};
use crate::event::{ChatEvent, EventSink, FinishReason, NoticeKind, ToolStatus};
use crate::names::NameMap;
use crate::policy::{self, Forcing, Selection, ToolSettings};
use crate::provider::{Provider, ProviderEvent, ProviderRequest, StopReason, ToolChoice, ToolSpec};
use crate::registry::ToolRegistry;
use crate::round::{self, Plan};
use crate::tool::{ApprovalPolicy, Secrets, ToolContext, ToolError, ToolSource};
use crate::types::{Message, ToolCall, Usage, char_len};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use std::collections::{BTreeSet, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, debug, info_span, warn};

/// Limits and behavior of the loop. Built from settings before every turn, so changes apply to
/// the next turn without a restart.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Model calls with tools before the last, tools-off call.
    pub max_iterations: u32,
    /// Unique calls run per round; the rest are answered as skipped.
    pub max_tool_calls_per_round: usize,
    /// Per-call timeout unless the tool sets its own.
    pub tool_timeout: Duration,
    /// A stream with no event for this long ends with a timeout error.
    pub idle_timeout: Duration,
    /// Retries of a request that failed before any output.
    pub max_retries: u32,
    /// First retry delay; doubles per attempt.
    pub retry_base_delay: Duration,
    /// Upper bound of any retry delay, `Retry-After` included.
    pub retry_max_delay: Duration,
    /// Settings-wide tool settings (disabled tools, approval overrides).
    pub tool_settings: ToolSettings,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            max_iterations: 10,
            max_tool_calls_per_round: 10,
            tool_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(120),
            max_retries: 3,
            retry_base_delay: Duration::from_millis(1000),
            retry_max_delay: Duration::from_secs(30),
            tool_settings: ToolSettings::default(),
        }
    }
}

/// The person's choices for one turn.
#[derive(Clone, Debug)]
pub struct TurnOptions {
    /// `false`: no tools this turn.
    pub use_tools: bool,
    /// Tools forced for the first iteration.
    pub forced: Vec<String>,
    /// Tools disabled for this chat.
    pub disabled_for_chat: BTreeSet<String>,
    /// Tools return their example output instead of running.
    pub dry_run: bool,
    /// Overrides [`EngineConfig::max_iterations`] for this turn.
    pub max_iterations: Option<u32>,
    /// `ask` tools already approved for this chat or always.
    pub approved_tools: HashSet<String>,
}

impl Default for TurnOptions {
    fn default() -> Self {
        Self {
            use_tools: true,
            forced: Vec::new(),
            disabled_for_chat: BTreeSet::new(),
            dry_run: false,
            max_iterations: None,
            approved_tools: HashSet::new(),
        }
    }
}

/// Everything one turn starts from. The ids come from the store, which created the rows already.
#[derive(Clone, Debug)]
pub struct TurnInput {
    /// Conversation id.
    pub conversation_id: String,
    /// The person's message id.
    pub user_message_id: String,
    /// The assistant message id.
    pub message_id: String,
    /// Provider profile name (for the `started` event).
    pub provider_name: String,
    /// Model id.
    pub model: String,
    /// System prompt before tool snippets.
    pub system_prompt: Option<String>,
    /// History, ending with the person's new message.
    pub history: Vec<Message>,
    /// Per-turn choices.
    pub options: TurnOptions,
}

/// A request for the person to approve a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// Conversation id.
    pub conversation_id: String,
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Tool source.
    pub source: ToolSource,
    /// Exact arguments.
    pub arguments: String,
}

/// The person's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run this call.
    Once,
    /// Run it, and don't ask again in this chat (the approver persists that).
    ForChat,
    /// Run it, and never ask again (the approver persists that).
    Always,
    /// Don't run it; the model is told.
    Deny,
}

/// Asks the person about `ask` calls (a dialog in the app, a prompt or a flag in the CLI).
pub trait Approver: Send + Sync {
    /// Waits for a decision. Called before `ApprovalRequested` is emitted: an approver that is
    /// answered from elsewhere must be ready for that answer when this returns. The future is
    /// dropped when the turn is stopped.
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision>;
}

/// An approver that always answers the same.
#[derive(Clone, Copy, Debug)]
pub struct FixedApprover(pub ApprovalDecision);

impl Approver for FixedApprover {
    fn decide(&self, _request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        let d = self.0;
        async move { d }.boxed()
    }
}

/// How a turn ended (the same facts as the final `done` event).
#[derive(Clone, Debug, PartialEq)]
pub struct TurnOutcome {
    /// Why it ended.
    pub finish_reason: FinishReason,
    /// Usage summed over iterations.
    pub usage: Usage,
    /// Tool calls the model made.
    pub tool_calls_made: u32,
    /// The error, if it failed.
    pub error: Option<ProviderError>,
}

/// The tool loop over a registry and the person's secrets.
pub struct Engine {
    config: EngineConfig,
    registry: Arc<ToolRegistry>,
    secrets: Arc<dyn Secrets>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("config", &self.config).field("registry", &self.registry).finish()
    }
}

/// What one model call produced.
#[derive(Default)]
struct Iteration {
    text: String,
    calls: Vec<ToolCall>,
    usage: Usage,
    stop: Option<StopReason>,
}

enum StreamEnd {
    Finished,
    Failed(ProviderError),
    Cancelled,
}

impl Engine {
    /// An engine over `registry`, giving tools `secrets`.
    pub fn new(config: EngineConfig, registry: Arc<ToolRegistry>, secrets: Arc<dyn Secrets>) -> Self {
        Self { config, registry, secrets }
    }

    /// The registry this engine offers tools from.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Runs one turn to its end, emitting every step to `sink`; `done` is always the last event.
    pub async fn run_turn(
        &self,
        provider: &dyn Provider,
        input: TurnInput,
        sink: Arc<dyn EventSink>,
        approver: &dyn Approver,
        cancel: CancellationToken,
    ) -> TurnOutcome {
        let span = info_span!("turn", conversation = %input.conversation_id, message = %input.message_id, model = %input.model);
        let mut turn = Turn {
            engine: self,
            provider,
            sink,
            approver,
            cancel,
            conversation_id: input.conversation_id.clone(),
            options: input.options.clone(),
            history: input.history.clone(),
            usage: Usage::default(),
            calls_made: 0,
            turn_chars: 0,
            approved: input.options.approved_tools.clone(),
            dry_run_noticed: false,
            answer_chars: Arc::default(),
        };
        let outcome = turn.run(&input).instrument(span).await;
        turn.sink.emit(ChatEvent::Done {
            finish_reason: outcome.finish_reason,
            usage: outcome.usage,
            tool_calls_made: outcome.tool_calls_made,
        });
        outcome
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

struct Turn<'a> {
    engine: &'a Engine,
    provider: &'a dyn Provider,
    sink: Arc<dyn EventSink>,
    approver: &'a dyn Approver,
    cancel: CancellationToken,
    conversation_id: String,
    options: TurnOptions,
    history: Vec<Message>,
    usage: Usage,
    calls_made: u32,
    /// Chars of answer text so far in the whole turn: the origin of every `text_offset`.
    turn_chars: usize,
    approved: HashSet<String>,
    dry_run_noticed: bool,
    /// Chars of answer text streamed by control-taking tools in the current round.
    answer_chars: Arc<std::sync::atomic::AtomicUsize>,
}

/// Forwards a tool's events, counting the answer text a control-taking tool streams.
struct AnswerCounter {
    inner: Arc<dyn EventSink>,
    chars: Arc<std::sync::atomic::AtomicUsize>,
}

impl EventSink for AnswerCounter {
    fn emit(&self, event: ChatEvent) {
        if let ChatEvent::TextDelta { text } = &event {
            self.chars.fetch_add(char_len(text), std::sync::atomic::Ordering::Relaxed);
        }
        self.inner.emit(event);
    }
}

/// One call of a round, as far as it got before running.
enum Prepared {
    /// Answered without running (error, denial, skip, duplicate filled in later).
    Answered(ToolStatus, String),
    Duplicate(usize),
    Run(serde_json::Value),
    DryRun(String),
}

impl Turn<'_> {
    fn emit(&self, event: ChatEvent) {
        self.sink.emit(event);
    }

    fn outcome(&self, finish_reason: FinishReason, error: Option<ProviderError>) -> TurnOutcome {
        TurnOutcome { finish_reason, usage: self.usage, tool_calls_made: self.calls_made, error }
    }

    fn fail(&self, error: ProviderError) -> TurnOutcome {
        warn!(kind = %error.kind, "turn failed: {}", error.message);
        self.emit(ChatEvent::Error {
            kind: error.kind,
            message: error.message.clone(),
            retryable: error.is_retryable(),
        });
        self.outcome(FinishReason::Error, Some(error))
    }

    async fn run(&mut self, input: &TurnInput) -> TurnOutcome {
        self.emit(ChatEvent::Started {
            conversation_id: input.conversation_id.clone(),
            message_id: input.message_id.clone(),
            user_message_id: input.user_message_id.clone(),
            provider: input.provider_name.clone(),
            model: input.model.clone(),
        });
        let max_iterations = self.options.max_iterations.unwrap_or(self.engine.config.max_iterations).max(1);
        let registry = Arc::clone(&self.engine.registry);
        let mut iteration = 0u32;
        loop {
            iteration += 1;
            let last_call = iteration > max_iterations;
            let offer = if last_call {
                self.emit(ChatEvent::Notice {
                    kind: NoticeKind::MaxIterations,
                    message: format!(
                        "The model used tools in {max_iterations} rounds, the most allowed per turn; it was asked to answer with what it has."
                    ),
                });
                policy::Offer { tools: Vec::new(), forcing: Forcing::None, unavailable: Vec::new() }
            } else {
                let sel = Selection {
                    use_tools: self.options.use_tools,
                    forced: &self.options.forced,
                    disabled_for_chat: &self.options.disabled_for_chat,
                    settings: &self.engine.config.tool_settings,
                    iteration,
                };
                policy::offer(registry.defs(), &sel)
            };
            if iteration == 1 {
                for (name, why) in &offer.unavailable {
                    self.emit(ChatEvent::Notice {
                        kind: NoticeKind::ToolUnavailable,
                        message: format!("The tool '{name}' could not be forced: it is {why}."),
                    });
                }
            }
            // Tool names already in the history are sent provider-safe too, under the same mapping.
            let mut all_names: Vec<&str> = offer.tools.iter().map(String::as_str).collect();
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
            let names = NameMap::new(all_names);
            let request = self.request(&input.model, input.system_prompt.as_deref(), &offer, &names);

            let (it, end) = self.stream_iteration(request, &names).await;
            self.usage.add(&it.usage);
            if !it.usage.is_empty() {
                self.emit(ChatEvent::Usage { usage: it.usage, total: self.usage });
            }
            match end {
                StreamEnd::Finished => {}
                StreamEnd::Cancelled => {
                    self.answer_unrun(&it.calls, ToolStatus::Cancelled, "Stopped by the user before the tool ran.");
                    return self.outcome(FinishReason::Cancelled, None);
                }
                StreamEnd::Failed(e) => {
                    self.answer_unrun(
                        &it.calls,
                        ToolStatus::Cancelled,
                        "The model's response failed before the tool ran.",
                    );
                    return self.fail(e);
                }
            }
            self.history.push(Message::Assistant { text: it.text.clone(), tool_calls: it.calls.clone() });

            if it.calls.is_empty() || last_call {
                if last_call && !it.calls.is_empty() {
                    // Tools were off; the model called anyway. Answer the calls so history stays valid.
                    self.answer_unrun(&it.calls, ToolStatus::Skipped, "Tools are off for this final answer.");
                }
                let reason = if last_call {
                    FinishReason::MaxIterations
                } else {
                    match it.stop {
                        Some(StopReason::Length) => FinishReason::Length,
                        Some(StopReason::ContentFilter) => FinishReason::ContentFilter,
                        _ => FinishReason::Stop,
                    }
                };
                return self.outcome(reason, None);
            }

            let took_control = self.run_round(&it.calls, &offer.tools, &registry).await;
            if self.cancel.is_cancelled() {
                return self.outcome(FinishReason::Cancelled, None);
            }
            if took_control {
                return self.outcome(FinishReason::ToolTookControl, None);
            }
        }
    }

    fn request(&self, model: &str, system: Option<&str>, offer: &policy::Offer, names: &NameMap) -> ProviderRequest {
        let registry = &self.engine.registry;
        let mut system = system.map(str::to_owned).unwrap_or_default();
        let mut tools = Vec::with_capacity(offer.tools.len());
        for name in &offer.tools {
            let Some(tool) = registry.get(name) else { continue };
            let def = tool.def();
            if let Some(prompt) = &def.prompt {
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
        let tool_choice = match &offer.forcing {
            Forcing::Auto => ToolChoice::Auto,
            Forcing::None => ToolChoice::None,
            Forcing::One(n) => ToolChoice::Named(names.safe(n).to_owned()),
            Forcing::AnyOf(ns) => ToolChoice::OneOf(ns.iter().map(|n| names.safe(n).to_owned()).collect()),
        };
        ProviderRequest {
            model: model.to_owned(),
            system: (!system.is_empty()).then_some(system),
            messages: self.history.iter().map(|m| with_safe_names(m, names)).collect(),
            tools,
            tool_choice,
        }
    }

    /// One model call, retried with backoff while nothing has been output yet.
    async fn stream_iteration(&mut self, request: ProviderRequest, names: &NameMap) -> (Iteration, StreamEnd) {
        let config = &self.engine.config;
        let mut attempt = 0u32;
        loop {
            let mut it = Iteration::default();
            let mut output_started = false;
            let end = self.consume(&request, names, &mut it, &mut output_started).await;
            let StreamEnd::Failed(error) = &end else { return (it, end) };
            if output_started || !error.is_retryable() || attempt >= config.max_retries {
                return (it, end);
            }
            attempt += 1;
            let backoff = config.retry_base_delay.saturating_mul(1 << (attempt - 1).min(16));
            let delay = error.retry_after.unwrap_or(backoff).min(config.retry_max_delay);
            self.emit(ChatEvent::Notice {
                kind: NoticeKind::Retrying,
                message: format!(
                    "{} Retrying in {:.1} s (attempt {} of {}).",
                    error.message,
                    delay.as_secs_f32(),
                    attempt + 1,
                    config.max_retries + 1
                ),
            });
            self.sink.flush();
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.cancel.cancelled() => return (it, StreamEnd::Cancelled),
            }
        }
    }

    async fn consume(
        &mut self,
        request: &ProviderRequest,
        names: &NameMap,
        it: &mut Iteration,
        output_started: &mut bool,
    ) -> StreamEnd {
        let mut stream = self.provider.stream(request.clone());
        let idle = self.engine.config.idle_timeout;
        let iteration_start = self.turn_chars;
        let iteration_no = self.calls_iteration();
        let mut tick =
            tokio::time::interval_at(tokio::time::Instant::now() + Duration::from_secs(1), Duration::from_secs(1));
        let mut deadline = tokio::time::Instant::now() + idle;
        loop {
            if self.cancel.is_cancelled() {
                return StreamEnd::Cancelled;
            }
            // Events already buffered are handled without waiting; sinks that batch output are
            // told to flush only when the loop is about to wait for the network.
            if let Some(next) = stream.next().now_or_never() {
                deadline = tokio::time::Instant::now() + idle;
                match self.on_event(next, names, it, output_started, iteration_start, iteration_no) {
                    Some(end) => return end,
                    None => continue,
                }
            }
            self.sink.flush();
            let next = tokio::select! {
                biased;
                () = self.cancel.cancelled() => return StreamEnd::Cancelled,
                next = stream.next() => next,
                _ = tick.tick() => { self.sink.tick(); continue; }
                () = tokio::time::sleep_until(deadline) => {
                    return StreamEnd::Failed(ProviderError::new(
                        ErrorKind::Timeout,
                        format!("The provider sent nothing for {}; the response was abandoned.", seconds(idle)),
                    ));
                }
            };
            deadline = tokio::time::Instant::now() + idle;
            if let Some(end) = self.on_event(next, names, it, output_started, iteration_start, iteration_no) {
                return end;
            }
        }
    }

    /// Handles one item of the provider stream; `Some` when the stream is over.
    fn on_event(
        &mut self,
        next: Option<Result<ProviderEvent, ProviderError>>,
        names: &NameMap,
        it: &mut Iteration,
        output_started: &mut bool,
        iteration_start: usize,
        iteration_no: u32,
    ) -> Option<StreamEnd> {
        match next {
            None => Some(StreamEnd::Failed(ProviderError::new(
                ErrorKind::Network,
                "The provider's stream ended before the response was complete.",
            ))),
            Some(Err(e)) => Some(StreamEnd::Failed(e)),
            Some(Ok(event)) => {
                match event {
                    ProviderEvent::TextDelta(text) => {
                        if text.is_empty() {
                            return None;
                        }
                        *output_started = true;
                        self.turn_chars += char_len(&text);
                        it.text.push_str(&text);
                        self.emit(ChatEvent::TextDelta { text });
                    }
                    ProviderEvent::ReasoningDelta(text) => {
                        *output_started = true;
                        self.emit(ChatEvent::ReasoningDelta { text });
                    }
                    ProviderEvent::ToolCall { mut call, text_chars_before } => {
                        *output_started = true;
                        call.name = names.original(&call.name).to_owned();
                        let source = self
                            .engine
                            .registry
                            .get(&call.name)
                            .map_or(ToolSource::Unknown, |t| t.def().source.clone());
                        self.sink.tick();
                        self.emit(ChatEvent::ToolCall {
                            id: call.id.clone(),
                            name: call.name.clone(),
                            source,
                            arguments: call.arguments.clone(),
                            text_offset: (iteration_start + text_chars_before).min(self.turn_chars),
                            iteration: iteration_no,
                            index: it.calls.len() as u32,
                        });
                        it.calls.push(call);
                    }
                    ProviderEvent::Usage(usage) => it.usage = usage,
                    ProviderEvent::Finish { reason, .. } => {
                        it.stop = Some(reason);
                        return Some(StreamEnd::Finished);
                    }
                }
                None
            }
        }
    }

    /// The 1-based number of the iteration being streamed (counted from the history this turn added).
    fn calls_iteration(&self) -> u32 {
        let assistant_turns = self
            .history
            .iter()
            .rev()
            .take_while(|m| !matches!(m, Message::User { .. }))
            .filter(|m| matches!(m, Message::Assistant { .. }))
            .count();
        assistant_turns as u32 + 1
    }

    /// Gives calls that will never run a result, so every call id is answered.
    fn answer_unrun(&mut self, calls: &[ToolCall], status: ToolStatus, why: &str) {
        for call in calls {
            self.emit(ChatEvent::ToolResult { id: call.id.clone(), status, output: why.to_owned(), duration_ms: 0 });
            self.history.push(Message::Tool {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content: why.to_owned(),
                is_error: true,
            });
        }
        self.calls_made += calls.len() as u32;
    }

    /// Runs one round. Returns whether a control-taking tool produced the answer.
    async fn run_round(&mut self, calls: &[ToolCall], offered: &[String], registry: &ToolRegistry) -> bool {
        self.calls_made += calls.len() as u32;
        let config = &self.engine.config;
        let plans = round::plan_round(calls, config.max_tool_calls_per_round, |name| {
            registry.get(name).is_some_and(|t| t.def().takes_control)
        });

        // Validation and approval happen in call order, one at a time; running is concurrent.
        let mut prepared = Vec::with_capacity(calls.len());
        for (call, plan) in calls.iter().zip(&plans) {
            let p = match plan {
                Plan::DuplicateOf(i) => Prepared::Duplicate(*i),
                Plan::OverCap => Prepared::Answered(
                    ToolStatus::Skipped,
                    format!(
                        "Skipped: at most {} tool calls run per round. Call '{}' again in a later round if you still need it.",
                        config.max_tool_calls_per_round, call.name
                    ),
                ),
                Plan::NotAlone { control_tool } => Prepared::Answered(
                    ToolStatus::Error,
                    format!(
                        "Not run: '{control_tool}' takes over the answer and must be called alone, with no other tool calls in the same response. Call it by itself."
                    ),
                ),
                Plan::Run => self.prepare(call, offered, registry).await,
            };
            prepared.push(p);
            if self.cancel.is_cancelled() {
                break;
            }
        }
        if self.cancel.is_cancelled() {
            let unanswered: Vec<ToolCall> = calls.to_vec();
            self.calls_made -= calls.len() as u32;
            self.answer_unrun(&unanswered, ToolStatus::Cancelled, "Stopped by the user before the tool ran.");
            return false;
        }

        let mut results: Vec<Option<(ToolStatus, String, u64)>> = vec![None; calls.len()];
        let mut running = Vec::new();
        let mut control_call = None;
        for (i, (call, p)) in calls.iter().zip(prepared.iter()).enumerate() {
            match p {
                Prepared::Answered(status, text) => {
                    self.emit_result(call, *status, text, 0);
                    results[i] = Some((*status, text.clone(), 0));
                }
                Prepared::DryRun(text) => {
                    self.emit(ChatEvent::ToolStarted { id: call.id.clone() });
                    self.emit_result(call, ToolStatus::Ok, text, 0);
                    results[i] = Some((ToolStatus::Ok, text.clone(), 0));
                }
                Prepared::Duplicate(_) => {}
                Prepared::Run(args) => {
                    let Some(tool) = registry.get(&call.name) else { continue };
                    if tool.def().takes_control {
                        control_call = Some(i);
                    }
                    self.emit(ChatEvent::ToolStarted { id: call.id.clone() });
                    running.push(self.execute(i, call, Arc::clone(tool), args.clone()));
                }
            }
        }
        let mut running: futures::stream::FuturesUnordered<_> = running.into_iter().collect();
        self.sink.flush();
        loop {
            let next = tokio::select! {
                biased;
                () = self.cancel.cancelled() => break,
                next = running.next() => next,
            };
            let Some((i, status, text, ms)) = next else { break };
            self.emit_result(&calls[i], status, &text, ms);
            results[i] = Some((status, text, ms));
        }
        drop(running);

        // Duplicates get their original's result; cancelled calls get a cancellation result.
        for (i, p) in prepared.iter().enumerate() {
            if let Prepared::Duplicate(first) = p
                && let Some((status, text, _)) = results[*first].clone()
            {
                self.emit_result(&calls[i], status, &text, 0);
                results[i] = Some((status, text, 0));
            }
        }
        for (i, call) in calls.iter().enumerate() {
            if results[i].is_none() {
                let text = "Stopped by the user while the tool was running.".to_owned();
                self.emit_result(call, ToolStatus::Cancelled, &text, 0);
                results[i] = Some((ToolStatus::Cancelled, text, 0));
            }
        }
        // Text a control-taking tool streamed is part of the answer: later offsets must count it.
        self.turn_chars += self.answer_chars.swap(0, std::sync::atomic::Ordering::Relaxed);
        // A control-taking tool that failed hands the turn back to the model, which sees the error.
        let took_control = control_call.is_some_and(|i| matches!(results[i], Some((ToolStatus::Ok, _, _))));
        for (call, result) in calls.iter().zip(results) {
            let (status, content, _) = result.unwrap_or((ToolStatus::Cancelled, String::new(), 0));
            self.history.push(Message::Tool {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content,
                is_error: status.is_error(),
            });
        }
        took_control
    }

    fn emit_result(&self, call: &ToolCall, status: ToolStatus, output: &str, duration_ms: u64) {
        self.emit(ChatEvent::ToolResult { id: call.id.clone(), status, output: output.to_owned(), duration_ms });
    }

    /// Validates a call and asks for approval. Errors become results the model can act on.
    async fn prepare(&mut self, call: &ToolCall, offered: &[String], registry: &ToolRegistry) -> Prepared {
        let tool = match registry.get(&call.name) {
            Some(tool) if offered.contains(&call.name) => tool,
            _ => {
                let text = if offered.is_empty() {
                    format!("Unknown tool '{}'. No tools are available in this request.", call.name)
                } else {
                    format!("Unknown tool '{}'. Available tools: {}.", call.name, offered.join(", "))
                };
                return Prepared::Answered(ToolStatus::Error, text);
            }
        };
        let raw = call.arguments.trim();
        let args: serde_json::Value = if raw.is_empty() {
            serde_json::Value::Object(Default::default())
        } else {
            match serde_json::from_str(raw) {
                Ok(v) => v,
                Err(e) => {
                    return Prepared::Answered(
                        ToolStatus::Error,
                        format!(
                            "Invalid JSON arguments for '{}': {e}. Arguments received: {}. Send the arguments as one JSON object.",
                            call.name, call.arguments
                        ),
                    );
                }
            }
        };
        if let Err(problem) = registry.validate(&call.name, &args) {
            return Prepared::Answered(
                ToolStatus::Error,
                format!("Invalid arguments for '{}': {problem}. Fix the arguments and call it again.", call.name),
            );
        }
        let def = tool.def();
        let policy = policy::approval_for(def, &self.engine.config.tool_settings);
        match policy {
            ApprovalPolicy::Deny => {
                return Prepared::Answered(
                    ToolStatus::Denied,
                    format!("The user's settings do not allow '{}' to run. Answer without it.", call.name),
                );
            }
            ApprovalPolicy::Ask if !self.approved.contains(&call.name) && !self.options.dry_run => {
                let request = ApprovalRequest {
                    conversation_id: self.conversation_id.clone(),
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    source: def.source.clone(),
                    arguments: call.arguments.clone(),
                };
                // Asked before the event goes out, so an answer sent the moment the event
                // arrives finds the question registered.
                let pending = self.approver.decide(request);
                self.emit(ChatEvent::ApprovalRequested {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    source: def.source.clone(),
                    arguments: call.arguments.clone(),
                });
                self.sink.flush();
                let decision = tokio::select! {
                    d = pending => d,
                    () = self.cancel.cancelled() => ApprovalDecision::Deny,
                };
                let approved = decision != ApprovalDecision::Deny;
                self.emit(ChatEvent::ApprovalResolved { id: call.id.clone(), approved });
                match decision {
                    ApprovalDecision::Deny => {
                        return Prepared::Answered(
                            ToolStatus::Denied,
                            format!(
                                "The user denied this call to '{}'. Do not retry it; answer without it or ask the user.",
                                call.name
                            ),
                        );
                    }
                    ApprovalDecision::ForChat | ApprovalDecision::Always => {
                        self.approved.insert(call.name.clone());
                    }
                    ApprovalDecision::Once => {}
                }
            }
            _ => {}
        }
        if self.options.dry_run {
            if !self.dry_run_noticed {
                self.dry_run_noticed = true;
                self.emit(ChatEvent::Notice {
                    kind: NoticeKind::DryRun,
                    message: "Dry run: tools return their example output and do not run.".into(),
                });
            }
            let text = def.example_output.clone().unwrap_or_else(|| {
                format!("(dry run) '{}' would run with arguments {}; it has no example output.", call.name, args)
            });
            return Prepared::DryRun(text);
        }
        Prepared::Run(args)
    }

    /// Runs one call with its timeout, catching panics; never fails.
    fn execute(
        &self,
        index: usize,
        call: &ToolCall,
        tool: Arc<dyn crate::tool::Tool>,
        args: serde_json::Value,
    ) -> impl std::future::Future<Output = (usize, ToolStatus, String, u64)> + use<> {
        let timeout = tool.def().timeout.unwrap_or(self.engine.config.tool_timeout);
        let cancel = self.cancel.child_token();
        let ctx = ToolContext {
            call_id: call.id.clone(),
            conversation_id: self.conversation_id.clone(),
            secrets: Arc::clone(&self.engine.secrets),
            cancel: cancel.clone(),
            events: Arc::new(AnswerCounter { inner: Arc::clone(&self.sink), chars: Arc::clone(&self.answer_chars) }),
        };
        let name = call.name.clone();
        let span = info_span!("tool", name = %name, call = %call.id);
        async move {
            let started = Instant::now();
            // `call` itself may panic before it returns a future: call it inside the guarded future.
            let run = AssertUnwindSafe(async { tool.call(args, ctx).await }).catch_unwind();
            let result = tokio::time::timeout(timeout, run).await;
            let ms = started.elapsed().as_millis() as u64;
            let (status, text) = match result {
                Err(_) => {
                    cancel.cancel();
                    (
                        ToolStatus::Timeout,
                        format!("'{name}' did not finish within {} and was stopped.", seconds(timeout)),
                    )
                }
                Ok(Err(panic)) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into());
                    (ToolStatus::Error, format!("'{name}' crashed: {what}"))
                }
                Ok(Ok(Ok(output))) => (ToolStatus::Ok, output.text),
                Ok(Ok(Err(ToolError::Cancelled))) => {
                    (ToolStatus::Cancelled, "Stopped by the user while the tool was running.".into())
                }
                Ok(Ok(Err(e @ ToolError::InvalidArguments(_)))) => (ToolStatus::Error, format!("'{name}' failed: {e}")),
                Ok(Ok(Err(e))) => (ToolStatus::Error, e.to_string()),
            };
            debug!(status = status.as_str(), ms, "tool finished");
            (index, status, text, ms)
        }
        .instrument(span)
    }
}

/// "2 s", "1.5 s", "0.1 s": durations as a person reads them.
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 { format!("{s:.0} s") } else { format!("{:.1} s", s) }
}
