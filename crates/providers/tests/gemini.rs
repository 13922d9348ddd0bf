//! The Gemini provider over loopback HTTP against the mock's Gemini wire format: the request it
//! sends (key only in a header, converted schemas the strict mock accepts), tool rounds with the
//! thought signatures kept as provider state and sent back on their parts (which the strict mock
//! checks), state from another API or endpoint left out, generation options, errors in Google's
//! shape, and paged model listing.

use futures::StreamExt;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use switchboard_core::provider::{GenerationOptions, ReasoningEffort, StopReason, ToolSpec};
use switchboard_core::tool::SecretValue;
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ProviderState, ToolCall, ToolChoice,
    Usage,
};
use switchboard_mock_provider::signatures::{function_call_signature, text_signature};
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};
use switchboard_providers::gemini::{Gemini, GeminiConfig};

const KEY: &str = "AIza-test-key-0123456789";

fn provider(server: &MockServer) -> Gemini {
    let base_url = format!("http://{}/v1beta", server.addr());
    Gemini::new(GeminiConfig { base_url, api_key: Some(SecretValue::new(KEY)) }).unwrap()
}

/// An MCP-style tool schema: everything Gemini would refuse if sent as is.
fn mcp_tool() -> ToolSpec {
    ToolSpec {
        name: "fs__edit_file".into(),
        description: "Edit a file".into(),
        parameters: json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "path": {"type": "string", "format": "uri-reference"},
                "edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}},
                "mode": {"oneOf": [{"const": "fast"}, {"const": "safe"}]},
                "limit": {"type": ["integer", "null"], "enum": [1, 2, null]}
            },
            "required": ["path", "edits"],
            "additionalProperties": false,
            "$defs": {"Edit": {"type": "object", "properties": {"old": {"type": "string"}}, "additionalProperties": false}}
        }),
    }
}

fn get_time() -> ToolSpec {
    ToolSpec {
        name: "get_time".into(),
        description: "The time".into(),
        parameters: json!({"type": "object", "properties": {"timezone": {"type": "string"}}, "additionalProperties": false}),
    }
}

fn request(messages: Vec<Message>) -> ProviderRequest {
    ProviderRequest {
        model: "gemini-test".into(),
        system: Some("Be brief.".into()),
        messages,
        tools: vec![get_time(), mcp_tool()],
        tool_choice: ToolChoice::Auto,
        options: GenerationOptions::default(),
    }
}

async fn run(p: &Gemini, req: ProviderRequest) -> Vec<Result<ProviderEvent, ProviderError>> {
    p.stream(req).filter(|e| futures::future::ready(!matches!(e, Ok(ProviderEvent::KeepAlive)))).collect().await
}

/// The origin the provider tags its state with for `server`.
fn origin(server: &MockServer) -> String {
    format!("http://{}", server.addr())
}

/// The assistant message the loop makes of one response, state included, and its calls.
fn assistant(events: &[Result<ProviderEvent, ProviderError>]) -> (Message, Vec<ToolCall>) {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut state = None;
    for e in events {
        match e.as_ref().unwrap_or_else(|e| panic!("error: {e}")) {
            ProviderEvent::TextDelta(t) => text.push_str(t),
            ProviderEvent::ToolCall { call, .. } => calls.push(call.clone()),
            ProviderEvent::State(s) => {
                assert!(state.replace(s.clone()).is_none(), "at most one State per response");
            }
            _ => {}
        }
    }
    (Message::Assistant { text, tool_calls: calls.clone(), state }, calls)
}

fn result(call: &ToolCall, content: &str) -> Message {
    Message::Tool {
        images: Default::default(),
        call_id: call.id.clone(),
        name: call.name.clone(),
        content: content.into(),
        is_error: false,
    }
}

