//! The OpenAI Responses wire format (`POST /v1/responses`).
//!
//! Streams typed events (`event: <type>` + `data: {"type": <type>, "sequence_number": n, ...}`):
//! `response.created`, then one output item per run of `Text` steps (a `message` item whose
//! `output_text` arrives as `response.output_text.delta`), of `Reasoning` steps (a `reasoning`
//! item with a summary, `response.reasoning_summary_text.delta`) and per tool call (a
//! `function_call` item whose arguments arrive as `response.function_call_arguments.delta`
//! pieces, then `.done` and the item's `response.output_item.done`), and at `Done` the terminal
//! event: `response.completed`, or `response.incomplete` when the scripted finish was `length`
//! (`max_output_tokens`) or `content_filter`. Usage goes in the terminal event's response.
//!
//! Requests are checked like the real API does where that is cheap, with what the server
//! remembers of the responses it issued ([`ResponseStore`]): no `model`, more than
//! [`crate::api::OPENAI_MAX_TOOLS`] tools, an invalid
//! `reasoning.effort` or `max_output_tokens`, an empty input text, a `previous_response_id` that
//! names no stored response, a `function_call_output` whose `call_id` no earlier `function_call`
//! item and no response of the chain has, and a `reasoning` item without an id, with an
//! `encrypted_content` the mock did not issue for it (see
//! [`crate::signatures::encrypted_content`]) or, without one, that no stored response output is a
//! 400 in OpenAI's error shape.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::MethodRouter;
use serde_json::{Value, json};

use crate::api::{Assembled, ConversationTail, ErrorKind, ResponseContext, Usage, WireApi};
use crate::script::{Step, StreamOptions};
use crate::signatures::encrypted_content;
use crate::sse::{Events, StepEncoder};

/// Argument fragment size when the script does not set one, as for OpenAI Chat.
const DEFAULT_ARGS_CHUNK_CHARS: usize = 8;

/// Marker type for the Responses API.
#[derive(Debug)]
pub(crate) struct Responses;

/// What the server remembers of the responses it issued, as the real API stores them: enough to
/// check `previous_response_id`, the `function_call_output`s answering calls of that chain, and
/// reasoning items sent back by id only.
#[derive(Debug, Default)]
pub(crate) struct ResponseStore {
    responses: Mutex<HashMap<String, Issued>>,
}

/// One issued response.
#[derive(Clone, Debug)]
struct Issued {
    /// False when the request had `"store": false`: the response cannot be chained onto and its
    /// items cannot be referenced by id.
    stored: bool,
    /// The request's `previous_response_id`.
    previous: Option<String>,
    /// The `call_id`s of its `function_call` items.
    call_ids: Vec<String>,
    /// The ids of its `reasoning` items.
    reasoning_ids: Vec<String>,
}

impl ResponseStore {
    /// A panicking test thread must not take the server down with a poisoned lock.
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Issued>> {
        self.responses.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The call ids output by `id` and the responses it chains onto, or `None` when `id` is
    /// unknown or was not stored.
    fn chain_call_ids(&self, id: &str) -> Option<Vec<String>> {
        let responses = self.lock();
        let first = responses.get(id).filter(|r| r.stored)?;
        let mut ids = first.call_ids.clone();
        let mut next = first.previous.clone();
        // A chain cannot loop (a response only names an earlier one), but the bound costs nothing.
        for _ in 0..responses.len() {
            let Some(response) = next.and_then(|previous| responses.get(&previous)) else { break };
            ids.extend(response.call_ids.iter().cloned());
            next = response.previous.clone();
        }
        Some(ids)
    }

    /// Whether `id` is a reasoning item of a stored response.
    fn stored_reasoning(&self, id: &str) -> bool {
        self.lock().values().any(|r| r.stored && r.reasoning_ids.iter().any(|i| i == id))
    }
}

fn response_id(ctx: &ResponseContext) -> String {
    format!("resp_mock_{}", ctx.request_number)
}

/// OpenAI counts cached input inside `input_tokens` and reasoning inside `output_tokens`, as the
/// script does.
fn usage_json(usage: Usage) -> Value {
    json!({
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    })
}

/// Why a response is incomplete, for the scripted finish reasons that make it so.
fn incomplete_reason(finish: Option<&str>) -> Option<&'static str> {
    match finish? {
        "length" => Some("max_output_tokens"),
        "content_filter" => Some("content_filter"),
        _ => None,
    }
}

