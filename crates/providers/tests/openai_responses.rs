//! The Responses provider end to end over loopback HTTP against the mock provider's Responses
//! API: a length finish as Chat reads it, headers, the body the strict mock accepts, errors,
//! model listing, chaining and its fallback. Stream parsing at every byte split is in the
//! parser table (`tests/parsers.rs`).

use futures::StreamExt;
use serde_json::json;
use switchboard_core::provider::{GenerationOptions, ReasoningEffort, StopReason, ToolSpec};
use switchboard_core::tool::SecretValue;
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ProviderState, ToolCall, ToolChoice,
};
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};
use switchboard_providers::openai_responses::OpenAiResponses;
use switchboard_providers::{OpenAiChat, OpenAiConfig};

const KEY: &str = "sk-test-responses-key-0123456789";

fn request(messages: Vec<Message>) -> ProviderRequest {
    ProviderRequest {
        model: "gpt-test".into(),
        system: Some("Be brief.".into()),
        messages,
        tools: vec![ToolSpec {
            name: "get_time".into(),
            description: "The time.".into(),
            parameters: json!({"type":"object","properties":{"timezone":{"type":"string"}}}),
        }],
        tool_choice: ToolChoice::Auto,
        options: Default::default(),
    }
}

fn question() -> Vec<Message> {
    vec![Message::user("what time is it in Tokyo?")]
}

fn responses(server: &MockServer) -> OpenAiResponses {
    OpenAiResponses::new(OpenAiConfig { base_url: server.base_url(), api_key: Some(SecretValue::new(KEY)) }).unwrap()
}

async fn run_responses(server: &MockServer, req: ProviderRequest) -> Vec<Result<ProviderEvent, ProviderError>> {
    responses(server).stream(req).collect().await
}

async fn run_chat(steps: Vec<Step>, options: StreamOptions) -> Vec<Result<ProviderEvent, ProviderError>> {
    let server = MockServer::start(Script::new([Reply::Stream { steps, options }])).await;
    let chat = OpenAiChat::new(OpenAiConfig { base_url: server.base_url(), api_key: None }).unwrap();
    canonical(chat.stream(request(question())).collect().await)
}

/// The events that mean something: keep-alives are dropped, response ids blanked (each API has
/// its own), and runs of text or reasoning deltas joined (each API chunks them its own way).
fn canonical(items: Vec<Result<ProviderEvent, ProviderError>>) -> Vec<Result<ProviderEvent, ProviderError>> {
    let mut out: Vec<Result<ProviderEvent, ProviderError>> = Vec::new();
    for item in items {
        match item {
            // Keep-alives are not events of the answer; provider state is each API's own.
            Ok(ProviderEvent::KeepAlive | ProviderEvent::State(_)) => {}
            Ok(ProviderEvent::Finish { reason, .. }) => {
                out.push(Ok(ProviderEvent::Finish { reason, response_id: None }))
            }
            Ok(ProviderEvent::TextDelta(t)) => match out.last_mut() {
                Some(Ok(ProviderEvent::TextDelta(prev))) => prev.push_str(&t),
                _ => out.push(Ok(ProviderEvent::TextDelta(t))),
            },
            Ok(ProviderEvent::ReasoningDelta(t)) => match out.last_mut() {
                Some(Ok(ProviderEvent::ReasoningDelta(prev))) => prev.push_str(&t),
                _ => out.push(Ok(ProviderEvent::ReasoningDelta(t))),
            },
            other => out.push(other),
        }
    }
    out
}

#[tokio::test]
async fn a_length_finish_is_length_on_both_apis_and_the_response_id_is_kept() {
    let steps = || vec![Step::text("Once upon"), Step::finish("length"), Step::usage(4, 2), Step::Done];
    let expected = run_chat(steps(), StreamOptions::default()).await;
    let server = MockServer::start(Script::new([Reply::stream(steps())])).await;
    let raw = run_responses(&server, request(question())).await;
    assert_eq!(
        raw.last().unwrap(),
        &Ok(ProviderEvent::Finish { reason: StopReason::Length, response_id: Some("resp_mock_1".into()) })
    );
    assert_eq!(canonical(raw), expected);
}

