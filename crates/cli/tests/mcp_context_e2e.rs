//! An MCP server's prompts and resources through the CLI, against the reference "everything"
//! server: `mcp prompts`, `mcp resources` (with templates), `chat --prompt SERVER/PROMPT --arg`,
//! `chat --resource URI`, and `mcp logs --level`.

mod common;

use common::*;
use switchboard_mock_provider::{Reply, Script};

async fn with_everything(script: Script) -> Env {
    let env = Env::new(script).await;
    let out = env.run(&["mcp", "add", "every", "--yes", "--", &everything(), "stdio"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    env
}

/// The text of the person's last message in the request the model got.
fn asked(env: &Env) -> String {
    let requests = env.mock.requests();
    let messages = requests.last().unwrap().body["messages"].as_array().unwrap().clone();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &user["content"] {
        serde_json::Value::String(s) => s.clone(),
        parts => parts.as_array().unwrap().iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_and_resources_are_listed() {
    let env = with_everything(Script::new([])).await;
    let out = env.run(&["mcp", "prompts", "every"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("args-prompt") && text.contains("Arguments Prompt"), "{text}");
    assert!(text.contains("city (required)") && text.contains("Name of the city"), "{text}");

    let out = env.run(&["mcp", "prompts", "every", "--json"]).await;
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(json["prompts"].as_array().unwrap().iter().any(|p| p["name"] == "resource-prompt"), "{json}");

    let out = env.run(&["mcp", "resources", "every"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("demo://resource/static/document/"), "{text}");
    assert!(
        text.contains("demo://resource/dynamic/text/{resourceId}") && text.contains("variables: resourceId"),
        "{text}"
    );

    let out = env.run(&["mcp", "prompts", "nope"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no running MCP server named 'nope'"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_with_arguments_and_a_resource_become_the_message() {
    let env =
        with_everything(Script::new([Reply::text("Sunny."), Reply::text("Read it."), Reply::text("Seen.")])).await;
    let (out, _) =
        env.chat_json(&["--prompt", "every/args-prompt", "--arg", "city=Paris", "--arg", "state=Texas"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(asked(&env), "What's weather in Paris, Texas?");

    let (out, _) = env
        .chat_json(&["--resource", "demo://resource/dynamic/text/7", "--prompt", "every/simple-prompt", "Also this:"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = asked(&env);
    // The resource is attached like a file, named by its URI (the text part after the message).
    assert!(text.starts_with("This is a simple prompt without arguments.\n\nAlso this:\n"), "{text}");
    assert!(
        text.contains("File demo://resource/dynamic/text/7 (text/plain):\n```\nResource 7: This is a plaintext"),
        "{text}"
    );
    // A prompt's embedded resource is stored as an attachment and sent as one.
    let (out, _) = env
        .chat_json(&["--prompt", "every/resource-prompt", "--arg", "resourceType=Text", "--arg", "resourceId=2"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = asked(&env);
    assert!(text.starts_with("This prompt includes the Text resource with id: 2."), "{text}");
    assert!(
        text.contains("File demo://resource/dynamic/text/2 (text/plain):\n```\nResource 2: This is a plaintext"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_prompt_or_a_bad_resource_sends_nothing() {
    let env = with_everything(Script::new([])).await;
    let out = env.run(&["chat", "--prompt", "every/args-prompt", "--arg", "state=Texas"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("The MCP server 'every' refused the prompt 'args-prompt'"), "{}", stderr(&out));
    let out = env.run(&["chat", "--prompt", "args-prompt"]).await;
    assert!(stderr(&out).contains("is not SERVER/PROMPT"), "{}", stderr(&out));
    let out = env.run(&["chat", "--resource", "demo://resource/nope", "hi"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("could not read demo://resource/nope"), "{}", stderr(&out));
    assert!(env.mock.requests().is_empty(), "the model was never asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_notifications_are_shown_with_the_servers_log() {
    let env = with_everything(Script::new([])).await;
    let out = env.run(&["mcp", "logs", "every", "--level", "loud"]).await;
    assert!(stderr(&out).contains("'loud' is not a log level"), "{}", stderr(&out));
    // The level is set; the server logs what it does at info and above from then on.
    let out = env.run(&["mcp", "logs", "every", "--level", "debug"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
}
