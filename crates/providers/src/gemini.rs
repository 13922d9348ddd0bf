//! Google Gemini's native API: `POST {base}/models/{model}:streamGenerateContent?alt=sse`.
//!
//! The key goes only into the `x-goog-api-key` header (Gemini also takes `?key=` in the URL,
//! which would put it into every error that quotes the URL, proxy log and redirect).
//!
//! Request mapping ([`request_body`]): the system prompt is `systemInstruction`; the history is
//! `contents` with roles `user` and `model`; an assistant turn is its text then one
//! `functionCall` part per call (`args` is the call's arguments as a JSON object); the results of
//! a turn's calls are `functionResponse` parts in one `user` content right after it, in the order
//! of the calls (Gemini matches them by position and name, and refuses a turn whose number of
//! responses differs from its number of calls, so a call without a result is answered as one that
//! has none); adjacent contents of one role are merged, and no empty part is sent. Parameters
//! are converted to the schema subset Gemini accepts by [`crate::gemini_schema`]. Forcing is
//! `toolConfig.functionCallingConfig`: `AUTO`, `NONE`, or `ANY` with `allowedFunctionNames`.
//!
//! Streaming ([`StreamParser`]): every event is a whole `GenerateContentResponse`; function calls
//! arrive whole, usually without an id (one is generated, unique across requests); there is no
//! end sentinel, so the end of the body after a `finishReason` is the end of the answer.
//! A blocked prompt (`promptFeedback.blockReason`) is an error that says what was blocked and why.
//! A blocked answer (`finishReason` SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, ...)
//! ends like a filtered answer of the other APIs, [`StopReason::Filtered`] with what was blocked
//! and why (usage kept); MALFORMED_FUNCTION_CALL is an error that says to ask again. What streamed
//! before is kept by the loop.
//! MAX_TOKENS is a [`StopReason::Length`] stop.
//!
//! Generation options ([`generation_config`]): `generationConfig.maxOutputTokens` is the
//! profile's output limit; `thinkingConfig` is sent only when the profile sets a thinking budget
//! or a reasoning effort (mapped to a budget): `thinkingBudget` is that budget (0 turns thinking
//! off; others are clamped into 128..=32768, the range the thinking models take) with
//! `includeThoughts: true` when it is not 0, so thought summaries stream as reasoning. With
//! neither set, the model's default thinking applies and no `generationConfig` field is sent for
//! it.
//!
//! Thought signatures: thinking models put an opaque `thoughtSignature` on parts of a response
//! (Gemini 3 on the first `functionCall` part of every step that calls functions, and on the last
//! part of one that does not, possibly an empty text part at the end of the stream; 2.5 models
//! on any part, thought parts included), and want each one back unchanged, on the part it came
//! with, when the history is sent again; Gemini 3 refuses a request whose current turn has a
//! function call without its signature. The parser keeps them as the response's
//! [`ProviderState`] (tagged `gemini` and the endpoint's origin), which the loop stores on that
//! iteration's assistant message, in this shape:
//! `{"calls": {"<call id>": "<sig>"}, "text": "<sig>", "thoughts": [{"text": "...", "signature":
//! "<sig>"}]}` (each key only when there is one). `calls` is keyed by the canonical call id this
//! parser gave the call (Gemini's own `id`, or a generated one), so the signature goes back on
//! exactly that `functionCall` part; `text` goes on the message's one text part (the response's
//! text parts, joined); each signed run of thought text goes back as a `thought: true` part with
//! that text, before the rest, as Gemini sent it (thought text is never sent back as visible
//! text, and an unsigned run is not sent at all). State made by another API or another endpoint
//! is ignored: its signatures would be refused there. A text signature whose message has no text
//! and a thought signature on a run without text have no part to go on and are left out.

use crate::endpoint::Endpoint;
use crate::sse;
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use switchboard_core::provider::{GenerationOptions, StopReason};
use switchboard_core::tool::SecretValue;
use switchboard_core::types::char_len;
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ProviderState, ProviderStream,
    ToolCall, ToolChoice, Usage,
};

/// The kind id this module's state is tagged with.
const API: &str = "gemini";

/// The smallest and largest thinking budgets sent (0, thinking off, is sent as is).
pub const THINKING_BUDGET_RANGE: std::ops::RangeInclusive<u32> = 128..=32768;

/// Ids this provider makes up for calls Gemini sent without one start with this; such ids are
/// never sent back to Gemini (it would not know them).
pub const GENERATED_ID_PREFIX: &str = "gemini-call-";

/// At most this many model-list pages are read (a server that always has a next page would
/// otherwise keep the listing going forever).
const MAX_MODEL_PAGES: usize = 20;

/// Configuration of one Gemini endpoint.
#[derive(Clone, Debug)]
pub struct GeminiConfig {
    /// Base URL, e.g. `https://generativelanguage.googleapis.com/v1beta`.
    pub base_url: String,
    /// The API key (from Google AI Studio).
    pub api_key: Option<SecretValue>,
}

/// The Gemini provider.
pub struct Gemini {
    endpoint: Endpoint,
}

impl std::fmt::Debug for Gemini {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gemini").field("base_url", &self.endpoint.base()).finish_non_exhaustive()
    }
}

impl Gemini {
    /// A provider for `config`.
    pub fn new(config: GeminiConfig) -> Result<Self, ProviderError> {
        Ok(Self { endpoint: Endpoint::new(API, &config.base_url, config.api_key)?.named("The Gemini API") })
    }

    fn stream_url(&self, model: &str) -> String {
        self.endpoint.url(&format!("{}:streamGenerateContent?alt=sse", model_path(model)))
    }