#[tokio::test]
async fn a_tool_round_streams_offsets_in_chars_and_sends_the_call_back_signed() {
    let before = "Olá 👋 世界, checking: ";
    let server = MockServer::start(Script::new([
        Reply::text_then_tool_calls(before, &[("ignored", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)])
            .with_options(StreamOptions { text_chunk_chars: Some(3), split_bytes: Some(7), ..Default::default() }),
        Reply::text("It is late in Tokyo."),
    ]))
    .await;
    let p = provider(&server);
    let user = Message::user("time in Tokyo?");
    let events = run(&p, request(vec![user.clone()])).await;
    let events: Vec<ProviderEvent> = events.into_iter().map(|e| e.unwrap()).collect();
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, before);
    let (call, offset) = events
        .iter()
        .find_map(|e| match e {
            ProviderEvent::ToolCall { call, text_chars_before } => Some((call.clone(), *text_chars_before)),
            _ => None,
        })
        .expect("a call");
    assert_eq!((call.name.as_str(), call.arguments.as_str()), ("get_time", r#"{"timezone":"Asia/Tokyo"}"#));
    assert_eq!(offset, before.chars().count(), "chars, not bytes or UTF-16 units");
    assert!(call.id.starts_with("gemini-call-"), "{}", call.id);
    let signature = function_call_signature("get_time", &json!({"timezone": "Asia/Tokyo"}));
    let state = ProviderState {
        api: "gemini".into(),
        origin: origin(&server),
        data: json!({"calls": {call.id.clone(): signature.clone()}}),
    };
    assert_eq!(
        &events[events.len() - 3..],
        [
            ProviderEvent::Usage(Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
                reasoning_tokens: 0,
                cached_tokens: 0,
                cache_write_tokens: 0
            }),
            ProviderEvent::State(state.clone()),
            ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: Some("mock-response-1".into()) },
        ],
        "the signature, keyed by the call's id, as state before the finish"
    );

    // The next request of the turn: the call with the state the loop kept, and its result.
    let history = vec![
        user,
        Message::Assistant { text: before.into(), tool_calls: vec![call.clone()], state: Some(state) },
        Message::Tool {
            images: Default::default(),
            call_id: call.id.clone(),
            name: "get_time".into(),
            content: "23:00".into(),
            is_error: false,
        },
    ];
    let events = run(&p, request(history)).await;
    assert!(matches!(events.last(), Some(Ok(ProviderEvent::Finish { reason: StopReason::Stop, .. }))), "{events:?}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the strict mock accepted both (converted schemas, the signature)");
    let first = &requests[0];
    assert_eq!(first.path, "/v1beta/models/gemini-test:streamGenerateContent");
    assert_eq!(first.header("x-goog-api-key"), Some(KEY));
    assert!(
        first.headers.iter().all(|(n, v)| n == "x-goog-api-key" || !v.contains(KEY)),
        "the key is only in its header"
    );
    assert_eq!(first.body["systemInstruction"], json!({"parts": [{"text": "Be brief."}]}));
    assert_eq!(first.body["toolConfig"], json!({"functionCallingConfig": {"mode": "AUTO"}}));
    assert!(first.body.get("generationConfig").is_none(), "no options, the model's defaults");
    let second = &requests[1].body["contents"];
    assert_eq!(
        second[1],
        json!({"role": "model", "parts": [
            {"text": before},
            {"functionCall": {"name": "get_time", "args": {"timezone": "Asia/Tokyo"}}, "thoughtSignature": signature}
        ]})
    );
    assert_eq!(
        second[2],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "get_time", "response": {"content": "23:00"}}}]})
    );
}

