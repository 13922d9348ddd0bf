//! `conversations search`: the CLI reads the same full-text index as the app, prints where each
//! match is with the match marked, and takes FTS syntax in a query without an SQLite error.

mod common;

use common::{Env, stderr, stdout};
use switchboard_mock_provider::{Reply, Script};

async fn search(env: &Env, args: &[&str]) -> String {
    let mut full = vec!["conversations", "search"];
    full.extend_from_slice(args);
    let out = env.run(&full).await;
    assert!(out.status.success(), "search {args:?} failed: {}", stderr(&out));
    stdout(&out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_finds_messages_tool_calls_and_unspaced_scripts() {
    let env = Env::new(Script::new([
        Reply::text("Otters sleep holding hands so they do not drift apart."),
        Reply::text("我们明天去北京参观故宫博物院。"),
        Reply::text_then_tool_calls("Let me look. ", &[("c1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)]),
        Reply::text("Done."),
    ]))
    .await;
    for question in ["Tell me about sea otters", "明天去哪里？", "time in Japan"] {
        let out = env.run(&["chat", question]).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }

    let json: serde_json::Value = serde_json::from_str(&search(&env, &["tokyo", "--json"]).await).unwrap();
    let call = json.as_array().unwrap().iter().find(|h| h["kind"] == "toolArguments").expect("the call's arguments");
    assert_eq!(call["toolCallId"], "c1");
    assert!(call["messageId"].is_string());
    assert!(search(&env, &["tokyo"]).await.contains("[tool call]"));

    let text = search(&env, &["drift apart"]).await;
    assert!(text.contains("[assistant]"), "{text}");
    assert!(text.contains("do not [drift] [apart]."), "matches in brackets when not a terminal: {text}");
    assert!(text.contains("Tell me about sea otters"), "the conversation's title: {text}");

    let text = search(&env, &["故宫"]).await;
    assert!(text.contains("参观[故宫]博物院"), "{text}");

    let json: serde_json::Value = serde_json::from_str(&search(&env, &["\"sea otters\"", "--json"]).await).unwrap();
    let hits = json.as_array().unwrap();
    let kinds: Vec<&str> = hits.iter().map(|h| h["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"title") && kinds.contains(&"message"), "{json:#}");
    let message = hits.iter().find(|h| h["kind"] == "message").unwrap();
    assert_eq!(message["role"], "user");
    assert_eq!(message["onCurrentPath"], true);
    assert_eq!(message["snippet"], "Tell me about \u{E000}sea otters\u{E001}");

    // FTS syntax is never an SQLite error: it finds something sensible, or nothing.
    for q in ["\"unbalanced", "NEAR(", "otter*", "(", "-", "a:b", "^x", "OR"] {
        search(&env, &[q]).await;
    }
    assert!(search(&env, &["otter*"]).await.contains("[Otters]"));

    // A search of only excluded words says what to do, with a failing exit code.
    let out = env.run(&["conversations", "search", "-otters"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Add a word to find"), "{}", stderr(&out));

    let out = env.run(&["conversations", "search", "zzzunfound"]).await;
    assert!(out.status.success());
    assert!(stdout(&out).is_empty() && stderr(&out).contains("No matches."), "{}", stderr(&out));
}
