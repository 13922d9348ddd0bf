//! Writing a summary within the summariser's own context window. The summariser may be another,
//! smaller model than the chat's, so what it is sent is budgeted with its window and output
//! limit ([`SummaryBudget`]), never the chat's. When the messages to summarise are more than one
//! request can carry they are summarised in [`Pieces`]: each request carries the summary so far
//! and the next piece, and the last answer is the summary (a rolling summary). A message too long
//! for one piece is split across pieces (at a line break where there is one), so nothing is left
//! out of what the summariser reads unless more than [`MAX_PIECES`] requests would be needed:
//! then each tool result is shortened to an equal share (its beginning and its end; the whole
//! result stays stored and readable with `read_tool_result`), and if that is still too much the
//! summary covers the messages the pieces hold whole and the rest is left for the next compaction.
//!
//! Invariant: every request built here fits the budget it was built for (instructions, the
//! summary so far, one piece and the output limit within the summariser's window, counted at
//! [`CHARS_PER_TOKEN`] characters a token, well below what real tokenizers give).

use crate::compaction::{DEFAULT_WINDOW, SUMMARY_PROMPT};
use crate::config::ContextLimits;
use crate::provider::{GenerationOptions, ProviderRequest, ToolChoice};
use crate::types::Message;

/// The most requests one summary takes.
pub const MAX_PIECES: usize = 12;

/// Characters counted as one token of the summariser's input (prose is about 4 in every common
/// tokenizer; code, JSON and other scripts fewer).
pub const CHARS_PER_TOKEN: usize = 3;

/// Characters one token of the summary so far is assumed to take at most.
const SUMMARY_CHARS_PER_TOKEN: usize = 4;

/// The output a summary asks for when the generation settings say nothing, and the most it asks for.
const DEFAULT_OUTPUT: u64 = 2048;
const MAX_OUTPUT: u64 = 4096;

/// The smallest piece of conversation worth a request: a window that leaves less cannot summarise.
pub const MIN_PIECE_CHARS: usize = 1_000;

/// Characters the request's own words take at most besides the instructions and its parts.
const HEADER_CHARS: usize = 200;

/// Bytes a piece may end early to end at a line break.
const LINE_SLACK: usize = 240;

/// Characters a shortened result keeps at least.
const MIN_SHARE: usize = 400;

/// What one summariser request may carry, from the summariser's window and output limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SummaryBudget {
    /// Tokens the summary may take (each request's output limit).
    pub output: u64,
    /// Characters of the request's one message: the summary so far and a piece of conversation.
    pub chars: usize,
}

impl SummaryBudget {
    /// The budget within `limits` (the window a safe default when unknown): the output takes at
    /// most an eighth of the window, the input at most nine tenths of the rest. `None`: the
    /// window is too small to leave [`MIN_PIECE_CHARS`] of conversation beside a summary.
    pub fn new(limits: &ContextLimits, generation: &GenerationOptions) -> Option<Self> {
        let window = limits.window.unwrap_or(DEFAULT_WINDOW);
        let asked = generation.max_output_tokens.map_or(DEFAULT_OUTPUT, u64::from).min(MAX_OUTPUT);
        let output = asked.min(limits.max_output.unwrap_or(u64::MAX)).min(window / 8).max(1);
        let input = (window - output) * 9 / 10;
        let chars = usize::try_from(input)
            .ok()?
            .saturating_mul(CHARS_PER_TOKEN)
            .checked_sub(SUMMARY_PROMPT.len() + HEADER_CHARS)?;
        let budget = Self { output, chars };
        (budget.piece_chars(0) >= MIN_PIECE_CHARS).then_some(budget)
    }

    /// Characters kept for the summary so far: as long as the summariser may write, or the
    /// summary a request starts from when it is longer (at most half the request).
    fn summary_room(&self, previous: usize) -> usize {
        (self.output as usize * SUMMARY_CHARS_PER_TOKEN).max(previous.min(self.chars / 2))
    }

    /// Characters of conversation one piece carries beside a summary of `previous` characters.
    pub fn piece_chars(&self, previous: usize) -> usize {
        self.chars.saturating_sub(self.summary_room(previous))
    }
}

/// The conversation of one summary, in pieces that each fit a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pieces {
    /// The pieces' texts, in order (at most [`MAX_PIECES`]).
    pub texts: Vec<String>,
    /// How many of the messages they hold whole: all of them, unless more than [`MAX_PIECES`]
    /// were needed (then a boundary a compaction can end at).
    pub through: usize,
}

