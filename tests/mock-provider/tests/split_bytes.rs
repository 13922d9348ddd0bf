//! `split_bytes` writes the body in fixed-size pieces that cut through SSE lines and UTF-8
//! characters; checked on the wire through the chunked-encoding frames of a raw TCP exchange.

mod common;

use common::{chat_body, delta_text, parse_sse, raw_chat};
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};

fn split(bytes: usize) -> StreamOptions {
    StreamOptions { split_bytes: Some(bytes), ..StreamOptions::default() }
}

#[tokio::test]
async fn split_bytes_cuts_through_multibyte_characters() {
    let text = "Grüße, 世界! 🦀🦀🦀 ünïcödé";
    let server = MockServer::start(Script::new([Reply::text(text).with_options(split(7)), Reply::text(text)])).await;

    let split_response = raw_chat(server.addr(), &chat_body("hi")).await;
    assert!(split_response.head.contains("text/event-stream"));
    assert!(split_response.chunks.len() > 1);
    let (last, full) = split_response.chunks.split_last().unwrap();
    assert!(full.iter().all(|chunk| chunk.len() == 7));
    assert!(last.len() <= 7);
    assert!(
        split_response.chunks.iter().any(|chunk| std::str::from_utf8(chunk).is_err()),
        "some piece must end or start inside a multi-byte character"
    );

    let body = String::from_utf8(split_response.body()).expect("reassembled body is UTF-8");
    let events = parse_sse(&body);
    assert_eq!(delta_text(&events, "content"), text);

    // The same reply unsplit carries the same events (ids differ per request).
    let whole = raw_chat(server.addr(), &chat_body("hi")).await;
    let whole_body = String::from_utf8(whole.body()).unwrap();
    let mut whole_events = parse_sse(&whole_body);
    for event in &mut whole_events {
        if let common::Event::Json(chunk) = event {
            chunk["id"] = "chatcmpl-mock-1".into();
            chunk["created"] = events[0].json()["created"].clone();
        }
    }
    assert_eq!(whole_events, events);
}

#[tokio::test]
async fn split_raw_bytes_arrive_identical() {
    let raw = "data: {\"a\":\"é\"}\n\n: keep-alive\n\ndata: [DONE]\n\n";
    let reply = Reply::stream([Step::Raw { data: raw.to_owned() }]);
    let server = MockServer::start(Script::new([reply.with_options(split(1))])).await;
    let response = raw_chat(server.addr(), &chat_body("hi")).await;
    assert_eq!(response.chunks.len(), raw.len());
    assert_eq!(response.body(), raw.as_bytes());
}
