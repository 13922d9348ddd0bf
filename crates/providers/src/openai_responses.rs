//! The OpenAI Responses API (`POST {base}/responses`, streamed), kind `openai-responses`.
//!
//! Quirks handled here:
//! - The system prompt is `instructions` (sent on every request: a chained request does not
//!   inherit it); history is a flat list of `input` items: messages (`input_text` for the
//!   person, `output_text` for the model), each tool call a `function_call` item and each result
//!   a `function_call_output` item, in the order they happened. Blank texts are never sent (the
//!   API refuses empty ones).
//! - Tools are declared flat (`{type:function, name, description, parameters, strict}`). `strict`
//!   makes the API hold the model to the schema, but the API refuses a strict tool whose schema
//!   is not in its strict subset, so it is only set where [`strict_compatible`] says so.
//! - Options: `max_output_tokens` when the profile sets an output limit; `reasoning: {effort,
//!   summary: "auto"}` only when it sets a reasoning effort (models that do not reason refuse
//!   the field). `store` is sent only when the profile sets it (the API keeps responses by
//!   default).
//! - Provider state: each response leaves one [`ProviderState`] (api `openai-responses`, this
//!   endpoint's origin) whose data is
//!   `{"responseId": "resp_…", "stored": bool, "items": [...]}`: the response's id, whether it
//!   was asked for with `store` not false (so the API kept it), and its output items in order:
//!   `reasoning` items as the API returned them at `response.output_item.done` (`type`, `id`,
//!   `summary`, and `encrypted_content` when present), `message` items as `{type, id}` and
//!   `function_call` items as `{type, id, call_id}`. Each part is left out when the stream did
//!   not carry it.
//! - Chaining: when `store` is not false and the last assistant message of the history carries
//!   this endpoint's state of a stored response with an id (and every call it made is in that
//!   response), the request sends `previous_response_id` and only the items after that message
//!   (the results of its calls, the person's new message); the API holds the rest, reasoning
//!   included. Otherwise the whole history is sent.
//! - A whole history sends reasoning back: every assistant message with this endpoint's state
//!   gets its reasoning items in front of its message and `function_call` items, in the
//!   response's order, and those items carry their own ids (`msg_…`, `fc_…`), which is how the
//!   API pairs a reasoning item with the item that followed it. A reasoning item is sent only when
//!   the API can resolve it: with its `encrypted_content`, or by id when the response was stored
//!   and this request does not say `store: false`. With `store: false` the request asks for
//!   `include: ["reasoning.encrypted_content"]`, so responses carry what later requests need.
//! - A chained request the API refuses because it no longer has the previous response (HTTP
//!   400/404 `previous_response_not_found`: expired, deleted, another project's key) is sent once
//!   more with the whole history and no `previous_response_id`, inside this provider's stream and
//!   before any output, so the loop only sees the second response. That history sends reasoning
//!   back only where it is encrypted: what the API lost, it cannot resolve by id either. The
//!   refusal is recognized by its message (a [`ProviderError`] keeps no error code).
//! - The stream is typed events. Call arguments arrive as deltas keyed by the item id (with the
//!   output index as a fallback) and are complete at `function_call_arguments.done` or at the
//!   item's `output_item.done`, whichever comes first; the response's end is `response.completed`
//!   (or `response.incomplete`, whose reason `max_output_tokens` / `content_filter` becomes the
//!   stop reason `Length` / `ContentFilter`, or `response.failed`), which carry the usage.
//! - Errors use OpenAI's shape over HTTP; in the stream they come as an `error` event or inside a
//!   `response.failed` event, both classified by their code in `classify.rs`.

use crate::http_client::{self, ReqwestTransport};
use crate::openai::OpenAiConfig;
use crate::sse;
use futures::StreamExt;
use serde_json::{Value, json};
use std::collections::VecDeque;
use switchboard_core::provider::StopReason;
use switchboard_core::types::char_len;
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ProviderState, ProviderStream,
    ToolCall, ToolChoice, Usage,
};

/// The kind this module speaks, as its provider state is tagged.
const KIND: &str = "openai-responses";

/// The Responses API provider. It shares [`OpenAiConfig`] with the Chat provider: same base URL
/// and bearer key.
pub struct OpenAiResponses {
    config: OpenAiConfig,
    client: reqwest::Client,
    who: String,
    /// `store` as the profile sets it; `None` leaves the API's default (kept).
    store: Option<bool>,
    /// The endpoint's origin, which its provider state is tagged with.
    origin: String,
}

impl std::fmt::Debug for OpenAiResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiResponses").field("base_url", &self.config.base_url).finish_non_exhaustive()
    }
}

impl OpenAiResponses {
    /// A provider for `config`.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let (base, client) = http_client::endpoint(&config.base_url)?;
        let who = format!("The provider at {base}");
        let origin = http_client::origin(&base);
        Ok(Self { config: OpenAiConfig { base_url: base, ..config }, client, who, store: None, origin })
    }

    /// Sets `store` (whether the API keeps responses, which chaining needs).
    #[must_use]
    pub fn with_store(mut self, store: Option<bool>) -> Self {
        self.store = store;
        self
    }

    /// The models the server lists (`GET /models`), sorted: the same listing as Chat's.
    pub async fn models(&self) -> Result<Vec<String>, ProviderError> {
        crate::openai::list_models(&self.client, &self.config, &self.who).await
    }

    /// What a request's body depends on besides the request.
    fn target(&self) -> Target {
        Target { origin: self.origin.clone(), store: self.store, lost_responses: false }
    }
}

impl Provider for OpenAiResponses {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn list_models(&self) -> futures::future::BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(self.models())
    }

    fn stream(&self, request: ProviderRequest) -> ProviderStream {
        let connection = Connection {
            client: self.client.clone(),
            who: self.who.clone(),
            url: format!("{}/responses", self.config.base_url),
            auth: self.config.api_key.as_ref().map(|k| format!("Bearer {}", k.expose())),
            target: self.target(),
        };
        let target = &connection.target;
        match chain(&request, target) {
            None => connection.open(request_body(&request, target, None).to_string()),
            Some(chain) => {
                let chained = connection.open(request_body(&request, target, Some(&chain)).to_string());
                // Sent if the API lost the previous response; the reasoning of that chain, which
                // it likely lost too, goes back only where it is encrypted.
                let lost = Target { lost_responses: true, ..target.clone() };
                let whole = request_body(&request, &lost, None).to_string();
                with_fallback(chained, chain.previous_response_id, move || connection.open(whole))
            }
        }
    }
}

/// What one request needs to be sent, kept for a second attempt.
struct Connection {
    client: reqwest::Client,
    who: String,
    url: String,
    auth: Option<String>,
    target: Target,
}

impl Connection {
    fn open(&self, body: String) -> ProviderStream {
        let mut headers = vec![("Content-Type", "application/json"), ("Accept", "text/event-stream")];
        if let Some(auth) = &self.auth {
            headers.push(("Authorization", auth.as_str()));
        }
        let events = sse::post(ReqwestTransport::new(self.client.clone()), self.who.clone(), &self.url, &headers, body);
        let parser = EventParser::for_endpoint(&self.target.origin, self.target.store != Some(false));
        sse::parse(events, self.who.clone(), parser)
    }
}

/// `first` (a chained request), or, when it is refused because the API no longer has the previous
/// response and nothing but keep-alives came before, the stream `fallback` opens (the whole
/// history), once.
fn with_fallback(
    first: ProviderStream,
    previous_response_id: String,
    fallback: impl FnOnce() -> ProviderStream + Send + 'static,
) -> ProviderStream {
    futures::stream::unfold((first, Some((fallback, previous_response_id))), |(mut stream, mut fallback)| async move {
        loop {
            let item = stream.next().await?;
            match item {
                Err(e) if fallback.is_some() && previous_response_missing(&e) => {
                    let (open, previous_response_id) = fallback.take().expect("checked above");
                    tracing::debug!(
                        %previous_response_id,
                        error = %e.message,
                        "the Responses API no longer has the previous response; sending the whole history"
                    );
                    stream = open();
                }
                Ok(ProviderEvent::KeepAlive) => return Some((item, (stream, fallback))),
                // Output (or another error) came: from here on this is the answer.
                item => return Some((item, (stream, None))),
            }
        }
    })
    .boxed()
}

