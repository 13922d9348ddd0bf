//! The driver of the tool loop: `Engine::run_turn` performs what the [`Machine`] decides.
//!
//! Every decision of a turn lives in [`machine`](crate::machine) (and the pure [`policy`],
//! [`round`] and [`names`] it uses); this module only does the I/O: it opens provider streams,
//! sleeps before retries, asks the [`Approver`], runs tools concurrently with their timeouts, panic
//! capture and child cancellation tokens, and hands what happened back to the machine as an
//! [`Input`]. It never lets a failure escape as anything but an event.
//!
//! The driver keeps no state between turns and `run_turn` takes `&self`: a tool (an agent) may
//! run a child turn on the same engine, with its own sink, from inside its call.
//!
//! [`policy`]: crate::policy
//! [`round`]: crate::round
//! [`names`]: crate::names

use crate::budget::{BudgetChoice, BudgetMeter};
use crate::error::{ErrorKind, ProviderError};
use crate::event::{ChatEvent, EventSink};
use crate::machine::{Effect, Input, Machine, Summary, ToolEnd, ToolFinished, ToolRun};
use crate::provider::{Provider, ProviderEvent, ProviderRequest, ProviderStream};
use crate::registry::ToolRegistry;
use crate::tool::{Redact, Secrets, ToolContext};
use crate::types::{Usage, char_len};
use crate::vocab::ToolError;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, debug, info_span, warn};

pub use crate::approval::{ApprovalDecision, ApprovalRequest, Approver, FixedApprover};
pub use crate::config::{EngineConfig, TurnInput, TurnOptions, TurnOutcome};

/// The tool loop over a registry and the person's secrets.
pub struct Engine {
    config: EngineConfig,
    registry: Arc<ToolRegistry>,
    secrets: Arc<dyn Secrets>,
    redact: Option<Arc<dyn Redact>>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").field("config", &self.config).field("registry", &self.registry).finish()
    }
}

impl Engine {
    /// An engine over `registry`, giving tools `secrets`.
    pub fn new(config: EngineConfig, registry: Arc<ToolRegistry>, secrets: Arc<dyn Secrets>) -> Self {
        Self { config, registry, secrets, redact: None }
    }

    /// Masks known secrets in every tool result and tool error before the model, the events or
    /// the store see it: a tool whose server quotes a key back must not hand it to the model's
    /// provider, another origin.
    #[must_use]
    pub fn with_redactor(mut self, redact: Arc<dyn Redact>) -> Self {
        self.redact = Some(redact);
        self
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
        mut input: TurnInput,
        sink: Arc<dyn EventSink>,
        approver: Arc<dyn Approver>,
        cancel: CancellationToken,
    ) -> TurnOutcome {
        // A sub-agent's turn counts toward its caller's meter; a person's turn starts its own.
        let (budget, chat) = (input.options.budget, input.options.chat_budget);
        let meter =
            Arc::clone(input.options.meter.get_or_insert_with(|| Arc::new(BudgetMeter::new(budget).with_chat(chat))));
        let span = info_span!("turn", conversation = %input.conversation_id, message = %input.message_id, model = %input.model);
        let summariser = input.options.summariser_provider.take().map(|p| p.0);
        let sampler = input.options.sampler.take().map(|s| s.0);
        let driver = Driver {
            engine: self,
            provider,
            summariser,
            sink,
            approver: approver.as_ref(),
            shared_approver: Arc::clone(&approver),
            cancel,
            conversation_id: input.conversation_id.clone(),
            meter,
            sampler,
        };
        driver.run(input).instrument(span).await
    }
}

