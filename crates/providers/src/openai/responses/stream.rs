//! Reading a Responses event stream: typed events assembled into text, reasoning, calls, usage
//! and the response's state (see the module docs of [`super`]).

use super::KIND;
use super::request::blank;
use crate::sse;
use serde_json::{Value, json};
use std::collections::VecDeque;
use switchboard_core::provider::StopReason;
use switchboard_core::types::char_len;
use switchboard_core::{ErrorKind, ProviderError, ProviderEvent, ProviderState, ToolCall, Usage};

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
    /// The refusal given so far (`response.refusal.*` or a `refusal` content part), also given
    /// as answer text.
    refusal: String,
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
            // A refusal is the answer: shown and kept as its text, and noticed at the finish.
            // `done` (and a finished item's refusal part) repeats what the deltas gave.
            "response.refusal.delta" => {
                if let Some(text) = delta() {
                    self.refuse(text, out);
                }
            }
            "response.refusal.done" => {
                if let Some(text) = v["refusal"].as_str() {
                    self.refuse_once(text, out);
                }
            }
            "response.output_item.done" if v["item"]["type"] == "message" => {
                self.keep_item(&v["item"]);
                self.refusal_parts(&v["item"], out);
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
            "response.completed" => self.finish_response(&v["response"], None, out),
            "response.incomplete" => {
                let reason = match v["response"]["incomplete_details"]["reason"].as_str() {
                    Some("max_output_tokens") => StopReason::Length,
                    Some("content_filter") => StopReason::ContentFilter,
                    Some(other) => StopReason::Other(other.to_owned()),
                    None => StopReason::Other("incomplete".to_owned()),
                };
                self.finish_response(&v["response"], Some(reason), out);
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

    fn refuse(&mut self, text: String, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        self.text_chars += char_len(&text);
        self.refusal.push_str(&text);
        out.push_back(Ok(ProviderEvent::TextDelta(text)));
    }

    /// A whole refusal, given only when nothing of it was given yet.
    fn refuse_once(&mut self, text: &str, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        if self.refusal.is_empty() && !text.is_empty() {
            self.refuse(text.to_owned(), out);
        }
    }

    /// The `refusal` content parts of a message item.
    fn refusal_parts(&mut self, item: &Value, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        let parts = item["content"].as_array().into_iter().flatten();
        let text: String = parts.filter(|p| p["type"] == "refusal").filter_map(|p| p["refusal"].as_str()).collect();
        self.refuse_once(&text, out);
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
    fn finish_response(
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
        // A refusal only the terminal response carries.
        if let Some(output) = response["output"].as_array() {
            for item in output.iter().filter(|i| i["type"] == "message") {
                self.refusal_parts(item, out);
            }
        }
        if let Some(state) = self.state() {
            out.push_back(Ok(ProviderEvent::State(state)));
        }
        let reason = reason.unwrap_or(if !self.emitted_ids.is_empty() {
            StopReason::ToolCalls
        } else if !self.refusal.trim().is_empty() {
            crate::openai::refused(&self.refusal)
        } else {
            StopReason::Stop
        });
        out.push_back(Ok(ProviderEvent::Finish { reason, response_id: self.response_id.take() }));
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
        "response.refusal.delta",
        "response.refusal.done",
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

/// The answer is finished only by its terminal event (`response.completed`, `.incomplete` or
/// `.failed`), which is never implied: a body that ends before it was cut anywhere.
impl sse::Parser for EventParser {
    fn push(&mut self, who: &str, event: &str, data: &str, out: &mut sse::Decided) {
        EventParser::push(self, who, event, data, out);
    }
    fn is_done(&self) -> bool {
        EventParser::is_done(self)
    }
    fn finish(&mut self, out: &mut sse::Decided) {
        self.finish_response(&Value::Null, None, out);
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
    fn a_refusal_is_the_answer_once_and_ends_with_a_notice_quoting_it() {
        let refused = |t: &str| StopReason::Filtered(format!("The model refused: {t}"));
        let part = json!({"type":"refusal","refusal":"I can't help with that."});
        let message_done = json!({"type":"response.output_item.done","output_index":0,
            "item":{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[part]}});
        let completed = |output: Value| json!({"type":"response.completed","response":{"id":"resp_1","output":output}});
        // Streamed: the deltas, then `done` and the finished item repeat it.
        let out = ok(feed(&[
            created("resp_1"),
            json!({"type":"response.refusal.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"I can't "}),
            json!({"type":"response.refusal.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"help with that."}),
            json!({"type":"response.refusal.done","item_id":"msg_1","output_index":0,"content_index":0,"refusal":"I can't help with that."}),
            message_done.clone(),
            completed(json!([message_done["item"]])),
        ]));
        let texts: Vec<&ProviderEvent> = out.iter().filter(|e| matches!(e, ProviderEvent::TextDelta(_))).collect();
        assert_eq!(
            texts,
            [&ProviderEvent::TextDelta("I can't ".into()), &ProviderEvent::TextDelta("help with that.".into())]
        );
        assert!(
            matches!(out.last(), Some(ProviderEvent::Finish { reason, .. }) if *reason == refused("I can't help with that."))
        );
        // Only in the finished item, or only in the terminal response.
        for events in [
            vec![created("resp_1"), message_done.clone(), completed(json!([]))],
            vec![created("resp_1"), completed(json!([message_done["item"]]))],
        ] {
            let out = ok(feed(&events));
            assert_eq!(out[0], ProviderEvent::TextDelta("I can't help with that.".into()));
            assert!(
                matches!(out.last(), Some(ProviderEvent::Finish { reason, .. }) if *reason == refused("I can't help with that."))
            );
        }
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

        // An unknown model is the same kind as on every other API, as an event or a failure.
        let message = "The model `gpt-nope` does not exist or you do not have access to it.";
        for event in [
            json!({"type":"error","code":"model_not_found","message":message,"param":"model"}),
            json!({"type":"response.failed","response":{"id":"r","status":"failed",
                "error":{"code":"model_not_found","message":message}}}),
        ] {
            let e = feed(&[event])[0].clone().unwrap_err();
            assert_eq!(e.kind, ErrorKind::NotFound, "{}", e.message);
            assert!(e.message.contains("gpt-nope"), "{}", e.message);
        }
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

    const ORIGIN: &str = "https://api.openai.com";

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
}
