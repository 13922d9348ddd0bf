//! The tool loop's state machine driven input by input: no async, no clock, no I/O. Each test
//! feeds inputs and asserts the exact effects (events included) that come out.

use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::machine::{Effect, Input, Machine, Phase, ToolEnd, ToolFinished, ToolRun};
use switchboard_core::provider::{StopReason, ToolChoice};
use switchboard_core::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Budget, BudgetChoice, BudgetKind, BudgetMeter, BudgetScope,
    ChatEvent, EngineConfig, ErrorKind, FinishReason, GenerationOptions, Message, NoticeKind, ProviderError,
    ProviderEvent, ProviderState, Tool, ToolCall, ToolContext, ToolDef, ToolError, ToolOutput, ToolRegistry,
    ToolSource, ToolStatus, TurnInput, TurnOptions, TurnOutcome, Usage, spend::Prices,
};

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

/// A tool the machine can read; it is never called here.
struct Fake(ToolDef);

impl Tool for Fake {
    fn def(&self) -> &ToolDef {
        &self.0
    }

    fn call(&self, _args: Value, _ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async { Ok(ToolOutput::text("ran")) })
    }

    /// `ask` says what it would do, as a command tool does.
    fn preview(&self, args: &Value) -> Option<String> {
        (self.0.name == "ask").then(|| format!("ask --text {}", args["text"].as_str().unwrap_or("?")))
    }
}

fn def(name: &str, change: impl FnOnce(&mut ToolDef)) -> ToolDef {
    let schema = json!({ "type": "object", "properties": { "text": { "type": "string" } } });
    let mut def = ToolDef::new(name, format!("The {name} tool."), schema);
    change(&mut def);
    def
}

/// `echo` (has an example output), `ask` (asks), `research` (takes control), `slow` (2 s timeout).
fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let defs = [
        def("echo", |d| d.example_output = Some("example echo".into())),
        def("ask", |d| d.approval = ApprovalPolicy::Ask),
        def("research", |d| d.takes_control = true),
        def("slow", |d| d.timeout = Some(Duration::from_secs(2))),
    ];
    for d in defs {
        registry.register(Arc::new(Fake(d))).unwrap();
    }
    registry
}

fn config() -> EngineConfig {
    EngineConfig {
        retry_base_delay: Duration::from_secs(1),
        retry_max_delay: Duration::from_secs(30),
        max_retries: 3,
        ..EngineConfig::default()
    }
}

fn input(options: TurnOptions) -> TurnInput {
    TurnInput {
        conversation_id: "conv".into(),
        user_message_id: "user".into(),
        message_id: "msg".into(),
        provider_name: "profile".into(),
        model: "model".into(),
        system_prompt: None,
        history: vec![Message::user("Hi")],
        options,
    }
}

const USAGE: Usage =
    Usage { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 0, cached_tokens: 0, cache_write_tokens: 0 };

fn step(m: &mut Machine<'_>, input: Input) -> Vec<Effect> {
    if matches!(input, Input::Start) {
        ESTIMATED.with(|e| e.set(Usage::default()));
    }
    let mut out = Vec::new();
    m.handle(input, &mut out);
    without_estimates(out)
}

thread_local! {
    /// What the machine estimated so far in this test's turn (see [`without_estimates`]).
    static ESTIMATED: std::cell::Cell<Usage> = std::cell::Cell::new(Usage::default());
}

/// These tests script responses without usage, which the machine estimates (a request that was
/// answered always counts): the estimates are left out here, and out of every total, so each
/// test states only what the provider reported. `estimated_usage_*` test the estimates.
fn without_estimates(out: Vec<Effect>) -> Vec<Effect> {
    let minus = |u: &mut Usage, e: Usage| {
        u.prompt_tokens -= e.prompt_tokens;
        u.completion_tokens -= e.completion_tokens;
        u.reasoning_tokens -= e.reasoning_tokens;
    };
    out.into_iter()
        .filter_map(|mut effect| {
            let estimated = ESTIMATED.with(std::cell::Cell::get);
            match &mut effect {
                Effect::Emit(ChatEvent::Usage { estimated: true, usage, .. }) => {
                    let mut sum = estimated;
                    sum.add(usage);
                    ESTIMATED.with(|e| e.set(sum));
                    return None;
                }
                Effect::Emit(ChatEvent::Usage { total: usage, .. } | ChatEvent::Done { usage, .. })
                | Effect::Finish(TurnOutcome { usage, .. }) => minus(usage, estimated),
                _ => {}
            }
            Some(effect)
        })
        .collect()
}

/// Starts the turn and drops the `started` and first-request effects.
fn started<'a>(config: &'a EngineConfig, registry: &'a ToolRegistry, options: TurnOptions) -> Machine<'a> {
    let mut m = Machine::new(config, registry, input(options));
    let out = step(&mut m, Input::Start);
    assert!(matches!(out.last(), Some(Effect::StartRequest { attempt: 1, .. })), "{out:#?}");
    m
}

fn text(s: &str) -> Input {
    Input::Stream(Ok(ProviderEvent::TextDelta(s.into())))
}

fn usage() -> Input {
    Input::Stream(Ok(ProviderEvent::Usage(USAGE)))
}

fn finish(reason: StopReason) -> Input {
    Input::Stream(Ok(ProviderEvent::Finish { reason, response_id: None }))
}

fn fail(error: ProviderError) -> Input {
    Input::Stream(Err(error))
}

fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
}

fn tool_call(id: &str, name: &str, args: &str, text_chars_before: usize) -> Input {
    Input::Stream(Ok(ProviderEvent::ToolCall { call: call(id, name, args), text_chars_before }))
}

/// Streams these calls (no text) and finishes with `ToolCalls`; returns the finish's effects.
fn respond_with_calls(m: &mut Machine<'_>, calls: &[(&str, &str, &str)]) -> Vec<Effect> {
    for (id, name, args) in calls {
        step(m, tool_call(id, name, args, 0));
    }
    step(m, finish(StopReason::ToolCalls))
}

fn ok(index: usize, output: &str) -> Input {
    finished(index, ToolEnd::Returned(Ok(ToolOutput::text(output))), 0)
}

fn finished(index: usize, end: ToolEnd, answer_chars: usize) -> Input {
    Input::ToolFinished(ToolFinished {
        index,
        end,
        duration_ms: 7,
        answer_chars,
        usage: Default::default(),
        cost_usd: None,
    })
}

fn emit(event: ChatEvent) -> Effect {
    Effect::Emit(event)
}

fn result(id: &str, status: ToolStatus, output: &str, duration_ms: u64) -> Effect {
    emit(ChatEvent::ToolResult {
        images: Default::default(),
        id: id.into(),
        status,
        output: output.into(),
        duration_ms,
    })
}

fn done(finish_reason: FinishReason, usage: Usage, tool_calls_made: u32) -> [Effect; 2] {
    [
        emit(ChatEvent::Done { finish_reason, usage, tool_calls_made }),
        Effect::Finish(TurnOutcome { finish_reason, usage, tool_calls_made, error: None, read_untrusted: None }),
    ]
}

fn events(effects: &[Effect]) -> Vec<&ChatEvent> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Emit(event) => Some(event),
            _ => None,
        })
        .collect()
}

fn runs(effects: &[Effect]) -> Vec<ToolRun> {
    effects
        .iter()
        .flat_map(|e| match e {
            Effect::RunTools(runs) => runs.clone(),
            _ => Vec::new(),
        })
        .collect()
}

fn request(effects: &[Effect]) -> &switchboard_core::ProviderRequest {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::StartRequest { request, .. } => Some(request),
            _ => None,
        })
        .expect("a StartRequest effect")
}

