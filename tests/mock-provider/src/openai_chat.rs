//! The OpenAI Chat Completions wire format (`POST /v1/chat/completions`).
//!
//! Streams `chat.completion.chunk` objects as `data: {...}\n\n` events ending with
//! `data: [DONE]`, or one `chat.completion` object when the request does not ask to stream.
//!
//! Requests are checked like OpenAI does where that is cheap: a `reasoning_effort` that is not
//! `minimal`, `low`, `medium` or `high`, a `max_tokens` or `max_completion_tokens` that is not a
//! positive integer, or both of them at once, or more than [`crate::api::OPENAI_MAX_TOOLS`]
//! tools, is a 400 in OpenAI's error shape (with `param`), before the request is recorded or
//! consumes a reply; so are malformed content parts of a user message ([`crate::parts`]).

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::MethodRouter;
use serde::Serialize;
use serde_json::{Value, json};

use crate::api::{Assembled, ConversationTail, ErrorKind, ResponseContext, Usage, WireApi};
use crate::script::{ReasoningField, Step, StreamOptions};
use crate::sse::{Events, StepEncoder};

/// Tool-call arguments fragment size when the script does not set one: small enough that every
/// realistic arguments string arrives in several pieces, as real servers send them.
const DEFAULT_ARGS_CHUNK_CHARS: usize = 8;

/// Marker type for the OpenAI Chat Completions API.
#[derive(Debug)]
pub(crate) struct OpenAiChat;

impl WireApi for OpenAiChat {
    type Encoder = ChunkEncoder;

    fn wants_stream(body: &Value) -> bool {
        body.get("stream").and_then(Value::as_bool) == Some(true)
    }

    fn requested_model(body: &Value) -> Option<&str> {
        body.get("model").and_then(Value::as_str)
    }

    fn encoder(ctx: ResponseContext, options: &StreamOptions) -> ChunkEncoder {
        ChunkEncoder {
            id: completion_id(&ctx),
            ctx,
            role_sent: false,
            reasoning_field: options.reasoning_field.unwrap_or_default(),
            next_tool_index: 0,
            text_chunk_chars: options.text_chunk_chars,
            args_chunk_chars: options.args_chunk_chars.unwrap_or(DEFAULT_ARGS_CHUNK_CHARS),
        }
    }

    fn completion(ctx: &ResponseContext, reply: &Assembled, options: &StreamOptions) -> Value {
        let mut message = json!({
            "role": "assistant",
            "content": (!reply.text.is_empty()).then_some(reply.text.as_str()),
        });
        if !reply.reasoning.is_empty() {
            let field = match options.reasoning_field.unwrap_or_default() {
                ReasoningField::ReasoningContent => "reasoning_content",
                ReasoningField::Reasoning => "reasoning",
            };
            message[field] = json!(reply.reasoning);
        }
        if !reply.tool_calls.is_empty() {
            message["tool_calls"] = reply
                .tool_calls
                .iter()
                .map(|(id, name, arguments)| {
                    json!({
                        "id": id,
                        "type": "function",
                        "function": { "name": name, "arguments": arguments },
                    })
                })
                .collect();
        }
        let finish_reason =
            reply.finish_reason.as_deref().unwrap_or(if reply.tool_calls.is_empty() { "stop" } else { "tool_calls" });
        let mut completion = json!({
            "id": completion_id(ctx),
            "object": "chat.completion",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason }],
        });
        if let Some(usage) = reply.usage {
            completion["usage"] = json!(UsageJson::from(usage));
        }
        completion
    }

    fn error_body(kind: ErrorKind, message: &str, code: Option<&str>) -> Value {
        let (kind, kind_code) = crate::api::openai_error_type(kind);
        let mut error = json!({ "message": message, "type": kind });
        if let Some(code) = code.or(kind_code) {
            error["code"] = json!(code);
        }
        json!({ "error": error })
    }

    fn prompt(body: &Value) -> crate::count::Prompt {
        crate::prompt::openai_chat(body)
    }

    fn conversation_tail(body: &Value) -> ConversationTail {
        let messages = body.get("messages").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        if let Some(last) = messages.last()
            && role(last) == Some("tool")
        {
            let call_id = last.get("tool_call_id").and_then(Value::as_str);
            let name = last
                .get("name")
                .and_then(Value::as_str)
                .or_else(|| call_id.and_then(|id| tool_name_for_call(messages, id)))
                .map(str::to_owned);
            return ConversationTail::ToolResult { name, content: content_text(last) };
        }
        messages
            .iter()
            .rev()
            .find(|message| role(message) == Some("user"))
            .map_or(ConversationTail::Empty, |message| ConversationTail::User(content_text(message)))
    }
}

