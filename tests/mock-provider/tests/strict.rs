//! The checks that make each API as strict as the real one about reasoning controls, thought
//! signatures returned unchanged and Responses chaining: what the real API accepts goes through,
//! what it refuses is refused in its error shape, neither recorded nor answered from the script.

mod common;

use common::{Event, TIMEOUT, parse_sse};
use serde_json::{Value, json};
use switchboard_mock_provider::signatures::{
    encrypted_content, function_call_signature, text_signature, thinking_signature,
};
use switchboard_mock_provider::{MockServer, ReasoningField, Reply, Script, Step, StreamOptions};

/// POSTs `body` to `path` on the server with `headers`; returns the status and the body text.
async fn send(server: &MockServer, path: &str, headers: &[(&str, &str)], body: &Value) -> (u16, String) {
    let mut request = reqwest::Client::new().post(format!("http://{}{path}", server.addr())).json(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let exchange = async {
        let response = request.send().await.expect("request failed");
        let status = response.status().as_u16();
        (status, response.text().await.expect("body failed"))
    };
    tokio::time::timeout(TIMEOUT, exchange).await.expect("request timed out")
}

async fn anthropic(server: &MockServer, body: &Value) -> (u16, String) {
    send(server, "/v1/messages", &[("anthropic-version", "2023-06-01"), ("x-api-key", "sk-ant-test")], body).await
}

async fn responses(server: &MockServer, body: &Value) -> (u16, String) {
    send(server, "/v1/responses", &[("authorization", "Bearer sk-test")], body).await
}

async fn gemini(server: &MockServer, body: &Value) -> (u16, String) {
    send(server, "/v1beta/models/m:streamGenerateContent?alt=sse", &[("x-goog-api-key", "AIza-test")], body).await
}

async fn chat(server: &MockServer, body: &Value) -> (u16, String) {
    send(server, "/v1/chat/completions", &[("authorization", "Bearer sk-test")], body).await
}

/// The JSON data of every SSE event of a 200 answer.
fn sse_events((status, text): &(u16, String)) -> Vec<Value> {
    assert_eq!(*status, 200, "{text}");
    parse_sse(text).iter().filter_map(|e| if let Event::Json(v) = e { Some(v.clone()) } else { None }).collect()
}

/// The error body of a 400 answer.
fn refused((status, text): &(u16, String)) -> Value {
    assert_eq!(*status, 400, "{text}");
    serde_json::from_str(text).expect("the error body is JSON")
}

/// Asserts that the answer is a 400 whose error message contains `needle`; returns the body.
fn refused_with(answer: &(u16, String), needle: &str) -> Value {
    let body = refused(answer);
    let message = body["error"]["message"].as_str().expect("an error message");
    assert!(message.contains(needle), "expected {needle:?} in {body}");
    body
}

/// Asserts that the refused requests left no trace: nothing more recorded, no reply consumed.
fn assert_untouched(server: &MockServer, recorded: usize, remaining: usize) {
    assert_eq!(server.requests().len(), recorded, "refused requests are not recorded");
    assert_eq!(server.remaining_replies(), remaining, "refused requests consume no reply");
}

// --- Anthropic ---------------------------------------------------------------------------------

fn messages_body(messages: Value) -> Value {
    json!({"model": "claude-test", "max_tokens": 4096, "stream": true, "messages": messages})
}

#[tokio::test]
async fn anthropic_thinking_signatures_are_a_function_of_the_text_and_are_verified() {
    let server = MockServer::start(Script::new([
        Reply::reasoning_then_text("Let me think.", "Hi"),
        Reply::reasoning_then_text("Again.", "Ho"),
        Reply::text("accepted"),
    ]))
    .await;
    let events = sse_events(&anthropic(&server, &messages_body(json!([{"role": "user", "content": "hi"}]))).await);
    let thinking: String = events.iter().filter_map(|e| e.pointer("/delta/thinking").and_then(Value::as_str)).collect();
    let signature = events.iter().find_map(|e| e.pointer("/delta/signature").and_then(Value::as_str)).unwrap();
    assert_eq!(thinking, "Let me think.");
    assert_eq!(signature, thinking_signature("Let me think."));
    assert!(signature.starts_with("mocksig-") && signature.len() == "mocksig-".len() + 16, "{signature}");

    // Not streamed: the same function of the same text.
    let mut body = messages_body(json!([{"role": "user", "content": "hi"}]));
    body["stream"] = json!(false);
    let (status, text) = anthropic(&server, &body).await;
    assert_eq!(status, 200);
    let message: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        message["content"][0],
        json!({"type": "thinking", "thinking": "Again.", "signature": thinking_signature("Again.")})
    );

    let turn = |block: Value| {
        messages_body(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [block, {"type": "text", "text": "Hi"}]},
            {"role": "user", "content": "and?"},
        ]))
    };
    let (recorded, remaining) = (server.requests().len(), server.remaining_replies());
    let altered = turn(json!({"type": "thinking", "thinking": "Let me think!", "signature": signature}));
    let body = refused_with(
        &anthropic(&server, &altered).await,
        "messages.1.content.0: Invalid `signature` in `thinking` block",
    );
    assert_eq!(body["type"], "error");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    let unsigned = turn(json!({"type": "thinking", "thinking": "Let me think."}));
    refused_with(&anthropic(&server, &unsigned).await, "messages.1.content.0.thinking.signature: Field required");
    let redacted = turn(json!({"type": "redacted_thinking", "data": ""}));
    refused_with(&anthropic(&server, &redacted).await, "redacted_thinking.data");
    assert_untouched(&server, recorded, remaining);

    let intact = turn(json!({"type": "thinking", "thinking": "Let me think.", "signature": signature}));
    assert_eq!(anthropic(&server, &intact).await.0, 200);
    assert_eq!(server.remaining_replies(), 0);
}

