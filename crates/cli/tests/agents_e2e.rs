//! Agents through the real binary: a lead agent calling two children in parallel, their work
//! nested under its calls live and in `conversations show`; an agent that takes control; an
//! exclusive one offered only when forced.

mod common;

use common::*;
use switchboard_mock_provider::{MockServer, Reply, Script, Step};

/// Adds a profile `name` pointing at a new mock server running `script`.
async fn add_profile(env: &Env, name: &str, script: Script) -> MockServer {
    let mock = MockServer::start(script).await;
    let out = env.run(&["providers", "add", name, "--base-url", &mock.base_url(), "--model", "m"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    mock
}

async fn ok(env: &Env, args: &[&str]) -> String {
    let out = env.run(args).await;
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_agent_runs_two_children_in_parallel_and_shows_their_work_under_its_calls() {
    let env = Env::new(Script::new([
        Reply::parallel_tool_calls(&[
            ("c1", "agent__Scout", r#"{"message":"Lyon","focus":"food"}"#),
            ("c2", "agent__Writer", r#"{"message":"a title"}"#),
        ]),
        Reply::text("Lyon, with a title."),
    ]))
    .await;
    let scouts = add_profile(&env, "scouts", Script::echo()).await;
    let writer = add_profile(
        &env,
        "writer",
        Script::new([Reply::stream([Step::text("Bouchons "), Step::text("of Lyon"), Step::finish("stop")])]),
    )
    .await;
    ok(&env, &["toolsets", "add", "helpers", "agent:Scout", "agent:Writer", "--description", "Two helpers"]).await;
    ok(&env, &["agents", "add", "Scout", "--profile", "scouts", "--input", "focus:string:required"]).await;
    ok(&env, &["agents", "add", "Writer", "--profile", "writer", "--instructions", "Write titles."]).await;
    let saved =
        ok(&env, &["agents", "add", "Lead", "--profile", "mock", "--toolset", "helpers", "--max-iterations", "4"])
            .await;
    assert!(saved.contains("Saved the agent 'Lead' (as a tool: agent__Lead)."), "{saved}");
    let listed = ok(&env, &["agents", "list"]).await;
    assert!(listed.contains("Lead  mock  [helpers]"), "{listed}");
    let sets = ok(&env, &["toolsets", "list"]).await;
    assert!(sets.contains("helpers  agent__Scout, agent__Writer"), "{sets}");

    // Live, as text: the children's work sits under the lead's calls.
    let out = env.run(&["chat", "--agent", "Lead", "Tell me about Lyon"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("⚙ agent__Scout"), "{text}");
    assert!(text.contains("    Scout[1]: done (stop,"), "{text}");
    assert!(text.contains("    Writer[1]: done (stop,"), "{text}");
    assert!(text.contains("↳ agent__Scout ok") && text.contains("echo: Lyon  focus: food"), "{text}");
    assert!(text.contains("↳ agent__Writer ok") && text.contains("Bouchons of Lyon"), "{text}");
    assert!(text.trim_end().ends_with("Lyon, with a title."), "{text}");
    assert_eq!(scouts.requests().len(), 1);
    assert_eq!(writer.requests()[0].body["messages"][0]["content"], "Write titles.");
    let lead_tools = &env.mock.requests()[0].body["tools"];
    assert_eq!(lead_tools[0]["function"]["parameters"]["required"], serde_json::json!(["message", "focus"]));

    // Stored: the same lines come back, and the chat remembers its agent.
    let latest = ok(&env, &["conversations", "list", "--json"]).await;
    let id = serde_json::from_str::<serde_json::Value>(&latest).unwrap()[0]["id"].as_str().unwrap().to_owned();
    let shown = ok(&env, &["conversations", "show", &id]).await;
    assert!(shown.contains("    Writer[1]: done (stop,"), "{shown}");
    let stored = env.show_json(&id).await;
    let calls = stored[1]["toolCalls"].as_array().unwrap();
    assert!(calls.iter().all(|c| !c["nested"].as_array().unwrap().is_empty()), "{calls:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_takes_control_answers_for_the_lead_and_an_exclusive_one_runs_only_when_forced() {
    let env = Env::new(Script::new([
        Reply::tool_call("c1", "agent__Deep", r#"{"message":"dig into tides"}"#),
        // The forced turn.
        Reply::tool_call("c2", "agent__Solo", r#"{"message":"alone"}"#),
        Reply::text("Solo said its piece."),
    ]))
    .await;
    let _deep = add_profile(
        &env,
        "deep",
        Script::new([Reply::stream([Step::text("Tides follow "), Step::text("the moon."), Step::finish("stop")])]),
    )
    .await;
    let _solo = add_profile(&env, "solo", Script::echo()).await;
    ok(&env, &["toolsets", "add", "team", "agent:Deep", "agent:Solo", "get_time"]).await;
    ok(
        &env,
        &[
            "agents",
            "add",
            "Deep",
            "--profile",
            "deep",
            "--takes-control",
            "--prompt",
            "Hand anything about the sea to Deep.",
        ],
    )
    .await;
    ok(&env, &["agents", "add", "Solo", "--profile", "solo", "--exclusive"]).await;
    ok(&env, &["agents", "add", "Lead", "--profile", "mock", "--toolset", "team"]).await;

    let (out, events) = env.chat_json(&["--agent", "Lead", "Why tides?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // The child's answer streamed as the lead's own, and the lead's turn ended with it.
    let answer: String =
        of_type(&events, "textDelta").iter().map(|e| e["text"].as_str().unwrap()).collect::<Vec<_>>().concat();
    assert_eq!(answer, "Tides follow the moon.");
    let done = of_type(&events, "done");
    assert_eq!(done[0]["finishReason"], "toolTookControl");
    // Not forced, the exclusive agent was not offered.
    let first = env.mock.requests().remove(0).body;
    let offered: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(offered, ["agent__Deep", "get_time"]);
    // The agent's note for its callers is in the lead's system prompt while it is offered.
    assert_eq!(first["messages"][0]["content"], "Hand anything about the sea to Deep.");

    let id = conversation_id(&events);
    let (out, events) = env.chat_json(&["--conversation", &id, "--force", "agent__Solo", "Solo, please"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = env.mock.requests();
    let forced = &requests[1].body;
    assert_eq!(forced["tools"].as_array().unwrap().len(), 1);
    assert_eq!(forced["tools"][0]["function"]["name"], "agent__Solo");
    let result = &of_type(&events, "toolResult")[0];
    assert_eq!(result["output"], "echo: alone");
}