/// The reasoning efforts OpenAI takes.
const EFFORTS: &[&str] = &["minimal", "low", "medium", "high"];

/// What OpenAI would refuse before answering: (message, param, code).
fn refusal(body: &Value) -> Option<(String, &'static str, Option<&'static str>)> {
    if let Some(effort) = body.get("reasoning_effort")
        && !effort.as_str().is_some_and(|e| EFFORTS.contains(&e))
    {
        let shown = effort.as_str().map_or_else(|| effort.to_string(), |e| format!("'{e}'"));
        let message = format!("Invalid value: {shown}. Supported values are: 'minimal', 'low', 'medium', and 'high'.");
        return Some((message, "reasoning_effort", Some("invalid_value")));
    }
    for param in ["max_tokens", "max_completion_tokens"] {
        match body.get(param).filter(|v| !v.is_null()) {
            None => {}
            Some(v) => match v.as_i64() {
                Some(n) if n >= 1 => {}
                Some(n) => {
                    let message = format!(
                        "Invalid '{param}': integer below minimum value. Expected a value >= 1, but got {n} instead."
                    );
                    return Some((message, param, Some("integer_below_min_value")));
                }
                None => {
                    let message = format!("Invalid type for '{param}': expected an integer, but got {v} instead.");
                    return Some((message, param, Some("invalid_type")));
                }
            },
        }
    }
    if let Some(message) = crate::api::too_many_tools(body) {
        return Some((message, "tools", Some("array_above_max_length")));
    }
    let set = |param: &str| body.get(param).is_some_and(|v| !v.is_null());
    if set("max_tokens") && set("max_completion_tokens") {
        let message = "max_tokens and max_completion_tokens cannot both be set. Use max_completion_tokens.";
        return Some((message.to_owned(), "max_tokens", None));
    }
    None
}

/// `route`, refusing what OpenAI refuses (see the module docs) with its error shape, before the
/// request is recorded or consumes a reply; a body that is not JSON is left to the handler.
pub(crate) fn strict<S: Clone + Send + Sync + 'static>(route: MethodRouter<S>) -> MethodRouter<S> {
    route.layer(axum::middleware::from_fn(refuse))
}

async fn refuse(request: Request, next: Next) -> Response {
    crate::api::refuse_with(request, next, |_, json| {
        let (message, param, code) =
            refusal(json).map(|(m, p, c)| (m, p.to_owned(), c)).or_else(|| crate::parts::chat_refusal(json))?;
        Some(json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}))
    })
    .await
}

fn completion_id(ctx: &ResponseContext) -> String {
    format!("chatcmpl-mock-{}", ctx.request_number)
}

fn role(message: &Value) -> Option<&str> {
    message.get("role").and_then(Value::as_str)
}

/// The text of a message whose content is a string or an array of content parts.
fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// The function name of the assistant tool call with id `call_id`, since tool messages usually
/// carry only the id.
fn tool_name_for_call<'a>(messages: &'a [Value], call_id: &str) -> Option<&'a str> {
    messages
        .iter()
        .rev()
        .filter_map(|message| message.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .find(|call| call.get("id").and_then(Value::as_str) == Some(call_id))
        .and_then(|call| call.pointer("/function/name"))
        .and_then(Value::as_str)
}

