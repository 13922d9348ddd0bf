//! Compaction that loses nothing: what a compaction is, how it is applied to what is sent, and
//! the pure decisions behind it (which results become stubs, where a summary cuts; what the
//! summariser is asked is `crate::summarising`). Pure: the machine (`machine/compact.rs`), the
//! store's history and the service's "compact now" all use these same functions, so a rebuilt
//! history sends exactly what the live turn sent.
//!
//! A [`Compaction`] never changes the history it is applied to: it is a view. The first
//! `covered` canonical messages are sent as one summary message (with every pinned message among
//! them quoted verbatim), and each result in `stubbed` is sent as a short stub naming
//! `read_tool_result`. Every original message and result stays stored and shown.
//!
//! Invariant: applying a compaction is deterministic (same history, pins and compaction: same
//! messages), so the start of what is sent stays the same from one request to the next until the
//! next compaction, and providers' prompt caches keep hitting.

use crate::provider::ProviderRequest;
use crate::types::Message;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// The name of the built-in tool that reads a stored tool result back (PAGING's tool).
pub const READ_TOOL_RESULT: &str = "read_tool_result";

/// Results shorter than this many chars are sent whole: a stub would save little.
pub const STUB_MIN_CHARS: usize = 600;

/// Chars of a result a stub shows (its first lines).
const STUB_PREVIEW_CHARS: usize = 240;

/// Lines of a result a stub shows at most.
const STUB_PREVIEW_LINES: usize = 3;

/// The window assumed for a model whose window is unknown.
pub const DEFAULT_WINDOW: u64 = 32_768;

/// The tokens one request may take before the loop compacts: `compact_at` of what the window
/// leaves after the output reserve.
pub fn threshold(window: u64, max_output: Option<u64>, compact_at: f32) -> u64 {
    let reserve = max_output.unwrap_or(window / 8).min(window / 2);
    let at = if compact_at.is_finite() && compact_at > 0.0 { compact_at.min(1.0) } else { 0.8 };
    ((window - reserve) as f64 * f64::from(at)) as u64
}

/// One compaction of a conversation, cumulative: it says everything that is sent differently
/// from the stored history (a later compaction includes what an earlier one did).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Compaction {
    /// How many canonical messages, from the start of the history, the summary stands for
    /// (0: no summary).
    pub covered: u32,
    /// The summary of those messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub summary: Option<String>,
    /// Call ids whose results are sent as stubs.
    #[serde(default)]
    pub stubbed: BTreeSet<String>,
    /// Indexes of covered messages quoted verbatim after the summary (the question of the turn
    /// that compacted), besides the pinned ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<Vec<u32>>"))]
    pub quoted: Vec<u32>,
}

