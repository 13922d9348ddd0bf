//! Reading a Messages event stream: content blocks assembled into text, reasoning, calls,
//! usage and the signed thinking blocks kept as state (see the module docs of [`super`]).

use super::API;
use super::request::blank;
use crate::sse;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use switchboard_core::provider::StopReason;
use switchboard_core::types::char_len;
use switchboard_core::{ErrorKind, ProviderError, ProviderEvent, ProviderState, ToolCall, Usage};

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
}