#[tokio::test]
async fn anthropic_thinking_parameter_and_what_enabling_it_demands() {
    let server = MockServer::start(Script::new([Reply::text("a"), Reply::text("b"), Reply::text("c")])).await;
    let user = json!([{"role": "user", "content": "hi"}]);
    let with = |thinking: Value, extra: Value, messages: &Value| {
        let mut body = messages_body(messages.clone());
        body["thinking"] = thinking;
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        body
    };
    let enabled = json!({"type": "enabled", "budget_tokens": 1024});
    let tool_loop = |first: Value| {
        json!([
            {"role": "user", "content": "time?"},
            {"role": "assistant", "content": [first, {"type": "tool_use", "id": "toolu_1", "name": "get_time", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "12:00"}]},
        ])
    };
    let cases = [
        (json!({"type": "enabled", "budget_tokens": 1023}), json!({}), user.clone(), "greater than or equal to 1024"),
        (
            json!({"type": "enabled", "budget_tokens": 4096}),
            json!({}),
            user.clone(),
            "`max_tokens` must be greater than `thinking.budget_tokens`",
        ),
        (json!({"type": "enabled"}), json!({}), user.clone(), "budget_tokens: Field required"),
        (json!({"type": "enabled", "budget_tokens": "2048"}), json!({}), user.clone(), "valid integer"),
        (json!({"type": "auto"}), json!({}), user.clone(), "Input tag 'auto'"),
        (
            enabled.clone(),
            json!({"tool_choice": {"type": "any"}}),
            user.clone(),
            "Thinking may not be enabled when tool_choice forces tool use.",
        ),
        (
            enabled.clone(),
            json!({"tool_choice": {"type": "tool", "name": "get_time"}}),
            user.clone(),
            "forces tool use",
        ),
        (
            enabled.clone(),
            json!({}),
            tool_loop(json!({"type": "text", "text": "Checking."})),
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a thinking block",
        ),
    ];
    for (thinking, extra, messages, needle) in cases {
        refused_with(&anthropic(&server, &with(thinking, extra, &messages)).await, needle);
    }
    assert_untouched(&server, 0, 3);

    // Accepted: thinking disabled with a forced tool, enabled with `auto`, and a tool loop whose
    // final assistant message starts with its (intact) thinking block or a redacted one.
    let disabled = with(
        json!({"type": "disabled"}),
        json!({"tool_choice": {"type": "any"}}),
        &tool_loop(json!({"type": "text", "text": "x"})),
    );
    assert_eq!(anthropic(&server, &disabled).await.0, 200);
    let signed =
        json!({"type": "thinking", "thinking": "Need the time.", "signature": thinking_signature("Need the time.")});
    let body = with(enabled.clone(), json!({"tool_choice": {"type": "auto"}}), &tool_loop(signed));
    assert_eq!(anthropic(&server, &body).await.0, 200);
    let body = with(enabled, json!({}), &tool_loop(json!({"type": "redacted_thinking", "data": "opaque"})));
    assert_eq!(anthropic(&server, &body).await.0, 200);
    assert_eq!(server.remaining_replies(), 0);
}