fn notices(effects: &[Effect], kind: NoticeKind) -> Vec<String> {
    events(effects)
        .into_iter()
        .filter_map(|e| match e {
            ChatEvent::Notice { kind: k, message } if *k == kind => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn tool_results_in(history: &[Message]) -> Vec<(&str, &str, bool)> {
    history
        .iter()
        .filter_map(|m| match m {
            Message::Tool { call_id, content, is_error, .. } => Some((call_id.as_str(), content.as_str(), *is_error)),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Streaming and finishing
// ---------------------------------------------------------------------------------------------

#[test]
fn start_emits_started_then_the_first_request_with_the_offered_tools() {
    let (config, registry) = (config(), registry());
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default()));
    let out = step(&mut m, Input::Start);
    assert_eq!(out.len(), 3, "{out:#?}");
    assert!(matches!(out[1], Effect::Emit(ChatEvent::Context { estimated: true, .. })), "{out:#?}");
    assert_eq!(
        out[0],
        emit(ChatEvent::Started {
            conversation_id: "conv".into(),
            message_id: "msg".into(),
            user_message_id: "user".into(),
            provider: "profile".into(),
            model: "model".into(),
        })
    );
    let req = request(&out);
    let names: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ask", "echo", "research", "slow"]);
    assert_eq!(req.tool_choice, ToolChoice::Auto);
    assert_eq!(req.messages, [Message::user("Hi")]);
    assert_eq!(m.phase(), Phase::Streaming);
}

#[test]
fn tools_the_turn_cannot_have_are_said_after_started_and_the_turn_goes_on() {
    let (config, registry) = (config(), registry());
    let why = "The toolset 'research' names 'gone', which no longer exists; it is left out.";
    let options = TurnOptions { unavailable: vec![why.into()], ..TurnOptions::default() };
    let mut m = Machine::new(&config, &registry, input(options));
    let out = step(&mut m, Input::Start);
    assert!(matches!(out[0], Effect::Emit(ChatEvent::Started { .. })), "{out:#?}");
    assert_eq!(out[1], emit(ChatEvent::Notice { kind: NoticeKind::ToolUnavailable, message: why.into() }));
    assert_eq!(request(&out).tools.len(), 4);
    assert_eq!(m.phase(), Phase::Streaming);
}

#[test]
fn text_then_finish_ends_with_done_stop() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    assert_eq!(step(&mut m, text("Hel")), [emit(ChatEvent::TextDelta { text: "Hel".into() })]);
    assert_eq!(step(&mut m, usage()), []);
    let mut expected = vec![emit(ChatEvent::Usage {
        usage: USAGE,
        total: USAGE,
        request: 1,
        cost_usd: None,
        estimated: false,
        agent_call: None,
    })];
    expected.extend(done(FinishReason::Stop, USAGE, 0));
    assert_eq!(step(&mut m, finish(StopReason::Stop)), expected);
    assert_eq!(m.phase(), Phase::Finished);
    assert_eq!(m.history().last(), Some(&Message::Assistant { text: "Hel".into(), tool_calls: vec![], state: None }));
}

#[test]
fn length_and_content_filter_stops_become_finish_reasons() {
    for (stop, reason) in [
        (StopReason::Length, FinishReason::Length),
        (StopReason::ContentFilter, FinishReason::ContentFilter),
        (StopReason::Other("x".into()), FinishReason::Stop),
    ] {
        let (config, registry) = (config(), registry());
        let mut m = started(&config, &registry, TurnOptions::default());
        let mut out = step(&mut m, finish(stop));
        // A filtered answer also says why (see the test of that below).
        out.retain(|e| !matches!(e, Effect::Emit(ChatEvent::Notice { kind: NoticeKind::Filtered, .. })));
        assert_eq!(out, done(reason, Usage::default(), 0));
    }
}

#[test]
fn inputs_the_phase_does_not_expect_are_ignored() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    assert_eq!(step(&mut m, ok(0, "stray")), []);
    assert_eq!(step(&mut m, Input::Approval(ApprovalDecision::Once)), []);
    assert_eq!(step(&mut m, Input::RetryElapsed), []);
    assert_eq!(m.phase(), Phase::Streaming);
}

// ---------------------------------------------------------------------------------------------
// Retries and stream failures
// ---------------------------------------------------------------------------------------------

#[test]
fn a_failure_before_output_waits_then_resends_the_same_request() {
    let (config, registry) = (config(), registry());
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default()));
    let started = step(&mut m, Input::Start);
    let first = request(&started).clone();
    let context = started
        .iter()
        .find_map(|e| match e {
            Effect::Emit(event @ ChatEvent::Context { .. }) => Some(emit(event.clone())),
            _ => None,
        })
        .unwrap();
    let out = step(&mut m, fail(ProviderError::new(ErrorKind::Server, "Boom.")));
    assert_eq!(
        out,
        [
            emit(ChatEvent::Notice {
                kind: NoticeKind::Retrying,
                message: "Boom. Retrying in 1.0 s (attempt 2 of 4).".into()
            }),
            Effect::Flush,
            Effect::WaitRetry { delay: Duration::from_secs(1) },
        ]
    );
    assert_eq!(m.phase(), Phase::WaitingRetry);
    // The retry announces the same count and sends the same request.
    assert_eq!(step(&mut m, Input::RetryElapsed), [context, Effect::StartRequest { request: first, attempt: 2 }]);
}

#[test]
fn retry_delays_double_per_attempt_and_retries_are_bounded() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    let overloaded = || fail(ProviderError::new(ErrorKind::Overloaded, "Busy."));
    for secs in [1, 2, 4] {
        let out = step(&mut m, overloaded());
        assert_eq!(out.last(), Some(&Effect::WaitRetry { delay: Duration::from_secs(secs) }));
        step(&mut m, Input::RetryElapsed);
    }
    let out = step(&mut m, overloaded());
    assert_eq!(
        events(&out),
        [
            &ChatEvent::Error { kind: ErrorKind::Overloaded, message: "Busy.".into(), retryable: true, detail: None },
            &ChatEvent::Done { finish_reason: FinishReason::Error, usage: Usage::default(), tool_calls_made: 0 },
        ]
    );
}

#[test]
fn retry_waits_the_capped_retry_after() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    let asked = ProviderError::new(ErrorKind::RateLimited, "Slow down.").with_retry_after(Some(Duration::from_secs(5)));
    assert_eq!(step(&mut m, fail(asked)).last(), Some(&Effect::WaitRetry { delay: Duration::from_secs(5) }));
    step(&mut m, Input::RetryElapsed);
    let too_long =
        ProviderError::new(ErrorKind::RateLimited, "Slow down.").with_retry_after(Some(Duration::from_secs(600)));
    let out = step(&mut m, fail(too_long));
    assert_eq!(out.last(), Some(&Effect::WaitRetry { delay: Duration::from_secs(30) }));
    assert_eq!(notices(&out, NoticeKind::Retrying), ["Slow down. Retrying in 30.0 s (attempt 3 of 4)."]);
}

#[test]
fn a_failure_after_output_is_not_retried() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    step(&mut m, text("partial"));
    let error = ProviderError::new(ErrorKind::Server, "Boom.");
    let out = step(&mut m, fail(error.clone()));
    assert_eq!(
        out,
        [
            emit(ChatEvent::Error { kind: ErrorKind::Server, message: "Boom.".into(), retryable: true, detail: None }),
            emit(ChatEvent::Done { finish_reason: FinishReason::Error, usage: Usage::default(), tool_calls_made: 0 }),
            Effect::Finish(TurnOutcome {
                finish_reason: FinishReason::Error,
                usage: Usage::default(),
                tool_calls_made: 0,
                error: Some(error),
                read_untrusted: None,
            }),
        ]
    );
}

#[test]
fn an_empty_text_delta_is_not_output_so_a_failure_is_still_retried() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    assert_eq!(step(&mut m, text("")), []);
    let out = step(&mut m, fail(ProviderError::new(ErrorKind::Network, "Cut.")));
    assert!(matches!(out.last(), Some(Effect::WaitRetry { .. })), "{out:#?}");
}

#[test]
fn a_non_retryable_failure_ends_the_turn_at_once() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    let out = step(&mut m, fail(ProviderError::new(ErrorKind::Auth, "Bad key.")));
    assert_eq!(
        events(&out)[0],
        &ChatEvent::Error { kind: ErrorKind::Auth, message: "Bad key.".into(), retryable: false, detail: None }
    );
    assert_eq!(m.phase(), Phase::Finished);
}

