//! The Anthropic Messages wire format (`POST /v1/messages`).
//!
//! Streams named events (`event: <type>` + `data: {...}`): `message_start`, then one content
//! block per text, reasoning (a `thinking` block, closed with a `signature_delta`) or tool call
//! (a `tool_use` block whose input arrives as `input_json_delta` pieces), then `message_delta`
//! with the stop reason and usage, and `message_stop`. The encoder cannot look ahead, so
//! `message_start` reports zero input tokens and `message_delta` carries every count (the API's
//! counts there are cumulative, so clients must read them anyway).
//!
//! Requests are checked like the real API does where that is cheap: no `anthropic-version`
//! header, no `max_tokens`, an empty text block, a `thinking` block whose signature is not the one
//! the mock gave its text (see [`crate::signatures::thinking_signature`]), a `redacted_thinking`
//! block without `data`, an invalid `thinking` parameter, and, with thinking enabled, a
//! `tool_choice` forcing tool use or a final assistant message with tool calls that does not
//! start with a thinking block, is a 400 in Anthropic's error shape.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::MethodRouter;
use serde_json::{Value, json};

use crate::api::{Assembled, ConversationTail, ErrorKind, ResponseContext, Usage, WireApi};
use crate::script::{Step, StreamOptions};
use crate::signatures::thinking_signature;
use crate::sse::{Events, StepEncoder};

/// Tool-input fragment size when the script does not set one, as for OpenAI Chat.
const DEFAULT_ARGS_CHUNK_CHARS: usize = 8;

/// Marker type for the Anthropic Messages API.
#[derive(Debug)]
pub(crate) struct Anthropic;

/// The API-neutral finish reason in Anthropic's words; anything else is passed on as written
/// (`pause_turn`, `stop_sequence`).
fn stop_reason(reason: &str) -> &str {
    match reason {
        "stop" => "end_turn",
        "tool_calls" => "tool_use",
        "length" => "max_tokens",
        "content_filter" => "refusal",
        other => other,
    }
}

/// Anthropic's `input_tokens` leaves out cache reads and writes; the script's (or the count's)
/// prompt tokens include them. `written` is the count's cache write ([`ResponseContext`]).
fn usage_json(usage: Usage, written: u64) -> Value {
    json!({
        "input_tokens": usage.prompt_tokens.saturating_sub(usage.cached_tokens).saturating_sub(written),
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": usage.cached_tokens,
        "output_tokens": usage.completion_tokens,
    })
}

fn message_id(ctx: &ResponseContext) -> String {
    format!("msg_mock_{}", ctx.request_number)
}

/// A tool call's input object; arguments that are not a JSON object become `{}`.
fn input_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => json!({}),
    }
}

impl WireApi for Anthropic {
    type Encoder = EventEncoder;

    fn wants_stream(body: &Value) -> bool {
        body.get("stream").and_then(Value::as_bool) == Some(true)
    }

    fn requested_model(body: &Value) -> Option<&str> {
        body.get("model").and_then(Value::as_str)
    }

    fn encoder(ctx: ResponseContext, options: &StreamOptions) -> EventEncoder {
        EventEncoder {
            ctx,
            started: false,
            open: None,
            thinking: String::new(),
            next_index: 0,
            called: false,
            finish: None,
            usage: None,
            delta_sent: false,
            text_chunk_chars: options.text_chunk_chars,
            args_chunk_chars: options.args_chunk_chars.unwrap_or(DEFAULT_ARGS_CHUNK_CHARS),
        }
    }