    /// The models that can generate content (`GET {base}/models`, every page), sorted, without
    /// the `models/` prefix.
    pub async fn models(&self) -> Result<Vec<String>, ProviderError> {
        let mut names = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_MODEL_PAGES {
            let mut url = self.endpoint.url("models?pageSize=1000");
            if let Some(t) = &token {
                url.push_str("&pageToken=");
                url.push_str(&percent_encode(t));
            }
            let page = self.endpoint.get_json(&url, &[]).await?;
            let (more, next) = models_page(&page);
            names.extend(more);
            match next {
                Some(next) if token.as_deref() != Some(next.as_str()) => token = Some(next),
                _ => break,
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
    }
}

/// One page of `GET /models`: the names of the models that support `generateContent` (without
/// `models/`), and the next page's token.
pub fn models_page(page: &Value) -> (Vec<String>, Option<String>) {
    let names = page["models"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| {
            m["supportedGenerationMethods"].as_array().is_some_and(|ms| ms.iter().any(|x| x == "generateContent"))
        })
        .filter_map(|m| m["name"].as_str())
        .map(|n| n.strip_prefix("models/").unwrap_or(n).to_owned())
        .filter(|n| !n.is_empty())
        .collect();
    let next = page["nextPageToken"].as_str().filter(|t| !t.is_empty()).map(str::to_owned);
    (names, next)
}

/// `text` with every byte outside the URL-safe unreserved set percent-encoded.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The model's resource path: `models/{model}` (a `models/` or `tunedModels/` prefix the person
/// typed is kept), with anything outside the characters model names use percent-encoded.
fn model_path(model: &str) -> String {
    let model = model.trim();
    let path = if model.starts_with("models/") || model.starts_with("tunedModels/") {
        model.to_owned()
    } else {
        format!("models/{model}")
    };
    path.split('/').map(percent_encode).collect::<Vec<_>>().join("/")
}

/// A prefix for the ids of one response's generated calls, unique in this process and across
/// restarts (the store keeps call ids of every turn).
fn id_prefix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{GENERATED_ID_PREFIX}{nanos:x}-{n:x}-")
}

impl Provider for Gemini {
    fn kind(&self) -> &'static str {
        API
    }

    fn list_models(&self) -> futures::future::BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(self.models())
    }

    fn stream(&self, request: ProviderRequest) -> ProviderStream {
        let body = request_body(&request, self.endpoint.origin()).to_string();
        let parser = StreamParser::new(id_prefix(), self.endpoint.origin());
        self.endpoint.stream(&self.stream_url(&request.model), &[], body, parser)
    }
}

/// The JSON body of a `streamGenerateContent` request to the endpoint at `origin` (whose own
/// thought signatures, and only those, go back on their parts).
pub fn request_body(request: &ProviderRequest, origin: &str) -> Value {
    let mut contents: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, parts: Vec<Value>| {
        if parts.is_empty() {
            return;
        }
        match contents.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(parts),
            _ => contents.push((role, parts)),
        }
    };
    let mut messages = request.messages.iter().peekable();
    while let Some(m) = messages.next() {
        match m {
            Message::User { text } => push("user", text_part(text).into_iter().collect()),
            Message::Assistant { text, tool_calls, state } => {
                let signed = ProviderState::for_endpoint(state.as_ref(), API, origin).unwrap_or(&Value::Null);
                let signature = |part: &mut Value, sig: &Value| {
                    if let Some(sig) = sig.as_str().filter(|s| !s.is_empty()) {
                        part["thoughtSignature"] = json!(sig);
                    }
                };
                // Signed thoughts first, where Gemini sent them; unsigned ones are not sent back.
                let mut parts: Vec<Value> = signed["thoughts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| {
                        let text = t["text"].as_str().filter(|t| !t.is_empty())?;
                        let sig = t["signature"].as_str().filter(|s| !s.is_empty())?;
                        Some(json!({"text": text, "thought": true, "thoughtSignature": sig}))
                    })
                    .collect();
                if let Some(mut part) = text_part(text) {
                    signature(&mut part, &signed["text"]);
                    parts.push(part);
                }
                for call in tool_calls {
                    let mut fc = json!({"name": call.name, "args": args_object(&call.arguments)});
                    if let Some(id) = sent_id(&call.id) {
                        fc["id"] = json!(id);
                    }
                    let mut part = json!({"functionCall": fc});
                    signature(&mut part, &signed["calls"][call.id.as_str()]);
                    parts.push(part);
                }
                push("model", parts);
                if tool_calls.is_empty() {
                    continue;
                }
                // The results that follow, in the order of the calls.
                let mut results: Vec<(&str, &str, &str, bool)> = Vec::new();
                // Images of the results follow the responses as inline data of the same turn.
                let mut images: Vec<Value> = Vec::new();
                while let Some(Message::Tool { call_id, name, content, is_error, images: returned }) = messages.peek() {
                    results.push((call_id, name, content, *is_error));
                    images.extend(returned.iter().map(inline_data));
                    messages.next();
                }
                let mut responses = Vec::with_capacity(tool_calls.len());
                for call in tool_calls {
                    let response = match results.iter().position(|r| r.0 == call.id) {
                        Some(i) => {
                            let (_, _, content, is_error) = results.remove(i);
                            function_response(&call.id, &call.name, content, is_error)
                        }
                        None => function_response(&call.id, &call.name, "No result was recorded for this call.", true),
                    };
                    responses.push(response);
                }
                // Results of no call of this turn (a damaged history) still go back, after the rest.
                for (call_id, name, content, is_error) in results {
                    responses.push(function_response(call_id, name, content, is_error));
                }
                responses.extend(images);
                push("user", responses);
            }
            Message::Tool { call_id, name, content, is_error, images } => {
                let mut parts = vec![function_response(call_id, name, content, *is_error)];
                parts.extend(images.iter().map(inline_data));
                push("user", parts);
            }
        }
    }
    let contents: Vec<Value> =
        contents.into_iter().map(|(role, parts)| json!({"role": role, "parts": parts})).collect();
    let mut body = json!({ "contents": contents });
    if let Some(system) = request.system.as_deref().filter(|s| !s.trim().is_empty()) {
        body["systemInstruction"] = json!({"parts": [{"text": system}]});
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut d = json!({"name": t.name});
                if !t.description.trim().is_empty() {
                    d["description"] = json!(t.description);
                }
                if let Some(p) = crate::gemini_schema::function_parameters(&t.parameters) {
                    d["parameters"] = p;
                }
                d
            })
            .collect();
        body["tools"] = json!([{ "functionDeclarations": declarations }]);
        body["toolConfig"] = json!({ "functionCallingConfig": calling_config(&request.tool_choice) });
    }
    if let Some(config) = generation_config(&request.options) {
        body["generationConfig"] = config;
    }
    body
}

