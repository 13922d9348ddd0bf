//! Helpers shared by the integration tests: an HTTP client, an SSE parser and a raw HTTP/1.1 reader.

// Each test binary compiles this module but uses only some of the helpers.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_mock_provider::MockServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Generous bound for anything that should be instantaneous, so a hang fails instead of blocking.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// A streaming chat request with one user message.
pub fn chat_body(user: &str) -> Value {
    json!({
        "model": "gpt-test",
        "stream": true,
        "messages": [{ "role": "user", "content": user }],
    })
}

/// POSTs `body` to the server's chat endpoint with a bearer token.
pub async fn post_chat(server: &MockServer, body: &Value) -> reqwest::Response {
    let request = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .bearer_auth("sk-test")
        .json(body)
        .send();
    tokio::time::timeout(TIMEOUT, request).await.expect("request timed out").expect("request failed")
}

/// POSTs `body` and returns the whole response body as text.
pub async fn post_chat_text(server: &MockServer, body: &Value) -> String {
    let response = post_chat(server, body).await;
    tokio::time::timeout(TIMEOUT, response.text()).await.expect("body timed out").expect("body failed")
}

/// One SSE event's data.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    Json(Value),
    Done,
}

impl Event {
    pub fn json(&self) -> &Value {
        match self {
            Event::Json(value) => value,
            Event::Done => panic!("expected a JSON event, got [DONE]"),
        }
    }
}

/// Parses an SSE body of `data:` events, ignoring comments; panics on malformed JSON.
pub fn parse_sse(body: &str) -> Vec<Event> {
    assert!(body.ends_with("\n\n"), "body must end on an event boundary: {body:?}");
    body.split("\n\n")
        .filter(|block| !block.is_empty())
        .filter_map(|block| {
            let data = block.lines().filter_map(|line| line.strip_prefix("data: ")).collect::<Vec<_>>().join("\n");
            if data.is_empty() {
                return None;
            }
            Some(if data == "[DONE]" {
                Event::Done
            } else {
                Event::Json(serde_json::from_str(&data).unwrap_or_else(|err| {
                    panic!("invalid JSON event {data:?}: {err}");
                }))
            })
        })
        .collect()
}

/// Concatenates `choices[0].delta.<field>` over all events.
pub fn delta_text(events: &[Event], field: &str) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            Event::Json(chunk) => chunk.pointer(&format!("/choices/0/delta/{field}")).and_then(Value::as_str),
            Event::Done => None,
        })
        .collect()
}

/// Reassembles streamed tool calls by index into `(id, name, arguments)`.
pub fn tool_calls(events: &[Event]) -> BTreeMap<u64, (String, String, String)> {
    let mut calls: BTreeMap<u64, (String, String, String)> = BTreeMap::new();
    for event in events {
        let Event::Json(chunk) = event else { continue };
        let Some(fragments) = chunk.pointer("/choices/0/delta/tool_calls").and_then(Value::as_array) else {
            continue;
        };
        for fragment in fragments {
            let index = fragment["index"].as_u64().expect("tool call index");
            let call = calls.entry(index).or_default();
            if let Some(id) = fragment["id"].as_str() {
                call.0.push_str(id);
            }
            if let Some(name) = fragment.pointer("/function/name").and_then(Value::as_str) {
                call.1.push_str(name);
            }
            if let Some(args) = fragment.pointer("/function/arguments").and_then(Value::as_str) {
                call.2.push_str(args);
            }
        }
    }
    calls
}

/// A raw HTTP/1.1 exchange: the response head and the body's chunked-encoding frames.
#[derive(Debug)]
pub struct RawResponse {
    pub head: String,
    pub chunks: Vec<Vec<u8>>,
}

impl RawResponse {
    pub fn body(&self) -> Vec<u8> {
        self.chunks.concat()
    }
}

/// Sends a chat request over a bare TCP connection and decodes the chunked response by hand, so
/// tests can see how the server framed its writes.
pub async fn raw_chat(addr: SocketAddr, body: &Value) -> RawResponse {
    let body = body.to_string();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut received = Vec::new();
    let read_all = async {
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).await.expect("read");
            assert!(n > 0, "connection closed before the last chunk");
            received.extend_from_slice(&buf[..n]);
            if received.ends_with(b"\r\n0\r\n\r\n") {
                break;
            }
        }
    };
    tokio::time::timeout(TIMEOUT, read_all).await.expect("raw read timed out");

    let head_end = received.windows(4).position(|window| window == b"\r\n\r\n").expect("end of head") + 4;
    let head = String::from_utf8(received[..head_end].to_vec()).expect("head is UTF-8");
    assert!(head.to_ascii_lowercase().contains("transfer-encoding: chunked"), "expected a chunked body: {head}");
    let mut chunks = Vec::new();
    let mut rest = &received[head_end..];
    loop {
        let line_end = rest.windows(2).position(|window| window == b"\r\n").expect("chunk size line");
        let size_text = std::str::from_utf8(&rest[..line_end]).expect("chunk size is ASCII");
        let size = usize::from_str_radix(size_text.trim(), 16).expect("hex chunk size");
        rest = &rest[line_end + 2..];
        if size == 0 {
            break;
        }
        chunks.push(rest[..size].to_vec());
        assert_eq!(&rest[size..size + 2], b"\r\n", "chunk must end with CRLF");
        rest = &rest[size + 2..];
    }
    RawResponse { head, chunks }
}
