//! Spend as data through the real binary against the mock, on all four APIs: each request's
//! usage in `chat --json` and stored, summed exactly (cached and reasoning tokens included),
//! priced per kind of token; a sub-agent's requests in its parent's total; a provider that
//! reports no usage, or numbers that cannot be true, estimated and marked so.

mod common;

use common::*;
use serde_json::Value;
use switchboard_core::Prices;
use switchboard_mock_provider::{MockServer, Reply, Script, Step};
use switchboard_store::Store;

const PRICES: Prices =
    Prices { input: 2.0, output: 10.0, cached_read: Some(0.5), cache_write: None, reasoning: Some(20.0) };

/// Prices profile `name` as the person would in its settings (the mock is local: free unless priced).
fn price(env: &Env, name: &str) {
    let store = Store::open(&env.db_path()).unwrap();
    let mut profile = store.provider(name).unwrap().expect("the profile exists");
    profile.options.prices = Some(PRICES);
    store.upsert_provider(&profile).unwrap();
}

fn usage_step(prompt: u64, completion: u64, reasoning: u64, cached: u64) -> Step {
    Step::Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        reasoning_tokens: reasoning,
        cached_tokens: cached,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

fn cost(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a cost, not {v}"))
}

/// A data dir whose profile `p` of `kind` points at a mock running `script` (Gemini's base URL
/// names its version path).
async fn profile_env(script: Script, kind: &str) -> Env {
    if kind != "gemini" {
        return Env::with_profile(script, "p", kind).await;
    }
    let env = Env::new(Script::new([])).await;
    let mock = MockServer::start(script).await;
    let base = format!("http://{}/v1beta", mock.addr());
    let out = env.run(&["providers", "add", "p", "--kind", kind, "--base-url", &base, "--model", "mock-model"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    Env { mock, ..env }
}

async fn report(env: &Env, by: &str) -> Value {
    let out = env.run(&["usage", "--by", by, "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_is_stored_summed_and_priced_per_kind_of_token_on_every_api() {
    for kind in ["openai", "openai-responses", "anthropic", "gemini"] {
        let script = Script::new([
            Reply::stream([
                Step::tool_call("call_1", "get_time", "{}"),
                Step::finish("tool_calls"),
                usage_step(1000, 200, 50, 400),
                Step::Done,
            ]),
            Reply::stream([
                Step::text("It is noon."),
                Step::finish("stop"),
                usage_step(1500, 100, 0, 1200),
                Step::Done,
            ]),
        ]);
        let env = profile_env(script, kind).await;
        price(&env, "p");
        let (out, events) =
            env.json_with_key(&["chat", "--json", "--provider", "p", "What time is it?"], "p", "sk-test").await;
        assert!(out.status.success(), "{kind}: {}", stderr(&out));

        // Anthropic reports no reasoning tokens apart: they are output there.
        let reasoning = if kind == "anthropic" { 0 } else { 50 };
        let usages = of_type(&events, "usage");
        assert_eq!(usages.len(), 2, "{kind}: one per request: {usages:#?}");
        let u1 = &usages[0];
        assert_eq!((u1["request"].as_u64(), u1["estimated"].as_bool()), (Some(1), Some(false)), "{kind}");
        assert_eq!(u1["usage"]["promptTokens"], 1000, "{kind}");
        assert_eq!(u1["usage"]["cachedTokens"], 400, "{kind}");
        assert_eq!(u1["usage"]["completionTokens"], 200, "{kind}");
        assert_eq!(u1["usage"]["reasoningTokens"], reasoning, "{kind}");
        // 600 fresh at $2, 400 cached at $0.50, output at $10, reasoning at $20 per million.
        let first = (600.0 * 2.0 + 400.0 * 0.5 + (200 - reasoning) as f64 * 10.0 + reasoning as f64 * 20.0) / 1e6;
        assert!(close(cost(&u1["costUsd"]), first), "{kind}: {} != {first}", u1["costUsd"]);
        let u2 = &usages[1];
        assert_eq!(u2["request"], 2, "{kind}");
        let second = (300.0 * 2.0 + 1200.0 * 0.5 + 100.0 * 10.0) / 1e6;
        assert!(close(cost(&u2["costUsd"]), second), "{kind}");
        assert_eq!(u2["total"]["promptTokens"], 2500, "{kind}");

        // Stored per request and summed exactly.
        let by_model = report(&env, "model").await;
        let total = &by_model["total"];
        assert_eq!(total["requests"], 2, "{kind}: {by_model:#}");
        assert_eq!(total["promptTokens"], 2500, "{kind}");
        assert_eq!(total["cachedTokens"], 1600, "{kind}");
        assert_eq!(total["completionTokens"], 300, "{kind}");
        assert_eq!(total["reasoningTokens"], reasoning, "{kind}");
        assert_eq!(total["unpricedRequests"], 0, "{kind}");
        assert!(close(cost(&total["costUsd"]), first + second), "{kind}");
        assert_eq!(by_model["groups"][0]["key"], "mock-model", "{kind}");
        let by_profile = report(&env, "profile").await;
        assert_eq!(by_profile["groups"][0]["key"], "p", "{kind}");

        // The answer's cost line and the conversation's total.
        let id = conversation_id(&events);
        let shown = stdout(&env.run(&["conversations", "show", &id]).await);
        let line = format!("cost: ${:.4} · 2 requests · 1600 cached tokens", first + second);
        assert!(shown.contains(&line), "{kind}: {line} in\n{shown}");
        assert!(shown.contains(&format!("conversation {line}")), "{kind}: {shown}");
        let table = stdout(&env.run(&["usage"]).await);
        assert!(table.contains("Total") && table.contains(&format!("${:.4}", first + second)), "{kind}: {table}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agents_requests_count_in_its_parents_total() {
    let env = Env::new(Script::new([
        Reply::stream([
            Step::tool_call("c1", "agent__Scout", r#"{"message":"Lyon"}"#),
            Step::finish("tool_calls"),
            usage_step(100, 10, 0, 0),
            Step::Done,
        ]),
        Reply::stream([Step::text("Lyon it is."), Step::finish("stop"), usage_step(200, 20, 0, 50), Step::Done]),
    ]))
    .await;
    let scout_mock = MockServer::start(Script::new([Reply::stream([
        Step::text("Bouchons."),
        Step::finish("stop"),
        usage_step(40, 4, 0, 0),
        Step::Done,
    ])]))
    .await;
    let out = env.run(&["providers", "add", "scouts", "--base-url", &scout_mock.base_url(), "--model", "m"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    price(&env, "mock");
    price(&env, "scouts");
    for args in [
        &["toolsets", "add", "helpers", "agent:Scout"][..],
        &["agents", "add", "Scout", "--profile", "scouts"],
        &["agents", "add", "Lead", "--profile", "mock", "--toolset", "helpers"],
    ] {
        let out = env.run(args).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let (out, events) = env.chat_json(&["--agent", "Lead", "Where to eat?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    // Live: the child's request nested in the call, then the call's total in the parent's.
    let nested: Vec<&Value> =
        of_type(&events, "toolProgress").into_iter().filter(|e| e["event"]["type"] == "usage").collect();
    assert_eq!(nested.len(), 1, "{events:#?}");
    assert_eq!(nested[0]["event"]["usage"]["promptTokens"], 40);
    let child_cost = (40.0 * 2.0 + 4.0 * 10.0) / 1e6;
    assert!(close(cost(&nested[0]["event"]["costUsd"]), child_cost));
    let usages = of_type(&events, "usage");
    let call_total = usages.iter().find(|u| u["agentCall"] == "c1").expect("the call's total");
    assert_eq!(call_total["usage"]["promptTokens"], 40);
    assert!(close(cost(&call_total["costUsd"]), child_cost));
    assert_eq!(events.last().unwrap()["usage"]["promptTokens"], 340, "the turn's total holds the child's");

    // Stored: three requests in the answer, by agent: the child's apart.
    let by_agent = report(&env, "agent").await;
    assert_eq!(by_agent["total"]["requests"], 3, "{by_agent:#}");
    assert_eq!(by_agent["total"]["promptTokens"], 340);
    let parent = (100.0 * 2.0 + 10.0 * 10.0 + 150.0 * 2.0 + 50.0 * 0.5 + 20.0 * 10.0) / 1e6;
    assert!(close(cost(&by_agent["total"]["costUsd"]), parent + child_cost));
    let groups: Vec<(String, u64)> = by_agent["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["key"].as_str().unwrap().to_owned(), g["total"]["requests"].as_u64().unwrap()))
        .collect();
    assert_eq!(groups, [("Lead".to_owned(), 2), ("Scout".to_owned(), 1)]);
    let shown = stdout(&env.run(&["conversations", "show", &conversation_id(&events)]).await);
    assert!(shown.contains(&format!("cost: ${:.4} · 3 requests", parent + child_cost)), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_that_is_missing_or_cannot_be_true_is_estimated_and_marked() {
    let env = Env::new(Script::new([
        // No usage at all.
        Reply::stream([Step::text("Twelve chars"), Step::finish("stop"), Step::Done]),
        // 20 million prompt tokens, more cached than sent.
        Reply::stream([Step::text("More."), Step::finish("stop"), usage_step(20_000_000, 5, 0, 0), Step::Done]),
        Reply::stream([Step::text("Odd."), Step::finish("stop"), usage_step(10, 5, 0, 11), Step::Done]),
    ]))
    .await;
    let (out, events) = env.chat_json(&["Hello there"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let u = of_type(&events, "usage");
    assert_eq!(u.len(), 1);
    assert_eq!(u[0]["estimated"], true);
    assert_eq!(u[0]["usage"]["completionTokens"], 3, "12 characters received: about 3 tokens");
    assert!(u[0]["usage"]["promptTokens"].as_u64().unwrap() > 0);
    assert_eq!(u[0]["costUsd"], 0.0, "the local mock is free");
    let id = conversation_id(&events);
    for question in ["And now?", "Once more?"] {
        let (out, events) = env.chat_json(&["--conversation", &id, question]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let u = of_type(&events, "usage");
        assert_eq!(u[0]["estimated"], true, "{question}: {u:#?}");
        assert!(u[0]["usage"]["promptTokens"].as_u64().unwrap() < 1000, "{question}: the absurd count is not kept");
        assert_eq!(u[0]["usage"]["cachedTokens"], 0);
    }
    let by_day = report(&env, "day").await;
    assert_eq!(by_day["total"]["requests"], 3);
    assert_eq!(by_day["total"]["estimatedRequests"], 3);
    let table = stdout(&env.run(&["usage", "--by", "day"]).await);
    assert!(table.contains("3 estimated"), "{table}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_period_is_read_in_local_days_and_bad_dates_are_explained() {
    let env = Env::new(Script::new([Reply::text("Hi.")])).await;
    let (out, _) = env.chat_json(&["Hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["usage", "--since", "2000-01-01", "--until", "2000-01-02"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("No requests in this period."), "{}", stdout(&out));
    let out = env.run(&["usage", "--since", "2000-01-01", "--json"]).await;
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(all["total"]["requests"], 1);
    let out = env.run(&["usage", "--since", "yesterday"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("YYYY-MM-DD"), "{}", stderr(&out));
    let out = env.run(&["usage", "--since", "2001-01-02", "--until", "2000-12-31"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("ends before it starts"), "{}", stderr(&out));
}
