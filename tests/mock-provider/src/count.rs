//! Counting a request's tokens: the mock's own, documented count, independent of the engine's
//! estimator, so a test comparing the two measures something.
//!
//! A request is flattened (by its API's [`crate::api::WireApi::prompt`]) into [`Piece`]s in the
//! order a provider sees them: tool definitions, then the system prompt, then the messages. The
//! count of a prompt is:
//!
//! - 3 tokens for the request itself;
//! - 4 tokens per message (and per tool definition, per output item);
//! - every text (message text, a tool call's name and arguments, a tool result, a tool
//!   definition as compact JSON) cut into lines and each line into pieces of at most
//!   [`CHUNK_CHARS`] characters, each piece counted with OpenAI's `o200k_base` encoding
//!   (tiktoken-rs);
//! - [`MEDIA_TOKENS`] per image, audio or document part, whatever its size.
//!
//! Prompt caching compares the prompt with the previous counted request of the same server, unit
//! by unit (a unit is one of the above: a piece of a line, a message's overhead, a media part):
//! the common prefix is what a provider would find in its cache. See [`Counted`].
//!
//! Invariant: the count is a pure function of the request's pieces (and, for caching, of the
//! previous request's); nothing here reads the engine's code.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::signatures::fnv1a64;

/// The most characters counted as one piece: longer lines are cut, so counting stays linear
/// (BPE on one huge word is quadratic) and a prefix is matched a piece at a time.
pub const CHUNK_CHARS: usize = 256;
/// Tokens per message, tool definition or output item, on top of its text.
pub const MESSAGE_TOKENS: u64 = 4;
/// Tokens of every request, on top of its messages.
pub const REQUEST_TOKENS: u64 = 3;
/// Tokens of one image, audio or document part.
pub const MEDIA_TOKENS: u64 = 256;
/// The shortest prefix OpenAI and Anthropic cache.
pub const MIN_CACHED_TOKENS: u64 = 1024;
/// OpenAI caches in steps of this many tokens past the minimum.
pub const OPENAI_CACHE_STEP: u64 = 128;

/// The tokens of `text` by this module's rule (lines, pieces of [`CHUNK_CHARS`], `o200k_base`),
/// without any message overhead.
pub fn text_tokens(text: &str) -> u64 {
    chunks(text).map(|chunk| chunk_tokens(chunk).1).sum()
}

/// What the mock counted for one request, as reported in its usage (see the crate README).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counted {
    /// Every prompt token, cached and cache-written ones included.
    pub prompt_tokens: u64,
    /// Tokens read from the prompt cache.
    pub cached_tokens: u64,
    /// Tokens written to the prompt cache (Anthropic only).
    pub cache_write_tokens: u64,
}

/// One thing in a request, in the order a provider reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// The start of a message, tool definition or output item.
    Message,
    /// Text the model reads.
    Text(String),
    /// An image, audio or document part, by a hash of what it holds.
    Media(u64),
    /// An Anthropic `cache_control` breakpoint: the prompt up to here may be cached.
    Breakpoint,
}

/// A request flattened into [`Piece`]s by its API.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Prompt {
    pub pieces: Vec<Piece>,
}

impl Prompt {
    pub fn message(&mut self) -> &mut Self {
        self.pieces.push(Piece::Message);
        self
    }

    pub fn text(&mut self, text: &str) -> &mut Self {
        if !text.is_empty() {
            self.pieces.push(Piece::Text(text.to_owned()));
        }
        self
    }

    /// A JSON value the model reads as text (a tool definition, call arguments, a structured
    /// result): its compact form, without Anthropic's `cache_control` markers.
    pub fn json(&mut self, value: &Value) -> &mut Self {
        match value {
            Value::String(text) => self.text(text),
            Value::Null => self,
            other => {
                let mut value = other.clone();
                if let Some(object) = value.as_object_mut() {
                    object.remove("cache_control");
                }
                self.text(&value.to_string())
            }
        }
    }

    pub fn media(&mut self, part: &Value) -> &mut Self {
        self.pieces.push(Piece::Media(fnv1a64(part.to_string().as_bytes())));
        self
    }

    pub fn breakpoint(&mut self) -> &mut Self {
        self.pieces.push(Piece::Breakpoint);
        self
    }

    /// This prompt followed by `more`.
    pub fn extended(&self, more: &Prompt) -> Prompt {
        let mut pieces = Vec::with_capacity(self.pieces.len() + more.pieces.len());
        pieces.extend_from_slice(&self.pieces);
        pieces.extend_from_slice(&more.pieces);
        Prompt { pieces }
    }

    /// Every line of text in the prompt, in order.
    pub fn lines(&self) -> impl Iterator<Item = &str> {
        self.pieces
            .iter()
            .filter_map(|piece| match piece {
                Piece::Text(text) => Some(text.as_str()),
                _ => None,
            })
            .flat_map(str::lines)
    }