    fn completion(ctx: &ResponseContext, reply: &Assembled, _options: &StreamOptions) -> Value {
        let mut content = Vec::new();
        if !reply.reasoning.is_empty() {
            let signature = thinking_signature(&reply.reasoning);
            content.push(json!({"type": "thinking", "thinking": reply.reasoning, "signature": signature}));
        }
        if !reply.text.is_empty() {
            content.push(json!({"type": "text", "text": reply.text}));
        }
        for (id, name, arguments) in &reply.tool_calls {
            content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input_object(arguments)}));
        }
        let reason = match &reply.finish_reason {
            Some(reason) => stop_reason(reason),
            None if reply.tool_calls.is_empty() => "end_turn",
            None => "tool_use",
        };
        json!({
            "id": message_id(ctx),
            "type": "message",
            "role": "assistant",
            "model": ctx.model,
            "content": content,
            "stop_reason": reason,
            "stop_sequence": null,
            "usage": usage_json(reply.usage.unwrap_or_default(), ctx.cache_write_tokens),
        })
    }

    fn error_body(kind: ErrorKind, message: &str, code: Option<&str>) -> Value {
        let kind = code.unwrap_or(match kind {
            ErrorKind::Server => "api_error",
            ErrorKind::InvalidRequest | ErrorKind::ContextLength => "invalid_request_error",
            ErrorKind::Auth => "authentication_error",
            ErrorKind::Permission => "permission_error",
            ErrorKind::RateLimit => "rate_limit_error",
            ErrorKind::Overloaded => "overloaded_error",
        });
        json!({"type": "error", "error": {"type": kind, "message": message}})
    }

    fn error_status(kind: ErrorKind) -> u16 {
        // Anthropic's own status for "overloaded".
        if kind == ErrorKind::Overloaded { 529 } else { crate::api::usual_error_status(kind) }
    }

    fn error_message(kind: ErrorKind) -> String {
        match kind {
            ErrorKind::Server => "Internal server error",
            ErrorKind::InvalidRequest => "Invalid request.",
            ErrorKind::Auth => "invalid x-api-key",
            ErrorKind::Permission => "Your API key does not have permission to use the specified resource.",
            ErrorKind::RateLimit => "Number of request tokens has exceeded your per-minute rate limit.",
            ErrorKind::Overloaded => "Overloaded",
            ErrorKind::ContextLength => "prompt is too long: 210000 tokens > 200000 maximum",
        }
        .to_owned()
    }

    fn prompt(body: &Value) -> crate::count::Prompt {
        crate::prompt::anthropic(body)
    }

    fn cache(units: &crate::count::Units, previous: Option<&crate::count::Units>) -> crate::count::Counted {
        units.anthropic(previous)
    }

    fn context_exceeded(prompt: u64, window: u64) -> String {
        format!("prompt is too long: {prompt} tokens > {window} maximum")
    }

    fn conversation_tail(body: &Value) -> ConversationTail {
        let messages = body.get("messages").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        let is_user = |m: &&Value| m.get("role").and_then(Value::as_str) == Some("user");
        if let Some(last) = messages.last().filter(is_user)
            && let Some(result) = blocks(last).iter().rev().find(|b| b["type"] == "tool_result")
        {
            let id = result["tool_use_id"].as_str().unwrap_or("");
            let name = messages
                .iter()
                .flat_map(blocks)
                .find(|b| b["type"] == "tool_use" && b["id"] == id)
                .and_then(|b| b["name"].as_str().map(str::to_owned));
            return ConversationTail::ToolResult { name, content: text_of(&result["content"]) };
        }
        messages
            .iter()
            .rev()
            .find(is_user)
            .map_or(ConversationTail::Empty, |m| ConversationTail::User(text_of(&m["content"])))
    }
}

/// A message's content blocks (a string content is one text block).
fn blocks(message: &Value) -> Vec<Value> {
    match &message["content"] {
        Value::String(text) => vec![json!({"type": "text", "text": text})],
        Value::Array(blocks) => blocks.clone(),
        _ => Vec::new(),
    }
}

/// The text of a content that is a string or an array of blocks.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// What the real API would refuse before answering, cheaply checked.
fn refusal(headers: &axum::http::HeaderMap, body: &Value) -> Option<String> {
    if !headers.contains_key("anthropic-version") {
        return Some("anthropic-version: header is required".to_owned());
    }
    if !body.get("max_tokens").is_some_and(Value::is_u64) {
        return Some("max_tokens: Field required".to_owned());
    }
    let system = body.get("system").map(|s| vec![json!({"content": s})]).unwrap_or_default();
    let messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    for (i, message) in messages.iter().chain(&system).enumerate() {
        let mut all = blocks(message);
        // Text inside tool results is checked too.
        let nested: Vec<Value> = all.iter().filter_map(|b| b["content"].as_array()).flatten().cloned().collect();
        all.extend(nested);
        let empty = all.iter().any(|b| b["type"] == "text" && b["text"].as_str().is_none_or(|t| t.trim().is_empty()));
        if empty {
            return Some(format!("messages.{i}: text content blocks must contain non-whitespace text"));
        }
    }
    signature_refusal(&messages)
        .or_else(|| thinking_refusal(body, &messages))
        .or_else(|| crate::parts::anthropic_refusal(body))
}

