//! Reading a Chat Completions stream: chunks of deltas assembled into canonical events.

use crate::sse;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use switchboard_core::provider::StopReason;
use switchboard_core::types::char_len;
use switchboard_core::{ErrorKind, ProviderError, ProviderEvent, ToolCall, Usage};

#[derive(Deserialize)]
struct Chunk {
    id: Option<String>,
    // vLLM and others send `"choices": null` in the usage chunk.
    choices: Option<Vec<Choice>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    /// A refusal, streamed in its own field instead of `content`.
    refusal: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    tool_calls: Option<Vec<WireCallDelta>>,
}

#[derive(Deserialize)]
struct WireCallDelta {
    index: Option<u32>,
    id: Option<String>,
    function: Option<WireFunction>,
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
    /// Why the call cannot be trusted; it is then answered with an error and never run.
    problem: Option<String>,
}

/// Assembles a Chat Completions stream into canonical events. Pure: fed one SSE `data` at a time.
///
/// Tool-call fragments: a fragment with an id belongs to the call with that id; an id new at an
/// index already taken by another id starts a new call there (two parallel calls are never merged
/// into one with concatenated arguments); a fragment without an id continues the call at its
/// index, or without an index the call most recently started, unless it names a tool, which starts
/// a call. Arguments with no call to belong to become a malformed call, which the loop answers
/// with an error for the model and never runs.
#[derive(Default)]
pub struct ChunkParser {
    /// Calls in the order they started.
    calls: Vec<PartialCall>,
    /// The wire index -> the call it currently designates.
    by_index: BTreeMap<u32, usize>,
    text_chars: usize,
    /// The refusal streamed so far (`delta.refusal`), also given as answer text.
    refusal: String,
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
                cache_write_tokens: 0,
            });
        }
        for choice in chunk.choices.unwrap_or_default() {
            let d = choice.delta.unwrap_or_default();
            if let Some(r) = d.reasoning_content.or(d.reasoning).filter(|r| !r.is_empty()) {
                out.push_back(Ok(ProviderEvent::ReasoningDelta(r)));
            }
            if let Some(text) = d.content.filter(|t| !t.is_empty()) {
                self.text_chars += char_len(&text);
                out.push_back(Ok(ProviderEvent::TextDelta(text)));
            }
            // A refusal is the answer: shown and kept as its text, and noticed at the finish.
            if let Some(text) = d.refusal.filter(|t| !t.is_empty()) {
                self.text_chars += char_len(&text);
                self.refusal.push_str(&text);
                out.push_back(Ok(ProviderEvent::TextDelta(text)));
            }
            for frag in d.tool_calls.unwrap_or_default() {
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
        let id = frag.id.filter(|id| !id.is_empty());
        let function = frag.function.unwrap_or_default();
        let name = function.name.filter(|n| !n.is_empty());
        let at_index = frag.index.and_then(|i| self.by_index.get(&i).copied());
        let by_id = id.as_ref().and_then(|id| self.calls.iter().position(|c| &c.id == id));
        let target = match (&id, by_id, at_index) {
            (Some(_), Some(known), _) => Some(known),
            // The call at this index has no id yet: this is its id.
            (Some(_), None, Some(i)) if self.calls[i].id.is_empty() => Some(i),
            // A new id: a new call, even at an index another id holds.
            (Some(_), None, _) => None,
            (None, _, Some(i)) => Some(i),
            (None, _, None) if frag.index.is_some() || name.is_some() => None,
            // No id, no index, no name: a continuation of the call most recently started.
            (None, _, None) => match self.calls.len() {
                0 => {
                    let mut call = self.new_call();
                    call.problem = Some("its arguments arrived without a call id, index or tool name".into());
                    self.calls.push(call);
                    Some(self.calls.len() - 1)
                }
                n => Some(n - 1),
            },
        };
        let target = target.unwrap_or_else(|| {
            let call = self.new_call();
            self.calls.push(call);
            self.calls.len() - 1
        });
        if let Some(index) = frag.index {
            self.by_index.insert(index, target);
        }
        let call = &mut self.calls[target];
        if let Some(id) = id {
            call.id = id;
        }
        if let Some(name) = name {
            // Most servers send the name once; a few repeat it in every fragment.
            if call.name != name {
                call.name.push_str(&name);
            }
        }
        if let Some(args) = function.arguments {
            call.arguments.push_str(&args);
        }
    }

    fn new_call(&self) -> PartialCall {
        PartialCall {
            id: String::new(),
            name: String::new(),
            arguments: String::new(),
            text_chars_before: self.text_chars,
            problem: None,
        }
    }

    fn finish_into(&mut self, out: &mut VecDeque<Result<ProviderEvent, ProviderError>>) {
        self.done = true;
        let has_calls = !self.calls.is_empty();
        self.by_index.clear();
        let calls = std::mem::take(&mut self.calls);
        let taken: Vec<String> = calls.iter().map(|c| c.id.clone()).collect();
        for (i, call) in calls.into_iter().enumerate() {
            // A generated id never clashes with one the server sent.
            let id = if call.id.is_empty() {
                let mut n = i;
                while taken.contains(&format!("call_{n}")) {
                    n += 1;
                }
                format!("call_{n}")
            } else {
                call.id
            };
            let problem = call.problem.or_else(|| call.name.is_empty().then(|| "it has no tool name".to_owned()));
            let text_chars_before = call.text_chars_before;
            let call = ToolCall { id, name: call.name, arguments: call.arguments };
            out.push_back(Ok(match problem {
                None => ProviderEvent::ToolCall { call, text_chars_before },
                Some(problem) => ProviderEvent::MalformedToolCall { call, text_chars_before, problem },
            }));
        }
        if let Some(u) = self.usage.take() {
            out.push_back(Ok(ProviderEvent::Usage(u)));
        }
        let reason = match self.finish.take() {
            Some(StopReason::Stop) | None if has_calls => StopReason::ToolCalls,
            Some(StopReason::Stop) | None if !self.refusal.trim().is_empty() => crate::openai::refused(&self.refusal),
            Some(r) => r,
            None => StopReason::Stop,
        };
        out.push_back(Ok(ProviderEvent::Finish { reason, response_id: self.response_id.take() }));
    }
}

