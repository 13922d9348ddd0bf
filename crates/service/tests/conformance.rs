//! One conformance suite for every provider API: each scenario runs the same API-neutral mock
//! script through the service against OpenAI Chat Completions, the OpenAI Responses API,
//! Anthropic Messages and Gemini (one mock server per API, all from the same `Reply` values),
//! and asserts that the four runs produce the same `ChatEvent` sequence and the same stored
//! assistant message, once what legitimately differs (ids, the profile name, the clock in
//! `get_time`'s output, durations, error and notice wording, provider state) is left out.
//! Per-API request facts (forcing spelled right, no tools with tools off, keys in their
//! headers) are asserted on the recorded requests.

use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::turn::{ApprovalDecision, FixedApprover};
use switchboard_core::{ChatEvent, EventSink, GenerationOptions, ReasoningEffort};
use switchboard_mock_provider::{ErrorCategory, MockServer, RecordedRequest, Reply, Script, Step, StreamOptions};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::{ProfileOptions, ProviderProfile, SendRequest};
use switchboard_store::{Store, StoredMessage};

/// Every API kind, the reference (OpenAI Chat) first.
const KINDS: [&str; 4] = ["openai", "openai-responses", "anthropic", "gemini"];
const MODEL: &str = "mock-model";
const QUESTION: &str = "What time is it?";

/// One scenario: the replies every API's mock hands out, and how the turn is asked.
#[derive(Clone)]
struct Case {
    replies: Vec<Reply>,
    forced: Vec<String>,
    use_tools: bool,
    options: ProfileOptions,
    /// Stop the turn (`service.stop`) when its first text arrives.
    stop_at_first_text: bool,
}

impl Case {
    fn new(replies: impl IntoIterator<Item = Reply>) -> Case {
        Case {
            replies: replies.into_iter().collect(),
            forced: Vec::new(),
            use_tools: true,
            options: ProfileOptions::default(),
            stop_at_first_text: false,
        }
    }
}

/// What one API's run left behind.
struct Run {
    kind: &'static str,
    events: Vec<ChatEvent>,
    stored: StoredMessage,
    requests: Vec<RecordedRequest>,
}

fn key_of(kind: &str) -> String {
    format!("sk-conformance-{kind}")
}

/// Collects events; stops the turn at the first text when asked to.
struct Sink {
    events: Mutex<Vec<ChatEvent>>,
    stop: Option<(Service, String)>,
}

impl EventSink for Sink {
    fn emit(&self, event: ChatEvent) {
        let first_text = matches!(event, ChatEvent::TextDelta { .. });
        let mut events = self.events.lock().unwrap();
        let had_text = events.iter().any(|e| matches!(e, ChatEvent::TextDelta { .. }));
        events.push(event);
        drop(events);
        if first_text
            && !had_text
            && let Some((service, message_id)) = &self.stop
        {
            assert!(service.stop(message_id), "the turn is running");
        }
    }
}

async fn run_kind(kind: &'static str, case: Case) -> Run {
    let mock = MockServer::start(Script::new(case.replies)).await;
    let service = Service::new(Store::open_in_memory().unwrap(), Arc::new(MemoryStore::new())).unwrap();
    let mut settings = service.settings().unwrap();
    settings.limits.idle_timeout_secs = Some(5);
    settings.retry.max_retries = Some(1);
    settings.retry.base_delay_ms = Some(100);
    service.update_settings(&settings).unwrap();
    let base_url = if kind == "gemini" { format!("http://{}/v1beta", mock.addr()) } else { mock.base_url() };
    let profile = ProviderProfile {
        name: "p".into(),
        kind: kind.into(),
        base_url,
        model: Some(MODEL.into()),
        options: case.options,
    };
    service.add_provider(&profile, true).unwrap();
    service.set_key("p", &key_of(kind)).unwrap();

    let request = SendRequest {
        provider: Some("p".into()),
        forced: case.forced,
        use_tools: case.use_tools,
        ..SendRequest::text(None, QUESTION)
    };
    let turn = service.prepare(request).unwrap();
    let conversation = turn.started.conversation_id.clone();
    let stop = case.stop_at_first_text.then(|| (service.clone(), turn.started.message_id.clone()));
    let sink = Arc::new(Sink { events: Mutex::default(), stop });
    let approver = FixedApprover(ApprovalDecision::Once);
    let report = tokio::time::timeout(Duration::from_secs(25), service.run(turn, sink.clone(), Arc::new(approver)))
        .await
        .unwrap_or_else(|_| panic!("{kind}: the turn stalled"));
    assert!(report.storage_error.is_none(), "{kind}: {:?}", report.storage_error);
    let view = service.open(&conversation).unwrap();
    assert_eq!(view.messages.len(), 2, "{kind}: question and answer stored");
    let stored = view.messages.last().unwrap().clone();
    let events = sink.events.lock().unwrap().clone();
    let requests = mock.requests();
    for r in &requests {
        assert_key_header(kind, r);
    }
    Run { kind, events, stored, requests }
}