/// `history` (the messages to summarise, after a summary of `previous` characters) as pieces
/// for `budget`. `None`: not one message before a boundary fits [`MAX_PIECES`] pieces.
pub fn pieces(previous: usize, history: &[Message], budget: &SummaryBudget) -> Option<Pieces> {
    let size = budget.piece_chars(previous).max(1);
    // Pieces are filled to three quarters at least (below), so shortening aims at two thirds.
    let entries = entries(history, size * MAX_PIECES * 2 / 3);
    let mut texts: Vec<String> = vec![String::new()];
    // Where each message ends: (piece, byte offset in it).
    let mut ends = Vec::with_capacity(entries.len());
    for entry in &entries {
        let mut rest = entry.as_str();
        loop {
            let current = texts.last_mut().expect("never empty");
            let room = size.saturating_sub(current.len());
            if rest.len() <= room {
                current.push_str(rest);
                break;
            }
            // A message that fits a piece of its own starts one rather than being split, when
            // this one is three quarters full.
            if rest.len() <= size && current.len() >= size * 3 / 4 {
                texts.push(String::new());
                continue;
            }
            let at = split_at(rest, room);
            if at == 0 {
                texts.push(String::new());
                continue;
            }
            current.push_str(&rest[..at]);
            rest = &rest[at..];
            texts.push(String::from("[…continued]\n"));
        }
        ends.push((texts.len() - 1, texts.last().map_or(0, String::len)));
    }
    if texts.len() <= MAX_PIECES {
        return Some(Pieces { texts, through: history.len() });
    }
    // Too long even shortened: the messages the first pieces hold whole, up to a boundary.
    let through = (1..history.len()).rev().find(|&k| {
        ends[k - 1].0 < MAX_PIECES
            && !matches!(history[k], Message::Tool { .. })
            && history[..k].iter().any(|m| matches!(m, Message::Assistant { .. }))
    })?;
    let (last, offset) = ends[through - 1];
    texts.truncate(last + 1);
    texts[last].truncate(offset);
    Some(Pieces { texts, through })
}

/// The request that summarises piece `index` of `count` after `previous` (the summary so far),
/// on `model`, with tools off and the budget's output limit. The summary so far is shortened
/// to its room when it is longer (its beginning and end).
pub fn piece_request(
    model: &str,
    previous: Option<&str>,
    piece: &str,
    (index, count): (usize, usize),
    budget: &SummaryBudget,
    generation: GenerationOptions,
) -> ProviderRequest {
    let mut text = String::new();
    if let Some(previous) = previous {
        text.push_str("Summary of what came before (keep what it says in your summary):\n");
        let room = budget.chars.saturating_sub(piece.len()).max(MIN_SHARE);
        text.push_str(&shorten(previous, room));
        text.push_str("\n\n");
    }
    if count > 1 {
        text.push_str(&format!("Conversation to summarise (part {} of {count}):\n", index + 1));
    } else {
        text.push_str("Conversation to summarise:\n");
    }
    text.push_str(piece);
    ProviderRequest {
        model: model.to_owned(),
        system: Some(SUMMARY_PROMPT.to_owned()),
        messages: vec![Message::user(text)],
        tools: Vec::new(),
        tool_choice: ToolChoice::None,
        options: GenerationOptions {
            max_output_tokens: Some(u32::try_from(budget.output).unwrap_or(u32::MAX)),
            ..generation
        },
    }
}

/// Each message as the summariser reads it; when they are more than `total` characters, each
/// tool result is shortened to an equal share of what the other messages leave, and no message
/// takes more than half of `total`.
fn entries(history: &[Message], total: usize) -> Vec<String> {
    let fixed: usize =
        history.iter().filter(|m| !matches!(m, Message::Tool { .. })).map(|m| entry(m, None).len()).sum();
    let results: usize =
        history.iter().filter(|m| matches!(m, Message::Tool { .. })).map(|m| entry(m, None).len()).sum();
    let count = history.iter().filter(|m| matches!(m, Message::Tool { .. })).count().max(1);
    let share = (fixed + results > total).then(|| total.saturating_sub(fixed).max(count * MIN_SHARE) / count);
    history
        .iter()
        .map(|m| entry(m, share))
        .map(|e| if e.len() > total / 2 { shorten(&e, total / 2) } else { e })
        .collect()
}

/// One message as the summariser reads it (a result at most `share` characters).
fn entry(m: &Message, share: Option<usize>) -> String {
    match m {
        Message::User { text, .. } => format!("\nPERSON: {text}"),
        Message::Assistant { text, tool_calls, .. } => {
            let mut out = format!("\nASSISTANT: {text}");
            for c in tool_calls {
                out.push_str(&format!("\n[calls {} with {}]", c.name, c.arguments));
            }
            out
        }
        Message::Tool { name, content, is_error, .. } => {
            let failed = if *is_error { " (failed)" } else { "" };
            let content = share.map_or_else(|| content.clone(), |share| shorten(content, share));
            format!("\nRESULT of {name}{failed}: {content}")
        }
    }
}

/// Where to split `text` to keep at most `room` bytes: after the last line break in the last
/// quarter of them (or their last [`LINE_SLACK`]), else at the last character boundary.
fn split_at(text: &str, room: usize) -> usize {
    let mut at = room.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    match text[..at].rfind('\n') {
        Some(line) if line + 1 > at.saturating_sub((at / 4).max(LINE_SLACK)) => line + 1,
        _ => at,
    }
}