#[test]
fn a_stream_ending_without_finish_and_a_silent_stream_are_errors() {
    let mut config = config();
    config.max_retries = 0;
    config.idle_timeout = Duration::from_millis(1500);
    let registry = registry();
    let cases = [
        (Input::StreamEnded, ErrorKind::Network, "The provider's stream ended before the response was complete."),
        (Input::IdleTimeout, ErrorKind::Timeout, "The provider sent nothing for 1.5 s; the response was abandoned."),
    ];
    for (input, kind, message) in cases {
        let mut m = started(&config, &registry, TurnOptions::default());
        let out = step(&mut m, input);
        assert_eq!(events(&out)[0], &ChatEvent::Error { kind, message: message.into(), retryable: true, detail: None });
    }
}

// ---------------------------------------------------------------------------------------------
// Tool calls, offsets and names
// ---------------------------------------------------------------------------------------------

#[test]
fn a_tool_call_checkpoints_then_carries_its_offset_in_the_turn() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    step(&mut m, text("Olá 👋 "));
    let out = step(&mut m, tool_call("c1", "echo", "{}", 4));
    assert_eq!(
        out,
        [
            Effect::Tick,
            emit(ChatEvent::ToolCall {
                id: "c1".into(),
                name: "echo".into(),
                source: ToolSource::Builtin,
                arguments: "{}".into(),
                text_offset: 4,
                iteration: 1,
                index: 0,
            }),
        ]
    );
    let out = step(&mut m, tool_call("c2", "ghost", "{}", 99));
    assert!(
        matches!(events(&out)[0], ChatEvent::ToolCall { source: ToolSource::Unknown, text_offset: 6, index: 1, .. }),
        "an offset never passes the text so far: {out:#?}"
    );
}

#[test]
fn offsets_accumulate_over_iterations() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    step(&mut m, text("世界"));
    step(&mut m, tool_call("c1", "echo", "{}", 2));
    let out = step(&mut m, finish(StopReason::ToolCalls));
    step(&mut m, finished(runs(&out)[0].index, ToolEnd::Returned(Ok(ToolOutput::text("x"))), 0));
    step(&mut m, text("🎉"));
    let out = step(&mut m, tool_call("c2", "echo", "{}", 1));
    assert!(matches!(events(&out)[0], ChatEvent::ToolCall { text_offset: 3, iteration: 2, .. }), "{out:#?}");
}

#[test]
fn control_taking_text_moves_later_offsets() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    step(&mut m, text("ab"));
    let out = respond_with_calls(&mut m, &[("r", "research", "{}")]);
    assert!(runs(&out)[0].takes_control);
    // It streamed 5 chars, then failed: the turn goes back to the model.
    let out = step(&mut m, finished(0, ToolEnd::Returned(Err(ToolError::Failed("no sources".into()))), 5));
    assert!(matches!(out.last(), Some(Effect::StartRequest { .. })), "{out:#?}");
    assert_eq!(m.answer_chars(), 7);
    let out = step(&mut m, tool_call("e", "echo", "{}", 0));
    assert!(matches!(events(&out)[0], ChatEvent::ToolCall { text_offset: 7, .. }), "{out:#?}");
}

#[test]
fn a_control_taking_tool_that_succeeds_ends_the_turn() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    respond_with_calls(&mut m, &[("r", "research", "{}")]);
    let out = step(&mut m, finished(0, ToolEnd::Returned(Ok(ToolOutput::text("report"))), 12));
    let mut expected = vec![result("r", ToolStatus::Ok, "report", 7)];
    expected.extend(done(FinishReason::ToolTookControl, Usage::default(), 1));
    assert_eq!(out, expected);
}

#[test]
fn names_are_sent_provider_safe_and_mapped_back() {
    let config = config();
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(Fake(def("my tool.v2", |_| {})))).unwrap();
    let mut turn = input(TurnOptions::default());
    turn.history.insert(
        0,
        Message::Assistant { text: String::new(), tool_calls: vec![call("old", "gone.v1", "{}")], state: None },
    );
    let mut m = Machine::new(&config, &registry, turn);
    let out = step(&mut m, Input::Start);
    let req = request(&out);
    let safe = req.tools[0].name.clone();
    assert_eq!(safe, "my_tool_v2");
    assert!(matches!(&req.messages[0], Message::Assistant { tool_calls, .. } if tool_calls[0].name == "gone_v1"));
    let out = respond_with_calls(&mut m, &[("c", &safe, "{}")]);
    assert_eq!(runs(&out)[0].call.name, "my tool.v2", "runs under its registry name");
}

// ---------------------------------------------------------------------------------------------
// Rounds
// ---------------------------------------------------------------------------------------------

