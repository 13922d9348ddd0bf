//! Counting a model's tokens: OpenAI's own tokenizers for OpenAI's models (`o200k_base` for
//! GPT-4o, GPT-4.1, GPT-5 and the o-series; `cl100k_base` for GPT-4 and GPT-3.5, through the
//! `tiktoken-rs` crate), a calibrated estimate for every other family ([`counter`]).
//!
//! The calibration is each vendor's documented figure for English text: Anthropic's glossary
//! ("a token approximately represents 3.5 English characters" for Claude), Google's token guide
//! ("a token is equivalent to about 4 characters" for Gemini); open models (Llama, Mistral, Qwen,
//! DeepSeek, ...) have no one figure and take Claude's denser 3.5, which errs toward counting
//! more, so compaction comes early rather than late. Characters outside ASCII count one token
//! each (see `CharEstimate`).
//!
//! Invariants: a tokenizer is loaded once per process, on the first count that needs it (never
//! when the app starts; [`Tokenizer::ready`] lets a caller that must not wait use the estimate
//! meanwhile); a text is tokenized in pieces of at most [`PIECE`] bytes, so one long unbroken
//! run (a base64 blob, a minified line) costs linear time, not the quadratic merge of one
//! enormous word.

use std::sync::{Arc, LazyLock};
use switchboard_core::{CharEstimate, TokenCounter};
use tiktoken_rs::CoreBPE;

/// The longest piece of text handed to the tokenizer at once (split on a character boundary,
/// preferably after whitespace); each split may add about one token to the count.
pub const PIECE: usize = 4 * 1024;

/// Which counting a model gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// OpenAI's `o200k_base`: GPT-4o, GPT-4.1, GPT-4.5, GPT-5, o1, o3, o4 and later.
    O200k,
    /// OpenAI's `cl100k_base`: GPT-4 and GPT-3.5.
    Cl100k,
    /// Claude: 3.5 characters per token.
    Claude,
    /// Gemini and Gemma: 4 characters per token.
    Gemini,
    /// Anything else: 3.5 characters per token.
    Open,
}

impl Family {
    /// The family of `model` served through the API `kind` (`openai`, `openai-responses`,
    /// `anthropic`, `gemini`); a model name with a vendor prefix (`openai/gpt-4o`) is read by its
    /// last part.
    pub fn of(kind: &str, model: &str) -> Family {
        let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
        let starts = |p: &[&str]| p.iter().any(|p| name.starts_with(p));
        if starts(&["gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "chatgpt-4o", "o1", "o3", "o4", "gpt-oss"]) {
            Family::O200k
        } else if starts(&["gpt-4", "gpt-3.5", "gpt-35"]) {
            Family::Cl100k
        } else if name.contains("claude") || kind == "anthropic" {
            Family::Claude
        } else if starts(&["gemini", "gemma"]) || kind == "gemini" {
            Family::Gemini
        } else if kind.starts_with("openai") && model == name && name.starts_with("gpt") {
            // A future OpenAI model at OpenAI: its newest tokenizer.
            Family::O200k
        } else {
            Family::Open
        }
    }
}

/// The counter for `model` served through `kind` (see [`Family::of`]).
pub fn counter(kind: &str, model: &str) -> Arc<dyn TokenCounter> {
    match Family::of(kind, model) {
        Family::O200k => Arc::new(Tokenizer::O200k),
        Family::Cl100k => Arc::new(Tokenizer::Cl100k),
        Family::Gemini => Arc::new(CharEstimate { chars_per_token: 4.0 }),
        Family::Claude | Family::Open => Arc::new(CharEstimate { chars_per_token: 3.5 }),
    }
}

/// OpenAI's tokenizer for `model` served through `kind`, if it is one of OpenAI's models (the
/// counts worth storing: every other family's estimate costs a pass over the characters).
pub fn tokenizer(kind: &str, model: &str) -> Option<Tokenizer> {
    match Family::of(kind, model) {
        Family::O200k => Some(Tokenizer::O200k),
        Family::Cl100k => Some(Tokenizer::Cl100k),
        Family::Claude | Family::Gemini | Family::Open => None,
    }
}

/// The counter for `model`, without waiting for a tokenizer to load: until it is loaded (which
/// this starts on a thread of its own), OpenAI's documented 4 characters per token.
pub fn counter_now(kind: &str, model: &str) -> Arc<dyn TokenCounter> {
    let counter = counter(kind, model);
    match Family::of(kind, model) {
        Family::O200k if !Tokenizer::O200k.ready() => Tokenizer::O200k.load_in_background(),
        Family::Cl100k if !Tokenizer::Cl100k.ready() => Tokenizer::Cl100k.load_in_background(),
        _ => return counter,
    }
    Arc::new(CharEstimate::default())
}

static O200K: LazyLock<CoreBPE> = LazyLock::new(|| tiktoken_rs::o200k_base().expect("the bundled o200k_base is valid"));
static CL100K: LazyLock<CoreBPE> =
    LazyLock::new(|| tiktoken_rs::cl100k_base().expect("the bundled cl100k_base is valid"));

/// One of OpenAI's tokenizers, loaded on first use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tokenizer {
    /// `o200k_base`.
    O200k,
    /// `cl100k_base`.
    Cl100k,
}