/// Whether `error` is the API's refusal of a `previous_response_id` it does not have (code
/// `previous_response_not_found`, "Previous response with id '…' not found.").
pub fn previous_response_missing(error: &ProviderError) -> bool {
    if !matches!(error.status, None | Some(400) | Some(404)) {
        return false;
    }
    let lower = error.message.to_ascii_lowercase();
    lower.contains("previous_response_not_found")
        || (lower.contains("previous response") && lower.contains("not found"))
}

/// What a request's body depends on besides the request: the endpoint's origin (whose provider
/// state it may send back) and `store` as the profile sets it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// The origin (`scheme://host[:port]`) of the endpoint.
    pub origin: String,
    /// `store` as the profile sets it; `None` leaves the API's default (kept).
    pub store: Option<bool>,
    /// Whether the API still has the stored responses the history names, so their reasoning
    /// items may go back by id alone; false after it said it lost the previous response (older
    /// ones are likelier gone still), when only encrypted reasoning goes back.
    pub lost_responses: bool,
}

/// A request chained onto an earlier response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    /// The response the request continues.
    pub previous_response_id: String,
    /// The index in the request's messages of the first message after that response's.
    pub from: usize,
}

/// The chain `request` can use (see the module docs), if any.
pub fn chain(request: &ProviderRequest, target: &Target) -> Option<Chain> {
    if target.store == Some(false) {
        return None;
    }
    let at = request.messages.iter().rposition(|m| matches!(m, Message::Assistant { .. }))?;
    let Message::Assistant { tool_calls, state, .. } = &request.messages[at] else { return None };
    let data = ProviderState::for_endpoint(state.as_ref(), KIND, &target.origin)?;
    if data["stored"] == false {
        return None;
    }
    let id = data["responseId"].as_str().filter(|id| !id.is_empty())?;
    // A call the response does not have (an id the parser had to invent) would have its result
    // refused: such a history goes whole.
    let items = data["items"].as_array().map_or(&[][..], Vec::as_slice);
    let known = |c: &ToolCall| items.iter().any(|i| i["type"] == "function_call" && i["call_id"] == c.id.as_str());
    if !tool_calls.iter().all(known) {
        return None;
    }
    let rest = &request.messages[at + 1..];
    let sends_something = rest.iter().any(|m| match m {
        Message::User { text } => !blank(text),
        _ => true,
    });
    sends_something.then(|| Chain { previous_response_id: id.to_owned(), from: at + 1 })
}

fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// Keywords outside the strict subset (anywhere in the schema).
const NOT_STRICT: &[&str] =
    &["oneOf", "allOf", "not", "if", "then", "else", "patternProperties", "dependentRequired", "dependentSchemas"];

/// Whether the API would accept `schema` with `strict: true`: its root is an object, every object
/// in it closes its properties (`additionalProperties: false`) and requires all of them, and it
/// uses no keyword outside the strict subset. A schema that fails this is sent with
/// `strict: false`, which the API takes as it is (the loop validates the arguments anyway).
pub fn strict_compatible(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object") && strict_node(schema)
}

fn strict_node(node: &Value) -> bool {
    let Some(map) = node.as_object() else {
        // `true`/`false` schemas are not in the subset; anything else is not a schema.
        return false;
    };
    if NOT_STRICT.iter().any(|k| map.contains_key(*k)) {
        return false;
    }
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => map.contains_key("properties"),
    };
    if is_object {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            return false;
        }
        let props = map.get("properties").and_then(Value::as_object);
        let required: Vec<&str> =
            map.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        if props.is_some_and(|p| p.keys().any(|k| !required.contains(&k.as_str()))) {
            return false;
        }
        if props.is_some_and(|p| !p.values().all(strict_node)) {
            return false;
        }
    }
    let children_ok = |key: &str| match map.get(key) {
        None => true,
        Some(Value::Array(list)) => list.iter().all(strict_node),
        Some(Value::Object(defs)) if key == "$defs" || key == "definitions" => defs.values().all(strict_node),
        Some(one) => strict_node(one),
    };
    ["items", "anyOf", "$defs", "definitions"].iter().all(|k| children_ok(k))
}

/// The JSON body of a streamed Responses request: the whole history, or with `chain` only what
/// follows the response it continues.
pub fn request_body(request: &ProviderRequest, target: &Target, chain: Option<&Chain>) -> Value {
    let from = chain.map_or(0, |c| c.from.min(request.messages.len()));
    let mut input = Vec::with_capacity(request.messages.len() - from);
    for m in &request.messages[from..] {
        match m {
            Message::User { text } => {
                if !blank(text) {
                    input.push(json!({"role": "user", "content": [{"type": "input_text", "text": text}]}));
                }
            }
            Message::Assistant { text, tool_calls, state } => {
                let data = ProviderState::for_endpoint(state.as_ref(), KIND, &target.origin);
                let by_id = target.store != Some(false) && !target.lost_responses;
                push_assistant(&mut input, text, tool_calls, data, by_id);
            }
            Message::Tool { call_id, content, .. } => {
                input.push(json!({"type": "function_call_output", "call_id": call_id, "output": content}));
            }
        }
    }
    let mut body = json!({
        "model": request.model,
        "input": input,
        "stream": true,
    });
    if let Some(store) = target.store {
        body["store"] = json!(store);
    }
    if target.store == Some(false) {
        // Nothing is kept: reasoning can only come back encrypted.
        body["include"] = json!(["reasoning.encrypted_content"]);
    }
    if let Some(chain) = chain {
        body["previous_response_id"] = json!(chain.previous_response_id);
    }
    if let Some(system) = request.system.as_deref().filter(|s| !blank(s)) {
        body["instructions"] = json!(system);
    }
    if let Some(max) = request.options.max_output_tokens {
        body["max_output_tokens"] = json!(max);
    }
    if let Some(effort) = request.options.reasoning_effort {
        body["reasoning"] = json!({"effort": effort.as_str(), "summary": "auto"});
    }
    if let Some(t) = request.options.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(p) = request.options.top_p {
        body["top_p"] = json!(p);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                let parameters = if t.parameters.is_object() {
                    t.parameters.clone()
                } else {
                    json!({"type": "object", "properties": {}})
                };
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "strict": strict_compatible(&parameters),
                    "parameters": parameters,
                })
            })
            .collect();
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            // OneOf offers exactly the forced tools, so "required" means "one of these".
            ToolChoice::Required | ToolChoice::OneOf(_) => json!("required"),
            ToolChoice::Named(name) => json!({"type": "function", "name": name}),
        };
        body["parallel_tool_calls"] = json!(true);
    }
    body
}

/// One assistant message's items. With its response's state, the reasoning items the API can
/// resolve go back in the response's order, and then the message and `function_call` items
/// carry their ids so the API can pair each reasoning item with the item that followed it;
/// without sendable reasoning they are plain items (an id without its reasoning item is refused).
fn push_assistant(input: &mut Vec<Value>, text: &str, tool_calls: &[ToolCall], data: Option<&Value>, by_id: bool) {
    let message = |id: Option<&str>| {
        let mut item = json!({"role": "assistant", "content": [{"type": "output_text", "text": text}]});
        if let Some(id) = id {
            item["id"] = json!(id);
        }
        item
    };
    let call = |c: &ToolCall, id: Option<&str>| {
        let arguments = if blank(&c.arguments) { "{}" } else { c.arguments.as_str() };
        let mut item = json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": arguments});
        if let Some(id) = id {
            item["id"] = json!(id);
        }
        item
    };
    let items = data.and_then(|d| d["items"].as_array()).map_or(&[][..], Vec::as_slice);
    let stored = data.is_some_and(|d| d["stored"] != false);
    // By id only when the API kept the response and may still have it (`by_id`: this request does
    // not say nothing is kept, and the API did not just say it lost a response).
    let sendable = |item: &Value| {
        item["type"] == "reasoning"
            && item["id"].is_string()
            && (item["encrypted_content"].is_string() || (stored && by_id))
    };
    let has_follower = !blank(text) || !tool_calls.is_empty();
    if !has_follower || !items.iter().any(sendable) {
        if !blank(text) {
            input.push(message(None));
        }
        input.extend(tool_calls.iter().map(|c| call(c, None)));
        return;
    }
    let mut text_sent = blank(text);
    let mut calls_sent = vec![false; tool_calls.len()];
    for item in items {
        match item["type"].as_str() {
            Some("reasoning") if sendable(item) => input.push(item.clone()),
            Some("message") if !text_sent => {
                input.push(message(item["id"].as_str()));
                text_sent = true;
            }
            Some("function_call") => {
                let at = tool_calls.iter().position(|c| item["call_id"] == c.id.as_str());
                if let Some(i) = at.filter(|&i| !calls_sent[i]) {
                    // The text came before the calls; the response had no message item to place it.
                    if !text_sent {
                        input.push(message(None));
                        text_sent = true;
                    }
                    input.push(call(&tool_calls[i], item["id"].as_str()));
                    calls_sent[i] = true;
                }
            }
            _ => {}
        }
    }
    if !text_sent {
        input.push(message(None));
    }
    for (c, _) in tool_calls.iter().zip(calls_sent).filter(|(_, sent)| !sent) {
        input.push(call(c, None));
    }
}