#[test]
fn invalid_calls_are_answered_as_errors_and_only_valid_ones_run() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    let out = respond_with_calls(
        &mut m,
        &[("u", "ghost", "{}"), ("j", "echo", "{nope"), ("s", "echo", r#"{"text":5}"#), ("v", "echo", "")],
    );
    let evs = events(&out);
    let msg = |i: usize| match evs[i] {
        ChatEvent::ToolResult { status: ToolStatus::Error, output, .. } => output.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(msg(0), "Unknown tool 'ghost'. Available tools: ask, echo, research, slow.");
    assert!(msg(1).starts_with("Invalid JSON arguments for 'echo': ") && msg(1).contains("Arguments received: {nope."));
    assert!(msg(2).starts_with("Invalid arguments for 'echo': ") && msg(2).contains("/text"), "{}", msg(2));
    assert_eq!(evs[3], &ChatEvent::ToolStarted { id: "v".into() });
    assert_eq!(
        runs(&out),
        [ToolRun {
            index: 3,
            call: call("v", "echo", ""),
            args: json!({}),
            timeout: config.tool_timeout,
            takes_control: false,
            exposure: Default::default(),
        }]
    );
    assert_eq!(out.last(), Some(&Effect::Flush), "flushed before waiting for the tools");
    assert_eq!(m.phase(), Phase::RunningTools);
}

#[test]
fn a_tool_switched_off_is_said_to_be_off_not_unknown_and_is_not_run() {
    let mut config = config();
    config.tool_settings.disabled.insert("slow".into());
    let registry = registry();
    let options = TurnOptions { disabled_for_chat: ["echo".to_owned()].into(), ..TurnOptions::default() };
    let mut m = started(&config, &registry, options);
    let out = respond_with_calls(&mut m, &[("e", "echo", "{}"), ("s", "slow", "{}"), ("g", "ghost", "{}")]);
    let evs = events(&out);
    let answer = |i: usize| match evs[i] {
        ChatEvent::ToolResult { status, output, .. } => (*status, output.as_str()),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        answer(0),
        (
            ToolStatus::Skipped,
            "echo is switched off in this chat. Answer without it, or ask the user to switch it back on."
        )
    );
    assert_eq!(
        answer(1),
        (
            ToolStatus::Skipped,
            "slow is switched off in Settings → Tools. Answer without it, or ask the user to switch it on there."
        )
    );
    // Only a name no source has is unknown; the list names what is offered, not what is off.
    assert_eq!(answer(2), (ToolStatus::Error, "Unknown tool 'ghost'. Available tools: ask, research."));
    assert!(runs(&out).is_empty(), "nothing ran");
}

#[test]
fn duplicate_gets_original_result() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    let out = respond_with_calls(&mut m, &[("a", "echo", r#"{"text":"x"}"#), ("b", "echo", r#"{ "text": "x" }"#)]);
    assert_eq!(runs(&out).len(), 1, "the duplicate does not run");
    let out = step(&mut m, ok(0, "x"));
    assert_eq!(out[..2], [result("a", ToolStatus::Ok, "x", 7), result("b", ToolStatus::Ok, "x", 0)]);
    assert_eq!(tool_results_in(m.history()), [("a", "x", false), ("b", "x", false)]);
}

#[test]
fn over_cap_calls_are_skipped_in_call_order() {
    let mut config = config();
    config.max_tool_calls_per_round = 1;
    let registry = registry();
    let mut m = started(&config, &registry, TurnOptions::default());
    let out = respond_with_calls(&mut m, &[("a", "echo", r#"{"text":"1"}"#), ("b", "echo", r#"{"text":"2"}"#)]);
    let skipped =
        "Skipped: at most 1 tool calls run per round. Call 'echo' again in a later round if you still need it.";
    assert_eq!(
        events(&out),
        [
            &ChatEvent::ToolStarted { id: "a".into() },
            &ChatEvent::ToolResult {
                images: Default::default(),
                id: "b".into(),
                status: ToolStatus::Skipped,
                output: skipped.into(),
                duration_ms: 0
            }
        ]
    );
    step(&mut m, ok(0, "1"));
    assert_eq!(tool_results_in(m.history()), [("a", "1", false), ("b", skipped, true)]);
}

#[test]
fn a_control_taking_tool_batched_with_another_runs_nothing() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    let out = respond_with_calls(&mut m, &[("e", "echo", "{}"), ("r", "research", "{}")]);
    assert!(runs(&out).is_empty());
    let alone = "Not run: 'research' takes over the answer and must be called alone, with no other tool calls in the same response. Call it by itself.";
    assert_eq!(tool_results_in(m.history()), [("e", alone, true), ("r", alone, true)]);
    assert!(matches!(out.last(), Some(Effect::StartRequest { attempt: 1, .. })), "the model is asked again");
}

#[test]
fn results_are_emitted_as_tools_finish_and_kept_in_call_order() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    respond_with_calls(&mut m, &[("a", "echo", r#"{"text":"1"}"#), ("b", "slow", "{}")]);
    assert_eq!(step(&mut m, ok(1, "slow done")), [result("b", ToolStatus::Ok, "slow done", 7)]);
    let out = step(&mut m, ok(0, "1"));
    assert_eq!(out[0], result("a", ToolStatus::Ok, "1", 7));
    assert_eq!(tool_results_in(m.history()), [("a", "1", false), ("b", "slow done", false)]);
    let req = request(&out);
    assert_eq!(req.messages.len(), 4, "user, assistant, two results");
}

#[test]
fn tool_failures_are_worded_for_the_model() {
    let cases = [
        (ToolEnd::TimedOut, ToolStatus::Timeout, "'slow' did not finish within 2 s and was stopped."),
        (ToolEnd::Panicked("boom".into()), ToolStatus::Error, "'slow' crashed: boom"),
        (ToolEnd::Returned(Err(ToolError::Failed("disk on fire".into()))), ToolStatus::Error, "disk on fire"),
        (
            ToolEnd::Returned(Err(ToolError::InvalidArguments("bad zone".into()))),
            ToolStatus::Error,
            "'slow' failed: invalid arguments: bad zone",
        ),
        (
            ToolEnd::Returned(Err(ToolError::Cancelled)),
            ToolStatus::Cancelled,
            "Stopped by the user while the tool was running.",
        ),
    ];
    for (end, status, text) in cases {
        let (config, registry) = (config(), registry());
        let mut m = started(&config, &registry, TurnOptions::default());
        let out = respond_with_calls(&mut m, &[("s", "slow", "{}")]);
        assert_eq!(runs(&out)[0].timeout, Duration::from_secs(2), "the tool's own timeout");
        assert_eq!(step(&mut m, finished(0, end, 0))[0], result("s", status, text, 7));
    }
}

// ---------------------------------------------------------------------------------------------
// Approvals and dry run
// ---------------------------------------------------------------------------------------------

#[test]
fn ask_tool_emits_ask_effect_before_approval_event() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    let out = respond_with_calls(&mut m, &[("a", "ask", r#"{"text":"rm"}"#)]);
    assert_eq!(
        out,
        [
            Effect::Ask(ApprovalRequest {
                conversation_id: "conv".into(),
                call_id: "a".into(),
                name: "ask".into(),
                source: ToolSource::Builtin,
                arguments: r#"{"text":"rm"}"#.into(),
                preview: Some("ask --text rm".into()),
                egress: None,
            }),
            emit(ChatEvent::ApprovalRequested {
                id: "a".into(),
                name: "ask".into(),
                source: ToolSource::Builtin,
                arguments: r#"{"text":"rm"}"#.into(),
                preview: Some("ask --text rm".into()),
                egress: None,
            }),
            Effect::Flush,
        ]
    );
    assert_eq!(m.phase(), Phase::Approving);
    let out = step(&mut m, Input::Approval(ApprovalDecision::Once));
    assert_eq!(
        out[..2],
        [
            emit(ChatEvent::ApprovalResolved { id: "a".into(), approved: true }),
            emit(ChatEvent::ToolStarted { id: "a".into() }),
        ]
    );
    assert_eq!(runs(&out)[0].args, json!({"text": "rm"}));
}

#[test]
fn a_denied_call_is_answered_denied_and_the_next_call_is_prepared() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    respond_with_calls(&mut m, &[("a", "ask", "{}"), ("e", "echo", "{}")]);
    let out = step(&mut m, Input::Approval(ApprovalDecision::Deny));
    let denied = "The user denied this call to 'ask'. Do not retry it; answer without it or ask the user.";
    assert_eq!(
        out[..3],
        [
            emit(ChatEvent::ApprovalResolved { id: "a".into(), approved: false }),
            result("a", ToolStatus::Denied, denied, 0),
            emit(ChatEvent::ToolStarted { id: "e".into() }),
        ]
    );
    assert_eq!(runs(&out).iter().map(|r| r.index).collect::<Vec<_>>(), [1]);
}

#[test]
fn approvals_for_chat_are_remembered_within_the_turn_and_once_is_not() {
    for (decision, asks_again) in
        [(ApprovalDecision::Once, true), (ApprovalDecision::ForChat, false), (ApprovalDecision::Always, false)]
    {
        let (config, registry) = (config(), registry());
        let mut m = started(&config, &registry, TurnOptions::default());
        respond_with_calls(&mut m, &[("a1", "ask", "{}")]);
        step(&mut m, Input::Approval(decision));
        step(&mut m, ok(0, "done"));
        let out = respond_with_calls(&mut m, &[("a2", "ask", r#"{"text":"b"}"#)]);
        assert_eq!(matches!(out.first(), Some(Effect::Ask(_))), asks_again, "{decision:?}: {out:#?}");
    }
}

#[test]
fn approval_policy_from_settings_and_prior_approvals_skip_the_question() {
    let mut config = config();
    config.tool_settings.approval.insert("echo".into(), ApprovalPolicy::Deny);
    let registry = registry();
    let options = TurnOptions { approved_tools: ["ask".to_owned()].into(), ..TurnOptions::default() };
    let mut m = started(&config, &registry, options);
    let out = respond_with_calls(&mut m, &[("e", "echo", "{}"), ("a", "ask", "{}")]);
    assert!(!out.iter().any(|e| matches!(e, Effect::Ask(_))), "{out:#?}");
    let denied = "The user's settings do not allow 'echo' to run. Answer without it.";
    assert_eq!(out[0], result("e", ToolStatus::Denied, denied, 0));
    assert_eq!(runs(&out).iter().map(|r| r.call.id.as_str()).collect::<Vec<_>>(), ["a"]);
}

#[test]
fn dry_run_answers_with_example_output_without_asking_and_notices_once() {
    let (config, registry) = (config(), registry());
    let options = TurnOptions { dry_run: true, ..TurnOptions::default() };
    let mut m = started(&config, &registry, options);
    let out = respond_with_calls(&mut m, &[("e", "echo", "{}"), ("a", "ask", "{}")]);
    assert!(runs(&out).is_empty() && !out.iter().any(|e| matches!(e, Effect::Ask(_))), "{out:#?}");
    assert_eq!(notices(&out, NoticeKind::DryRun), ["Dry run: tools return their example output and do not run."]);
    let evs = events(&out);
    assert_eq!(
        evs[1..5],
        [
            &ChatEvent::ToolStarted { id: "e".into() },
            &ChatEvent::ToolResult {
                images: Default::default(),
                id: "e".into(),
                status: ToolStatus::Ok,
                output: "example echo".into(),
                duration_ms: 0
            },
            &ChatEvent::ToolStarted { id: "a".into() },
            &ChatEvent::ToolResult {
                images: Default::default(),
                id: "a".into(),
                status: ToolStatus::Ok,
                output: "(dry run) 'ask' would run with arguments {}; it has no example output.".into(),
                duration_ms: 0
            },
        ]
    );
    let out = respond_with_calls(&mut m, &[("e2", "echo", "{}")]);
    assert!(notices(&out, NoticeKind::DryRun).is_empty(), "one notice per turn");
}

// ---------------------------------------------------------------------------------------------
// Stopping
// ---------------------------------------------------------------------------------------------

#[test]
fn cancel_while_tools_run_answers_every_call() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    respond_with_calls(&mut m, &[("a", "echo", "{}"), ("b", "slow", "{}"), ("c", "echo", "{ }")]);
    step(&mut m, ok(0, "a done"));
    let stopped = "Stopped by the user while the tool was running.";
    let mut expected = vec![
        Effect::CancelTools,
        result("c", ToolStatus::Ok, "a done", 0),
        result("b", ToolStatus::Cancelled, stopped, 0),
    ];
    expected.extend(done(FinishReason::Cancelled, Usage::default(), 3));
    assert_eq!(step(&mut m, Input::Cancel), expected);
    assert_eq!(tool_results_in(m.history()), [("a", "a done", false), ("b", stopped, true), ("c", "a done", false)]);
}

#[test]
fn cancel_while_asking_resolves_the_question_and_answers_every_call() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    respond_with_calls(&mut m, &[("e", "echo", "{}"), ("a", "ask", "{}")]);
    let before = "Stopped by the user before the tool ran.";
    let mut expected = vec![
        emit(ChatEvent::ApprovalResolved { id: "a".into(), approved: false }),
        result("e", ToolStatus::Cancelled, before, 0),
        result("a", ToolStatus::Cancelled, before, 0),
    ];
    expected.extend(done(FinishReason::Cancelled, Usage::default(), 2));
    assert_eq!(step(&mut m, Input::Cancel), expected);
}

#[test]
fn cancel_mid_response_answers_received_calls_and_keeps_usage() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    step(&mut m, usage());
    step(&mut m, tool_call("e", "echo", "{}", 0));
    let mut expected = vec![
        emit(ChatEvent::Usage {
            usage: USAGE,
            total: USAGE,
            request: 1,
            cost_usd: None,
            estimated: false,
            agent_call: None,
        }),
        result("e", ToolStatus::Cancelled, "Stopped by the user before the tool ran.", 0),
    ];
    expected.extend(done(FinishReason::Cancelled, USAGE, 1));
    assert_eq!(step(&mut m, Input::Cancel), expected);
}

#[test]
fn cancel_during_a_retry_wait_ends_the_turn_cancelled() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    step(&mut m, fail(ProviderError::new(ErrorKind::Server, "Boom.")));
    assert_eq!(step(&mut m, Input::Cancel), done(FinishReason::Cancelled, Usage::default(), 0));
}

// ---------------------------------------------------------------------------------------------
// Iterations
// ---------------------------------------------------------------------------------------------

#[test]
fn last_iteration_offers_no_tools() {
    let (config, registry) = (config(), registry());
    let options = TurnOptions { max_iterations: Some(1), ..TurnOptions::default() };
    let mut m = started(&config, &registry, options);
    respond_with_calls(&mut m, &[("a", "echo", "{}")]);
    // The step limit pauses; nobody to ask answers "answer now".
    let out = step(&mut m, ok(0, "x"));
    assert!(
        matches!(out.iter().find(|e| matches!(e, Effect::AskBudget(_))), Some(Effect::AskBudget(p)) if p.kind == BudgetKind::StepLimit)
    );
    let out = step(&mut m, Input::Budget(BudgetChoice::AnswerNow));
    assert_eq!(
        notices(&out, NoticeKind::MaxIterations),
        ["The model used tools in 1 rounds, the most allowed per turn; it was asked to answer with what it has."]
    );
    let req = request(&out);
    assert!(req.tools.is_empty());
    assert_eq!(req.tool_choice, ToolChoice::None);
    // The model calls anyway: answered as skipped, and the turn ends.
    let out = respond_with_calls(&mut m, &[("b", "echo", "{}")]);
    let mut expected = vec![result("b", ToolStatus::Skipped, "Tools are off for this final answer.", 0)];
    expected.extend(done(FinishReason::MaxIterations, Usage::default(), 2));
    assert_eq!(out, expected);
}

#[test]
fn forced_tools_that_cannot_be_offered_get_a_notice_in_the_first_iteration_only() {
    let (config, registry) = (config(), registry());
    let options = TurnOptions { forced: vec!["nope".into()], ..TurnOptions::default() };
    let mut m = Machine::new(&config, &registry, input(options));
    let out = step(&mut m, Input::Start);
    assert_eq!(
        notices(&out, NoticeKind::ToolUnavailable),
        ["The tool 'nope' could not be forced: it is not available."]
    );
    respond_with_calls(&mut m, &[("e", "echo", "{}")]);
    let out = step(&mut m, ok(0, "x"));
    assert!(notices(&out, NoticeKind::ToolUnavailable).is_empty());
}

#[test]
fn usage_is_summed_and_history_grows_per_iteration() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    step(&mut m, usage());
    respond_with_calls(&mut m, &[("e", "echo", "{}")]);
    let out = step(&mut m, ok(0, "x"));
    assert_eq!(
        request(&out).messages[1..],
        [
            Message::Assistant { text: String::new(), tool_calls: vec![call("e", "echo", "{}")], state: None },
            Message::Tool {
                images: Default::default(),
                call_id: "e".into(),
                name: "echo".into(),
                content: "x".into(),
                is_error: false
            },
        ]
    );
    step(&mut m, usage());
    let out = step(&mut m, finish(StopReason::Stop));
    let total = Usage { prompt_tokens: 20, completion_tokens: 10, ..Usage::default() };
    let mut expected = vec![emit(ChatEvent::Usage {
        usage: USAGE,
        total,
        request: 2,
        cost_usd: None,
        estimated: false,
        agent_call: None,
    })];
    expected.extend(done(FinishReason::Stop, total, 1));
    assert_eq!(out, expected);
}

// ---------------------------------------------------------------------------------------------
// Keep-alives
// ---------------------------------------------------------------------------------------------

#[test]
fn a_keep_alive_does_nothing_and_does_not_count_as_output() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    let keep_alive = || Input::Stream(Ok(ProviderEvent::KeepAlive));
    assert_eq!(step(&mut m, keep_alive()), []);
    assert_eq!(step(&mut m, keep_alive()), []);
    assert_eq!(m.phase(), Phase::Streaming);
    // Only keep-alives so far: a failure is still retried.
    let out = step(&mut m, fail(ProviderError::new(ErrorKind::Server, "Boom.")));
    assert!(matches!(out.last(), Some(Effect::WaitRetry { .. })), "{out:#?}");
}

#[test]
fn a_malformed_call_is_shown_answered_with_an_error_and_never_run() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, TurnOptions::default());
    step(&mut m, tool_call("good", "echo", r#"{"text":"x"}"#, 0));
    // Same name and arguments as the good call: it must not borrow its result either.
    let out = step(
        &mut m,
        Input::Stream(Ok(ProviderEvent::MalformedToolCall {
            call: call("bad", "echo", r#"{"text":"x"}"#),
            text_chars_before: 0,
            problem: "its arguments arrived without a call id, index or tool name".into(),
        })),
    );
    assert!(events(&out).iter().any(|e| matches!(e, ChatEvent::ToolCall { id, .. } if id == "bad")), "{out:#?}");
    let out = step(&mut m, finish(StopReason::ToolCalls));
    let runs: Vec<&str> = out
        .iter()
        .filter_map(|e| match e {
            Effect::RunTools(runs) => Some(runs.iter().map(|r| r.call.id.as_str()).collect::<Vec<_>>()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(runs, ["good"]);
    let bad = events(&out)
        .into_iter()
        .find_map(|e| match e {
            ChatEvent::ToolResult { id, status, output, .. } if id == "bad" => Some((*status, output.clone())),
            _ => None,
        })
        .expect("the malformed call is answered");
    assert_eq!(bad.0, ToolStatus::Error);
    assert!(bad.1.starts_with("Malformed tool call: its arguments arrived without"), "{}", bad.1);
}

#[test]
fn retry_backoff_is_jittered_by_the_seed_within_half_and_the_cap() {
    let waits = |seed: u64| {
        let (config, registry) = (config(), registry());
        let mut m = Machine::new(&config, &registry, input(TurnOptions::default())).with_retry_jitter(seed);
        step(&mut m, Input::Start);
        let mut waits = Vec::new();
        for _ in 0..3 {
            match step(&mut m, fail(ProviderError::new(ErrorKind::Overloaded, "Busy."))).last() {
                Some(Effect::WaitRetry { delay }) => waits.push(*delay),
                other => panic!("{other:?}"),
            }
            step(&mut m, Input::RetryElapsed);
        }
        waits
    };
    // The same seed gives the same waits (deterministic); another seed, other waits.
    assert_eq!(waits(7), waits(7));
    assert_ne!(waits(7), waits(8));
    for seed in 1..200u64 {
        for (wait, full) in waits(seed).into_iter().zip([1u64, 2, 4]) {
            let full = Duration::from_secs(full);
            assert!(wait >= full / 2 && wait <= full, "seed {seed}: {wait:?} of {full:?}");
        }
    }
    // A server's own wait is kept as asked, and the cap still holds.
    let (config, registry) = (config(), registry());
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default())).with_retry_jitter(99);
    step(&mut m, Input::Start);
    let asked = ProviderError::new(ErrorKind::RateLimited, "Slow.").with_retry_after(Some(Duration::from_secs(5)));
    assert_eq!(step(&mut m, fail(asked)).last(), Some(&Effect::WaitRetry { delay: Duration::from_secs(5) }));
}

#[test]
fn a_providers_state_is_announced_for_the_store_and_sent_back_with_the_next_request() {
    let (config, registry) = (config(), registry());
    let options = TurnOptions {
        generation: GenerationOptions { max_output_tokens: Some(512), ..Default::default() },
        ..TurnOptions::default()
    };
    let mut m = Machine::new(&config, &registry, input(options));
    let first = step(&mut m, Input::Start);
    assert_eq!(request(&first).options.max_output_tokens, Some(512), "the options reach every request");
    let state = ProviderState {
        api: "anthropic".into(),
        origin: "https://api.anthropic.com".into(),
        data: json!({"blocks": [{"type": "thinking", "thinking": "hm", "signature": "s"}]}),
    };
    step(&mut m, Input::Stream(Ok(ProviderEvent::State(state.clone()))));
    step(&mut m, tool_call("c1", "echo", "{}", 0));
    let out = step(&mut m, finish(StopReason::ToolCalls));
    assert!(out.contains(&emit(ChatEvent::ProviderState { iteration: 1, state: state.clone() })), "{out:#?}");
    let out = step(&mut m, ok(0, "ran"));
    let next = request(&out);
    assert!(
        matches!(&next.messages[1], Message::Assistant { state: Some(s), .. } if s == &state),
        "the state goes back on its own response: {:#?}",
        next.messages
    );
    assert_eq!(next.options.max_output_tokens, Some(512));
}

#[test]
fn a_model_that_refuses_tools_is_asked_again_without_them_and_the_person_is_told() {
    let (config, registry) = (config(), registry());
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default()));
    let first = step(&mut m, Input::Start);
    assert!(!request(&first).tools.is_empty());
    let refused = ProviderError::new(ErrorKind::BadRequest, "model does not support tools").with_tools_unsupported();
    let out = step(&mut m, fail(refused.clone()));
    let again = request(&out);
    assert!(again.tools.is_empty() && again.tool_choice == ToolChoice::None, "asked again at once, without tools");
    assert!(
        out.iter().any(|e| matches!(e, Effect::Emit(ChatEvent::Notice { kind: NoticeKind::ToolUnavailable, message })
        if message.starts_with("model does not take tools"))),
        "{out:#?}"
    );
    // A second refusal is an error like any other: no loop.
    let out = step(&mut m, fail(refused));
    assert!(
        out.iter().any(|e| matches!(e, Effect::Emit(ChatEvent::Error { kind: ErrorKind::BadRequest, .. }))),
        "{out:#?}"
    );
}

#[test]
fn a_model_known_to_take_no_tools_is_offered_none_and_the_person_is_told_once() {
    let (config, registry) = (config(), registry());
    let options = TurnOptions { tools_unsupported: Some("o1-mini takes no tools.".into()), ..TurnOptions::default() };
    let mut m = Machine::new(&config, &registry, input(options));
    let out = step(&mut m, Input::Start);
    assert!(request(&out).tools.is_empty());
    assert!(out.contains(&emit(ChatEvent::Notice {
        kind: NoticeKind::ToolUnavailable,
        message: "o1-mini takes no tools.".into()
    })));
}

#[test]
fn a_filtered_answer_ends_as_content_filter_and_says_why() {
    let (config, registry) = (config(), registry());
    for (stop, said) in [
        (StopReason::ContentFilter, "The provider's content filter stopped this answer"),
        (
            StopReason::Filtered("Gemini blocked the answer: recitation.".into()),
            "Gemini blocked the answer: recitation.",
        ),
    ] {
        let mut m = Machine::new(&config, &registry, input(TurnOptions::default()));
        step(&mut m, Input::Start);
        step(&mut m, text("Part"));
        let out = step(&mut m, finish(stop));
        let filtered = notices(&out, NoticeKind::Filtered);
        assert!(filtered.len() == 1 && filtered[0].starts_with(said), "{out:#?}");
        assert!(
            out.iter()
                .any(|e| matches!(e, Effect::Emit(ChatEvent::Done { finish_reason: FinishReason::ContentFilter, .. })))
        );
    }
}

// ---------------------------------------------------------------------------------------------
// What each request used and cost
// ---------------------------------------------------------------------------------------------

/// Handles `input` keeping every effect, the estimates included.
fn raw_step(m: &mut Machine<'_>, input: Input) -> Vec<Effect> {
    let mut out = Vec::new();
    m.handle(input, &mut out);
    out
}

fn usage_events(out: &[Effect]) -> Vec<ChatEvent> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Emit(event @ ChatEvent::Usage { .. }) => Some(event.clone()),
            _ => None,
        })
        .collect()
}

/// The request the machine sent last, from the start effects.
fn sent_chars(out: &[Effect]) -> usize {
    out.iter()
        .find_map(|e| match e {
            Effect::StartRequest { request, .. } => Some(switchboard_core::machine::spend::request_chars(request)),
            _ => None,
        })
        .expect("a request was sent")
}

#[test]
fn each_request_is_priced_per_kind_of_token() {
    let (config, registry) = (config(), registry());
    let prices = Prices { input: 2.0, output: 10.0, cached_read: Some(0.5), cache_write: None, reasoning: Some(20.0) };
    let mut m = Machine::new(&config, &registry, input(TurnOptions { prices: Some(prices), ..TurnOptions::default() }));
    raw_step(&mut m, Input::Start);
    let reported = Usage {
        prompt_tokens: 1000,
        completion_tokens: 300,
        reasoning_tokens: 100,
        cached_tokens: 400,
        cache_write_tokens: 0,
    };
    raw_step(&mut m, Input::Stream(Ok(ProviderEvent::Usage(reported))));
    let out = raw_step(&mut m, finish(StopReason::Stop));
    // 600 plain at $2, 400 cached at $0.5, 200 output at $10, 100 reasoning at $20, per million.
    let cost = (600.0 * 2.0 + 400.0 * 0.5 + 200.0 * 10.0 + 100.0 * 20.0) / 1e6;
    let events = usage_events(&out);
    let [ChatEvent::Usage { usage, total, request: 1, cost_usd: Some(c), estimated: false, agent_call: None }] =
        events.as_slice()
    else {
        panic!("{out:#?}")
    };
    assert_eq!((*usage, *total), (reported, reported));
    assert!((c - cost).abs() < 1e-12, "{c} != {cost}");
}

#[test]
fn estimated_usage_when_the_provider_reports_none_and_unknown_prices_stay_unknown() {
    let (config, registry) = (config(), registry());
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default()));
    let start = raw_step(&mut m, Input::Start);
    let sent = sent_chars(&start);
    raw_step(&mut m, text("Twelve chars"));
    let out = raw_step(&mut m, finish(StopReason::Stop));
    let expected = Usage { prompt_tokens: sent.div_ceil(4) as u64, completion_tokens: 3, ..Usage::default() };
    assert_eq!(
        usage_events(&out),
        [ChatEvent::Usage {
            usage: expected,
            total: expected,
            request: 1,
            cost_usd: None,
            estimated: true,
            agent_call: None
        }]
    );
    assert!(
        out.iter().any(|e| matches!(e, Effect::Emit(ChatEvent::Done { usage, .. }) if *usage == expected)),
        "the estimate counts in the turn's total"
    );
}

#[test]
fn estimated_usage_replaces_numbers_that_cannot_be_true() {
    for absurd in [
        Usage { prompt_tokens: 20_000_000, completion_tokens: 5, ..Usage::default() },
        Usage { prompt_tokens: 10, completion_tokens: 5, cached_tokens: 11, ..Usage::default() },
        Usage { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 6, ..Usage::default() },
    ] {
        let (config, registry) = (config(), registry());
        let mut m = Machine::new(
            &config,
            &registry,
            input(TurnOptions { prices: Some(Prices::default()), ..TurnOptions::default() }),
        );
        let sent = sent_chars(&raw_step(&mut m, Input::Start));
        raw_step(&mut m, Input::Stream(Ok(ProviderEvent::Usage(absurd))));
        let out = raw_step(&mut m, finish(StopReason::Stop));
        let expected = Usage { prompt_tokens: sent.div_ceil(4) as u64, ..Usage::default() };
        assert_eq!(
            usage_events(&out),
            [ChatEvent::Usage {
                usage: expected,
                total: expected,
                request: 1,
                cost_usd: Some(0.0),
                estimated: true,
                agent_call: None
            }],
            "{absurd:?}; a free server's request costs 0"
        );
    }
}

#[test]
fn estimated_usage_only_for_a_request_that_was_answered() {
    let (config, registry) = (config(), registry());
    // Stopped before any output: nothing was billed, nothing is counted.
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default()));
    raw_step(&mut m, Input::Start);
    assert_eq!(usage_events(&raw_step(&mut m, Input::Cancel)), []);
    // Stopped after output began: the request counts, estimated.
    let mut m = Machine::new(&config, &registry, input(TurnOptions::default()));
    raw_step(&mut m, Input::Start);
    raw_step(&mut m, text("partial"));
    let out = raw_step(&mut m, Input::Cancel);
    assert!(matches!(usage_events(&out).as_slice(), [ChatEvent::Usage { estimated: true, .. }]), "{out:#?}");
}