/// `text` whole when it fits `max` bytes, else its beginning and end with the middle marked.
pub(crate) fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let marker = 40;
    let keep = max.saturating_sub(marker);
    let mut head = keep * 2 / 3;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (keep - head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    let left = text[head..tail].chars().count();
    format!("{}\n[… {left} characters left out …]\n{}", &text[..head], &text[tail..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ToolCall;

    fn limits(window: u64) -> ContextLimits {
        ContextLimits::bounded(Some(window), None, 0.8)
    }

    fn history(rounds: usize, result_chars: usize) -> Vec<Message> {
        let mut h = vec![Message::user("question")];
        for i in 0..rounds {
            let id = format!("c{i}");
            h.push(Message::assistant(
                "",
                vec![ToolCall { id: id.clone(), name: "fetch".into(), arguments: "{}".into() }],
            ));
            let mut content = format!("FACT {i}\n");
            while content.len() < result_chars {
                content.push_str(&format!("line {i} of the report, counted and signed\n"));
            }
            h.push(Message::Tool { call_id: id, name: "fetch".into(), content, is_error: false, images: vec![] });
        }
        h.push(Message::assistant("done", vec![]));
        h
    }

    /// Tokens of a request at the budget's own count.
    fn tokens(r: &ProviderRequest) -> usize {
        let Message::User { text, .. } = &r.messages[0] else { panic!() };
        (SUMMARY_PROMPT.len() + text.len()).div_ceil(CHARS_PER_TOKEN)
    }

    #[test]
    fn the_budget_leaves_the_output_room_and_refuses_a_window_too_small() {
        let b = SummaryBudget::new(&limits(4_000), &GenerationOptions::default()).unwrap();
        assert_eq!(b.output, 500, "an eighth of a small window");
        assert!(
            b.chars.div_ceil(CHARS_PER_TOKEN) + SUMMARY_PROMPT.len() / CHARS_PER_TOKEN + b.output as usize <= 4_000
        );
        let big = SummaryBudget::new(&limits(200_000), &GenerationOptions::default()).unwrap();
        assert_eq!(big.output, 2_048);
        let capped = ContextLimits::bounded(Some(200_000), Some(512), 0.8);
        assert_eq!(SummaryBudget::new(&capped, &GenerationOptions::default()).unwrap().output, 512);
        assert_eq!(SummaryBudget::new(&limits(800), &GenerationOptions::default()), None);
    }

    #[test]
    fn a_long_part_is_summarised_in_pieces_that_each_fit_and_hold_everything() {
        let window = 3_000;
        let b = SummaryBudget::new(&limits(window), &GenerationOptions::default()).unwrap();
        let h = history(4, 3_000);
        let p = pieces(0, &h, &b).unwrap();
        assert!(p.texts.len() > 2, "{}", p.texts.len());
        assert_eq!(p.through, h.len());
        let summary = "S".repeat(b.output as usize * 4);
        for (i, piece) in p.texts.iter().enumerate() {
            let r = piece_request(
                "m",
                (i > 0).then_some(summary.as_str()),
                piece,
                (i, p.texts.len()),
                &b,
                Default::default(),
            );
            assert!(tokens(&r) + b.output as usize <= window as usize, "piece {i}: {}", tokens(&r));
        }
        let all = p.texts.concat();
        for (i, m) in h.iter().enumerate().filter(|(_, m)| matches!(m, Message::Tool { .. })) {
            let Message::Tool { content, .. } = m else { unreachable!() };
            let (fact, rest) = content.split_once('\n').unwrap();
            assert!(all.contains(&format!(": {fact}\n")), "message {i}: {fact} whole, on its line");
            let line = rest.lines().next().unwrap();
            assert_eq!(all.matches(&format!("{line}\n")).count(), rest.lines().count(), "message {i}: every line");
        }
    }

    #[test]
    fn past_the_most_pieces_results_are_shortened_and_then_the_summary_covers_less() {
        let b = SummaryBudget::new(&limits(3_000), &GenerationOptions::default()).unwrap();
        let h = history(40, 20_000);
        let p = pieces(0, &h, &b).unwrap();
        assert!(p.texts.len() <= MAX_PIECES);
        assert_eq!(p.through, h.len(), "shortened results fit");
        assert!(p.texts.concat().contains("characters left out"));
        let size = b.piece_chars(0);
        let mut one = history(1, 100);
        one.insert(1, Message::assistant("x".repeat(size * (MAX_PIECES + 2)), vec![]));
        let p = pieces(0, &one, &b).unwrap();
        assert_eq!(p.through, one.len(), "one over-long message is shortened, not left out");
        let mut many = vec![Message::user("question")];
        for i in 0..MAX_PIECES * 2 {
            many.push(Message::assistant(format!("answer {i} {}", "y".repeat(size - 40)), vec![]));
            many.push(Message::user(format!("question {i}")));
        }
        let p = pieces(0, &many, &b).unwrap();
        assert_eq!(p.texts.len(), MAX_PIECES);
        assert!(p.through > MAX_PIECES && p.through < many.len(), "{}", p.through);
        let all = p.texts.concat();
        let last = match &many[p.through - 1] {
            Message::User { text, .. } | Message::Assistant { text, .. } => text.clone(),
            Message::Tool { .. } => unreachable!(),
        };
        assert!(all.ends_with(&last), "the pieces end with the last message covered");
    }
}
