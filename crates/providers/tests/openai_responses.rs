//! The Responses provider end to end over loopback HTTP against the mock provider's Responses
//! API: the same scripts read through the Chat provider give the same canonical events, at every
//! byte split; headers, the body the strict mock accepts, errors and model listing.

use futures::StreamExt;
use serde_json::json;
use switchboard_core::provider::{StopReason, ToolSpec};
use switchboard_core::tool::SecretValue;
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ToolCall, ToolChoice, Usage,
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
    }
}

fn question() -> Vec<Message> {
    vec![Message::User { text: "what time is it in Tokyo?".into() }]
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
            Ok(ProviderEvent::KeepAlive) => {}
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

fn script_steps() -> Vec<Step> {
    vec![
        Step::Reasoning { text: "The person is in 東京.".into() },
        Step::text("Let me check 🕐 東京の時間: "),
        Step::ParallelToolCalls {
            calls: vec![
                ("call_1".into(), "get_time".into(), r#"{"timezone":"Asia/Tokyo","note":"🙂 é"}"#.into()),
                ("call_2".into(), "get_time".into(), "{}".into()),
            ],
        },
        Step::finish("tool_calls"),
        Step::Usage { prompt_tokens: 30, completion_tokens: 9, reasoning_tokens: 3, cached_tokens: 20 },
        Step::Done,
    ]
}

#[tokio::test]
async fn the_same_script_gives_the_same_events_as_the_chat_provider_at_every_byte_split() {
    let options = |split| StreamOptions {
        text_chunk_chars: Some(3),
        args_chunk_chars: Some(2),
        split_bytes: split,
        ..StreamOptions::default()
    };
    let expected = run_chat(script_steps(), options(None)).await;
    let before = "Let me check 🕐 東京の時間: ";
    assert_eq!(
        expected,
        vec![
            Ok(ProviderEvent::ReasoningDelta("The person is in 東京.".into())),
            Ok(ProviderEvent::TextDelta(before.into())),
            Ok(ProviderEvent::ToolCall {
                call: ToolCall {
                    id: "call_1".into(),
                    name: "get_time".into(),
                    arguments: r#"{"timezone":"Asia/Tokyo","note":"🙂 é"}"#.into()
                },
                text_chars_before: before.chars().count(),
            }),
            Ok(ProviderEvent::ToolCall {
                call: ToolCall { id: "call_2".into(), name: "get_time".into(), arguments: "{}".into() },
                text_chars_before: before.chars().count(),
            }),
            Ok(ProviderEvent::Usage(Usage {
                prompt_tokens: 30,
                completion_tokens: 9,
                reasoning_tokens: 3,
                cached_tokens: 20
            })),
            Ok(ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: None }),
        ],
        "the Chat path is the reference"
    );

    // Splits of 1 and 2 bytes cut every multi-byte character and every line.
    for split in [None, Some(1), Some(2), Some(3), Some(5), Some(7), Some(64)] {
        let reply = Reply::Stream { steps: script_steps(), options: options(split) };
        let server = MockServer::start(Script::new([reply])).await;
        let got = canonical(run_responses(&server, request(question())).await);
        assert_eq!(got, expected, "split {split:?}");
    }
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
        Message::User { text: "q".into() },
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall { id: "call_1".into(), name: "get_time".into(), arguments: "{".into() }],
        },
        Message::Tool {
            images: Default::default(),
            call_id: "call_1".into(),
            name: "get_time".into(),
            content: "bad".into(),
            is_error: true,
        },
        Message::Assistant { text: " ".into(), tool_calls: vec![] },
        Message::User { text: "again".into() },
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
    assert_eq!((&r.body["store"], &r.body["stream"]), (&json!(false), &json!(true)));
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
async fn a_cut_before_the_terminal_event_is_a_network_error() {
    let server = MockServer::start(Script::new([Reply::stream([Step::text("Part"), Step::Drop])])).await;
    let items = run_responses(&server, request(question())).await;
    assert_eq!(items.last().unwrap().clone().unwrap_err().kind, ErrorKind::Network);
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