// --- OpenAI Responses ----------------------------------------------------------------------------

fn responses_body(input: Value) -> Value {
    json!({"model": "gpt-test", "stream": true, "input": input})
}

fn user_input(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "input_text", "text": text}]})
}

/// The `response` of the terminal event of a streamed Responses answer.
fn final_response(answer: &(u16, String)) -> Value {
    let events = sse_events(answer);
    let last = events.last().expect("events").clone();
    assert_eq!(last["type"], "response.completed", "{last}");
    last["response"].clone()
}

#[tokio::test]
async fn responses_previous_response_id_must_name_a_stored_response_of_the_server() {
    let server = MockServer::start(Script::new([
        Reply::tool_call("call_1", "get_time", "{}"),
        Reply::tool_call("call_2", "get_date", "{}"),
        Reply::text("It is noon."),
        Reply::tool_call("call_3", "get_time", "{}"),
        Reply::text("unused"),
    ]))
    .await;
    let first = final_response(&responses(&server, &responses_body(json!([user_input("time?")]))).await);
    assert_eq!(first["id"], "resp_mock_1");
    assert_eq!(first["output"][0]["call_id"], "call_1");

    // Chained: the call is in the previous response, not in the input.
    let mut second = responses_body(json!([{"type": "function_call_output", "call_id": "call_1", "output": "12:00"}]));
    second["previous_response_id"] = json!("resp_mock_1");
    assert_eq!(final_response(&responses(&server, &second).await)["id"], "resp_mock_2");
    assert_eq!(server.requests()[1].previous_response_id(), Some("resp_mock_1"));
    assert_eq!(server.requests()[1].input()[0]["call_id"], "call_1");

    // Down the chain: resp_mock_2 chains onto resp_mock_1, so both calls can be answered.
    let mut third = responses_body(json!([
        {"type": "function_call_output", "call_id": "call_2", "output": "May 1"},
        {"type": "function_call_output", "call_id": "call_1", "output": "12:00"},
    ]));
    third["previous_response_id"] = json!("resp_mock_2");
    assert_eq!(responses(&server, &third).await.0, 200);

    // Not stored: it exists, but cannot be chained onto.
    let mut unstored = responses_body(json!([user_input("time?")]));
    unstored["store"] = json!(false);
    assert_eq!(final_response(&responses(&server, &unstored).await)["id"], "resp_mock_4");

    let (recorded, remaining) = (server.requests().len(), server.remaining_replies());
    for id in ["resp_unknown", "resp_mock_4"] {
        let mut body = responses_body(json!([{"type": "function_call_output", "call_id": "call_3", "output": "x"}]));
        body["previous_response_id"] = json!(id);
        assert_eq!(
            refused(&responses(&server, &body).await),
            json!({"error": {
                "message": format!("Previous response with id '{id}' not found."),
                "type": "invalid_request_error",
                "param": "previous_response_id",
                "code": "previous_response_not_found",
            }})
        );
    }
    // An output whose call is neither in the input nor in the chain.
    let mut orphan = responses_body(json!([{"type": "function_call_output", "call_id": "call_3", "output": "x"}]));
    orphan["previous_response_id"] = json!("resp_mock_2");
    assert_eq!(
        refused(&responses(&server, &orphan).await),
        json!({"error": {
            "message": "No tool call found for function call output with call_id call_3.",
            "type": "invalid_request_error",
            "param": "input",
            "code": null,
        }})
    );
    assert_untouched(&server, recorded, remaining);
    // The same output with its call in the input is fine without any chain.
    let stateless = responses_body(json!([
        user_input("time?"),
        {"type": "function_call", "call_id": "call_3", "name": "get_time", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "call_3", "output": "12:00"},
    ]));
    assert_eq!(responses(&server, &stateless).await.0, 200);
}