impl Compaction {
    /// Whether sending with it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.covered == 0 && self.stubbed.is_empty()
    }

    /// Whether it fits `history`: the summary ends at a message boundary a request can start
    /// after (not between a call and its result). One that does not fit is not applied.
    pub fn fits(&self, history: &[Message]) -> bool {
        let covered = self.covered as usize;
        covered == 0
            || (self.summary.is_some()
                && covered <= history.len()
                && !matches!(history.get(covered), Some(Message::Tool { .. })))
    }

    /// What is sent for `history`: the summary (pinned messages it covers quoted verbatim) in
    /// place of the first `covered` messages, stubs in place of stubbed results. `pinned` are
    /// indexes into `history`. A compaction that does not [fit](Self::fits) sends `history`.
    pub fn apply(&self, history: &[Message], pinned: &[usize]) -> Vec<Message> {
        if self.is_empty() || !self.fits(history) {
            return history.to_vec();
        }
        let covered = self.covered as usize;
        let mut out = Vec::with_capacity(history.len() - covered + 1);
        if let Some(summary) = self.summary.as_deref().filter(|_| covered > 0) {
            let mut text = summary_message(summary);
            let mut verbatim: Vec<usize> =
                pinned.iter().copied().chain(self.quoted.iter().map(|&i| i as usize)).collect();
            verbatim.sort_unstable();
            verbatim.dedup();
            for &i in verbatim.iter().filter(|&&i| i < covered) {
                if let Some(quoted) = quote(&history[i]) {
                    text.push_str("\n\n");
                    text.push_str(&quoted);
                }
            }
            match history.get(covered) {
                // Two user messages in a row: some APIs refuse them; one message says both.
                Some(Message::User { text: next, parts }) => {
                    text.push_str("\n\n---\n\n");
                    text.push_str(next);
                    out.push(Message::User { text, parts: parts.clone() });
                    out.extend(history[covered + 1..].iter().map(|m| self.stub_of(m)));
                    return unchained(out);
                }
                _ => out.push(Message::user(text)),
            }
        }
        out.extend(history[covered..].iter().map(|m| self.stub_of(m)));
        unchained(out)
    }

    /// Whether what [`Compaction::apply`] sends for `history` carries the parts (attached files)
    /// of the message at `index`: every message's when it does not apply, else those from
    /// `covered` on (a summary quotes only text).
    pub fn sends_parts_of(&self, history: &[Message], index: usize) -> bool {
        self.is_empty() || !self.fits(history) || index >= self.covered as usize
    }

    fn stub_of(&self, message: &Message) -> Message {
        match message {
            Message::Tool { call_id, name, content, is_error, .. } if self.stubbed.contains(call_id) => Message::Tool {
                call_id: call_id.clone(),
                name: name.clone(),
                content: stub(call_id, name, content),
                is_error: *is_error,
                images: Vec::new(),
            },
            other => other.clone(),
        }
    }
}

/// A sent history that differs from the stored one must not be chained to a response the API
/// keeps (OpenAI Responses' `previous_response_id` would bring the whole history back): its
/// responses' ids are dropped, so the whole (compacted) history is sent.
fn unchained(mut messages: Vec<Message>) -> Vec<Message> {
    for m in &mut messages {
        if let Message::Assistant { state: Some(state), .. } = m
            && let Some(data) = state.data.as_object_mut()
            && data.contains_key("responseId")
        {
            data.remove("responseId");
            data.insert("stored".into(), serde_json::Value::Bool(false));
        }
    }
    messages
}

/// The text of the message that stands for the summarised messages.
pub fn summary_message(summary: &str) -> String {
    format!(
        "[Earlier messages of this conversation are summarised here to fit the model's context window. The originals are stored; any tool result can be read again whole with {READ_TOOL_RESULT}.]\n\n{summary}"
    )
}

/// A pinned message, quoted verbatim for the summary message.
fn quote(message: &Message) -> Option<String> {
    match message {
        Message::User { text, .. } => Some(format!("[A message from the person, verbatim:]\n{text}")),
        Message::Assistant { text, .. } if !text.is_empty() => {
            Some(format!("[A message from the assistant, verbatim:]\n{text}"))
        }
        _ => None,
    }
}

/// The stub sent in place of a long result: the tool, the size, the first lines, and how to
/// read the rest.
pub fn stub(call_id: &str, tool: &str, content: &str) -> String {
    let chars = content.chars().count();
    let mut preview: String = content.lines().take(STUB_PREVIEW_LINES).collect::<Vec<_>>().join("\n");
    if preview.chars().count() > STUB_PREVIEW_CHARS {
        preview = preview.chars().take(STUB_PREVIEW_CHARS).collect();
    }
    format!(
        "[Result of {tool}, {chars} characters, shortened to save context. It begins:]\n{preview}\n[…The whole result is stored: call {READ_TOOL_RESULT} with {{\"call_id\": \"{call_id}\", \"offset\": 0}} to read it.]"
    )
}

/// A rough count of the tokens `request` sends (4 chars a token, plus a little per message):
/// the stand-in until the loop's own estimate is used.
pub fn estimate(request: &ProviderRequest) -> u64 {
    let mut chars = request.system.as_deref().map_or(0, str::len);
    for m in &request.messages {
        chars += message_chars(m) + 16;
    }
    for t in &request.tools {
        chars += t.name.len() + t.description.len() + t.parameters.to_string().len();
    }
    (chars as u64).div_ceil(4)
}