/// One function call being assembled.
struct PartialCall {
    item_id: Option<String>,
    output_index: Option<u64>,
    call_id: String,
    name: String,
    arguments: String,
    text_chars_before: usize,
    /// Set for arguments that arrived for an item the stream never announced.
    problem: Option<String>,
}

/// Assembles a Responses event stream into canonical events. Pure: fed one SSE event (its name
/// and data) at a time.
///
/// A call starts at `response.output_item.added` (which fixes its text offset), collects its
/// argument deltas by item id (or output index), and is emitted complete at
/// `function_call_arguments.done` or `output_item.done`, whose full arguments win over the
/// assembled ones. Arguments that are not a JSON object, a call without a name or without an id
/// of its own become a [`ProviderEvent::MalformedToolCall`], which the loop answers and never runs.
#[derive(Default)]
pub struct EventParser {
    pending: Vec<PartialCall>,
    /// Item ids and call ids already emitted: a second `done` for an item is ignored.
    emitted_items: Vec<String>,
    emitted_ids: Vec<String>,
    text_chars: usize,
    response_id: Option<String>,
    /// The response's output items as its state keeps them (see the module docs), in order.
    items: Vec<Value>,
    /// The origin the response's state is tagged with.
    origin: String,
    /// Whether the request let the API keep the response.
    stored: bool,
    done: bool,
}

impl EventParser {
    /// A parser for one response, whose state is tagged with an empty origin (tests).
    pub fn new() -> Self {
        Self::for_endpoint("", true)
    }

    /// A parser for one response from the endpoint at `origin`, asked for with `store` not false
    /// (`stored`).
    pub fn for_endpoint(origin: &str, stored: bool) -> Self {
        Self { origin: origin.to_owned(), stored, ..Self::default() }
    }

    /// Whether the response is complete (no more events are needed).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Handles one event (`event:` name and `data:`), pushing what it completes to `out`.
    pub fn push(
        &mut self,
        who: &str,
        event: &str,
        data: &str,
        out: &mut VecDeque<Result<ProviderEvent, ProviderError>>,
    ) {
        if self.done {
            return;
        }
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            // New event types may carry anything; only the ones read here must parse.
            Err(_) if !is_known(event) => return,
            Err(e) => {
                self.done = true;
                let shown: String = data.chars().take(120).collect();
                out.push_back(Err(ProviderError::new(
                    ErrorKind::Protocol,
                    format!("{who} sent a malformed '{event}' event ({e}): {shown}"),
                )));
                return;
            }
        };
        // The data's own type is authoritative; the event name is the fallback.
        let kind = v["type"].as_str().unwrap_or(event);
        let delta = || v["delta"].as_str().filter(|d| !d.is_empty()).map(str::to_owned);
        match kind {
            "response.created" | "response.in_progress" => {
                if let Some(id) = v["response"]["id"].as_str() {
                    self.response_id = Some(id.to_owned());
                }
            }
            "response.output_text.delta" => {
                if let Some(text) = delta() {
                    self.text_chars += char_len(&text);
                    out.push_back(Ok(ProviderEvent::TextDelta(text)));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                if let Some(text) = delta() {
                    out.push_back(Ok(ProviderEvent::ReasoningDelta(text)));
                }
            }
            "response.output_item.added" if v["item"]["type"] == "function_call" => {
                let item = &v["item"];
                let call = PartialCall {
                    item_id: item["id"].as_str().map(str::to_owned),
                    output_index: v["output_index"].as_u64(),
                    call_id: item["call_id"].as_str().unwrap_or("").to_owned(),
                    name: item["name"].as_str().unwrap_or("").to_owned(),
                    arguments: item["arguments"].as_str().unwrap_or("").to_owned(),
                    text_chars_before: self.text_chars,
                    problem: None,
                };
                self.pending.push(call);
            }
            "response.function_call_arguments.delta" => {
                let piece = v["delta"].as_str().unwrap_or("");
                match self.find(&v) {
                    Some(i) => self.pending[i].arguments.push_str(piece),
                    None => {
                        let mut call = self.orphan(&v);
                        call.arguments.push_str(piece);
                        self.pending.push(call);
                    }
                }
            }
            "response.function_call_arguments.done" => {
                let i = match self.find(&v) {
                    Some(i) => i,
                    None if self.already_emitted(&v) => return,
                    None => {
                        self.pending.push(self.orphan(&v));
                        self.pending.len() - 1
                    }
                };
                let mut call = self.pending.remove(i);
                if let Some(args) = v["arguments"].as_str() {
                    call.arguments = args.to_owned();
                }
                if let Some(name) = v["name"].as_str().filter(|n| !n.is_empty()) {
                    call.name = name.to_owned();
                }
                self.emit(call, out);
            }
            "response.output_item.done" if v["item"]["type"] == "function_call" => {
                let item = &v["item"];
                self.keep_item(item);
                let Some(i) = self.find(&json!({"item_id": item["id"], "output_index": v["output_index"]})) else {
                    // Already emitted at `arguments.done` (the usual order), or never announced.
                    if !self.already_emitted(&json!({"item_id": item["id"]})) {
                        let mut call = PartialCall {
                            item_id: item["id"].as_str().map(str::to_owned),
                            output_index: v["output_index"].as_u64(),
                            call_id: String::new(),
                            name: String::new(),
                            arguments: String::new(),
                            text_chars_before: self.text_chars,
                            problem: None,
                        };
                        fill_from_item(&mut call, item);
                        self.emit(call, out);
                    }
                    return;
                };
                let mut call = self.pending.remove(i);
                fill_from_item(&mut call, item);
                self.emit(call, out);
            }
            "response.output_item.done" => self.keep_item(&v["item"]),
            "response.completed" => self.finish(&v["response"], None, out),
            "response.incomplete" => {
                let reason = match v["response"]["incomplete_details"]["reason"].as_str() {
                    Some("max_output_tokens") => StopReason::Length,
                    Some("content_filter") => StopReason::ContentFilter,
                    Some(other) => StopReason::Other(other.to_owned()),
                    None => StopReason::Other("incomplete".to_owned()),
                };
                self.finish(&v["response"], Some(reason), out);
            }
            "response.failed" => {
                self.done = true;
                let error = &v["response"]["error"];
                out.push_back(Err(crate::classify::responses_stream_error(
                    who,
                    error["code"].as_str(),
                    error["message"].as_str().unwrap_or("the response failed"),
                )));
            }
            "error" => {
                self.done = true;
                // The event carries `code` and `message` at its top; some servers nest them.
                let error = if v["error"].is_object() { &v["error"] } else { &v };
                let code = error["code"].as_str().or_else(|| error["type"].as_str().filter(|t| *t != "error"));
                out.push_back(Err(crate::classify::responses_stream_error(
                    who,
                    code,
                    error["message"].as_str().unwrap_or("unknown error"),
                )));
            }
            _ => {}
        }
    }

