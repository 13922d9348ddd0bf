//! Test support for driving the tool loop without any I/O: a scripted provider, test tools with
//! invocation counters, a recording approver, a turn runner and small event/request accessors.
//!
//! Every test binary compiles this module on its own and uses a different part of it.
#![allow(dead_code)]

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::event::VecSink;
use switchboard_core::provider::StopReason;
use switchboard_core::turn::FixedApprover;
use switchboard_core::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, CancellationToken, ChatEvent, Engine, EngineConfig,
    ErrorKind, NoticeKind, Provider, ProviderError, ProviderEvent, ProviderRequest, ProviderStream, Tool, ToolCall,
    ToolContext, ToolDef, ToolError, ToolOutput, ToolRegistry, ToolStatus, TurnInput, TurnOptions, TurnOutcome, Usage,
};
use switchboard_core::{Message, event::FinishReason, tool::NoSecrets};

// ---------------------------------------------------------------------------------------------
// Scripted provider
// ---------------------------------------------------------------------------------------------

/// One scripted event of a response.
pub type Item = Result<ProviderEvent, ProviderError>;

/// Builds a response from the request it answers.
pub type Respond = Box<dyn Fn(&ProviderRequest) -> Vec<Item> + Send + Sync>;

/// One scripted model response.
pub enum Response {
    /// These events, then the stream ends.
    Events(Vec<Item>),
    /// These events, then the stream never yields again.
    ThenStall(Vec<Item>),
    /// Events computed from the request (to call whatever name the request offered).
    Dynamic(Respond),
}

/// A provider that answers requests from a queue of scripted responses and records every request.
/// When the script runs out it answers with a non-retryable `Internal` error, so an unexpected
/// extra request shows up in the test instead of hanging it.
#[derive(Default)]
pub struct ScriptedProvider {
    script: Mutex<VecDeque<Response>>,
    requests: Mutex<Vec<ProviderRequest>>,
}

impl ScriptedProvider {
    pub fn new(script: impl IntoIterator<Item = Response>) -> Self {
        Self { script: Mutex::new(script.into_iter().collect()), requests: Mutex::default() }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ProviderRequest> {
        self.requests.lock().unwrap().clone()
    }

    /// Responses not consumed yet.
    pub fn remaining(&self) -> usize {
        self.script.lock().unwrap().len()
    }
}

impl Provider for ScriptedProvider {
    fn kind(&self) -> &'static str {
        "scripted"
    }

    fn stream(&self, request: ProviderRequest) -> ProviderStream {
        let next = self.script.lock().unwrap().pop_front();
        let stream = match next {
            Some(Response::Events(items)) => futures::stream::iter(items).boxed(),
            Some(Response::ThenStall(items)) => futures::stream::iter(items).chain(futures::stream::pending()).boxed(),
            Some(Response::Dynamic(respond)) => futures::stream::iter(respond(&request)).boxed(),
            None => futures::stream::iter(vec![Err(ProviderError::new(
                ErrorKind::Internal,
                "scripted provider: the script is exhausted",
            ))])
            .boxed(),
        };
        self.requests.lock().unwrap().push(request);
        stream
    }
}

/// Usage every scripted response reports (distinct values per field so sums are checkable).
pub const USAGE: Usage =
    Usage { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 2, cached_tokens: 1, cache_write_tokens: 0 };

/// `n` times [`USAGE`].
pub fn usage_times(n: u64) -> Usage {
    Usage {
        prompt_tokens: USAGE.prompt_tokens * n,
        completion_tokens: USAGE.completion_tokens * n,
        reasoning_tokens: USAGE.reasoning_tokens * n,
        cached_tokens: USAGE.cached_tokens * n,
        cache_write_tokens: 0,
    }
}

pub fn finish(reason: StopReason) -> Item {
    Ok(ProviderEvent::Finish { reason, response_id: None })
}

pub fn delta(text: &str) -> Item {
    Ok(ProviderEvent::TextDelta(text.to_owned()))
}

