//! `switchboard models` end to end: what a model holds and costs with where each fact came from
//! (the catalogue, a default that says so, a local server's "free", "price unknown"), and a
//! refresh from a local server (never the internet) that is used by the next command, while a
//! corrupt download changes nothing.

mod common;

use axum::Router;
use axum::routing::get;
use common::*;
use switchboard_mock_provider::Script;

const FRESH: &str = r#"{
  "switchboard-test-model": {
    "litellm_provider": "openai", "mode": "chat", "max_input_tokens": 50000, "max_output_tokens": 5000,
    "input_cost_per_token": 0.000001, "output_cost_per_token": 0.000004
  }
}"#;

async fn catalogue_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Router::new()
        .route("/fresh.json", get(|| async { FRESH }))
        .route("/corrupt.json", get(|| async { "{\"switchboard-test-model\": {" }));
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://127.0.0.1:{port}")
}

async fn ok(env: &Env, args: &[&str]) -> String {
    let out = env.run(args).await;
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_says_what_a_model_holds_and_costs_and_where_each_came_from() {
    let env = Env::new(Script::new([])).await;
    ok(&env, &["providers", "add", "oai", "--kind", "openai", "--base-url", "https://api.openai.com/v1"]).await;

    let gpt = ok(&env, &["models", "show", "--profile", "oai", "gpt-4o"]).await;
    assert!(gpt.contains("Context window  128,000 tokens  (the catalogue)"), "{gpt}");
    assert!(gpt.contains("Catalogue       bundled LiteLLM snapshot of "), "{gpt}");
    assert!(gpt.contains("Output limit    16,384 tokens"), "{gpt}");
    assert!(gpt.contains("input         $2.50") && gpt.contains("output        $10"), "{gpt}");
    assert!(gpt.contains("cached read   $1.25"), "{gpt}");
    assert!(gpt.contains("tools yes"), "{gpt}");

    let unknown = ok(&env, &["models", "show", "--profile", "oai", "house-model"]).await;
    assert!(unknown.contains("32,768 tokens  (assumed: nobody knows it)"), "{unknown}");
    assert!(unknown.contains("price unknown") && !unknown.contains("$0"), "{unknown}");
    assert!(unknown.contains("Note: The context window of house-model is unknown"), "{unknown}");

    // The default profile (the mock, on this computer) and its own model.
    let local = ok(&env, &["models", "show"]).await;
    assert!(local.starts_with("mock-model (profile mock)"), "{local}");
    assert!(local.contains("Prices          free"), "{local}");

    let json: serde_json::Value =
        serde_json::from_str(&ok(&env, &["models", "show", "--profile", "oai", "gpt-4o", "--json"]).await).unwrap();
    assert_eq!(json["model"]["resolved"]["spec"]["contextWindow"], 128_000);
    assert_eq!(json["model"]["resolved"]["source"], "catalogue");
    assert_eq!(json["catalogue"]["source"], "bundled");

    let missing = env.run(&["models", "show", "--profile", "nope", "gpt-4o"]).await;
    assert!(!missing.status.success());
    assert!(stderr(&missing).contains("Unknown provider 'nope'"), "{}", stderr(&missing));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refresh_is_used_by_the_next_command_and_a_corrupt_one_changes_nothing() {
    let base = catalogue_server().await;
    let env = Env::new(Script::new([])).await;
    ok(&env, &["providers", "add", "oai", "--kind", "openai", "--base-url", "https://api.openai.com/v1"]).await;

    let said = ok(&env, &["models", "refresh", "--from", &format!("{base}/fresh.json")]).await;
    assert!(said.starts_with("Model catalogue: LiteLLM snapshot of ") && said.contains("(1 models)"), "{said}");
    let shown = ok(&env, &["models", "show", "--profile", "oai", "switchboard-test-model"]).await;
    assert!(shown.contains("50,000 tokens  (the catalogue)"), "{shown}");
    assert!(shown.contains("Catalogue       LiteLLM snapshot of "), "{shown}");
    assert!(shown.contains("input         $1\n") && shown.contains("output        $4\n"), "{shown}");

    let bad = env.run(&["models", "refresh", "--from", &format!("{base}/corrupt.json")]).await;
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("could not be read"), "{}", stderr(&bad));
    assert_eq!(ok(&env, &["models", "show", "--profile", "oai", "switchboard-test-model"]).await, shown);
}