/// What the driver waits on between inputs; each effect that starts something replaces it.
enum Waiting<'a> {
    Nothing,
    Stream(Box<Streaming>),
    Retry(Duration),
    Summary(BoxFuture<'static, Input>),
    Approval(BoxFuture<'a, ApprovalDecision>),
    Budget(BoxFuture<'a, BudgetChoice>),
    Tools(FuturesUnordered<BoxFuture<'static, Input>>),
}

struct Streaming {
    stream: ProviderStream,
    deadline: tokio::time::Instant,
    tick: tokio::time::Interval,
}

struct Driver<'a> {
    engine: &'a Engine,
    provider: &'a dyn Provider,
    /// The provider summaries are written on when it is not the turn's (another profile).
    summariser: Option<Arc<dyn Provider>>,
    sink: Arc<dyn EventSink>,
    approver: &'a dyn Approver,
    /// The same approver, for tools that ask the person themselves (a sub-agent's own calls).
    shared_approver: Arc<dyn Approver>,
    cancel: CancellationToken,
    conversation_id: String,
    /// The budget meter the turn counts toward; tools (sub-agents) count toward it too.
    meter: Arc<BudgetMeter>,
    /// Runs the completions tool servers ask for.
    sampler: Option<Arc<dyn crate::tool::Sampler>>,
}

impl<'a> Driver<'a> {
    async fn run(&self, input: TurnInput) -> TurnOutcome {
        // The machine takes no randomness of its own: its retry jitter is seeded here.
        let seed = std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), Instant::now());
        let mut machine = Machine::new(&self.engine.config, &self.engine.registry, input)
            .with_retry_jitter(seed | 1)
            .with_tool_limits(self.provider.tool_limits());
        // Reused for the whole turn: a streamed token costs no allocation here.
        let mut effects = Vec::with_capacity(8);
        let mut waiting = Waiting::Nothing;
        // The budget's clock: the machine reads none, it is told the time before every input.
        let meter = Arc::clone(&self.meter);
        machine.set_elapsed(meter.elapsed());
        machine.handle(Input::Start, &mut effects);
        loop {
            for effect in effects.drain(..) {
                match effect {
                    Effect::Emit(event) => self.sink.emit(event),
                    Effect::Flush => self.sink.flush(),
                    Effect::Tick => self.sink.tick(),
                    Effect::StartRequest { request, attempt } => {
                        debug!(attempt, "request");
                        waiting = Waiting::Stream(Box::new(self.open(request)));
                    }
                    Effect::WaitRetry { delay } => waiting = Waiting::Retry(delay),
                    Effect::Summarise { request } => waiting = Waiting::Summary(self.summarise(request)),
                    // The question is registered before the effects after it announce it.
                    Effect::Ask(request) => waiting = Waiting::Approval(self.approver.decide(request)),
                    Effect::AskBudget(pause) => waiting = Waiting::Budget(self.approver.budget(pause)),
                    Effect::RunTools(runs) => {
                        waiting = Waiting::Tools(runs.into_iter().map(|run| self.execute(run)).collect());
                    }
                    // Dropping the futures stops the calls; their tokens are children of `cancel`.
                    Effect::CancelTools => waiting = Waiting::Nothing,
                    Effect::Finish(outcome) => {
                        if let Some(error) = &outcome.error {
                            warn!(kind = %error.kind, "turn failed: {}", error.message);
                        }
                        return outcome;
                    }
                }
            }
            let input = self.next_input(&mut waiting).await;
            machine.set_elapsed(meter.elapsed());
            machine.handle(input, &mut effects);
        }
    }

    fn open(&self, request: ProviderRequest) -> Streaming {
        let now = tokio::time::Instant::now();
        let second = Duration::from_secs(1);
        Streaming {
            stream: self.provider.stream(request),
            deadline: now + self.engine.config.idle_timeout,
            tick: tokio::time::interval_at(now + second, second),
        }
    }

    /// Waits for what the machine waits for; stopping the turn wins over everything else.
    async fn next_input(&self, waiting: &mut Waiting<'a>) -> Input {
        match waiting {
            Waiting::Stream(s) => loop {
                if self.cancel.is_cancelled() {
                    return Input::Cancel;
                }
                let idle = self.engine.config.idle_timeout;
                // Events already buffered are handled without waiting; sinks that batch output are
                // told to flush only when the loop is about to wait for the network.
                if let Some(next) = s.stream.next().now_or_never() {
                    s.deadline = tokio::time::Instant::now() + idle;
                    return next.map_or(Input::StreamEnded, Input::Stream);
                }
                self.sink.flush();
                tokio::select! {
                    biased;
                    () = self.cancel.cancelled() => return Input::Cancel,
                    next = s.stream.next() => {
                        s.deadline = tokio::time::Instant::now() + idle;
                        return next.map_or(Input::StreamEnded, Input::Stream);
                    }
                    _ = s.tick.tick() => self.sink.tick(),
                    () = tokio::time::sleep_until(s.deadline) => return Input::IdleTimeout,
                }
            },
            Waiting::Retry(delay) => tokio::select! {
                () = tokio::time::sleep(*delay) => Input::RetryElapsed,
                () = self.cancel.cancelled() => Input::Cancel,
            },
            Waiting::Summary(pending) => tokio::select! {
                biased;
                () = self.cancel.cancelled() => Input::Cancel,
                summary = pending => summary,
            },
            Waiting::Approval(pending) => tokio::select! {
                decision = pending => Input::Approval(decision),
                () = self.cancel.cancelled() => Input::Cancel,
            },
            Waiting::Budget(pending) => tokio::select! {
                choice = pending => Input::Budget(choice),
                () = self.cancel.cancelled() => Input::Cancel,
            },
            Waiting::Tools(running) => tokio::select! {
                biased;
                () = self.cancel.cancelled() => Input::Cancel,
                next = running.next() => next.unwrap_or_else(|| {
                    warn!("the tool loop waits for tools but none runs; ending the turn");
                    Input::Cancel
                }),
            },
            Waiting::Nothing => {
                // The machine always starts something unless it finished; if it ever did not,
                // ending the turn beats waiting forever.
                warn!("the tool loop waits for nothing; ending the turn");
                Input::Cancel
            }
        }
    }

    /// Streams the summariser's request and collects its text (bounded by the idle timeout).
    fn summarise(&self, request: ProviderRequest) -> BoxFuture<'static, Input> {
        let mut stream = match &self.summariser {
            Some(provider) => provider.stream(request),
            None => self.provider.stream(request),
        };
        let idle = self.engine.config.idle_timeout;
        async move {
            let mut summary = Summary { text: String::new(), usage: Usage::default() };
            loop {
                match tokio::time::timeout(idle, stream.next()).await {
                    Err(_) => {
                        let message = "The summariser sent nothing for too long.";
                        return Input::Summarised(Err(ProviderError::new(ErrorKind::Timeout, message)));
                    }
                    Ok(None) | Ok(Some(Ok(ProviderEvent::Finish { .. }))) => break,
                    Ok(Some(Ok(ProviderEvent::TextDelta(text)))) => summary.text.push_str(&text),
                    Ok(Some(Ok(ProviderEvent::Usage(usage)))) => summary.usage = usage,
                    Ok(Some(Ok(_))) => {}
                    Ok(Some(Err(e))) => return Input::Summarised(Err(e)),
                }
            }
            Input::Summarised(Ok(summary))
        }
        .boxed()
    }

    /// Runs one call with its timeout, catching panics; never fails.
    fn execute(&self, run: ToolRun) -> BoxFuture<'static, Input> {
        let ToolRun { index, call, args, timeout, takes_control, exposure } = run;
        let tool = self.engine.registry.get(&call.name).cloned();
        let cancel = self.cancel.child_token();
        let counter = Arc::new(ToolEvents {
            inner: Arc::clone(&self.sink),
            chars: AtomicUsize::new(0),
            usage: std::sync::Mutex::new(Usage::default()),
            cost: std::sync::Mutex::new((0.0, false)),
        });
        let redact = self.engine.redact.clone();
        let ctx = ToolContext {
            call_id: call.id.clone(),
            conversation_id: self.conversation_id.clone(),
            secrets: Arc::clone(&self.engine.secrets),
            cancel: cancel.clone(),
            events: Arc::clone(&counter) as Arc<dyn EventSink>,
            approver: Arc::clone(&self.shared_approver),
            exposure,
            meter: Arc::clone(&self.meter),
            sampler: self.sampler.clone(),
        };
        let span = info_span!("tool", name = %call.name, call = %call.id, takes_control);
        async move {
            let started = Instant::now();
            let result = match tool {
                // `call` itself may panic before it returns a future: call it inside the guarded future.
                Some(tool) => {
                    let run = AssertUnwindSafe(async { tool.call(args, ctx).await }).catch_unwind();
                    tokio::time::timeout(timeout, run).await
                }
                None => Ok(Ok(Err(ToolError::Failed(format!("Unknown tool '{}'.", call.name))))),
            };
            let end = match result {
                Err(_) => {
                    cancel.cancel();
                    ToolEnd::TimedOut
                }
                Ok(Err(panic)) => ToolEnd::Panicked(
                    panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_owned())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into()),
                ),
                Ok(Ok(returned)) => ToolEnd::Returned(returned),
            };
            let end = match &redact {
                Some(r) => redact_end(r.as_ref(), end),
                None => end,
            };
            let duration_ms = started.elapsed().as_millis() as u64;
            debug!(ok = matches!(end, ToolEnd::Returned(Ok(_))), duration_ms, "tool finished");
            let answer_chars = counter.chars.load(Ordering::Relaxed);
            let (usage, cost_usd) = counter.spent();
            Input::ToolFinished(ToolFinished { index, end, duration_ms, answer_chars, usage, cost_usd })
        }
        .instrument(span)
        .boxed()
    }
}