// ---------------------------------------------------------------------------------------------
// Budgets
// ---------------------------------------------------------------------------------------------

/// The pause asked about in `effects`, if any.
fn pause(effects: &[Effect]) -> Option<&switchboard_core::BudgetPause> {
    effects.iter().find_map(|e| match e {
        Effect::AskBudget(p) => Some(p),
        _ => None,
    })
}

/// Runs one round with an `echo` call whose result comes back; returns the effects after it.
fn echo_round(m: &mut Machine<'_>, id: &str) -> Vec<Effect> {
    respond_with_calls(m, &[(id, "echo", "{}")]);
    step(m, ok(0, "x"))
}

fn budget(b: Budget) -> TurnOptions {
    TurnOptions { budget: b, ..TurnOptions::default() }
}

#[test]
fn a_step_budget_pauses_before_the_request_that_would_pass_it() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, budget(Budget { steps: Some(1), ..Budget::default() }));
    let out = echo_round(&mut m, "a");
    let p = pause(&out).expect("a pause").clone();
    assert_eq!((p.kind, p.limit, p.spent.steps, p.id.as_str()), (BudgetKind::Steps, 1.0, 1, "msg/budget-1"));
    // Asked first, then announced (event and stored notice), and no request is started.
    assert!(matches!(out[out.len() - 4], Effect::AskBudget(_)));
    assert!(
        matches!(&out[out.len() - 3], Effect::Emit(ChatEvent::BudgetPaused { id, kind: BudgetKind::Steps, .. }) if id == "msg/budget-1")
    );
    assert_eq!(
        notices(&out, NoticeKind::Budget),
        [
            "Paused before the next request: it would pass this turn's step budget of 1 step. Spent so far: 1 step with tools, 0 s, cost unknown."
        ]
    );
    assert!(!out.iter().any(|e| matches!(e, Effect::StartRequest { .. })));
    assert_eq!(m.phase(), Phase::BudgetPaused);
    // Inputs a pause does not expect change nothing.
    assert!(step(&mut m, usage()).is_empty());
}