/// The key goes in the header the API reads.
fn assert_key_header(kind: &str, r: &RecordedRequest) {
    let key = key_of(kind);
    match kind {
        "anthropic" => {
            assert_eq!(r.header("x-api-key"), Some(key.as_str()), "{kind}: {:?}", r.headers);
            assert!(r.header("authorization").is_none(), "{kind}: no bearer token");
        }
        "gemini" => {
            assert_eq!(r.header("x-goog-api-key"), Some(key.as_str()), "{kind}: {:?}", r.headers);
            assert!(!r.path.contains(&key), "{kind}: the key is not in the URL");
        }
        _ => assert_eq!(r.header("authorization"), Some(format!("Bearer {key}").as_str()), "{kind}"),
    }
}

/// Runs `case` on every API at once.
async fn run_all(case: Case) -> Vec<Run> {
    futures::future::join_all(KINDS.map(|kind| run_kind(kind, case.clone()))).await
}

/// An event without what legitimately differs between APIs and runs.
fn normalize(event: &ChatEvent) -> Option<Value> {
    if matches!(event, ChatEvent::ProviderState { .. }) {
        // Provider-specific data for the store; shells never see it.
        return None;
    }
    let mut v = serde_json::to_value(event).unwrap();
    let o = v.as_object_mut().unwrap();
    for k in ["conversationId", "messageId", "userMessageId", "provider", "id", "durationMs"] {
        o.remove(k);
    }
    match o["type"].as_str().unwrap() {
        // Kind and retryable, not wording.
        "error" | "notice" => {
            o.remove("message");
        }
        // Each model family counts its own way: that it is said, not the figures.
        "context" => o.retain(|k, _| k == "type"),
        // get_time's output holds the clock; other outputs (refusals, invalid arguments) stay.
        "toolResult" if o["output"].as_str().is_some_and(|s| s.contains("\"unix\"")) => {
            o.insert("output".into(), json!("<clock>"));
        }
        _ => {}
    }
    Some(v)
}

fn normalized(events: &[ChatEvent]) -> Vec<Value> {
    events.iter().filter_map(normalize).collect()
}

/// The stored assistant message without ids, the profile name, timestamps or wording.
fn stored_facts(m: &StoredMessage) -> Value {
    json!({
        "content": m.content,
        "reasoning": m.reasoning,
        "status": m.status,
        "finishReason": m.finish_reason,
        "usage": m.usage,
        "toolCallsMade": m.tool_calls_made,
        "errorKind": m.error.as_ref().map(|e| e.kind),
        "notices": m.notices.iter().map(|n| n.kind).collect::<Vec<_>>(),
        "toolCalls": m.tool_calls.iter().map(|c| json!({
            "name": c.name,
            "arguments": c.arguments,
            "textOffset": c.text_offset,
            "iteration": c.iteration,
            "index": c.index,
            "status": c.status,
            "resultStatus": c.result.as_ref().map(|r| r.status),
        })).collect::<Vec<_>>(),
    })
}

