//! Budgets through the real binary against the mock, on the OpenAI Chat and Anthropic APIs: a
//! budget pauses before the request that would pass it (never after), each `--on-budget` choice
//! does what it says, a pause reached during a tool call keeps the call's result, everything
//! spent is stored, and a budget of zero or text is refused before anything is written.

mod common;

use common::{Env, of_type, stderr};
use serde_json::Value;
use switchboard_mock_provider::{Reply, Script};

/// Two rounds of tools, then an answer.
fn two_rounds() -> Script {
    Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::tool_call("c2", "get_time", r#"{"timezone":"UTC"}"#),
        Reply::text("It is late."),
    ])
}

/// The mock with the API `kind`, and a function running `chat --json ARGS` on it.
async fn env(kind: &str) -> Env {
    match kind {
        "openai" => Env::new(two_rounds()).await,
        other => Env::with_profile(two_rounds(), "p", other).await,
    }
}

async fn chat(env: &Env, kind: &str, args: &[&str]) -> (std::process::Output, Vec<Value>) {
    let mut full = vec!["chat", "--json"];
    full.extend_from_slice(args);
    match kind {
        "openai" => env.chat_json(args).await,
        _ => env.json_with_key(&full, "p", "sk-ant-e2e-fake-key-0123456789").await,
    }
}

const KINDS: [&str; 2] = ["openai", "anthropic"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_budget_pauses_before_the_request_that_would_pass_it_and_stop_keeps_everything() {
    for kind in KINDS {
        let env = env(kind).await;
        let (out, events) = chat(&env, kind, &["--budget-steps", "1", "--on-budget", "stop", "What time is it?"]).await;
        assert!(out.status.success(), "{kind}: {}", stderr(&out));
        assert_eq!(env.mock.requests().len(), 1, "{kind}: paused before the second request");
        let paused = of_type(&events, "budgetPaused");
        assert_eq!(paused.len(), 1, "{kind}: {events:?}");
        assert_eq!((paused[0]["kind"].as_str(), paused[0]["limit"].as_f64()), (Some("steps"), Some(1.0)));
        assert_eq!(paused[0]["spent"]["steps"], 1);
        let resolved = of_type(&events, "budgetResolved");
        assert_eq!(resolved[0]["choice"]["choice"], "stop");
        assert_eq!(resolved[0]["id"], paused[0]["id"]);
        // The first round's result is kept, live and stored.
        assert_eq!(of_type(&events, "toolResult")[0]["status"], "ok");
        assert_eq!(events.last().unwrap()["finishReason"], "budget");
        let id = common::conversation_id(&events);
        let shown = env.show_json(&id).await;
        let text = shown.to_string();
        assert!(text.contains("would pass this turn's step budget of 1 step"), "{kind}: the pause is stored: {text}");
        assert!(text.contains("You chose to stop at the budget"), "{kind}: {text}");
        assert!(text.contains("\"c1\""), "{kind}: the call is stored: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_makes_one_last_request_with_tools_off() {
    for kind in KINDS {
        let env = env(kind).await;
        let (out, events) =
            chat(&env, kind, &["--budget-steps", "1", "--on-budget", "answer", "What time is it?"]).await;
        assert!(out.status.success(), "{kind}: {}", stderr(&out));
        let reqs = env.mock.requests();
        assert_eq!(reqs.len(), 2, "{kind}");
        assert!(reqs[0].body.get("tools").is_some(), "{kind}: the first request offers tools");
        // OpenAI: no tools sent; Anthropic: tools sent (history holds tool blocks) with choice none.
        let off = reqs[1].body.get("tools").is_none() || reqs[1].body["tool_choice"]["type"] == "none";
        assert!(off, "{kind}: the last request has tools off: {}", reqs[1].body);
        assert_eq!(of_type(&events, "budgetResolved")[0]["choice"]["choice"], "answerNow");
        assert_eq!(events.last().unwrap()["finishReason"], "budget");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_allows_the_same_amount_again_until_the_model_answers() {
    for kind in KINDS {
        let env = env(kind).await;
        let (out, events) =
            chat(&env, kind, &["--budget-steps", "1", "--on-budget", "continue", "What time is it?"]).await;
        assert!(out.status.success(), "{kind}: {}", stderr(&out));
        assert_eq!(env.mock.requests().len(), 3, "{kind}");
        let paused = of_type(&events, "budgetPaused");
        assert_eq!(paused.len(), 2, "{kind}: before the second and the third request");
        assert_eq!(paused[1]["spent"]["steps"], 2);
        assert!(of_type(&events, "budgetResolved").iter().all(|r| r["choice"]["choice"] == "continue"));
        assert_eq!(events.last().unwrap()["finishReason"], "stop");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_or_a_choice_the_step_limit_answers_now_as_before() {
    let env = env("openai").await;
    let (out, events) = env.chat_json(&["--max-iterations", "1", "What time is it?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("no terminal to ask"), "{}", stderr(&out));
    assert_eq!(of_type(&events, "budgetPaused")[0]["kind"], "stepLimit");
    assert_eq!(events.last().unwrap()["finishReason"], "maxIterations");
    assert_eq!(env.mock.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_budget_reached_during_a_tool_call_keeps_its_result_and_pauses_before_the_next_request() {
    let env = Env::new(Script::new([Reply::tool_call("n1", "nap", "{}"), Reply::text("Rested.")])).await;
    let add =
        ["tools", "add-command", "--yes", "nap", "--description", "Naps.", "--", "sh", "-c", "sleep 1.5; echo rested"];
    let out = env.run(&add).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (out, events) =
        env.chat_json(&["--approve-all", "--budget-time", "1s", "--on-budget", "stop", "Take a nap"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = of_type(&events, "toolResult");
    assert_eq!((result[0]["status"].as_str(), result[0]["output"].as_str()), (Some("ok"), Some("rested\n")));
    let paused = of_type(&events, "budgetPaused");
    assert_eq!(paused[0]["kind"], "time");
    assert!(paused[0]["spent"]["elapsedMs"].as_u64().unwrap() >= 1000);
    assert_eq!(env.mock.requests().len(), 1, "no request after the time was up");
    let shown = env.show_json(&common::conversation_id(&events)).await.to_string();
    assert!(shown.contains("rested"), "the result is stored: {shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_of_zero_or_text_is_refused_before_anything_is_written() {
    let env = env("openai").await;
    for (flag, value, says) in [
        ("--budget-steps", "0", "whole number from 1"),
        ("--budget-steps", "-3", "whole number from 1"),
        ("--budget-time", "0s", "allows nothing"),
        ("--budget-time", "soon", "not a duration"),
        ("--budget-cost", "0", "more than $0"),
        ("--budget-cost", "cheap", "not an amount"),
    ] {
        let arg = format!("{flag}={value}");
        let out = env.run(&["chat", &arg, "Hi"]).await;
        assert!(!out.status.success(), "{flag} {value}");
        assert!(stderr(&out).contains(says), "{flag} {value}: {}", stderr(&out));
    }
    assert!(env.mock.requests().is_empty());
}
