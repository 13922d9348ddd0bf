//! The Anthropic provider end to end over loopback HTTP against the mock provider's Messages API:
//! the same scripts read through the OpenAI provider give the same canonical events, at every
//! byte split; headers, errors and model listing.

use futures::StreamExt;
use serde_json::json;
use switchboard_core::provider::{StopReason, ToolSpec};
use switchboard_core::tool::SecretValue;
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ToolCall, ToolChoice, Usage,
};
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};
use switchboard_providers::anthropic::{Anthropic, AnthropicConfig};
use switchboard_providers::{OpenAiChat, OpenAiConfig};

const KEY: &str = "sk-ant-test-key-0123456789";

fn request(messages: Vec<Message>) -> ProviderRequest {
    ProviderRequest {
        model: "claude-test".into(),
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
    vec![Message::User { text: "what time is it in Tokyo?".into() }]
}

fn anthropic(server: &MockServer) -> Anthropic {
    Anthropic::new(AnthropicConfig { base_url: server.base_url(), api_key: Some(SecretValue::new(KEY)) }).unwrap()
}

async fn run_anthropic(server: &MockServer, req: ProviderRequest) -> Vec<Result<ProviderEvent, ProviderError>> {
    anthropic(server).stream(req).collect().await
}

/// The events that mean something: keep-alives are dropped, response ids blanked (each API has
/// its own), and runs of text or reasoning deltas joined (each API chunks them its own way).
fn canonical(items: Vec<Result<ProviderEvent, ProviderError>>) -> Vec<Result<ProviderEvent, ProviderError>> {
    let mut out: Vec<Result<ProviderEvent, ProviderError>> = Vec::new();
    for item in items {
        match item {
            // Each API's own continuation data; checked on its own below.
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

fn script_steps() -> Vec<Step> {
    vec![
        Step::Reasoning { text: "The person is in 東京.".into() },
        Step::text("Let me check 🕐 東京の時間: "),
        Step::ParallelToolCalls {
            calls: vec![
                ("toolu_1".into(), "get_time".into(), r#"{"timezone":"Asia/Tokyo","note":"🙂 é"}"#.into()),
                ("toolu_2".into(), "get_time".into(), "{}".into()),
            ],
        },
        Step::finish("tool_calls"),
        Step::Usage { prompt_tokens: 30, completion_tokens: 9, reasoning_tokens: 0, cached_tokens: 20 },
        Step::Done,
    ]
}

#[tokio::test]
async fn the_same_script_gives_the_same_events_as_the_openai_provider_at_every_byte_split() {
    let options = |split| StreamOptions {
        text_chunk_chars: Some(3),
        args_chunk_chars: Some(2),
        split_bytes: split,
        ..StreamOptions::default()
    };
    let reply = |split| Reply::Stream { steps: script_steps(), options: options(split) };

    let openai_server = MockServer::start(Script::new([reply(None)])).await;
    let openai = OpenAiChat::new(OpenAiConfig { base_url: openai_server.base_url(), api_key: None }).unwrap();
    let expected = canonical(openai.stream(request(question())).collect().await);
    let before = "Let me check 🕐 東京の時間: ";
    assert_eq!(
        expected,
        vec![
            Ok(ProviderEvent::ReasoningDelta("The person is in 東京.".into())),
            Ok(ProviderEvent::TextDelta(before.into())),
            Ok(ProviderEvent::ToolCall {
                call: ToolCall {
                    id: "toolu_1".into(),
                    name: "get_time".into(),
                    arguments: r#"{"timezone":"Asia/Tokyo","note":"🙂 é"}"#.into()
                },
                text_chars_before: before.chars().count(),
            }),
            Ok(ProviderEvent::ToolCall {
                call: ToolCall { id: "toolu_2".into(), name: "get_time".into(), arguments: "{}".into() },
                text_chars_before: before.chars().count(),
            }),
            Ok(ProviderEvent::Usage(Usage {
                prompt_tokens: 30,
                completion_tokens: 9,
                reasoning_tokens: 0,
                cached_tokens: 20,
                cache_write_tokens: 0
            })),
            Ok(ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: None }),
        ],
        "the OpenAI path is the reference"
    );

    for split in [None, Some(1), Some(2), Some(3), Some(5), Some(7), Some(64)] {
        let server = MockServer::start(Script::new([reply(split)])).await;
        let items = run_anthropic(&server, request(question())).await;
        // The signed thinking block is kept whole, whatever the split.
        let state = items.iter().find_map(|i| match i {
            Ok(ProviderEvent::State(s)) => Some(s.data["blocks"][0].clone()),
            _ => None,
        });
        let signature = switchboard_mock_provider::signatures::thinking_signature("The person is in 東京.");
        assert_eq!(
            state,
            Some(serde_json::json!({"type": "thinking", "thinking": "The person is in 東京.", "signature": signature})),
            "split {split:?}"
        );
        assert_eq!(canonical(items), expected, "split {split:?}");
    }
}

#[tokio::test]
async fn the_request_carries_the_key_version_and_a_body_the_strict_mock_accepts() {
    let server = MockServer::start(Script::new([Reply::text("ok")])).await;
    let history = vec![
        Message::User { text: "q".into() },
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall { id: "toolu_1".into(), name: "get_time".into(), arguments: "{".into() }],
            state: None,
        },
        Message::Tool {
            images: Default::default(),
            call_id: "toolu_1".into(),
            name: "get_time".into(),
            content: String::new(),
            is_error: true,
        },
        Message::Assistant { text: " ".into(), tool_calls: vec![], state: None },
        Message::User { text: "again".into() },
    ];
    let items = run_anthropic(&server, request(history)).await;
    assert!(items.iter().all(Result::is_ok), "{items:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "the mock refuses blank text blocks and a missing max_tokens or version");
    let r = &requests[0];
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("authorization"), None, "Anthropic keys go in x-api-key only");
    assert_eq!(r.body["max_tokens"], 8192);
    assert_eq!(r.body["system"][0]["text"], "Be brief.");
    assert_eq!(r.body["tools"][0]["name"], "get_time");
    let messages = r.body["messages"].as_array().unwrap();
    assert_eq!(messages.iter().map(|m| m["role"].as_str().unwrap()).collect::<Vec<_>>(), ["user", "assistant", "user"]);
}

#[tokio::test]
async fn http_errors_say_what_to_do_and_never_quote_the_key() {
    let body = |t: &str, m: &str| json!({"type":"error","error":{"type":t,"message":m}}).to_string();
    let cases = [
        (Reply::http(401, body("authentication_error", "invalid x-api-key")), ErrorKind::Auth, "ANTHROPIC_API_KEY"),
        (Reply::http(404, body("not_found_error", "model: claude-test")), ErrorKind::NotFound, "'claude-test'"),
        (Reply::http(529, body("overloaded_error", "Overloaded")), ErrorKind::Overloaded, "overloaded (529)"),
        (
            Reply::Http {
                status: 429,
                headers: vec![("retry-after".into(), "7".into())],
                body: body("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
            },
            ErrorKind::RateLimited,
            "wait 7 s",
        ),
        (
            Reply::http(
                400,
                body("invalid_request_error", "Your credit balance is too low to access the Anthropic API"),
            ),
            ErrorKind::Auth,
            "billing settings",
        ),
    ];
    for (reply, kind, needle) in cases {
        let server = MockServer::start(Script::new([reply])).await;
        let items = run_anthropic(&server, request(question())).await;
        assert_eq!(items.len(), 1, "{items:?}");
        let e = items[0].clone().unwrap_err();
        assert_eq!(e.kind, kind, "{}", e.message);
        assert!(e.message.contains(needle), "{:?} lacks {needle:?}", e.message);
        assert!(!e.message.contains(KEY) && !format!("{e:?}").contains(KEY));
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_keeps_what_came_before_and_is_retryable_when_overloaded() {
    let server = MockServer::start(Script::new([Reply::stream([
        Step::text("Part"),
        Step::ErrorObject { message: "Overloaded".into(), code: Some("overloaded_error".into()) },
    ])]))
    .await;
    let items = run_anthropic(&server, request(question())).await;
    let items = canonical(items);
    assert_eq!(items[0], Ok(ProviderEvent::TextDelta("Part".into())));
    let e = items[1].clone().unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overloaded);
    assert!(e.message.contains("overloaded_error"), "{}", e.message);
    assert_eq!(items.len(), 2);
}

#[tokio::test]
async fn a_cut_before_the_stop_reason_is_a_network_error() {
    let server = MockServer::start(Script::new([Reply::stream([Step::text("Part"), Step::Drop])])).await;
    let items = run_anthropic(&server, request(question())).await;
    assert_eq!(items.last().unwrap().clone().unwrap_err().kind, ErrorKind::Network);
}

#[tokio::test]
async fn models_are_listed_and_an_unreachable_server_does_not_quote_the_key() {
    let server = MockServer::start(Script::new([])).await;
    let models = anthropic(&server).list_models().await.unwrap();
    assert_eq!(models, ["mock-model", "mock-reasoner"]);
    let none = Anthropic::new(AnthropicConfig {
        base_url: "http://127.0.0.1:9/v1".into(),
        api_key: Some(SecretValue::new(KEY)),
    })
    .unwrap();
    let e = none.list_models().await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Network);
    assert!(!e.message.contains(KEY));
}