#[tokio::test]
async fn responses_reasoning_items_come_back_by_encrypted_content_or_by_stored_id() {
    let reasoning_call = || {
        Reply::stream([
            Step::Reasoning { text: "Need the time.".into() },
            Step::tool_call("call_1", "get_time", "{}"),
            Step::finish("tool_calls"),
            Step::Done,
        ])
    };
    let server = MockServer::start(Script::new([
        reasoning_call(),
        reasoning_call(),
        reasoning_call(),
        Reply::text("a"),
        Reply::text("b"),
        Reply::text("c"),
    ]))
    .await;
    // Stateless: store false, encrypted content included.
    let mut body = responses_body(json!([user_input("time?")]));
    body["store"] = json!(false);
    body["include"] = json!(["reasoning.encrypted_content"]);
    let output = final_response(&responses(&server, &body).await)["output"].clone();
    let item = output[0].clone();
    assert_eq!(item["id"], "rs_mock_1_0");
    assert_eq!(item["encrypted_content"], encrypted_content("rs_mock_1_0", "Need the time."));
    assert_eq!(item["summary"], json!([{"type": "summary_text", "text": "Need the time."}]));
    // Stored, without encrypted content.
    let stored = final_response(&responses(&server, &responses_body(json!([user_input("time?")]))).await);
    let stored_item = stored["output"][0].clone();
    assert_eq!(stored_item["id"], "rs_mock_2_0");
    assert!(stored_item.get("encrypted_content").is_none(), "only when included");
    // Not streamed: the same ids and contents.
    let mut plain = body.clone();
    plain["stream"] = json!(false);
    let (status, text) = responses(&server, &plain).await;
    assert_eq!(status, 200);
    let response: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(response["output"][0]["encrypted_content"], encrypted_content("rs_mock_3_0", "Need the time."));

    let call = json!({"type": "function_call", "call_id": "call_1", "name": "get_time", "arguments": "{}"});
    let result = json!({"type": "function_call_output", "call_id": "call_1", "output": "12:00"});
    let with_item = |item: Value| responses_body(json!([user_input("time?"), item, call.clone(), result.clone()]));
    let (recorded, remaining) = (server.requests().len(), server.remaining_replies());
    let mut altered = item.clone();
    altered["summary"][0]["text"] = json!("Need the date.");
    let body = refused_with(
        &responses(&server, &with_item(altered)).await,
        "The encrypted content for item rs_mock_1_0 could not be verified.",
    );
    assert_eq!(body["error"]["type"], "invalid_request_error");
    let mut moved = item.clone();
    moved["id"] = json!("rs_mock_2_0");
    refused_with(&responses(&server, &with_item(moved)).await, "could not be verified");
    let mut unencrypted = item.clone();
    unencrypted.as_object_mut().unwrap().remove("encrypted_content");
    let body = refused_with(
        &responses(&server, &with_item(unencrypted)).await,
        "Item with id 'rs_mock_1_0' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
    );
    assert_eq!(body["error"]["param"], "input");
    let mut anonymous = item.clone();
    anonymous.as_object_mut().unwrap().remove("id");
    refused_with(&responses(&server, &with_item(anonymous)).await, "'input[1].id'");
    assert_untouched(&server, recorded, remaining);

    assert_eq!(responses(&server, &with_item(item)).await.0, 200, "encrypted content as issued");
    assert_eq!(responses(&server, &with_item(stored_item)).await.0, 200, "a stored item by id");
    let by_id = json!({"type": "reasoning", "id": "rs_mock_2_0", "summary": []});
    assert_eq!(responses(&server, &with_item(by_id)).await.0, 200, "a stored item by id alone");
}

#[tokio::test]
async fn responses_reasoning_effort_and_max_output_tokens_are_checked() {
    let server = MockServer::start(Script::new([Reply::text("a")])).await;
    let with = |key: &str, value: Value| {
        let mut body = responses_body(json!([user_input("hi")]));
        body[key] = value;
        body
    };
    let cases = [
        (with("reasoning", json!({"effort": "extreme"})), "reasoning.effort", "'extreme'"),
        (
            with("reasoning", json!({"effort": 3})),
            "reasoning.effort",
            "Supported values are: 'minimal', 'low', 'medium', and 'high'.",
        ),
        (with("max_output_tokens", json!(15)), "max_output_tokens", "Expected a value >= 16, but got 15 instead."),
        (with("max_output_tokens", json!("100")), "max_output_tokens", "expected an integer"),
    ];
    for (body, param, needle) in cases {
        let error = refused_with(&responses(&server, &body).await, needle);
        assert_eq!(error["error"]["param"], param);
        assert_eq!(error["error"]["type"], "invalid_request_error");
    }
    assert_untouched(&server, 0, 1);
    let mut body = with("reasoning", json!({"effort": "minimal", "summary": "auto"}));
    body["max_output_tokens"] = json!(16);
    assert_eq!(responses(&server, &body).await.0, 200);
}