/// Streams one reply as `chat.completion.chunk` events.
#[derive(Debug)]
pub(crate) struct ChunkEncoder {
    ctx: ResponseContext,
    id: String,
    role_sent: bool,
    reasoning_field: ReasoningField,
    next_tool_index: usize,
    text_chunk_chars: Option<usize>,
    args_chunk_chars: usize,
}

impl ChunkEncoder {
    fn chunk<'a>(&'a self, choices: &'a [ChoiceJson<'a>], usage: Option<UsageJson>) -> ChunkJson<'a> {
        ChunkJson {
            id: &self.id,
            object: "chat.completion.chunk",
            created: self.ctx.created,
            model: &self.ctx.model,
            choices,
            usage,
        }
    }

    fn delta(&mut self, events: &mut Events, mut delta: DeltaJson<'_>) {
        if !self.role_sent {
            self.role_sent = true;
            delta.role = Some("assistant");
        }
        let choices = [ChoiceJson { index: 0, delta, finish_reason: None }];
        events.data_json(&self.chunk(&choices, None));
    }

    fn tool_fragment(&mut self, events: &mut Events, index: usize, first: Option<(&str, &str)>, arguments: &str) {
        let (id, name) = first.unzip();
        let call =
            ToolCallJson { index, id, kind: first.map(|_| "function"), function: FunctionJson { name, arguments } };
        self.delta(events, DeltaJson { tool_calls: Some([call]), ..DeltaJson::default() });
    }

    fn take_tool_indices(&mut self, count: usize) -> usize {
        let first = self.next_tool_index;
        self.next_tool_index += count;
        first
    }
}

impl StepEncoder for ChunkEncoder {
    fn encode(&mut self, step: &Step, events: &mut Events) {
        match step {
            Step::Text { text } => {
                for piece in char_chunks(text, self.text_chunk_chars) {
                    let delta = DeltaJson { content: Some(piece), ..DeltaJson::default() };
                    self.delta(events, delta);
                }
            }
            Step::Reasoning { text } => {
                for piece in char_chunks(text, self.text_chunk_chars) {
                    let delta = match self.reasoning_field {
                        ReasoningField::ReasoningContent => {
                            DeltaJson { reasoning_content: Some(piece), ..DeltaJson::default() }
                        }
                        ReasoningField::Reasoning => DeltaJson { reasoning: Some(piece), ..DeltaJson::default() },
                    };
                    self.delta(events, delta);
                }
            }
            Step::ToolCall { id, name, arguments } => {
                let index = self.take_tool_indices(1);
                let mut first = Some((id.as_str(), name.as_str()));
                for piece in char_chunks(arguments, Some(self.args_chunk_chars)) {
                    self.tool_fragment(events, index, first.take(), piece);
                }
            }
            Step::ParallelToolCalls { calls } => {
                let base = self.take_tool_indices(calls.len());
                let mut fragments: Vec<_> = calls
                    .iter()
                    .map(|(id, name, arguments)| {
                        let pieces = char_chunks(arguments, Some(self.args_chunk_chars));
                        (Some((id.as_str(), name.as_str())), pieces)
                    })
                    .collect();
                // Round-robin: one fragment of each unfinished call per round.
                loop {
                    let mut sent = false;
                    for (offset, (first, pieces)) in fragments.iter_mut().enumerate() {
                        if let Some(piece) = pieces.next() {
                            self.tool_fragment(events, base + offset, first.take(), piece);
                            sent = true;
                        }
                    }
                    if !sent {
                        break;
                    }
                }
            }
            Step::Usage { prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens } => {
                let usage = UsageJson::from(Usage {
                    prompt_tokens: *prompt_tokens,
                    completion_tokens: *completion_tokens,
                    reasoning_tokens: *reasoning_tokens,
                    cached_tokens: *cached_tokens,
                });
                events.data_json(&self.chunk(&[], Some(usage)));
            }
            Step::Finish { reason } => {
                let choices = [ChoiceJson { index: 0, delta: DeltaJson::default(), finish_reason: Some(reason) }];
                events.data_json(&self.chunk(&choices, None));
            }
            Step::Done => events.raw(b"data: [DONE]\n\n"),
            Step::ErrorObject { message, code } => {
                let error =
                    ErrorEventJson { error: ErrorJson { message, kind: "server_error", code: code.as_deref() } };
                events.data_json(&error);
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

/// Splits `text` into pieces of `size` characters (never inside a character, since each piece
/// must be a valid JSON string); `None` or 0 yields the whole text. Always yields at least one
/// piece so an empty string still produces one (empty) delta.
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

// Borrowing serialization structs: each event is written straight into the batch buffer without
// building a `serde_json::Value` or any intermediate strings.

#[derive(Serialize)]
struct ChunkJson<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: &'a [ChoiceJson<'a>],
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<UsageJson>,
}

#[derive(Serialize)]
struct ChoiceJson<'a> {
    index: u32,
    delta: DeltaJson<'a>,
    finish_reason: Option<&'a str>,
}

#[derive(Default, Serialize)]
struct DeltaJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<[ToolCallJson<'a>; 1]>,
}

#[derive(Serialize)]
struct ToolCallJson<'a> {
    index: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    function: FunctionJson<'a>,
}

