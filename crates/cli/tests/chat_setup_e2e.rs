//! A chat keeps its setup through the real binary: `chat --continue` and `--conversation` run
//! with the toolsets and parameters the chat was given, flags change them, `conversations setup`
//! shows them; grants made for the chat are listed and revoked.

mod common;

use common::*;
use switchboard_mock_provider::{Reply, Script};

async fn ok(env: &Env, args: &[&str]) -> String {
    let out = env.run(args).await;
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

fn offered(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_continue_keeps_the_toolsets_and_parameters_and_flags_change_them() {
    let env = Env::new(Script::new((0..5).map(|i| Reply::text(format!("answer {i}"))))).await;
    ok(&env, &["toolsets", "add", "clock", "get_time"]).await;
    let (out, events) = env.chat_json(&["--toolset", "clock", "--temperature", "0.4", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = conversation_id(&events);

    // Continued with no flags: the chat's toolset and temperature.
    ok(&env, &["chat", "--continue", "again"]).await;
    let body = env.mock.requests().last().unwrap().body.clone();
    assert_eq!((offered(&body), body["temperature"].clone()), (vec!["get_time".to_owned()], serde_json::json!(0.4)));

    // A flag changes one parameter, over the ones the chat has; by id as well.
    ok(&env, &["chat", "--conversation", &id, "--top-p", "0.5", "more"]).await;
    let body = env.mock.requests().last().unwrap().body.clone();
    assert_eq!((body["temperature"].clone(), body["top_p"].clone()), (serde_json::json!(0.4), serde_json::json!(0.5)));
    assert_eq!(offered(&body), ["get_time"]);
    let shown = ok(&env, &["conversations", "setup", &id]).await;
    assert!(shown.contains("Toolsets:       clock"), "{shown}");
    assert!(shown.contains("temperature 0.4, top-p 0.5"), "{shown}");
    assert!(shown.contains("Profile, model: mock / m"), "{shown}");

    // Every tool again, and the profile's parameters: kept for the next turn too.
    ok(&env, &["chat", "--continue", "--no-toolsets", "--clear-params", "all"]).await;
    ok(&env, &["chat", "--continue", "still all"]).await;
    let body = env.mock.requests().last().unwrap().body.clone();
    assert!(offered(&body).len() > 1, "{body}");
    assert!(body.get("temperature").is_none() && body.get("top_p").is_none(), "{body}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&env, &["conversations", "setup", &id, "--json"]).await).unwrap();
    assert_eq!(json["toolsets"], serde_json::json!([]));
    assert!(json["generation"].is_null(), "{json}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grants_for_a_chat_are_listed_and_revoked() {
    let env = Env::new(Script::new([Reply::text("hello")])).await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = conversation_id(&events);
    assert!(ok(&env, &["conversations", "grants", &id]).await.contains("Nothing is allowed for this chat only."));
    {
        // What "for this chat" in a terminal stores (the tests have no terminal to answer in).
        let store = switchboard_store::Store::open(&env.db_path()).unwrap();
        store.approve_tool_for_chat(&id, "get_time").unwrap();
        store.approve_tool_for_chat(&id, "egress:example.net").unwrap();
    }
    let listed = ok(&env, &["conversations", "grants", &id]).await;
    assert_eq!(listed, "tool  get_time\nhost  example.net\n");
    let left = ok(&env, &["conversations", "revoke", &id, "get_time"]).await;
    assert_eq!(left, "host  example.net\n");
    ok(&env, &["conversations", "revoke", &id, "--host", "example.net"]).await;
    let json = ok(&env, &["conversations", "grants", &id, "--json"]).await;
    assert_eq!(serde_json::from_str::<serde_json::Value>(&json).unwrap(), serde_json::json!([]));
    let out = env.run(&["conversations", "revoke", &id, "get_time"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("nothing to revoke"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_that_writes_summaries_is_picked_shown_and_cleared() {
    let env = Env::new(Script::new([Reply::text("hello")])).await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = conversation_id(&events);
    let shown = ok(&env, &["conversations", "summariser", &id]).await;
    assert!(shown.contains("(the chat's own model)"), "{shown}");
    let shown = ok(&env, &["conversations", "summariser", &id, "--provider", "mock", "--model", "small"]).await;
    assert!(shown.contains("Summaries by:   mock / small"), "{shown}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&env, &["conversations", "setup", &id, "--json"]).await).unwrap();
    assert_eq!(json["summariser"], serde_json::json!({ "provider": "mock", "model": "small" }));
    let out = env.run(&["conversations", "summariser", &id, "--provider", "ghost", "--model", "x"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no provider profile named 'ghost'"), "{}", stderr(&out));
    let shown = ok(&env, &["conversations", "summariser", &id, "--clear"]).await;
    assert!(shown.contains("(the chat's own model)"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_says_when_the_picked_summariser_cannot_be_used() {
    let long = "The harbour ledger lists crates of tea, copper and indigo by date.\n".repeat(500);
    let env = Env::new(Script::new([
        Reply::text("one"),
        Reply::text(long),
        Reply::text("three"),
        Reply::text("Own summary of the ledger."),
    ]))
    .await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = conversation_id(&events);
    ok(&env, &["chat", "--continue", "the ledger?"]).await;
    ok(&env, &["chat", "--continue", "and then?"]).await;
    let base = env.mock.base_url();
    ok(&env, &["providers", "add", "cheap", "--base-url", &base, "--model", "small"]).await;
    ok(&env, &["conversations", "summariser", &id, "--provider", "cheap", "--model", "small"]).await;
    ok(&env, &["providers", "remove", "cheap"]).await;

    let shown = ok(&env, &["conversations", "compact", &id]).await;
    assert!(shown.starts_with("Compacted: "), "{shown}");
    assert!(
        shown.contains("Note: The profile 'cheap' picked to write this chat's summaries no longer exists")
            && shown.contains("writes summaries instead"),
        "{shown}"
    );
    let stored: serde_json::Value = {
        let store = switchboard_store::Store::open(&env.db_path()).unwrap();
        serde_json::to_value(store.compactions(&id).unwrap()).unwrap()
    };
    assert!(stored[0]["summariserFallback"].as_str().is_some_and(|w| w.contains("'cheap'")), "{stored}");
    assert_eq!(stored[0]["compaction"]["summary"], "Own summary of the ledger.");
}