    /// The prompt as countable units.
    pub fn units(&self) -> Units {
        let mut units = vec![Unit { key: 0, tokens: REQUEST_TOKENS }];
        let mut breakpoints = Vec::new();
        for piece in &self.pieces {
            match piece {
                Piece::Message => units.push(Unit { key: 1, tokens: MESSAGE_TOKENS }),
                Piece::Media(hash) => units.push(Unit { key: *hash | 1 << 63, tokens: MEDIA_TOKENS }),
                Piece::Text(text) => {
                    units.extend(chunks(text).map(|chunk| {
                        let (key, tokens) = chunk_tokens(chunk);
                        Unit { key, tokens }
                    }));
                }
                Piece::Breakpoint => breakpoints.push(units.len()),
            }
        }
        Units::new(units, breakpoints)
    }
}

/// One countable unit: a piece of a line, a message's overhead or a media part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Unit {
    key: u64,
    tokens: u64,
}

/// A prompt as units, with the running token count at each Anthropic breakpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Units {
    units: Vec<Unit>,
    /// Tokens before each breakpoint, ascending.
    breakpoint_tokens: Vec<u64>,
    total: u64,
}

impl Units {
    fn new(units: Vec<Unit>, breakpoints: Vec<usize>) -> Self {
        let mut running = Vec::with_capacity(units.len() + 1);
        let mut sum = 0;
        running.push(0);
        for unit in &units {
            sum += unit.tokens;
            running.push(sum);
        }
        let breakpoint_tokens = breakpoints.iter().map(|&index| running[index]).collect();
        Self { units, breakpoint_tokens, total: sum }
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// Tokens of the longest common prefix with `other`.
    fn common_prefix(&self, other: &Units) -> u64 {
        self.units.iter().zip(&other.units).take_while(|(a, b)| a == b).map(|(a, _)| a.tokens).sum()
    }

    /// What OpenAI's automatic caching reads, `previous` being the server's last request: the
    /// common prefix, when it is at least [`MIN_CACHED_TOKENS`], in steps of
    /// [`OPENAI_CACHE_STEP`].
    pub fn openai(&self, previous: Option<&Units>) -> Counted {
        let common = previous.map_or(0, |p| self.common_prefix(p));
        let cached = if common >= MIN_CACHED_TOKENS { common - common % OPENAI_CACHE_STEP } else { 0 };
        Counted { prompt_tokens: self.total, cached_tokens: cached, cache_write_tokens: 0 }
    }

    /// What Anthropic's caching reads and writes: it reads the longest prefix that ended at a
    /// breakpoint of `previous` (at least [`MIN_CACHED_TOKENS`]) and is common to both, and writes
    /// the rest of this prompt up to its own last breakpoint. No breakpoint, no caching.
    pub fn anthropic(&self, previous: Option<&Units>) -> Counted {
        let common = previous.map_or(0, |p| self.common_prefix(p));
        let read = previous
            .into_iter()
            .flat_map(|p| p.breakpoint_tokens.iter().copied())
            .filter(|&tokens| tokens <= common && tokens >= MIN_CACHED_TOKENS)
            .max()
            .unwrap_or(0);
        let last = self.breakpoint_tokens.last().copied().unwrap_or(0);
        let written = if last >= MIN_CACHED_TOKENS { last.saturating_sub(read) } else { 0 };
        Counted { prompt_tokens: self.total, cached_tokens: read, cache_write_tokens: written }
    }

    /// No caching (Gemini's implicit caching is not modelled).
    pub fn uncached(&self) -> Counted {
        Counted { prompt_tokens: self.total, ..Counted::default() }
    }
}

/// `text` cut into lines (each keeping its newline) and lines into pieces of at most
/// [`CHUNK_CHARS`] characters.
fn chunks(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive('\n').flat_map(|line| {
        let mut rest = line;
        std::iter::from_fn(move || {
            if rest.is_empty() {
                return None;
            }
            let cut = rest.char_indices().nth(CHUNK_CHARS).map_or(rest.len(), |(index, _)| index);
            let (chunk, tail) = rest.split_at(cut);
            rest = tail;
            Some(chunk)
        })
    })
}

/// The most chunk counts remembered; past it the memo starts over.
const MEMO_LIMIT: usize = 500_000;

/// A chunk's key (its hash) and tokens, remembered: a conversation resends its history with every
/// request.
fn chunk_tokens(chunk: &str) -> (u64, u64) {
    static MEMO: OnceLock<Mutex<HashMap<u64, u64>>> = OnceLock::new();
    let key = fnv1a64(chunk.as_bytes()) & !(1 << 63) | 2;
    let memo = MEMO.get_or_init(Mutex::default);
    if let Some(&tokens) = memo.lock().unwrap_or_else(PoisonError::into_inner).get(&key) {
        return (key, tokens);
    }
    let tokens = tiktoken_rs::o200k_base_singleton().encode_ordinary(chunk).len() as u64;
    let mut memo = memo.lock().unwrap_or_else(PoisonError::into_inner);
    if memo.len() >= MEMO_LIMIT {
        memo.clear();
    }
    memo.insert(key, tokens);
    (key, tokens)
}