#[derive(Serialize)]
struct FunctionJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
    arguments: &'a str,
}

#[derive(Serialize)]
struct UsageJson {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
    completion_tokens_details: CompletionDetailsJson,
    prompt_tokens_details: PromptDetailsJson,
}

#[derive(Serialize)]
struct CompletionDetailsJson {
    reasoning_tokens: u64,
}

#[derive(Serialize)]
struct PromptDetailsJson {
    cached_tokens: u64,
}

impl From<Usage> for UsageJson {
    fn from(usage: Usage) -> Self {
        Self {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            total_tokens: usage.prompt_tokens + usage.completion_tokens,
            completion_tokens_details: CompletionDetailsJson { reasoning_tokens: usage.reasoning_tokens },
            prompt_tokens_details: PromptDetailsJson { cached_tokens: usage.cached_tokens },
        }
    }
}

#[derive(Serialize)]
struct ErrorEventJson<'a> {
    error: ErrorJson<'a>,
}

#[derive(Serialize)]
struct ErrorJson<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    code: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_tools_than_openai_takes_are_refused_in_its_words() {
        let tools: Vec<Value> =
            (0..129).map(|i| json!({"type": "function", "function": {"name": format!("t{i}")}})).collect();
        let (message, param, code) = refusal(&json!({"model": "m", "tools": tools})).unwrap();
        assert_eq!((param, code), ("tools", Some("array_above_max_length")));
        assert!(message.contains("maximum length 128, but got an array with length 129"), "{message}");
        assert!(refusal(&json!({"model": "m", "tools": tools[..128]})).is_none());
    }

    #[test]
    fn char_chunks_respects_character_boundaries() {
        let pieces: Vec<_> = char_chunks("héllo wörld", Some(3)).collect();
        assert_eq!(pieces, ["hél", "lo ", "wör", "ld"]);
        assert_eq!(char_chunks("", Some(3)).collect::<Vec<_>>(), [""]);
        assert_eq!(char_chunks("abc", None).collect::<Vec<_>>(), ["abc"]);
        assert_eq!(char_chunks("abc", Some(0)).collect::<Vec<_>>(), ["abc"]);
    }

    #[test]
    fn tail_finds_tool_name_from_the_assistant_call() {
        let body = json!({"messages": [
            {"role": "user", "content": "what time is it"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "12:00"},
        ]});
        assert_eq!(
            OpenAiChat::conversation_tail(&body),
            ConversationTail::ToolResult { name: Some("get_time".to_owned()), content: "12:00".to_owned() }
        );
    }

    #[test]
    fn tail_reads_content_parts() {
        let body = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        ]});
        assert_eq!(OpenAiChat::conversation_tail(&body), ConversationTail::User("a\nb".to_owned()));
    }
}
