//! The Anthropic Messages API (`POST {base}/messages`, streamed).
//!
//! Quirks handled here:
//! - The system prompt is a top-level field, not a message; history alternates user/assistant,
//!   so adjacent messages of one role are merged and tool results (which are `user` content) are
//!   grouped into one user message that starts with its `tool_result` blocks, as the API demands.
//! - Empty or whitespace-only text blocks are refused by the API: they are never sent.
//! - `max_tokens` is required. The canonical request has no such field, so [`DEFAULT_MAX_TOKENS`]
//!   (8192) is sent, except 4096 for the Claude 3 models (Opus, Sonnet, Haiku 3) whose output
//!   limit is 4096: a larger value is an error there, not a cap.
//! - Prompt caching: `cache_control: ephemeral` breakpoints on the system prompt, on the last tool
//!   definition and on the last block of the last message (3 of the API's 4), so each iteration
//!   of a turn reads the previous one's prefix from the cache. Cache reads are
//!   [`Usage::cached_tokens`], cache writes [`Usage::cache_write_tokens`]; both are also in
//!   [`Usage::prompt_tokens`] (which, as with OpenAI, is every input token: uncached, written and
//!   read).
//! - Tool-call input is a JSON object on the wire, while the canonical call keeps the model's raw
//!   argument text. Arguments that are not a JSON object (the model sent broken JSON, or an array)
//!   are sent back as `{}`, the only input the API accepts, and the raw text is added to that
//!   call's `tool_result` unless the result already quotes it, so the model still sees what it
//!   sent and why it failed.
//! - A history that holds tool calls must declare tools; when an iteration offers none (the last
//!   answer with tools off), the tools the history used are declared with an empty schema and
//!   `tool_choice: none`.
//! - `max_tokens` is the profile's output limit when it sets one; `temperature` (capped at 1) or
//!   else `top_p`, never both (newer models refuse the pair) and neither while thinking.
//! - Extended thinking (`thinking: {type: enabled, budget_tokens}`) is asked for when the profile
//!   sets a thinking budget or a reasoning effort (mapped to a budget; at least 1024, and
//!   `max_tokens` raised above it). Thinking text is shown as reasoning. The signed `thinking`
//!   and `redacted_thinking` blocks are kept as the response's [`ProviderState`] (`{"blocks":
//!   [...]}`, exactly as received) and sent back unchanged, first in that assistant message, to
//!   this API at this origin only. Thinking is left off for a request that forces a tool (the
//!   API refuses the two together) and for one whose last assistant message called tools without
//!   thinking blocks of its own (the API demands that such a message start with them, which a
//!   forced first iteration or a history from another API cannot).

use crate::endpoint::Endpoint;
use crate::sse;
use futures::StreamExt;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, VecDeque};
use switchboard_core::provider::StopReason;
use switchboard_core::tool::SecretValue;
use switchboard_core::types::char_len;
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ProviderState, ProviderStream,
    ToolCall, ToolChoice, Usage,
};

/// The kind id this module's state is tagged with.
const API: &str = "anthropic";

/// The smallest thinking budget the API takes.
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// The API version every request names (`anthropic-version`).
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` for models whose output limit is not known to be lower.
pub const DEFAULT_MAX_TOKENS: u64 = 8192;

/// `max_tokens` for the Claude 3 models (not 3.5 or 3.7), whose output limit is 4096.
pub const CLAUDE_3_MAX_TOKENS: u64 = 4096;

/// At most this many pages of `GET /models` are read (a guard against a server that always says
/// there is more).
const MAX_MODEL_PAGES: usize = 20;

/// Configuration of one Anthropic endpoint.
#[derive(Clone, Debug)]
pub struct AnthropicConfig {
    /// Base URL, e.g. `https://api.anthropic.com/v1`.
    pub base_url: String,
    /// The key, sent as `x-api-key`. A gateway in front of the API may need none.
    pub api_key: Option<SecretValue>,
}

/// The Messages API provider.
pub struct Anthropic {
    endpoint: Endpoint,
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic").field("base_url", &self.endpoint.base()).finish_non_exhaustive()
    }
}

impl Anthropic {
    /// A provider for `config`.
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        Ok(Self { endpoint: Endpoint::new(API, &config.base_url, config.api_key)? })
    }

    /// The models the API lists (`GET /models`, every page), sorted.
    pub async fn models(&self) -> Result<Vec<String>, ProviderError> {
        let mut ids = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_MODEL_PAGES {
            let url = match &after {
                Some(after) => self.endpoint.url(&format!("models?limit=1000&after_id={after}")),
                None => self.endpoint.url("models?limit=1000"),
            };
            let v = self.endpoint.get_json(&url, &[("anthropic-version", API_VERSION)]).await?;
            let page: Vec<String> = v["data"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["id"].as_str().map(str::to_owned))
                .collect();
            let next = v["last_id"].as_str().map(str::to_owned).or_else(|| page.last().cloned());
            ids.extend(page);
            match next {
                // Ids are plain tokens; one that would need escaping in a URL ends the listing.
                Some(next)
                    if v["has_more"].as_bool() == Some(true)
                        && after.as_ref() != Some(&next)
                        && next.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)) =>
                {
                    after = Some(next);
                }
                _ => break,
            }
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }
}

impl Provider for Anthropic {
    fn kind(&self) -> &'static str {
        API
    }

    fn list_models(&self) -> futures::future::BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(self.models())
    }

    fn stream(&self, request: ProviderRequest) -> ProviderStream {
        let body = request_body(&request, self.endpoint.origin()).to_string();
        let url = self.endpoint.url("messages");
        let parser = EventParser::for_origin(self.endpoint.origin());
        let model = request.model;
        self.endpoint
            .stream(&url, &[("anthropic-version", API_VERSION)], body, parser)
            .map(move |item| item.map_err(|e| with_model(e, &model)))
            .boxed()
    }
}

/// `max_tokens` for `model`: see the module docs.
pub fn max_tokens_for(model: &str) -> u64 {
    let m = model.to_ascii_lowercase();
    let claude_3 = ["claude-3-opus", "claude-3-sonnet", "claude-3-haiku"].iter().any(|p| m.starts_with(p));
    if claude_3 { CLAUDE_3_MAX_TOKENS } else { DEFAULT_MAX_TOKENS }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Whether the API would refuse `text` as a text block (it refuses empty and blank ones).
fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// A call id the API accepts (`^[a-zA-Z0-9_-]+$`). Ids from other providers (history made with
/// another profile) may hold other characters; they are rewritten the same way on the `tool_use`
/// and its `tool_result`, with a hash of the original so two ids never become one.
pub fn wire_call_id(id: &str) -> String {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        return id.to_owned();
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let clean: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).take(48).collect();
    format!("{clean}_{hash:016x}")
}

