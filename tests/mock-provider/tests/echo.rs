//! Echo mode, including the `get_time` tool-loop demo, through the library and the binary.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use common::{Event, chat_body, delta_text, parse_sse, post_chat_text, tool_calls};
use serde_json::{Value, json};
use switchboard_mock_provider::{MockServer, Reply, Script};

/// Runs the get_time demo against `base_url`: user asks the time, model calls get_time, tool result
/// goes back, model quotes it.
async fn time_demo(base_url: &str) {
    let client = reqwest::Client::new();
    let url = format!("{base_url}/chat/completions");
    let mut body = chat_body("What time is it?");
    let first = client.post(&url).json(&body).send().await.unwrap();
    let events = parse_sse(&first.text().await.unwrap());
    let calls = tool_calls(&events);
    let (id, name, arguments) = &calls[&0];
    assert_eq!((name.as_str(), arguments.as_str()), ("get_time", "{}"));

    let messages = body["messages"].as_array_mut().unwrap();
    messages.push(json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{ "id": id, "type": "function", "function": { "name": name, "arguments": arguments } }],
    }));
    messages.push(json!({ "role": "tool", "tool_call_id": id, "content": "2025-06-01T12:00:00Z" }));
    let second = client.post(&url).json(&body).send().await.unwrap();
    let events = parse_sse(&second.text().await.unwrap());
    assert_eq!(delta_text(&events, "content"), "get_time returned: 2025-06-01T12:00:00Z");
    assert_eq!(events.last(), Some(&Event::Done));
}

#[tokio::test]
async fn echo_repeats_the_last_user_message() {
    let server = MockServer::start(Script::echo()).await;
    let mut body = chat_body("ignored");
    body["messages"] = json!([
        { "role": "system", "content": "be brief" },
        { "role": "user", "content": "first" },
        { "role": "assistant", "content": "echo: first" },
        { "role": "user", "content": "sometimes a timeout happens" },
    ]);
    let events = parse_sse(&post_chat_text(&server, &body).await);
    assert_eq!(delta_text(&events, "content"), "echo: sometimes a timeout happens");
}

#[tokio::test]
async fn echo_serves_scripted_replies_first() {
    let mut script = Script::echo();
    script.replies.push(Reply::text("scripted"));
    let server = MockServer::start(script).await;
    let first = parse_sse(&post_chat_text(&server, &chat_body("a")).await);
    let second = parse_sse(&post_chat_text(&server, &chat_body("b")).await);
    assert_eq!(delta_text(&first, "content"), "scripted");
    assert_eq!(delta_text(&second, "content"), "echo: b");
}

#[tokio::test]
async fn echo_runs_the_get_time_demo() {
    let server = MockServer::start(Script::echo()).await;
    time_demo(&server.base_url()).await;
    assert_eq!(server.requests().len(), 2);
}

/// Kills the spawned binary even when an assertion fails.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn binary_prints_its_url_and_echoes_by_default() {
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_mock-provider"))
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mock-provider"),
    );
    let stdout = child.0.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let base_url =
        line.trim_end().strip_prefix("listening on ").unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    assert!(base_url.starts_with("http://127.0.0.1:") && base_url.ends_with("/v1"));

    let echoed = reqwest::Client::new()
        .post(format!("{base_url}/chat/completions"))
        .json(&chat_body("ping"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(delta_text(&parse_sse(&echoed), "content"), "echo: ping");
    time_demo(base_url).await;
}

#[tokio::test]
async fn binary_loads_a_script_file() {
    let script = Script::new([Reply::text("from file")]);
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), serde_json::to_string(&script).unwrap()).unwrap();
    let mut child = KillOnDrop(
        Command::new(env!("CARGO_BIN_EXE_mock-provider"))
            .arg("--script")
            .arg(file.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn mock-provider"),
    );
    let stdout = child.0.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    let base_url = line.trim_end().strip_prefix("listening on ").unwrap().to_owned();
    let client = reqwest::Client::new();
    let url = format!("{base_url}/chat/completions");
    let text = client.post(&url).json(&chat_body("x")).send().await.unwrap().text().await.unwrap();
    assert_eq!(delta_text(&parse_sse(&text), "content"), "from file");
    // Without --echo a script file is strict: the next request is an error.
    let exhausted = client.post(&url).json(&chat_body("y")).send().await.unwrap();
    assert_eq!(exhausted.status(), 500);
    let body: Value = exhausted.json().await.unwrap();
    assert_eq!(body["error"]["type"], "server_error");
}