fn response_object(ctx: &ResponseContext, output: Vec<Value>, finish: Option<&str>, usage: Option<Usage>) -> Value {
    let incomplete = incomplete_reason(finish);
    json!({
        "id": response_id(ctx),
        "object": "response",
        "created_at": ctx.created,
        "status": if incomplete.is_some() { "incomplete" } else { "completed" },
        "incomplete_details": incomplete.map(|reason| json!({"reason": reason})),
        "model": ctx.model,
        "output": output,
        "usage": usage.map(usage_json),
    })
}

fn message_item(id: &str, text: &str, status: &str) -> Value {
    let content = if status == "completed" {
        json!([{"type": "output_text", "text": text, "annotations": []}])
    } else {
        json!([])
    };
    json!({"type": "message", "id": id, "status": status, "role": "assistant", "content": content})
}

/// A reasoning item; with `encrypted`, finished items carry their `encrypted_content`.
fn reasoning_item(id: &str, summary: &str, encrypted: bool) -> Value {
    let parts = if summary.is_empty() { json!([]) } else { json!([{"type": "summary_text", "text": summary}]) };
    let mut item = json!({"type": "reasoning", "id": id, "summary": parts});
    if encrypted {
        item["encrypted_content"] = json!(encrypted_content(id, summary));
    }
    item
}

fn call_item(item_id: &str, call_id: &str, name: &str, arguments: &str, status: &str) -> Value {
    json!({"type": "function_call", "id": item_id, "call_id": call_id, "name": name, "arguments": arguments, "status": status})
}