/// Sets every `reasoningTokens` in `v` to 0.
fn zero_reasoning_tokens(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, v) in o.iter_mut() {
                if k == "reasoningTokens" {
                    *v = json!(0);
                } else {
                    zero_reasoning_tokens(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(zero_reasoning_tokens),
        _ => {}
    }
}

/// A line-by-line view of two sequences, marking where they differ.
fn diff(reference: &[Value], other: &[Value]) -> String {
    let mut out = String::new();
    for i in 0..reference.len().max(other.len()) {
        let a = reference.get(i).map_or("(none)".to_owned(), Value::to_string);
        let b = other.get(i).map_or("(none)".to_owned(), Value::to_string);
        if a == b {
            out.push_str(&format!("    {i:>2}  {a}\n"));
        } else {
            out.push_str(&format!("  - {i:>2}  {a}\n  + {i:>2}  {b}\n"));
        }
    }
    out
}

/// Asserts every run equals the reference (OpenAI Chat) in events and stored rows; reports every
/// API that differs at once. Returns the reference's normalized events.
fn assert_same(runs: &[Run]) -> Vec<Value> {
    let reference = &runs[0];
    let ref_events = normalized(&reference.events);
    let ref_stored = stored_facts(&reference.stored);
    if std::env::var_os("CONFORMANCE_DUMP").is_some() {
        for run in runs {
            eprintln!("== {}", run.kind);
            for e in normalized(&run.events) {
                eprintln!("   {e}");
            }
            eprintln!("   stored: {}", stored_facts(&run.stored));
        }
    }
    let mut failures = Vec::new();
    for run in &runs[1..] {
        let (mut ref_events, mut ref_stored) = (ref_events.clone(), ref_stored.clone());
        let (mut events, mut stored) = (normalized(&run.events), stored_facts(&run.stored));
        if run.kind == "anthropic" {
            // The Messages API counts thinking inside `output_tokens` and reports no breakdown,
            // so Anthropic's reasoning token count is 0 where the others report it.
            for v in ref_events.iter_mut().chain(events.iter_mut()).chain([&mut ref_stored, &mut stored]) {
                zero_reasoning_tokens(v);
            }
        }
        if events != ref_events {
            failures.push(format!(
                "events of {} differ from {} (- {}, + {}):\n{}",
                run.kind,
                reference.kind,
                reference.kind,
                run.kind,
                diff(&ref_events, &events)
            ));
        }
        if stored != ref_stored {
            failures.push(format!(
                "stored message of {} differs from {}:\n  - {ref_stored}\n  + {stored}",
                run.kind, reference.kind
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    ref_events
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn last(events: &[Value]) -> &Value {
    events.last().unwrap()
}

/// The names of the tools a request offers, in the API's own shape.
fn offered(kind: &str, body: &Value) -> Vec<String> {
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    let names = |v: &Value, ptr: &str| v.pointer(ptr).and_then(Value::as_str).map(str::to_owned);
    match kind {
        "openai" => tools.iter().filter_map(|t| names(t, "/function/name")).collect(),
        "gemini" => tools
            .iter()
            .flat_map(|t| t["functionDeclarations"].as_array().cloned().unwrap_or_default())
            .filter_map(|d| names(&d, "/name"))
            .collect(),
        _ => tools.iter().filter_map(|t| names(t, "/name")).collect(),
    }
}

/// How the request says which tools to call (absent: `null`).
fn forcing(kind: &str, body: &Value) -> Value {
    match kind {
        "gemini" => body.pointer("/toolConfig/functionCallingConfig").cloned().unwrap_or(Value::Null),
        _ => body.get("tool_choice").cloned().unwrap_or(Value::Null),
    }
}

/// Whether a request leaves the choice of tools to the model.
fn is_auto(kind: &str, choice: &Value) -> bool {
    match kind {
        "anthropic" => *choice == json!({"type": "auto"}) || choice.is_null(),
        "gemini" => choice.is_null() || choice["mode"] == "AUTO",
        _ => *choice == json!("auto") || choice.is_null(),
    }
}

fn usage_step(prompt: u64, completion: u64, reasoning: u64, cached: u64) -> Step {
    Step::Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        reasoning_tokens: reasoning,
        cached_tokens: cached,
    }
}

fn call_then(text: &str, calls: &[(&str, &str, &str)]) -> Reply {
    Reply::text_then_tool_calls(text, calls)
}

// 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_only() {
    let reply = Reply::stream([
        Step::text("Hello! Ça va? 👋 こんにちは。"),
        Step::finish("stop"),
        Step::usage(12, 7),
        Step::Done,
    ])
    .with_options(StreamOptions { text_chunk_chars: Some(5), ..Default::default() });
    let runs = run_all(Case::new([reply])).await;
    let events = assert_same(&runs);
    assert_eq!(runs[0].stored.content, "Hello! Ça va? 👋 こんにちは。");
    assert_eq!(last(&events)["finishReason"], "stop");
    assert_eq!(types(&events).first(), Some(&"started"));
    for run in &runs {
        assert_eq!(run.requests.len(), 1, "{}", run.kind);
    }
}

// 2.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_then_one_tool_call_counts_the_offset_in_chars() {
    let text = "Let me check 🕐 — 東京の時刻を確認します。";
    let runs = run_all(Case::new([
        call_then(text, &[("call_1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)]),
        Reply::text("It is noon in Tokyo."),
    ]))
    .await;
    let events = assert_same(&runs);
    let call = events.iter().find(|e| e["type"] == "toolCall").unwrap();
    assert_eq!(call["textOffset"], text.chars().count(), "{call}");
    assert_eq!((call["iteration"].as_u64(), call["index"].as_u64()), (Some(1), Some(0)));
    assert_eq!(call["arguments"], r#"{"timezone":"Asia/Tokyo"}"#);
    assert_eq!(runs[0].stored.content, format!("{text}It is noon in Tokyo."));
    assert_eq!(runs[0].stored.tool_calls[0].result.as_ref().unwrap().status, switchboard_core::ToolStatus::Ok);
}

// 3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_in_one_response() {
    let runs = run_all(Case::new([
        Reply::parallel_tool_calls(&[
            ("call_a", "get_time", r#"{"timezone":"UTC"}"#),
            ("call_b", "get_time", r#"{"timezone":"Europe/Paris"}"#),
        ]),
        Reply::text("Both zones answered."),
    ]))
    .await;
    let events = assert_same(&runs);
    let calls: Vec<_> = events.iter().filter(|e| e["type"] == "toolCall").collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["index"], 0);
    assert_eq!(calls[1]["index"], 1);
    assert_eq!(calls[1]["arguments"], r#"{"timezone":"Europe/Paris"}"#);
    assert!(calls.iter().all(|c| c["iteration"] == 1));
    assert_eq!(last(&events)["toolCallsMade"], 2);
}

// 4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_iterations() {
    let runs = run_all(Case::new([
        call_then("First UTC. ", &[("c1", "get_time", r#"{"timezone":"UTC"}"#)]),
        call_then("Now Paris. ", &[("c2", "get_time", r#"{"timezone":"Europe/Paris"}"#)]),
        Reply::text("Done: both known."),
    ]))
    .await;
    let events = assert_same(&runs);
    let iterations: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "toolCall")
        .map(|e| (e["iteration"].clone(), e["textOffset"].clone()))
        .collect();
    assert_eq!(iterations, [(json!(1), json!(11)), (json!(2), json!(22))]);
    assert_eq!(runs[0].stored.content, "First UTC. Now Paris. Done: both known.");
    for run in &runs {
        assert_eq!(run.requests.len(), 3, "{}", run.kind);
    }
}

// 5.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_forced_tool_is_spelled_the_apis_way() {
    let mut case =
        Case::new([Reply::tool_call("call_1", "get_time", r#"{"timezone":"UTC"}"#), Reply::text("It is noon.")]);
    case.forced = vec!["get_time".into()];
    let runs = run_all(case).await;
    assert_same(&runs);
    for run in &runs {
        let (kind, first) = (run.kind, &run.requests[0].body);
        let want = match kind {
            "openai" => json!({"type": "function", "function": {"name": "get_time"}}),
            "openai-responses" => json!({"type": "function", "name": "get_time"}),
            "anthropic" => json!({"type": "tool", "name": "get_time", "disable_parallel_tool_use": true}),
            _ => json!({"mode": "ANY", "allowedFunctionNames": ["get_time"]}),
        };
        assert_eq!(forcing(kind, first), want, "{kind}: {first:#}");
        assert_eq!(offered(kind, first), ["get_time"], "{kind}: only the forced tool is offered");
        let second = &run.requests[1].body;
        assert!(is_auto(kind, &forcing(kind, second)), "{kind}: forcing is for the first iteration: {second:#}");
        assert!(offered(kind, second).len() > 1, "{kind}: every tool again: {:?}", offered(kind, second));
    }
}

// 6.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_forced_tools_are_spelled_the_apis_way() {
    let mut case = Case::new([
        call_then(
            "",
            &[
                ("call_1", "get_time", r#"{"timezone":"UTC"}"#),
                ("call_2", "web_fetch", r#"{"url":"http://127.0.0.1:9/"}"#),
            ],
        ),
        Reply::text("One worked, one was refused."),
    ]);
    case.forced = vec!["get_time".into(), "web_fetch".into()];
    let runs = run_all(case).await;
    let events = assert_same(&runs);
    let statuses: Vec<_> = events.iter().filter(|e| e["type"] == "toolResult").map(|e| e["status"].clone()).collect();
    assert_eq!(statuses, [json!("ok"), json!("error")], "web_fetch refuses a local address: {events:#?}");
    for run in &runs {
        let (kind, first) = (run.kind, &run.requests[0].body);
        let want = match kind {
            "openai" | "openai-responses" => json!("required"),
            "anthropic" => json!({"type": "any"}),
            _ => json!({"mode": "ANY", "allowedFunctionNames": ["get_time", "web_fetch"]}),
        };
        assert_eq!(forcing(kind, first), want, "{kind}: {first:#}");
        let mut names = offered(kind, first);
        names.sort();
        assert_eq!(names, ["get_time", "web_fetch"], "{kind}: exactly the forced tools are offered");
        assert!(is_auto(kind, &forcing(kind, &run.requests[1].body)), "{kind}");
    }
}

// 7.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_off_offers_no_tools() {
    let mut case = Case::new([Reply::text("No tools needed.")]);
    case.use_tools = false;
    let runs = run_all(case).await;
    let events = assert_same(&runs);
    assert!(!events.iter().any(|e| e["type"] == "notice"), "{events:#?}");
    for run in &runs {
        let body = &run.requests[0].body;
        assert!(offered(run.kind, body).is_empty(), "{}: {body:#}", run.kind);
        assert!(body.get("tools").is_none(), "{}: no tools key: {body:#}", run.kind);
    }
}

// 8.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_split_across_chunks_and_utf8_boundaries() {
    let text = "Größe: 測定中… 🧪 ";
    let arguments = r#"{"timezone":"Amérique/Zürich—東京🗼"}"#;
    let split = StreamOptions {
        text_chunk_chars: Some(3),
        args_chunk_chars: Some(3),
        split_bytes: Some(7),
        ..Default::default()
    };
    let runs = run_all(Case::new([
        call_then(text, &[("call_1", "get_time", arguments)]).with_options(split.clone()),
        Reply::text("Unknown zone, sorry. ☹").with_options(split),
    ]))
    .await;
    let events = assert_same(&runs);
    let call = events.iter().find(|e| e["type"] == "toolCall").unwrap();
    assert_eq!(call["arguments"], arguments);
    assert_eq!(call["textOffset"], text.chars().count());
    let result = events.iter().find(|e| e["type"] == "toolResult").unwrap();
    assert_eq!(result["status"], "error", "an unknown zone: {result}");
    assert_eq!(runs[0].stored.content, format!("{text}Unknown zone, sorry. ☹"));
}

// 9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_streams_and_is_stored() {
    let mut case = Case::new([
        Reply::stream([
            Step::Reasoning { text: "The person wants the time; get_time knows it. 🤔".into() },
            Step::tool_call("call_1", "get_time", r#"{"timezone":"UTC"}"#),
            Step::finish("tool_calls"),
            usage_step(20, 15, 8, 0),
            Step::Done,
        ]),
        Reply::stream([
            Step::Reasoning { text: "Now answer briefly.".into() },
            Step::text("It is noon."),
            Step::finish("stop"),
            usage_step(40, 10, 4, 0),
            Step::Done,
        ]),
    ]);
    case.options.generation =
        GenerationOptions { reasoning_effort: Some(ReasoningEffort::Medium), ..Default::default() };
    let runs = run_all(case).await;
    let events = assert_same(&runs);
    let reasoning: String =
        events.iter().filter(|e| e["type"] == "reasoningDelta").map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(reasoning, "The person wants the time; get_time knows it. 🤔Now answer briefly.");
    assert_eq!(runs[0].stored.content, "It is noon.");
    assert!(!runs[0].stored.reasoning.is_empty());
    assert_eq!(last(&events)["usage"]["reasoningTokens"], 12);
    // Anthropic's thinking block went back signed (the strict mock checks the signature).
    let anthropic = runs.iter().find(|r| r.kind == "anthropic").unwrap();
    let sent = &anthropic.requests[1].messages()[1]["content"][0];
    assert_eq!(sent["type"], "thinking", "{sent:#}");
    assert_eq!(
        sent["signature"],
        switchboard_mock_provider::signatures::thinking_signature("The person wants the time; get_time knows it. 🤔")
    );
}

// 10.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_with_cached_tokens_is_summed_over_iterations() {
    let runs = run_all(Case::new([
        Reply::stream([
            Step::tool_call("call_1", "get_time", r#"{"timezone":"UTC"}"#),
            Step::finish("tool_calls"),
            usage_step(100, 20, 0, 40),
            Step::Done,
        ]),
        Reply::stream([Step::text("Noon."), Step::finish("stop"), usage_step(150, 30, 0, 90), Step::Done]),
    ]))
    .await;
    let events = assert_same(&runs);
    let want = json!({"promptTokens": 250, "completionTokens": 50, "reasoningTokens": 0, "cachedTokens": 130, "cacheWriteTokens": 0});
    assert_eq!(last(&events)["usage"], want);
    let usages: Vec<_> =
        events.iter().filter(|e| e["type"] == "usage").map(|e| e["usage"]["cachedTokens"].clone()).collect();
    assert_eq!(usages, [json!(40), json!(90)]);
    assert_eq!(serde_json::to_value(runs[0].stored.usage).unwrap(), want);
}

// 11. Every error class: the kind, whether it is retryable, the retry notices and the kept text.

/// Runs `replies` everywhere, asserts the runs agree, and that the turn ended with an error of
/// `kind`, `retryable`, after `retries` retry notices, keeping `kept` as the answer.
async fn error_case(replies: Vec<Reply>, kind: &str, retryable: bool, retries: usize, kept: &str) -> Vec<Run> {
    let runs = run_all(Case::new(replies)).await;
    let events = assert_same(&runs);
    let error = events.iter().find(|e| e["type"] == "error").unwrap_or_else(|| panic!("an error: {events:#?}"));
    assert_eq!((error["kind"].as_str(), error["retryable"].as_bool()), (Some(kind), Some(retryable)), "{events:#?}");
    let notices = events.iter().filter(|e| e["type"] == "notice" && e["kind"] == "retrying").count();
    assert_eq!(notices, retries, "{events:#?}");
    assert_eq!(last(&events)["finishReason"], "error");
    assert_eq!(runs[0].stored.content, kept);
    assert_eq!(serde_json::to_value(runs[0].stored.status).unwrap(), "error");
    runs
}

fn twice(reply: Reply) -> Vec<Reply> {
    vec![reply.clone(), reply]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_401_rejected_key() {
    error_case(twice(Reply::api_error(ErrorCategory::Auth)), "auth", false, 0, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_403_permission() {
    error_case(twice(Reply::api_error(ErrorCategory::Permission)), "auth", false, 0, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_429_with_retry_after() {
    let runs =
        error_case(twice(Reply::api_error(ErrorCategory::RateLimit).with_retry_after(1)), "rateLimited", true, 1, "")
            .await;
    for run in &runs {
        assert_eq!(run.requests.len(), 2, "{}: retried once", run.kind);
        let notice = run.stored.notices.first().map(|n| n.message.clone()).unwrap_or_default();
        assert!(notice.contains("Retrying in 1.0 s"), "{}: the server's wait is honored: {notice}", run.kind);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_overloaded() {
    error_case(twice(Reply::api_error(ErrorCategory::Overloaded)), "overloaded", true, 1, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_context_length_exceeded() {
    error_case(twice(Reply::api_error(ErrorCategory::ContextLength)), "contextLength", false, 0, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_500() {
    error_case(twice(Reply::api_error(ErrorCategory::Server)), "server", true, 1, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_html_page_from_a_gateway() {
    let page =
        "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>";
    error_case(twice(Reply::html(502, page)), "server", true, 1, "").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_mid_stream_keeps_the_partial_text() {
    let reply = Reply::stream([
        Step::text("Partial answer"),
        Step::ErrorObject { message: "Internal error while streaming.".into(), code: None },
    ]);
    error_case(twice(reply), "server", true, 0, "Partial answer").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_mid_stream_before_any_output_is_retried() {
    let runs = run_all(Case::new([
        Reply::stream([Step::ErrorObject { message: "Internal error while streaming.".into(), code: None }]),
        Reply::text("Recovered."),
    ]))
    .await;
    let events = assert_same(&runs);
    assert_eq!(types(&events).iter().filter(|t| **t == "notice").count(), 1, "{events:#?}");
    assert_eq!(last(&events)["finishReason"], "stop");
    assert_eq!(runs[0].stored.content, "Recovered.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_cut_connection_keeps_the_partial_text() {
    error_case(twice(Reply::stream([Step::text("Partial answer"), Step::Drop])), "network", true, 0, "Partial answer")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn error_stall_times_out_and_keeps_the_partial_text() {
    error_case(twice(Reply::stream([Step::text("Partial answer"), Step::Stall])), "timeout", true, 0, "Partial answer")
        .await;
}

// 12.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_mid_stream() {
    let mut case = Case::new([Reply::stream([Step::text("Partial answer"), Step::Stall])]);
    case.stop_at_first_text = true;
    let runs = run_all(case).await;
    let events = assert_same(&runs);
    assert_eq!(last(&events)["finishReason"], "cancelled");
    assert!(!events.iter().any(|e| e["type"] == "error"), "{events:#?}");
    assert_eq!(runs[0].stored.content, "Partial answer");
    assert_eq!(serde_json::to_value(runs[0].stored.status).unwrap(), "cancelled");
}

// Beyond the twelve: how a response ends, and arguments with several keys.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_limit_ends_the_turn_as_length() {
    let reply =
        Reply::stream([Step::text("This answer was cut"), Step::finish("length"), Step::usage(10, 50), Step::Done]);
    let runs = run_all(Case::new([reply])).await;
    let events = assert_same(&runs);
    assert_eq!(last(&events)["finishReason"], "length");
    assert_eq!(runs[0].stored.content, "This answer was cut");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filtered_answer_ends_as_content_filter_and_says_so() {
    let reply =
        Reply::stream([Step::text("I can't continue"), Step::finish("content_filter"), Step::usage(10, 5), Step::Done]);
    let runs = run_all(Case::new([reply])).await;
    let events = assert_same(&runs);
    assert_eq!(last(&events)["finishReason"], "contentFilter");
    assert!(events.iter().any(|e| e["type"] == "notice" && e["kind"] == "filtered"), "the person is told why");
    assert_eq!(runs[0].stored.content, "I can't continue", "what arrived before is kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_with_several_keys_and_numbers() {
    let arguments = r#"{"max_chars":500,"url":"http://127.0.0.1:9/страница?q=日本"}"#;
    let runs = run_all(Case::new([
        call_then("", &[("call_1", "web_fetch", arguments)]),
        Reply::text("It could not be fetched."),
    ]))
    .await;
    let events = assert_same(&runs);
    let call = events.iter().find(|e| e["type"] == "toolCall").unwrap();
    assert_eq!(call["arguments"], arguments);
    let result = events.iter().find(|e| e["type"] == "toolResult").unwrap();
    assert_eq!(result["status"], "error", "web_fetch refuses a local address: {result}");
}
