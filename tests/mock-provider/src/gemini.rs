//! The Google Gemini wire format (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse`).
//!
//! Streams one `GenerateContentResponse` per `data:` event, with no end sentinel: text parts,
//! reasoning as `thought: true` text parts, each tool call as one whole `functionCall` part (no
//! id, as the Gemini API sends them; the first call of a reply carries a `thoughtSignature` that
//! signs it, [`crate::signatures::function_call_signature`]), a usage-only chunk with
//! `usageMetadata`, and the finish reason in Gemini's words. A reply with thoughts and text but no
//! call ends with an empty text part carrying [`crate::signatures::text_signature`] of its whole
//! text. An error object is `{"error":{"code","message","status"}}`.
//!
//! Requests are checked like the real API does where that is cheap (see [`refusal`]): a schema
//! keyword outside Gemini's subset (`additionalProperties`, `$schema`, `$ref`, a type array,
//! `enum` on a non-string, an unsupported string `format`), an object root without properties,
//! an array without `items`, a `required` name that is no property, an empty part or content,
//! `allowedFunctionNames` that are not declared or not with mode `ANY`, function responses that do
//! not match the preceding turn's calls in number, a thought signature missing from a call of the
//! current tool loop or not exactly where and as the mock issued it, and a `generationConfig` with
//! an unknown field, a `maxOutputTokens` that is not positive or an invalid `thinkingConfig` are
//! refused with a 400 in Gemini's shape, before the request is recorded or consumes a reply.