pub fn tool_call(id: &str, name: &str, args: &str, text_chars_before: usize) -> Item {
    Ok(ProviderEvent::ToolCall {
        call: ToolCall { id: id.into(), name: name.into(), arguments: args.into() },
        text_chars_before,
    })
}

/// A plain answer: the text, usage, `Finish(Stop)`.
pub fn text(answer: &str) -> Response {
    Response::Events(vec![delta(answer), Ok(ProviderEvent::Usage(USAGE)), finish(StopReason::Stop)])
}

/// Optional text, then these calls (`(id, name, args)`), usage, `Finish(ToolCalls)`.
pub fn calls(text_before: &str, calls: &[(&str, &str, &str)]) -> Response {
    let mut items = Vec::new();
    if !text_before.is_empty() {
        items.push(delta(text_before));
    }
    let chars = text_before.chars().count();
    for (id, name, args) in calls {
        items.push(tool_call(id, name, args, chars));
    }
    items.push(Ok(ProviderEvent::Usage(USAGE)));
    items.push(finish(StopReason::ToolCalls));
    Response::Events(items)
}

/// A response that never yields anything.
pub fn stall() -> Response {
    Response::ThenStall(Vec::new())
}

/// A response that fails at once with `error`.
pub fn fail(error: ProviderError) -> Response {
    Response::Events(vec![Err(error)])
}

/// Raw events.
pub fn events(items: Vec<Item>) -> Response {
    Response::Events(items)
}

// ---------------------------------------------------------------------------------------------
// Test tools
// ---------------------------------------------------------------------------------------------

type RunFn = Arc<dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + Sync>;

/// A tool defined by a closure, counting its invocations.
pub struct TestTool {
    pub def: ToolDef,
    invocations: Arc<AtomicUsize>,
    run: RunFn,
    /// Panic in `call` itself, before a future exists.
    panic_in_call: bool,
}

impl TestTool {
    pub fn new<F, Fut>(def: ToolDef, run: F) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        Self {
            def,
            invocations: Arc::default(),
            run: Arc::new(move |args, ctx| run(args, ctx).boxed()),
            panic_in_call: false,
        }
    }

    /// Changes the definition (prompt, approval, ...).
    pub fn with(mut self, change: impl FnOnce(&mut ToolDef)) -> Self {
        change(&mut self.def);
        self
    }

    pub fn invocations(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.invocations)
    }
}

impl Tool for TestTool {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        self.invocations.fetch_add(1, Ordering::SeqCst);
        assert!(!self.panic_in_call, "panicked before returning a future");
        (self.run)(args, ctx)
    }
}

fn object_schema(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// Returns its `text` argument.
pub fn echo() -> TestTool {
    let def =
        ToolDef::new("echo", "Repeats the text.", object_schema(json!({ "text": { "type": "string" } }), &["text"]));
    TestTool::new(def, |args, _ctx| async move { Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())) })
        .with(|d| d.example_output = Some("example echo output".into()))
}

/// Sleeps `ms` milliseconds (tokio time), stopping early when cancelled.
pub fn slow() -> TestTool {
    let def =
        ToolDef::new("slow", "Sleeps.", object_schema(json!({ "ms": { "type": "integer", "minimum": 0 } }), &["ms"]));
    TestTool::new(def, |args, ctx| async move {
        let ms = args["ms"].as_u64().unwrap_or(0);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(ToolOutput::text(format!("slept {ms}"))),
            () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        }
    })
}

/// Never finishes.
pub fn hang() -> TestTool {
    let def = ToolDef::new("hang", "Never returns.", object_schema(json!({}), &[]));
    TestTool::new(def, |_args, _ctx| futures::future::pending())
}

/// Panics while running.
pub fn panics() -> TestTool {
    let def = ToolDef::new("panics", "Panics.", object_schema(json!({}), &[]));
    TestTool::new(def, |_args, _ctx| async move {
        if true {
            panic!("tool exploded");
        }
        Ok(ToolOutput::text("unreachable"))
    })
}

