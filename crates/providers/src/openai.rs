//! OpenAI Chat Completions, which OpenAI-compatible servers (Ollama, LM Studio, vLLM, llama.cpp,
//! OpenRouter) also speak.
//!
//! Quirks handled here: tool-call fragments are assembled by `index` (falling back to the call id
//! for servers that omit it); reasoning arrives as `reasoning_content` (DeepSeek, vLLM, llama.cpp)
//! or `reasoning` (OpenRouter, Ollama); usage comes in a last chunk with empty `choices` when
//! `stream_options.include_usage` is set; some servers omit `[DONE]` after the finish reason.

use crate::http_client::{self, ReqwestTransport};
use crate::sse::{self, SseStream};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use switchboard_core::provider::StopReason;
use switchboard_core::tool::SecretValue;
use switchboard_core::types::char_len;
use switchboard_core::{
    ErrorKind, Message, Provider, ProviderError, ProviderEvent, ProviderRequest, ProviderStream, ToolCall, ToolChoice,
    Usage,
};

/// Configuration of one OpenAI-compatible endpoint.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// Base URL, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Bearer key, if the server needs one.
    pub api_key: Option<SecretValue>,
}

/// The Chat Completions provider.
pub struct OpenAiChat {
    config: OpenAiConfig,
    client: reqwest::Client,
    who: String,
}

impl std::fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiChat").field("base_url", &self.config.base_url).finish_non_exhaustive()
    }
}

impl OpenAiChat {
    /// A provider for `config`.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        let base = config.base_url.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ProviderError::new(
                ErrorKind::Config,
                format!("The base URL '{base}' must start with http:// or https://."),
            ));
        }
        // Plain-http bases (local servers) skip loading TLS roots; one that redirects to https
        // fails certificate checks and should be configured with its https URL instead.
        let client = http_client::client(base.starts_with("https://"))
            .map_err(|e| ProviderError::new(ErrorKind::Internal, format!("Cannot set up HTTP: {e}")))?;
        let who = format!("The provider at {base}");
        Ok(Self { config: OpenAiConfig { base_url: base, ..config }, client, who })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.config.base_url)
    }

    /// The models the server lists (`GET /models`), sorted.
    pub async fn models(&self) -> Result<Vec<String>, ProviderError> {
        let mut req = self.client.get(self.url("models"));
        if let Some(key) = &self.config.api_key {
            req = req.bearer_auth(key.expose());
        }
        let resp = req.send().await.map_err(|e| {
            let who = crate::classify::mid_sentence(&self.who);
            ProviderError::new(ErrorKind::Network, format!("Could not reach {who}: {}", e.without_url()))
        })?;
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        if !(200..300).contains(&status) {
            return Err(crate::classify::http_error(&self.who, status, None, &text));
        }
        let v: Value = serde_json::from_str(&text).map_err(|_| {
            ProviderError::new(ErrorKind::Protocol, format!("{} returned a model list that is not JSON.", self.who))
        })?;
        let mut ids: Vec<String> =
            v["data"].as_array().into_iter().flatten().filter_map(|m| m["id"].as_str().map(str::to_owned)).collect();
        ids.sort();
        Ok(ids)
    }
}

impl Provider for OpenAiChat {
    fn kind(&self) -> &'static str {
        "openai"
    }

    fn list_models(&self) -> futures::future::BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(self.models())
    }

    fn stream(&self, request: ProviderRequest) -> ProviderStream {
        let body = request_body(&request).to_string();
        let auth = self.config.api_key.as_ref().map(|k| format!("Bearer {}", k.expose()));
        let mut headers = vec![("Content-Type", "application/json"), ("Accept", "text/event-stream")];
        if let Some(auth) = &auth {
            headers.push(("Authorization", auth.as_str()));
        }
        let events = sse::post(
            ReqwestTransport::new(self.client.clone()),
            self.who.clone(),
            &self.url("chat/completions"),
            &headers,
            body,
        );
        parse_stream(events, self.who.clone())
    }
}

