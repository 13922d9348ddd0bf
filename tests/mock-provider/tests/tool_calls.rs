//! Streamed tool calls: fragment shape, reassembly by index and round-robin interleaving.

mod common;

use common::{Event, chat_body, delta_text, parse_sse, post_chat, post_chat_text, tool_calls};
use serde_json::{Value, json};
use switchboard_mock_provider::{MockServer, Reply, Script, StreamOptions};

const ARGS: &str = r#"{"city":"Zürich","units":"metric","days":[1,2,3]}"#;

fn fragments(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Json(chunk) => chunk.pointer("/choices/0/delta/tool_calls/0").cloned(),
            Event::Done => None,
        })
        .collect()
}

fn sorted_keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<_> = value.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

#[tokio::test]
async fn tool_call_fragments_reassemble_to_the_original_arguments() {
    let server = MockServer::start(Script::new([Reply::tool_call("call_1", "get_weather", ARGS)])).await;
    let events = parse_sse(&post_chat_text(&server, &chat_body("weather?")).await);

    let fragments = fragments(&events);
    assert_eq!(fragments.len(), ARGS.chars().count().div_ceil(8));
    assert_eq!(
        fragments[0],
        json!({
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": { "name": "get_weather", "arguments": "{\"city\":" },
        })
    );
    for later in &fragments[1..] {
        assert_eq!(sorted_keys(later), ["function", "index"]);
        assert_eq!(sorted_keys(&later["function"]), ["arguments"]);
    }
    assert_eq!(events[0].json()["choices"][0]["delta"]["role"], "assistant");

    let calls = tool_calls(&events);
    assert_eq!(calls[&0], ("call_1".to_owned(), "get_weather".to_owned(), ARGS.to_owned()));
    let finish = events
        .iter()
        .find(|event| matches!(event, Event::Json(chunk) if chunk["choices"][0]["finish_reason"].is_string()))
        .unwrap();
    assert_eq!(finish.json()["choices"][0]["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn args_chunk_chars_controls_fragment_size() {
    let reply = Reply::tool_call("c", "f", "abcdefg")
        .with_options(StreamOptions { args_chunk_chars: Some(3), ..StreamOptions::default() });
    let server = MockServer::start(Script::new([reply])).await;
    let events = parse_sse(&post_chat_text(&server, &chat_body("x")).await);
    let pieces: Vec<_> = fragments(&events)
        .iter()
        .map(|fragment| fragment["function"]["arguments"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(pieces, ["abc", "def", "g"]);
}

#[tokio::test]
async fn parallel_tool_calls_are_interleaved_round_robin() {
    let reply = Reply::parallel_tool_calls(&[
        ("call_a", "read_file", r#"{"path":"/tmp/a.txt"}"#),
        ("call_b", "get_time", "{}"),
        ("call_c", "search", r#"{"q":"rust"}"#),
    ]);
    let server = MockServer::start(Script::new([reply])).await;
    let events = parse_sse(&post_chat_text(&server, &chat_body("x")).await);

    let order: Vec<u64> = fragments(&events).iter().map(|fragment| fragment["index"].as_u64().unwrap()).collect();
    // a: 21 chars = 3 fragments, b: 1, c: 12 chars = 2.
    assert_eq!(order, [0, 1, 2, 0, 2, 0]);

    let calls = tool_calls(&events);
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[&0].2, r#"{"path":"/tmp/a.txt"}"#);
    assert_eq!(calls[&1], ("call_b".into(), "get_time".into(), "{}".into()));
    assert_eq!(calls[&2].1, "search");
    assert_eq!(calls[&2].2, r#"{"q":"rust"}"#);
}

#[tokio::test]
async fn text_then_sequential_tool_calls_count_indices_within_the_reply() {
    let reply = Reply::text_then_tool_calls(
        "Let me check.",
        &[("call_1", "get_time", "{}"), ("call_2", "echo", r#"{"text":"hi"}"#)],
    );
    let server = MockServer::start(Script::new([reply])).await;
    let events = parse_sse(&post_chat_text(&server, &chat_body("x")).await);

    assert_eq!(delta_text(&events, "content"), "Let me check.");
    assert_eq!(events[0].json()["choices"][0]["delta"]["role"], "assistant");
    let calls = tool_calls(&events);
    assert_eq!(calls[&0].0, "call_1");
    assert_eq!(calls[&1], ("call_2".into(), "echo".into(), r#"{"text":"hi"}"#.into()));
}

#[tokio::test]
async fn non_streaming_request_gets_tool_calls_in_the_message() {
    let server = MockServer::start(Script::new([Reply::tool_call("call_1", "get_time", "{}")])).await;
    let mut body = chat_body("time?");
    body.as_object_mut().unwrap().remove("stream");
    let completion: Value = post_chat(&server, &body).await.json().await.unwrap();
    assert_eq!(
        completion["choices"][0],
        json!({
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": "call_1",
                    "type": "function",
                    "function": { "name": "get_time", "arguments": "{}" },
                }],
            },
            "finish_reason": "tool_calls",
        })
    );
}
