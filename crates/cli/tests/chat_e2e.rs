//! The CLI end to end against the mock provider: streaming, tools, offsets, forcing, disabling.

mod common;

use common::*;
use serde_json::json;
use switchboard_mock_provider::{Reply, Script, Step, StreamOptions};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_round_streams_events_and_stores_offsets_in_chars() {
    let before = "Olá 👋 世界, checking: ";
    let script = Script::new([
        Reply::text_then_tool_calls(before, &[("call_1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)]).with_options(
            StreamOptions {
                text_chunk_chars: Some(3),
                args_chunk_chars: Some(2),
                split_bytes: Some(7),
                ..Default::default()
            },
        ),
        Reply::text("It is late in Tokyo."),
    ]);
    let env = Env::new(script).await;
    let (out, events) = env.chat_json(&["what time is it in Tokyo?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    assert_eq!(events.first().unwrap()["type"], "started");
    assert_eq!(events.last().unwrap()["type"], "done");
    assert_eq!(events.last().unwrap()["finishReason"], "stop");
    assert_eq!(events.last().unwrap()["toolCallsMade"], 1);
    let call = of_type(&events, "toolCall")[0];
    assert_eq!(call["name"], "get_time");
    assert_eq!(call["arguments"], r#"{"timezone":"Asia/Tokyo"}"#);
    assert_eq!(call["textOffset"], before.chars().count(), "offset counts chars, not bytes");
    assert_eq!(call["iteration"], 1);
    let result = of_type(&events, "toolResult")[0];
    assert_eq!(result["status"], "ok");
    assert!(result["output"].as_str().unwrap().contains("+09:00"));
    let text: String = of_type(&events, "textDelta").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(text, format!("{before}It is late in Tokyo."));

    // The second request carried the call and its result back to the model.
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 2);
    let msgs = requests[1].messages();
    let tool_msg = msgs.iter().find(|m| m["role"] == "tool").expect("tool result sent back");
    assert_eq!(tool_msg["tool_call_id"], "call_1");
    let assistant = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(assistant["content"], before);
    assert_eq!(assistant["tool_calls"][0]["function"]["arguments"], r#"{"timezone":"Asia/Tokyo"}"#);

    // What was stored is what streamed.
    let stored = env.show_json(&conversation_id(&events)).await;
    let answer = &stored[1];
    assert_eq!(answer["status"], "complete");
    assert_eq!(answer["content"], text);
    assert_eq!(answer["toolCalls"][0]["textOffset"], before.chars().count());
    assert_eq!(answer["toolCalls"][0]["result"]["status"], "ok");
    assert_eq!(answer["usage"]["promptTokens"], 20, "usage summed over both iterations");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_answer_prints_exactly_as_it_streamed() {
    let script = Script::new([
        Reply::text_then_tool_calls("Let me look. ", &[("c1", "get_time", "{}")]),
        Reply::text_then_tool_calls("And Paris: ", &[("c2", "get_time", r#"{"timezone":"Europe/Paris"}"#)]),
        Reply::text("Done."),
    ]);
    let env = Env::new(script).await;
    let live = env.run(&["chat", "times please"]).await;
    assert!(live.status.success(), "{}", stderr(&live));
    let list = env.run(&["conversations", "list", "--json"]).await;
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let id = list[0]["id"].as_str().unwrap();
    let shown = stdout(&env.run(&["conversations", "show", id]).await);
    let live = stdout(&live);
    assert!(live.contains("⚙ get_time {}\n"), "{live}");
    // `show` adds the user's line before and a footer after; the answer in between is identical.
    let body = shown.split_once("\n\n").unwrap().1;
    assert!(body.starts_with(&live), "live:\n{live}\nshown:\n{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forced_tools_are_offered_alone_and_named_in_the_first_request_only() {
    let env = Env::new(Script::new([Reply::tool_call("c1", "get_time", "{}"), Reply::text("ok")])).await;
    let (out, _) = env.chat_json(&["--force", "get_time", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = env.mock.requests();
    assert_eq!(reqs[0].body["tool_choice"], json!({"type": "function", "function": {"name": "get_time"}}));
    assert_eq!(reqs[0].tool_names(), vec!["get_time"]);
    assert_eq!(reqs[1].body["tool_choice"], "auto");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_disabled_for_the_chat_is_absent_from_requests_and_stays_disabled() {
    let env = Env::new(Script::new([Reply::text("one"), Reply::text("two"), Reply::text("three")])).await;
    let (out, events) = env.chat_json(&["--disable", "get_time", "first"]).await;
    assert!(out.status.success());
    let conv = conversation_id(&events);
    let (out, _) = env.chat_json(&["--conversation", &conv, "second"]).await;
    assert!(out.status.success());
    let reqs = env.mock.requests();
    for r in &reqs {
        assert!(!r.tool_names().contains(&"get_time".to_string()), "get_time offered: {:?}", r.tool_names());
        assert!(!r.tool_names().is_empty(), "the other tools are still offered");
    }
    // The history of the second turn holds the first exchange.
    let roles: Vec<&str> = reqs[1].messages().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    let (out, _) = env.chat_json(&["--conversation", &conv, "--enable", "get_time", "third"]).await;
    assert!(out.status.success());
    assert!(env.mock.requests()[2].tool_names().contains(&"get_time".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_tools_and_dry_run_switches_work() {
    let env = Env::new(Script::new([
        Reply::text("plain"),
        Reply::tool_call("c1", "get_time", r#"{"timezone":"Europe/Paris"}"#),
        Reply::text("fine"),
    ]))
    .await;
    let (out, _) = env.chat_json(&["--no-tools", "hi"]).await;
    assert!(out.status.success());
    assert!(env.mock.requests()[0].body.get("tools").is_none());
    let (out, events) = env.chat_json(&["--dry-run-tools", "time?"]).await;
    assert!(out.status.success());
    let result = of_type(&events, "toolResult")[0];
    assert!(
        result["output"].as_str().unwrap().contains("2026-01-01T12:00:00"),
        "example output, not the real time: {result}"
    );
    assert!(of_type(&events, "notice").iter().any(|n| n["kind"] == "dryRun"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_errors_go_back_to_the_model_and_the_turn_completes() {
    let env = Env::new(Script::new([
        Reply::parallel_tool_calls(&[
            ("c1", "no_such_tool", "{}"),
            ("c2", "get_time", "{not json"),
            ("c3", "get_time", r#"{"timezone": 42}"#),
            ("c4", "get_time", r#"{"timezone":"Mars/Base"}"#),
        ]),
        Reply::text("Sorry about that."),
    ]))
    .await;
    let (out, events) = env.chat_json(&["break things"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results = of_type(&events, "toolResult");
    let by_id = |id: &str| results.iter().find(|r| r["id"] == id).unwrap()["output"].as_str().unwrap().to_owned();
    assert!(by_id("c1").contains("Unknown tool 'no_such_tool'. Available tools: get_time"), "{}", by_id("c1"));
    assert!(by_id("c2").contains("Invalid JSON arguments") && by_id("c2").contains("{not json"), "{}", by_id("c2"));
    assert!(by_id("c3").contains("/timezone"), "{}", by_id("c3"));
    assert!(by_id("c4").contains("unknown time zone 'Mars/Base'"), "{}", by_id("c4"));
    assert!(results.iter().all(|r| r["status"] == "error"));
    let tool_msgs = env.mock.requests()[1].messages().iter().filter(|m| m["role"] == "tool").count();
    assert_eq!(tool_msgs, 4, "every call id answered");
    assert_eq!(events.last().unwrap()["finishReason"], "stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_iterations_ends_with_a_tools_off_answer_and_a_notice() {
    let env = Env::new(Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::tool_call("c2", "get_time", r#"{"timezone":"UTC"}"#),
        Reply::text("Here is what I found."),
    ]))
    .await;
    let (out, events) = env.chat_json(&["--max-iterations", "2", "loop"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[2].body.get("tools").is_none(), "the last call has tools off");
    assert!(of_type(&events, "notice").iter().any(|n| n["kind"] == "maxIterations"));
    assert_eq!(events.last().unwrap()["finishReason"], "maxIterations");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_goes_only_into_the_authorization_header() {
    let env = Env::new(Script::new([Reply::text("hi")])).await;
    let out = env
        .command(&["chat", "--json", "hello"])
        .env("SWITCHBOARD_KEY_MOCK", "sk-test-fake-key-1234567890")
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    assert_eq!(env.mock.requests()[0].header("authorization"), Some("Bearer sk-test-fake-key-1234567890"));
    assert!(!stdout(&out).contains("sk-test-fake"));
    for entry in std::fs::read_dir(env.data_dir()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(!bytes.windows(12).any(|w| w == b"sk-test-fake"), "key found in the data dir");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_streams_and_is_stored() {
    let env = Env::new(Script::new([Reply::stream([
        Step::Reasoning { text: "Let me think.".into() },
        Step::text("Answer."),
        Step::finish("stop"),
        Step::Done,
    ])]))
    .await;
    let (out, events) = env.chat_json(&["think"]).await;
    assert!(out.status.success());
    assert_eq!(of_type(&events, "reasoningDelta")[0]["text"], "Let me think.");
    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[1]["reasoning"], "Let me think.");
    assert_eq!(stored[1]["finishReason"], "stop");
}

/// What a request asked of the model: its model, the tools offered and the tool choice.
fn asked(r: &switchboard_mock_provider::RecordedRequest) -> (String, Vec<String>, serde_json::Value) {
    let model = r.body["model"].as_str().unwrap_or_default().to_owned();
    (model, r.tool_names(), r.body.get("tool_choice").cloned().unwrap_or(serde_json::Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerate_asks_again_with_the_choices_of_the_first_ask() {
    let script = Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::text("first"),
        Reply::tool_call("c2", "get_time", "{}"),
        Reply::text("second"),
        Reply::text("third"),
    ]);
    let env = Env::new(script).await;
    let (out, _) =
        env.chat_json(&["--model", "picked", "--force", "get_time", "--disable", "web_fetch", "time?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["regenerate", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = env.mock.requests();
    assert_eq!(asked(&requests[0]).0, "picked");
    assert_eq!(asked(&requests[0]).2, json!({"type": "function", "function": {"name": "get_time"}}));
    assert_eq!(asked(&requests[2]), asked(&requests[0]), "the retry asks exactly what the first ask did");
    assert!(!asked(&requests[2]).1.contains(&"web_fetch".to_owned()), "the chat's disabled tool stays off");

    // A model named for the retry replaces the stored one; the rest stays.
    let out = env.run(&["regenerate", "--model", "other", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let last = &env.mock.requests()[4];
    assert_eq!(asked(last).0, "other");
    assert_eq!(asked(last).2, json!({"type": "function", "function": {"name": "get_time"}}));
}

/// Runs `switchboard ARGS` on a pseudo-terminal (util-linux `script`), typing `answer` at the
/// approval prompt.
async fn chat_on_a_terminal(env: &Env, args: &[&str], answer: &str) -> std::process::Output {
    use tokio::io::AsyncWriteExt;
    let line: Vec<String> = std::iter::once(BIN).chain(args.iter().copied()).map(|a| format!("'{a}'")).collect();
    let mut cmd = env.command(&[]);
    let cmd = cmd.as_std_mut();
    let mut script = tokio::process::Command::new("script");
    script.args(["-qec", &line.join(" "), "/dev/null"]).stdin(std::process::Stdio::piped());
    script.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).kill_on_drop(true);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    let mut child = script.spawn().expect("script (util-linux) runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
    // Kept open until the chat ends: `script` ends the session when its input closes.
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output()).await;
    drop(stdin);
    out.expect("the chat ended").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_for_this_chat_on_the_terminal_is_remembered_for_the_next_turn() {
    let script = Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::text("first"),
        Reply::tool_call("c2", "get_time", "{}"),
        Reply::text("second"),
    ]);
    let env = Env::new(script).await;
    let out = env.run(&["settings", "set", "tools", r#"{"approval": {"get_time": "ask"}}"#]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = chat_on_a_terminal(&env, &["chat", "time?"], "c").await;
    let screen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{screen}");
    assert!(screen.contains("Allow 'get_time'"), "the prompt was shown: {screen}");

    // No terminal now: a question would be denied, so an ok result shows none was asked.
    let (out, events) = env.chat_json(&["--continue", "again"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(of_type(&events, "approvalRequested").is_empty());
    assert_eq!(of_type(&events, "toolResult")[0]["status"], "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approving_always_on_the_terminal_is_saved_in_settings() {
    let env = Env::new(Script::new([Reply::tool_call("c1", "get_time", "{}"), Reply::text("done")])).await;
    let out = env.run(&["settings", "set", "tools", r#"{"approval": {"get_time": "ask"}}"#]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = chat_on_a_terminal(&env, &["chat", "time?"], "a").await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    let out = env.run(&["settings", "get", "tools"]).await;
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tools["approval"]["get_time"], "auto");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_written_from_the_cli_are_checked_like_the_apps() {
    let env = Env::new(Script::default()).await;
    let out = env.run(&["settings", "set", "defaultProvider", r#""nope""#]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Unknown provider 'nope'"), "{}", stderr(&out));
    let out = env.run(&["settings", "set", "web", r#"{"searchBackend": "searxng", "searxngUrl": "not a url"}"#]).await;
    assert!(!out.status.success(), "an invalid SearXNG URL is refused");
    let out = env.run(&["settings", "get", "web"]).await;
    assert_eq!(stdout(&out).trim(), "null", "nothing was written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profiles_options_reach_the_request_and_providers_test_says_what_works() {
    let env = Env::new(Script::new([Reply::text("OK"), Reply::text("Fine.")])).await;
    let base = env.mock.base_url();
    let args = [
        "providers",
        "add",
        "tuned",
        "--base-url",
        &base,
        "--model",
        "o4-mini",
        "--max-output-tokens",
        "900",
        "--reasoning-effort",
        "high",
        "--tools",
        "off",
    ];
    let out = env.run(&args).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["providers", "list", "--json"]).await;
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tuned = list.as_array().unwrap().iter().find(|p| p["name"] == "tuned").unwrap();
    assert_eq!(
        tuned["options"],
        json!({"generation": {"maxOutputTokens": 900, "reasoningEffort": "high"}, "tools": false})
    );

    // One line on stdout, success.
    let out = env.run(&["providers", "test", "tuned"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "Connected, 2 models; 'o4-mini' answered and takes tools (it is not in the list, but it works)."
    );

    let (out, events) = env.chat_json(&["--provider", "tuned", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let notice = of_type(&events, "notice");
    assert!(notice[0]["message"].as_str().unwrap().contains("does not take tools"), "{notice:?}");
    let body = &env.mock.requests()[1].body;
    assert_eq!((body["max_tokens"].clone(), body["reasoning_effort"].clone()), (json!(900), json!("high")));
    assert!(body.get("tools").is_none(), "tools off for this profile");

    // A server that is not running: one line that says so, a failure exit, the detail on stderr.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let out = env.run(&["providers", "add", "dead", "--base-url", &format!("http://{dead}/v1"), "--model", "m"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["providers", "test", "dead"]).await;
    assert!(!out.status.success());
    assert!(stdout(&out).starts_with(&format!("Couldn't connect to {dead}")), "{}", stdout(&out));
    assert!(stderr(&out).contains("Details:"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_keeps_the_instructions_it_was_started_with_and_they_can_be_changed() {
    let env = Env::new(Script::new([Reply::text("Bonjour."), Reply::text("Hello.")])).await;
    let (out, events) = env.chat_json(&["--system", "Answer in French.", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = of_type(&events, "started")[0]["conversationId"].as_str().unwrap().to_owned();
    let system = |i: usize| env.mock.requests()[i].messages()[0]["content"].as_str().unwrap_or_default().to_owned();
    assert_eq!(system(0), "Answer in French.");

    let out = env.run(&["conversations", "instructions", &id, "--set", "Answer in English."]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("This chat's instructions:\nAnswer in English."), "{}", stdout(&out));
    assert!(stdout(&out).contains("Its last question was sent with:\nAnswer in French."), "{}", stdout(&out));
    let (out, _) = env.chat_json(&["--conversation", &id, "again"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(system(1), "Answer in English.", "the chat's own instructions, without --system");
}
