//! Hostile servers and broken streams, end to end through the CLI: no crash, no unbounded memory,
//! the partial answer kept, and a message that says what happened.

mod common;

use common::*;
use switchboard_mock_provider::{Reply, Script, Step};

fn with_headers(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
    Reply::Http {
        status,
        headers: headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
        body: body.into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absurd_retry_hints_do_not_crash_and_the_retry_answers() {
    let limited = r#"{"error":{"message":"slow down","type":"rate_limit_exceeded","retry_after":"NaN"}}"#;
    let env = Env::new(Script::new([
        with_headers(429, &[("retry-after-ms", "1e309"), ("retry-after", "inf")], limited),
        Reply::text("finally"),
    ]))
    .await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(of_type(&events, "notice").len(), 1);
    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[1]["status"], "complete");
    assert_eq!(stored[1]["content"], "finally");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_line_ends_with_a_protocol_error_and_keeps_the_text_before() {
    let env = Env::new(Script::new([Reply::stream([
        Step::text("kept"),
        Step::LongLine { prefix: "data: ".into(), len: 100 * 1024 * 1024 },
        Step::Raw { data: "\n\n".into() },
        Step::finish("stop"),
        Step::Done,
    ])]))
    .await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let error = of_type(&events, "error")[0];
    assert_eq!(error["kind"], "protocol");
    assert!(error["message"].as_str().unwrap().contains("a line longer than 4 MiB"), "{error}");
    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[1]["status"], "error");
    assert_eq!(stored[1]["content"], "kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spend_limit_is_not_retried_and_says_where_to_change_it() {
    let body = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#;
    let env = Env::new(Script::new([with_headers(429, &[("retry-after", "1")], body), Reply::text("never")])).await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let error = of_type(&events, "error")[0];
    assert_eq!(error["retryable"], false);
    assert!(error["message"].as_str().unwrap().contains("billing settings"), "{error}");
    assert_eq!(env.mock.requests().len(), 1, "never retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_mid_answer_says_so_and_keeps_the_partial_text() {
    let env = Env::new(Script::new([Reply::stream([Step::text("half an ans"), Step::Drop])])).await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let message = of_type(&events, "error")[0]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("lost mid-answer"), "{message}");
    assert!(!message.contains("base URL"), "{message}");
    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[1]["content"], "half an ans");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_event_stream_fields_and_keep_alives_never_end_the_answer() {
    let env = Env::new(Script::new([Reply::stream([
        Step::RawBytes { bytes: b"\xEF\xBB\xBF: keep-alive\r\n\r\n".to_vec() },
        Step::text("one "),
        Step::RawBytes { bytes: b"id: \0\xFF\nretry: never\nfoo\nbar: baz\n\n".to_vec() },
        Step::text("two"),
        Step::finish("stop"),
        Step::Done,
    ])]))
    .await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[1]["content"], "one two");
}