/// `generationConfig` for the profile's options, or `None` when they leave everything to the
/// model (see the module docs).
pub fn generation_config(options: &GenerationOptions) -> Option<Value> {
    let mut config = serde_json::Map::new();
    if let Some(max) = options.max_output_tokens {
        config.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(t) = options.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(p) = options.top_p {
        config.insert("topP".into(), json!(p));
    }
    if let Some(budget) = options.budget() {
        let thinking = if budget == 0 {
            json!({"thinkingBudget": 0})
        } else {
            let budget = budget.clamp(*THINKING_BUDGET_RANGE.start(), *THINKING_BUDGET_RANGE.end());
            json!({"thinkingBudget": budget, "includeThoughts": true})
        };
        config.insert("thinkingConfig".into(), thinking);
    }
    (!config.is_empty()).then_some(Value::Object(config))
}

/// `functionCallingConfig` for a tool choice.
pub fn calling_config(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"mode": "AUTO"}),
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Named(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
        ToolChoice::OneOf(names) => json!({"mode": "ANY", "allowedFunctionNames": names}),
    }
}

fn text_part(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"text": text}))
}

/// A call id Gemini gave (sent back so it can match the response); ours are never sent.
fn sent_id(id: &str) -> Option<&str> {
    (!id.is_empty() && !id.starts_with(GENERATED_ID_PREFIX)).then_some(id)
}

/// A call's arguments as the JSON object `args` must be. Arguments that are not an object (from
/// another provider's history, or a model's broken JSON) are passed as text so the model sees
/// what it sent.
fn args_object(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({ "arguments": arguments }),
    }
}

/// An image as an inline-data part.
fn inline_data(image: &switchboard_core::ToolImage) -> Value {
    json!({"inlineData": {"mimeType": image.mime_type, "data": image.data}})
}

fn function_response(call_id: &str, name: &str, content: &str, is_error: bool) -> Value {
    let response = if is_error { json!({"error": content}) } else { json!({"content": content}) };
    let mut fr = json!({"name": name, "response": response});
    if let Some(id) = sent_id(call_id) {
        fr["id"] = json!(id);
    }
    json!({"functionResponse": fr})
}

/// Turns a Gemini event stream into canonical events. Pure: fed one SSE `data` at a time.
pub struct StreamParser {
    id_prefix: String,
    origin: String,
    text_chars: usize,
    calls: usize,
    ids: HashSet<String>,
    finish: Option<StopReason>,
    usage: Option<Usage>,
    response_id: Option<String>,
    /// Thought signatures of function calls, by canonical call id.
    call_signatures: serde_json::Map<String, Value>,
    /// The thought signature of the visible text (the last one, if several parts had one).
    text_signature: Option<String>,
    /// Thought text since the last signed thought part.
    thought_run: String,
    /// Signed runs of thought text: `{"text", "signature"}`.
    thoughts: Vec<Value>,
    done: bool,
}

impl StreamParser {
    /// A parser for one response from the endpoint at `origin` (what its state is tagged with);
    /// generated call ids are `{id_prefix}{n}`.
    pub fn new(id_prefix: impl Into<String>, origin: &str) -> Self {
        Self {
            id_prefix: id_prefix.into(),
            origin: origin.to_owned(),
            text_chars: 0,
            calls: 0,
            ids: HashSet::new(),
            finish: None,
            usage: None,
            response_id: None,
            call_signatures: serde_json::Map::new(),
            text_signature: None,
            thought_run: String::new(),
            thoughts: Vec::new(),
            done: false,
        }
    }

    /// Whether the response is complete (no more data is needed).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The response's thought signatures as its state (see the module docs), if it had any.
    fn state(&mut self) -> Option<ProviderState> {
        let mut data = serde_json::Map::new();
        if !self.call_signatures.is_empty() {
            data.insert("calls".into(), Value::Object(std::mem::take(&mut self.call_signatures)));
        }
        if let Some(sig) = self.text_signature.take() {
            data.insert("text".into(), json!(sig));
        }
        if !self.thoughts.is_empty() {
            data.insert("thoughts".into(), Value::Array(std::mem::take(&mut self.thoughts)));
        }
        (!data.is_empty()).then(|| ProviderState {
            api: API.to_owned(),
            origin: self.origin.clone(),
            data: Value::Object(data),
        })
    }

    /// Handles one event's data, pushing what it completes to `out`.
    pub fn push(&mut self, who: &str, data: &str, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        if self.done {
            return;
        }
        let chunk: Value = match serde_json::from_str(data) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) | Err(_) => {
                let shown: String = data.chars().take(120).collect();
                return self.fail(
                    out,
                    ProviderError::new(ErrorKind::Protocol, format!("{who} sent a malformed chunk: {shown}")),
                );
            }
        };
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            return self.fail(out, stream_error(who, &chunk));
        }
        if self.response_id.is_none() {
            self.response_id = chunk["responseId"].as_str().map(str::to_owned);
        }
        if let Some(u) = chunk.get("usageMetadata").filter(|u| u.is_object()) {
            let n = |k: &str| u[k].as_u64().unwrap_or(0);
            self.usage = Some(Usage {
                prompt_tokens: n("promptTokenCount"),
                // Gemini counts thoughts apart from the answer; canonical output includes them.
                completion_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
                reasoning_tokens: n("thoughtsTokenCount"),
                cached_tokens: n("cachedContentTokenCount"),
                cache_write_tokens: 0,
            });
        }
        if let Some(reason) = chunk["promptFeedback"]["blockReason"].as_str() {
            return self.fail(out, blocked_prompt(who, reason, &chunk["promptFeedback"]));
        }
        let Some(candidate) = chunk["candidates"].as_array().and_then(|c| c.first()) else { return };
        for part in candidate["content"]["parts"].as_array().into_iter().flatten() {
            self.part(part, out);
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            match finish_reason(who, reason, candidate) {
                Ok(Some(r)) => self.finish = Some(r),
                Ok(None) => {}
                Err(e) => self.fail(out, e),
            }
        }
    }

    fn part(&mut self, part: &Value, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        let signature = part["thoughtSignature"].as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        let thought = part["thought"] == Value::Bool(true);
        let text = part["text"].as_str();
        if thought && part.get("functionCall").is_none() {
            // A signed thought part (possibly one with only the signature) closes a run.
            if let Some(text) = text.filter(|t| !t.is_empty()) {
                self.thought_run.push_str(text);
                out.push_back(Ok(ProviderEvent::ReasoningDelta(text.to_owned())));
            }
            if let Some(sig) = &signature {
                let text = std::mem::take(&mut self.thought_run);
                self.thoughts.push(json!({"text": text, "signature": sig}));
            }
            return;
        }
        if let Some(text) = text {
            if !text.is_empty() {
                self.text_chars += char_len(text);
                out.push_back(Ok(ProviderEvent::TextDelta(text.to_owned())));
            }
            // Often on an empty text part that ends the stream.
            if signature.is_some() {
                self.text_signature.clone_from(&signature);
            }
        }
        let Some(fc) = part.get("functionCall").filter(|f| f.is_object()) else { return };
        let id = match fc["id"].as_str().filter(|id| !id.is_empty() && !self.ids.contains(*id)) {
            Some(id) => id.to_owned(),
            None => format!("{}{}", self.id_prefix, self.calls),
        };
        self.calls += 1;
        self.ids.insert(id.clone());
        if let Some(sig) = signature {
            self.call_signatures.insert(id.clone(), json!(sig));
        }
        let name = fc["name"].as_str().unwrap_or_default().to_owned();
        let arguments = match &fc["args"] {
            Value::Null => "{}".to_owned(),
            args => args.to_string(),
        };
        let call = ToolCall { id, name, arguments };
        let text_chars_before = self.text_chars;
        out.push_back(Ok(if call.name.is_empty() {
            ProviderEvent::MalformedToolCall { call, text_chars_before, problem: "it has no tool name".into() }
        } else {
            ProviderEvent::ToolCall { call, text_chars_before }
        }));
    }

    fn fail(&mut self, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>, e: ProviderError) {
        self.done = true;
        out.push_back(Err(e));
    }

    fn finish_into(&mut self, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        self.done = true;
        if let Some(u) = self.usage.take() {
            out.push_back(Ok(ProviderEvent::Usage(u)));
        }
        if let Some(state) = self.state() {
            out.push_back(Ok(ProviderEvent::State(state)));
        }
        // Gemini says STOP after function calls too.
        let reason = match self.finish.take() {
            Some(StopReason::Stop) | None if self.calls > 0 => StopReason::ToolCalls,
            Some(r) => r,
            None => StopReason::Stop,
        };
        out.push_back(Ok(ProviderEvent::Finish { reason, response_id: self.response_id.take() }));
    }
}

