//! The CLI end to end with a `gemini` profile against the mock's Gemini wire format: the same
//! script gives the same events and the same stored answer as through the OpenAI path, and the
//! real built-in tools' schemas are accepted by a mock as strict as the API.

mod common;

use common::*;
use serde_json::Value;
use switchboard_mock_provider::{MockServer, Reply, Script, StreamOptions};

const KEY: &str = "AIza-e2e-fake-key-0123456789";

fn script(before: &str) -> Script {
    Script::new([
        Reply::text_then_tool_calls(before, &[("call_1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)])
            .with_options(StreamOptions { text_chunk_chars: Some(3), split_bytes: Some(7), ..Default::default() }),
        Reply::text("It is late in Tokyo."),
    ])
}

/// A data dir with a `g` profile of kind gemini pointing at its own mock.
async fn gemini_env(script: Script) -> Env {
    let env = Env::new(Script::new([])).await;
    let mock = MockServer::start(script).await;
    let base = format!("http://{}/v1beta", mock.addr());
    let out = env.run(&["providers", "add", "g", "--kind", "gemini", "--base-url", &base, "--model", "m"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    Env { mock, ..env }
}

async fn chat(env: &Env, provider: &str, message: &str) -> (std::process::Output, Vec<Value>) {
    env.json_with_key(&["chat", "--json", "--provider", provider, message], "g", KEY).await
}

/// The events after `started` (which names the profile and model) without what differs between
/// any two runs: ids, durations, times, and the clock `get_time` read.
fn comparable(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .skip(1)
        .map(|e| {
            let mut e = e.clone();
            if let Some(o) = e.as_object_mut() {
                o.retain(|k, _| !(k.ends_with("Id") || k == "id" || k.ends_with("Ms") || k.ends_with("At")));
                if o["type"] == "toolResult" {
                    o.remove("output");
                }
                if o["type"] == "context" {
                    // Each model family's own count: Gemini's estimate is not the other's.
                    o.retain(|k, _| k == "type" || k == "window");
                }
            }
            e
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_round_through_gemini_streams_and_stores_what_the_openai_path_does() {
    let before = "Olá 👋 世界, checking: ";
    let openai = Env::new(script(before)).await;
    let (out, openai_events) = chat(&openai, "mock", "what time is it in Tokyo?").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let gemini = gemini_env(script(before)).await;
    let (out, events) = chat(&gemini, "g", "what time is it in Tokyo?").await;
    assert!(out.status.success(), "{}", stderr(&out));

    assert_eq!((&events[0]["provider"], &events[0]["model"]), (&"g".into(), &"m".into()));
    assert_eq!(comparable(&events), comparable(&openai_events), "same events for the same script");
    let call = of_type(&events, "toolCall")[0];
    assert_eq!(call["textOffset"], before.chars().count());
    assert_eq!(call["arguments"], r#"{"timezone":"Asia/Tokyo"}"#);
    assert!(call["id"].as_str().unwrap().starts_with("gemini-call-"), "Gemini sends calls without ids");
    assert_eq!(events.last().unwrap()["finishReason"], "stop");

    let stored = gemini.show_json(&conversation_id(&events)).await;
    let openai_stored = openai.show_json(&conversation_id(&openai_events)).await;
    let answer = &stored[1];
    assert_eq!(answer["status"], "complete");
    assert_eq!(answer["content"], openai_stored[1]["content"]);
    assert_eq!(answer["toolCalls"][0]["textOffset"], before.chars().count());
    assert_eq!(answer["toolCalls"][0]["result"]["status"], "ok");
    assert_eq!(answer["usage"], openai_stored[1]["usage"]);

    // Both requests were accepted by the strict mock: the built-in tools' schemas converted, the
    // call sent back signed with its result; the key only in its header.
    let requests = gemini.mock.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.path, "/v1beta/models/m:streamGenerateContent");
        assert_eq!(r.header("x-goog-api-key"), Some(KEY));
        assert!(r.header("authorization").is_none());
    }
    let declared: Vec<&str> = requests[0].body["tools"][0]["functionDeclarations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["name"].as_str())
        .collect();
    assert!(declared.contains(&"get_time") && declared.contains(&"web_fetch"), "{declared:?}");
    let contents = &requests[1].body["contents"];
    let signed = switchboard_mock_provider::signatures::function_call_signature(
        "get_time",
        &serde_json::json!({"timezone": "Asia/Tokyo"}),
    );
    assert_eq!(contents[1]["parts"][1]["thoughtSignature"], signed.as_str());
    assert_eq!(contents[2]["parts"][0]["functionResponse"]["name"], "get_time");
    assert!(
        contents[2]["parts"][0]["functionResponse"]["response"]["content"].as_str().unwrap().contains("+09:00"),
        "{contents}"
    );
    assert!(!stdout(&out).contains(KEY) && !stderr(&out).contains(KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_gemini_key_says_where_to_set_one() {
    let body = r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}"#;
    let env = gemini_env(Script::new([Reply::http(400, body)])).await;
    let (out, events) = chat(&env, "g", "hi").await;
    assert!(!out.status.success());
    let error = of_type(&events, "error")[0];
    assert_eq!(error["kind"], "auth", "{error}");
    assert!(error["message"].as_str().unwrap().contains("GEMINI_API_KEY"), "{error}");
    assert_eq!(env.mock.requests().len(), 1, "a rejected key is not retried");
}