/// Thinking blocks must come back exactly as issued: a `thinking` block with the signature the
/// mock gave its text, a `redacted_thinking` block with its `data`.
fn signature_refusal(messages: &[Value]) -> Option<String> {
    for (i, message) in messages.iter().enumerate() {
        for (j, block) in blocks(message).iter().enumerate() {
            match block["type"].as_str() {
                Some("thinking") => {
                    let Some(signature) = block["signature"].as_str() else {
                        return Some(format!("messages.{i}.content.{j}.thinking.signature: Field required"));
                    };
                    let thinking = block["thinking"].as_str().unwrap_or("");
                    if signature != thinking_signature(thinking) {
                        return Some(format!("messages.{i}.content.{j}: Invalid `signature` in `thinking` block"));
                    }
                }
                Some("redacted_thinking") if block["data"].as_str().is_none_or(str::is_empty) => {
                    return Some(format!("messages.{i}.content.{j}.redacted_thinking.data: Field required"));
                }
                _ => {}
            }
        }
    }
    None
}

/// The `thinking` parameter, and what enabling it demands of `tool_choice` and of the final
/// assistant message.
fn thinking_refusal(body: &Value, messages: &[Value]) -> Option<String> {
    let thinking = body.get("thinking")?;
    match thinking["type"].as_str() {
        Some("disabled") => return None,
        Some("enabled") => {}
        other => {
            let tag = other.unwrap_or("");
            return Some(format!(
                "thinking: Input tag '{tag}' found using 'type' does not match any of the expected tags: 'disabled', 'enabled'"
            ));
        }
    }
    if let Some(extra) =
        thinking.as_object().into_iter().flatten().map(|(k, _)| k).find(|k| *k != "type" && *k != "budget_tokens")
    {
        return Some(format!("thinking.enabled.{extra}: Extra inputs are not permitted"));
    }
    let budget = match thinking.get("budget_tokens") {
        None => return Some("thinking.enabled.budget_tokens: Field required".to_owned()),
        Some(b) => match b.as_u64() {
            Some(b) => b,
            None if b.as_i64().is_some() => 0,
            None => return Some("thinking.enabled.budget_tokens: Input should be a valid integer".to_owned()),
        },
    };
    if budget < 1024 {
        return Some("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".to_owned());
    }
    if body["max_tokens"].as_u64().is_some_and(|max| budget >= max) {
        return Some("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size".to_owned());
    }
    if matches!(body["tool_choice"]["type"].as_str(), Some("any" | "tool")) {
        return Some("Thinking may not be enabled when tool_choice forces tool use.".to_owned());
    }
    let last_assistant = messages.iter().enumerate().rev().find(|(_, m)| m["role"] == "assistant");
    if let Some((i, message)) = last_assistant {
        let content = blocks(message);
        let first = content.first().and_then(|b| b["type"].as_str()).unwrap_or("");
        let calls = content.iter().any(|b| b["type"] == "tool_use");
        if calls && first != "thinking" && first != "redacted_thinking" {
            return Some(format!(
                "messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
            ));
        }
    }
    None
}

/// `route`, refusing what the real API refuses (see the module docs) with its error shape, before
/// the request is recorded or consumes a reply; a body that is not JSON is left to the handler.
pub(crate) fn strict<S: Clone + Send + Sync + 'static>(route: MethodRouter<S>) -> MethodRouter<S> {
    route.layer(axum::middleware::from_fn(refuse))
}