/// The JSON body of a streamed Chat Completions request.
pub fn request_body(request: &ProviderRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in &request.messages {
        messages.push(match m {
            Message::User { text } => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant { text, tool_calls } => json!({
                "role": "assistant",
                // Some compatible servers reject "" next to tool calls; null is the spec's "none".
                "content": if text.is_empty() { Value::Null } else { Value::String(text.clone()) },
                "tool_calls": tool_calls.iter().map(|c| json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": if c.arguments.trim().is_empty() { "{}" } else { c.arguments.as_str() }},
                })).collect::<Vec<_>>(),
            }),
            Message::Tool { call_id, content, .. } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            // The request offers exactly the forced tools, so "required" means "one of these".
            ToolChoice::Required | ToolChoice::OneOf(_) => json!("required"),
            ToolChoice::Named(name) => json!({"type": "function", "function": {"name": name}}),
        };
    }
    body
}

#[derive(Deserialize)]
struct Chunk {
    id: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireCallDelta>,
}

#[derive(Deserialize)]
struct WireCallDelta {
    index: Option<u32>,
    id: Option<String>,
    #[serde(default)]
    function: WireFunction,
}

#[derive(Deserialize, Default)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    completion_tokens_details: Option<Value>,
    prompt_tokens_details: Option<Value>,
}

struct PartialCall {
    id: String,
    name: String,
    arguments: String,
    text_chars_before: usize,
}

/// Assembles a Chat Completions stream into canonical events. Pure: fed one SSE `data` at a time.
#[derive(Default)]
pub struct ChunkParser {
    calls: BTreeMap<u32, PartialCall>,
    text_chars: usize,
    finish: Option<StopReason>,
    usage: Option<Usage>,
    response_id: Option<String>,
    done: bool,
}

impl ChunkParser {
    /// A parser for one response.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the response is complete (no more data is needed).
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Handles one event's data, pushing what it completes to `out`.
    pub fn push(&mut self, who: &str, data: &str, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        if self.done {
            return;
        }
        if data.trim() == "[DONE]" {
            self.finish_into(out);
            return;
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(c) => c,
            Err(e) => {
                self.done = true;
                let shown: String = data.chars().take(120).collect();
                out.push_back(Err(ProviderError::new(
                    ErrorKind::Protocol,
                    format!("{who} sent a malformed chunk ({e}): {shown}"),
                )));
                return;
            }
        };
        if let Some(error) = chunk.error {
            self.done = true;
            out.push_back(Err(crate::classify::stream_error(who, &json!({"error": error}).to_string())));
            return;
        }
        if self.response_id.is_none() {
            self.response_id = chunk.id;
        }
        if let Some(u) = chunk.usage {
            let detail = |v: &Option<Value>, k: &str| v.as_ref().and_then(|d| d[k].as_u64()).unwrap_or(0);
            self.usage = Some(Usage {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                reasoning_tokens: detail(&u.completion_tokens_details, "reasoning_tokens"),
                cached_tokens: detail(&u.prompt_tokens_details, "cached_tokens"),
            });
        }
        for choice in chunk.choices {
            let d = choice.delta;
            if let Some(r) = d.reasoning_content.or(d.reasoning).filter(|r| !r.is_empty()) {
                out.push_back(Ok(ProviderEvent::ReasoningDelta(r)));
            }
            if let Some(text) = d.content.filter(|t| !t.is_empty()) {
                self.text_chars += char_len(&text);
                out.push_back(Ok(ProviderEvent::TextDelta(text)));
            }
            for frag in d.tool_calls {
                self.call_fragment(frag);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(match reason.as_str() {
                    "stop" => StopReason::Stop,
                    "tool_calls" | "function_call" => StopReason::ToolCalls,
                    "length" => StopReason::Length,
                    "content_filter" => StopReason::ContentFilter,
                    other => StopReason::Other(other.to_owned()),
                });
            }
        }
    }

