//! Request recording, runtime pushes and scripts as JSON files.

mod common;

use common::{chat_body, delta_text, parse_sse, post_chat, post_chat_text};
use serde_json::json;
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};

#[tokio::test]
async fn requests_are_recorded_with_body_and_headers() {
    let server = MockServer::start(Script::new([Reply::text("a"), Reply::text("b")])).await;
    let mut body = chat_body("hello");
    body["tools"] = json!([
        { "type": "function", "function": { "name": "get_time", "parameters": {} } },
        { "type": "function", "function": { "name": "read_file", "parameters": {} } },
    ]);
    let _ = post_chat_text(&server, &body).await;
    let _ = post_chat_text(&server, &chat_body("again")).await;

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.body, body);
    assert_eq!(first.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(first.header("Content-Type"), Some("application/json"));
    assert!(first.headers.iter().all(|(name, _)| *name == name.to_lowercase()));
    assert_eq!(first.tool_names(), ["get_time", "read_file"]);
    assert_eq!(first.messages()[0]["content"], "hello");
    assert!(requests[1].tool_names().is_empty());
    assert_eq!(requests[1].messages()[0]["content"], "again");
}

#[tokio::test]
async fn pushed_replies_are_served_after_the_script() {
    let server = MockServer::start(Script::new([Reply::text("scripted")])).await;
    server.push(Reply::text("pushed"));
    assert_eq!(server.remaining_replies(), 2);
    let first = parse_sse(&post_chat_text(&server, &chat_body("1")).await);
    let second = parse_sse(&post_chat_text(&server, &chat_body("2")).await);
    assert_eq!(delta_text(&first, "content"), "scripted");
    assert_eq!(delta_text(&second, "content"), "pushed");
    assert_eq!(post_chat(&server, &chat_body("3")).await.status(), 500);
    server.push(Reply::text("late"));
    let late = parse_sse(&post_chat_text(&server, &chat_body("4")).await);
    assert_eq!(delta_text(&late, "content"), "late");
}

#[test]
fn script_round_trips_through_a_json_file() {
    let script = Script::new([
        Reply::text("hi").with_options(StreamOptions {
            text_chunk_chars: Some(2),
            split_bytes: Some(5),
            ..StreamOptions::default()
        }),
        Reply::stream([
            Step::Reasoning { text: "hmm".to_owned() },
            Step::ParallelToolCalls { calls: vec![("a".into(), "f".into(), "{}".into())] },
            Step::Delay { ms: 5 },
            Step::ErrorObject { message: "x".into(), code: None },
            Step::Raw { data: ": ping\n\n".into() },
            Step::Stall,
            Step::Drop,
        ]),
        Reply::rate_limited(3),
    ])
    .with_chunk_delay(20);

    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), serde_json::to_string_pretty(&script).unwrap()).unwrap();
    let loaded: Script = serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
    assert_eq!(loaded, script);
}

#[test]
fn handwritten_json_uses_snake_case_tags_and_defaults() {
    let script: Script = serde_json::from_value(json!({
        "replies": [
            { "type": "stream", "steps": [
                { "type": "text", "text": "Hello" },
                { "type": "tool_call", "id": "call_1", "name": "get_time", "arguments": "{}" },
                { "type": "usage", "prompt_tokens": 3, "completion_tokens": 4 },
                { "type": "finish", "reason": "tool_calls" },
                { "type": "done" },
            ]},
            { "type": "http", "status": 401, "body": "{}" },
        ]
    }))
    .unwrap();
    assert!(!script.echo_when_empty);
    assert_eq!(script.chunk_delay_ms, 0);
    assert_eq!(
        script.replies[0],
        Reply::stream([
            Step::text("Hello"),
            Step::tool_call("call_1", "get_time", "{}"),
            Step::usage(3, 4),
            Step::finish("tool_calls"),
            Step::Done,
        ])
    );
    assert_eq!(script.replies[1], Reply::http(401, "{}"));
}