/// Panics in `Tool::call` itself, before returning its future.
pub fn panics_early() -> TestTool {
    let def = ToolDef::new("panics_early", "Panics at once.", object_schema(json!({}), &[]));
    let mut tool = TestTool::new(def, |_args, _ctx| async move { Ok(ToolOutput::text("unreachable")) });
    tool.panic_in_call = true;
    tool
}

/// Fails with `ToolError::Failed`.
pub fn fails() -> TestTool {
    let def = ToolDef::new("fails", "Fails.", object_schema(json!({}), &[]));
    TestTool::new(def, |_args, _ctx| async move { Err(ToolError::Failed("disk on fire".into())) })
}

/// Needs approval (`ask`).
pub fn ask_tool() -> TestTool {
    let def =
        ToolDef::new("ask_tool", "Has side effects.", object_schema(json!({ "path": { "type": "string" } }), &[]));
    TestTool::new(def, |_args, _ctx| async move { Ok(ToolOutput::text("side effect done")) }).with(|d| {
        d.approval = ApprovalPolicy::Ask;
        d.example_output = Some("example ask output".into());
    })
}

/// Exclusive: offered only when forced, then alone.
pub fn solo() -> TestTool {
    let def = ToolDef::new("solo", "Exclusive.", object_schema(json!({}), &[]));
    TestTool::new(def, |_args, _ctx| async move { Ok(ToolOutput::text("solo done")) }).with(|d| d.exclusive = true)
}

/// Text a `research` run streams as the answer.
pub const RESEARCH_ANSWER: [&str; 2] = ["Research ", "report 📄."];

/// Takes control: streams its answer through `ctx.answer` and returns.
pub fn research() -> TestTool {
    let def = ToolDef::new("research", "Deep research.", object_schema(json!({}), &[]));
    TestTool::new(def, |_args, ctx| async move {
        for part in RESEARCH_ANSWER {
            ctx.answer(part);
        }
        Ok(ToolOutput::text("research finished"))
    })
    .with(|d| d.takes_control = true)
}

/// Has a required integer field `n`.
pub fn count() -> TestTool {
    let def = ToolDef::new("count", "Counts to n.", object_schema(json!({ "n": { "type": "integer" } }), &["n"]));
    TestTool::new(def, |args, _ctx| async move { Ok(ToolOutput::text(format!("counted to {}", args["n"]))) })
}

/// Every test tool.
pub fn all_tools() -> Vec<TestTool> {
    vec![echo(), slow(), hang(), panics(), panics_early(), fails(), ask_tool(), solo(), research(), count()]
}

/// A registry of test tools with their invocation counters.
pub struct Kit {
    pub registry: Arc<ToolRegistry>,
    counters: BTreeMap<String, Arc<AtomicUsize>>,
}

impl Kit {
    pub fn new(tools: impl IntoIterator<Item = TestTool>) -> Self {
        let mut registry = ToolRegistry::new();
        let mut counters = BTreeMap::new();
        for tool in tools {
            counters.insert(tool.def.name.clone(), tool.invocations());
            registry.register(Arc::new(tool)).expect("test tool registers");
        }
        Self { registry: Arc::new(registry), counters }
    }

    /// Every test tool.
    pub fn standard() -> Self {
        Self::new(all_tools())
    }

    /// How often the tool named `name` was invoked.
    pub fn count(&self, name: &str) -> usize {
        self.counters[name].load(Ordering::SeqCst)
    }

    /// Invocations over all tools.
    pub fn total(&self) -> usize {
        self.counters.values().map(|c| c.load(Ordering::SeqCst)).sum()
    }
}

// ---------------------------------------------------------------------------------------------
// Approvers
// ---------------------------------------------------------------------------------------------