// --- Gemini ------------------------------------------------------------------------------------------

fn gemini_body(contents: Value) -> Value {
    json!({"contents": contents})
}

fn user_text(text: &str) -> Value {
    json!({"role": "user", "parts": [{"text": text}]})
}

#[tokio::test]
async fn gemini_call_signatures_are_a_function_of_the_call_and_must_come_back_in_the_tool_loop() {
    let server = MockServer::start(Script::new([
        Reply::text_then_tool_calls(
            "Checking.",
            &[("c1", "get_time", r#"{"tz":"UTC","fmt":"24h"}"#), ("c2", "get_date", "{}")],
        ),
        Reply::text("It is noon."),
        Reply::text("Earlier turns need no signature."),
    ]))
    .await;
    let events = sse_events(&gemini(&server, &gemini_body(json!([user_text("time?")]))).await);
    let call_parts: Vec<Value> = events
        .iter()
        .flat_map(|e| e["candidates"][0]["content"]["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p.get("functionCall").is_some())
        .collect();
    let signature = function_call_signature("get_time", &json!({"fmt": "24h", "tz": "UTC"}));
    assert_eq!(call_parts[0]["thoughtSignature"], signature.as_str());
    assert!(call_parts[1].get("thoughtSignature").is_none(), "only the first call is signed");

    let call = |name: &str, args: Value, signature: Option<&str>| {
        let mut part = json!({"functionCall": {"name": name, "args": args}});
        if let Some(signature) = signature {
            part["thoughtSignature"] = json!(signature);
        }
        part
    };
    // The args come back in another key order: the signature does not depend on it.
    let args = json!({"tz": "UTC", "fmt": "24h"});
    let turn = |parts: Value| {
        gemini_body(json!([
            user_text("time?"),
            {"role": "model", "parts": parts},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "get_time", "response": {"content": "12:00"}}},
                {"functionResponse": {"name": "get_date", "response": {"content": "May 1"}}},
            ]},
        ]))
    };
    let (recorded, remaining) = (server.requests().len(), server.remaining_replies());
    let cases = [
        (
            json!([{"text": "Checking."}, call("get_time", args.clone(), None), call("get_date", json!({}), None)]),
            "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:get_time` , position 2.",
        ),
        (
            json!([{"text": "Checking."}, call("get_time", json!({"tz": "CET", "fmt": "24h"}), Some(&signature)), call("get_date", json!({}), None)]),
            "Corrupted thought signature.",
        ),
        (
            json!([{"text": "Checking."}, call("get_time", args.clone(), None), call("get_date", json!({}), Some(&signature))]),
            "Corrupted thought signature.",
        ),
        (
            json!([{"text": "Checking.", "thoughtSignature": signature}, call("get_time", args.clone(), Some(&signature)), call("get_date", json!({}), None)]),
            "Corrupted thought signature.",
        ),
    ];
    for (parts, needle) in cases {
        let body = refused_with(&gemini(&server, &turn(parts)).await, needle);
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(body["error"]["code"], 400);
    }
    assert_untouched(&server, recorded, remaining);

    let intact = json!([{"text": "Checking."}, call("get_time", args.clone(), Some(&signature)), call("get_date", json!({}), None)]);
    assert_eq!(gemini(&server, &turn(intact)).await.0, 200);
    // Once a new user message starts a new turn, the earlier tool loop may come without signatures.
    let mut later = turn(json!([call("get_time", args, None), call("get_date", json!({}), None)]));
    later["contents"]
        .as_array_mut()
        .unwrap()
        .extend([json!({"role": "model", "parts": [{"text": "Noon."}]}), user_text("thanks")]);
    assert_eq!(gemini(&server, &later).await.0, 200);
    assert_eq!(server.remaining_replies(), 0);
}

