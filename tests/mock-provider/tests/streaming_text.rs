//! Streamed text: chunk shape, role, chunking, reasoning, usage, model, pacing and throughput.

mod common;

use std::time::{Duration, Instant};

use common::{Event, chat_body, delta_text, parse_sse, post_chat, post_chat_text};
use serde_json::{Value, json};
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};

#[tokio::test]
async fn text_reply_streams_openai_chunks_then_done() {
    let server = MockServer::start(Script::new([Reply::text("Hello, wörld!")])).await;
    let response = post_chat(&server, &chat_body("hi")).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    assert_eq!(response.headers()["cache-control"], "no-cache");

    let events = parse_sse(&response.text().await.unwrap());
    assert_eq!(events.last(), Some(&Event::Done));
    assert_eq!(delta_text(&events, "content"), "Hello, wörld!");

    let first = events[0].json();
    assert_eq!(first["object"], "chat.completion.chunk");
    assert_eq!(first["id"], "chatcmpl-mock-1");
    assert_eq!(first["model"], "gpt-test", "model echoes the request");
    assert!(first["created"].as_u64().unwrap() > 1_600_000_000);
    assert_eq!(first["choices"][0]["index"], 0);
    assert_eq!(first["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(first["choices"][0]["finish_reason"], Value::Null);

    let finish = events
        .iter()
        .filter(|event| **event != Event::Done)
        .find(|event| !event.json()["choices"][0]["finish_reason"].is_null())
        .expect("a finish chunk");
    assert_eq!(finish.json()["choices"][0]["finish_reason"], "stop");
    assert_eq!(finish.json()["choices"][0]["delta"], json!({}));

    let usage = events[events.len() - 2].json();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(
        usage["usage"],
        json!({
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "total_tokens": 15,
            "completion_tokens_details": { "reasoning_tokens": 0 },
            "prompt_tokens_details": { "cached_tokens": 0 },
        })
    );
}

#[tokio::test]
async fn text_chunk_chars_splits_text_into_deltas_with_role_only_first() {
    let reply = Reply::text("abcdéfghij").with_options(StreamOptions {
        text_chunk_chars: Some(3),
        model: Some("custom-model".to_owned()),
        ..StreamOptions::default()
    });
    let server = MockServer::start(Script::new([reply])).await;
    let events = parse_sse(&post_chat_text(&server, &chat_body("hi")).await);

    let deltas: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            Event::Json(chunk) => chunk["choices"][0]["delta"]["content"].as_str(),
            Event::Done => None,
        })
        .collect();
    assert_eq!(deltas, ["abc", "déf", "ghi", "j"]);
    let roles = events
        .iter()
        .filter(|event| matches!(event, Event::Json(chunk) if chunk["choices"][0]["delta"]["role"] == "assistant"))
        .count();
    assert_eq!(roles, 1);
    assert!(
        events
            .iter()
            .filter_map(|event| match event {
                Event::Json(chunk) => Some(chunk),
                Event::Done => None,
            })
            .all(|chunk| chunk["model"] == "custom-model")
    );
}

#[tokio::test]
async fn reasoning_is_sent_as_reasoning_content_and_usage_details_are_reported() {
    let reply = Reply::stream([
        Step::Reasoning { text: "thinking...".to_owned() },
        Step::text("answer"),
        Step::finish("stop"),
        Step::Usage { prompt_tokens: 100, completion_tokens: 40, reasoning_tokens: 30, cached_tokens: 64 },
        Step::Done,
    ]);
    let server = MockServer::start(Script::new([reply])).await;
    let events = parse_sse(&post_chat_text(&server, &chat_body("hi")).await);

    assert_eq!(delta_text(&events, "reasoning_content"), "thinking...");
    assert_eq!(delta_text(&events, "content"), "answer");
    assert_eq!(events[0].json()["choices"][0]["delta"]["role"], "assistant");
    let usage = &events[events.len() - 2].json()["usage"];
    assert_eq!(usage["total_tokens"], 140);
    assert_eq!(usage["completion_tokens_details"]["reasoning_tokens"], 30);
    assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 64);
}

#[tokio::test]
async fn non_streaming_request_gets_an_assembled_completion() {
    let reply = Reply::reasoning_then_text("hmm", "Hello");
    let server = MockServer::start(Script::new([reply])).await;
    let mut body = chat_body("hi");
    body["stream"] = json!(false);
    let response = post_chat(&server, &body).await;
    assert_eq!(response.status(), 200);
    let completion: Value = response.json().await.unwrap();
    assert_eq!(completion["object"], "chat.completion");
    assert_eq!(completion["model"], "gpt-test");
    assert_eq!(
        completion["choices"][0]["message"],
        json!({ "role": "assistant", "content": "Hello", "reasoning_content": "hmm" })
    );
    assert_eq!(completion["choices"][0]["finish_reason"], "stop");
    assert_eq!(completion["usage"]["total_tokens"], 15);
}

#[tokio::test]
async fn long_text_streams_one_token_per_event_quickly() {
    const TOKENS: usize = 2000;
    let server = MockServer::start(Script::new([Reply::long_text(TOKENS)])).await;
    let started = Instant::now();
    let text = post_chat_text(&server, &chat_body("go")).await;
    let elapsed = started.elapsed();

    let events = parse_sse(&text);
    let content_events = events
        .iter()
        .filter(|event| matches!(event, Event::Json(chunk) if chunk["choices"][0]["delta"]["content"].is_string()))
        .count();
    assert_eq!(content_events, TOKENS);
    let content = delta_text(&events, "content");
    assert!(content.starts_with("word0 word1 "));
    assert!(content.ends_with("word1999 "));
    // Far above the real cost (milliseconds); catches accidental per-event sleeps or wakes.
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
}

#[tokio::test]
async fn chunk_delay_paces_events() {
    let reply = Reply::stream([Step::text("a"), Step::text("b"), Step::text("c"), Step::Done]);
    let server = MockServer::start(Script::new([reply]).with_chunk_delay(40)).await;
    let started = Instant::now();
    let events = parse_sse(&post_chat_text(&server, &chat_body("hi")).await);
    // Three gaps between four events.
    assert!(started.elapsed() >= Duration::from_millis(120));
    assert_eq!(delta_text(&events, "content"), "abc");
}

#[tokio::test]
async fn delay_step_waits_before_the_following_events() {
    let reply = Reply::stream([Step::text("a"), Step::Delay { ms: 150 }, Step::Done]);
    let server = MockServer::start(Script::new([reply])).await;
    let started = Instant::now();
    let events = parse_sse(&post_chat_text(&server, &chat_body("hi")).await);
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(events.last(), Some(&Event::Done));
}
