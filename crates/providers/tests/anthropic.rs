//! The Anthropic provider end to end over loopback HTTP against the mock provider's Messages API:
//! headers, the body the strict mock accepts, errors and model listing. Stream parsing at every
//! byte split is in the parser table (`tests/parsers.rs`).

use futures::StreamExt;
use serde_json::json;
use switchboard_core::provider::ToolSpec;
use switchboard_core::tool::SecretValue;
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ToolCall, ToolChoice,
};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_providers::anthropic::{Anthropic, AnthropicConfig};

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
    vec![Message::user("what time is it in Tokyo?")]
}

fn anthropic(server: &MockServer) -> Anthropic {
    Anthropic::new(AnthropicConfig { base_url: server.base_url(), api_key: Some(SecretValue::new(KEY)) }).unwrap()
}

async fn run_anthropic(server: &MockServer, req: ProviderRequest) -> Vec<Result<ProviderEvent, ProviderError>> {
    anthropic(server).stream(req).collect().await
}

#[tokio::test]
async fn the_request_carries_the_key_version_and_a_body_the_strict_mock_accepts() {
    let server = MockServer::start(Script::new([Reply::text("ok")])).await;
    let history = vec![
        Message::user("q"),
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
        Message::user("again"),
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
