//! Mid-stream faults: cut connections, stalls, error events, raw bytes and server shutdown.

mod common;

use std::time::Duration;

use common::{Event, TIMEOUT, chat_body, parse_sse, post_chat, post_chat_text};
use futures::StreamExt;
use serde_json::{Value, json};
use switchboard_mock_provider::{MockServer, Reply, Script, Step};

/// Reads the body until it contains `needle`, returning the stream for further reads.
async fn read_until(
    response: reqwest::Response,
    needle: &str,
) -> impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> {
    let mut stream = Box::pin(response.bytes_stream());
    let mut seen = Vec::new();
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let chunk = tokio::time::timeout(TIMEOUT, stream.next())
            .await
            .expect("timed out waiting for data")
            .expect("stream ended early")
            .expect("stream failed early");
        seen.extend_from_slice(&chunk);
    }
    stream
}

#[tokio::test]
async fn drop_cuts_the_connection_after_delivering_earlier_events() {
    let reply = Reply::stream([Step::text("partial"), Step::Drop, Step::Done]);
    let server = MockServer::start(Script::new([reply])).await;
    let response = post_chat(&server, &chat_body("hi")).await;
    assert_eq!(response.status(), 200);

    let mut stream = response.bytes_stream();
    let mut received = Vec::new();
    let mut error = None;
    while let Some(item) = tokio::time::timeout(TIMEOUT, stream.next()).await.unwrap() {
        match item {
            Ok(bytes) => received.extend_from_slice(&bytes),
            Err(err) => {
                error = Some(err);
                break;
            }
        }
    }
    assert!(error.is_some(), "a dropped stream must not end cleanly");
    let received = String::from_utf8(received).unwrap();
    assert!(received.contains("partial"), "got {received:?}");
    assert!(!received.contains("[DONE]"));
}

#[tokio::test]
async fn drop_on_a_non_streaming_request_fails_the_body() {
    let server = MockServer::start(Script::new([Reply::stream([Step::Drop])])).await;
    let mut body = chat_body("hi");
    body["stream"] = json!(false);
    let response = post_chat(&server, &body).await;
    assert!(response.bytes().await.is_err());
}

#[tokio::test]
async fn stall_keeps_the_connection_open_without_data() {
    let reply = Reply::stream([Step::text("hi"), Step::Stall, Step::Done]);
    let server = MockServer::start(Script::new([reply])).await;
    let response = post_chat(&server, &chat_body("hi")).await;
    let mut stream = read_until(response, "hi").await;
    let next = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
    assert!(next.is_err(), "expected silence, got {next:?}");
}

#[tokio::test]
async fn dropping_the_server_cuts_streams_in_flight() {
    let reply = Reply::stream([Step::text("hi"), Step::Stall]);
    let server = MockServer::start(Script::new([reply])).await;
    let response = post_chat(&server, &chat_body("hi")).await;
    let mut stream = read_until(response, "hi").await;
    drop(server);
    let next = tokio::time::timeout(TIMEOUT, stream.next()).await.expect("the cut must arrive promptly");
    assert!(matches!(next, Some(Err(_))), "got {next:?}");
}

#[tokio::test]
async fn error_object_is_sent_mid_stream_and_ends_it() {
    let reply = Reply::stream([
        Step::text("so far"),
        Step::ErrorObject { message: "overloaded".to_owned(), code: Some("overloaded_error".to_owned()) },
        Step::text("never sent"),
        Step::Done,
    ]);
    let server = MockServer::start(Script::new([reply])).await;
    let events = parse_sse(&post_chat_text(&server, &chat_body("hi")).await);
    assert_eq!(events.len(), 2);
    assert_eq!(
        events[1],
        Event::Json(json!({"error": {
            "message": "overloaded",
            "type": "server_error",
            "code": "overloaded_error",
        }}))
    );
}

#[tokio::test]
async fn error_object_on_a_non_streaming_request_is_a_500() {
    let reply = Reply::stream([Step::ErrorObject { message: "boom".to_owned(), code: None }]);
    let server = MockServer::start(Script::new([reply])).await;
    let mut body = chat_body("hi");
    body["stream"] = json!(false);
    let response = post_chat(&server, &body).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["message"], "boom");
}

#[tokio::test]
async fn raw_steps_are_written_verbatim() {
    let reply = Reply::stream([
        Step::Raw { data: ": keep-alive\n\n".to_owned() },
        Step::text("ok"),
        Step::Raw { data: "data: {not json\n\n".to_owned() },
        Step::Done,
    ]);
    let server = MockServer::start(Script::new([reply])).await;
    let body = post_chat_text(&server, &chat_body("hi")).await;
    assert!(body.starts_with(": keep-alive\n\ndata: {"));
    assert!(body.ends_with("data: {not json\n\ndata: [DONE]\n\n"));
}