#[tokio::test]
async fn every_step_of_a_turn_goes_back_signed_and_an_unsigned_call_is_refused() {
    let server = MockServer::start(Script::new([
        Reply::parallel_tool_calls(&[("x", "get_time", r#"{"timezone":"UTC"}"#), ("y", "get_time", "{}")]),
        Reply::tool_call("z", "get_time", r#"{"timezone":"Europe/Paris"}"#),
        Reply::text("Done."),
    ]))
    .await;
    let p = provider(&server);
    let mut history = vec![Message::user("times?")];
    for _ in 0..2 {
        let (message, calls) = assistant(&run(&p, request(history.clone())).await);
        history.push(message);
        history.extend(calls.iter().map(|c| result(c, "12:00")));
    }
    let last = run(&p, request(history.clone())).await;
    assert!(matches!(last.last(), Some(Ok(ProviderEvent::Finish { reason: StopReason::Stop, .. }))), "{last:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the strict mock accepted every step");
    let contents = &requests[2].body["contents"];
    assert_eq!(
        contents[1]["parts"],
        json!([
            {"functionCall": {"name": "get_time", "args": {"timezone": "UTC"}},
                "thoughtSignature": function_call_signature("get_time", &json!({"timezone": "UTC"}))},
            {"functionCall": {"name": "get_time", "args": {}}}
        ]),
        "parallel calls: only the first is signed, as Gemini signed them"
    );
    assert_eq!(
        contents[3]["parts"],
        json!([{"functionCall": {"name": "get_time", "args": {"timezone": "Europe/Paris"}},
            "thoughtSignature": function_call_signature("get_time", &json!({"timezone": "Europe/Paris"}))}])
    );

    // The same turn without the state (as if it came from elsewhere) is what Gemini 3 refuses;
    // the strict mock does too, so the rounds above show the signatures came back.
    let server = MockServer::start(Script::new([Reply::text("unused")])).await;
    let p = provider(&server);
    let stripped: Vec<Message> = history
        .into_iter()
        .map(|m| match m {
            Message::Assistant { text, tool_calls, .. } => Message::Assistant { text, tool_calls, state: None },
            other => other,
        })
        .collect();
    let e = run(&p, request(stripped)).await.pop().unwrap().unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadRequest, "{}", e.message);
    assert!(e.message.contains("thought_signature"), "{}", e.message);
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_text_signature_goes_back_on_the_text_in_a_later_turn() {
    let server = MockServer::start(Script::new([
        Reply::reasoning_then_text("Weighing it.", "Hello there."),
        Reply::text("Again."),
    ]))
    .await;
    let p = provider(&server);
    let user = Message::user("hi");
    let events = run(&p, request(vec![user.clone()])).await;
    assert!(events.contains(&Ok(ProviderEvent::ReasoningDelta("Weighing it.".into()))), "{events:?}");
    let (message, _) = assistant(&events);
    let Message::Assistant { text, state, .. } = &message else { unreachable!() };
    assert_eq!(text, "Hello there.", "thoughts are not text");
    let signature = text_signature("Hello there.");
    assert_eq!(state.as_ref().map(|s| &s.data), Some(&json!({"text": signature})));
    let events = run(&p, request(vec![user, message, Message::user("more")])).await;
    assert!(matches!(events.last(), Some(Ok(ProviderEvent::Finish { .. }))), "{events:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the strict mock accepted the signed text");
    assert_eq!(
        requests[1].body["contents"][1],
        json!({"role": "model", "parts": [{"text": "Hello there.", "thoughtSignature": signature}]}),
        "the thought text is not sent back"
    );
}

#[tokio::test]
async fn state_from_another_api_or_endpoint_sends_no_signature() {
    let server = MockServer::start(Script::new([Reply::text("a"), Reply::text("b"), Reply::text("c")])).await;
    let p = provider(&server);
    let call = ToolCall { id: "gemini-call-1-0-0".into(), name: "get_time".into(), arguments: "{}".into() };
    let data = json!({"calls": {call.id.clone(): "sig-from-elsewhere"}, "text": "text-sig-from-elsewhere"});
    for (api, origin) in [
        ("anthropic", origin(&server)),
        ("openai-responses", origin(&server)),
        ("gemini", "https://generativelanguage.googleapis.com".to_owned()),
    ] {
        let state = ProviderState { api: api.into(), origin: origin.clone(), data: data.clone() };
        let history = vec![
            Message::user("time?"),
            Message::Assistant { text: String::new(), tool_calls: vec![call.clone()], state: Some(state.clone()) },
            result(&call, "12:00"),
            Message::Assistant { text: "Noon.".into(), tool_calls: vec![], state: Some(state) },
            Message::user("thanks"),
        ];
        let events = run(&p, request(history)).await;
        assert!(matches!(events.last(), Some(Ok(ProviderEvent::Finish { .. }))), "{api} at {origin}: {events:?}");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "the strict mock accepted all (earlier turns may be unsigned)");
    for r in &requests {
        assert!(!r.body.to_string().contains("thoughtSignature"), "{}", r.body);
        assert_eq!(
            r.body["contents"][1],
            json!({"role": "model", "parts": [{"functionCall": {"name": "get_time", "args": {}}}]})
        );
    }
}

#[tokio::test]
async fn options_become_the_generation_config_the_strict_mock_accepts() {
    let server = MockServer::start(Script::new([Reply::text("a"), Reply::text("b"), Reply::text("c")])).await;
    let p = provider(&server);
    let cases = [
        (
            GenerationOptions {
                max_output_tokens: Some(2048),
                reasoning_effort: Some(ReasoningEffort::High),
                thinking_budget: None,
                ..Default::default()
            },
            json!({"maxOutputTokens": 2048, "thinkingConfig": {"thinkingBudget": 24576, "includeThoughts": true}}),
        ),
        (
            GenerationOptions { thinking_budget: Some(0), ..Default::default() },
            json!({"thinkingConfig": {"thinkingBudget": 0}}),
        ),
        (
            GenerationOptions { thinking_budget: Some(64), ..Default::default() },
            json!({"thinkingConfig": {"thinkingBudget": 128, "includeThoughts": true}}),
        ),
    ];
    for (options, _) in &cases {
        let mut req = request(vec![Message::user("hi")]);
        req.options = *options;
        let events = run(&p, req).await;
        assert!(events.iter().all(Result::is_ok), "{options:?}: {events:?}");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), cases.len(), "the strict mock accepted every config");
    for ((options, want), r) in cases.iter().zip(&requests) {
        assert_eq!(r.body["generationConfig"], *want, "{options:?}");
    }
}

#[tokio::test]
async fn forcing_one_of_two_tools_is_any_with_the_allowed_names() {
    let server = MockServer::start(Script::new([Reply::tool_call("x", "get_time", "{}")])).await;
    let p = provider(&server);
    let mut req = request(vec![Message::user("hi")]);
    req.tool_choice = ToolChoice::OneOf(vec!["get_time".into(), "fs__edit_file".into()]);
    let events = run(&p, req).await;
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    assert_eq!(
        server.requests()[0].body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_time", "fs__edit_file"]}})
    );
}

#[tokio::test]
async fn errors_in_googles_shape_say_what_to_do() {
    let key_invalid = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
        "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]}});
    let rate = json!({"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details.", "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"}]}});
    let server = MockServer::start(Script::new([
        Reply::http(400, key_invalid.to_string()),
        Reply::http(429, rate.to_string()),
        Reply::stream([
            Step::text("par"),
            Step::ErrorObject { message: "overloaded".into(), code: Some("UNAVAILABLE".into()) },
        ]),
        Reply::stream([Step::text("par")]),
    ]))
    .await;
    let p = provider(&server);
    let req = || request(vec![Message::user("hi")]);
    let e = run(&p, req()).await.pop().unwrap().unwrap_err();
    assert_eq!(e.kind, ErrorKind::Auth);
    assert!(e.message.contains("GEMINI_API_KEY") && !e.message.contains(KEY), "{}", e.message);
    let e = run(&p, req()).await.pop().unwrap().unwrap_err();
    assert_eq!(
        (e.kind, e.retry_after),
        (ErrorKind::RateLimited, Some(std::time::Duration::from_secs(12))),
        "{}",
        e.message
    );
    let out = run(&p, req()).await;
    assert_eq!(out[0], Ok(ProviderEvent::TextDelta("par".into())));
    assert_eq!(out[1].clone().unwrap_err().kind, ErrorKind::Overloaded);
    let e = run(&p, req()).await.pop().unwrap().unwrap_err();
    assert_eq!(e.kind, ErrorKind::Network, "a body that ends without a finish reason is a cut: {}", e.message);
}

