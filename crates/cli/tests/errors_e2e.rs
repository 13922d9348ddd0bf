//! Bad input of every kind gets a specific message, the right exit status, and loses nothing.

mod common;

use common::*;
use switchboard_mock_provider::{Reply, Script, Step};

fn http(status: u16, body: &str, content_type: &str) -> Reply {
    Reply::Http {
        status,
        headers: vec![("content-type".into(), content_type.into()), ("retry-after".into(), "0".into())],
        body: body.into(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_provider_names_the_known_ones() {
    let env = Env::new(Script::default()).await;
    let out = env.run(&["chat", "--provider", "nope", "hi"]).await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("error[config]: Unknown provider 'nope'. Known profiles: mock."), "{err}");
    assert!(env.mock.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_key_says_where_to_set_it_and_is_not_retried() {
    let body =
        r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#;
    let env = Env::new(Script::new([http(401, body, "application/json")])).await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let error = of_type(&events, "error")[0];
    assert_eq!(error["kind"], "auth");
    assert_eq!(error["retryable"], false);
    assert!(error["message"].as_str().unwrap().contains("Incorrect API key provided"));
    assert!(stderr(&out).contains("SWITCHBOARD_KEY_MOCK"), "{}", stderr(&out));
    assert_eq!(env.mock.requests().len(), 1);
    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[0]["content"], "hi", "the question is kept");
    assert_eq!(stored[1]["status"], "error");
    assert_eq!(stored[1]["error"]["kind"], "auth");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_and_server_errors_before_output_are_retried() {
    let env = Env::new(Script::new([
        Reply::rate_limited(0),
        http(500, r#"{"error":{"message":"boom","type":"server_error"}}"#, "application/json"),
        Reply::text("finally"),
    ]))
    .await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let notices = of_type(&events, "notice");
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(notices.iter().all(|n| n["kind"] == "retrying"));
    assert!(notices[0]["message"].as_str().unwrap().contains("rate limiting"));
    assert_eq!(env.mock.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_html_error_page_is_explained() {
    let page = "<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>";
    let env = Env::new(Script::new((0..4).map(|_| http(502, page, "text/html")))).await;
    let out = env.run(&["chat", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("error[server]") && err.contains("HTML page"), "{err}");
    assert_eq!(env.mock.requests().len(), 4, "three retries, then give up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_mid_answer_keeps_the_text_and_is_not_replayed() {
    let env =
        Env::new(Script::new([Reply::stream([Step::text("Half an ans"), Step::Drop]), Reply::text("never sent")]))
            .await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(of_type(&events, "error")[0]["kind"], "network");
    assert_eq!(env.mock.requests().len(), 1, "output had started: no retry");
    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[1]["content"], "Half an ans");
    assert_eq!(stored[1]["status"], "error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mid_stream_errors_and_malformed_chunks_are_specific() {
    let env = Env::new(Script::new([
        Reply::stream([
            Step::text("partial"),
            Step::ErrorObject { message: "The server had an error".into(), code: None },
        ]),
        Reply::stream([Step::text("x"), Step::Raw { data: "data: {not json\n\n".into() }]),
    ]))
    .await;
    let (out, events) = env.chat_json(&["one"]).await;
    assert_eq!(out.status.code(), Some(1));
    let e = of_type(&events, "error")[0];
    assert_eq!(e["kind"], "server");
    assert!(e["message"].as_str().unwrap().contains("The server had an error"));
    let (out, events) = env.chat_json(&["two"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(of_type(&events, "error")[0]["kind"], "protocol");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_stream_times_out() {
    // 5 s is the shortest idle timeout the settings accept.
    let env = Env::new(Script::new([Reply::stream([Step::text("waiting"), Step::Stall])])).await;
    let set = env.run(&["settings", "set", "limits", r#"{"idleTimeoutSecs": 5}"#]).await;
    assert!(set.status.success(), "{}", stderr(&set));
    let (out, events) = env.chat_json(&["hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let e = of_type(&events, "error")[0];
    assert_eq!(e["kind"], "timeout");
    assert!(e["message"].as_str().unwrap().contains("sent nothing for 5 s"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_refused_is_a_network_error() {
    let env = Env::new(Script::default()).await;
    let add = env.run(&["providers", "add", "dead", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]).await;
    assert!(add.status.success());
    let set = env.run(&["settings", "set", "retry", r#"{"maxRetries": 0}"#]).await;
    assert!(set.status.success(), "{}", stderr(&set));
    let out = env.run(&["chat", "--provider", "dead", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("error[network]: Couldn't connect to 127.0.0.1:9 — is the server running"), "{err}");
    assert!(err.contains("\nDetails: ") && err.contains("Connection refused"), "the transport's words follow: {err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_database_is_reported_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("switchboard.db");
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();
    let out = tokio::process::Command::new(BIN)
        .args(["conversations", "list"])
        .env("SWITCHBOARD_DATA_DIR", dir.path())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("error[storage]"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&db).unwrap(), garbage);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_model_says_how_to_set_one() {
    let env = Env::new(Script::default()).await;
    let add = env.run(&["providers", "add", "nomodel", "--base-url", "http://127.0.0.1:9/v1"]).await;
    assert!(add.status.success());
    let out = env.run(&["chat", "--provider", "nomodel", "hi"]).await;
    assert!(stderr(&out).contains("error[config]: No model chosen for provider 'nomodel'"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_sequences_from_the_model_are_neutralised_in_text_and_exact_in_json() {
    // OSC 52 (write the clipboard), OSC 0 (retitle the window), CSI 2J (clear the screen).
    let hostile = "copy \u{1b}]52;c;cHduZWQ=\u{7} title \u{1b}]0;pwned\u{7} clear \u{1b}[2J done";
    let env = Env::new(Script::new([Reply::text(hostile), Reply::text(hostile)])).await;
    let out = env.run(&["chat", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = stdout(&out);
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "{shown:?}");
    assert!(shown.contains("␛]52;c;cHduZWQ=␇"), "the sequence is visible, not run: {shown:?}");
    let show = env.run(&["conversations", "list"]).await;
    assert!(!stdout(&show).contains('\u{1b}'));

    let (out, events) = env.chat_json(&["--continue", "again"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text: String = of_type(&events, "textDelta").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(text, hostile, "--json carries the text exactly");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_with_damaged_pages_is_explained_and_left_untouched() {
    let env = Env::new(Script::new((0..30).map(|_| Reply::text("an answer worth keeping")))).await;
    for i in 0..30 {
        let out = env.run(&["chat", &format!("question {i} {}", "x".repeat(400))]).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let path = env.db_path();
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 4096 * 8);
    for b in &mut bytes[4096 * 3..4096 * 6] {
        *b = 0x5A;
    }
    std::fs::write(&path, &bytes).unwrap();
    for args in [&["conversations", "list"][..], &["chat", "hi"][..]] {
        let out = env.run(args).await;
        assert_eq!(out.status.code(), Some(1));
        let err = stderr(&out);
        assert!(err.contains("error[storage]: The file at"), "{err}");
        assert!(err.contains("damaged pages") && err.contains("left untouched"), "{err}");
        assert!(err.contains("start fresh"), "says how to start fresh: {err}");
        assert!(!err.trim_end().ends_with("malformed"), "{err}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the file was not modified");
}
