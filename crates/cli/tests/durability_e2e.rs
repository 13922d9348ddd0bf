//! Killing the CLI mid-answer loses at most the last second of text and no tool result.

mod common;

use common::*;
use std::time::Duration;
use switchboard_mock_provider::{Reply, Script, Step, StreamOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_stream_leaves_an_interrupted_message_with_the_text_so_far() {
    let words: Vec<String> = (0..400).map(|i| format!("w{i} ")).collect();
    let full: String = words.concat();
    let script = Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::stream([Step::text(full.clone()), Step::finish("stop"), Step::Done]).with_options(StreamOptions {
            text_chunk_chars: Some(4),
            chunk_delay_ms: Some(10),
            ..Default::default()
        }),
    ]);
    let env = Env::new(script).await;
    let mut child =
        env.command(&["chat", "--json", "tell me a long story"]).stdout(std::process::Stdio::null()).spawn().unwrap();
    tokio::time::sleep(Duration::from_millis(2600)).await;
    let pid = child.id().expect("still running") as i32;
    // SAFETY-free: a plain kill(2) of our own child.
    assert_eq!(unsafe_kill(pid), 0);
    let status = child.wait().await.unwrap();
    assert!(!status.success());

    let list = env.run(&["conversations", "list", "--json"]).await;
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap();
    let stored = env.show_json(id).await;
    let answer = &stored[1];
    assert_eq!(answer["status"], "interrupted");
    let text = answer["content"].as_str().unwrap();
    assert!(full.starts_with(text), "stored text is a prefix of what streamed");
    // ~2.5 s at 4 chars per 10 ms streams ~1000 chars; checkpoints every second keep all but the last one.
    assert!(text.chars().count() >= 300, "only {} chars survived", text.chars().count());
    assert_eq!(answer["toolCalls"][0]["result"]["status"], "ok", "the tool result was written when it happened");
}

fn unsafe_kill(pid: i32) -> i32 {
    // std has no kill(2); `kill -9` is the portable way without libc in the test's dependency set.
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .map(|s| if s.success() { 0 } else { 1 })
        .unwrap_or(1)
}

/// Ctrl-C (SIGINT) stops the turn through the runtime's signal watcher: the answer so far is
/// kept as a stopped message, the last event says so, and the exit status is 130.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_mid_stream_stops_the_turn_and_keeps_the_partial_answer() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let env = Env::new(Script::new([Reply::stream([Step::text("Partial answer"), Step::Stall])])).await;
    let mut child =
        env.command(&["chat", "--json", "tell me a story"]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut events = Vec::new();
    let first_text = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let event: serde_json::Value = serde_json::from_str(&line).unwrap();
            let is_text = event["type"] == "textDelta";
            events.push(event);
            if is_text {
                return;
            }
        }
        panic!("the CLI ended before any text: {events:#?}");
    });
    first_text.await.expect("text within 20 s");

    let pid = child.id().expect("still running").to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait()).await.expect("ends after Ctrl-C").unwrap();
    while let Some(line) = lines.next_line().await.unwrap() {
        events.push(serde_json::from_str(&line).unwrap());
    }
    assert_eq!(status.code(), Some(130), "{events:#?}");
    let last = events.last().unwrap();
    assert_eq!((&last["type"], &last["finishReason"]), (&"done".into(), &"cancelled".into()), "{events:#?}");

    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[1]["status"], "cancelled");
    assert_eq!(stored[1]["content"], "Partial answer");
}