/// The `input` object of a `tool_use` block, or `None` when the arguments are not a JSON object
/// (then `{}` is sent; see the module docs). Blank arguments are an empty object.
fn call_input(arguments: &str) -> Option<Map<String, Value>> {
    if blank(arguments) {
        return Some(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// Appends `block` to the last message when it has `role`, else starts a message.
fn push_block(messages: &mut Vec<(&'static str, Vec<Value>)>, role: &'static str, block: Value) {
    match messages.last_mut() {
        Some((r, blocks)) if *r == role => blocks.push(block),
        _ => messages.push((role, vec![block])),
    }
}

/// The kept thinking blocks of an assistant message made by this API at `origin`.
fn thinking_blocks<'a>(state: Option<&'a ProviderState>, origin: &str) -> &'a [Value] {
    ProviderState::for_endpoint(state, API, origin)
        .and_then(|data| data["blocks"].as_array())
        .map_or(&[], Vec::as_slice)
}

/// `thinking` for this request, or `None` to leave thinking off (see the module docs).
fn thinking(request: &ProviderRequest, origin: &str) -> Option<u32> {
    let budget = request.options.budget().filter(|b| *b > 0)?;
    if matches!(request.tool_choice, ToolChoice::Required | ToolChoice::OneOf(_) | ToolChoice::Named(_))
        && !request.tools.is_empty()
    {
        return None;
    }
    let last_assistant = request.messages.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, state, .. } => Some((tool_calls, state)),
        _ => None,
    });
    if let Some((calls, state)) = last_assistant
        && !calls.is_empty()
        && thinking_blocks(state.as_ref(), origin).is_empty()
    {
        return None;
    }
    Some(budget.max(MIN_THINKING_BUDGET))
}

/// The JSON body of a streamed Messages request to the endpoint at `origin` (whose kept thinking
/// blocks go back; any other endpoint's are dropped).
pub fn request_body(request: &ProviderRequest, origin: &str) -> Value {
    // Tool-call arguments that had to be replaced by `{}`, by wire id: their tool results say so.
    let mut replaced: BTreeMap<String, &str> = BTreeMap::new();
    let mut used_tools: Vec<&str> = Vec::new();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::with_capacity(request.messages.len());
    for m in &request.messages {
        match m {
            Message::User { text } => {
                if !blank(text) {
                    push_block(&mut messages, "user", json!({"type": "text", "text": text}));
                }
            }
            Message::Assistant { text, tool_calls, state } => {
                for block in thinking_blocks(state.as_ref(), origin) {
                    push_block(&mut messages, "assistant", block.clone());
                }
                if !blank(text) {
                    push_block(&mut messages, "assistant", json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let id = wire_call_id(&call.id);
                    let input = call_input(&call.arguments).unwrap_or_else(|| {
                        replaced.insert(id.clone(), call.arguments.as_str());
                        Map::new()
                    });
                    if !used_tools.contains(&call.name.as_str()) {
                        used_tools.push(&call.name);
                    }
                    push_block(
                        &mut messages,
                        "assistant",
                        json!({"type": "tool_use", "id": id, "name": call.name, "input": input}),
                    );
                }
            }
            Message::Tool { call_id, content, is_error, images, .. } => {
                let id = wire_call_id(call_id);
                let mut content = content.clone();
                if let Some(raw) = replaced.get(&id)
                    && !content.contains(raw)
                {
                    let shown: String = raw.chars().take(2000).collect();
                    content.push_str(&format!(
                        "\n\n(The arguments of this call were not a JSON object and are shown to you as {{}}; what you sent: {shown})"
                    ));
                }
                let mut block = json!({"type": "tool_result", "tool_use_id": id});
                // The API refuses an empty text block inside a result too; no content is allowed.
                if images.is_empty() {
                    if !blank(&content) {
                        block["content"] = json!(content);
                    }
                } else {
                    // Images go back as image blocks of the result, after its text.
                    let mut blocks: Vec<Value> = Vec::new();
                    if !blank(&content) {
                        blocks.push(json!({"type": "text", "text": content}));
                    }
                    blocks.extend(images.iter().map(|i| {
                        json!({"type": "image", "source": {"type": "base64", "media_type": i.mime_type, "data": i.data}})
                    }));
                    block["content"] = Value::Array(blocks);
                }
                if *is_error {
                    block["is_error"] = json!(true);
                }
                push_block(&mut messages, "user", block);
            }
        }
    }
    // A user message that answers tool calls must begin with its tool_result blocks; a person's
    // text merged into it (a question asked after an interrupted round) goes after them.
    for (role, blocks) in &mut messages {
        if *role == "user" {
            blocks.sort_by_key(|b| b["type"] != "tool_result");
        }
    }
    if let Some(last) = messages.last_mut().and_then(|(_, blocks)| blocks.last_mut()) {
        last["cache_control"] = ephemeral();
    }
    let mut max_tokens = request.options.max_output_tokens.map_or_else(|| max_tokens_for(&request.model), u64::from);
    let thinking = thinking(request, origin);
    if let Some(budget) = thinking {
        // The budget is part of max_tokens and must stay below it.
        max_tokens = max_tokens.max(u64::from(budget) + max_tokens_for(&request.model).min(4096));
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": max_tokens,
        "stream": true,
        "messages": messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect::<Vec<_>>(),
    });
    if let Some(budget) = thinking {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    } else if let Some(t) = request.options.temperature {
        // Anthropic's range is 0 to 1, and newer models refuse temperature and top_p together;
        // while Claude thinks it takes neither.
        body["temperature"] = json!(t.min(1.0));
    } else if let Some(p) = request.options.top_p {
        body["top_p"] = json!(p);
    }
    if let Some(system) = request.system.as_deref().filter(|s| !blank(s)) {
        body["system"] = json!([{"type": "text", "text": system, "cache_control": ephemeral()}]);
    }
    let (mut tools, choice): (Vec<Value>, Option<Value>) = if request.tools.is_empty() {
        // The API refuses a history with tool blocks and no tools: declare the used ones, unusable.
        let tools: Vec<Value> = used_tools
            .iter()
            .map(|name| {
                json!({"name": name, "description": "Not available in this request.", "input_schema": {"type": "object"}})
            })
            .collect();
        let choice = (!tools.is_empty()).then(|| json!({"type": "none"}));
        (tools, choice)
    } else {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                let mut schema = match &t.parameters {
                    Value::Object(map) => Value::Object(map.clone()),
                    _ => json!({}),
                };
                // The API requires an object schema and says so only by refusing the request.
                if schema.get("type").is_none() {
                    schema["type"] = json!("object");
                }
                let mut tool = json!({"name": t.name, "input_schema": schema});
                if !blank(&t.description) {
                    tool["description"] = json!(t.description);
                }
                tool
            })
            .collect();
        let choice = match &request.tool_choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            // Tools stay declared: they are part of the cached prefix, and history may use them.
            ToolChoice::None => json!({"type": "none"}),
            // `any` is "call one of the offered tools"; OneOf offers exactly the forced ones.
            ToolChoice::Required | ToolChoice::OneOf(_) => json!({"type": "any"}),
            // One forced tool: one call of it, not several in parallel.
            ToolChoice::Named(name) => json!({"type": "tool", "name": name, "disable_parallel_tool_use": true}),
        };
        (tools, Some(choice))
    };
    if let Some(last) = tools.last_mut() {
        last["cache_control"] = ephemeral();
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    if let Some(choice) = choice {
        body["tool_choice"] = choice;
    }
    body
}

