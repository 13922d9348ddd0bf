//! A provider that quotes the key back in its 401 body, and a tool error that repeats it, leave
//! the key out of the printed events, stderr, the data dir and both exports.

mod common;

use common::*;
use switchboard_mock_provider::{Reply, Script};

const KEY: &str = "sk-test-echoed-cli-0123456789wxyz";

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() { out.extend(walk(&path)) } else { out.push(path) }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_echoed_by_the_server_or_a_tool_is_not_printed_stored_or_exported() {
    let echo = Reply::Http {
        status: 401,
        headers: vec![("content-type".into(), "application/json".into())],
        body: format!(r#"{{"error":{{"message":"Invalid 'Authorization: Bearer {KEY}'"}}}}"#),
    };
    let url = format!("http://127.0.0.1:9/?key={KEY}");
    let env = Env::new(Script::new([
        Reply::tool_call("c1", "web_fetch", serde_json::json!({ "url": url }).to_string()),
        echo,
    ]))
    .await;
    let out = env
        .command(&["--log", "trace", "chat", "--json", "--approve-all", "fetch it"])
        .env("SWITCHBOARD_KEY_MOCK", KEY)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(env.mock.requests()[1].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert!(stdout(&out).contains("Invalid 'Authorization: Bearer "), "{}", stdout(&out));
    assert!(stdout(&out).contains("efused to fetch http://127.0.0.1:9/?key="), "{}", stdout(&out));
    let conversation = stdout(&out)
        .lines()
        .next()
        .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|e| e["conversationId"].as_str().map(str::to_owned))
        .unwrap();
    let mut printed = vec![out.stdout.clone(), out.stderr.clone()];
    for format in ["json", "md"] {
        let export = env.run(&["conversations", "export", &conversation, "--format", format]).await;
        assert!(export.status.success(), "{}", stderr(&export));
        printed.push(export.stdout);
    }
    let show = env.run(&["conversations", "show", &conversation]).await;
    printed.push(show.stdout);
    for text in &printed {
        assert!(!contains(text, KEY), "the key was printed: {}", String::from_utf8_lossy(text));
    }
    for path in walk(env.data_dir()) {
        assert!(!contains(&std::fs::read(&path).unwrap(), KEY), "the key is in {}", path.display());
    }
}