impl WireApi for Responses {
    const CONTINUES: bool = true;
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
            sequence: 0,
            started: false,
            open: None,
            output: Vec::new(),
            finish: None,
            usage: None,
            text_chunk_chars: options.text_chunk_chars,
            args_chunk_chars: options.args_chunk_chars.unwrap_or(DEFAULT_ARGS_CHUNK_CHARS),
        }
    }

    fn completion(ctx: &ResponseContext, reply: &Assembled, _options: &StreamOptions) -> Value {
        let n = ctx.request_number;
        let mut output = Vec::new();
        if !reply.reasoning.is_empty() {
            output.push(reasoning_item(&format!("rs_mock_{n}_0"), &reply.reasoning, ctx.encrypted_reasoning));
        }
        if !reply.text.is_empty() {
            output.push(message_item(&format!("msg_mock_{n}_1"), &reply.text, "completed"));
        }
        for (i, (id, name, arguments)) in reply.tool_calls.iter().enumerate() {
            output.push(call_item(&format!("fc_mock_{n}_{}", i + 2), id, name, arguments, "completed"));
        }
        response_object(ctx, output, reply.finish_reason.as_deref(), reply.usage)
    }

    fn error_body(kind: ErrorKind, message: &str, code: Option<&str>) -> Value {
        let (kind, kind_code) = crate::api::openai_error_type(kind);
        json!({"error": {"message": message, "type": kind, "param": null, "code": code.or(kind_code)}})
    }

    fn remember(store: &ResponseStore, ctx: &ResponseContext, body: &Value, steps: &[Step], options: &StreamOptions) {
        // A failed or cut response is not something a client can chain onto.
        if steps.iter().any(|s| matches!(s, Step::ErrorObject { .. } | Step::Drop | Step::Stall)) {
            return;
        }
        let output = if Self::wants_stream(body) {
            streamed_output(ctx, options, steps)
        } else {
            Self::completion(ctx, &Assembled::from_steps(steps), options)["output"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        let ids = |kind: &str, key: &str| -> Vec<String> {
            output.iter().filter(|i| i["type"] == kind).filter_map(|i| i[key].as_str().map(str::to_owned)).collect()
        };
        let issued = Issued {
            stored: body.get("store") != Some(&Value::Bool(false)),
            previous: body.get("previous_response_id").and_then(Value::as_str).map(str::to_owned),
            call_ids: ids("function_call", "call_id"),
            reasoning_ids: ids("reasoning", "id"),
        };
        store.lock().insert(response_id(ctx), issued);
    }

    fn prompt(body: &Value) -> crate::count::Prompt {
        crate::prompt::openai_responses(body)
    }

    fn continues(body: &Value) -> Option<u64> {
        body["previous_response_id"].as_str()?.strip_prefix("resp_mock_")?.parse().ok()
    }

    fn context_exceeded(_prompt: u64, _window: u64) -> String {
        "Your input exceeds the context window of this model. Please adjust your input and try again.".to_owned()
    }

    fn conversation_tail(body: &Value) -> ConversationTail {
        let items = match body.get("input") {
            Some(Value::String(text)) => return ConversationTail::User(text.clone()),
            Some(Value::Array(items)) => items.as_slice(),
            _ => &[],
        };
        if let Some(last) = items.last().filter(|i| i["type"] == "function_call_output") {
            let name = items
                .iter()
                .find(|i| i["type"] == "function_call" && i["call_id"] == last["call_id"])
                .and_then(|i| i["name"].as_str().map(str::to_owned));
            return ConversationTail::ToolResult { name, content: last["output"].as_str().unwrap_or("").to_owned() };
        }
        items
            .iter()
            .rev()
            .find(|i| i["role"] == "user")
            .map_or(ConversationTail::Empty, |m| ConversationTail::User(texts(&m["content"]).join("\n")))
    }
}

/// The texts of a message content: a string, or parts with `text`.
fn texts(content: &Value) -> Vec<&str> {
    match content {
        Value::String(text) => vec![text.as_str()],
        Value::Array(parts) => parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect(),
        _ => Vec::new(),
    }
}

/// Why the real API would refuse a request, in its words.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Refusal {
    message: String,
    param: Option<String>,
    code: Option<&'static str>,
}

impl Refusal {
    fn new(message: impl Into<String>, param: impl Into<String>) -> Self {
        Self { message: message.into(), param: Some(param.into()), code: None }
    }

    fn code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }
}

/// The reasoning efforts the API takes.
const EFFORTS: &[&str] = &["minimal", "low", "medium", "high"];