/// One content block of the response being assembled, by its index.
enum Block {
    Text,
    /// Thinking text and its signature, kept to be sent back.
    Thinking {
        thinking: String,
        signature: String,
    },
    /// Redacted thinking: opaque, kept to be sent back.
    Redacted(Value),
    ToolUse {
        id: String,
        name: String,
        /// The `input` of `content_block_start`, used when no `input_json_delta` follows.
        start_input: Option<Value>,
        json: String,
        got_delta: bool,
        text_chars_before: usize,
    },
    /// Server tools and block types this module does not know.
    Other,
}

/// Assembles a Messages event stream into canonical events. Pure: fed one SSE event (its name and
/// data) at a time.
///
/// Tool calls are assembled per content-block index and emitted when their block stops, carrying
/// the response's text length at the block's start. A call whose JSON does not parse, or that has
/// no id or name, becomes a [`ProviderEvent::MalformedToolCall`], which the loop answers with an
/// error and never runs.
#[derive(Default)]
pub struct EventParser {
    blocks: BTreeMap<u64, Block>,
    /// Call ids emitted so far, to keep generated ones unique.
    ids: Vec<String>,
    calls: usize,
    text_chars: usize,
    usage: Usage,
    saw_usage: bool,
    stop: Option<StopReason>,
    message_id: Option<String>,
    /// Signed thinking blocks, by index, to be sent back.
    kept: BTreeMap<u64, Value>,
    /// The endpoint's origin, which the kept blocks are tagged with.
    origin: String,
    done: bool,
}

impl EventParser {
    /// A parser for one response.
    pub fn new() -> Self {
        Self::default()
    }

    /// A parser for one response from the endpoint at `origin`.
    pub fn for_origin(origin: &str) -> Self {
        Self { origin: origin.to_owned(), ..Self::default() }
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
        const KNOWN: &[&str] = &[
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
            "ping",
            "error",
        ];
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            // Unknown events may carry anything; they are ignored, as the API's versioning asks.
            Err(_) if !KNOWN.contains(&event) => return,
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
        match kind {
            "message_start" => {
                let message = &v["message"];
                if let Some(id) = message["id"].as_str() {
                    self.message_id = Some(id.to_owned());
                }
                self.read_usage(&message["usage"]);
            }
            "content_block_start" => self.block_start(&v, out),
            "content_block_delta" => self.block_delta(&v, out),
            "content_block_stop" => {
                if let Some(index) = v["index"].as_u64()
                    && let Some(block) = self.blocks.remove(&index)
                {
                    self.close(index, block, out);
                }
            }
            "message_delta" => {
                if let Some(reason) = v["delta"]["stop_reason"].as_str() {
                    self.stop = Some(stop_reason(reason));
                }
                self.read_usage(&v["usage"]);
            }
            "message_stop" => self.finish_into(out),
            "ping" => out.push_back(Ok(ProviderEvent::KeepAlive)),
            "error" => {
                self.done = true;
                out.push_back(Err(crate::classify::stream_error(who, data)));
            }
            _ => {}
        }
    }

    /// Usage counts are cumulative: `message_start` has the input, `message_delta` the output
    /// (and, from newer servers, the input again). A count that is present replaces the old one.
    fn read_usage(&mut self, u: &Value) {
        if !u.is_object() {
            return;
        }
        self.saw_usage = true;
        let n = |k: &str| u[k].as_u64();
        if n("input_tokens").is_some()
            || n("cache_read_input_tokens").is_some()
            || n("cache_creation_input_tokens").is_some()
        {
            let input = n("input_tokens").unwrap_or(0);
            let read = n("cache_read_input_tokens").unwrap_or(0);
            let written = n("cache_creation_input_tokens").unwrap_or(0);
            // Anthropic's input_tokens excludes cached and cache-written tokens; Usage counts all.
            self.usage.prompt_tokens = input + read + written;
            self.usage.cached_tokens = read;
            self.usage.cache_write_tokens = written;
        }
        if let Some(output) = n("output_tokens") {
            self.usage.completion_tokens = output;
        }
    }

    fn block_start(&mut self, v: &Value, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        let Some(index) = v["index"].as_u64() else { return };
        let b = &v["content_block"];
        let block = match b["type"].as_str().unwrap_or("") {
            "text" => Block::Text,
            "thinking" => Block::Thinking {
                thinking: b["thinking"].as_str().unwrap_or("").to_owned(),
                signature: b["signature"].as_str().unwrap_or("").to_owned(),
            },
            "redacted_thinking" => Block::Redacted(b.clone()),
            "tool_use" => Block::ToolUse {
                id: b["id"].as_str().unwrap_or("").to_owned(),
                name: b["name"].as_str().unwrap_or("").to_owned(),
                start_input: b.get("input").filter(|i| i.as_object().is_some_and(|o| !o.is_empty())).cloned(),
                json: String::new(),
                got_delta: false,
                text_chars_before: self.text_chars,
            },
            _ => Block::Other,
        };
        // A block may start with content of its own (the API sends it empty, others may not).
        let start_text = match &block {
            Block::Text => b["text"].as_str(),
            Block::Thinking { .. } => b["thinking"].as_str(),
            _ => None,
        };
        if let Some(text) = start_text.filter(|t| !t.is_empty()) {
            self.emit_text(matches!(block, Block::Text), text.to_owned(), out);
        }
        self.blocks.insert(index, block);
    }

    fn emit_text(&mut self, visible: bool, text: String, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        if visible {
            self.text_chars += char_len(&text);
            out.push_back(Ok(ProviderEvent::TextDelta(text)));
        } else {
            out.push_back(Ok(ProviderEvent::ReasoningDelta(text)));
        }
    }

