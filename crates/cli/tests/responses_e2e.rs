//! The CLI end to end with an OpenAI Responses profile against the mock's Responses API: one
//! script, run through a Chat profile and a Responses one, streams the same events and stores the
//! same answer, offsets included.

mod common;

use common::*;
use serde_json::Value;
use switchboard_mock_provider::{Reply, Script, Step, StreamOptions};

const KEY: &str = "sk-test-responses-e2e-0123456789";

/// `chat --json` with the key in the profile's variable and no other key around.
async fn chat(env: &Env, question: &str) -> (std::process::Output, Vec<Value>) {
    env.json_with_key(&["chat", "--json", question], "resp", KEY).await
}

fn script(before: &str) -> Script {
    let first = Reply::stream([
        Step::Reasoning { text: "Tokyo is UTC+9.".into() },
        Step::text(before),
        Step::tool_call("call_1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#),
        Step::finish("tool_calls"),
        Step::Usage { prompt_tokens: 40, completion_tokens: 12, reasoning_tokens: 5, cached_tokens: 32 },
        Step::Done,
    ])
    .with_options(StreamOptions {
        text_chunk_chars: Some(3),
        args_chunk_chars: Some(2),
        split_bytes: Some(7),
        ..Default::default()
    });
    Script::new([first, Reply::text("It is late in Tokyo 🌙.")])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_round_through_responses_streams_and_stores_what_the_chat_path_does() {
    let before = "Olá 👋 世界, 東京の時間: ";
    let chat_env = Env::new(script(before)).await;
    let (out, reference) = chat_env.chat_json(&["what time is it in Tokyo?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let env = Env::with_profile(script(before), "resp", "openai-responses").await;
    let (out, events) = chat(&env, "what time is it in Tokyo?").await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(comparable(&events), comparable(&reference), "the same events as the Chat path");
    assert_eq!(events[0]["provider"], "resp");
    assert!(!of_type(&events, "reasoningDelta").is_empty(), "the reasoning summary is shown");
    let call = of_type(&events, "toolCall")[0];
    assert_eq!(call["id"], "call_1");
    assert_eq!(call["textOffset"], before.chars().count(), "offset counts chars, not bytes");
    assert_eq!(of_type(&events, "toolResult")[0]["status"], "ok");

    // Both requests went to the Responses API with the bearer key; the second continued from the
    // first response (kept by the API, its default) and sent only the call's output.
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 2, "the strict mock accepted both bodies");
    for r in &requests {
        assert_eq!(r.path, "/v1/responses");
        assert_eq!(r.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
        assert!(r.body.get("store").is_none(), "the profile leaves store to the API");
        assert!(r.body["tools"].as_array().is_some_and(|t| !t.is_empty()), "the built-ins are offered");
    }
    assert_eq!(requests[0].previous_response_id(), None);
    assert_eq!(requests[0].input()[0]["role"], "user");
    assert_eq!(requests[1].previous_response_id(), Some("resp_mock_1"));
    let input = requests[1].input();
    assert_eq!(input.len(), 1, "{input:#?}");
    assert_eq!(input[0]["type"], "function_call_output");
    assert_eq!(input[0]["call_id"], "call_1");

    // What was stored is what the Chat path stored, offsets and usage included.
    let stored = env.show_json(&conversation_id(&events)).await;
    let reference_stored = chat_env.show_json(&conversation_id(&reference)).await;
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
async fn a_rejected_key_is_an_auth_error_that_does_not_quote_it() {
    let body = r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#;
    let env = Env::with_profile(Script::new([Reply::http(401, body)]), "resp", "openai-responses").await;
    let (out, events) = chat(&env, "hi").await;
    assert!(!out.status.success());
    let error = of_type(&events, "error")[0];
    assert_eq!(error["kind"], "auth");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("Incorrect API key"), "{message}");
    assert!(!message.contains(KEY));
    assert_eq!(env.mock.requests().len(), 1, "a rejected key is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kind_is_offered_by_providers_add() {
    let env = Env::new(Script::new([])).await;
    let out = env.run(&["providers", "add", "--help"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("openai-responses"), "{}", stdout(&out));
}