#[tokio::test]
async fn gemini_a_thinking_reply_without_calls_signs_its_text_at_the_end() {
    let server = MockServer::start(Script::new([
        Reply::reasoning_then_text("Hmm.", "Hello there")
            .with_options(StreamOptions { text_chunk_chars: Some(5), ..StreamOptions::default() }),
        Reply::text("no thoughts, no signature"),
        Reply::text("accepted"),
    ]))
    .await;
    let events = sse_events(&gemini(&server, &gemini_body(json!([user_text("hi")]))).await);
    let finish = events.iter().find(|e| e["candidates"][0]["finishReason"].is_string()).unwrap();
    assert_eq!(
        finish["candidates"][0]["content"]["parts"],
        json!([{"text": "", "thoughtSignature": text_signature("Hello there")}]),
        "the whole text is signed, on an empty text part in the finishing chunk"
    );
    let events = sse_events(&gemini(&server, &gemini_body(json!([user_text("hi")]))).await);
    assert!(!events.iter().any(|e| e.to_string().contains("thoughtSignature")));

    let turn =
        |parts: Value| gemini_body(json!([user_text("hi"), {"role": "model", "parts": parts}, user_text("and?")]));
    let signed = |text: &str| json!({"text": "Hello there", "thoughtSignature": text_signature(text)});
    let (recorded, remaining) = (server.requests().len(), server.remaining_replies());
    for parts in [
        json!([signed("Hello")]),
        json!([{"text": "Hmm.", "thought": true, "thoughtSignature": text_signature("Hmm.")}, {"text": "Hello there"}]),
        json!([signed("Hello there"), {"text": "!"}]),
    ] {
        refused_with(&gemini(&server, &turn(parts)).await, "Corrupted thought signature.");
    }
    assert_untouched(&server, recorded, remaining);
    let intact = json!([{"text": "Hmm.", "thought": true}, signed("Hello there")]);
    assert_eq!(gemini(&server, &turn(intact)).await.0, 200);
}

#[tokio::test]
async fn gemini_generation_config_is_checked() {
    let server = MockServer::start(Script::new([Reply::text("a"), Reply::text("b")])).await;
    let with = |config: Value| {
        let mut body = gemini_body(json!([user_text("hi")]));
        body["generationConfig"] = config;
        body
    };
    let cases = [
        (
            json!({"max_output_tokens": 10}),
            "Unknown name \"max_output_tokens\" at 'generation_config': Cannot find field.",
        ),
        (json!({"reasoningEffort": "low"}), "Unknown name \"reasoningEffort\""),
        (json!({"maxOutputTokens": 0}), "max_output_tokens must be positive"),
        (json!({"maxOutputTokens": "100"}), "generation_config.max_output_tokens"),
        (json!({"thinkingConfig": {"thinkingBudget": 127}}), "The thinking budget 127 is invalid"),
        (json!({"thinkingConfig": {"thinkingBudget": 32769}}), "The thinking budget 32769 is invalid"),
        (json!({"thinkingConfig": {"thinkingBudget": -2}}), "The thinking budget -2 is invalid"),
        (json!({"thinkingConfig": {"thinkingBudget": 1.5}}), "thinking_budget"),
        (json!({"thinkingConfig": {"includeThoughts": "yes"}}), "include_thoughts"),
        (json!({"thinkingConfig": {"budget": 1024}}), "Unknown name \"budget\" at 'generation_config.thinking_config'"),
        (
            json!({"thinkingConfig": {"thinkingLevel": "high", "thinkingBudget": 1024}}),
            "one of thinking budget and thinking level",
        ),
    ];
    for (config, needle) in cases {
        let body = refused_with(&gemini(&server, &with(config)).await, needle);
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
    }
    assert_untouched(&server, 0, 2);
    let config = json!({"maxOutputTokens": 1024, "temperature": 0.2,
        "thinkingConfig": {"thinkingBudget": -1, "includeThoughts": true}});
    assert_eq!(gemini(&server, &with(config)).await.0, 200);
    let config = json!({"thinkingConfig": {"thinkingBudget": 0}});
    assert_eq!(gemini(&server, &with(config)).await.0, 200);
}