/// Answers every request with one decision and records the requests.
pub struct RecordingApprover {
    decision: ApprovalDecision,
    requests: Mutex<Vec<ApprovalRequest>>,
}

impl RecordingApprover {
    pub fn new(decision: ApprovalDecision) -> Arc<Self> {
        Arc::new(Self { decision, requests: Mutex::default() })
    }

    pub fn requests(&self) -> Vec<ApprovalRequest> {
        self.requests.lock().unwrap().clone()
    }
}

impl Approver for RecordingApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        self.requests.lock().unwrap().push(request);
        let d = self.decision;
        async move { d }.boxed()
    }
}

/// Never answers (the person walked away).
pub struct SilentApprover;

impl Approver for SilentApprover {
    fn decide(&self, _request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        futures::future::pending().boxed()
    }
}

// ---------------------------------------------------------------------------------------------
// Running a turn
// ---------------------------------------------------------------------------------------------

pub const CONVERSATION: &str = "conv-1";
pub const USER_MESSAGE: &str = "msg-user";
pub const MESSAGE: &str = "msg-assistant";
pub const MODEL: &str = "test-model";
pub const USER_TEXT: &str = "What now?";

/// A loop config for tests: short delays so real-time tests stay fast too.
pub fn test_config() -> EngineConfig {
    EngineConfig {
        retry_base_delay: Duration::from_millis(10),
        retry_max_delay: Duration::from_millis(100),
        tool_timeout: Duration::from_secs(60),
        idle_timeout: Duration::from_secs(60),
        ..EngineConfig::default()
    }
}

/// Everything a turn is run with; tests change the public fields and call [`Harness::run`].
pub struct Harness {
    pub config: EngineConfig,
    pub registry: Arc<ToolRegistry>,
    pub options: TurnOptions,
    pub system_prompt: Option<String>,
    pub history: Vec<Message>,
    pub approver: Arc<dyn Approver>,
    pub cancel: CancellationToken,
}

/// What a turn produced.
pub struct Ran {
    pub outcome: TurnOutcome,
    pub events: Vec<ChatEvent>,
    pub requests: Vec<ProviderRequest>,
}

impl Harness {
    pub fn new(kit: &Kit) -> Self {
        Self {
            config: test_config(),
            registry: Arc::clone(&kit.registry),
            options: TurnOptions::default(),
            system_prompt: None,
            history: vec![Message::user(USER_TEXT)],
            approver: Arc::new(FixedApprover(ApprovalDecision::Deny)),
            cancel: CancellationToken::new(),
        }
    }

    pub fn input(&self) -> TurnInput {
        TurnInput {
            conversation_id: CONVERSATION.into(),
            user_message_id: USER_MESSAGE.into(),
            message_id: MESSAGE.into(),
            provider_name: "scripted-profile".into(),
            model: MODEL.into(),
            system_prompt: self.system_prompt.clone(),
            history: self.history.clone(),
            options: self.options.clone(),
        }
    }

    pub async fn run(&self, provider: &ScriptedProvider) -> Ran {
        let engine = Engine::new(self.config.clone(), Arc::clone(&self.registry), Arc::new(NoSecrets));
        let sink = Arc::new(VecSink::default());
        let outcome = engine
            .run_turn(provider, self.input(), sink.clone(), Arc::clone(&self.approver), self.cancel.clone())
            .await;
        let ran = Ran { outcome, events: sink.events(), requests: provider.requests() };
        ran.assert_well_formed();
        ran
    }
}

/// Cancels `token` after `ms` milliseconds of tokio time.
pub fn cancel_after(token: &CancellationToken, ms: u64) {
    let token = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        token.cancel();
    });
}

// ---------------------------------------------------------------------------------------------
// Reading events and requests
// ---------------------------------------------------------------------------------------------

/// A tool result event, flattened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResultEv {
    pub id: String,
    pub status: ToolStatus,
    pub output: String,
}

/// A tool message of a request, flattened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolMsg {
    pub call_id: String,
    pub name: String,
    pub content: String,
    pub is_error: bool,
}