    fn block_delta(&mut self, v: &Value, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        let Some(index) = v["index"].as_u64() else { return };
        let d = &v["delta"];
        let piece = |k: &str| d[k].as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        match (d["type"].as_str().unwrap_or(""), self.blocks.get_mut(&index)) {
            ("text_delta", Some(Block::Text) | None) => {
                if let Some(text) = piece("text") {
                    self.emit_text(true, text, out);
                }
            }
            ("thinking_delta", Some(Block::Thinking { thinking, .. })) => {
                if let Some(text) = piece("thinking") {
                    thinking.push_str(&text);
                    self.emit_text(false, text, out);
                }
            }
            ("thinking_delta", None) => {
                if let Some(text) = piece("thinking") {
                    self.emit_text(false, text, out);
                }
            }
            ("signature_delta", Some(Block::Thinking { signature, .. })) => {
                signature.push_str(d["signature"].as_str().unwrap_or(""));
            }
            ("input_json_delta", Some(Block::ToolUse { json, got_delta, .. })) => {
                *got_delta = true;
                json.push_str(d["partial_json"].as_str().unwrap_or(""));
            }
            _ => {}
        }
    }

    fn close(&mut self, index: u64, block: Block, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        let (id, name, start_input, json, got_delta, text_chars_before) = match block {
            Block::ToolUse { id, name, start_input, json, got_delta, text_chars_before } => {
                (id, name, start_input, json, got_delta, text_chars_before)
            }
            // Unsigned thinking cannot be sent back (the API would refuse it); it stays reasoning.
            Block::Thinking { thinking, signature } => {
                if !signature.is_empty() {
                    self.kept.insert(index, json!({"type": "thinking", "thinking": thinking, "signature": signature}));
                }
                return;
            }
            Block::Redacted(block) => {
                if block["data"].as_str().is_some_and(|d| !d.is_empty()) {
                    self.kept.insert(index, json!({"type": "redacted_thinking", "data": block["data"]}));
                }
                return;
            }
            Block::Text | Block::Other => return,
        };
        let mut problem = None;
        let arguments = if got_delta {
            if blank(&json) { "{}".to_owned() } else { json }
        } else {
            start_input.map_or_else(|| "{}".to_owned(), |i| i.to_string())
        };
        match serde_json::from_str::<Value>(&arguments) {
            Ok(Value::Object(_)) => {}
            Ok(_) => problem = Some("its input is not a JSON object".to_owned()),
            Err(e) => problem = Some(format!("its input is not valid JSON ({e})")),
        }
        if name.is_empty() {
            problem = Some("it has no tool name".to_owned());
        }
        let id = if id.is_empty() || self.ids.contains(&id) {
            problem.get_or_insert_with(|| "it has no call id of its own".to_owned());
            let mut n = self.calls;
            while self.ids.contains(&format!("toolu_{n}")) {
                n += 1;
            }
            format!("toolu_{n}")
        } else {
            id
        };
        self.ids.push(id.clone());
        self.calls += 1;
        let call = ToolCall { id, name, arguments };
        out.push_back(Ok(match problem {
            None => ProviderEvent::ToolCall { call, text_chars_before },
            Some(problem) => ProviderEvent::MalformedToolCall { call, text_chars_before, problem },
        }));
    }

    fn finish_into(&mut self, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        self.done = true;
        // Blocks that never saw their stop event are complete as far as the message is.
        for (index, block) in std::mem::take(&mut self.blocks) {
            self.close(index, block, out);
        }
        if self.saw_usage {
            out.push_back(Ok(ProviderEvent::Usage(self.usage)));
        }
        if !self.kept.is_empty() {
            let blocks: Vec<Value> = std::mem::take(&mut self.kept).into_values().collect();
            out.push_back(Ok(ProviderEvent::State(ProviderState {
                api: API.to_owned(),
                origin: self.origin.clone(),
                data: json!({ "blocks": blocks }),
            })));
        }
        let reason = match self.stop.take() {
            Some(StopReason::Stop) | None if self.calls > 0 => StopReason::ToolCalls,
            Some(r) => r,
            None => StopReason::Stop,
        };
        out.push_back(Ok(ProviderEvent::Finish { reason, response_id: self.message_id.take() }));
    }
}

/// The canonical reason for a `stop_reason`.
pub fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::Stop,
        "tool_use" => StopReason::ToolCalls,
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "refusal" => StopReason::ContentFilter,
        other => StopReason::Other(other.to_owned()),
    }
}

/// Names the model in a 404, which the status alone cannot tell from a wrong base URL.
fn with_model(mut error: ProviderError, model: &str) -> ProviderError {
    if error.status == Some(404) {
        error.message = format!(
            "{} The model asked for was '{model}'; the model list in Settings shows the ones this key can use.",
            error.message
        );
    }
    error
}