    fn call_fragment(&mut self, frag: WireCallDelta) {
        // Servers that omit `index` send each call whole or repeat its id; find it by id, else append.
        let index = frag.index.unwrap_or_else(|| {
            frag.id
                .as_ref()
                .and_then(|id| self.calls.iter().find(|(_, c)| &c.id == id).map(|(i, _)| *i))
                .unwrap_or_else(|| self.calls.keys().next_back().map_or(0, |i| i + 1))
        });
        let text_chars = self.text_chars;
        let call = self.calls.entry(index).or_insert_with(|| PartialCall {
            id: String::new(),
            name: String::new(),
            arguments: String::new(),
            text_chars_before: text_chars,
        });
        if let Some(id) = frag.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        if let Some(name) = frag.function.name.filter(|n| !n.is_empty()) {
            // Most servers send the name once; a few repeat it in every fragment.
            if call.name != name {
                call.name.push_str(&name);
            }
        }
        if let Some(args) = frag.function.arguments {
            call.arguments.push_str(&args);
        }
    }

    fn finish_into(&mut self, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        self.done = true;
        let has_calls = !self.calls.is_empty();
        for (i, call) in std::mem::take(&mut self.calls) {
            let id = if call.id.is_empty() { format!("call_{i}") } else { call.id };
            out.push_back(Ok(ProviderEvent::ToolCall {
                call: ToolCall { id, name: call.name, arguments: call.arguments },
                text_chars_before: call.text_chars_before,
            }));
        }
        if let Some(u) = self.usage.take() {
            out.push_back(Ok(ProviderEvent::Usage(u)));
        }
        let reason = match self.finish.take() {
            Some(StopReason::Stop) | None if has_calls => StopReason::ToolCalls,
            Some(r) => r,
            None => StopReason::Stop,
        };
        out.push_back(Ok(ProviderEvent::Finish { reason, response_id: self.response_id.take() }));
    }

    /// The stream ended without `[DONE]`: complete if a finish reason was seen, else an error.
    pub fn end(&mut self, who: &str, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        if self.done {
            return;
        }
        if self.finish.is_some() {
            self.finish_into(out);
        } else {
            self.done = true;
            out.push_back(Err(ProviderError::new(
                ErrorKind::Network,
                format!(
                    "The stream from {} ended before the response was complete.",
                    crate::classify::mid_sentence(who)
                ),
            )));
        }
    }
}