/// A finish reason: the canonical stop reason, nothing (unspecified), or the error it means.
fn finish_reason(who: &str, reason: &str, candidate: &Value) -> Result<Option<StopReason>, ProviderError> {
    let said = candidate["finishMessage"]
        .as_str()
        .map(|m| format!(" Gemini said: {}", m.chars().take(300).collect::<String>()))
        .unwrap_or_default();
    // A filtered answer ends like one the other APIs filtered (usage kept), with the reason.
    let blocked = |why: String| {
        Ok(Some(StopReason::Filtered(format!(
            "{who} blocked the answer: {why} (finish reason {reason}). What arrived before is kept; rephrase the request or ask for something else.{said}"
        ))))
    };
    match reason {
        "STOP" => Ok(Some(StopReason::Stop)),
        "MAX_TOKENS" => Ok(Some(StopReason::Length)),
        "FINISH_REASON_UNSPECIFIED" => Ok(None),
        "SAFETY" => blocked(format!("its safety filters flagged it{}", harm_categories(&candidate["safetyRatings"]))),
        "RECITATION" => blocked("it repeated existing material too closely (possibly copyrighted)".into()),
        "BLOCKLIST" => blocked("it contained terms on a blocklist".into()),
        "PROHIBITED_CONTENT" => blocked("it may contain prohibited content".into()),
        "SPII" => blocked("it may contain sensitive personal information".into()),
        "IMAGE_SAFETY" => blocked("a generated image was flagged by its safety filters".into()),
        "LANGUAGE" => Err(ProviderError::new(
            ErrorKind::BadRequest,
            format!("{who} stopped: the answer would be in a language the model does not support.{said}"),
        )),
        "MALFORMED_FUNCTION_CALL" => Err(ProviderError::new(
            ErrorKind::Protocol,
            format!(
                "{who} stopped because the model wrote a malformed function call (finish reason MALFORMED_FUNCTION_CALL). Ask again; if it keeps happening, try another model or fewer tools.{said}"
            ),
        )),
        "UNEXPECTED_TOOL_CALL" | "TOO_MANY_TOOL_CALLS" => Err(ProviderError::new(
            ErrorKind::Protocol,
            format!(
                "{who} stopped the answer: the model's tool calls were refused (finish reason {reason}). Ask again.{said}"
            ),
        )),
        other => Ok(Some(StopReason::Other(other.to_ascii_lowercase()))),
    }
}

/// " (harassment, dangerous content)": the categories rated as likely harmful, if any.
fn harm_categories(ratings: &Value) -> String {
    let names: Vec<String> = ratings
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["blocked"] == Value::Bool(true) || matches!(r["probability"].as_str(), Some("HIGH" | "MEDIUM")))
        .filter_map(|r| r["category"].as_str())
        .map(|c| c.trim_start_matches("HARM_CATEGORY_").replace('_', " ").to_ascii_lowercase())
        .collect();
    if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
}

fn blocked_prompt(who: &str, reason: &str, feedback: &Value) -> ProviderError {
    let why = match reason {
        "SAFETY" => format!("its safety filters flagged it{}", harm_categories(&feedback["safetyRatings"])),
        "BLOCKLIST" => "it contains terms on a blocklist".to_owned(),
        "PROHIBITED_CONTENT" => "it may contain prohibited content".to_owned(),
        "IMAGE_SAFETY" => "an image in it was flagged by its safety filters".to_owned(),
        _ => "for a reason it did not give".to_owned(),
    };
    ProviderError::new(
        ErrorKind::BadRequest,
        format!(
            "{who} blocked the prompt: {why} (block reason {reason}). No answer was generated; rephrase the message (or remove what might have triggered the filter) and send it again."
        ),
    )
}

/// An error object sent inside the stream: classified like the HTTP error its code names.
fn stream_error(who: &str, chunk: &Value) -> ProviderError {
    let body = json!({"error": chunk["error"]}).to_string();
    match chunk["error"]["code"].as_u64().and_then(|c| u16::try_from(c).ok()).filter(|c| (400..600).contains(c)) {
        Some(status) => {
            let e = crate::classify::http_error(who, status, crate::retry_hint::body_hint(&body), &body);
            ProviderError { status: None, ..e }
        }
        None => crate::classify::stream_error(who, &body),
    }
}