    /// Keeps a finished output item for the response's state: a reasoning item as the API gave
    /// it (the fields it takes back), a message or call by its ids. Each item once.
    fn keep_item(&mut self, item: &Value) {
        let Some(id) = item["id"].as_str().filter(|id| !id.is_empty()) else { return };
        if self.items.iter().any(|i| i["id"] == id) {
            return;
        }
        let kept = match item["type"].as_str() {
            Some("reasoning") => {
                let summary = if item["summary"].is_array() { item["summary"].clone() } else { json!([]) };
                let mut kept = json!({"type": "reasoning", "id": id, "summary": summary});
                if let Some(encrypted) = item["encrypted_content"].as_str() {
                    kept["encrypted_content"] = json!(encrypted);
                }
                kept
            }
            Some("message") => json!({"type": "message", "id": id}),
            Some("function_call") => match item["call_id"].as_str() {
                Some(call_id) => json!({"type": "function_call", "id": id, "call_id": call_id}),
                None => return,
            },
            _ => return,
        };
        self.items.push(kept);
    }

    /// The response's state, when it has anything to keep.
    fn state(&mut self) -> Option<ProviderState> {
        let id = self.response_id.clone();
        if id.is_none() && self.items.is_empty() {
            return None;
        }
        let mut data = json!({"stored": self.stored, "items": std::mem::take(&mut self.items)});
        if let Some(id) = id {
            data["responseId"] = json!(id);
        }
        Some(ProviderState { api: KIND.to_owned(), origin: self.origin.clone(), data })
    }

    /// The pending call an event names by `item_id`, else by `output_index`.
    fn find(&self, v: &Value) -> Option<usize> {
        if let Some(id) = v["item_id"].as_str()
            && let Some(i) = self.pending.iter().position(|c| c.item_id.as_deref() == Some(id))
        {
            return Some(i);
        }
        let index = v["output_index"].as_u64()?;
        self.pending.iter().position(|c| c.output_index == Some(index))
    }

    fn already_emitted(&self, v: &Value) -> bool {
        v["item_id"].as_str().is_some_and(|id| self.emitted_items.iter().any(|e| e == id))
    }

    /// A call for arguments whose item was never announced: it has no name or id to trust.
    fn orphan(&self, v: &Value) -> PartialCall {
        PartialCall {
            item_id: v["item_id"].as_str().map(str::to_owned),
            output_index: v["output_index"].as_u64(),
            call_id: String::new(),
            name: String::new(),
            arguments: String::new(),
            text_chars_before: self.text_chars,
            problem: Some("its arguments arrived for an output item the stream never announced".to_owned()),
        }
    }

    fn emit(&mut self, call: PartialCall, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        let PartialCall { item_id, call_id, name, arguments, text_chars_before, mut problem, .. } = call;
        let arguments = if blank(&arguments) { "{}".to_owned() } else { arguments };
        if problem.is_none() {
            problem = match serde_json::from_str::<Value>(&arguments) {
                Ok(Value::Object(_)) => None,
                Ok(_) => Some("its arguments are not a JSON object".to_owned()),
                Err(e) => Some(format!("its arguments are not valid JSON ({e})")),
            };
        }
        if name.is_empty() {
            problem.get_or_insert_with(|| "it has no tool name".to_owned());
        }
        let id = if call_id.is_empty() || self.emitted_ids.contains(&call_id) {
            problem.get_or_insert_with(|| "it has no call id of its own".to_owned());
            let mut n = self.emitted_ids.len();
            while self.emitted_ids.contains(&format!("call_{n}")) {
                n += 1;
            }
            format!("call_{n}")
        } else {
            call_id
        };
        if let Some(item_id) = item_id {
            self.emitted_items.push(item_id);
        }
        self.emitted_ids.push(id.clone());
        let call = ToolCall { id, name, arguments };
        out.push_back(Ok(match problem {
            None => ProviderEvent::ToolCall { call, text_chars_before },
            Some(problem) => ProviderEvent::MalformedToolCall { call, text_chars_before, problem },
        }));
    }

    /// The response ended (`completed`, or `incomplete` with `reason`): calls still open are
    /// emitted as they stand, then the usage and the finish.
    fn finish(
        &mut self,
        response: &Value,
        reason: Option<StopReason>,
        out: &mut VecDeque<Result<ProviderEvent, ProviderError>>,
    ) {
        self.done = true;
        for call in std::mem::take(&mut self.pending) {
            self.emit(call, out);
        }
        if let Some(id) = response["id"].as_str() {
            self.response_id = Some(id.to_owned());
        }
        let u = &response["usage"];
        if u.is_object() {
            let n = |v: &Value| v.as_u64().unwrap_or(0);
            out.push_back(Ok(ProviderEvent::Usage(Usage {
                // OpenAI counts cached input in input_tokens and reasoning in output_tokens,
                // as Usage does.
                prompt_tokens: n(&u["input_tokens"]),
                completion_tokens: n(&u["output_tokens"]),
                reasoning_tokens: n(&u["output_tokens_details"]["reasoning_tokens"]),
                cached_tokens: n(&u["input_tokens_details"]["cached_tokens"]),
                cache_write_tokens: 0,
            })));
        }
        // Items the stream never finished one by one are in the terminal response's output.
        if self.items.is_empty()
            && let Some(output) = response["output"].as_array()
        {
            for item in output {
                self.keep_item(item);
            }
        }
        if let Some(state) = self.state() {
            out.push_back(Ok(ProviderEvent::State(state)));
        }
        let reason =
            reason.unwrap_or(if self.emitted_ids.is_empty() { StopReason::Stop } else { StopReason::ToolCalls });
        out.push_back(Ok(ProviderEvent::Finish { reason, response_id: self.response_id.take() }));
    }

    /// The stream ended without a terminal event: an error (the response may be cut anywhere).
    pub fn end(&mut self, who: &str, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        if self.done {
            return;
        }
        self.done = true;
        out.push_back(Err(ProviderError::new(
            ErrorKind::Network,
            format!("The stream from {} ended before the response was complete.", crate::classify::mid_sentence(who)),
        )));
    }
}

/// An `output_item.done` item is the call as the server finally sees it: its fields win.
fn fill_from_item(call: &mut PartialCall, item: &Value) {
    let field = |k: &str| item[k].as_str().filter(|s| !s.is_empty()).map(str::to_owned);
    if let Some(id) = field("call_id") {
        call.call_id = id;
        // The item named its id and name: it is not an orphan after all.
        if field("name").is_some() {
            call.problem = None;
        }
    }
    if let Some(name) = field("name") {
        call.name = name;
    }
    if let Some(args) = item["arguments"].as_str() {
        call.arguments = args.to_owned();
    }
}

/// The events this parser reads; any other may carry anything and is ignored.
fn is_known(event: &str) -> bool {
    const KNOWN: &[&str] = &[
        "response.created",
        "response.in_progress",
        "response.output_text.delta",
        "response.reasoning_summary_text.delta",
        "response.reasoning_text.delta",
        "response.output_item.added",
        "response.output_item.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "error",
    ];
    KNOWN.contains(&event)
}

