//! Reading a Gemini event stream: whole `GenerateContentResponse` chunks into text, thoughts,
//! calls with generated ids, usage, finish reasons and blocks, and the thought signatures kept as
//! state (see the module docs of [`super`]).

use super::API;
use crate::sse;
use serde_json::{Value, json};
use std::collections::{HashSet, VecDeque};
use switchboard_core::provider::StopReason;
use switchboard_core::types::char_len;
use switchboard_core::{ErrorKind, ProviderError, ProviderEvent, ProviderState, ToolCall, Usage};

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
    use crate::gemini::GENERATED_ID_PREFIX;
    use crate::gemini::request::request_body;
    use crate::sse::Parser as _;
    use switchboard_core::{Message, ProviderRequest};

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

    fn tool(call_id: &str, name: &str, content: &str, is_error: bool) -> Message {
        Message::Tool {
            images: Default::default(),
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error,
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
        let mut messages = vec![Message::user("go")];
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
}