#[tokio::test]
async fn the_request_carries_the_key_and_a_body_the_strict_mock_accepts() {
    let server = MockServer::start(Script::new([Reply::text("ok")])).await;
    let history = vec![
        Message::user("q"),
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall { id: "call_1".into(), name: "get_time".into(), arguments: "{".into() }],
            state: None,
        },
        Message::Tool {
            images: Default::default(),
            call_id: "call_1".into(),
            name: "get_time".into(),
            content: "bad".into(),
            is_error: true,
        },
        Message::Assistant { text: " ".into(), tool_calls: vec![], state: None },
        Message::user("again"),
    ];
    let items = run_responses(&server, request(history)).await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "the mock refuses empty texts, orphan outputs and a missing model");
    let r = &requests[0];
    assert_eq!(r.path, "/v1/responses");
    assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body["instructions"], "Be brief.");
    assert_eq!(r.body["stream"], true);
    for absent in ["store", "include", "previous_response_id", "max_output_tokens", "reasoning"] {
        assert!(r.body.get(absent).is_none(), "{absent} is left to the API: {}", r.body);
    }
    assert_eq!(r.body["tools"][0]["name"], "get_time");
    assert_eq!(r.body["tools"][0]["strict"], false, "an open schema is not strict");
    let kinds: Vec<&str> = r.body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().or(i["role"].as_str()).unwrap())
        .collect();
    assert_eq!(kinds, ["user", "function_call", "function_call_output", "user"]);
}

#[tokio::test]
async fn http_errors_in_openais_shape_say_what_to_do_and_never_quote_the_key() {
    let body =
        |t: &str, code: &str, m: &str| json!({"error":{"message":m,"type":t,"param":null,"code":code}}).to_string();
    let cases = [
        (
            Reply::http(401, body("invalid_request_error", "invalid_api_key", "Incorrect API key")),
            ErrorKind::Auth,
            "401",
        ),
        (
            Reply::http(404, body("invalid_request_error", "model_not_found", "No such model")),
            ErrorKind::NotFound,
            "No such model",
        ),
        (
            Reply::http(429, body("insufficient_quota", "insufficient_quota", "You exceeded your current quota")),
            ErrorKind::Auth,
            "billing settings",
        ),
        (
            Reply::http(
                400,
                body("invalid_request_error", "context_length_exceeded", "Your input exceeds the context window"),
            ),
            ErrorKind::ContextLength,
            "context window",
        ),
        (Reply::rate_limited(3), ErrorKind::RateLimited, "wait 3 s"),
    ];
    for (reply, kind, needle) in cases {
        let server = MockServer::start(Script::new([reply])).await;
        let items = run_responses(&server, request(question())).await;
        assert_eq!(items.len(), 1, "{items:?}");
        let e = items[0].clone().unwrap_err();
        assert_eq!(e.kind, kind, "{}", e.message);
        assert!(e.message.contains(needle), "{:?} lacks {needle:?}", e.message);
        assert!(!e.message.contains(KEY) && !format!("{e:?}").contains(KEY));
    }
}

#[tokio::test]
async fn a_failed_response_mid_stream_keeps_what_came_before_and_is_retryable_when_overloaded() {
    let server = MockServer::start(Script::new([Reply::stream([
        Step::text("Part"),
        Step::ErrorObject { message: "Overloaded".into(), code: Some("overloaded_error".into()) },
    ])]))
    .await;
    let items = canonical(run_responses(&server, request(question())).await);
    assert_eq!(items[0], Ok(ProviderEvent::TextDelta("Part".into())));
    let e = items[1].clone().unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overloaded);
    assert!(e.is_retryable() && e.message.contains("Overloaded"), "{}", e.message);
    assert_eq!(items.len(), 2);

    // An error event before the response began, with a code no retry can fix.
    let server = MockServer::start(Script::new([Reply::stream([Step::ErrorObject {
        message: "Your prompt was flagged.".into(),
        code: Some("invalid_prompt".into()),
    }])]))
    .await;
    let items = canonical(run_responses(&server, request(question())).await);
    let e = items[0].clone().unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadRequest);
    assert!(!e.is_retryable() && e.message.contains("flagged"), "{}", e.message);
}

#[tokio::test]
async fn models_are_listed_like_chat_and_an_unreachable_server_does_not_quote_the_key() {
    let server = MockServer::start(Script::new([])).await;
    let models = responses(&server).list_models().await.unwrap();
    assert_eq!(models, ["mock-model", "mock-reasoner"]);
    assert_eq!(server.requests().len(), 0, "listing is not a chat request");
    let none = OpenAiResponses::new(OpenAiConfig {
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: Some(SecretValue::new(KEY)),
    })
    .unwrap();
    let e = none.list_models().await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Network);
    assert!(!e.message.contains(KEY));
}