impl Tokenizer {
    fn bpe(self) -> &'static CoreBPE {
        match self {
            Tokenizer::O200k => &O200K,
            Tokenizer::Cl100k => &CL100K,
        }
    }

    /// Its name as OpenAI publishes it (`o200k_base`), what stored counts are kept under.
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::O200k => "o200k_base",
            Tokenizer::Cl100k => "cl100k_base",
        }
    }

    /// Whether it is loaded (counting will not wait).
    pub fn ready(self) -> bool {
        match self {
            Tokenizer::O200k => LazyLock::get(&O200K).is_some(),
            Tokenizer::Cl100k => LazyLock::get(&CL100K).is_some(),
        }
    }

    /// Starts loading it on a thread of its own.
    pub fn load_in_background(self) {
        let _ = std::thread::Builder::new().name("tokenizer".into()).spawn(move || {
            self.bpe();
        });
    }
}

impl TokenCounter for Tokenizer {
    fn count(&self, text: &str) -> u64 {
        let bpe = self.bpe();
        pieces(text).map(|p| bpe.encode_ordinary(p).len() as u64).sum()
    }

    fn exact(&self) -> bool {
        true
    }
}

/// `text` in pieces of at most [`PIECE`] bytes, each ending after whitespace where there is some
/// in its last quarter.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= PIECE {
            return Some(std::mem::take(&mut rest));
        }
        let mut end = PIECE;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if let Some(ws) = rest[PIECE * 3 / 4..end].rfind(char::is_whitespace) {
            end = PIECE * 3 / 4 + ws + 1;
            while !rest.is_char_boundary(end) {
                end += 1;
            }
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_family_gets_its_counting() {
        assert_eq!(Family::of("openai", "gpt-4o-mini"), Family::O200k);
        assert_eq!(Family::of("openai-responses", "gpt-5"), Family::O200k);
        assert_eq!(Family::of("openai", "o3-mini"), Family::O200k);
        assert_eq!(Family::of("openai", "openai/gpt-4.1"), Family::O200k);
        assert_eq!(Family::of("openai", "gpt-4-turbo"), Family::Cl100k);
        assert_eq!(Family::of("openai", "gpt-3.5-turbo"), Family::Cl100k);
        assert_eq!(Family::of("anthropic", "claude-sonnet-4-5"), Family::Claude);
        assert_eq!(Family::of("openai", "anthropic/claude-3.5-sonnet"), Family::Claude);
        assert_eq!(Family::of("gemini", "models/gemini-2.5-flash"), Family::Gemini);
        assert_eq!(Family::of("openai", "llama3.1:8b"), Family::Open);
    }

    #[test]
    fn openais_tokenizers_count_as_openai_does() {
        // Figures from OpenAI's tiktoken for these strings.
        assert_eq!(Tokenizer::O200k.count("hello world"), 2);
        assert_eq!(Tokenizer::Cl100k.count("hello world"), 2);
        assert_eq!(Tokenizer::O200k.count(""), 0);
        assert!(Tokenizer::O200k.exact() && Tokenizer::O200k.ready());
    }

    #[test]
    fn long_text_is_counted_in_pieces_that_cover_it_exactly() {
        let text = "word ".repeat(5_000) + &"x".repeat(10_000) + "日本語".repeat(2_000).as_str();
        let joined: String = pieces(&text).collect();
        assert_eq!(joined, text);
        assert!(pieces(&text).all(|p| p.len() <= PIECE + 3));
        // Splitting costs at most about a token per piece.
        let whole = Tokenizer::O200k.bpe().encode_ordinary(&text).len() as u64;
        let counted = Tokenizer::O200k.count(&text);
        assert!(counted.abs_diff(whole) <= pieces(&text).count() as u64, "{counted} vs {whole}");
    }

    #[test]
    fn estimates_follow_the_documented_ratios() {
        let english = "The quick brown fox jumps over the lazy dog. ".repeat(10);
        let claude = counter("anthropic", "claude-sonnet-4-5").count(&english);
        let gemini = counter("gemini", "gemini-2.5-pro").count(&english);
        assert_eq!(claude, (english.len() as f64 / 3.5).ceil() as u64);
        assert_eq!(gemini, (english.len() as f64 / 4.0).ceil() as u64);
    }
}