/// Chars a message sends (text, arguments, results).
pub fn message_chars(m: &Message) -> usize {
    match m {
        Message::User { text, parts } => text.len() + parts.iter().map(part_chars).sum::<usize>(),
        Message::Assistant { text, tool_calls, .. } => {
            text.len() + tool_calls.iter().map(|c| c.name.len() + c.arguments.len() + 16).sum::<usize>()
        }
        Message::Tool { content, .. } => content.len() + 16,
    }
}

/// Chars an attached file counts as, four to a token: its text; an image as the APIs price
/// images; a PDF at about 1,500 tokens per 60 KB page.
fn part_chars(part: &crate::Part) -> usize {
    match part {
        crate::Part::Image { image, .. } => crate::tokens::image_tokens(crate::tokens::image_size(image)) as usize * 4,
        crate::Part::Pdf { data, .. } => data.len() * 3 / 4 / 10,
        crate::Part::Text { name, text, note, .. } => name.len() + text.len() + note.as_ref().map_or(0, String::len),
    }
}

/// The results to stub: every result longer than [`STUB_MIN_CHARS`] before the latest round
/// (whose results the model is reading now), and not already covered by the summary.
pub fn stubs_to_add(history: &[Message], compaction: &Compaction) -> Vec<String> {
    let latest =
        history.iter().rposition(|m| matches!(m, Message::Assistant { tool_calls, .. } if !tool_calls.is_empty()));
    let end = latest.unwrap_or(history.len());
    history[..end]
        .iter()
        .skip(compaction.covered as usize)
        .filter_map(|m| match m {
            Message::Tool { call_id, content, .. }
                if content.chars().count() > STUB_MIN_CHARS && !compaction.stubbed.contains(call_id) =>
            {
                Some(call_id.clone())
            }
            _ => None,
        })
        .collect()
}

/// Where a new summary should end: the latest boundary that leaves the recent messages (about
/// `keep_tokens` of them, at least the latest round or question) sent as they are. `None` when
/// nothing more than `from` can be summarised.
pub fn cut(history: &[Message], from: usize, keep_tokens: u64) -> Option<usize> {
    // The latest round or question always stays.
    let last_start = history
        .iter()
        .rposition(|m| {
            matches!(m, Message::User { .. })
                || matches!(m, Message::Assistant { tool_calls, .. } if !tool_calls.is_empty())
        })
        .unwrap_or(0);
    let mut kept = 0u64;
    let mut best = None;
    for i in (from + 1..=last_start).rev() {
        let boundary = !matches!(history[i], Message::Tool { .. });
        if boundary && (kept <= keep_tokens || best.is_none()) {
            best = Some(i);
        }
        kept += (message_chars(&history[i]) as u64).div_ceil(4);
        if kept > keep_tokens && best.is_some() {
            break;
        }
    }
    // Summarising only a question would lose its wording and gain nothing.
    best.filter(|&c| c > from && history[from..c].iter().any(|m| matches!(m, Message::Assistant { .. })))
}