/// Forwards a tool's events, counting the answer text a control-taking tool streams and the
/// usage of the sub-agent turns it ran: each child's `done`, nested directly under this call,
/// carries its whole turn's usage (its own children included), and the child's `usage` events
/// nested directly under it its costs (its requests', and its own agent calls' totals).
struct ToolEvents {
    inner: Arc<dyn EventSink>,
    chars: AtomicUsize,
    usage: std::sync::Mutex<Usage>,
    /// Dollars spent by the children so far, and whether any of it is of unknown price.
    cost: std::sync::Mutex<(f64, bool)>,
}

impl ToolEvents {
    /// The children's usage, and their cost (`None` when any part of it is unknown).
    fn spent(&self) -> (Usage, Option<f64>) {
        let usage = *self.usage.lock().unwrap_or_else(|p| p.into_inner());
        let (cost, unknown) = *self.cost.lock().unwrap_or_else(|p| p.into_inner());
        (usage, (!unknown).then_some(cost))
    }
}

impl EventSink for ToolEvents {
    fn emit(&self, event: ChatEvent) {
        match &event {
            ChatEvent::TextDelta { text } => {
                self.chars.fetch_add(char_len(text), Ordering::Relaxed);
            }
            ChatEvent::ToolProgress { event: Some(nested), .. } => match nested.as_ref() {
                ChatEvent::Done { usage, .. } => self.usage.lock().unwrap_or_else(|p| p.into_inner()).add(usage),
                ChatEvent::Usage { cost_usd, .. } => {
                    let mut cost = self.cost.lock().unwrap_or_else(|p| p.into_inner());
                    match cost_usd {
                        Some(c) => cost.0 += c,
                        None => cost.1 = true,
                    }
                }
                _ => {}
            },
            _ => {}
        }
        self.inner.emit(event);
    }

    fn flush(&self) {
        self.inner.flush();
    }
}

/// The tool's own text (result, error, panic message) with known secrets masked.
fn redact_end(r: &dyn Redact, end: ToolEnd) -> ToolEnd {
    let mask = |text: String| match r.redact(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(masked) => masked,
    };
    match end {
        ToolEnd::Returned(Ok(mut output)) => {
            output.text = mask(output.text);
            ToolEnd::Returned(Ok(output))
        }
        ToolEnd::Returned(Err(ToolError::Failed(m))) => ToolEnd::Returned(Err(ToolError::Failed(mask(m)))),
        ToolEnd::Returned(Err(ToolError::MissingSecret(m))) => {
            ToolEnd::Returned(Err(ToolError::MissingSecret(mask(m))))
        }
        ToolEnd::Returned(Err(ToolError::InvalidArguments(m))) => {
            ToolEnd::Returned(Err(ToolError::InvalidArguments(mask(m))))
        }
        ToolEnd::Panicked(what) => ToolEnd::Panicked(mask(what)),
        other => other,
    }
}
