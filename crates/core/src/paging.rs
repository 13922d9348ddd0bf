//! Tool output the model pages through. Pure.
//!
//! A tool result longer than the limit (a setting, [`DEFAULT_LIMIT`] characters by default,
//! within [`MIN_LIMIT`]..=[`MAX_LIMIT`]) is stored whole, but the model receives its beginning
//! followed by [`note`]: how much was left out and how to read it with the built-in tool
//! [`TOOL`] (`read_tool_result { call_id, offset?, length? }`, served by the service, which
//! reads the store). Compaction's stubs end with the same note.
//!
//! [`TOOL`] is offered from the first request whose history holds a result with the note (cut
//! here or stubbed by compaction) on, and then in every request of the conversation: the tool
//! list changes once, so the provider's prompt cache (which starts with the tools) misses once,
//! and a chat that never needed it never pays for its definition.
//!
//! Invariant: [`cut`] is the one place a result is shortened for the model, applied the same way
//! to a live round's results and to a history rebuilt from the store (before framing untrusted
//! data), so the next turn sends exactly what this one did. Offsets and lengths count characters
//! (Unicode scalar values), never bytes.

use std::borrow::Cow;

use crate::types::Message;

/// The built-in tool that reads a stored result by call id.
pub const TOOL: &str = "read_tool_result";

/// The longest result the model receives whole, in characters, when the setting is not set.
pub const DEFAULT_LIMIT: usize = 16_000;
/// The smallest limit the setting takes.
pub const MIN_LIMIT: usize = 1_000;
/// The largest limit the setting takes.
pub const MAX_LIMIT: usize = 200_000;

/// Characters of a [`TOOL`] result kept for its own trailer, so a page never needs cutting.
pub const PAGE_TRAILER: usize = 400;

/// `limit` within [`MIN_LIMIT`]..=[`MAX_LIMIT`].
pub fn bounded(limit: usize) -> usize {
    limit.clamp(MIN_LIMIT, MAX_LIMIT)
}

/// The longest page [`TOOL`] returns under `limit`: the limit less its trailer.
pub fn max_page(limit: usize) -> usize {
    bounded(limit) - PAGE_TRAILER
}

/// What the model is told after the first `shown` of `total` characters of the result of
/// `call_id`: how much was left out and how to read it. Compaction's stubs end with it too.
pub fn note(call_id: &str, shown: usize, total: usize) -> String {
    let left = total.saturating_sub(shown);
    format!(
        "[{left} of this result's {total} characters were left out here (characters {shown} to {total}); it is stored whole. To read on, call {TOOL} with {{\"call_id\": \"{call_id}\", \"offset\": {shown}}}.]"
    )
}

/// What every [`note`] says, and nothing else the app writes: how [`needed`] recognises one.
const NOTE_MARK: &str = concat!("call ", "read_tool_result", " with {\"call_id\": \"");

/// Whether `history` holds a tool result with a [`note`] (or a compaction's stub, which names
/// [`TOOL`] the same way): then [`TOOL`] is offered. A compacted history needs it too; the
/// loop checks that itself (`machine/request.rs`).
pub fn needed(history: &[Message]) -> bool {
    history.iter().any(|m| matches!(m, Message::Tool { content, .. } if content.contains(NOTE_MARK)))
}

/// `text`, the result of `call_id`, as the model receives it under `limit` characters: whole
/// when it fits, else its beginning (ending at a line break when one falls in the last fifth)
/// followed by a blank line and [`note`].
pub fn cut<'a>(call_id: &str, text: &'a str, limit: usize) -> Cow<'a, str> {
    let limit = bounded(limit);
    let Some((end, _)) = text.char_indices().nth(limit) else { return Cow::Borrowed(text) };
    let total = limit + text[end..].chars().count();
    let head = &text[..end];
    let head = match head.rfind('\n') {
        Some(newline) if head[..newline].chars().count() >= limit - limit / 5 => &head[..=newline],
        _ => head,
    };
    let shown = head.chars().count();
    Cow::Owned(format!("{}\n\n{}", head.trim_end_matches('\n'), note(call_id, shown, total)))
}

/// The characters `offset..offset + length` of `text` (clamped to its end).
pub fn page(text: &str, offset: usize, length: usize) -> &str {
    let byte = |text: &str, chars: usize| text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i);
    let start = byte(text, offset);
    let end = start + byte(&text[start..], length);
    &text[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_within_the_limit_is_sent_whole() {
        let text = "é".repeat(MIN_LIMIT);
        assert!(matches!(cut("c", &text, MIN_LIMIT), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn a_longer_result_keeps_its_beginning_and_says_how_to_read_the_rest() {
        let text = "ü".repeat(5_000);
        let sent = cut("call_7", &text, 2_000);
        let (head, tail) = sent.split_once("\n\n").unwrap();
        assert_eq!(head, "ü".repeat(2_000), "characters, not bytes");
        assert_eq!(tail, note("call_7", 2_000, 5_000));
        assert!(tail.contains("3000 of this result's 5000 characters"), "{tail}");
        assert!(tail.contains(r#"call read_tool_result with {"call_id": "call_7", "offset": 2000}"#), "{tail}");
    }

    #[test]
    fn the_cut_ends_at_a_line_break_in_the_last_fifth_else_at_the_limit() {
        let lines: String = (0..400).map(|i| format!("line {i:04} ........\n")).collect();
        let sent = cut("c", &lines, 1_000);
        let head = sent.split_once("\n\n").unwrap().0;
        assert!(head.ends_with('.') && 1_000 - head.chars().count() < 21, "{head}");
        assert!(sent.contains(&format!("\"offset\": {}", head.chars().count() + 1)), "the newline is shown");
        let one_line = "x".repeat(3_000);
        assert!(cut("c", &one_line, 1_000).contains("\"offset\": 1000"));
    }

    #[test]
    fn the_limit_is_bounded() {
        assert_eq!(bounded(10), MIN_LIMIT);
        assert_eq!(bounded(usize::MAX), MAX_LIMIT);
        assert!(cut("c", &"x".repeat(MIN_LIMIT + 1), 5).contains("left out"));
        assert_eq!(max_page(DEFAULT_LIMIT), DEFAULT_LIMIT - PAGE_TRAILER);
    }

    #[test]
    fn the_tool_is_offered_once_a_result_with_the_note_is_in_the_history() {
        let tool = |content: String| Message::Tool {
            call_id: "c".into(),
            name: "web_fetch".into(),
            content,
            is_error: false,
            images: Vec::new(),
        };
        let short = [Message::user("hi"), tool("short".into())];
        assert!(!needed(&short));
        let cut = [tool(cut("c", &"x".repeat(3_000), 1_000).into_owned())];
        assert!(needed(&cut));
        let stub = [tool(crate::compaction::stub("c", "web_fetch", &"x".repeat(3_000)))];
        assert!(needed(&stub));
        assert!(note("c", 1, 2).contains(NOTE_MARK));
    }

    #[test]
    fn a_page_counts_characters_and_stops_at_the_end() {
        assert_eq!(page("aé😀bc", 1, 2), "é😀");
        assert_eq!(page("abc", 2, 10), "c");
        assert_eq!(page("abc", 3, 10), "");
    }
}