/// The instructions of the summariser (its requests: `crate::summarising`).
pub const SUMMARY_PROMPT: &str = "You compact a conversation between a person and an AI assistant that uses tools, so it can continue in a smaller context. Write a summary that another assistant can continue from without the original messages. Keep, exactly: names (people, files, places, products, identifiers), numbers and figures with their units, dates, every decision made and why, the person's requests and preferences, open questions and unfinished work, and for each tool call what the tool found (the facts, not only that it was called). Prefer lists; quote short key passages verbatim. Do not add anything that is not in the conversation. Write only the summary.";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolCall;

    fn round(id: &str, result: &str) -> Vec<Message> {
        vec![
            Message::assistant("", vec![ToolCall { id: id.into(), name: "fetch".into(), arguments: "{}".into() }]),
            Message::Tool {
                call_id: id.into(),
                name: "fetch".into(),
                content: result.into(),
                is_error: false,
                images: vec![],
            },
        ]
    }

    fn history(rounds: usize) -> Vec<Message> {
        let mut h = vec![Message::user("question")];
        for i in 0..rounds {
            h.extend(round(&format!("c{i}"), &format!("fact {i}\n{}", "x".repeat(2000))));
        }
        h
    }

    #[test]
    fn stubs_leave_the_latest_round_and_short_results_whole() {
        let mut h = history(3);
        h.extend(round("short", "ok"));
        let ids = stubs_to_add(&h, &Compaction::default());
        assert_eq!(ids, ["c0", "c1", "c2"]);
        let c = Compaction { stubbed: ids.into_iter().collect(), ..Compaction::default() };
        let sent = c.apply(&h, &[]);
        assert_eq!(sent.len(), h.len());
        let Message::Tool { content, .. } = &sent[2] else { panic!() };
        assert!(content.contains("fetch, 2007 characters") && content.contains("fact 0") && content.contains("\"c0\""));
        assert!(content.len() < 600);
    }

    #[test]
    fn a_summary_replaces_a_prefix_and_quotes_pins_verbatim() {
        let h = history(4);
        let to = cut(&h, 0, 1000).unwrap();
        assert!(matches!(h[to], Message::Assistant { .. }), "cuts before a round, never between a call and its result");
        let c = Compaction { covered: to as u32, summary: Some("S".into()), ..Compaction::default() };
        let sent = c.apply(&h, &[0]);
        let Message::User { text, .. } = &sent[0] else { panic!() };
        assert!(text.ends_with("S\n\n[A message from the person, verbatim:]\nquestion"));
        assert_eq!(sent.len(), h.len() - to + 1);
        assert_eq!(c.apply(&h, &[0]), sent, "deterministic: the start of what is sent is stable");
    }

    #[test]
    fn a_compaction_that_does_not_fit_sends_the_history() {
        let h = history(2);
        let c = Compaction { covered: 2, summary: Some("S".into()), ..Compaction::default() };
        assert!(!c.fits(&h), "index 2 is a result: a call without its result");
        assert_eq!(c.apply(&h, &[]), h);
        let c = Compaction { covered: 99, ..c };
        assert_eq!(c.apply(&h, &[]), h);
    }

    #[test]
    fn a_summary_before_a_question_is_one_user_message() {
        let mut h = history(1);
        h.push(Message::assistant("answer", vec![]));
        h.push(Message::user("next"));
        let c = Compaction { covered: 4, summary: Some("S".into()), ..Compaction::default() };
        let sent = c.apply(&h, &[]);
        assert_eq!(sent.len(), 1);
        assert!(matches!(&sent[0], Message::User { text, .. } if text.ends_with("S\n\n---\n\nnext")));
    }

    #[test]
    fn the_parts_sent_are_those_apply_keeps() {
        let file =
            || crate::Part::Text { name: "a.txt".into(), mime_type: "text/plain".into(), text: "A".into(), note: None };
        let asked = |text: &str| Message::User { text: text.into(), parts: vec![file()] };
        let mut h = vec![asked("first")];
        h.extend(round("c0", "fact"));
        h.push(Message::assistant("answer", vec![]));
        h.push(asked("second"));
        h.push(Message::assistant("again", vec![]));
        h.push(asked("third"));
        let parts_sent = |sent: &[Message]| {
            sent.iter().filter(|m| matches!(m, Message::User { parts, .. } if !parts.is_empty())).count()
        };
        for covered in [0, 2, 4, 5, 6] {
            for summary in [None, Some("S".to_owned())] {
                let c = Compaction { covered, summary: summary.clone(), ..Compaction::default() };
                let claimed = (0..h.len()).filter(|&i| matches!(h[i], Message::User { .. }) && c.sends_parts_of(&h, i));
                assert_eq!(claimed.count(), parts_sent(&c.apply(&h, &[0])), "covered {covered}, summary {summary:?}");
            }
        }
    }

    #[test]
    fn the_threshold_leaves_room_for_the_answer() {
        assert_eq!(threshold(8000, Some(1000), 0.8), 5600);
        assert_eq!(threshold(8000, None, 0.8), 5600);
        assert_eq!(threshold(8000, Some(1_000_000), 0.5), 2000);
    }
}