/// The body may end without `[DONE]`: complete if a finish reason was seen, else an error.
impl sse::Parser for ChunkParser {
    fn push(&mut self, who: &str, _event: &str, data: &str, out: &mut sse::Decided) {
        ChunkParser::push(self, who, data, out);
    }
    fn is_done(&self) -> bool {
        ChunkParser::is_done(self)
    }
    // The finish reason and usage may precede a cut; a cut after them loses nothing.
    fn has_finished(&self) -> bool {
        self.finish.is_some()
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
    fn a_refusal_is_the_answer_and_ends_with_a_notice_quoting_it() {
        let out = feed(&[
            r#"{"id":"r1","choices":[{"delta":{"role":"assistant","content":null,"refusal":""}}]}"#,
            r#"{"choices":[{"delta":{"refusal":"I'm sorry, "}}]}"#,
            r#"{"choices":[{"delta":{"refusal":"I can't help with that."}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]);
        let events: Vec<ProviderEvent> = out.into_iter().map(Result::unwrap).collect();
        assert_eq!(events[0], ProviderEvent::TextDelta("I'm sorry, ".into()));
        assert_eq!(events[1], ProviderEvent::TextDelta("I can't help with that.".into()));
        assert_eq!(
            events[2],
            ProviderEvent::Finish {
                reason: StopReason::Filtered("The model refused: I'm sorry, I can't help with that.".into()),
                response_id: Some("r1".into())
            }
        );
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
                cached_tokens: 0,
                cache_write_tokens: 0
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

    fn calls_of(out: &[Result<ProviderEvent, ProviderError>]) -> Vec<(String, String, String, Option<String>)> {
        out.iter()
            .filter_map(|e| match e {
                Ok(ProviderEvent::ToolCall { call, .. }) => {
                    Some((call.id.clone(), call.name.clone(), call.arguments.clone(), None))
                }
                Ok(ProviderEvent::MalformedToolCall { call, problem, .. }) => {
                    Some((call.id.clone(), call.name.clone(), call.arguments.clone(), Some(problem.clone())))
                }
                _ => None,
            })
            .collect()
    }

    fn frag(index: Option<u32>, id: Option<&str>, name: Option<&str>, args: &str) -> String {
        let mut f = json!({"function": {"arguments": args}});
        if let Some(i) = index {
            f["index"] = json!(i);
        }
        if let Some(id) = id {
            f["id"] = json!(id);
        }
        if let Some(n) = name {
            f["function"]["name"] = json!(n);
        }
        json!({"choices": [{"delta": {"tool_calls": [f]}}]}).to_string()
    }

    #[test]
    fn two_calls_sharing_an_index_with_different_ids_are_two_calls() {
        // Some servers number every parallel call 0.
        let chunks = [
            frag(Some(0), Some("a"), Some("f"), r#"{"x":"#),
            frag(Some(0), None, None, "1}"),
            frag(Some(0), Some("b"), Some("g"), r#"{"y":"#),
            frag(Some(0), None, None, "2}"),
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#.to_owned(),
        ];
        let out = feed(&chunks.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(
            calls_of(&out),
            [("a".into(), "f".into(), r#"{"x":1}"#.into(), None), ("b".into(), "g".into(), r#"{"y":2}"#.into(), None)]
        );
    }

    #[test]
    fn fragments_without_an_index_continue_the_call_their_id_started() {
        let chunks = [
            frag(None, Some("a"), Some("f"), r#"{"x""#),
            frag(None, Some("b"), Some("g"), r#"{"y""#),
            frag(None, Some("a"), None, ":1}"),
            frag(None, Some("b"), None, ":2}"),
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#.to_owned(),
        ];
        let out = feed(&chunks.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(
            calls_of(&out),
            [("a".into(), "f".into(), r#"{"x":1}"#.into(), None), ("b".into(), "g".into(), r#"{"y":2}"#.into(), None)]
        );
        // Without an id or index either, arguments continue the call most recently started.
        let chunks = [frag(None, Some("a"), Some("f"), r#"{"x""#), frag(None, None, None, ":1}"), "[DONE]".to_owned()];
        let out = feed(&chunks.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(calls_of(&out), [("a".into(), "f".into(), r#"{"x":1}"#.into(), None)]);
    }

    #[test]
    fn fragments_that_fit_no_call_become_malformed_calls_with_unique_ids() {
        let chunks = [
            frag(None, None, None, r#"{"lost":true}"#),
            frag(Some(1), Some("call_0"), None, "{}"),
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#.to_owned(),
        ];
        let out = feed(&chunks.iter().map(String::as_str).collect::<Vec<_>>());
        let calls = calls_of(&out);
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0].0, "call_1", "a generated id does not clash with the server's");
        assert!(calls[0].3.as_deref().is_some_and(|p| p.contains("without a call id")), "{calls:?}");
        assert!(calls[1].3.as_deref().is_some_and(|p| p.contains("no tool name")), "{calls:?}");
    }

    #[test]
    fn a_usage_chunk_with_null_choices_records_the_usage() {
        let out = feed(&[
            r#"{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}"#,
            r#"{"id":"x","choices":null,"usage":{"prompt_tokens":3,"completion_tokens":1}}"#,
            r#"{"choices":[{"delta":null,"finish_reason":null}]}"#,
            "[DONE]",
        ]);
        assert!(out.iter().all(Result::is_ok), "{out:?}");
        assert!(out.contains(&Ok(ProviderEvent::Usage(Usage {
            prompt_tokens: 3,
            completion_tokens: 1,
            reasoning_tokens: 0,
            cached_tokens: 0,
            cache_write_tokens: 0
        }))));
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
}