// Provider state, chaining and the fallback.

type Items = Vec<Result<ProviderEvent, ProviderError>>;

/// The origin the mock's state is tagged with (`http://127.0.0.1:PORT`).
fn origin(server: &MockServer) -> String {
    format!("http://{}", server.addr())
}

/// The assistant message a response leaves in the history: its text, calls and state.
fn answer(items: &Items) -> Message {
    let (mut text, mut tool_calls, mut state) = (String::new(), Vec::new(), None);
    for item in items {
        match item {
            Ok(ProviderEvent::TextDelta(t)) => text.push_str(t),
            Ok(ProviderEvent::ToolCall { call, .. }) => tool_calls.push(call.clone()),
            Ok(ProviderEvent::State(s)) => {
                assert!(state.is_none(), "one state per response: {items:?}");
                state = Some(s.clone());
            }
            Ok(_) => {}
            Err(e) => panic!("unexpected error: {e}"),
        }
    }
    Message::Assistant { text, tool_calls, state }
}

fn state_of(message: &Message) -> &ProviderState {
    match message {
        Message::Assistant { state: Some(state), .. } => state,
        other => panic!("no state: {other:?}"),
    }
}

fn tool_result(call_id: &str, content: &str) -> Message {
    Message::Tool {
        images: Default::default(),
        call_id: call_id.into(),
        name: "get_time".into(),
        content: content.into(),
        is_error: false,
    }
}

/// Each input item as its type (or role), with `#` when it carries an item id.
fn input_kinds(body: &serde_json::Value) -> Vec<String> {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let kind = i["type"].as_str().or(i["role"].as_str()).unwrap();
            if i.get("id").is_some() { format!("{kind}#") } else { kind.to_owned() }
        })
        .collect()
}