#[test]
fn continue_allows_the_same_amount_again_or_what_the_person_types() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, budget(Budget { steps: Some(1), ..Budget::default() }));
    echo_round(&mut m, "a");
    let out = step(&mut m, Input::Budget(BudgetChoice::Continue { allowance: None }));
    assert!(matches!(
        &out[0],
        Effect::Emit(ChatEvent::BudgetResolved { choice: BudgetChoice::Continue { allowance: None }, .. })
    ));
    assert_eq!(notices(&out, NoticeKind::Budget), ["You chose to continue, with 1 step more."]);
    assert!(!request(&out).tools.is_empty(), "tools stay on");
    // One more step allowed: the next round pauses again, now asking about 2 steps.
    let out = echo_round(&mut m, "b");
    let p = pause(&out).expect("paused again");
    assert_eq!((p.spent.steps, p.id.as_str()), (2, "msg/budget-2"));
    let out = step(&mut m, Input::Budget(BudgetChoice::Continue { allowance: Some(3.0) }));
    assert_eq!(notices(&out, NoticeKind::Budget), ["You chose to continue, with 3 steps more."]);
    for id in ["c", "d"] {
        assert!(pause(&echo_round(&mut m, id)).is_none());
    }
    assert!(pause(&echo_round(&mut m, "e")).is_some(), "2 + 3 steps spent");
    assert_eq!(m.meter().limits().steps, Some(5));
}