#[tokio::test]
async fn gemini_lists_models_in_its_shape_for_a_key() {
    let server = MockServer::start(Script::new([])).await;
    let client = reqwest::Client::new();
    let url = format!("http://{}/v1beta/models?pageSize=1000", server.addr());
    let response = client.get(&url).header("x-goog-api-key", "AIza-test").send().await.unwrap();
    assert_eq!(response.status(), 200);
    let page: Value = response.json().await.unwrap();
    assert!(page.get("nextPageToken").is_none(), "one page");
    let models = page["models"].as_array().unwrap();
    assert_eq!(models[0]["name"], "models/mock-model");
    assert_eq!(
        models[0]["supportedGenerationMethods"],
        json!(["generateContent", "streamGenerateContent", "countTokens"])
    );
    let generating: Vec<&str> = models
        .iter()
        .filter(|m| m["supportedGenerationMethods"].as_array().unwrap().contains(&json!("generateContent")))
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(generating, ["models/mock-model", "models/mock-reasoner"]);
    assert_eq!(models.len(), 3, "and an embedding model a client must filter out");

    let keyed_by_query = client.get(format!("{url}&key=AIza-test")).send().await.unwrap();
    assert_eq!(keyed_by_query.status(), 200);
    let anonymous = client.get(&url).send().await.unwrap();
    assert_eq!(anonymous.status(), 403);
    let error: Value = anonymous.json().await.unwrap();
    assert_eq!(error["error"]["status"], "PERMISSION_DENIED");
    assert_eq!(error["error"]["code"], 403);
    assert!(server.requests().is_empty(), "listings are not recorded");
}

// --- OpenAI Chat ---------------------------------------------------------------------------------

fn chat_body(extra: Value) -> Value {
    let mut body = json!({"model": "gpt-test", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
    for (key, value) in extra.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

#[tokio::test]
async fn chat_reasoning_effort_and_token_limits_are_checked() {
    let server = MockServer::start(Script::new([Reply::text("a"), Reply::text("b"), Reply::text("c")])).await;
    let cases = [
        (
            json!({"reasoning_effort": "maximal"}),
            "reasoning_effort",
            "Invalid value: 'maximal'. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
        ),
        (json!({"max_tokens": 0}), "max_tokens", "Expected a value >= 1, but got 0 instead."),
        (json!({"max_completion_tokens": -5}), "max_completion_tokens", "integer below minimum value"),
        (json!({"max_tokens": "10"}), "max_tokens", "expected an integer"),
        (
            json!({"max_tokens": 10, "max_completion_tokens": 10}),
            "max_tokens",
            "max_tokens and max_completion_tokens cannot both be set",
        ),
    ];
    for (extra, param, needle) in cases {
        let error = refused_with(&chat(&server, &chat_body(extra)).await, needle);
        assert_eq!(error["error"]["type"], "invalid_request_error");
        assert_eq!(error["error"]["param"], param);
    }
    assert_untouched(&server, 0, 3);
    for extra in [
        json!({"reasoning_effort": "high", "max_completion_tokens": 100}),
        json!({"max_tokens": 1}),
        json!({"max_tokens": null, "max_completion_tokens": 5}),
    ] {
        assert_eq!(chat(&server, &chat_body(extra)).await.0, 200);
    }
}

#[tokio::test]
async fn chat_reasoning_streams_as_reasoning_content_or_as_reasoning() {
    let openrouter = StreamOptions { reasoning_field: Some(ReasoningField::Reasoning), ..StreamOptions::default() };
    let server = MockServer::start(Script::new([
        Reply::reasoning_then_text("Hmm.", "Hi"),
        Reply::reasoning_then_text("Hmm.", "Hi").with_options(openrouter.clone()),
        Reply::reasoning_then_text("Hmm.", "Hi").with_options(openrouter),
    ]))
    .await;
    let deltas = |events: &[Value], field: &str| -> String {
        events.iter().filter_map(|e| e["choices"][0]["delta"][field].as_str()).collect()
    };
    let default = sse_events(&chat(&server, &chat_body(json!({}))).await);
    assert_eq!((deltas(&default, "reasoning_content"), deltas(&default, "reasoning")), ("Hmm.".into(), String::new()));
    let switched = sse_events(&chat(&server, &chat_body(json!({}))).await);
    assert_eq!(
        (deltas(&switched, "reasoning_content"), deltas(&switched, "reasoning")),
        (String::new(), "Hmm.".into())
    );
    let (status, text) = chat(&server, &chat_body(json!({"stream": false}))).await;
    assert_eq!(status, 200);
    let completion: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(completion["choices"][0]["message"]["reasoning"], "Hmm.");
    assert!(completion["choices"][0]["message"].get("reasoning_content").is_none());
}