/// A reply that reasons, then calls `get_time` as `call_1`.
fn reasoning_then_call() -> Reply {
    Reply::stream([
        Step::Reasoning { text: "Tokyo is UTC+9.".into() },
        Step::tool_call("call_1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#),
        Step::finish("tool_calls"),
        Step::usage(10, 5),
        Step::Done,
    ])
}

fn assert_finished(items: &Items, text: &str) {
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    let got: String = items
        .iter()
        .filter_map(|i| if let Ok(ProviderEvent::TextDelta(t)) = i { Some(t.as_str()) } else { None })
        .collect();
    assert_eq!(got, text);
    assert!(matches!(items.last(), Some(Ok(ProviderEvent::Finish { reason: StopReason::Stop, .. }))), "{items:?}");
}

#[tokio::test]
async fn a_tool_round_chains_onto_the_calling_response_and_the_next_turn_onto_the_answer() {
    let server = MockServer::start(Script::new([
        reasoning_then_call(),
        Reply::text("It is noon in Tokyo."),
        Reply::text("You're welcome."),
    ]))
    .await;
    let provider = responses(&server);

    let first = answer(&provider.stream(request(question())).collect().await);
    let state = state_of(&first);
    assert_eq!((state.api.as_str(), state.origin.clone()), ("openai-responses", origin(&server)));
    assert_eq!(
        state.data,
        json!({"responseId":"resp_mock_1","stored":true,"items":[
            {"type":"reasoning","id":"rs_mock_1_0","summary":[{"type":"summary_text","text":"Tokyo is UTC+9."}]},
            {"type":"function_call","id":"fc_mock_1_1","call_id":"call_1"}]}),
        "no encrypted content unless asked for"
    );

    // The tool round: only the call's output, chained onto the response that made the call.
    let mut history = question();
    history.extend([first, tool_result("call_1", "12:00")]);
    let items = provider.stream(request(history.clone())).collect().await;
    assert_finished(&items, "It is noon in Tokyo.");
    let second = answer(&items);
    assert_eq!(state_of(&second).data["responseId"], "resp_mock_2");

    // The next turn: only the new message, chained onto the answer.
    history.extend([second, Message::user("thanks")]);
    let items = provider.stream(request(history)).collect().await;
    assert_finished(&items, "You're welcome.");

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the mock refuses a chain it did not issue or an unanswered call");
    assert!(requests[0].body.get("previous_response_id").is_none());
    assert_eq!(requests[1].body["previous_response_id"], "resp_mock_1");
    assert_eq!(requests[1].body["input"], json!([{"type":"function_call_output","call_id":"call_1","output":"12:00"}]));
    assert_eq!(requests[2].body["previous_response_id"], "resp_mock_2");
    assert_eq!(requests[2].body["input"], json!([{"role":"user","content":[{"type":"input_text","text":"thanks"}]}]));
    for r in &requests {
        assert_eq!(r.body["instructions"], "Be brief.", "instructions are not inherited through a chain");
        assert_eq!(r.body["tools"][0]["name"], "get_time");
        assert!(r.body.get("store").is_none() && r.body.get("include").is_none(), "{}", r.body);
    }
}

#[tokio::test]
async fn without_this_endpoints_state_on_the_last_answer_the_whole_history_goes_with_its_reasoning() {
    let server =
        MockServer::start(Script::new([reasoning_then_call(), Reply::text("a"), Reply::text("b"), Reply::text("c")]))
            .await;
    let provider = responses(&server);
    let first = answer(&provider.stream(request(question())).collect().await);

    // The last answer has no state (say, it was cut): the whole history, with the first
    // response's reasoning sent back by id before the call it preceded (both with their ids).
    let mut history = question();
    history.extend([
        first,
        tool_result("call_1", "12:00"),
        Message::assistant("It is noon.", vec![]),
        Message::user("thanks"),
    ]);
    assert_finished(&provider.stream(request(history.clone())).collect().await, "a");

    // The last answer's state is another API's, or this API's at another endpoint.
    let elsewhere = |api: &str, origin: &str| ProviderState {
        api: api.into(),
        origin: origin.into(),
        data: json!({"responseId":"resp_elsewhere","stored":true,"items":[
            {"type":"reasoning","id":"rs_elsewhere","summary":[]},{"type":"message","id":"msg_elsewhere"}]}),
    };
    for (state, text) in
        [(elsewhere("anthropic", &origin(&server)), "b"), (elsewhere("openai-responses", "http://127.0.0.1:1"), "c")]
    {
        let mut history = history.clone();
        history[3] = Message::Assistant { text: "It is noon.".into(), tool_calls: vec![], state: Some(state) };
        assert_finished(&provider.stream(request(history)).collect().await, text);
    }

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    for r in &requests[1..] {
        assert!(r.body.get("previous_response_id").is_none(), "{}", r.body);
        assert_eq!(
            input_kinds(&r.body),
            ["user", "reasoning#", "function_call#", "function_call_output", "assistant", "user"],
            "{}",
            r.body
        );
        assert_eq!(r.body["input"][1]["id"], "rs_mock_1_0");
        assert_eq!(r.body["input"][2]["id"], "fc_mock_1_1");
    }
}

#[tokio::test]
async fn a_previous_response_the_server_never_issued_falls_back_once_to_the_whole_history() {
    // A fresh server: the state names a response (and reasoning) it never issued.
    let server = MockServer::start(Script::new([Reply::text("It is noon.")])).await;
    let state = ProviderState {
        api: "openai-responses".into(),
        origin: origin(&server),
        data: json!({"responseId":"resp_never_issued","stored":true,"items":[
            {"type":"reasoning","id":"rs_never_issued","summary":[]},
            {"type":"message","id":"msg_never_issued"},
            {"type":"function_call","id":"fc_never_issued","call_id":"call_1"}]}),
    };
    let mut history = question();
    history.extend([
        Message::Assistant {
            text: "Checking.".into(),
            tool_calls: vec![ToolCall { id: "call_1".into(), name: "get_time".into(), arguments: "{}".into() }],
            state: Some(state),
        },
        tool_result("call_1", "12:00"),
    ]);
    let items = run_responses(&server, request(history)).await;
    assert_finished(&items, "It is noon.");
    // The mock records only what it accepts: the refused chained request is not there.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    assert!(body.get("previous_response_id").is_none(), "{body}");
    assert_eq!(
        input_kinds(body),
        ["user", "assistant", "function_call", "function_call_output"],
        "a lost chain's reasoning cannot be sent by id, nor the ids it pairs with"
    );
}

#[tokio::test]
async fn an_expired_previous_response_is_refused_once_then_the_whole_history_answers() {
    let expired = || {
        Reply::http(
            400,
            json!({"error":{"message":"Previous response with id 'resp_mock_1' not found.",
                "type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}})
            .to_string(),
        )
    };
    let server = MockServer::start(Script::new([reasoning_then_call(), expired(), Reply::text("It is noon.")])).await;
    let provider = responses(&server);
    let mut history = question();
    history.push(answer(&provider.stream(request(question())).collect().await));
    history.push(tool_result("call_1", "12:00"));

    let items: Items = provider.stream(request(history.clone())).collect().await;
    assert_finished(&items, "It is noon.");
    assert_eq!(items.iter().filter(|i| matches!(i, Ok(ProviderEvent::Finish { .. }))).count(), 1);
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the first request, the refused chained one, the fallback");
    assert_eq!(requests[1].body["previous_response_id"], "resp_mock_1");
    assert_eq!(input_kinds(&requests[1].body), ["function_call_output"]);
    assert!(requests[2].body.get("previous_response_id").is_none());
    assert_eq!(input_kinds(&requests[2].body), ["user", "function_call", "function_call_output"]);

    // Only once: a fallback refused as well is the loop's error.
    server.push(expired());
    server.push(expired());
    let items: Items = provider.stream(request(history)).collect().await;
    assert_eq!(items.len(), 1, "{items:?}");
    let e = items[0].clone().unwrap_err();
    assert_eq!((e.kind, e.status), (ErrorKind::BadRequest, Some(400)));
    assert!(e.message.contains("Previous response with id"), "{}", e.message);
    assert_eq!(server.requests().len(), 5);
}

#[tokio::test]
async fn with_store_false_nothing_chains_and_reasoning_goes_back_encrypted() {
    let server = MockServer::start(Script::new([reasoning_then_call(), Reply::text("It is noon.")])).await;
    let provider = responses(&server).with_store(Some(false));
    let first = answer(&provider.stream(request(question())).collect().await);
    let encrypted = switchboard_mock_provider::signatures::encrypted_content("rs_mock_1_0", "Tokyo is UTC+9.");
    assert_eq!(state_of(&first).data["stored"], false);
    assert_eq!(state_of(&first).data["items"][0]["encrypted_content"], encrypted.as_str());

    let mut history = question();
    history.extend([first, tool_result("call_1", "12:00")]);
    assert_finished(&provider.stream(request(history)).collect().await, "It is noon.");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.body["store"], false);
        assert_eq!(r.body["include"], json!(["reasoning.encrypted_content"]));
        assert!(r.body.get("previous_response_id").is_none(), "{}", r.body);
    }
    assert_eq!(input_kinds(&requests[1].body), ["user", "reasoning#", "function_call#", "function_call_output"]);
    assert_eq!(
        requests[1].body["input"][1],
        json!({"type":"reasoning","id":"rs_mock_1_0","summary":[{"type":"summary_text","text":"Tokyo is UTC+9."}],
            "encrypted_content": encrypted}),
        "the mock verified it"
    );
}

#[tokio::test]
async fn store_true_is_sent_and_chains() {
    let server = MockServer::start(Script::new([Reply::text("Hi."), Reply::text("Bye.")])).await;
    let provider = responses(&server).with_store(Some(true));
    let mut history = question();
    history.push(answer(&provider.stream(request(question())).collect().await));
    history.push(Message::user("bye"));
    assert_finished(&provider.stream(request(history)).collect().await, "Bye.");
    let requests = server.requests();
    assert_eq!((&requests[0].body["store"], &requests[1].body["store"]), (&json!(true), &json!(true)));
    assert_eq!(requests[1].body["previous_response_id"], "resp_mock_1");
    assert_eq!(input_kinds(&requests[1].body), ["user"]);
}

#[tokio::test]
async fn options_map_to_the_fields_the_strict_mock_validates() {
    let server = MockServer::start(Script::new([Reply::text("ok"), Reply::text("ok")])).await;
    let with = |options| ProviderRequest { options, ..request(question()) };
    let items = run_responses(
        &server,
        with(GenerationOptions {
            max_output_tokens: Some(256),
            reasoning_effort: Some(ReasoningEffort::High),
            thinking_budget: None,
            ..Default::default()
        }),
    )
    .await;
    assert_finished(&items, "ok");
    let items = run_responses(&server, with(GenerationOptions::default())).await;
    assert_finished(&items, "ok");
    let requests = server.requests();
    assert_eq!(requests[0].body["max_output_tokens"], 256);
    assert_eq!(requests[0].body["reasoning"], json!({"effort":"high","summary":"auto"}));
    assert!(requests[1].body.get("max_output_tokens").is_none() && requests[1].body.get("reasoning").is_none());

    // A limit the API refuses says why.
    let items =
        run_responses(&server, with(GenerationOptions { max_output_tokens: Some(8), ..GenerationOptions::default() }))
            .await;
    let e = items[0].clone().unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadRequest);
    assert!(e.message.contains("max_output_tokens") && e.message.contains(">= 16"), "{}", e.message);
}