#[test]
fn answer_now_makes_one_last_request_with_tools_off() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, budget(Budget { steps: Some(1), ..Budget::default() }));
    echo_round(&mut m, "a");
    let out = step(&mut m, Input::Budget(BudgetChoice::AnswerNow));
    assert!(notices(&out, NoticeKind::MaxIterations).is_empty(), "not the step limit");
    let req = request(&out);
    assert!(req.tools.is_empty());
    assert_eq!(req.tool_choice, ToolChoice::None);
    step(&mut m, text("Done."));
    let out = step(&mut m, finish(StopReason::Stop));
    assert_eq!(out[out.len() - 2..], done(FinishReason::Budget, Usage::default(), 1));
}

#[test]
fn stop_ends_the_turn_cleanly_keeping_everything() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, budget(Budget { steps: Some(1), ..Budget::default() }));
    step(&mut m, usage());
    echo_round(&mut m, "a");
    let out = step(&mut m, Input::Budget(BudgetChoice::Stop));
    assert_eq!(notices(&out, NoticeKind::Budget), ["You chose to stop at the budget; everything so far is kept."]);
    assert_eq!(out[out.len() - 2..], done(FinishReason::Budget, USAGE, 1));
    assert_eq!(tool_results_in(m.history()), [("a", "x", false)], "the result is kept");
}