/// There is no end sentinel: the body's end after a finish reason is the answer's end; before
/// one, a cut.
impl sse::Parser for StreamParser {
    fn push(&mut self, who: &str, _event: &str, data: &str, out: &mut sse::Decided) {
        StreamParser::push(self, who, data, out);
    }
    fn finish(&mut self, out: &mut sse::Decided) {
        self.finish_into(out);
    }
    fn is_done(&self) -> bool {
        self.done
    }
    // The finish reason and usage may precede a cut; a cut after them loses nothing.
    fn has_finished(&self) -> bool {
        self.finish.is_some()
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

    type Out = Vec<Result<ProviderEvent, ProviderError>>;

    const ORIGIN: &str = "https://generativelanguage.googleapis.com";

    fn state(data: Value) -> ProviderState {
        ProviderState { api: "gemini".into(), origin: ORIGIN.into(), data }
    }

    fn feed(datas: &[&str]) -> Out {
        let mut p = StreamParser::new("g-", ORIGIN);
        let mut out = VecDeque::new();
        for d in datas {
            p.push("G", d, &mut out);
        }
        p.end("G", &mut out);
        out.into_iter().collect()
    }

    /// Feeds a whole SSE body through the event-stream seam's guard split at byte `at`, so every
    /// line, field and UTF-8 character is cut somewhere by one of the calls.
    fn feed_body_split(body: &str, at: usize) -> Out {
        let mut guard = crate::event_stream::Guard::new();
        let mut canonical = Vec::new();
        for piece in [&body.as_bytes()[..at], &body.as_bytes()[at..]] {
            canonical.extend_from_slice(&guard.push(piece).unwrap());
        }
        let canonical = String::from_utf8(canonical).unwrap();
        let mut datas = Vec::new();
        let mut data: Option<String> = None;
        for line in canonical.split('\n') {
            if let Some(d) = line.strip_prefix("data: ") {
                data = Some(match data.take() {
                    Some(prev) => format!("{prev}\n{d}"),
                    None => d.to_owned(),
                });
            } else if line.is_empty()
                && let Some(d) = data.take()
            {
                datas.push(d);
            }
        }
        feed(&datas.iter().map(String::as_str).collect::<Vec<_>>())
    }

    fn chunk(parts: Value) -> String {
        json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}]}).to_string()
    }

    fn finish_chunk(reason: &str, usage: Value) -> String {
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": reason, "index": 0}], "usageMetadata": usage, "responseId": "resp-1"}).to_string()
    }

    fn ok(out: Out) -> Vec<ProviderEvent> {
        out.into_iter().map(|e| e.unwrap_or_else(|e| panic!("error: {e}"))).collect()
    }

    #[test]
    fn text_thoughts_a_call_and_usage_at_every_split_point() {
        let before = "Olá 👋 世界, checking: ";
        let chunks = [
            chunk(json!([{"text": "Let me think…", "thought": true}])),
            chunk(json!([{"text": "Olá 👋 "}])),
            chunk(
                json!([{"text": "世界, checking: "}, {"functionCall": {"name": "get_time", "args": {"timezone": "Asia/Tokyo"}}, "thoughtSignature": "c2ln"}]),
            ),
            finish_chunk(
                "STOP",
                json!({"promptTokenCount": 12, "candidatesTokenCount": 9, "thoughtsTokenCount": 4, "cachedContentTokenCount": 2, "totalTokenCount": 25}),
            ),
        ];
        let body: String = chunks.iter().map(|c| format!("data: {c}\r\n\r\n")).collect();
        let expected = vec![
            ProviderEvent::ReasoningDelta("Let me think…".into()),
            ProviderEvent::TextDelta("Olá 👋 ".into()),
            ProviderEvent::TextDelta("世界, checking: ".into()),
            ProviderEvent::ToolCall {
                call: ToolCall {
                    id: "g-0".into(),
                    name: "get_time".into(),
                    arguments: r#"{"timezone":"Asia/Tokyo"}"#.into(),
                },
                text_chars_before: before.chars().count(),
            },
            ProviderEvent::Usage(Usage {
                prompt_tokens: 12,
                completion_tokens: 13,
                reasoning_tokens: 4,
                cached_tokens: 2,
                cache_write_tokens: 0,
            }),
            ProviderEvent::State(state(json!({"calls": {"g-0": "c2ln"}}))),
            ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: Some("resp-1".into()) },
        ];
        for at in 0..=body.len() {
            assert_eq!(ok(feed_body_split(&body, at)), expected, "split at byte {at}");
        }
        // Text split differently across chunks gives the same offset.
        for cut in 1..before.chars().count() {
            let (a, b): (String, String) = (before.chars().take(cut).collect(), before.chars().skip(cut).collect());
            let events = ok(feed(&[
                &chunk(json!([{"text": a}])),
                &chunk(json!([{"text": b}, {"functionCall": {"name": "f", "args": {}}}])),
                &finish_chunk("STOP", json!({})),
            ]));
            assert!(
                events.iter().any(|e| matches!(e, ProviderEvent::ToolCall { text_chars_before, .. } if *text_chars_before == before.chars().count())),
                "cut at char {cut}: {events:?}"
            );
        }
    }

    #[test]
    fn two_calls_in_one_chunk_get_unique_ids_and_gemini_ids_are_kept() {
        let mut p = StreamParser::new("g-", ORIGIN);
        let mut out = VecDeque::new();
        p.push(
            "G",
            &chunk(json!([
                {"functionCall": {"name": "a", "args": {"x": 1}}, "thoughtSignature": "sig-a"},
                {"functionCall": {"name": "b"}},
                {"functionCall": {"id": "srv-1", "name": "c", "args": {}}},
                {"functionCall": {"id": "srv-1", "name": "d", "args": {}}},
                {"functionCall": {"args": {}}}
            ])),
            &mut out,
        );
        p.push("G", &finish_chunk("STOP", json!({})), &mut out);
        p.end("G", &mut out);
        let events = ok(out.into_iter().collect());
        assert_eq!(
            events[events.len() - 2],
            ProviderEvent::State(state(json!({"calls": {"g-0": "sig-a"}}))),
            "the signature is keyed by the id the call was given"
        );
        let calls: Vec<(&str, &str, &str, bool)> = events
            .iter()
            .filter_map(|e| match e {
                ProviderEvent::ToolCall { call, .. } => {
                    Some((call.id.as_str(), call.name.as_str(), call.arguments.as_str(), true))
                }
                ProviderEvent::MalformedToolCall { call, .. } => {
                    Some((call.id.as_str(), call.name.as_str(), call.arguments.as_str(), false))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            [
                ("g-0", "a", r#"{"x":1}"#, true),
                ("g-1", "b", "{}", true),
                ("srv-1", "c", "{}", true),
                ("g-3", "d", "{}", true),
                ("g-4", "", "{}", false)
            ],
            "a repeated server id is not reused; a call without a name is malformed"
        );
        assert!(matches!(events.last(), Some(ProviderEvent::Finish { reason: StopReason::ToolCalls, .. })));
    }

    #[test]
    fn finish_reasons_map_to_stops_or_clear_errors() {
        let text = chunk(json!([{"text": "partial"}]));
        for (reason, stop) in [
            ("STOP", StopReason::Stop),
            ("MAX_TOKENS", StopReason::Length),
            ("OTHER", StopReason::Other("other".into())),
        ] {
            let events = ok(feed(&[&text, &finish_chunk(reason, json!({"promptTokenCount": 1}))]));
            assert_eq!(
                events.last(),
                Some(&ProviderEvent::Finish { reason: stop, response_id: Some("resp-1".into()) }),
                "{reason}"
            );
        }
        let details = json!([
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": true},
            {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}
        ]);
        let last = |reason: &str| {
            json!({"candidates": [{"finishReason": reason, "finishMessage": "details here", "safetyRatings": details}],
                   "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 2}})
            .to_string()
        };
        // A filtered answer ends as the other APIs end one (its usage kept), with the reason.
        for (reason, needle) in [
            ("SAFETY", "blocked the answer: its safety filters flagged it (dangerous content)"),
            ("RECITATION", "repeated existing material"),
            ("BLOCKLIST", "blocklist"),
            ("PROHIBITED_CONTENT", "prohibited content"),
            ("SPII", "sensitive personal information"),
        ] {
            let out = ok(feed(&[&text, &last(reason)]));
            assert_eq!(out[0], ProviderEvent::TextDelta("partial".into()), "text before is kept");
            assert!(out.iter().any(|e| matches!(e, ProviderEvent::Usage(u) if u.prompt_tokens == 3)), "{out:?}");
            let Some(ProviderEvent::Finish { reason: StopReason::Filtered(why), .. }) = out.last() else {
                panic!("{reason}: {out:?}")
            };
            assert!(why.contains(needle) && why.contains(reason) && why.contains("details here"), "{reason}: {why}");
        }
        let out = feed(&[&text, &last("MALFORMED_FUNCTION_CALL")]);
        let e = out.last().unwrap().clone().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Protocol);
        assert!(e.message.contains("malformed function call") && e.message.contains("details here"), "{}", e.message);
    }

    #[test]
    fn a_blocked_prompt_is_a_clear_error() {
        let out = feed(&[&json!({"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "MEDIUM"}]}, "usageMetadata": {"promptTokenCount": 5}}).to_string()]);
        assert_eq!(out.len(), 1);
        let e = out[0].clone().unwrap_err();
        assert_eq!(e.kind, ErrorKind::BadRequest);
        assert!(e.message.contains("blocked the prompt: its safety filters flagged it (hate speech)"), "{}", e.message);
        assert!(e.message.contains("rephrase"), "{}", e.message);
    }

    #[test]
    fn the_end_without_a_finish_reason_is_a_cut_and_errors_are_classified() {
        let out = feed(&[&chunk(json!([{"text": "par"}]))]);
        assert_eq!(out.last().unwrap().clone().unwrap_err().kind, ErrorKind::Network);
        let out = feed(&["{not json"]);
        assert_eq!(out[0].clone().unwrap_err().kind, ErrorKind::Protocol);
        let out = feed(&[r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#]);
        let e = out[0].clone().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Overloaded, "{}", e.message);
        let out = feed(&[
            r#"{"error":{"code":429,"message":"Quota","status":"RESOURCE_EXHAUSTED","details":[{"retryDelay":"3s"}]}}"#,
        ]);
        let e = out[0].clone().unwrap_err();
        assert_eq!((e.kind, e.retry_after), (ErrorKind::RateLimited, Some(std::time::Duration::from_secs(3))));
    }

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
    }

    fn tool(call_id: &str, name: &str, content: &str, is_error: bool) -> Message {
        Message::Tool {
            images: Default::default(),
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error,
        }
    }

    #[test]
    fn images_of_results_follow_the_function_responses_as_inline_data() {
        let png = switchboard_core::ToolImage::checked("image/png", "iVBORw0KGgo=").unwrap();
        let req = ProviderRequest {
            model: "m".into(),
            system: None,
            messages: vec![
                Message::User { text: "draw".into() },
                Message::Assistant { text: String::new(), tool_calls: vec![call("c1", "snap", "{}")], state: None },
                Message::Tool {
                    call_id: "c1".into(),
                    name: "snap".into(),
                    content: "[image: image/png]".into(),
                    is_error: false,
                    images: vec![png],
                },
            ],
            tools: vec![],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = request_body(&req, ORIGIN);
        let parts = &body["contents"][2]["parts"];
        assert!(parts[0].get("functionResponse").is_some(), "{parts}");
        assert_eq!(parts[1], json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}));
    }

    #[test]
    fn function_responses_are_grouped_after_the_model_turn_in_call_order() {
        let req = ProviderRequest {
            model: "m".into(),
            system: Some("sys".into()),
            messages: vec![
                Message::User { text: "hi".into() },
                Message::Assistant {
                    text: "Checking".into(),
                    tool_calls: vec![
                        call("gemini-call-x-0", "a", r#"{"q":1}"#),
                        call("srv-7", "b", ""),
                        call("gemini-call-x-2", "c", "not json"),
                    ],
                    state: Some(state(json!({"calls": {"gemini-call-x-0": "sig"}}))),
                },
                // Results arrive out of order; one call has none.
                tool("srv-7", "b", "B failed", true),
                tool("gemini-call-x-0", "a", "A", false),
                Message::User { text: "and?".into() },
                // A text signature without text has no part to go on.
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![],
                    state: Some(state(json!({"text": "lost"}))),
                },
                Message::Assistant {
                    text: "Done.".into(),
                    tool_calls: vec![],
                    state: Some(state(json!({"text": "sig-done"}))),
                },
            ],
            tools: vec![],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["systemInstruction"], json!({"parts": [{"text": "sys"}]}));
        assert_eq!(
            body["contents"],
            json!([
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [
                    {"text": "Checking"},
                    {"functionCall": {"name": "a", "args": {"q": 1}}, "thoughtSignature": "sig"},
                    {"functionCall": {"name": "b", "args": {}, "id": "srv-7"}},
                    {"functionCall": {"name": "c", "args": {"arguments": "not json"}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "a", "response": {"content": "A"}}},
                    {"functionResponse": {"name": "b", "response": {"error": "B failed"}, "id": "srv-7"}},
                    {"functionResponse": {"name": "c", "response": {"error": "No result was recorded for this call."}}},
                    {"text": "and?"}
                ]},
                {"role": "model", "parts": [{"text": "Done.", "thoughtSignature": "sig-done"}]}
            ])
        );
        assert!(body.get("tools").is_none() && body.get("toolConfig").is_none(), "no tools, no config");
    }

    #[test]
    fn function_calling_config_per_choice_and_converted_declarations() {
        let mut req = ProviderRequest {
            model: "m".into(),
            system: None,
            messages: vec![Message::User { text: "hi".into() }],
            tools: vec![
                ToolSpec {
                    name: "get_time".into(),
                    description: "Time".into(),
                    parameters: json!({"type": "object", "properties": {"timezone": {"type": "string"}}, "additionalProperties": false}),
                },
                ToolSpec {
                    name: "ping".into(),
                    description: String::new(),
                    parameters: json!({"type": "object", "properties": {}}),
                },
            ],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = request_body(&req, ORIGIN);
        assert!(body.get("systemInstruction").is_none());
        assert_eq!(
            body["tools"],
            json!([{"functionDeclarations": [
                {"name": "get_time", "description": "Time", "parameters": {"type": "OBJECT", "properties": {"timezone": {"type": "STRING"}}}},
                {"name": "ping"}
            ]}])
        );
        for (choice, config) in [
            (ToolChoice::Auto, json!({"mode": "AUTO"})),
            (ToolChoice::None, json!({"mode": "NONE"})),
            (ToolChoice::Required, json!({"mode": "ANY"})),
            (ToolChoice::Named("get_time".into()), json!({"mode": "ANY", "allowedFunctionNames": ["get_time"]})),
            (
                ToolChoice::OneOf(vec!["get_time".into(), "ping".into()]),
                json!({"mode": "ANY", "allowedFunctionNames": ["get_time", "ping"]}),
            ),
        ] {
            req.tool_choice = choice;
            assert_eq!(request_body(&req, ORIGIN)["toolConfig"], json!({"functionCallingConfig": config}));
        }
    }

    /// A response with every kind of signed part: a signed thought run closed by a signature-only
    /// thought part, an unsigned thought, text whose signature comes on the empty part that ends
    /// the stream, and parallel calls (the first signed, one with Gemini's own id, signed too).
    fn signed_response() -> Vec<String> {
        vec![
            chunk(json!([{"text": "Plan: ", "thought": true}])),
            chunk(
                json!([{"text": "call both.", "thought": true}, {"thought": true, "thoughtSignature": "sig-thought"}]),
            ),
            chunk(json!([{"text": "unsigned musing", "thought": true}])),
            chunk(json!([{"text": "Calling "}, {"text": "👋 both."}])),
            chunk(json!([
                {"functionCall": {"name": "a", "args": {"x": 1}}, "thoughtSignature": "sig-a"},
                {"functionCall": {"name": "b", "args": {}}},
                {"functionCall": {"id": "srv-9", "name": "c", "args": {"y": [true]}}, "thoughtSignature": "sig-c"}
            ])),
            chunk(json!([{"text": "", "thoughtSignature": "sig-text"}])),
            finish_chunk("STOP", json!({"promptTokenCount": 3, "candidatesTokenCount": 2})),
        ]
    }

    #[test]
    fn signatures_become_one_state_before_finish_at_every_split_point() {
        let body: String = signed_response().iter().map(|c| format!("data: {c}\r\n\r\n")).collect();
        let expected_state = state(json!({
            "calls": {"g-0": "sig-a", "srv-9": "sig-c"},
            "text": "sig-text",
            "thoughts": [{"text": "Plan: call both.", "signature": "sig-thought"}]
        }));
        for at in 0..=body.len() {
            let events = ok(feed_body_split(&body, at));
            let states: Vec<usize> = events
                .iter()
                .enumerate()
                .filter(|(_, e)| matches!(e, ProviderEvent::State(_)))
                .map(|(i, _)| i)
                .collect();
            assert_eq!(states, [events.len() - 2], "one State, right before Finish (split at byte {at})");
            assert_eq!(events[events.len() - 2], ProviderEvent::State(expected_state.clone()), "split at byte {at}");
            assert!(matches!(events[events.len() - 3], ProviderEvent::Usage(_)), "split at byte {at}");
            assert!(matches!(events.last(), Some(ProviderEvent::Finish { reason: StopReason::ToolCalls, .. })));
            let reasoning: String = events
                .iter()
                .filter_map(|e| match e {
                    ProviderEvent::ReasoningDelta(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(reasoning, "Plan: call both.unsigned musing", "thoughts stay reasoning");
        }
        // No signature, no state.
        let events = ok(feed(&[&chunk(json!([{"text": "hi"}])), &finish_chunk("STOP", json!({}))]));
        assert!(!events.iter().any(|e| matches!(e, ProviderEvent::State(_))), "{events:?}");
        // A signature on a part this API does not send back is not kept.
        let events = ok(feed(&[
            &chunk(json!([{"inlineData": {"mimeType": "image/png", "data": "AA=="}, "thoughtSignature": "x"}])),
            &finish_chunk("STOP", json!({})),
        ]));
        assert!(!events.iter().any(|e| matches!(e, ProviderEvent::State(_))), "{events:?}");
    }

    /// The assistant message the loop makes of a response's events.
    fn assistant_of(events: &[ProviderEvent]) -> Message {
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut kept = None;
        for e in events {
            match e {
                ProviderEvent::TextDelta(t) => text.push_str(t),
                ProviderEvent::ToolCall { call, .. } => tool_calls.push(call.clone()),
                ProviderEvent::State(s) => kept = Some(s.clone()),
                _ => {}
            }
        }
        Message::Assistant { text, tool_calls, state: kept }
    }

    fn history_request(assistant: Message) -> ProviderRequest {
        let mut messages = vec![Message::User { text: "go".into() }];
        if let Message::Assistant { tool_calls, .. } = &assistant {
            let results: Vec<Message> = tool_calls.iter().map(|c| tool(&c.id, &c.name, "ok", false)).collect();
            messages.push(assistant);
            messages.extend(results);
        }
        ProviderRequest { model: "m".into(), messages, ..Default::default() }
    }

    #[test]
    fn signatures_go_back_on_the_parts_they_came_with_only_to_their_endpoint() {
        // Ids are generated as the provider generates them (never sent back to Gemini).
        let mut p = StreamParser::new(format!("{GENERATED_ID_PREFIX}t-"), ORIGIN);
        let mut out = VecDeque::new();
        for data in signed_response() {
            p.push("G", &data, &mut out);
        }
        p.end("G", &mut out);
        let assistant = assistant_of(&ok(out.into_iter().collect()));
        let body = request_body(&history_request(assistant.clone()), ORIGIN);
        assert_eq!(
            body["contents"][1],
            json!({"role": "model", "parts": [
                {"text": "Plan: call both.", "thought": true, "thoughtSignature": "sig-thought"},
                {"text": "Calling 👋 both.", "thoughtSignature": "sig-text"},
                {"functionCall": {"name": "a", "args": {"x": 1}}, "thoughtSignature": "sig-a"},
                {"functionCall": {"name": "b", "args": {}}},
                {"functionCall": {"name": "c", "args": {"y": [true]}, "id": "srv-9"}, "thoughtSignature": "sig-c"}
            ]}),
            "unchanged, each on its own part; the unsigned thought is not sent"
        );
        // State from another API, or from another server speaking this one, is left out.
        let unsigned = json!({"role": "model", "parts": [
            {"text": "Calling 👋 both."},
            {"functionCall": {"name": "a", "args": {"x": 1}}},
            {"functionCall": {"name": "b", "args": {}}},
            {"functionCall": {"name": "c", "args": {"y": [true]}, "id": "srv-9"}}
        ]});
        let Message::Assistant { text, tool_calls, state: Some(kept) } = assistant else { panic!("no state") };
        for (api, origin) in [("anthropic", ORIGIN), ("openai-responses", ORIGIN), ("gemini", "http://127.0.0.1:8080")]
        {
            let moved = ProviderState { api: api.into(), origin: origin.into(), data: kept.data.clone() };
            let m = Message::Assistant { text: text.clone(), tool_calls: tool_calls.clone(), state: Some(moved) };
            let body = request_body(&history_request(m), ORIGIN);
            assert_eq!(body["contents"][1], unsigned, "{api} at {origin}");
            assert!(!body.to_string().contains("sig-"), "{api} at {origin}: {body}");
        }
        // Malformed data from a store is ignored, not sent.
        let m = Message::Assistant {
            text: text.clone(),
            tool_calls: tool_calls.clone(),
            state: Some(state(json!({"calls": [1], "text": 7, "thoughts": {"x": 1}}))),
        };
        assert_eq!(request_body(&history_request(m), ORIGIN)["contents"][1], unsigned);
    }

    #[test]
    fn generation_config_takes_the_output_limit_and_the_thinking_budget() {
        use switchboard_core::provider::{GenerationOptions, ReasoningEffort};
        let body = |options: GenerationOptions| {
            let req = ProviderRequest {
                model: "m".into(),
                messages: vec![Message::User { text: "hi".into() }],
                options,
                ..Default::default()
            };
            request_body(&req, ORIGIN).get("generationConfig").cloned()
        };
        assert_eq!(body(GenerationOptions::default()), None, "the model's defaults");
        let o = |max: Option<u32>, effort: Option<ReasoningEffort>, budget: Option<u32>| GenerationOptions {
            max_output_tokens: max,
            reasoning_effort: effort,
            thinking_budget: budget,
            ..Default::default()
        };
        assert_eq!(body(o(Some(4096), None, None)), Some(json!({"maxOutputTokens": 4096})), "no thinkingConfig");
        assert_eq!(
            body(o(Some(4096), None, Some(2000))),
            Some(json!({"maxOutputTokens": 4096, "thinkingConfig": {"thinkingBudget": 2000, "includeThoughts": true}}))
        );
        assert_eq!(
            body(o(None, None, Some(0))),
            Some(json!({"thinkingConfig": {"thinkingBudget": 0}})),
            "0 turns thinking off, with no thoughts to include"
        );
        assert_eq!(
            body(o(None, Some(ReasoningEffort::High), Some(0))),
            Some(json!({"thinkingConfig": {"thinkingBudget": 0}})),
            "the budget wins over the effort"
        );
        assert_eq!(
            body(o(None, Some(ReasoningEffort::Medium), None)),
            Some(json!({"thinkingConfig": {"thinkingBudget": 8192, "includeThoughts": true}}))
        );
        assert_eq!(
            body(o(None, None, Some(5))),
            Some(json!({"thinkingConfig": {"thinkingBudget": 128, "includeThoughts": true}}))
        );
        assert_eq!(
            body(o(None, None, Some(1_000_000))),
            Some(json!({"thinkingConfig": {"thinkingBudget": 32768, "includeThoughts": true}}))
        );
        let sampling = GenerationOptions { temperature: Some(0.5), top_p: Some(0.5), ..Default::default() };
        assert_eq!(body(sampling), Some(json!({"temperature": 0.5, "topP": 0.5})));
    }

    #[test]
    fn urls_keep_the_key_out_and_model_pages_are_read() {
        let g = Gemini::new(GeminiConfig {
            base_url: "https://generativelanguage.googleapis.com/v1beta/".into(),
            api_key: Some(SecretValue::new("AIza-secret")),
        })
        .unwrap();
        let url = g.stream_url("gemini-2.0-flash");
        assert_eq!(
            url,
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            g.stream_url("models/x y"),
            "https://generativelanguage.googleapis.com/v1beta/models/x%20y:streamGenerateContent?alt=sse"
        );
        assert!(!format!("{g:?}").contains("AIza"));
        let (names, next) = models_page(&json!({"models": [
            {"name": "models/gemini-2.0-flash", "supportedGenerationMethods": ["generateContent", "countTokens"]},
            {"name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"]}
        ], "nextPageToken": "p2"}));
        assert_eq!((names, next.as_deref()), (vec!["gemini-2.0-flash".to_owned()], Some("p2")));
        assert_eq!(models_page(&json!({"models": []})), (vec![], None));
    }
}
