//! What the reference "everything" server asks during a call, through the CLI and the loop: a
//! completion (sampling) answered by the mock provider on the chat's profile with tools off,
//! capped, nested in the call and counted in the chat's usage; a form (elicitation) asked on a
//! terminal (a pseudo-terminal from `script`) and declined without one; the roots from mcp.json.

mod common;

use common::*;
use switchboard_mock_provider::{Reply, Script};

async fn with_everything(script: Script) -> Env {
    let env = Env::new(script).await;
    let out = env.run(&["mcp", "add", "every", "--yes", "--", &everything(), "stdio"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("every__trigger-sampling-request"), "{}", stdout(&out));
    env
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_request_for_a_completion_runs_on_the_chats_model_capped_nested_and_counted() {
    let env = with_everything(Script::new([
        Reply::tool_call("c1", "every__trigger-sampling-request", r#"{"prompt":"Say hi","maxTokens":1000000}"#),
        Reply::text("Hi from the sampled model."),
        Reply::text("Done."),
    ]))
    .await;
    let (out, events) = env.chat_json(&["--approve-all", "--approve-sampling", "Ask the server"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    // The card: the request with its cap, then approved.
    let asked = of_type(&events, "samplingRequested");
    assert_eq!(asked.len(), 1, "{events:?}");
    let asked = asked[0];
    assert_eq!(asked["server"], "every");
    assert_eq!(asked["tool"], "trigger-sampling-request");
    assert_eq!(asked["callId"], "c1");
    assert_eq!(asked["requestedMaxTokens"], 1_000_000);
    let cap = asked["maxTokens"].as_u64().unwrap();
    assert!(cap < 1_000_000, "{asked}");
    assert_eq!(asked["systemPrompt"], "You are a helpful test server.");
    assert!(asked["messages"][0]["text"].as_str().unwrap().contains("Say hi"), "{asked}");
    assert_eq!(of_type(&events, "samplingResolved")[0]["approved"], true);

    // The completion ran on the chat's profile, tools off, capped; nested in the call's card.
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 3, "the turn, the completion, the turn again");
    let sampled = &requests[1].body;
    assert!(sampled.get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)), "{sampled}");
    let sent_cap = sampled.get("max_completion_tokens").or_else(|| sampled.get("max_tokens"));
    assert_eq!(sent_cap.and_then(|v| v.as_u64()), Some(cap), "{sampled}");
    assert_eq!(sampled["messages"][0]["content"], "You are a helpful test server.");
    let nested: Vec<_> = of_type(&events, "toolProgress")
        .into_iter()
        .filter(|e| e["instance"].as_str().is_some_and(|i| i.starts_with("sampling[")))
        .collect();
    assert!(nested.iter().any(|e| e["event"]["type"] == "textDelta"), "{nested:?}");
    let result = of_type(&events, "toolResult");
    assert_eq!(result[0]["status"], "ok", "{result:?}");
    assert!(result[0]["output"].as_str().unwrap().contains("Hi from the sampled model."), "{result:?}");

    // Its usage counts toward the chat's turn.
    let usage = of_type(&events, "usage");
    assert!(usage.iter().any(|u| u["agentCall"] == "c1"), "{usage:?}");
    let done = of_type(&events, "done");
    let turn_total = done[0]["usage"]["promptTokens"].as_u64().unwrap();
    let own: u64 = usage
        .iter()
        .filter(|u| u.get("agentCall").is_none())
        .map(|u| u["usage"]["promptTokens"].as_u64().unwrap())
        .sum();
    assert!(turn_total > own, "the completion's tokens are in the turn's total: {turn_total} vs {own}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_terminal_a_completion_is_denied_and_a_form_declined() {
    let env = with_everything(Script::new([
        Reply::tool_call("c1", "every__trigger-sampling-request", r#"{"prompt":"Say hi"}"#),
        Reply::text("Done."),
        Reply::tool_call("c2", "every__trigger-elicitation-request", "{}"),
        Reply::text("Done."),
    ]))
    .await;
    let (out, events) = env.chat_json(&["--approve-all", "Ask the server"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("Pass --approve-sampling"), "{}", stderr(&out));
    assert_eq!(of_type(&events, "samplingResolved")[0]["approved"], false);
    assert_eq!(env.mock.requests().len(), 2, "no completion ran");
    let result = of_type(&events, "toolResult");
    assert!(result[0]["output"].as_str().unwrap().contains("declined"), "{result:?}");

    let (out, events) = env.chat_json(&["--approve-all", "Ask for a form"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let asked = of_type(&events, "elicitationRequested");
    assert_eq!(asked[0]["fields"][0]["name"], "name", "the wire order: {:?}", asked[0]["fields"]);
    assert_eq!(asked[0]["fields"][0]["required"], true);
    assert_eq!(of_type(&events, "elicitationResolved")[0]["action"], "decline");
    let result = of_type(&events, "toolResult");
    assert!(result[0]["output"].as_str().unwrap().contains("User declined"), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_is_asked_field_by_field_on_a_terminal_with_its_defaults() {
    let env = with_everything(Script::new([
        Reply::tool_call("c1", "every__trigger-elicitation-request", "{}"),
        Reply::text("Done."),
    ]))
    .await;
    // `script` gives the CLI a terminal; what the test writes is typed into it: answer, the
    // required name, then Enter for every other field (its default, or nothing).
    let line = format!("{BIN} chat --json --approve-all Ask");
    let mut cmd = env.command(&[]);
    let mut cmd = {
        let std = cmd.as_std_mut();
        let mut script = tokio::process::Command::new("script");
        script.args(["-qfec", &line, "/dev/null"]);
        for (k, v) in std.get_envs() {
            match v {
                Some(v) => script.env(k, v),
                None => script.env_remove(k),
            };
        }
        script
    };
    cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).kill_on_drop(true);
    let mut child = cmd.spawn().expect("script");
    let mut typed = String::from("a\nAnn Example\n");
    typed.push_str(&"\n".repeat(20));
    use tokio::io::AsyncWriteExt as _;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(typed.as_bytes()).await.unwrap();
    let out =
        tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output()).await.unwrap().unwrap();
    drop(stdin);
    let all = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(all.contains("asks:"), "the form was asked: {all}");
    assert!(all.contains("Name: Ann Example"), "{all}");
    assert!(all.contains("It was a dark and stormy night."), "the default went back: {all}");
    assert!(all.contains("\\\"integer\\\": 42") || all.contains("Favorite Integer: 42"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_roots_in_mcp_json_reach_the_server() {
    let env =
        with_everything(Script::new([Reply::tool_call("c1", "every__get-roots-list", "{}"), Reply::text("Done.")]))
            .await;
    let folder = env.data_dir().join("project");
    std::fs::create_dir_all(&folder).unwrap();
    let path = env.data_dir().join("mcp.json");
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["roots"] = serde_json::json!([folder]);
    std::fs::write(&path, config.to_string()).unwrap();
    let (out, events) = env.chat_json(&["--approve-all", "Which roots?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = of_type(&events, "toolResult");
    let output = result[0]["output"].as_str().unwrap();
    assert!(output.contains(&format!("file://{}", folder.display())), "{output}");
}
