//! The event-stream seam end to end over loopback HTTP, read through `OpenAiChat` (the seam is
//! shared by every provider): keep-alives, the caps, HTML pages and unreachable servers. What
//! servers really send, cut at every byte, runs for every API in the parser table
//! (`tests/parsers.rs`).

use futures::StreamExt;
use switchboard_core::{ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ToolChoice};
use switchboard_mock_provider::{MockServer, Reply, Script, Step};
use switchboard_providers::{OpenAiChat, OpenAiConfig};

fn request() -> ProviderRequest {
    ProviderRequest {
        model: "mock-model".into(),
        system: None,
        messages: vec![Message::user("hi")],
        tools: Vec::new(),
        tool_choice: ToolChoice::Auto,
        options: Default::default(),
    }
}

async fn run(server: &MockServer) -> Vec<Result<ProviderEvent, ProviderError>> {
    let provider = OpenAiChat::new(OpenAiConfig { base_url: server.base_url(), api_key: None }).unwrap();
    provider.stream(request()).collect().await
}

fn text_of(items: &[Result<ProviderEvent, ProviderError>]) -> String {
    items
        .iter()
        .filter_map(|i| match i {
            Ok(ProviderEvent::TextDelta(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn error_of(items: &[Result<ProviderEvent, ProviderError>]) -> Option<&ProviderError> {
    items.iter().find_map(|i| i.as_ref().err())
}

#[tokio::test]
async fn comment_lines_become_keep_alives() {
    let server = MockServer::start(Script::new([Reply::stream([
        Step::Raw { data: ": OPENROUTER PROCESSING\n\n".into() },
        Step::Raw { data: ": keep-alive\n\n".into() },
        Step::text("hi"),
        Step::finish("stop"),
        Step::Done,
    ])]))
    .await;
    let items = run(&server).await;
    let before_text = items.iter().take_while(|i| !matches!(i, Ok(ProviderEvent::TextDelta(_)))).count();
    let keep_alives = items[..before_text].iter().filter(|i| matches!(i, Ok(ProviderEvent::KeepAlive))).count();
    assert!(keep_alives >= 2, "{items:?}");
    assert_eq!(text_of(&items), "hi");
}

#[tokio::test]
async fn a_line_past_the_cap_ends_with_a_protocol_error_and_keeps_what_came_before() {
    for prefix in ["data: ", ": ", "foo"] {
        let server = MockServer::start(Script::new([Reply::stream([
            Step::text("before"),
            Step::LongLine { prefix: prefix.into(), len: 5 * 1024 * 1024 },
            Step::Raw { data: "\n\n".into() },
            Step::text("after"),
            Step::finish("stop"),
            Step::Done,
        ])]))
        .await;
        let items = run(&server).await;
        assert_eq!(text_of(&items), "before", "{prefix:?}");
        let err = error_of(&items).unwrap_or_else(|| panic!("{prefix:?}: no error"));
        assert_eq!(err.kind, ErrorKind::Protocol);
        assert!(err.message.contains("a line longer than 4 MiB"), "{}", err.message);
        assert!(items.last().unwrap().is_err(), "the error ends the stream");
    }
}

#[tokio::test]
async fn an_event_past_the_cap_ends_with_a_protocol_error() {
    let line = format!("data: {}\n", "y".repeat(1024 * 1024));
    let server = MockServer::start(Script::new([Reply::stream([
        Step::text("before"),
        Step::Raw { data: line.repeat(5) },
        Step::Raw { data: "\n".into() },
        Step::finish("stop"),
        Step::Done,
    ])]))
    .await;
    let items = run(&server).await;
    assert_eq!(text_of(&items), "before");
    let err = error_of(&items).expect("an error");
    assert!(err.message.contains("an event larger than 4 MiB"), "{}", err.message);
}

#[tokio::test]
async fn a_200_html_page_is_named_with_its_title() {
    let page =
        "<!DOCTYPE html><html><head><title>Hotel Wi-Fi \u{2013} Sign in</title></head><body>Accept</body></html>";
    let server = MockServer::start(Script::new([Reply::html(200, page)])).await;
    let items = run(&server).await;
    let err = error_of(&items).expect("an error");
    assert_eq!(err.kind, ErrorKind::Protocol);
    assert!(err.message.contains("answered 200 with an HTML page"), "{}", err.message);
    assert!(err.message.contains("Hotel Wi-Fi \u{2013} Sign in"), "{}", err.message);
    assert!(err.message.contains("captive portal"), "{}", err.message);
}

#[tokio::test]
async fn an_unreachable_server_is_named_in_plain_words_with_the_transport_error_as_detail() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let provider =
        OpenAiChat::new(OpenAiConfig { base_url: format!("http://127.0.0.1:{port}/v1"), api_key: None }).unwrap();
    let items: Vec<_> = provider.stream(request()).collect().await;
    let plain = format!("Couldn't connect to 127.0.0.1:{port} — is the server running, and is the address right?");
    let err = error_of(&items).expect("an error");
    assert_eq!(err.message, plain);
    assert!(err.detail.as_deref().is_some_and(|d| d.contains("Connection refused")), "{:?}", err.detail);
    let err = provider.models().await.unwrap_err();
    assert_eq!(err.message, plain);
    assert!(err.detail.as_deref().is_some_and(|d| d.contains("Connection refused")), "{:?}", err.detail);
}