use axum::extract::Request;
use axum::http::{StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::MethodRouter;
use serde_json::{Map, Value, json};

use crate::api::{Assembled, ConversationTail, ErrorKind, ResponseContext, Usage, WireApi};
use crate::script::{Step, StreamOptions};
use crate::signatures::{function_call_signature, text_signature};
use crate::sse::{Events, StepEncoder};

/// Marker type for the Gemini API.
#[derive(Debug)]
pub(crate) struct Gemini;

/// The keys Gemini's `Schema` object takes; any other is "Unknown name ... Cannot find field".
const SCHEMA_KEYS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

const TYPES: &[&str] = &["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"];

/// The API-neutral finish reason in Gemini's words; anything else is passed on upper-cased
/// (`RECITATION`, `MALFORMED_FUNCTION_CALL`, ...).
fn finish_reason(reason: &str) -> String {
    match reason {
        "stop" | "tool_calls" => "STOP".to_owned(),
        "length" => "MAX_TOKENS".to_owned(),
        "content_filter" => "SAFETY".to_owned(),
        other => other.to_ascii_uppercase(),
    }
}

/// The HTTP code Google pairs with a canonical status.
fn status_code(status: &str) -> u16 {
    match status {
        "INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "OUT_OF_RANGE" => 400,
        "UNAUTHENTICATED" => 401,
        "PERMISSION_DENIED" => 403,
        "NOT_FOUND" => 404,
        "RESOURCE_EXHAUSTED" => 429,
        "UNAVAILABLE" => 503,
        "DEADLINE_EXCEEDED" => 504,
        _ => 500,
    }
}

fn usage_json(usage: Usage) -> Value {
    // Gemini counts thoughts apart from the answer; the script's completion tokens include them.
    let candidates = usage.completion_tokens.saturating_sub(usage.reasoning_tokens);
    let mut u = json!({
        "promptTokenCount": usage.prompt_tokens,
        "candidatesTokenCount": candidates,
        "totalTokenCount": usage.prompt_tokens + usage.completion_tokens,
    });
    if usage.reasoning_tokens > 0 {
        u["thoughtsTokenCount"] = json!(usage.reasoning_tokens);
    }
    if usage.cached_tokens > 0 {
        u["cachedContentTokenCount"] = json!(usage.cached_tokens);
    }
    u
}

fn response_id(ctx: &ResponseContext) -> String {
    format!("mock-response-{}", ctx.request_number)
}

/// A call's `args` object; arguments that are not a JSON object become `{}`.
fn args_object(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

impl WireApi for Gemini {
    type Encoder = ChunkEncoder;

    // The method is in the path; the strict layer serves only `:streamGenerateContent`.
    fn wants_stream(_body: &Value) -> bool {
        true
    }

    // The model is in the path, which the handler does not see; replies report the script's
    // `options.model` or the default.
    fn requested_model(_body: &Value) -> Option<&str> {
        None
    }

    fn encoder(ctx: ResponseContext, options: &StreamOptions) -> ChunkEncoder {
        ChunkEncoder {
            ctx,
            signed: false,
            thought: false,
            text: String::new(),
            text_signed: false,
            text_chunk_chars: options.text_chunk_chars,
        }
    }

    fn completion(ctx: &ResponseContext, reply: &Assembled, _options: &StreamOptions) -> Value {
        let mut parts = Vec::new();
        if !reply.reasoning.is_empty() {
            parts.push(json!({"text": reply.reasoning, "thought": true}));
        }
        if !reply.text.is_empty() {
            let mut part = json!({"text": reply.text});
            if !reply.reasoning.is_empty() && reply.tool_calls.is_empty() {
                part["thoughtSignature"] = json!(text_signature(&reply.text));
            }
            parts.push(part);
        }
        for (i, (_, name, arguments)) in reply.tool_calls.iter().enumerate() {
            let args = args_object(arguments);
            let mut part = json!({"functionCall": {"name": name, "args": args}});
            if i == 0 {
                part["thoughtSignature"] = json!(function_call_signature(name, &args));
            }
            parts.push(part);
        }
        let mut out = json!({
            "candidates": [{
                "content": {"role": "model", "parts": parts},
                "finishReason": finish_reason(reply.finish_reason.as_deref().unwrap_or("stop")),
                "index": 0,
            }],
            "modelVersion": ctx.model,
            "responseId": response_id(ctx),
        });
        if let Some(usage) = reply.usage {
            out["usageMetadata"] = usage_json(usage);
        }
        out
    }

    fn error_body(kind: ErrorKind, message: &str, code: Option<&str>) -> Value {
        let status = code.unwrap_or(match kind {
            ErrorKind::Server => "INTERNAL",
            ErrorKind::InvalidRequest | ErrorKind::ContextLength => "INVALID_ARGUMENT",
            ErrorKind::Auth => "UNAUTHENTICATED",
            ErrorKind::Permission => "PERMISSION_DENIED",
            ErrorKind::RateLimit => "RESOURCE_EXHAUSTED",
            ErrorKind::Overloaded => "UNAVAILABLE",
        });
        json!({"error": {"code": status_code(status), "message": message, "status": status}})
    }

    fn error_message(kind: ErrorKind) -> String {
        match kind {
            ErrorKind::Server => {
                "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting"
            }
            ErrorKind::InvalidRequest => "Request contains an invalid argument.",
            ErrorKind::Auth => "Request had invalid authentication credentials.",
            ErrorKind::Permission => "The caller does not have permission",
            ErrorKind::RateLimit => "Resource has been exhausted (e.g. check quota).",
            ErrorKind::Overloaded => "The model is overloaded. Please try again later.",
            ErrorKind::ContextLength => {
                "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
            }
        }
        .to_owned()
    }

    /// Gemini sends no `retry-after` header: the wait is a `RetryInfo` detail of the error.
    fn retry_hint(secs: u64, _headers: &mut Vec<(String, String)>, body: &mut Value) {
        let detail = json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{secs}s")});
        match body["error"]["details"].as_array_mut() {
            Some(details) => details.push(detail),
            None => body["error"]["details"] = json!([detail]),
        }
    }

    fn prompt(body: &Value) -> crate::count::Prompt {
        crate::prompt::gemini(body)
    }

    fn cache(units: &crate::count::Units, _previous: Option<&crate::count::Units>) -> crate::count::Counted {
        units.uncached()
    }

    fn context_exceeded(prompt: u64, window: u64) -> String {
        format!("The input token count ({prompt}) exceeds the maximum number of tokens allowed ({window}).")
    }

    fn conversation_tail(body: &Value) -> ConversationTail {
        let contents = body["contents"].as_array().map_or(&[][..], Vec::as_slice);
        let parts = |c: &Value| c["parts"].as_array().cloned().unwrap_or_default();
        if let Some(last) = contents.last()
            && let Some(fr) = parts(last).iter().rev().find_map(|p| p.get("functionResponse").cloned())
        {
            let response = &fr["response"];
            let content = match response.get("content").or_else(|| response.get("error")) {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => response.to_string(),
            };
            return ConversationTail::ToolResult { name: fr["name"].as_str().map(str::to_owned), content };
        }
        contents.iter().rev().find(|c| c["role"] == "user" && parts(c).iter().any(|p| p["text"].is_string())).map_or(
            ConversationTail::Empty,
            |c| {
                let texts: Vec<String> =
                    parts(c).iter().filter_map(|p| p["text"].as_str().map(str::to_owned)).collect();
                ConversationTail::User(texts.join("\n"))
            },
        )
    }
}

/// `route`, refusing what the real API refuses (see the module docs) with its error shape, before
/// the request is recorded or consumes a reply; a body that is not JSON is left to the handler.
pub(crate) fn strict<S: Clone + Send + Sync + 'static>(route: MethodRouter<S>) -> MethodRouter<S> {
    route.layer(axum::middleware::from_fn(refuse))
}

async fn refuse(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    if let Some((status, message)) = wrong_method(&parts.uri) {
        let body = Gemini::error_body(ErrorKind::InvalidRequest, &message, Some(status));
        return (StatusCode::from_u16(status_code(status)).unwrap_or(StatusCode::BAD_REQUEST), axum::Json(body))
            .into_response();
    }
    crate::api::refuse_with(Request::from_parts(parts, body), next, |_, json| {
        let message = refusal(json)?;
        Some(Gemini::error_body(ErrorKind::InvalidRequest, &message, None))
    })
    .await
}

/// Only the streamed method with `alt=sse` is served (without it the real API streams a JSON
/// array, which this mock does not speak).
fn wrong_method(uri: &Uri) -> Option<(&'static str, String)> {
    let last = uri.path().rsplit('/').next().unwrap_or("");
    if !last.ends_with(":streamGenerateContent") {
        return Some(("NOT_FOUND", format!("mock provider: only :streamGenerateContent is served, not {last}")));
    }
    let sse = uri.query().unwrap_or("").split('&').any(|kv| kv == "alt=sse");
    (!sse).then(|| ("INVALID_ARGUMENT", "mock provider: only alt=sse streaming is served".to_owned()))
}

/// Why the real API would refuse `body`, in its words, or `None`.
pub(crate) fn refusal(body: &Value) -> Option<String> {
    let contents = body["contents"].as_array().filter(|c| !c.is_empty());
    let Some(contents) = contents else {
        return Some("* GenerateContentRequest.contents: contents is not specified".into());
    };
    for (i, c) in contents.iter().enumerate() {
        if !matches!(c["role"].as_str(), Some("user" | "model")) {
            return Some(format!("Please use a valid role: user, model. (contents[{i}])"));
        }
        let parts = c["parts"].as_array().filter(|p| !p.is_empty());
        let Some(parts) = parts else {
            return Some(format!("* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."));
        };
        for (j, p) in parts.iter().enumerate() {
            if p.get("text").is_some_and(|t| t.as_str().is_none_or(str::is_empty)) {
                return Some(format!(
                    "Unable to submit request because it has an empty text parameter (contents[{i}].parts[{j}])."
                ));
            }
        }
    }
    if let Some(problem) = crate::parts::gemini_refusal(body) {
        return Some(problem);
    }
    if let Some(problem) = unmatched_responses(contents).or_else(|| signature_refusal(contents)) {
        return Some(problem);
    }
    if let Some(problem) = generation_config_refusal(body) {
        return Some(problem);
    }
    if let Some(system) = body.get("systemInstruction")
        && system["parts"].as_array().is_none_or(Vec::is_empty)
    {
        return Some("* GenerateContentRequest.system_instruction.parts: must not be empty".into());
    }
    let mut declared = Vec::new();
    for (t, tool) in body["tools"].as_array().into_iter().flatten().enumerate() {
        for (f, decl) in tool["functionDeclarations"].as_array().into_iter().flatten().enumerate() {
            let path = format!("tools[{t}].function_declarations[{f}]");
            match decl["name"].as_str() {
                Some(name) if !name.is_empty() => declared.push(name.to_owned()),
                _ => return Some(format!("* GenerateContentRequest.{path}.name: Name cannot be empty.")),
            }
            if let Some(params) = decl.get("parameters") {
                let path = format!("{path}.parameters");
                if let Some(problem) = schema_refusal(params, &path) {
                    return Some(problem);
                }
                if params["properties"].as_object().is_none_or(Map::is_empty) {
                    return Some(format!(
                        "* GenerateContentRequest.{path}.properties: should be non-empty for OBJECT type"
                    ));
                }
            }
        }
    }
    let config = &body["toolConfig"]["functionCallingConfig"];
    if !config.is_null() {
        let mode = config["mode"].as_str().unwrap_or("MODE_UNSPECIFIED");
        if !["AUTO", "ANY", "NONE", "VALIDATED", "MODE_UNSPECIFIED"].contains(&mode) {
            return Some(format!("Invalid value at 'tool_config.function_calling_config.mode', \"{mode}\""));
        }
        if let Some(names) = config.get("allowedFunctionNames") {
            if mode != "ANY" {
                return Some(
                    "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: only allowed when mode is ANY".into(),
                );
            }
            for name in names.as_array().into_iter().flatten() {
                if !name.as_str().is_some_and(|n| declared.iter().any(|d| d == n)) {
                    return Some(format!(
                        "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: {name} is not a declared function"
                    ));
                }
            }
        }
    }
    None
}

/// Every model turn with function calls must be followed by a user turn with as many responses.
fn unmatched_responses(contents: &[Value]) -> Option<String> {
    let count =
        |c: &Value, key: &str| c["parts"].as_array().into_iter().flatten().filter(|p| p.get(key).is_some()).count();
    for (i, c) in contents.iter().enumerate() {
        let calls = count(c, "functionCall");
        let responses = contents.get(i + 1).map_or(0, |next| count(next, "functionResponse"));
        let answered = contents.get(i + 1).is_none() || calls == responses;
        if calls > 0 && c["role"] == "model" && !answered {
            return Some("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.".into());
        }
    }
    None
}

/// Thought signatures must come back exactly where and as the mock issued them (see
/// [`crate::signatures`]): on the first call of a model turn, signing that call, or on the last
/// text part of a model turn with thoughts and no call, signing its whole text. The turns of the
/// current tool loop (after the last user content with text, or with inline data and no function
/// response) must carry their calls' signatures; earlier model turns may come without any.
fn signature_refusal(contents: &[Value]) -> Option<String> {
    const CORRUPTED: &str = "Corrupted thought signature.";
    let loop_start = contents
        .iter()
        .rposition(|c| {
            // A person's turn: text, or files (inline data) that answer no call.
            let parts = c["parts"].as_array().map_or(&[][..], Vec::as_slice);
            let text = parts.iter().any(|p| p["text"].is_string());
            let files = parts.iter().any(|p| p.get("inlineData").or_else(|| p.get("inline_data")).is_some());
            let answers = parts.iter().any(|p| p.get("functionResponse").is_some());
            c["role"] == "user" && (text || (files && !answers))
        })
        .map_or(0, |i| i + 1);
    for (i, c) in contents.iter().enumerate() {
        let parts = c["parts"].as_array().map_or(&[][..], Vec::as_slice);
        let model = c["role"] == "model";
        let first_call = parts.iter().position(|p| p.get("functionCall").is_some());
        let is_text = |p: &Value| p["text"].is_string() && p["thought"] != true;
        let last_text = parts.iter().rposition(is_text);
        for (j, part) in parts.iter().enumerate() {
            let Some(signature) = part.get("thoughtSignature") else { continue };
            let expected = if !model {
                None
            } else if let Some(call) = part.get("functionCall") {
                (first_call == Some(j)).then(|| {
                    // A call without `args` is a call with no arguments, as the mock sent it.
                    let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
                    function_call_signature(call["name"].as_str().unwrap_or(""), &args)
                })
            } else if is_text(part) && first_call.is_none() && last_text == Some(j) {
                let text: String = parts.iter().filter(|p| is_text(p)).filter_map(|p| p["text"].as_str()).collect();
                Some(text_signature(&text))
            } else {
                None
            };
            if expected.is_none_or(|expected| signature.as_str() != Some(expected.as_str())) {
                return Some(CORRUPTED.to_owned());
            }
        }
        if let Some(j) = first_call
            && model
            && i >= loop_start
            && parts[j].get("thoughtSignature").is_none()
        {
            let name = parts[j]["functionCall"]["name"].as_str().unwrap_or("");
            return Some(format!(
                "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{name}` , position {}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
                i + 1
            ));
        }
    }
    None
}

/// The `GenerationConfig` fields the API takes (camelCase); any other is "Unknown name".
const GENERATION_CONFIG_KEYS: &[&str] = &[
    "stopSequences",
    "responseMimeType",
    "responseSchema",
    "responseJsonSchema",
    "responseModalities",
    "candidateCount",
    "maxOutputTokens",
    "temperature",
    "topP",
    "topK",
    "seed",
    "presencePenalty",
    "frequencyPenalty",
    "responseLogprobs",
    "logprobs",
    "enableEnhancedCivicAnswers",
    "speechConfig",
    "thinkingConfig",
    "imageConfig",
    "mediaResolution",
];

/// `generationConfig`: known fields only, a positive `maxOutputTokens`, and a `thinkingConfig` of
/// `includeThoughts` (boolean) and `thinkingBudget` (-1, 0 or 128..=32768) or `thinkingLevel`.
fn generation_config_refusal(body: &Value) -> Option<String> {
    let config = body.get("generationConfig")?;
    let Some(config) = config.as_object() else {
        return Some(format!("Invalid JSON payload received. Invalid value at 'generation_config', {config}"));
    };
    let unknown = |key: &str, at: &str| {
        format!("Invalid JSON payload received. Unknown name \"{key}\" at '{at}': Cannot find field.")
    };
    if let Some(key) = config.keys().find(|k| !GENERATION_CONFIG_KEYS.contains(&k.as_str())) {
        return Some(unknown(key, "generation_config"));
    }
    if let Some(max) = config.get("maxOutputTokens") {
        match max.as_i64() {
            Some(n) if n >= 1 => {}
            Some(_) => {
                return Some(
                    "* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be positive."
                        .to_owned(),
                );
            }
            None => {
                return Some(format!(
                    "Invalid JSON payload received. Invalid value at 'generation_config.max_output_tokens' (TYPE_INT32), {max}"
                ));
            }
        }
    }
    let thinking = config.get("thinkingConfig")?;
    let Some(thinking) = thinking.as_object() else {
        return Some(format!(
            "Invalid JSON payload received. Invalid value at 'generation_config.thinking_config', {thinking}"
        ));
    };
    let at = "generation_config.thinking_config";
    if let Some(key) =
        thinking.keys().find(|k| !["includeThoughts", "thinkingBudget", "thinkingLevel"].contains(&k.as_str()))
    {
        return Some(unknown(key, at));
    }
    if let Some(include) = thinking.get("includeThoughts")
        && !include.is_boolean()
    {
        return Some(format!(
            "Invalid JSON payload received. Invalid value at '{at}.include_thoughts' (TYPE_BOOL), {include}"
        ));
    }
    if let Some(budget) = thinking.get("thinkingBudget") {
        let Some(n) = budget.as_i64() else {
            return Some(format!(
                "Invalid JSON payload received. Invalid value at '{at}.thinking_budget' (TYPE_INT32), {budget}"
            ));
        };
        if !(n == -1 || n == 0 || (128..=32768).contains(&n)) {
            return Some(format!(
                "The thinking budget {n} is invalid. Please choose a value between 128 and 32768, or 0 to turn thinking off, or -1 for a dynamic budget."
            ));
        }
    }
    if let Some(level) = thinking.get("thinkingLevel") {
        let known = ["minimal", "low", "medium", "high"];
        if !level.as_str().is_some_and(|l| known.contains(&l.to_ascii_lowercase().as_str())) {
            return Some(format!(
                "Invalid JSON payload received. Invalid value at '{at}.thinking_level' (type.googleapis.com/google.ai.generativelanguage.v1beta.ThinkingConfig.ThinkingLevel), {level}"
            ));
        }
        if thinking.contains_key("thinkingBudget") {
            return Some("You can only set one of thinking budget and thinking level.".to_owned());
        }
    }
    None
}

/// `GET /v1beta/models`: one page listing the mock's models in Gemini's shape. The key is read
/// from `x-goog-api-key` (or a `key` query parameter); without one the API answers 403.
pub(crate) async fn models(headers: axum::http::HeaderMap, uri: Uri) -> Response {
    let in_query =
        uri.query().unwrap_or("").split('&').any(|kv| kv.strip_prefix("key=").is_some_and(|k| !k.is_empty()));
    let in_header = headers.get("x-goog-api-key").is_some_and(|k| !k.is_empty());
    if !in_query && !in_header {
        let message = "Method doesn't allow unregistered callers (callers without established identity). Please use API key or other form of API consumer identity to call this API.";
        let body = Gemini::error_body(ErrorKind::InvalidRequest, message, Some("PERMISSION_DENIED"));
        return (StatusCode::FORBIDDEN, axum::Json(body)).into_response();
    }
    let model = |name: &str, display: &str, methods: &[&str]| {
        json!({
            "name": format!("models/{name}"),
            "version": "001",
            "displayName": display,
            "description": "A model of the Switchboard mock provider.",
            "inputTokenLimit": 1_048_576,
            "outputTokenLimit": 65_536,
            "supportedGenerationMethods": methods,
        })
    };
    let generate = ["generateContent", "streamGenerateContent", "countTokens"];
    axum::Json(json!({"models": [
        model("mock-model", "Mock Model", &generate),
        model("mock-reasoner", "Mock Reasoner", &generate),
        model("mock-embedding", "Mock Embedding", &["embedContent"]),
    ]}))
    .into_response()
}

/// Why the real API would refuse this schema node (at `path`), or `None`.
fn schema_refusal(schema: &Value, path: &str) -> Option<String> {
    let Some(obj) = schema.as_object() else {
        return Some(format!("Invalid JSON payload received. Expected an object at '{path}'."));
    };
    if let Some(unknown) = obj.keys().find(|k| !SCHEMA_KEYS.contains(&k.as_str())) {
        return Some(format!(
            "Invalid JSON payload received. Unknown name \"{unknown}\" at '{path}': Cannot find field."
        ));
    }
    let ty = match obj.get("type") {
        None => None,
        Some(Value::String(t)) if TYPES.contains(&t.to_ascii_uppercase().as_str()) => Some(t.to_ascii_uppercase()),
        Some(other) => {
            return Some(format!(
                "Invalid JSON payload received. Invalid value at '{path}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), {other}"
            ));
        }
    };
    let ty = ty.as_deref();
    let only = |key: &str, on: &str| {
        (obj.contains_key(key) && ty != Some(on))
            .then(|| format!("* GenerateContentRequest.{path}.{key}: only allowed for {on} type"))
    };
    if let Some(problem) =
        only("properties", "OBJECT").or_else(|| only("required", "OBJECT")).or_else(|| only("items", "ARRAY"))
    {
        return Some(problem);
    }
    if obj.contains_key("enum") && ty != Some("STRING") {
        return Some(format!("* GenerateContentRequest.{path}.enum: only allowed for STRING type"));
    }
    if let Some(format) = obj.get("format").and_then(Value::as_str) {
        let ok: &[&str] = match ty {
            Some("STRING") => &["enum", "date-time"],
            Some("INTEGER") => &["int32", "int64"],
            Some("NUMBER") => &["float", "double"],
            _ => &[],
        };
        if !ok.contains(&format) {
            return Some(format!("* GenerateContentRequest.{path}.format: '{format}' is not supported for this type"));
        }
    }
    if ty == Some("ARRAY") && !obj.contains_key("items") {
        return Some(format!("* GenerateContentRequest.{path}.items: missing field."));
    }
    let props = obj.get("properties").and_then(Value::as_object);
    for name in obj.get("required").and_then(Value::as_array).into_iter().flatten() {
        if !name.as_str().is_some_and(|n| props.is_some_and(|p| p.contains_key(n))) {
            return Some(format!("* GenerateContentRequest.{path}.required: property {name} is not defined"));
        }
    }
    for (name, p) in props.into_iter().flatten() {
        if let Some(problem) = schema_refusal(p, &format!("{path}.properties[{name}].value")) {
            return Some(problem);
        }
    }
    if let Some(items) = obj.get("items")
        && let Some(problem) = schema_refusal(items, &format!("{path}.items"))
    {
        return Some(problem);
    }
    for (i, b) in obj.get("anyOf").and_then(Value::as_array).into_iter().flatten().enumerate() {
        if let Some(problem) = schema_refusal(b, &format!("{path}.any_of[{i}]")) {
            return Some(problem);
        }
    }
    None
}

/// Streams one reply as `GenerateContentResponse` events.
#[derive(Debug)]
pub(crate) struct ChunkEncoder {
    ctx: ResponseContext,
    /// Whether a call of this reply already carried the thought signature.
    signed: bool,
    /// Whether the reply had thoughts, and its (non-thought) text so far: a reply with both and
    /// no call gets a text signature at its end.
    thought: bool,
    text: String,
    text_signed: bool,
    text_chunk_chars: Option<usize>,
}

impl ChunkEncoder {
    fn chunk(&self, events: &mut Events, candidate: Option<Value>, usage: Option<Value>) {
        let mut out = json!({"modelVersion": self.ctx.model, "responseId": response_id(&self.ctx)});
        if let Some(c) = candidate {
            out["candidates"] = json!([c]);
        }
        if let Some(u) = usage {
            out["usageMetadata"] = u;
        }
        events.data_json(&out);
    }

    fn parts(&self, events: &mut Events, parts: Vec<Value>) {
        self.chunk(events, Some(json!({"content": {"role": "model", "parts": parts}, "index": 0})), None);
    }

    fn call_part(&mut self, name: &str, arguments: &str) -> Value {
        let args = args_object(arguments);
        let signature = (!std::mem::replace(&mut self.signed, true)).then(|| function_call_signature(name, &args));
        let mut part = json!({"functionCall": {"name": name, "args": args}});
        if let Some(signature) = signature {
            part["thoughtSignature"] = json!(signature);
        }
        part
    }

    /// The empty text part carrying the signature of a reply with thoughts and text but no call,
    /// once, at its end (the signature covers the whole text, so it cannot come earlier).
    fn text_signature_part(&mut self) -> Option<Value> {
        let due = self.thought && !self.text.is_empty() && !self.signed && !self.text_signed;
        self.text_signed |= due;
        due.then(|| json!({"text": "", "thoughtSignature": text_signature(&self.text)}))
    }
}

impl StepEncoder for ChunkEncoder {
    fn encode(&mut self, step: &Step, events: &mut Events) {
        match step {
            Step::Text { text } => {
                self.text.push_str(text);
                for piece in char_chunks(text, self.text_chunk_chars) {
                    self.parts(events, vec![json!({"text": piece})]);
                }
            }
            Step::Reasoning { text } => {
                self.thought |= !text.is_empty();
                for piece in char_chunks(text, self.text_chunk_chars) {
                    self.parts(events, vec![json!({"text": piece, "thought": true})]);
                }
            }
            Step::ToolCall { name, arguments, .. } => {
                let part = self.call_part(name, arguments);
                self.parts(events, vec![part]);
            }
            // Gemini sends parallel calls whole, side by side in one chunk.
            Step::ParallelToolCalls { calls } => {
                let parts = calls.iter().map(|(_, name, arguments)| self.call_part(name, arguments)).collect();
                self.parts(events, parts);
            }
            Step::Usage { prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens } => {
                let usage = Usage {
                    prompt_tokens: *prompt_tokens,
                    completion_tokens: *completion_tokens,
                    reasoning_tokens: *reasoning_tokens,
                    cached_tokens: *cached_tokens,
                };
                self.chunk(events, None, Some(usage_json(usage)));
            }
            Step::Finish { reason } => {
                let mut candidate = json!({"finishReason": finish_reason(reason), "index": 0});
                if let Some(part) = self.text_signature_part() {
                    candidate["content"] = json!({"role": "model", "parts": [part]});
                }
                self.chunk(events, Some(candidate), None);
            }
            // Gemini's stream has no end marker: the body just ends (after the text signature, if
            // no finish carried it).
            Step::Done => {
                if let Some(part) = self.text_signature_part() {
                    self.parts(events, vec![part]);
                }
            }
            Step::ErrorObject { message, code } => {
                events.data_json(&Gemini::error_body(ErrorKind::Server, message, code.as_deref()));
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

/// Splits `text` into pieces of `size` characters; `None` or 0 yields the whole text.
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

    fn post(server: &crate::MockServer, path_and_query: &str, body: &Value) -> reqwest::RequestBuilder {
        reqwest::Client::new()
            .post(format!("http://{}/v1beta/models/{path_and_query}", server.addr()))
            .header("x-goog-api-key", "AIza-test")
            .json(body)
    }

    fn hi() -> Value {
        json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]})
    }

    /// The `data` of every event the server streams for `steps`.
    async fn encode(steps: &[Step], options: &StreamOptions) -> Vec<Value> {
        let reply = crate::Reply::Stream { steps: steps.to_vec(), options: options.clone() };
        let server = crate::MockServer::start(crate::Script::new([reply])).await;
        let response = post(&server, "gemini-test:streamGenerateContent?alt=sse", &hi()).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        let text = response.text().await.unwrap();
        let requests = server.requests();
        assert_eq!(requests[0].path, "/v1beta/models/gemini-test:streamGenerateContent");
        assert_eq!(requests[0].header("x-goog-api-key"), Some("AIza-test"));
        text.split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| serde_json::from_str(e.strip_prefix("data: ").unwrap()).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn a_reply_streams_thoughts_text_whole_calls_usage_and_the_finish_without_a_sentinel() {
        let steps = [
            Step::Reasoning { text: "hmm".into() },
            Step::text("Olá 👋"),
            Step::tool_call("call_1", "get_time", r#"{"timezone":"UTC"}"#),
            Step::ParallelToolCalls {
                calls: vec![("a".into(), "f".into(), "{}".into()), ("b".into(), "g".into(), "x".into())],
            },
            Step::finish("tool_calls"),
            Step::Usage { prompt_tokens: 10, completion_tokens: 7, reasoning_tokens: 2, cached_tokens: 3 },
            Step::Done,
        ];
        let events = encode(&steps, &StreamOptions { text_chunk_chars: Some(3), ..Default::default() }).await;
        let parts = |i: usize| events[i]["candidates"][0]["content"]["parts"].clone();
        assert_eq!(parts(0), json!([{"text": "hmm", "thought": true}]));
        assert_eq!(parts(1), json!([{"text": "Olá"}]));
        assert_eq!(parts(2), json!([{"text": " 👋"}]));
        assert_eq!(
            parts(3),
            json!([{"functionCall": {"name": "get_time", "args": {"timezone": "UTC"}},
                "thoughtSignature": function_call_signature("get_time", &json!({"timezone": "UTC"}))}]),
            "no id, as Gemini sends calls; the first call is signed"
        );
        assert_eq!(
            parts(4),
            json!([{"functionCall": {"name": "f", "args": {}}}, {"functionCall": {"name": "g", "args": {}}}])
        );
        assert_eq!(events[5]["candidates"][0]["finishReason"], "STOP");
        assert_eq!(
            events[6]["usageMetadata"],
            json!({"promptTokenCount": 10, "candidatesTokenCount": 5, "thoughtsTokenCount": 2, "cachedContentTokenCount": 3, "totalTokenCount": 17})
        );
        assert_eq!(events.len(), 7, "no end sentinel");
        assert_eq!(events[0]["responseId"], "mock-response-1");
    }

    #[tokio::test]
    async fn errors_are_in_googles_shape() {
        let events = encode(
            &[Step::ErrorObject { message: "busy".into(), code: Some("UNAVAILABLE".into()) }],
            &StreamOptions::default(),
        )
        .await;
        assert_eq!(events, [json!({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}})]);
        let server = crate::MockServer::start(crate::Script::new([])).await;
        let response = post(&server, "m:streamGenerateContent?alt=sse", &hi()).send().await.unwrap();
        assert_eq!(response.status(), 500);
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["error"]["status"], "INTERNAL");
        assert!(body["error"]["message"].as_str().unwrap().contains("script exhausted"));
    }

    #[tokio::test]
    async fn requests_the_real_api_refuses_are_refused_before_consuming_a_reply() {
        let server = crate::MockServer::start(crate::Script::new([crate::Reply::text("ok")])).await;
        let with_params = |params: Value| {
            let mut body = hi();
            body["tools"] = json!([{"functionDeclarations": [{"name": "f", "parameters": params}]}]);
            body
        };
        let cases = [
            ("m:generateContent", hi(), 404, "only :streamGenerateContent"),
            ("m:streamGenerateContent", hi(), 400, "alt=sse"),
            (
                "m:streamGenerateContent?alt=sse",
                with_params(
                    json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
                ),
                400,
                "Unknown name \"additionalProperties\"",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                with_params(json!({"$schema": "x", "type": "object"})),
                400,
                "Unknown name \"$schema\"",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                with_params(json!({"type": "object", "properties": {}})),
                400,
                "non-empty for OBJECT",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                with_params(json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}})),
                400,
                "Invalid value",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                with_params(json!({"type": "object", "properties": {"a": {"type": "integer", "enum": [1]}}})),
                400,
                "enum: only allowed for STRING",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                with_params(json!({"type": "object", "properties": {"a": {"type": "string", "format": "uri"}}})),
                400,
                "format",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                with_params(json!({"type": "object", "properties": {"a": {"type": "array"}}})),
                400,
                "items: missing field",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                with_params(json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]})),
                400,
                "is not defined",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                json!({"contents": [{"role": "user", "parts": [{"text": ""}]}]}),
                400,
                "empty text",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                json!({"contents": [
                    {"role": "user", "parts": [{"text": "hi"}]},
                    {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}, {"functionCall": {"name": "f", "args": {}}}]},
                    {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"content": "1"}}}]}
                ]}),
                400,
                "number of function response parts",
            ),
            (
                "m:streamGenerateContent?alt=sse",
                {
                    let mut b = with_params(json!({"type": "object", "properties": {"a": {"type": "STRING"}}}));
                    b["toolConfig"] = json!({"functionCallingConfig": {"mode": "AUTO", "allowedFunctionNames": ["f"]}});
                    b
                },
                400,
                "only allowed when mode is ANY",
            ),
        ];
        for (path, body, status, needle) in cases {
            let response = post(&server, path, &body).send().await.unwrap();
            assert_eq!(response.status(), status, "{path} {body}");
            let error: Value = response.json().await.unwrap();
            assert_eq!(error["error"]["code"], status, "{error}");
            assert!(error["error"]["message"].as_str().unwrap().contains(needle), "{needle}: {error}");
        }
        assert!(server.requests().is_empty(), "refused requests are not recorded");
        // What Gemini accepts goes through: the converted shape of a real tool, forced by name.
        let mut body = with_params(
            json!({"type": "OBJECT", "properties": {"timezone": {"type": "STRING", "nullable": true, "format": "date-time"}}}),
        );
        body["toolConfig"] = json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["f"]}});
        let response = post(&server, "m:streamGenerateContent?alt=sse", &body).send().await.unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(server.remaining_replies(), 0);
    }

    #[test]
    fn echo_reads_the_last_function_response_or_user_text() {
        let body = json!({"contents": [
            {"role": "user", "parts": [{"text": "what time is it"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_time", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "get_time", "response": {"content": "12:00"}}}]}
        ]});
        assert_eq!(
            Gemini::conversation_tail(&body),
            ConversationTail::ToolResult { name: Some("get_time".into()), content: "12:00".into() }
        );
        assert_eq!(Gemini::conversation_tail(&hi()), ConversationTail::User("hi".into()));
    }
}