/// What the real API would refuse before answering, checked against what the server remembers of
/// the responses it issued.
fn refusal(body: &Value, store: &ResponseStore) -> Option<Refusal> {
    if !body.get("model").is_some_and(Value::is_string) {
        return Some(Refusal::new("Missing required parameter: 'model'.", "model").code("missing_required_parameter"));
    }
    if let Some(message) = crate::api::too_many_tools(body) {
        return Some(Refusal::new(message, "tools").code("array_above_max_length"));
    }
    if let Some(effort) = body.pointer("/reasoning/effort")
        && !effort.as_str().is_some_and(|e| EFFORTS.contains(&e))
    {
        let shown = effort.as_str().map_or_else(|| effort.to_string(), |e| format!("'{e}'"));
        return Some(
            Refusal::new(
                format!("Invalid value: {shown}. Supported values are: 'minimal', 'low', 'medium', and 'high'."),
                "reasoning.effort",
            )
            .code("invalid_value"),
        );
    }
    if let Some(max) = body.get("max_output_tokens") {
        match max.as_i64() {
            Some(n) if n >= 16 => {}
            Some(n) => {
                return Some(
                    Refusal::new(
                        format!(
                            "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got {n} instead."
                        ),
                        "max_output_tokens",
                    )
                    .code("integer_below_min_value"),
                );
            }
            None => {
                return Some(
                    Refusal::new("Invalid type for 'max_output_tokens': expected an integer.", "max_output_tokens")
                        .code("invalid_type"),
                );
            }
        }
    }
    let mut calls: Vec<String> = Vec::new();
    if let Some(previous) = body.get("previous_response_id").filter(|p| !p.is_null()) {
        let id = previous.as_str().unwrap_or("");
        let Some(chain) = store.chain_call_ids(id) else {
            return Some(
                Refusal::new(format!("Previous response with id '{id}' not found."), "previous_response_id")
                    .code("previous_response_not_found"),
            );
        };
        calls = chain;
    }
    let items = body.get("input").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    for (i, item) in items.iter().enumerate() {
        match item["type"].as_str() {
            Some("function_call") => calls.extend(item["call_id"].as_str().map(str::to_owned)),
            Some("function_call_output") => {
                let id = item["call_id"].as_str().unwrap_or("");
                if !calls.iter().any(|c| c == id) {
                    return Some(Refusal::new(
                        format!("No tool call found for function call output with call_id {id}."),
                        "input",
                    ));
                }
            }
            Some("reasoning") => {
                let Some(id) = item["id"].as_str() else {
                    return Some(
                        Refusal::new(format!("Missing required parameter: 'input[{i}].id'."), format!("input[{i}].id"))
                            .code("missing_required_parameter"),
                    );
                };
                match item.get("encrypted_content").filter(|e| !e.is_null()) {
                    Some(content) => {
                        let summary = texts(&item["summary"]).concat();
                        if content.as_str() != Some(encrypted_content(id, &summary).as_str()) {
                            return Some(Refusal {
                                message: format!("The encrypted content for item {id} could not be verified."),
                                param: None,
                                code: Some("invalid_encrypted_content"),
                            });
                        }
                    }
                    None if !store.stored_reasoning(id) => {
                        return Some(Refusal::new(
                            format!(
                                "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
                            ),
                            "input",
                        ));
                    }
                    None => {}
                }
            }
            _ if item.get("role").is_some() => {
                if let Value::Array(parts) = &item["content"] {
                    for (j, part) in parts.iter().enumerate() {
                        if part["text"].as_str().is_some_and(str::is_empty) {
                            return Some(Refusal::new(
                                format!(
                                    "Invalid 'input[{i}].content[{j}].text': empty string. Expected a string with minimum length 1, but got an empty string instead."
                                ),
                                format!("input[{i}].content[{j}].text"),
                            ));
                        }
                    }
                } else if item["content"].as_str().is_some_and(str::is_empty) {
                    return Some(Refusal::new(
                        format!("Invalid 'input[{i}].content': empty string."),
                        format!("input[{i}].content"),
                    ));
                }
            }
            _ => {}
        }
    }
    None
}

/// `route`, refusing what the real API refuses (see the module docs) with its error shape, before
/// the request is recorded or consumes a reply; a body that is not JSON is left to the handler.
/// `store` is the server's memory of the responses it issued.
pub(crate) fn strict<S: Clone + Send + Sync + 'static>(
    store: Arc<ResponseStore>,
    route: MethodRouter<S>,
) -> MethodRouter<S> {
    route.layer(axum::middleware::from_fn_with_state(store, refuse))
}

async fn refuse(State(store): State<Arc<ResponseStore>>, request: Request, next: Next) -> Response {
    crate::api::refuse_with(request, next, |_, json| {
        let Refusal { message, param, code } = refusal(json, &store).or_else(|| {
            let (message, param, code) = crate::parts::responses_refusal(json)?;
            Some(Refusal { message, param: Some(param), code })
        })?;
        let mut body = Responses::error_body(ErrorKind::InvalidRequest, &message, code);
        body["error"]["param"] = json!(param);
        Some(body)
    })
    .await
}