/// The body may end without `message_stop`: complete if the stop reason was seen, else an error.
impl sse::Parser for EventParser {
    fn push(&mut self, who: &str, event: &str, data: &str, out: &mut sse::Decided) {
        EventParser::push(self, who, event, data, out);
    }
    fn is_done(&self) -> bool {
        EventParser::is_done(self)
    }
    // A cut after the stop reason loses nothing but the closing event.
    fn has_finished(&self) -> bool {
        self.stop.is_some()
    }
    fn finish(&mut self, out: &mut sse::Decided) {
        self.finish_into(out);
    }
    fn fail(&mut self) {
        self.done = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sse::Parser as _;
    use switchboard_core::provider::ToolSpec;
    use switchboard_core::{GenerationOptions, ReasoningEffort};

    type Out = Vec<Result<ProviderEvent, ProviderError>>;

    /// Feeds `(event, data)` pairs and ends the stream.
    fn feed(events: &[(&str, String)]) -> Out {
        let mut p = EventParser::new();
        let mut out = VecDeque::new();
        for (name, data) in events {
            p.push("P", name, data, &mut out);
        }
        p.end("P", &mut out);
        out.into_iter().collect()
    }

    fn ev(data: Value) -> (&'static str, String) {
        let name = match data["type"].as_str().unwrap() {
            "message_start" => "message_start",
            "content_block_start" => "content_block_start",
            "content_block_delta" => "content_block_delta",
            "content_block_stop" => "content_block_stop",
            "message_delta" => "message_delta",
            "message_stop" => "message_stop",
            "ping" => "ping",
            "error" => "error",
            _ => "unknown",
        };
        (name, data.to_string())
    }

    fn start(id: &str, input_tokens: u64) -> (&'static str, String) {
        ev(json!({"type":"message_start","message":{"id":id,"type":"message","role":"assistant","content":[],
            "model":"m","stop_reason":null,"usage":{"input_tokens":input_tokens,"output_tokens":1,
            "cache_read_input_tokens":4,"cache_creation_input_tokens":2}}}))
    }
    fn text_start(i: u64) -> (&'static str, String) {
        ev(json!({"type":"content_block_start","index":i,"content_block":{"type":"text","text":""}}))
    }
    fn text(i: u64, t: &str) -> (&'static str, String) {
        ev(json!({"type":"content_block_delta","index":i,"delta":{"type":"text_delta","text":t}}))
    }
    fn tool_start(i: u64, id: &str, name: &str) -> (&'static str, String) {
        ev(
            json!({"type":"content_block_start","index":i,"content_block":{"type":"tool_use","id":id,"name":name,"input":{}}}),
        )
    }
    fn json_delta(i: u64, partial: &str) -> (&'static str, String) {
        ev(json!({"type":"content_block_delta","index":i,"delta":{"type":"input_json_delta","partial_json":partial}}))
    }
    fn stop(i: u64) -> (&'static str, String) {
        ev(json!({"type":"content_block_stop","index":i}))
    }
    fn message_delta(reason: &str, output: u64) -> (&'static str, String) {
        ev(
            json!({"type":"message_delta","delta":{"stop_reason":reason,"stop_sequence":null},"usage":{"output_tokens":output}}),
        )
    }
    fn message_stop() -> (&'static str, String) {
        ev(json!({"type":"message_stop"}))
    }

    fn ok(out: Out) -> Vec<ProviderEvent> {
        out.into_iter().map(|e| e.unwrap_or_else(|e| panic!("unexpected error: {e}"))).collect()
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
    fn text_then_a_tool_call_carries_the_text_length_in_chars_at_the_blocks_start() {
        let args = r#"{"tz":"Asia/東京","note":"🙂"}"#;
        let before = "Let me check 🕐 時間";
        for (a, b) in cuts(args) {
            for (t1, t2) in cuts(before) {
                let out = ok(feed(&[
                    start("msg_1", 10),
                    text_start(0),
                    text(0, t1),
                    text(0, t2),
                    stop(0),
                    tool_start(1, "toolu_1", "get_time"),
                    json_delta(1, ""),
                    json_delta(1, a),
                    json_delta(1, b),
                    stop(1),
                    message_delta("tool_use", 7),
                    message_stop(),
                ]));
                assert_eq!(texts(&out), before);
                let got = calls(&out);
                assert_eq!(got.len(), 1);
                assert_eq!(
                    got[0].0,
                    ToolCall { id: "toolu_1".into(), name: "get_time".into(), arguments: args.into() }
                );
                assert_eq!(got[0].1, before.chars().count(), "offset in chars, not bytes");
                assert_eq!(got[0].2, None);
                assert_eq!(
                    out[out.len() - 2],
                    ProviderEvent::Usage(Usage {
                        prompt_tokens: 16,
                        completion_tokens: 7,
                        reasoning_tokens: 0,
                        cached_tokens: 4,
                        cache_write_tokens: 2
                    }),
                    "input counts uncached, written and read tokens; cached counts reads, written writes"
                );
                assert_eq!(
                    out.last().unwrap(),
                    &ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: Some("msg_1".into()) }
                );
            }
        }
    }

    #[test]
    fn tool_input_split_inside_escapes_still_assembles() {
        // A surrogate pair written as escapes, cut at every byte of the JSON text.
        let args = r#"{"q":"\ud83d\ude00 \u00e9\n"}"#;
        for i in 0..=args.len() {
            let (a, b) = args.split_at(i);
            let out = ok(feed(&[
                tool_start(0, "toolu_x", "search"),
                json_delta(0, a),
                json_delta(0, b),
                stop(0),
                message_delta("tool_use", 1),
                message_stop(),
            ]));
            let got = calls(&out);
            assert_eq!(got[0].0.arguments, args, "cut at {i}");
            assert_eq!(got[0].2, None, "cut at {i}");
        }
    }

    #[test]
    fn a_call_is_emitted_when_its_block_stops_and_not_before() {
        let mut p = EventParser::new();
        let mut out = VecDeque::new();
        for (name, data) in [tool_start(0, "toolu_1", "f"), json_delta(0, r#"{"a":1}"#)] {
            p.push("P", name, &data, &mut out);
        }
        assert!(out.is_empty(), "{out:?}");
        let (name, data) = stop(0);
        p.push("P", name, &data, &mut out);
        assert!(matches!(out.pop_front(), Some(Ok(ProviderEvent::ToolCall { .. }))));
    }

    #[test]
    fn parallel_tool_use_blocks_are_separate_calls_in_block_order() {
        let out = ok(feed(&[
            text_start(0),
            text(0, "ab"),
            stop(0),
            tool_start(1, "toolu_a", "f"),
            json_delta(1, r#"{"x":"#),
            tool_start(2, "toolu_b", "g"),
            json_delta(2, r#"{"y":"#),
            json_delta(1, "1}"),
            json_delta(2, "2}"),
            stop(1),
            stop(2),
            message_delta("tool_use", 3),
            message_stop(),
        ]));
        let got = calls(&out);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0.id.as_str(), got[0].0.arguments.as_str(), got[0].1), ("toolu_a", r#"{"x":1}"#, 2));
        assert_eq!((got[1].0.id.as_str(), got[1].0.arguments.as_str(), got[1].1), ("toolu_b", r#"{"y":2}"#, 2));
    }

    #[test]
    fn a_tool_use_without_input_deltas_has_empty_object_arguments() {
        let out =
            ok(feed(&[tool_start(0, "toolu_1", "get_time"), stop(0), message_delta("tool_use", 1), message_stop()]));
        assert_eq!(calls(&out)[0].0.arguments, "{}");
        // A server that puts the whole input in the start event.
        let out = ok(feed(&[
            ev(
                json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{"a":1}}}),
            ),
            stop(0),
            message_stop(),
        ]));
        assert_eq!(calls(&out)[0].0.arguments, r#"{"a":1}"#);
        assert!(matches!(out.last(), Some(ProviderEvent::Finish { reason: StopReason::ToolCalls, .. })));
    }

    #[test]
    fn a_tool_use_whose_json_does_not_parse_is_malformed() {
        let out = ok(feed(&[
            tool_start(0, "toolu_1", "f"),
            json_delta(0, r#"{"a":"#),
            stop(0),
            tool_start(1, "toolu_2", "g"),
            json_delta(1, "[1]"),
            stop(1),
            tool_start(2, "", "h"),
            json_delta(2, "{}"),
            stop(2),
            tool_start(3, "toolu_1", ""),
            stop(3),
            message_delta("tool_use", 1),
            message_stop(),
        ]));
        let got = calls(&out);
        assert_eq!(got.len(), 4);
        assert!(got[0].2.as_deref().is_some_and(|p| p.contains("not valid JSON")), "{got:?}");
        assert_eq!(got[0].0.arguments, r#"{"a":"#, "the raw text is kept for the model");
        assert!(got[1].2.as_deref().is_some_and(|p| p.contains("not a JSON object")), "{got:?}");
        assert!(got[2].2.as_deref().is_some_and(|p| p.contains("no call id")), "{got:?}");
        assert!(got[3].2.as_deref().is_some_and(|p| p.contains("no tool name")), "{got:?}");
        let ids: Vec<&str> = got.iter().map(|c| c.0.id.as_str()).collect();
        let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
        assert_eq!(unique.len(), ids.len(), "ids stay unique: {ids:?}");
    }

    #[test]
    fn thinking_is_reasoning_and_its_signature_is_not_text() {
        let out = ok(feed(&[
            ev(json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})),
            ev(
                json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm, 考え"}}),
            ),
            ev(
                json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAh"}}),
            ),
            stop(0),
            ev(
                json!({"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"abc"}}),
            ),
            stop(1),
            text_start(2),
            text(2, "Answer"),
            stop(2),
            message_delta("end_turn", 4),
            message_stop(),
        ]));
        assert_eq!(out[0], ProviderEvent::ReasoningDelta("Hmm, 考え".into()));
        assert_eq!(out[1], ProviderEvent::TextDelta("Answer".into()));
        // The signed blocks are kept, in order and unchanged, just before the finish.
        let ProviderEvent::State(state) = &out[3] else { panic!("{out:?}") };
        assert_eq!((state.api.as_str(), state.origin.as_str()), ("anthropic", ""));
        assert_eq!(
            state.data,
            json!({"blocks": [
                {"type": "thinking", "thinking": "Hmm, 考え", "signature": "EqQBCgIYAh"},
                {"type": "redacted_thinking", "data": "abc"},
            ]})
        );
        assert!(matches!(out.last(), Some(ProviderEvent::Finish { reason: StopReason::Stop, .. })));
        assert_eq!(out.len(), 5, "{out:?}");
    }

    #[test]
    fn unsigned_thinking_is_shown_but_never_kept() {
        let out = ok(feed(&[
            ev(json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"so"}})),
            stop(0),
            message_delta("end_turn", 1),
            message_stop(),
        ]));
        assert_eq!(out[0], ProviderEvent::ReasoningDelta("so".into()));
        assert!(!out.iter().any(|e| matches!(e, ProviderEvent::State(_))), "{out:?}");
    }

    #[test]
    fn pings_are_keep_alives_and_unknown_events_and_deltas_are_ignored() {
        let out = ok(feed(&[
            ("ping", r#"{"type": "ping"}"#.into()),
            ("brand_new_event", "not even json".into()),
            ("brand_new_event", r#"{"type":"brand_new_event","x":1}"#.into()),
            ev(
                json!({"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s","name":"web_search","input":{}}}),
            ),
            ev(json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}})),
            stop(0),
            text_start(1),
            ev(json!({"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{}}})),
            text(1, "ok"),
            stop(1),
            message_delta("end_turn", 1),
            message_stop(),
        ]));
        assert_eq!(out[0], ProviderEvent::KeepAlive);
        assert_eq!(out[1], ProviderEvent::TextDelta("ok".into()));
        assert!(calls(&out).is_empty(), "a server tool is not ours to run");
        assert!(matches!(out.last(), Some(ProviderEvent::Finish { reason: StopReason::Stop, .. })));
    }

    #[test]
    fn error_events_are_classified_and_end_the_stream() {
        let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        let out = feed(&[text_start(0), ("error", overloaded.into()), text(0, "never")]);
        assert_eq!(out.len(), 1, "{out:?}");
        let e = out[0].clone().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Overloaded);
        assert!(e.is_retryable());
        let invalid = r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#;
        let e = feed(&[("error", invalid.into())])[0].clone().unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadRequest);
        assert!(!e.is_retryable());
    }

    #[test]
    fn message_delta_usage_replaces_what_message_start_said() {
        let out = ok(feed(&[
            start("m", 10),
            ev(json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},
                "usage":{"input_tokens":12,"cache_read_input_tokens":100,"cache_creation_input_tokens":30,"output_tokens":9}})),
            message_stop(),
        ]));
        assert_eq!(
            out[0],
            ProviderEvent::Usage(Usage {
                prompt_tokens: 142,
                completion_tokens: 9,
                reasoning_tokens: 0,
                cached_tokens: 100,
                cache_write_tokens: 30,
            })
        );
    }

    #[test]
    fn stop_reasons_map_to_canonical_ones() {
        for (wire, reason) in [
            ("end_turn", StopReason::Stop),
            ("stop_sequence", StopReason::Stop),
            ("max_tokens", StopReason::Length),
            ("refusal", StopReason::ContentFilter),
            ("pause_turn", StopReason::Other("pause_turn".into())),
        ] {
            let out = ok(feed(&[text_start(0), text(0, "x"), stop(0), message_delta(wire, 1), message_stop()]));
            assert_eq!(out.last().unwrap(), &ProviderEvent::Finish { reason, response_id: None }, "{wire}");
        }
    }

    #[test]
    fn a_stream_cut_before_the_stop_reason_is_an_error_and_after_it_is_complete() {
        let out = feed(&[text_start(0), text(0, "par")]);
        assert_eq!(out.last().unwrap().clone().unwrap_err().kind, ErrorKind::Network);
        let out = ok(feed(&[text_start(0), text(0, "all"), stop(0), message_delta("end_turn", 1)]));
        assert!(matches!(out.last(), Some(ProviderEvent::Finish { reason: StopReason::Stop, .. })));
        let out = feed(&[("message_start", "{not json".into())]);
        assert_eq!(out[0].clone().unwrap_err().kind, ErrorKind::Protocol);
    }

    fn request(messages: Vec<Message>, tools: Vec<ToolSpec>, tool_choice: ToolChoice) -> ProviderRequest {
        ProviderRequest {
            model: "claude-sonnet-4-5".into(),
            system: Some("sys".into()),
            messages,
            tools,
            tool_choice,
            options: Default::default(),
        }
    }

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("{name} does"),
            parameters: json!({"type":"object","properties":{}}),
        }
    }

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
    }

    fn result(id: &str, content: &str, is_error: bool) -> Message {
        Message::Tool {
            images: Default::default(),
            call_id: id.into(),
            name: "t".into(),
            content: content.into(),
            is_error,
        }
    }

    #[test]
    fn history_maps_to_alternating_blocks_with_grouped_tool_results() {
        let req = request(
            vec![
                Message::User { text: "hi".into() },
                Message::Assistant {
                    text: "Checking.".into(),
                    tool_calls: vec![call("toolu_1", "a", r#"{"x":1}"#), call("toolu_2", "b", "")],
                    state: None,
                },
                result("toolu_1", "one", false),
                result("toolu_2", "boom", true),
                Message::Assistant { text: "Done.".into(), tool_calls: vec![], state: None },
                Message::User { text: "again".into() },
            ],
            vec![tool("a"), tool("b")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["max_tokens"], 8192);
        assert_eq!(body["stream"], true);
        assert_eq!(body["system"], json!([{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}]));
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 5, "{m:#?}");
        assert_eq!(m[0], json!({"role":"user","content":[{"type":"text","text":"hi"}]}));
        assert_eq!(
            m[1],
            json!({"role":"assistant","content":[
                {"type":"text","text":"Checking."},
                {"type":"tool_use","id":"toolu_1","name":"a","input":{"x":1}},
                {"type":"tool_use","id":"toolu_2","name":"b","input":{}},
            ]})
        );
        assert_eq!(
            m[2],
            json!({"role":"user","content":[
                {"type":"tool_result","tool_use_id":"toolu_1","content":"one"},
                {"type":"tool_result","tool_use_id":"toolu_2","content":"boom","is_error":true},
            ]}),
            "consecutive results are one user message"
        );
        assert_eq!(m[3]["role"], "assistant");
        assert_eq!(
            m[4],
            json!({"role":"user","content":[{"type":"text","text":"again","cache_control":{"type":"ephemeral"}}]}),
            "the last message is a cache breakpoint"
        );
        assert_eq!(body["tool_choice"], json!({"type":"auto"}));
        assert_eq!(
            body["tools"][0],
            json!({"name":"a","description":"a does","input_schema":{"type":"object","properties":{}}})
        );
        assert_eq!(body["tools"][1]["cache_control"], json!({"type":"ephemeral"}), "the last tool is a breakpoint");
        let breakpoints = body.to_string().matches("cache_control").count();
        assert_eq!(breakpoints, 3, "at most 4 are allowed");
    }

    #[test]
    fn same_role_messages_merge_and_blank_text_is_never_sent() {
        let req = request(
            vec![
                Message::User { text: "a".into() },
                Message::User { text: "  ".into() },
                Message::Assistant { text: String::new(), tool_calls: vec![], state: None },
                Message::User { text: "b".into() },
                Message::Assistant { text: " \n".into(), tool_calls: vec![call("c1", "t", "{}")], state: None },
                result("c1", "", false),
                // A question asked after an interrupted round joins the results, after them.
                Message::User { text: "next".into() },
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 3, "{m:#?}");
        assert_eq!(m[0], json!({"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}));
        assert_eq!(m[1], json!({"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"t","input":{}}]}));
        assert_eq!(
            m[2]["content"][0],
            json!({"type":"tool_result","tool_use_id":"c1"}),
            "an empty result has no content"
        );
        assert_eq!(m[2]["content"][1]["text"], "next");
        assert!(!body.to_string().contains(r#""text":"""#));
    }

    #[test]
    fn images_of_a_result_become_image_blocks_after_its_text() {
        let png = switchboard_core::ToolImage::checked("image/png", "iVBORw0KGgo=").unwrap();
        let with_image = Message::Tool {
            call_id: "c1".into(),
            name: "t".into(),
            content: "Here it is.".into(),
            is_error: false,
            images: vec![png],
        };
        let req = request(
            vec![
                Message::Assistant { text: String::new(), tool_calls: vec![call("c1", "t", "{}")], state: None },
                with_image,
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(
            body["messages"][1]["content"][0]["content"],
            json!([
                {"type": "text", "text": "Here it is."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
            ])
        );
    }

    #[test]
    fn tool_results_lead_their_user_message_even_if_text_came_first() {
        let req = request(
            vec![
                Message::Assistant { text: String::new(), tool_calls: vec![call("c1", "t", "{}")], state: None },
                Message::User { text: "hm".into() },
                result("c1", "r", false),
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["messages"][1]["content"][0]["type"], "tool_result");
        assert_eq!(body["messages"][1]["content"][1]["type"], "text");
    }

    #[test]
    fn arguments_that_are_not_an_object_are_sent_as_empty_input_and_quoted_in_the_result() {
        let req = request(
            vec![
                Message::User { text: "go".into() },
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![call("c1", "t", "[1, 2"), call("c2", "t", "[3]")],
                    state: None,
                },
                result("c1", "Invalid JSON arguments for 't'. Arguments received: [1, 2.", true),
                result("c2", "Invalid arguments for 't': not an object.", true),
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["messages"][1]["content"][0]["input"], json!({}));
        assert_eq!(body["messages"][1]["content"][1]["input"], json!({}));
        let results = &body["messages"][2]["content"];
        assert_eq!(
            results[0]["content"], "Invalid JSON arguments for 't'. Arguments received: [1, 2.",
            "a result that already quotes the arguments is unchanged"
        );
        let second = results[1]["content"].as_str().unwrap();
        assert!(
            second.starts_with("Invalid arguments for 't': not an object.") && second.ends_with("what you sent: [3])"),
            "{second}"
        );
    }

    #[test]
    fn call_ids_from_other_apis_are_made_safe_the_same_way_on_both_sides() {
        let req = request(
            vec![
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![call("fc/1.a", "t", "{}"), call("fc/1:a", "t", "{}")],
                    state: None,
                },
                result("fc/1.a", "r1", false),
                result("fc/1:a", "r2", false),
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        let a = body["messages"][0]["content"][0]["id"].as_str().unwrap();
        let b = body["messages"][0]["content"][1]["id"].as_str().unwrap();
        assert_ne!(a, b, "two ids never become one");
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-'), "{a}");
        assert_eq!(body["messages"][1]["content"][0]["tool_use_id"], a);
        assert_eq!(body["messages"][1]["content"][1]["tool_use_id"], b);
        assert_eq!(wire_call_id("toolu_01AbC-x"), "toolu_01AbC-x");
    }

    #[test]
    fn tool_choice_maps_to_the_apis_forcing() {
        let mut req = request(vec![Message::User { text: "q".into() }], vec![tool("a"), tool("b")], ToolChoice::Auto);
        for (choice, wire) in [
            (ToolChoice::Auto, json!({"type":"auto"})),
            (ToolChoice::None, json!({"type":"none"})),
            (ToolChoice::Required, json!({"type":"any"})),
            (ToolChoice::OneOf(vec!["a".into(), "b".into()]), json!({"type":"any"})),
            (ToolChoice::Named("a".into()), json!({"type":"tool","name":"a","disable_parallel_tool_use":true})),
        ] {
            req.tool_choice = choice;
            let body = request_body(&req, ORIGIN);
            assert_eq!(body["tool_choice"], wire);
            assert_eq!(body["tools"].as_array().unwrap().len(), 2, "tools stay declared");
        }
        req.tools.clear();
        let body = request_body(&req, ORIGIN);
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "no tools, no tool_choice");
    }

    #[test]
    fn a_history_with_calls_and_no_tools_offered_declares_the_used_tools_unusable() {
        let req = request(
            vec![
                Message::User { text: "q".into() },
                Message::Assistant { text: String::new(), tool_calls: vec![call("c1", "get_time", "{}")], state: None },
                result("c1", "noon", false),
            ],
            vec![],
            ToolChoice::None,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["tools"][0]["name"], "get_time");
        assert_eq!(body["tools"][0]["input_schema"], json!({"type":"object"}));
        assert_eq!(body["tool_choice"], json!({"type":"none"}));
    }

    #[test]
    fn schemas_without_a_type_become_objects_and_max_tokens_fits_the_model() {
        let mut t = tool("a");
        t.parameters = json!({"properties":{"x":{"type":"string"}}});
        t.description = String::new();
        let mut req = request(vec![Message::User { text: "q".into() }], vec![t], ToolChoice::Auto);
        req.system = Some("   ".into());
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        assert!(body["tools"][0].get("description").is_none());
        assert!(body.get("system").is_none(), "a blank system prompt is not sent");
        assert_eq!(max_tokens_for("claude-3-haiku-20240307"), 4096);
        assert_eq!(max_tokens_for("claude-3-5-haiku-latest"), 8192);
        assert_eq!(max_tokens_for("claude-opus-4-1"), 8192);
    }

    #[test]
    fn a_404_names_the_model() {
        let e = ProviderError::new(ErrorKind::NotFound, "P has no such model (404): model: x.").with_status(404);
        assert!(with_model(e, "claude-x").message.contains("'claude-x'"));
        let e = ProviderError::new(ErrorKind::Server, "boom").with_status(500);
        assert_eq!(with_model(e, "claude-x").message, "boom");
    }

    const ORIGIN: &str = "https://api.anthropic.com";

    fn signed(thinking: &str, origin: &str) -> Option<ProviderState> {
        Some(ProviderState {
            api: "anthropic".into(),
            origin: origin.into(),
            data: json!({"blocks": [{"type": "thinking", "thinking": thinking, "signature": "sig"}]}),
        })
    }

    fn thinking_request(messages: Vec<Message>, tool_choice: ToolChoice) -> ProviderRequest {
        let mut req = request(messages, vec![tool("t")], tool_choice);
        req.model = "claude-sonnet-4-5".into();
        req.options.thinking_budget = Some(4000);
        req
    }

    #[test]
    fn kept_thinking_goes_back_first_and_only_to_its_own_endpoint() {
        let round = |origin: &str| {
            vec![
                Message::User { text: "go".into() },
                Message::Assistant {
                    text: "Let me check.".into(),
                    tool_calls: vec![call("toolu_1", "t", "{}")],
                    state: signed("I should call t.", origin),
                },
                result("toolu_1", "ok", false),
            ]
        };
        let body = request_body(&thinking_request(round(ORIGIN), ToolChoice::Auto), ORIGIN);
        let content = &body["messages"][1]["content"];
        assert_eq!(content[0], json!({"type": "thinking", "thinking": "I should call t.", "signature": "sig"}));
        assert_eq!(content[1]["type"], "text");
        assert_eq!(content[2]["type"], "tool_use");
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 4000}));
        assert!(body["max_tokens"].as_u64().unwrap() > 4000, "max_tokens stays above the budget");

        // Another endpoint's blocks are dropped, and then thinking must stay off: the API demands
        // that an assistant message with tool calls start with thinking when it is on.
        let body = request_body(&thinking_request(round("https://gateway.example"), ToolChoice::Auto), ORIGIN);
        assert_eq!(body["messages"][1]["content"][0]["type"], "text");
        assert!(body.get("thinking").is_none(), "{body:#}");
    }

    #[test]
    fn thinking_is_off_when_a_tool_is_forced_and_follows_the_profiles_limits() {
        let first = vec![Message::User { text: "go".into() }];
        let body = request_body(&thinking_request(first.clone(), ToolChoice::Named("t".into())), ORIGIN);
        assert!(body.get("thinking").is_none(), "the API refuses thinking with a forced tool");
        let body = request_body(&thinking_request(first.clone(), ToolChoice::OneOf(vec!["t".into()])), ORIGIN);
        assert!(body.get("thinking").is_none());

        // An effort maps to a budget; a small budget is raised to the API's minimum.
        let mut req = thinking_request(first.clone(), ToolChoice::Auto);
        req.options = GenerationOptions { reasoning_effort: Some(ReasoningEffort::High), ..Default::default() };
        assert_eq!(request_body(&req, ORIGIN)["thinking"]["budget_tokens"], 24576);
        req.options =
            GenerationOptions { thinking_budget: Some(10), max_output_tokens: Some(500), ..Default::default() };
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["thinking"]["budget_tokens"], 1024);
        assert!(body["max_tokens"].as_u64().unwrap() > 1024);
        // Sampling: temperature capped at 1, never with top_p, neither while thinking.
        req.options = GenerationOptions { temperature: Some(1.4), top_p: Some(0.9), ..Default::default() };
        let body = request_body(&req, ORIGIN);
        assert_eq!((body["temperature"].clone(), body.get("top_p")), (json!(1.0), None));
        req.options = GenerationOptions { top_p: Some(0.9), ..Default::default() };
        assert_eq!(request_body(&req, ORIGIN)["top_p"], json!(0.9));
        req.options = GenerationOptions { temperature: Some(0.2), thinking_budget: Some(2000), ..Default::default() };
        let body = request_body(&req, ORIGIN);
        assert!(body.get("thinking").is_some() && body.get("temperature").is_none());
        // A budget of 0 is thinking off; the output limit alone is max_tokens.
        req.options =
            GenerationOptions { thinking_budget: Some(0), max_output_tokens: Some(500), ..Default::default() };
        let body = request_body(&req, ORIGIN);
        assert!(body.get("thinking").is_none());
        assert_eq!(body["max_tokens"], 500);
    }
}