impl Ran {
    /// Invariants of every turn: `Started` first, `Done` last and once, agreeing with the outcome;
    /// every `ToolCall` id gets exactly one `ToolResult`.
    pub fn assert_well_formed(&self) {
        assert!(
            matches!(self.events.first(), Some(ChatEvent::Started { .. })),
            "first event must be Started: {:#?}",
            self.events
        );
        let dones = self.events.iter().filter(|e| matches!(e, ChatEvent::Done { .. })).count();
        assert_eq!(dones, 1, "exactly one Done: {:#?}", self.events);
        let Some(ChatEvent::Done { finish_reason, usage, tool_calls_made }) = self.events.last() else {
            panic!("last event must be Done: {:#?}", self.events);
        };
        assert_eq!(*finish_reason, self.outcome.finish_reason);
        assert_eq!(*usage, self.outcome.usage);
        assert_eq!(*tool_calls_made, self.outcome.tool_calls_made);
        let call_ids: Vec<String> = self.tool_calls().into_iter().map(|c| c.0).collect();
        let mut result_ids: Vec<String> = self.results().into_iter().map(|r| r.id).collect();
        let mut sorted_calls = call_ids.clone();
        sorted_calls.sort();
        result_ids.sort();
        assert_eq!(sorted_calls, result_ids, "every call id gets exactly one result: {:#?}", self.events);
    }

    pub fn finish_reason(&self) -> FinishReason {
        self.outcome.finish_reason
    }

    /// The visible answer text.
    pub fn text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// `(id, name, text_offset, iteration, index)` of every ToolCall event.
    pub fn tool_calls(&self) -> Vec<(String, String, usize, u32, u32)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::ToolCall { id, name, text_offset, iteration, index, .. } => {
                    Some((id.clone(), name.clone(), *text_offset, *iteration, *index))
                }
                _ => None,
            })
            .collect()
    }

    pub fn results(&self) -> Vec<ResultEv> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::ToolResult { id, status, output, .. } => {
                    Some(ResultEv { id: id.clone(), status: *status, output: output.clone() })
                }
                _ => None,
            })
            .collect()
    }

    /// The result event of call `id`.
    pub fn result(&self, id: &str) -> ResultEv {
        let found: Vec<ResultEv> = self.results().into_iter().filter(|r| r.id == id).collect();
        assert_eq!(found.len(), 1, "one result for {id}: {:#?}", self.events);
        found[0].clone()
    }

    pub fn notices(&self, kind: NoticeKind) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::Notice { kind: k, message } if *k == kind => Some(message.clone()),
                _ => None,
            })
            .collect()
    }

    /// `(kind, retryable)` of every Error event.
    pub fn errors(&self) -> Vec<(ErrorKind, bool)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::Error { kind, retryable, .. } => Some((*kind, *retryable)),
                _ => None,
            })
            .collect()
    }

    /// Position of the first event matching `pred`.
    pub fn position(&self, pred: impl Fn(&ChatEvent) -> bool) -> Option<usize> {
        self.events.iter().position(pred)
    }
}

/// Provider-side names of the tools a request offers.
pub fn tool_names(request: &ProviderRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

/// The tool messages of a request's history, in order.
pub fn tool_messages(request: &ProviderRequest) -> Vec<ToolMsg> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, name, content, is_error, .. } => Some(ToolMsg {
                call_id: call_id.clone(),
                name: name.clone(),
                content: content.clone(),
                is_error: *is_error,
            }),
            _ => None,
        })
        .collect()
}

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, written out independently of the crate's own check.
pub fn matches_provider_name_pattern(name: &str) -> bool {
    let bytes = name.as_bytes();
    let Some((first, rest)) = bytes.split_first() else {
        return false;
    };
    (first.is_ascii_alphabetic() || *first == b'_')
        && rest.len() <= 63
        && rest.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
}

pub fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}