/// The output items a streamed reply of `steps` ends with, as the encoder writes them.
fn streamed_output(ctx: &ResponseContext, options: &StreamOptions, steps: &[Step]) -> Vec<Value> {
    let mut encoder = Responses::encoder(ctx.clone(), options);
    let mut scratch = Events::default();
    // `Done` would hand the items to the terminal event; closing the open item is enough.
    for step in steps.iter().filter(|s| !matches!(s, Step::Done)) {
        encoder.encode(step, &mut scratch);
    }
    encoder.close(&mut scratch);
    encoder.output
}

/// The message or reasoning item being written: its kind, output index, item id and text so far.
#[derive(Debug)]
struct OpenItem {
    reasoning: bool,
    index: usize,
    id: String,
    text: String,
}

/// Streams one reply as Responses events.
#[derive(Debug)]
pub(crate) struct EventEncoder {
    ctx: ResponseContext,
    sequence: u64,
    started: bool,
    open: Option<OpenItem>,
    /// Finished output items, for the terminal event's response.
    output: Vec<Value>,
    finish: Option<String>,
    usage: Option<Usage>,
    text_chunk_chars: Option<usize>,
    args_chunk_chars: usize,
}

impl EventEncoder {
    fn event(&mut self, events: &mut Events, mut data: Value) {
        data["sequence_number"] = json!(self.sequence);
        self.sequence += 1;
        let name = data["type"].as_str().unwrap_or("message").to_owned();
        events.raw(format!("event: {name}\ndata: {data}\n\n").as_bytes());
    }

    fn start(&mut self, events: &mut Events) {
        if self.started {
            return;
        }
        self.started = true;
        let mut response = response_object(&self.ctx, Vec::new(), None, None);
        response["status"] = json!("in_progress");
        self.event(events, json!({"type": "response.created", "response": response}));
    }

    fn close(&mut self, events: &mut Events) {
        let Some(OpenItem { reasoning, index, id, text }) = self.open.take() else { return };
        let item = if reasoning {
            self.event(
                events,
                json!({"type": "response.reasoning_summary_text.done", "item_id": id, "output_index": index,
                    "summary_index": 0, "text": text}),
            );
            reasoning_item(&id, &text, self.ctx.encrypted_reasoning)
        } else {
            self.event(
                events,
                json!({"type": "response.output_text.done", "item_id": id, "output_index": index,
                    "content_index": 0, "text": text}),
            );
            message_item(&id, &text, "completed")
        };
        self.event(events, json!({"type": "response.output_item.done", "output_index": index, "item": item}));
        self.output.push(item);
    }

    /// Writes `text` into an open item of the kind, starting one if needed.
    fn write(&mut self, events: &mut Events, reasoning: bool, text: &str) {
        if text.is_empty() {
            return;
        }
        self.start(events);
        if self.open.as_ref().is_none_or(|o| o.reasoning != reasoning) {
            self.close(events);
            let index = self.output.len();
            let n = self.ctx.request_number;
            let id = if reasoning { format!("rs_mock_{n}_{index}") } else { format!("msg_mock_{n}_{index}") };
            let item = if reasoning { reasoning_item(&id, "", false) } else { message_item(&id, "", "in_progress") };
            self.event(events, json!({"type": "response.output_item.added", "output_index": index, "item": item}));
            self.open = Some(OpenItem { reasoning, index, id, text: String::new() });
        }
        let (index, id) = {
            let open = self.open.as_mut().expect("an item was just opened");
            open.text.push_str(text);
            (open.index, open.id.clone())
        };
        for piece in char_chunks(text, self.text_chunk_chars) {
            let data = if reasoning {
                json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": index,
                    "summary_index": 0, "delta": piece})
            } else {
                json!({"type": "response.output_text.delta", "item_id": id, "output_index": index,
                    "content_index": 0, "delta": piece})
            };
            self.event(events, data);
        }
    }

    fn tool_call(&mut self, events: &mut Events, call_id: &str, name: &str, arguments: &str) {
        self.start(events);
        self.close(events);
        let index = self.output.len();
        let id = format!("fc_mock_{}_{index}", self.ctx.request_number);
        self.event(
            events,
            json!({"type": "response.output_item.added", "output_index": index,
                "item": call_item(&id, call_id, name, "", "in_progress")}),
        );
        for piece in char_chunks(arguments, Some(self.args_chunk_chars)) {
            if !piece.is_empty() {
                self.event(
                    events,
                    json!({"type": "response.function_call_arguments.delta", "item_id": id, "output_index": index,
                        "delta": piece}),
                );
            }
        }
        self.event(
            events,
            json!({"type": "response.function_call_arguments.done", "item_id": id, "output_index": index,
                "arguments": arguments}),
        );
        let item = call_item(&id, call_id, name, arguments, "completed");
        self.event(events, json!({"type": "response.output_item.done", "output_index": index, "item": item.clone()}));
        self.output.push(item);
    }
}