impl sse::Parser for EventParser {
    fn push(&mut self, who: &str, event: &str, data: &str, out: &mut sse::Decided) {
        EventParser::push(self, who, event, data, out);
    }
    fn end(&mut self, who: &str, out: &mut sse::Decided) {
        EventParser::end(self, who, out);
    }
    fn is_done(&self) -> bool {
        EventParser::is_done(self)
    }
    fn fail(&mut self) {
        self.done = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::provider::{GenerationOptions, ReasoningEffort, ToolSpec};

    type Out = Vec<Result<ProviderEvent, ProviderError>>;

    /// Feeds events (named by their data's `type`, as the API does) and ends the stream.
    fn feed(events: &[Value]) -> Out {
        let mut p = EventParser::new();
        let mut out = VecDeque::new();
        for data in events {
            p.push("P", data["type"].as_str().unwrap_or("message"), &data.to_string(), &mut out);
        }
        p.end("P", &mut out);
        out.into_iter().collect()
    }

    fn ok(out: Out) -> Vec<ProviderEvent> {
        out.into_iter().map(|e| e.unwrap_or_else(|e| panic!("unexpected error: {e}"))).collect()
    }

    fn created(id: &str) -> Value {
        json!({"type":"response.created","sequence_number":0,"response":{"id":id,"object":"response","status":"in_progress","output":[]}})
    }
    fn text(t: &str) -> Value {
        json!({"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":t})
    }
    fn call_added(index: u64, item: &str, call_id: &str, name: &str) -> Value {
        json!({"type":"response.output_item.added","output_index":index,
            "item":{"type":"function_call","id":item,"call_id":call_id,"name":name,"arguments":"","status":"in_progress"}})
    }
    fn args_delta(index: u64, item: &str, d: &str) -> Value {
        json!({"type":"response.function_call_arguments.delta","item_id":item,"output_index":index,"delta":d})
    }
    fn args_done(index: u64, item: &str, args: &str) -> Value {
        json!({"type":"response.function_call_arguments.done","item_id":item,"output_index":index,"arguments":args})
    }
    fn item_done(index: u64, item: &str, call_id: &str, name: &str, args: &str) -> Value {
        json!({"type":"response.output_item.done","output_index":index,
            "item":{"type":"function_call","id":item,"call_id":call_id,"name":name,"arguments":args,"status":"completed"}})
    }
    fn completed(id: &str) -> Value {
        json!({"type":"response.completed","response":{"id":id,"status":"completed","usage":{
            "input_tokens":20,"input_tokens_details":{"cached_tokens":8},
            "output_tokens":11,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":31}}})
    }

    fn texts(events: &[ProviderEvent]) -> String {
        events
            .iter()
            .filter_map(|e| if let ProviderEvent::TextDelta(t) = e { Some(t.as_str()) } else { None })
            .collect()
    }

    fn calls(events: &[ProviderEvent]) -> Vec<(ToolCall, usize, Option<String>)> {
        events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::ToolCall { call, text_chars_before } => Some((call.clone(), *text_chars_before, None)),
                ProviderEvent::MalformedToolCall { call, text_chars_before, problem } => {
                    Some((call.clone(), *text_chars_before, Some(problem.clone())))
                }
                _ => None,
            })
            .collect()
    }

    /// Every way of cutting `s` into two pieces at character boundaries (the empty cuts too).
    fn cuts(s: &str) -> impl Iterator<Item = (&str, &str)> {
        s.char_indices().map(|(i, _)| i).chain([s.len()]).map(|i| s.split_at(i))
    }

    #[test]
    fn text_then_a_call_split_anywhere_gives_the_call_with_its_offset_in_chars() {
        let args = r#"{"tz":"Asia/東京","note":"🙂"}"#;
        let before = "Let me check 🕐 時間";
        for (a, b) in cuts(args) {
            for (t1, t2) in cuts(before) {
                let out = ok(feed(&[
                    created("resp_1"),
                    text(t1),
                    text(t2),
                    call_added(1, "fc_1", "call_1", "get_time"),
                    args_delta(1, "fc_1", a),
                    args_delta(1, "fc_1", b),
                    args_done(1, "fc_1", args),
                    item_done(1, "fc_1", "call_1", "get_time", args),
                    completed("resp_1"),
                ]));
                assert_eq!(texts(&out), before);
                let got = calls(&out);
                assert_eq!(got.len(), 1, "the item's done after arguments' done is not a second call");
                assert_eq!(got[0].0, ToolCall { id: "call_1".into(), name: "get_time".into(), arguments: args.into() });
                assert_eq!(got[0].1, before.chars().count(), "offset in chars, not bytes");
                assert_eq!(got[0].2, None);
                assert_eq!(
                    out[out.len() - 3],
                    ProviderEvent::Usage(Usage {
                        prompt_tokens: 20,
                        completion_tokens: 11,
                        reasoning_tokens: 4,
                        cached_tokens: 8,
                        cache_write_tokens: 0
                    })
                );
                assert_eq!(
                    out.last().unwrap(),
                    &ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: Some("resp_1".into()) }
                );
            }
        }
    }

    #[test]
    fn arguments_assembled_from_deltas_are_used_when_done_events_carry_none() {
        // Cut at every byte of escaped JSON: the deltas are text, so only char cuts are possible,
        // but a cut inside an escape sequence must still assemble.
        let args = r#"{"q":"\ud83d\ude00 \u00e9\n"}"#;
        for (a, b) in cuts(args) {
            let out = ok(feed(&[
                call_added(0, "fc_x", "call_x", "search"),
                args_delta(0, "fc_x", a),
                args_delta(0, "fc_x", b),
                json!({"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_x"}}),
                completed("r"),
            ]));
            let got = calls(&out);
            assert_eq!((got[0].0.arguments.as_str(), got[0].2.as_deref()), (args, None), "cut {a:?}|{b:?}");
            assert_eq!((got[0].0.id.as_str(), got[0].0.name.as_str()), ("call_x", "search"));
        }
    }

    #[test]
    fn a_call_is_emitted_when_its_arguments_are_done_and_not_before() {
        let mut p = EventParser::new();
        let mut out = VecDeque::new();
        for data in [call_added(0, "fc_1", "call_1", "f"), args_delta(0, "fc_1", r#"{"a":1}"#)] {
            p.push("P", data["type"].as_str().unwrap(), &data.to_string(), &mut out);
        }
        assert!(out.is_empty(), "{out:?}");
        let data = args_done(0, "fc_1", r#"{"a":1}"#);
        p.push("P", "response.function_call_arguments.done", &data.to_string(), &mut out);
        assert!(matches!(out.pop_front(), Some(Ok(ProviderEvent::ToolCall { .. }))));
    }

    #[test]
    fn two_parallel_calls_interleaved_are_assembled_by_item_id() {
        let out = ok(feed(&[
            text("ab"),
            call_added(1, "fc_a", "call_a", "f"),
            call_added(2, "fc_b", "call_b", "g"),
            args_delta(1, "fc_a", r#"{"x":"#),
            args_delta(2, "fc_b", r#"{"y":"#),
            args_delta(1, "fc_a", "1}"),
            // No item id: the output index says which call.
            json!({"type":"response.function_call_arguments.delta","output_index":2,"delta":"2}"}),
            json!({"type":"response.function_call_arguments.done","item_id":"fc_a","output_index":1}),
            json!({"type":"response.function_call_arguments.done","item_id":"fc_b","output_index":2}),
            completed("r"),
        ]));
        let got = calls(&out);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0.id.as_str(), got[0].0.arguments.as_str(), got[0].1), ("call_a", r#"{"x":1}"#, 2));
        assert_eq!((got[1].0.id.as_str(), got[1].0.arguments.as_str(), got[1].1), ("call_b", r#"{"y":2}"#, 2));
    }

    #[test]
    fn arguments_that_do_not_parse_or_calls_without_name_or_id_are_malformed() {
        let out = ok(feed(&[
            call_added(0, "fc_1", "call_1", "f"),
            args_done(0, "fc_1", r#"{"a":"#),
            call_added(1, "fc_2", "call_2", "g"),
            args_done(1, "fc_2", "[1]"),
            call_added(2, "fc_3", "", "h"),
            args_done(2, "fc_3", "{}"),
            call_added(3, "fc_4", "call_4", ""),
            args_done(3, "fc_4", "{}"),
            args_delta(9, "fc_ghost", "{}"),
            completed("r"),
        ]));
        let got = calls(&out);
        assert_eq!(got.len(), 5, "{got:?}");
        assert!(got[0].2.as_deref().is_some_and(|p| p.contains("not valid JSON")), "{got:?}");
        assert_eq!(got[0].0.arguments, r#"{"a":"#, "the raw text is kept for the model");
        assert!(got[1].2.as_deref().is_some_and(|p| p.contains("not a JSON object")), "{got:?}");
        assert!(got[2].2.as_deref().is_some_and(|p| p.contains("no call id")), "{got:?}");
        assert!(got[3].2.as_deref().is_some_and(|p| p.contains("no tool name")), "{got:?}");
        assert!(got[4].2.as_deref().is_some_and(|p| p.contains("never announced")), "{got:?}");
        let ids: std::collections::BTreeSet<&str> = got.iter().map(|c| c.0.id.as_str()).collect();
        assert_eq!(ids.len(), got.len(), "ids stay unique: {got:?}");
        assert!(matches!(out.last(), Some(ProviderEvent::Finish { reason: StopReason::ToolCalls, .. })));
    }

    #[test]
    fn reasoning_summaries_and_reasoning_text_are_reasoning_not_text() {
        let out = ok(feed(&[
            created("r"),
            json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}),
            json!({"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Hmm, 考え"}),
            json!({"type":"response.reasoning_text.delta","item_id":"rs_1","output_index":0,"content_index":0,"delta":" 🤔"}),
            text("Answer"),
            completed("r"),
        ]));
        assert_eq!(out[0], ProviderEvent::ReasoningDelta("Hmm, 考え".into()));
        assert_eq!(out[1], ProviderEvent::ReasoningDelta(" 🤔".into()));
        assert_eq!(out[2], ProviderEvent::TextDelta("Answer".into()));
        assert_eq!(
            out.last().unwrap(),
            &ProviderEvent::Finish { reason: StopReason::Stop, response_id: Some("r".into()) }
        );
    }

    #[test]
    fn an_incomplete_response_finishes_with_its_reason_and_usage() {
        for (reason, want) in [
            ("max_output_tokens", StopReason::Length),
            ("content_filter", StopReason::ContentFilter),
            ("something_new", StopReason::Other("something_new".into())),
        ] {
            let out = ok(feed(&[
                text("Once upon"),
                json!({"type":"response.incomplete","response":{"id":"r9","status":"incomplete",
                    "incomplete_details":{"reason":reason},"usage":{"input_tokens":3,"output_tokens":2}}}),
            ]));
            assert_eq!(
                out[1],
                ProviderEvent::Usage(Usage { prompt_tokens: 3, completion_tokens: 2, ..Usage::default() })
            );
            assert!(matches!(&out[2], ProviderEvent::State(s) if s.data["responseId"] == "r9"), "{out:?}");
            assert_eq!(out[3], ProviderEvent::Finish { reason: want, response_id: Some("r9".into()) });
        }
    }

    #[test]
    fn a_call_cut_by_the_output_limit_is_malformed_not_run() {
        let out = ok(feed(&[
            call_added(0, "fc_1", "call_1", "f"),
            args_delta(0, "fc_1", r#"{"a":"#),
            json!({"type":"response.incomplete","response":{"id":"r","incomplete_details":{"reason":"max_output_tokens"}}}),
        ]));
        assert!(calls(&out)[0].2.as_deref().is_some_and(|p| p.contains("not valid JSON")), "{out:?}");
        assert!(matches!(out.last(), Some(ProviderEvent::Finish { reason: StopReason::Length, .. })));
    }

    #[test]
    fn failed_responses_and_error_events_are_classified_with_the_servers_message() {
        let out = feed(&[
            text("partial"),
            json!({"type":"response.failed","response":{"id":"r","status":"failed",
                "error":{"code":"server_error","message":"The model crashed."}}}),
            text("never"),
        ]);
        assert_eq!(out.len(), 2, "{out:?}");
        let e = out[1].clone().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Server);
        assert!(e.is_retryable() && e.message.contains("The model crashed"), "{}", e.message);

        let out = feed(&[json!({"type":"error","code":"rate_limit_exceeded","message":"Slow down.","param":null})]);
        let e = out[0].clone().unwrap_err();
        assert_eq!(e.kind, ErrorKind::RateLimited);
        assert!(e.message.contains("Slow down"), "{}", e.message);

        let out = feed(&[json!({"type":"error","code":"invalid_prompt","message":"Flagged.","param":null})]);
        let e = out[0].clone().unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadRequest);
        assert!(!e.is_retryable());
        assert_eq!(out.len(), 1, "the stream ends at the error");
    }

    #[test]
    fn unknown_events_are_ignored_and_known_ones_must_be_json() {
        let mut p = EventParser::new();
        let mut out = VecDeque::new();
        p.push("P", "response.brand_new", "not json", &mut out);
        p.push("P", "response.brand_new", r#"{"type":"response.brand_new","x":1}"#, &mut out);
        p.push("P", "response.output_text.done", r#"{"type":"response.output_text.done","text":"whole"}"#, &mut out);
        p.push("P", "response.output_text.delta", &text("ok").to_string(), &mut out);
        assert_eq!(out.pop_front().unwrap().unwrap(), ProviderEvent::TextDelta("ok".into()));
        assert!(out.is_empty(), "{out:?}");
        p.push("P", "response.output_text.delta", "{oops", &mut out);
        assert_eq!(out.pop_front().unwrap().unwrap_err().kind, ErrorKind::Protocol);
    }

    #[test]
    fn a_stream_that_ends_before_its_terminal_event_is_an_error() {
        let out = feed(&[created("r"), text("half")]);
        let e = out.last().unwrap().clone().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Network);
        assert!(e.message.contains("ended before"), "{}", e.message);
    }

    /// The body of a whole-history request to an endpoint with no origin and `store` unset.
    fn whole(request: &ProviderRequest) -> Value {
        request_body(request, &Target::default(), None)
    }

    fn tool(name: &str, parameters: Value) -> ToolSpec {
        ToolSpec { name: name.into(), description: format!("{name} does things"), parameters }
    }

    #[test]
    fn the_request_maps_history_into_items_in_order() {
        let request = ProviderRequest {
            model: "gpt-5".into(),
            system: Some("Be brief.".into()),
            messages: vec![
                Message::User { text: "What time is it?".into() },
                Message::Assistant {
                    text: "Checking.".into(),
                    tool_calls: vec![
                        ToolCall { id: "call_1".into(), name: "get_time".into(), arguments: "".into() },
                        ToolCall { id: "call_2".into(), name: "get_time".into(), arguments: r#"{"tz":"UTC"}"#.into() },
                    ],
                    state: None,
                },
                Message::Tool {
                    images: Default::default(),
                    call_id: "call_1".into(),
                    name: "get_time".into(),
                    content: "noon".into(),
                    is_error: false,
                },
                Message::Tool {
                    images: Default::default(),
                    call_id: "call_2".into(),
                    name: "get_time".into(),
                    content: "12:00".into(),
                    is_error: true,
                },
                Message::Assistant { text: "".into(), tool_calls: vec![], state: None },
                Message::Assistant { text: "It is noon.".into(), tool_calls: vec![], state: None },
                Message::User { text: "  ".into() },
                Message::User { text: "Thanks".into() },
            ],
            tools: vec![],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = whole(&request);
        assert_eq!(body["model"], "gpt-5");
        assert_eq!(body["instructions"], "Be brief.");
        assert_eq!(body["stream"], true);
        for absent in ["store", "include", "previous_response_id", "max_output_tokens", "reasoning"] {
            assert!(body.get(absent).is_none(), "{absent} is left to the API: {body}");
        }
        assert_eq!(
            body["input"],
            json!([
                {"role":"user","content":[{"type":"input_text","text":"What time is it?"}]},
                {"role":"assistant","content":[{"type":"output_text","text":"Checking."}]},
                {"type":"function_call","call_id":"call_1","name":"get_time","arguments":"{}"},
                {"type":"function_call","call_id":"call_2","name":"get_time","arguments":"{\"tz\":\"UTC\"}"},
                {"type":"function_call_output","call_id":"call_1","output":"noon"},
                {"type":"function_call_output","call_id":"call_2","output":"12:00"},
                {"role":"assistant","content":[{"type":"output_text","text":"It is noon."}]},
                {"role":"user","content":[{"type":"input_text","text":"Thanks"}]},
            ])
        );
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "{body}");
        let no_system = whole(&ProviderRequest { system: Some(" ".into()), ..request });
        assert!(no_system.get("instructions").is_none());
    }

    #[test]
    fn tools_are_flat_functions_with_strict_only_where_the_schema_allows() {
        let closed = json!({"type":"object","properties":{"tz":{"type":["string","null"]}},"required":["tz"],"additionalProperties":false});
        let open = json!({"type":"object","properties":{"tz":{"type":"string"}}});
        let mut request = ProviderRequest {
            model: "m".into(),
            system: None,
            messages: vec![Message::User { text: "hi".into() }],
            tools: vec![tool("a", closed.clone()), tool("b", open.clone())],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = whole(&request);
        assert_eq!(
            body["tools"][0],
            json!({"type":"function","name":"a","description":"a does things","parameters":closed,"strict":true})
        );
        assert_eq!(body["tools"][1]["strict"], false);
        assert_eq!(body["tools"][1]["parameters"], open);
        assert_eq!(body["parallel_tool_calls"], true);
        for (choice, want) in [
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::None, json!("none")),
            (ToolChoice::Required, json!("required")),
            (ToolChoice::OneOf(vec!["a".into(), "b".into()]), json!("required")),
            (ToolChoice::Named("b".into()), json!({"type":"function","name":"b"})),
        ] {
            request.tool_choice = choice;
            assert_eq!(whole(&request)["tool_choice"], want);
        }
    }

    const ORIGIN: &str = "https://api.openai.com";

    fn state(data: Value) -> Option<ProviderState> {
        Some(ProviderState { api: KIND.into(), origin: ORIGIN.into(), data })
    }

    fn user(text: &str) -> Message {
        Message::User { text: text.into() }
    }

    fn result(call_id: &str, content: &str) -> Message {
        Message::Tool {
            images: Default::default(),
            call_id: call_id.into(),
            name: "get_time".into(),
            content: content.into(),
            is_error: false,
        }
    }

    fn get_time(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "get_time".into(), arguments: "{}".into() }
    }

    /// The state of a stored response `resp_1` that reasoned (`rs_1`, encrypted), said something
    /// (`msg_1`) and called `call_1` (`fc_1`).
    fn resp_1_state() -> Value {
        json!({"responseId": "resp_1", "stored": true, "items": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Think."}],
                "encrypted_content": "enc_1"},
            {"type": "message", "id": "msg_1"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1"},
        ]})
    }

    fn conversation(first_state: Option<ProviderState>) -> ProviderRequest {
        ProviderRequest {
            model: "gpt-5".into(),
            messages: vec![
                user("What time is it?"),
                Message::Assistant {
                    text: "Checking.".into(),
                    tool_calls: vec![get_time("call_1")],
                    state: first_state,
                },
                result("call_1", "noon"),
            ],
            ..ProviderRequest::default()
        }
    }

    /// Each input item as its type (or role), with `#` when it carries an item id.
    fn input_kinds(body: &Value) -> Vec<String> {
        body["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let kind = i["type"].as_str().or(i["role"].as_str()).unwrap();
                if i.get("id").is_some() { format!("{kind}#") } else { kind.to_owned() }
            })
            .collect()
    }

    fn target(store: Option<bool>) -> Target {
        Target { origin: ORIGIN.into(), store, lost_responses: false }
    }

    #[test]
    fn a_response_leaves_one_state_before_its_finish_with_its_id_and_items_in_order() {
        let mut p = EventParser::for_endpoint(ORIGIN, true);
        let mut out = VecDeque::new();
        let reasoning = json!({"type":"reasoning","id":"rs_1","status":"completed",
            "summary":[{"type":"summary_text","text":"Think."}],"encrypted_content":"enc_1"});
        for data in [
            created("resp_1"),
            json!({"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1","summary":[]}}),
            json!({"type":"response.output_item.done","output_index":0,"item":reasoning}),
            text("Checking."),
            json!({"type":"response.output_item.done","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant",
                "content":[{"type":"output_text","text":"Checking."}]}}),
            call_added(2, "fc_1", "call_1", "get_time"),
            args_done(2, "fc_1", "{}"),
            item_done(2, "fc_1", "call_1", "get_time", "{}"),
            // A second done of the same item is kept once.
            json!({"type":"response.output_item.done","output_index":0,"item":reasoning}),
            completed("resp_1"),
        ] {
            p.push("P", data["type"].as_str().unwrap(), &data.to_string(), &mut out);
        }
        let out: Vec<ProviderEvent> = out.into_iter().map(Result::unwrap).collect();
        let states: Vec<&ProviderState> =
            out.iter().filter_map(|e| if let ProviderEvent::State(s) = e { Some(s) } else { None }).collect();
        assert_eq!(states.len(), 1, "{out:?}");
        assert_eq!((states[0].api.as_str(), states[0].origin.as_str()), (KIND, ORIGIN));
        assert_eq!(states[0].data, resp_1_state());
        assert!(matches!(out[out.len() - 2], ProviderEvent::State(_)), "the state comes right before the finish");
        assert!(matches!(out.last(), Some(ProviderEvent::Finish { reason: StopReason::ToolCalls, .. })));
    }

    #[test]
    fn the_state_says_when_the_response_was_not_stored_and_falls_back_to_the_terminal_output() {
        let mut p = EventParser::for_endpoint(ORIGIN, false);
        let mut out = VecDeque::new();
        let done = json!({"type":"response.completed","response":{"id":"resp_2","status":"completed","output":[
            {"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"enc_2"},
            {"type":"message","id":"msg_2","role":"assistant","content":[{"type":"output_text","text":"Hi"}]}]}});
        for data in [text("Hi"), done] {
            p.push("P", data["type"].as_str().unwrap(), &data.to_string(), &mut out);
        }
        let Some(Ok(ProviderEvent::State(state))) = out.get(1) else { panic!("{out:?}") };
        assert_eq!(
            state.data,
            json!({"responseId":"resp_2","stored":false,"items":[
                {"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"enc_2"},
                {"type":"message","id":"msg_2"}]})
        );

        // No id and no items: nothing to keep, no state.
        let out = ok(feed(&[text("Hi"), json!({"type":"response.completed","response":{"status":"completed"}})]));
        assert!(!out.iter().any(|e| matches!(e, ProviderEvent::State(_))), "{out:?}");
        // A failed response leaves none either.
        let out = feed(&[
            created("r"),
            json!({"type":"response.failed","response":{"id":"r","error":{"code":"server_error","message":"x"}}}),
        ]);
        assert!(!out.iter().any(|e| matches!(e, Ok(ProviderEvent::State(_)))), "{out:?}");
    }

    #[test]
    fn options_map_to_max_output_tokens_and_reasoning_and_store_is_sent_only_when_set() {
        let mut request = conversation(None);
        let body = request_body(&request, &target(None), None);
        assert!(body.get("max_output_tokens").is_none() && body.get("reasoning").is_none(), "{body}");
        assert!(body.get("store").is_none() && body.get("include").is_none(), "{body}");
        for (effort, word) in
            [(ReasoningEffort::Low, "low"), (ReasoningEffort::Medium, "medium"), (ReasoningEffort::High, "high")]
        {
            request.options = GenerationOptions {
                max_output_tokens: Some(2048),
                reasoning_effort: Some(effort),
                thinking_budget: Some(999),
                ..GenerationOptions::default()
            };
            let body = request_body(&request, &target(Some(true)), None);
            assert_eq!(body["max_output_tokens"], 2048);
            assert_eq!(body["reasoning"], json!({"effort": word, "summary": "auto"}));
            assert_eq!(body["store"], true);
            assert!(body.get("include").is_none(), "{body}");
        }
        request.options = GenerationOptions { max_output_tokens: Some(64), ..GenerationOptions::default() };
        let body = request_body(&request, &target(Some(false)), None);
        assert_eq!((&body["max_output_tokens"], body.get("reasoning")), (&json!(64), None));
        assert_eq!((&body["store"], &body["include"]), (&json!(false), &json!(["reasoning.encrypted_content"])));
        request.options =
            GenerationOptions { temperature: Some(0.25), top_p: Some(0.5), ..GenerationOptions::default() };
        let body = request_body(&request, &target(None), None);
        assert_eq!((&body["temperature"], &body["top_p"]), (&json!(0.25), &json!(0.5)));
    }

    #[test]
    fn reasoning_items_go_back_before_the_items_they_preceded_with_those_items_ids() {
        let request = conversation(state(resp_1_state()));
        let body = request_body(&request, &target(None), None);
        assert_eq!(
            body["input"],
            json!([
                {"role":"user","content":[{"type":"input_text","text":"What time is it?"}]},
                {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Think."}],"encrypted_content":"enc_1"},
                {"role":"assistant","id":"msg_1","content":[{"type":"output_text","text":"Checking."}]},
                {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_time","arguments":"{}"},
                {"type":"function_call_output","call_id":"call_1","output":"noon"},
            ])
        );

        // Interleaved reasoning keeps the response's order; the text goes before the first call.
        let data = json!({"responseId":"r","stored":true,"items":[
            {"type":"reasoning","id":"rs_a","summary":[]},
            {"type":"function_call","id":"fc_a","call_id":"call_a"},
            {"type":"reasoning","id":"rs_b","summary":[]},
            {"type":"function_call","id":"fc_b","call_id":"call_b"}]});
        let mut input = Vec::new();
        let calls = [get_time("call_a"), get_time("call_b"), get_time("call_c")];
        push_assistant(&mut input, "Two.", &calls, Some(&data), true);
        let shape: Vec<String> = input
            .iter()
            .map(|i| {
                format!("{}:{}", i["type"].as_str().or(i["role"].as_str()).unwrap(), i["id"].as_str().unwrap_or("-"))
            })
            .collect();
        assert_eq!(
            shape,
            [
                "reasoning:rs_a",
                "assistant:-",
                "function_call:fc_a",
                "reasoning:rs_b",
                "function_call:fc_b",
                "function_call:-"
            ]
        );
    }

    #[test]
    fn reasoning_goes_back_only_where_the_api_can_resolve_it() {
        let by_id = json!({"responseId":"resp_1","stored":true,"items":[
            {"type":"reasoning","id":"rs_1","summary":[]},
            {"type":"message","id":"msg_1"},
            {"type":"function_call","id":"fc_1","call_id":"call_1"}]});
        let kinds = |data: Value, store: Option<bool>| {
            input_kinds(&request_body(&conversation(state(data)), &target(store), None))
        };
        let plain = ["user", "assistant", "function_call", "function_call_output"];
        let paired = ["user", "reasoning#", "assistant#", "function_call#", "function_call_output"];
        // Stored and referenced by id: fine unless this request keeps nothing.
        assert_eq!(kinds(by_id.clone(), None), paired);
        assert_eq!(kinds(by_id.clone(), Some(true)), paired);
        assert_eq!(kinds(by_id.clone(), Some(false)), plain, "an id alone cannot be resolved with store false");
        let mut unstored = by_id.clone();
        unstored["stored"] = json!(false);
        assert_eq!(kinds(unstored, None), plain, "the API never kept that response");
        // Encrypted content goes back whatever `store` says.
        assert_eq!(kinds(resp_1_state(), Some(false)), paired);
        let mut unstored = resp_1_state();
        unstored["stored"] = json!(false);
        assert_eq!(kinds(unstored, None), paired);

        // After the API said it lost the previous response, only encrypted reasoning goes back.
        let lost = Target { lost_responses: true, ..target(None) };
        let kinds_lost = |data: Value| input_kinds(&request_body(&conversation(state(data)), &lost, None));
        assert_eq!(kinds_lost(by_id.clone()), plain);
        assert_eq!(kinds_lost(resp_1_state()), paired);

        // State from another origin or API is never sent.
        let request = |api: &str, origin: &str| {
            let s = ProviderState { api: api.into(), origin: origin.into(), data: resp_1_state() };
            request_body(&conversation(Some(s)), &target(None), None)["input"].clone()
        };
        let whole = request_body(&conversation(None), &target(None), None)["input"].clone();
        assert_eq!(request("openai-responses", "http://127.0.0.1:8080"), whole);
        assert_eq!(request("anthropic", ORIGIN), whole);
        assert_eq!(whole.as_array().unwrap().len(), 4);

        // A message with nothing to follow its reasoning sends none.
        let mut input = Vec::new();
        push_assistant(&mut input, " ", &[], Some(&resp_1_state()), true);
        assert!(input.is_empty(), "{input:?}");
    }

    #[test]
    fn a_request_chains_onto_the_last_answer_when_its_state_allows() {
        let mut request = conversation(state(resp_1_state()));
        let want = Chain { previous_response_id: "resp_1".into(), from: 2 };
        assert_eq!(chain(&request, &target(None)), Some(want.clone()));
        assert_eq!(chain(&request, &target(Some(true))), Some(want.clone()));
        let body = request_body(&request, &target(None), Some(&want));
        assert_eq!(body["previous_response_id"], "resp_1");
        assert_eq!(body["input"], json!([{"type":"function_call_output","call_id":"call_1","output":"noon"}]));

        // A later turn: only the new message.
        request.messages.push(Message::Assistant {
            text: "It is noon.".into(),
            tool_calls: vec![],
            state: state(json!({"responseId":"resp_2","stored":true,"items":[{"type":"message","id":"msg_2"}]})),
        });
        request.messages.push(user("  "));
        request.messages.push(user("Thanks"));
        let c = chain(&request, &target(None)).unwrap();
        assert_eq!(c, Chain { previous_response_id: "resp_2".into(), from: 4 });
        let body = request_body(&request, &target(None), Some(&c));
        assert_eq!(body["input"], json!([{"role":"user","content":[{"type":"input_text","text":"Thanks"}]}]));
        assert_eq!(body["model"], "gpt-5");
    }

    #[test]
    fn without_a_usable_state_on_the_last_answer_the_whole_history_goes() {
        let with = |s: Option<ProviderState>| chain(&conversation(s), &target(None));
        assert_eq!(with(None), None, "no state");
        let other = |api: &str, origin: &str| {
            Some(ProviderState { api: api.into(), origin: origin.into(), data: resp_1_state() })
        };
        assert_eq!(with(other("anthropic", ORIGIN)), None, "another API");
        assert_eq!(with(other(KIND, "https://example.com")), None, "another endpoint");
        let mut data = resp_1_state();
        data["stored"] = json!(false);
        assert_eq!(with(state(data)), None, "a response the API did not keep");
        let mut data = resp_1_state();
        data.as_object_mut().unwrap().remove("responseId");
        assert_eq!(with(state(data)), None, "no response id");
        let data = json!({"responseId":"resp_1","stored":true,"items":[]});
        assert_eq!(with(state(data)), None, "a call the response does not have");
        assert_eq!(chain(&conversation(state(resp_1_state())), &target(Some(false))), None, "store false");

        // Only the last answer counts: an earlier one with state does not chain.
        let mut request = conversation(state(resp_1_state()));
        request.messages.push(Message::assistant("It is noon.", vec![]));
        request.messages.push(user("Thanks"));
        assert_eq!(chain(&request, &target(None)), None);
        // Nothing after the last answer: nothing to chain with.
        let mut request = conversation(state(resp_1_state()));
        request.messages.truncate(2);
        assert_eq!(chain(&request, &target(None)), None);
    }

    #[test]
    fn only_a_refused_previous_response_triggers_the_fallback() {
        let refused = crate::classify::http_error(
            "P",
            400,
            None,
            &json!({"error":{"message":"Previous response with id 'resp_x' not found.","type":"invalid_request_error",
                "param":"previous_response_id","code":"previous_response_not_found"}})
            .to_string(),
        );
        assert!(previous_response_missing(&refused), "{}", refused.message);
        let gone = crate::classify::http_error(
            "P",
            404,
            None,
            r#"{"error":{"message":"Previous response with id 'r' not found."}}"#,
        );
        assert!(previous_response_missing(&gone));
        let other = crate::classify::http_error("P", 400, None, r#"{"error":{"message":"Item 'rs_1' not found."}}"#);
        assert!(!previous_response_missing(&other));
        let server =
            crate::classify::http_error("P", 500, None, r#"{"error":{"message":"Previous response not found"}}"#);
        assert!(!previous_response_missing(&server), "a server error is the loop's to retry");
    }

    #[test]
    fn strict_needs_every_object_closed_and_every_property_required() {
        let ok = |s: Value| strict_compatible(&s);
        assert!(ok(json!({"type":"object","properties":{},"additionalProperties":false})));
        assert!(ok(json!({"type":"object","additionalProperties":false,"required":["a"],"properties":{
            "a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}}}})));
        // Not closed, a property not required, a nested object not closed.
        assert!(!ok(json!({"type":"object","properties":{}})));
        assert!(!ok(json!({"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false})));
        assert!(!ok(
            json!({"type":"object","properties":{"a":{"type":"object","properties":{}}},"required":["a"],"additionalProperties":false})
        ));
        assert!(!ok(
            json!({"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}},"required":["a"],"additionalProperties":false})
        ));
        assert!(!ok(
            json!({"type":"object","properties":{"a":{"anyOf":[{"type":"object"}]}},"required":["a"],"additionalProperties":false})
        ));
        assert!(!ok(json!({"type":"object","additionalProperties":false,"$defs":{"x":{"type":"object"}}})));
        // Keywords outside the subset, a root that is not an object, no schema at all.
        assert!(!ok(json!({"type":"object","properties":{},"additionalProperties":false,"oneOf":[]})));
        assert!(!ok(json!({"type":"string"})));
        assert!(!ok(json!({})));
        assert!(!ok(Value::Null));
    }
}