async fn refuse(request: Request, next: Next) -> Response {
    crate::api::refuse_with(request, next, |parts, json| {
        let message = refusal(&parts.headers, json)?;
        Some(Anthropic::error_body(ErrorKind::InvalidRequest, &message, None))
    })
    .await
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Open {
    Text,
    Thinking,
}

/// Streams one reply as Messages events.
#[derive(Debug)]
pub(crate) struct EventEncoder {
    ctx: ResponseContext,
    started: bool,
    /// The text or thinking block being written, and its index.
    open: Option<(Open, usize)>,
    /// The text of the open thinking block so far, which its signature signs.
    thinking: String,
    next_index: usize,
    called: bool,
    /// The finish reason in Anthropic's words, once scripted.
    finish: Option<String>,
    usage: Option<Usage>,
    delta_sent: bool,
    text_chunk_chars: Option<usize>,
    args_chunk_chars: usize,
}

fn event(events: &mut Events, data: &Value) {
    let name = data["type"].as_str().unwrap_or("message");
    events.raw(format!("event: {name}\ndata: {data}\n\n").as_bytes());
}

impl EventEncoder {
    fn start(&mut self, events: &mut Events) {
        if self.started {
            return;
        }
        self.started = true;
        event(
            events,
            &json!({"type": "message_start", "message": {
                "id": message_id(&self.ctx), "type": "message", "role": "assistant", "content": [],
                "model": self.ctx.model, "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }}),
        );
    }

    fn close(&mut self, events: &mut Events) {
        if let Some((kind, index)) = self.open.take() {
            if kind == Open::Thinking {
                let signature = thinking_signature(&std::mem::take(&mut self.thinking));
                event(
                    events,
                    &json!({"type": "content_block_delta", "index": index,
                        "delta": {"type": "signature_delta", "signature": signature}}),
                );
            }
            event(events, &json!({"type": "content_block_stop", "index": index}));
        }
    }

    /// Writes `text` into an open block of `kind`, starting one if needed.
    fn write(&mut self, events: &mut Events, kind: Open, text: &str) {
        if text.is_empty() {
            return;
        }
        self.start(events);
        let index = match self.open {
            Some((open, index)) if open == kind => index,
            _ => {
                self.close(events);
                let index = self.take_index();
                let block = match kind {
                    Open::Text => json!({"type": "text", "text": ""}),
                    Open::Thinking => json!({"type": "thinking", "thinking": ""}),
                };
                event(events, &json!({"type": "content_block_start", "index": index, "content_block": block}));
                self.open = Some((kind, index));
                index
            }
        };
        if kind == Open::Thinking {
            self.thinking.push_str(text);
        }
        for piece in char_chunks(text, self.text_chunk_chars) {
            let delta = match kind {
                Open::Text => json!({"type": "text_delta", "text": piece}),
                Open::Thinking => json!({"type": "thinking_delta", "thinking": piece}),
            };
            event(events, &json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
    }

    fn take_index(&mut self) -> usize {
        self.next_index += 1;
        self.next_index - 1
    }

    fn tool_call(&mut self, events: &mut Events, id: &str, name: &str, arguments: &str) {
        self.start(events);
        self.close(events);
        self.called = true;
        let index = self.take_index();
        event(
            events,
            &json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        );
        for piece in char_chunks(arguments, Some(self.args_chunk_chars)) {
            event(
                events,
                &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": piece}}),
            );
        }
        event(events, &json!({"type": "content_block_stop", "index": index}));
    }

    /// `message_delta`, once: when both the finish reason and the usage are known, or at the end.
    fn message_delta(&mut self, events: &mut Events) {
        if self.delta_sent {
            return;
        }
        self.delta_sent = true;
        self.start(events);
        self.close(events);
        let written = self.ctx.cache_write_tokens;
        let usage = self.usage.map_or_else(|| json!({"output_tokens": 0}), |usage| usage_json(usage, written));
        event(
            events,
            &json!({"type": "message_delta", "delta": {"stop_reason": self.finish, "stop_sequence": null},
                "usage": usage}),
        );
    }
}

impl StepEncoder for EventEncoder {
    fn encode(&mut self, step: &Step, events: &mut Events) {
        match step {
            Step::Text { text } => self.write(events, Open::Text, text),
            Step::Reasoning { text } => self.write(events, Open::Thinking, text),
            Step::ToolCall { id, name, arguments } => self.tool_call(events, id, name, arguments),
            // The API writes one block after another, never interleaved.
            Step::ParallelToolCalls { calls } => {
                for (id, name, arguments) in calls {
                    self.tool_call(events, id, name, arguments);
                }
            }
            Step::Usage { prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens } => {
                self.usage = Some(Usage {
                    prompt_tokens: *prompt_tokens,
                    completion_tokens: *completion_tokens,
                    reasoning_tokens: *reasoning_tokens,
                    cached_tokens: *cached_tokens,
                });
                if self.finish.is_some() {
                    self.message_delta(events);
                }
            }
            Step::Finish { reason } => {
                self.start(events);
                self.close(events);
                self.finish = Some(stop_reason(reason).to_owned());
                if self.usage.is_some() {
                    self.message_delta(events);
                }
            }
            Step::Done => {
                if self.finish.is_none() && self.called {
                    self.finish = Some("tool_use".to_owned());
                }
                self.message_delta(events);
                event(events, &json!({"type": "message_stop"}));
            }
            Step::ErrorObject { message, code } => {
                event(events, &Anthropic::error_body(ErrorKind::Server, message, code.as_deref()));
            }
            // The driver handles these before they reach an encoder.
            Step::Delay { .. }
            | Step::Stall
            | Step::Drop
            | Step::Raw { .. }
            | Step::RawBytes { .. }
            | Step::LongLine { .. }
            | Step::Quote { .. }
            | Step::KeepLines { .. } => {}
        }
    }
}

/// Splits `text` into pieces of `size` characters (never inside a character: each piece is a
/// JSON string); `None` or 0 yields the whole text, and an empty text one empty piece.
fn char_chunks(text: &str, size: Option<usize>) -> impl Iterator<Item = &str> {
    let size = size.filter(|&size| size > 0).unwrap_or(usize::MAX);
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        let end = current.char_indices().nth(size).map_or(current.len(), |(at, _)| at);
        let (head, tail) = current.split_at(end);
        rest = (!tail.is_empty()).then_some(tail);
        Some(head)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events the server streams for `steps` on `POST /v1/messages`, as (name, data).
    async fn encode(steps: &[Step], options: &StreamOptions) -> Vec<(String, Value)> {
        let reply = crate::Reply::Stream { steps: steps.to_vec(), options: options.clone() };
        let server = crate::MockServer::start(crate::Script::new([reply])).await;
        let response = reqwest::Client::new()
            .post(format!("{}/messages", server.base_url()))
            .header("anthropic-version", "2023-06-01")
            .json(&json!({"model":"claude-test","max_tokens":5,"stream":true,
                "messages":[{"role":"user","content":"hi"}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let text = response.text().await.unwrap();
        text.split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| {
                let (name, data) = e.split_once('\n').unwrap();
                let name = name.strip_prefix("event: ").unwrap().to_owned();
                let data: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
                assert_eq!(data["type"], name.as_str(), "the event name is the data's type");
                (name, data)
            })
            .collect()
    }

    #[tokio::test]
    async fn a_reply_is_one_block_per_text_reasoning_and_call_with_usage_in_message_delta() {
        let steps = [
            Step::Reasoning { text: "hm".into() },
            Step::text("Hi 🙂"),
            Step::text("!"),
            Step::tool_call("toolu_1", "get_time", r#"{"tz":"UTC"}"#),
            Step::finish("tool_calls"),
            Step::Usage { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 0, cached_tokens: 4 },
            Step::Done,
        ];
        let events = encode(&steps, &StreamOptions { args_chunk_chars: Some(5), ..StreamOptions::default() }).await;
        let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
        );
        assert_eq!(events[0].1["message"]["id"], "msg_mock_1");
        assert_eq!(events[3].1["delta"]["type"], "signature_delta");
        assert_eq!(events[6].1["delta"]["text"], "Hi 🙂");
        assert_eq!(events[9].1["content_block"]["id"], "toolu_1");
        assert_eq!(events[9].1["index"], 2);
        let json: String =
            events[10..13].iter().map(|(_, d)| d["delta"]["partial_json"].as_str().unwrap().to_owned()).collect();
        assert_eq!(json, r#"{"tz":"UTC"}"#);
        assert_eq!(events[14].1["delta"]["stop_reason"], "tool_use");
        assert_eq!(
            events[14].1["usage"],
            json!({"input_tokens":6,"cache_creation_input_tokens":0,"cache_read_input_tokens":4,"output_tokens":5})
        );
    }

    #[tokio::test]
    async fn an_error_object_is_an_error_event_in_anthropics_shape() {
        let steps = [Step::ErrorObject { message: "Overloaded".into(), code: Some("overloaded_error".into()) }];
        let events = encode(&steps, &StreamOptions::default()).await;
        assert_eq!(events[0].1, json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}));
    }

    #[test]
    fn requests_the_real_api_refuses_are_refused() {
        let mut headers = axum::http::HeaderMap::new();
        let ok =
            json!({"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]});
        assert!(refusal(&headers, &ok).unwrap().contains("anthropic-version"));
        headers.insert("anthropic-version", "2023-06-01".parse().unwrap());
        assert_eq!(refusal(&headers, &ok), None);
        let mut no_max = ok.clone();
        no_max.as_object_mut().unwrap().remove("max_tokens");
        assert!(refusal(&headers, &no_max).unwrap().contains("max_tokens"));
        let empty = json!({"max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":" "}]}]});
        assert!(refusal(&headers, &empty).unwrap().contains("non-whitespace"));
        let empty_string = json!({"max_tokens":1,"messages":[{"role":"user","content":""}]});
        assert!(refusal(&headers, &empty_string).is_some());
        let nested = json!({"max_tokens":1,"messages":[{"role":"user","content":[
            {"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":""}]}]}]});
        assert!(refusal(&headers, &nested).is_some());
        let no_content_result =
            json!({"max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]});
        assert_eq!(refusal(&headers, &no_content_result), None);
    }

    #[test]
    fn the_tail_names_the_tool_of_the_last_result() {
        let body = json!({"messages":[
            {"role":"user","content":"what time is it"},
            {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_time","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"12:00"}]},
        ]});
        assert_eq!(
            Anthropic::conversation_tail(&body),
            ConversationTail::ToolResult { name: Some("get_time".into()), content: "12:00".into() }
        );
        let body =
            json!({"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]});
        assert_eq!(Anthropic::conversation_tail(&body), ConversationTail::User("a\nb".into()));
    }
}