#[tokio::test]
async fn an_unconverted_schema_would_have_been_refused() {
    // The mock is as strict as the API: the same MCP schema sent as is gets Gemini's 400.
    let server = MockServer::start(Script::new([Reply::text("unused")])).await;
    let response = reqwest::Client::new()
        .post(format!("http://{}/v1beta/models/m:streamGenerateContent?alt=sse", server.addr()))
        .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
            "tools": [{"functionDeclarations": [{"name": "fs__edit_file", "parameters": mcp_tool().parameters}]}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
}

/// A one-thread HTTP server answering `GET /v1beta/models` with two pages, recording each path.
fn model_pages() -> (String, std::sync::mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(2) {
            let mut stream = stream.unwrap();
            let mut head = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap() > 2 {
                head.push_str(&line);
                line.clear();
            }
            let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
            let key_ok = head.to_ascii_lowercase().contains(&format!("x-goog-api-key: {}", KEY.to_ascii_lowercase()));
            let body = if path.contains("pageToken=next%2F1") {
                json!({"models": [{"name": "models/gemini-2.5-pro", "supportedGenerationMethods": ["generateContent"]}]})
            } else {
                json!({"models": [
                    {"name": "models/gemini-2.0-flash", "supportedGenerationMethods": ["generateContent", "countTokens"]},
                    {"name": "models/embedding-001", "supportedGenerationMethods": ["embedContent"]}
                ], "nextPageToken": "next/1"})
            };
            tx.send(format!("{path} key:{key_ok}")).unwrap();
            let body = body.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (format!("http://{addr}/v1beta"), rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_are_listed_across_pages_without_embeddings() {
    let (base_url, paths) = model_pages();
    let p = Gemini::new(GeminiConfig { base_url, api_key: Some(SecretValue::new(KEY)) }).unwrap();
    let models = p.list_models().await.unwrap();
    assert_eq!(models, ["gemini-2.0-flash", "gemini-2.5-pro"]);
    let seen: Vec<String> = paths.try_iter().collect();
    assert_eq!(
        seen,
        ["/v1beta/models?pageSize=1000 key:true", "/v1beta/models?pageSize=1000&pageToken=next%2F1 key:true"],
        "the key goes in its header, never the URL"
    );
}