impl StepEncoder for EventEncoder {
    fn encode(&mut self, step: &Step, events: &mut Events) {
        match step {
            Step::Text { text } => self.write(events, false, text),
            Step::Reasoning { text } => self.write(events, true, text),
            Step::ToolCall { id, name, arguments } => self.tool_call(events, id, name, arguments),
            // The API writes one output item after another, never interleaved.
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
            }
            Step::Finish { reason } => {
                self.start(events);
                self.close(events);
                self.finish = Some(reason.clone());
            }
            Step::Done => {
                self.start(events);
                self.close(events);
                let output = std::mem::take(&mut self.output);
                let response = response_object(&self.ctx, output, self.finish.as_deref(), self.usage);
                let kind =
                    if response["status"] == "incomplete" { "response.incomplete" } else { "response.completed" };
                self.event(events, json!({"type": kind, "response": response}));
            }
            // Before the response exists the API reports a plain `error` event; once it does, the
            // response fails.
            Step::ErrorObject { message, code } => {
                let code = code.as_deref().unwrap_or("server_error");
                if self.started {
                    let mut response = response_object(&self.ctx, std::mem::take(&mut self.output), None, None);
                    response["status"] = json!("failed");
                    response["error"] = json!({"code": code, "message": message});
                    self.event(events, json!({"type": "response.failed", "response": response}));
                } else {
                    self.event(events, json!({"type": "error", "code": code, "message": message, "param": null}));
                }
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

    /// The events the server streams for `steps` on `POST /v1/responses`, as (name, data).
    async fn encode(steps: &[Step], options: &StreamOptions) -> Vec<(String, Value)> {
        let reply = crate::Reply::Stream { steps: steps.to_vec(), options: options.clone() };
        let server = crate::MockServer::start(crate::Script::new([reply])).await;
        let response = reqwest::Client::new()
            .post(format!("{}/responses", server.base_url()))
            .json(&json!({"model":"gpt-test","stream":true,
                "input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let text = response.text().await.unwrap();
        let events: Vec<(String, Value)> = text
            .split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| {
                let (name, data) = e.split_once('\n').unwrap();
                let name = name.strip_prefix("event: ").unwrap().to_owned();
                let data: Value = serde_json::from_str(data.strip_prefix("data: ").unwrap()).unwrap();
                assert_eq!(data["type"], name.as_str(), "the event name is the data's type");
                (name, data)
            })
            .collect();
        for (i, (_, data)) in events.iter().enumerate() {
            assert_eq!(data["sequence_number"], i, "sequence numbers count the events");
        }
        events
    }

    #[tokio::test]
    async fn a_reply_is_one_item_per_text_reasoning_and_call_with_usage_in_the_completed_response() {
        let steps = [
            Step::Reasoning { text: "hm".into() },
            Step::text("Hi 🙂"),
            Step::text("!"),
            Step::tool_call("call_1", "get_time", r#"{"tz":"UTC"}"#),
            Step::finish("tool_calls"),
            Step::Usage { prompt_tokens: 10, completion_tokens: 5, reasoning_tokens: 2, cached_tokens: 4 },
            Step::Done,
        ];
        let events = encode(&steps, &StreamOptions { args_chunk_chars: Some(5), ..StreamOptions::default() }).await;
        let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.output_item.added",
                "response.reasoning_summary_text.delta",
                "response.reasoning_summary_text.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        assert_eq!(events[0].1["response"]["id"], "resp_mock_1");
        assert_eq!(events[8].1["text"], "Hi 🙂!");
        assert_eq!(events[10].1["item"]["call_id"], "call_1");
        assert_eq!(events[10].1["output_index"], 2);
        let args: String = events[11..14].iter().map(|(_, d)| d["delta"].as_str().unwrap().to_owned()).collect();
        assert_eq!(args, r#"{"tz":"UTC"}"#);
        assert_eq!(events[11].1["item_id"], events[10].1["item"]["id"]);
        let response = &events[16].1["response"];
        assert_eq!(response["status"], "completed");
        assert_eq!(response["output"].as_array().unwrap().len(), 3);
        assert_eq!(
            response["usage"],
            json!({"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":5,
                "output_tokens_details":{"reasoning_tokens":2},"total_tokens":15})
        );
    }

    #[tokio::test]
    async fn a_length_finish_is_an_incomplete_response_and_errors_are_error_or_failed_events() {
        let events = encode(&[Step::text("Once"), Step::finish("length"), Step::Done], &StreamOptions::default()).await;
        let (name, data) = events.last().unwrap();
        assert_eq!(name, "response.incomplete");
        assert_eq!(data["response"]["incomplete_details"]["reason"], "max_output_tokens");

        let error = Step::ErrorObject { message: "Overloaded".into(), code: None };
        let events = encode(std::slice::from_ref(&error), &StreamOptions::default()).await;
        assert_eq!(events[0].1["type"], "error");
        assert_eq!((&events[0].1["code"], &events[0].1["message"]), (&json!("server_error"), &json!("Overloaded")));

        let events = encode(&[Step::text("partial"), error], &StreamOptions::default()).await;
        let (name, data) = events.last().unwrap();
        assert_eq!(name, "response.failed");
        assert_eq!(data["response"]["error"], json!({"code":"server_error","message":"Overloaded"}));
    }

    #[test]
    fn requests_the_real_api_refuses_are_refused() {
        let store = ResponseStore::default();
        let refusal = |body: &Value| refusal(body, &store);
        let user = |t: &str| json!({"role":"user","content":[{"type":"input_text","text":t}]});
        let ok = json!({"model":"m","input":[user("hi"),
            {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
            {"type":"function_call_output","call_id":"c1","output":""}]});
        assert_eq!(refusal(&ok), None);
        assert!(refusal(&json!({"input":[user("hi")]})).unwrap().message.contains("'model'"));
        assert!(refusal(&json!({"model":"m","input":[user("")]})).unwrap().message.contains("empty string"));
        let orphan =
            json!({"model":"m","input":[user("hi"),{"type":"function_call_output","call_id":"c9","output":"x"}]});
        assert_eq!(refusal(&orphan).unwrap().param.as_deref(), Some("input"));
        let late = json!({"model":"m","input":[{"type":"function_call_output","call_id":"c1","output":"x"},
            {"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}]});
        assert!(refusal(&late).unwrap().message.contains("c1"), "the call must come before its output");
    }

    #[test]
    fn the_tail_names_the_tool_of_the_last_output() {
        let body = json!({"input":[
            {"role":"user","content":[{"type":"input_text","text":"what time is it"}]},
            {"type":"function_call","call_id":"c1","name":"get_time","arguments":"{}"},
            {"type":"function_call_output","call_id":"c1","output":"12:00"},
        ]});
        assert_eq!(
            Responses::conversation_tail(&body),
            ConversationTail::ToolResult { name: Some("get_time".into()), content: "12:00".into() }
        );
        assert_eq!(Responses::conversation_tail(&json!({"input":"hello"})), ConversationTail::User("hello".into()));
    }
}
