//! The CLI end to end with an Anthropic profile against the mock's Messages API: one script, run
//! through an OpenAI profile and an Anthropic one, streams the same events and stores the same
//! answer, offsets included.

mod common;

use common::*;
use serde_json::Value;
use switchboard_mock_provider::{Reply, Script, StreamOptions};

const KEY: &str = "sk-ant-test-e2e-key-0123456789";

/// `chat --json` with the key in the profile's variable and no other key around.
async fn chat(env: &Env, question: &str) -> (std::process::Output, Vec<Value>) {
    env.json_with_key(&["chat", "--json", question], "claude", KEY).await
}

fn script(before: &str) -> Script {
    Script::new([
        Reply::text_then_tool_calls(before, &[("toolu_1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)]).with_options(
            StreamOptions {
                text_chunk_chars: Some(3),
                args_chunk_chars: Some(2),
                split_bytes: Some(7),
                ..Default::default()
            },
        ),
        Reply::text("It is late in Tokyo 🌙."),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_round_through_anthropic_streams_and_stores_what_the_openai_path_does() {
    let before = "Olá 👋 世界, 東京の時間: ";
    let openai = Env::new(script(before)).await;
    let (out, reference) = openai.chat_json(&["what time is it in Tokyo?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let env = Env::with_profile(script(before), "claude", "anthropic").await;
    let (out, events) = chat(&env, "what time is it in Tokyo?").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(comparable(&events), comparable(&reference), "the same events as the OpenAI path");
    assert_eq!(events[0]["provider"], "claude");
    let call = of_type(&events, "toolCall")[0];
    assert_eq!(call["id"], "toolu_1");
    assert_eq!(call["textOffset"], before.chars().count(), "offset counts chars, not bytes");
    assert_eq!(of_type(&events, "toolResult")[0]["status"], "ok");

    // Both requests went to the Messages API with the key in x-api-key; the second carried the
    // call back as a tool_use block and its result as a tool_result in the next user message.
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(r.header("x-api-key"), Some(KEY));
        assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    }
    let messages = requests[1].messages();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    assert_eq!(messages[1]["content"][0]["text"], before);
    assert_eq!(messages[1]["content"][1]["type"], "tool_use");
    assert_eq!(messages[1]["content"][1]["input"]["timezone"], "Asia/Tokyo");
    assert_eq!(messages[2]["content"][0]["type"], "tool_result");
    assert_eq!(messages[2]["content"][0]["tool_use_id"], "toolu_1");
    assert_eq!(messages[2]["content"][0]["cache_control"]["type"], "ephemeral");

    // What was stored is what the OpenAI path stored, offsets included.
    let stored = env.show_json(&conversation_id(&events)).await;
    let reference_stored = openai.show_json(&conversation_id(&reference)).await;
    let answer = &stored[1];
    assert_eq!(answer["status"], "complete");
    assert_eq!(answer["toolCalls"][0]["textOffset"], before.chars().count());
    assert_eq!(answer["content"], reference_stored[1]["content"]);
    assert_eq!(answer["toolCalls"][0]["textOffset"], reference_stored[1]["toolCalls"][0]["textOffset"]);
    assert_eq!(answer["usage"], reference_stored[1]["usage"]);

    // The key is nowhere but the request header.
    assert!(!stdout(&out).contains(KEY) && !stderr(&out).contains(KEY));
    for entry in std::fs::read_dir(env.data_dir()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "key found in the data dir");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_key_says_where_to_set_it() {
    let body = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
    let env = Env::with_profile(Script::new([Reply::http(401, body)]), "claude", "anthropic").await;
    let (out, events) = chat(&env, "hi").await;
    assert!(!out.status.success());
    let error = of_type(&events, "error")[0];
    assert_eq!(error["kind"], "auth");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("ANTHROPIC_API_KEY") && message.contains("keys set"), "{message}");
    assert!(!message.contains(KEY));
}