#[test]
fn the_step_limit_is_a_pause_too_and_continue_raises_it() {
    let (config, registry) = (config(), registry());
    let options = TurnOptions { max_iterations: Some(1), ..TurnOptions::default() };
    let mut m = started(&config, &registry, options);
    let out = echo_round(&mut m, "a");
    let p = pause(&out).expect("paused at the step limit");
    assert_eq!((p.kind, p.limit), (BudgetKind::StepLimit, 1.0));
    let out = step(&mut m, Input::Budget(BudgetChoice::Continue { allowance: Some(2.0) }));
    assert!(!request(&out).tools.is_empty());
    assert!(pause(&echo_round(&mut m, "b")).is_none());
    assert!(pause(&echo_round(&mut m, "c")).is_some(), "1 + 2 steps");
    let out = step(&mut m, Input::Budget(BudgetChoice::Stop));
    assert_eq!(out[out.len() - 2..], done(FinishReason::Budget, Usage::default(), 3));
}

#[test]
fn a_time_budget_pauses_once_the_time_is_up_and_continue_counts_from_now() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, budget(Budget { time_secs: Some(60), ..Budget::default() }));
    m.set_elapsed(Duration::from_secs(59));
    assert!(pause(&echo_round(&mut m, "a")).is_none());
    m.set_elapsed(Duration::from_secs(61));
    let out = echo_round(&mut m, "b");
    let p = pause(&out).expect("time is up");
    assert_eq!((p.kind, p.limit, p.spent.elapsed_ms), (BudgetKind::Time, 60.0, 61_000));
    // The person took a while to decide: the allowance counts from the answer.
    m.set_elapsed(Duration::from_secs(100));
    step(&mut m, Input::Budget(BudgetChoice::Continue { allowance: Some(30.0) }));
    assert_eq!(m.meter().limits().time_secs, Some(130));
    m.set_elapsed(Duration::from_secs(129));
    assert!(pause(&echo_round(&mut m, "c")).is_none());
}

#[test]
fn a_cost_budget_without_a_price_is_said_once_and_never_pauses_on_nothing() {
    let (config, registry) = (config(), registry());
    let mut m = Machine::new(&config, &registry, input(budget(Budget { cost_usd: Some(0.5), ..Budget::default() })));
    let out = step(&mut m, Input::Start);
    assert_eq!(notices(&out, NoticeKind::Budget).len(), 1);
    assert!(notices(&out, NoticeKind::Budget)[0].contains("price of model is unknown"));
    assert!(pause(&echo_round(&mut m, "a")).is_none());
}

#[test]
fn stopping_while_paused_resolves_the_pause_and_ends_cancelled() {
    let (config, registry) = (config(), registry());
    let mut m = started(&config, &registry, budget(Budget { steps: Some(1), ..Budget::default() }));
    echo_round(&mut m, "a");
    let out = step(&mut m, Input::Cancel);
    assert!(
        matches!(&out[0], Effect::Emit(ChatEvent::BudgetResolved { id, choice: BudgetChoice::Stop }) if id == "msg/budget-1")
    );
    assert_eq!(out[1..], done(FinishReason::Cancelled, Usage::default(), 1));
}

#[test]
fn a_wrap_up_chosen_in_a_shared_meter_applies_without_asking_again() {
    let (config, registry) = (config(), registry());
    let meter = Arc::new(BudgetMeter::new(Budget { steps: Some(5), ..Budget::default() }));
    let options = TurnOptions { meter: Some(Arc::clone(&meter)), ..TurnOptions::default() };
    let mut m = started(&config, &registry, options);
    // A child turn sharing the meter: its step counts toward the caller's budget.
    assert_eq!(meter.spent(Duration::ZERO).steps, 1);
    meter.resolve(BudgetKind::Steps, BudgetScope::Turn, BudgetChoice::Stop, Duration::ZERO);
    let out = echo_round(&mut m, "a");
    assert!(pause(&out).is_none());
    assert_eq!(out[out.len() - 2..], done(FinishReason::Budget, Usage::default(), 1));
}

#[test]
fn a_cost_budget_pauses_when_spent_plus_the_next_input_would_reach_it() {
    let (config, registry) = (config(), registry());
    // $1 per million input and output tokens: USAGE (10 in, 5 out) costs $0.000015.
    let prices = switchboard_core::Prices { input: 1.0, output: 1.0, ..Default::default() };
    let options = TurnOptions {
        prices: Some(prices),
        budget: Budget { cost_usd: Some(0.000_016), ..Budget::default() },
        ..TurnOptions::default()
    };
    let mut m = started(&config, &registry, options);
    step(&mut m, usage());
    let out = echo_round(&mut m, "a");
    let p = pause(&out).expect("0.000015 spent + the next input reaches 0.000016");
    assert_eq!(p.kind, BudgetKind::Cost);
    assert!((p.spent.cost_usd - 0.000_015).abs() < 1e-12);
    assert!(!p.spent.cost_unknown);
    assert!(p.next_cost_usd.is_some_and(|c| c > 0.0));
    // Continue with $1 more from what is spent.
    step(&mut m, Input::Budget(BudgetChoice::Continue { allowance: Some(1.0) }));
    assert!((m.meter().limits().cost_usd.unwrap() - 1.000_015).abs() < 1e-9);
    assert!(pause(&echo_round(&mut m, "b")).is_none());
}

/// Options with a chat budget of `limits`, the chat having spent `steps` steps before the turn.
fn chat_budget(turn: Budget, limits: Budget, steps: u32) -> TurnOptions {
    let before = switchboard_core::BudgetSpent { steps, ..Default::default() };
    TurnOptions { budget: turn, chat_budget: switchboard_core::ChatBudget { limits, before }, ..TurnOptions::default() }
}

#[test]
fn a_chat_budget_counts_what_the_chat_spent_before_and_continue_raises_it() {
    let (config, registry) = (config(), registry());
    let chat = Budget { steps: Some(3), ..Budget::default() };
    let mut m = started(&config, &registry, chat_budget(Budget::default(), chat, 2));
    let out = echo_round(&mut m, "a");
    let p = pause(&out).expect("2 steps before + 1 now reach the chat's 3").clone();
    assert_eq!((p.kind, p.scope, p.limit, p.spent.steps), (BudgetKind::Steps, BudgetScope::Chat, 3.0, 3));
    assert!(out.iter().any(|e| matches!(e, Effect::Emit(ChatEvent::BudgetPaused { scope: BudgetScope::Chat, .. }))));
    assert!(notices(&out, NoticeKind::Budget)[0].contains("it would pass this chat's step budget of 3 steps"));
    let out = step(&mut m, Input::Budget(BudgetChoice::Continue { allowance: Some(2.0) }));
    assert_eq!(
        notices(&out, NoticeKind::Budget),
        ["You chose to continue, with 2 steps more: this chat's budget is now 5 steps."]
    );
    assert_eq!((m.meter().chat_limits().steps, m.meter().limits().steps), (Some(5), None));
    assert!(pause(&echo_round(&mut m, "b")).is_none());
    assert!(pause(&echo_round(&mut m, "c")).is_some(), "2 before + 3 now = 5");
}

#[test]
fn with_both_budgets_whichever_is_passed_first_pauses_and_says_whose() {
    let (config, registry) = (config(), registry());
    // The turn's 1 step is passed first; the chat's 10 are far off.
    let both =
        chat_budget(Budget { steps: Some(1), ..Budget::default() }, Budget { steps: Some(10), ..Budget::default() }, 0);
    let mut m = started(&config, &registry, both);
    let p = pause(&echo_round(&mut m, "a")).expect("the turn's").clone();
    assert_eq!((p.scope, p.limit, p.spent.steps), (BudgetScope::Turn, 1.0, 1));
    // The chat's 2 (with 1 spent before) is passed first; the turn's 5 are far off.
    let both =
        chat_budget(Budget { steps: Some(5), ..Budget::default() }, Budget { steps: Some(2), ..Budget::default() }, 1);
    let mut m = started(&config, &registry, both);
    let out = echo_round(&mut m, "a");
    let p = pause(&out).expect("the chat's").clone();
    assert_eq!((p.scope, p.limit, p.spent.steps), (BudgetScope::Chat, 2.0, 2));
    assert!(notices(&out, NoticeKind::Budget)[0].contains("this chat's step budget of 2 steps"));
}
