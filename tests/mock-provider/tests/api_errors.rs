//! `Reply::ApiError`: one API-neutral error, rendered in each API's own status and body.

mod common;

use common::TIMEOUT;
use serde_json::{Value, json};
use switchboard_mock_provider::{ErrorCategory, MockServer, Reply, Script};

const APIS: [&str; 4] = ["chat", "responses", "anthropic", "gemini"];

/// A minimal streamed request the API accepts, sent to `server`.
async fn post(server: &MockServer, api: &str) -> reqwest::Response {
    let client = reqwest::Client::new();
    let base = format!("http://{}", server.addr());
    let request = match api {
        "chat" => client
            .post(format!("{base}/v1/chat/completions"))
            .json(&json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]})),
        "responses" => {
            client.post(format!("{base}/v1/responses")).json(&json!({"model": "m", "stream": true, "input": "hi"}))
        }
        "anthropic" => {
            client.post(format!("{base}/v1/messages")).header("anthropic-version", "2023-06-01").json(&json!({
                "model": "m", "max_tokens": 100, "stream": true, "messages": [{"role": "user", "content": "hi"}],
            }))
        }
        _ => client
            .post(format!("{base}/v1beta/models/m:streamGenerateContent?alt=sse"))
            .header("x-goog-api-key", "k")
            .json(&json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})),
    };
    tokio::time::timeout(TIMEOUT, request.send()).await.expect("request timed out").expect("request failed")
}

/// The status, headers and JSON body `reply` gets on `api`.
async fn answer(api: &str, reply: Reply) -> (u16, reqwest::header::HeaderMap, Value) {
    let server = MockServer::start(Script::new([reply])).await;
    let response = post(&server, api).await;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "application/json", "{api}");
    (status, headers, response.json().await.unwrap())
}

/// (status, the error's type or status string, its code) as `api` renders `body`.
fn shape(api: &str, status: u16, body: &Value) -> (u16, Value, Value) {
    match api {
        "anthropic" => {
            assert_eq!(body["type"], "error", "{body}");
            (status, body["error"]["type"].clone(), Value::Null)
        }
        "gemini" => {
            assert_eq!(body["error"]["code"], status, "the body's code is the HTTP status: {body}");
            (status, body["error"]["status"].clone(), Value::Null)
        }
        _ => (status, body["error"]["type"].clone(), body["error"].get("code").cloned().unwrap_or(Value::Null)),
    }
}

/// The HTTP status, the error's type (or Google status) and OpenAI's code.
type Shape = (u16, &'static str, Option<&'static str>);

#[tokio::test]
async fn every_category_has_each_apis_status_and_type() {
    use ErrorCategory::*;
    let table: [(ErrorCategory, [Shape; 3]); 7] = [
        (
            Auth,
            [
                (401, "invalid_request_error", Some("invalid_api_key")),
                (401, "authentication_error", None),
                (401, "UNAUTHENTICATED", None),
            ],
        ),
        (
            Permission,
            [(403, "permission_error", None), (403, "permission_error", None), (403, "PERMISSION_DENIED", None)],
        ),
        (
            RateLimit,
            [
                (429, "requests", Some("rate_limit_exceeded")),
                (429, "rate_limit_error", None),
                (429, "RESOURCE_EXHAUSTED", None),
            ],
        ),
        (Overloaded, [(503, "server_error", None), (529, "overloaded_error", None), (503, "UNAVAILABLE", None)]),
        (
            ContextLength,
            [
                (400, "invalid_request_error", Some("context_length_exceeded")),
                (400, "invalid_request_error", None),
                (400, "INVALID_ARGUMENT", None),
            ],
        ),
        (
            InvalidRequest,
            [
                (400, "invalid_request_error", None),
                (400, "invalid_request_error", None),
                (400, "INVALID_ARGUMENT", None),
            ],
        ),
        (Server, [(500, "server_error", None), (500, "api_error", None), (500, "INTERNAL", None)]),
    ];
    for (category, [openai, anthropic, gemini]) in table {
        for api in APIS {
            let (status, ty, code) = match api {
                "chat" | "responses" => openai,
                "anthropic" => anthropic,
                _ => gemini,
            };
            let (got_status, _, body) = answer(api, Reply::api_error(category)).await;
            let want = (status, json!(ty), code.map_or(Value::Null, |c| json!(c)));
            assert_eq!(shape(api, got_status, &body), want, "{category:?} on {api}: {body}");
            let message = &body["error"]["message"];
            assert!(message.as_str().is_some_and(|m| !m.is_empty()), "{category:?} on {api}: a message: {body}");
        }
    }
}

#[tokio::test]
async fn context_length_errors_use_each_apis_words() {
    for (api, words) in [
        ("chat", "maximum context length"),
        ("responses", "maximum context length"),
        ("anthropic", "prompt is too long: "),
        ("gemini", "exceeds the maximum number of tokens"),
    ] {
        let (_, _, body) = answer(api, Reply::api_error(ErrorCategory::ContextLength)).await;
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(words), "{api}: {message}");
    }
}

#[tokio::test]
async fn a_retry_hint_is_a_header_or_gemini_retry_info() {
    for api in APIS {
        let (status, headers, body) = answer(api, Reply::api_error(ErrorCategory::RateLimit).with_retry_after(3)).await;
        assert_eq!(status, 429);
        if api == "gemini" {
            assert!(headers.get("retry-after").is_none(), "Gemini sends no retry-after header");
            assert_eq!(
                body["error"]["details"],
                json!([{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "3s"}])
            );
        } else {
            assert_eq!(headers["retry-after"], "3", "{api}");
        }
    }
}

#[tokio::test]
async fn status_message_and_headers_can_be_set() {
    for api in APIS {
        let reply = Reply::api_error(ErrorCategory::Server)
            .with_status(502)
            .with_message("upstream went away")
            .with_header("x-request-id", "req_1");
        let (status, headers, body) = answer(api, reply).await;
        assert_eq!(status, 502, "{api}");
        assert_eq!(headers["x-request-id"], "req_1", "{api}");
        assert_eq!(body["error"]["message"], "upstream went away", "{api}");
    }
}

#[tokio::test]
async fn api_errors_are_scriptable_as_json_and_consume_one_reply() {
    let script: Script = serde_json::from_value(json!({"replies": [
        {"type": "api_error", "category": "overloaded"},
        {"type": "api_error", "category": "rate_limit", "retry_after_secs": 2, "message": "slow down"},
    ]}))
    .unwrap();
    assert_eq!(
        script.replies,
        [
            Reply::api_error(ErrorCategory::Overloaded),
            Reply::api_error(ErrorCategory::RateLimit).with_retry_after(2).with_message("slow down")
        ]
    );
    let server = MockServer::start(script).await;
    assert_eq!(post(&server, "anthropic").await.status(), 529);
    let second = post(&server, "anthropic").await;
    assert_eq!(second.status(), 429);
    assert_eq!(second.headers()["retry-after"], "2");
    assert_eq!(server.requests().len(), 2, "both were recorded");
    assert_eq!(server.remaining_replies(), 0);
}