fn parse_stream(events: SseStream, who: String) -> ProviderStream {
    let state = (events, ChunkParser::new(), VecDeque::new(), who);
    futures::stream::unfold(state, |(mut events, mut parser, mut queue, who)| async move {
        loop {
            if let Some(item) = queue.pop_front() {
                return Some((item, (events, parser, queue, who)));
            }
            if parser.is_done() {
                return None;
            }
            match events.next().await {
                Some(Ok(sse::SseItem::Event(ev))) => parser.push(&who, &ev.data, &mut queue),
                Some(Ok(sse::SseItem::KeepAlive)) => queue.push_back(Ok(ProviderEvent::KeepAlive)),
                Some(Err(e)) => {
                    // The finish reason and usage may precede a cut; a cut after them loses nothing.
                    if parser.finish.is_some() && e.kind == ErrorKind::Network {
                        parser.end(&who, &mut queue);
                    } else {
                        parser.done = true;
                        queue.push_back(Err(e));
                    }
                }
                None => parser.end(&who, &mut queue),
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::provider::ToolSpec;

    fn feed(datas: &[&str]) -> Vec<Result<ProviderEvent, ProviderError>> {
        let mut p = ChunkParser::new();
        let mut out = VecDeque::new();
        for d in datas {
            p.push("P", d, &mut out);
        }
        p.end("P", &mut out);
        out.into_iter().collect()
    }

    #[test]
    fn fragments_are_assembled_by_index_with_offsets_in_chars() {
        let out = feed(&[
            r#"{"id":"r1","choices":[{"delta":{"role":"assistant","content":"héllo 👋"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_time","arguments":"{\"tz"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c2","function":{"name":"b","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\":\"UTC\"}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"completion_tokens_details":{"reasoning_tokens":1}}}"#,
            "[DONE]",
        ]);
        let events: Vec<ProviderEvent> = out.into_iter().map(Result::unwrap).collect();
        assert_eq!(events[0], ProviderEvent::TextDelta("héllo 👋".into()));
        assert_eq!(
            events[1],
            ProviderEvent::ToolCall {
                call: ToolCall { id: "c1".into(), name: "get_time".into(), arguments: r#"{"tz":"UTC"}"#.into() },
                text_chars_before: 7
            }
        );
        assert!(
            matches!(&events[2], ProviderEvent::ToolCall { call, .. } if call.id == "c2" && call.arguments.is_empty())
        );
        assert_eq!(
            events[3],
            ProviderEvent::Usage(Usage {
                prompt_tokens: 7,
                completion_tokens: 3,
                reasoning_tokens: 1,
                cached_tokens: 0
            })
        );
        assert_eq!(events[4], ProviderEvent::Finish { reason: StopReason::ToolCalls, response_id: Some("r1".into()) });
    }

    #[test]
    fn reasoning_is_read_from_either_field() {
        let out = feed(&[
            r#"{"choices":[{"delta":{"reasoning_content":"think"}}]}"#,
            r#"{"choices":[{"delta":{"reasoning":"more"}}]}"#,
            r#"{"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}"#,
        ]);
        assert_eq!(out[0], Ok(ProviderEvent::ReasoningDelta("think".into())));
        assert_eq!(out[1], Ok(ProviderEvent::ReasoningDelta("more".into())));
        assert!(
            matches!(out.last(), Some(Ok(ProviderEvent::Finish { reason: StopReason::Stop, .. }))),
            "no [DONE] is fine after a finish reason"
        );
    }

    #[test]
    fn calls_without_index_or_id_still_assemble() {
        let out = feed(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"y","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
        ]);
        let names: Vec<(String, String)> = out
            .iter()
            .filter_map(|e| match e {
                Ok(ProviderEvent::ToolCall { call, .. }) => Some((call.id.clone(), call.name.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(names, vec![("a".into(), "x".into()), ("call_1".into(), "y".into())]);
        assert!(matches!(out.last(), Some(Ok(ProviderEvent::Finish { reason: StopReason::ToolCalls, .. }))));
    }

    #[test]
    fn a_stream_cut_before_the_finish_is_an_error() {
        let out = feed(&[r#"{"choices":[{"delta":{"content":"par"}}]}"#]);
        let err = out.last().unwrap().clone().unwrap_err();
        assert_eq!(err.kind, ErrorKind::Network);
    }

    #[test]
    fn malformed_chunks_and_error_objects_are_errors() {
        let out = feed(&[r#"{"choices":[{"delta":{"content":"a"}}]}"#, "{not json"]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].clone().unwrap_err().kind, ErrorKind::Protocol);
        let out = feed(&[r#"{"error":{"message":"model overloaded","type":"server_error"}}"#]);
        assert_eq!(out[0].clone().unwrap_err().kind, ErrorKind::Overloaded);
    }

    #[test]
    fn the_request_maps_history_tools_and_forcing() {
        let mut req = ProviderRequest {
            model: "m".into(),
            system: Some("sys".into()),
            messages: vec![
                Message::User { text: "hi".into() },
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall { id: "c1".into(), name: "t".into(), arguments: String::new() }],
                },
                Message::Tool { call_id: "c1".into(), name: "t".into(), content: "r".into(), is_error: false },
            ],
            tools: vec![ToolSpec { name: "t".into(), description: "d".into(), parameters: json!({"type":"object"}) }],
            tool_choice: ToolChoice::Named("t".into()),
        };
        let body = request_body(&req);
        assert_eq!(body["messages"][0], json!({"role":"system","content":"sys"}));
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(body["messages"][2]["tool_calls"][0]["function"]["arguments"], "{}");
        assert_eq!(body["messages"][3], json!({"role":"tool","tool_call_id":"c1","content":"r"}));
        assert_eq!(body["tool_choice"], json!({"type":"function","function":{"name":"t"}}));
        assert_eq!(body["stream_options"]["include_usage"], true);
        for (choice, wire) in [
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::None, json!("none")),
            (ToolChoice::Required, json!("required")),
            (ToolChoice::OneOf(vec!["t".into()]), json!("required")),
        ] {
            req.tool_choice = choice;
            assert_eq!(request_body(&req)["tool_choice"], wire);
        }
        req.tools.clear();
        assert!(request_body(&req).get("tools").is_none(), "no tools, no tool_choice");
    }
}
