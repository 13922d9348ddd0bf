//! Full-text search text handling: what the index sees of a text, how a person's query becomes an
//! FTS5 expression, and the highlighted snippet shown for a hit.
//!
//! The index (`search_index`, migration 9) is a contentless FTS5 table with the `unicode61`
//! tokenizer, which splits on spaces and punctuation only. Scripts written without spaces
//! (Chinese, Japanese, Thai, Lao, Khmer, Myanmar, and Korean syllables) would be one long token,
//! so [`index_text`] (registered as the SQL function `switchboard_search_text`, which the triggers
//! call) puts a space around each of their characters (its combining marks stay with it): each is
//! a token, and a query's run of them becomes a phrase of adjacent characters, so a word of any
//! length (one or two characters included) matches where it stands in the text.
//!
//! Invariants: [`index_text`] and [`query_tokens`] segment text the same way, so a query matches
//! what was indexed; a query string from a person never reaches `MATCH` raw: [`parse_query`]
//! builds the expression from quoted strings only, so no input is an FTS5 syntax error.

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// The SQL function the index triggers call on every text they index.
pub(crate) const INDEX_FUNCTION: &str = "switchboard_search_text";

/// At most this many characters of one text (a message, a tool's arguments or result) are
/// indexed; the rest of a longer text is not found by search.
pub const INDEXED_CHARS_MAX: usize = 100_000;

/// The longest query accepted, in characters.
pub const QUERY_CHARS_MAX: usize = 1_000;

/// The most terms (words and phrases) one query may have.
pub const QUERY_TERMS_MAX: usize = 32;

/// About how many characters a snippet shows around its first match.
pub const SNIPPET_CHARS: usize = 160;

/// Marks the start of a match in a snippet (a private-use character; removed from the text first).
pub const MATCH_START: char = '\u{E000}';
/// Marks the end of a match in a snippet.
pub const MATCH_END: char = '\u{E001}';

/// Registers the SQL function the search index's triggers call (`switchboard_search_text`) on a
/// connection. The store does this on its own; another program writing conversations, messages,
/// tool calls or results through its own connection must do it first, or the write fails with
/// "no such function".
pub fn register(conn: &Connection) -> rusqlite::Result<()> {
    conn.create_scalar_function(
        INDEX_FUNCTION,
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_INNOCUOUS,
        |ctx| {
            let text: Option<String> = ctx.get(0)?;
            Ok(text.map(|t| index_text(&t)))
        },
    )
}

/// Characters of scripts written without spaces between words: each one is its own token.
fn is_unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF        // Thai, Lao
        | 0x1000..=0x109F      // Myanmar
        | 0x1780..=0x17FF      // Khmer
        | 0x3040..=0x30FF      // Hiragana, Katakana
        | 0x31F0..=0x31FF      // Katakana extensions
        | 0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF      // CJK unified ideographs
        | 0xAC00..=0xD7AF      // Hangul syllables
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0xFF66..=0xFF9F      // halfwidth Katakana
        | 0x20000..=0x3FFFF) // CJK extensions B and later
}

/// Whether the tokenizer keeps `c` inside a token (`unicode61` with categories `L* N* Co M*`).
fn is_token_char(c: char) -> bool {
    (c.is_alphanumeric() || is_combining_mark(c) || matches!(c as u32, 0xE000..=0xF8FF))
        && !matches!(c, MATCH_START | MATCH_END)
}

/// The text the index sees: at most [`INDEXED_CHARS_MAX`] characters, the snippet markers removed,
/// and a space around each character of an unspaced script (with its combining marks).
pub fn index_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let mut in_unspaced = false;
    for c in text.chars().take(INDEXED_CHARS_MAX) {
        if matches!(c, MATCH_START | MATCH_END) {
            continue;
        }
        if is_combining_mark(c) {
            out.push(c);
        } else if is_unspaced(c) {
            out.push(' ');
            out.push(c);
            in_unspaced = true;
        } else {
            if in_unspaced {
                out.push(' ');
                in_unspaced = false;
            }
            out.push(c);
        }
    }
    out
}

/// How a token compares: lower case, Latin diacritics removed (as `remove_diacritics 2` does).
fn fold(token: &str) -> String {
    if token.is_ascii() {
        return token.to_ascii_lowercase();
    }
    token.nfd().filter(|c| !matches!(*c as u32, 0x0300..=0x036F)).flat_map(char::to_lowercase).collect()
}

/// A token of `text` with its byte range.
#[derive(Debug)]
struct Token {
    start: usize,
    end: usize,
    folded: String,
}

/// Splits `text` into tokens the way the index does (see [`index_text`]).
fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut unspaced = false;
    let close = |out: &mut Vec<Token>, start: &mut Option<usize>, end: usize| {
        if let Some(s) = start.take() {
            out.push(Token { start: s, end, folded: fold(&text[s..end]) });
        }
    };
    for (i, c) in text.char_indices() {
        if !is_token_char(c) {
            close(&mut out, &mut start, i);
        } else if is_combining_mark(c) {
            // A mark stays with the character before it.
            start.get_or_insert(i);
        } else if is_unspaced(c) {
            close(&mut out, &mut start, i);
            start = Some(i);
            unspaced = true;
        } else {
            if unspaced {
                close(&mut out, &mut start, i);
            }
            start.get_or_insert(i);
            unspaced = false;
        }
    }
    close(&mut out, &mut start, text.len());
    out
}

/// The folded tokens of a query term.
fn query_tokens(term: &str) -> Vec<String> {
    tokens(term).into_iter().map(|t| t.folded).collect()
}

/// One term of a query: a word or a quoted phrase, as tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// Its tokens, folded (more than one: a phrase, they must be adjacent and in this order).
    pub tokens: Vec<String>,
    /// The last token may be the start of a longer word (`pars*`).
    pub prefix: bool,
}

/// A person's query, understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// Alternatives (separated by `OR`); each is terms that must all match.
    pub any_of: Vec<Vec<Term>>,
    /// Terms that must not match (`-word`, `NOT word`).
    pub none_of: Vec<Term>,
}

impl Query {
    /// The FTS5 expression: every token inside a double-quoted string, so nothing the person typed
    /// is read as FTS5 syntax.
    pub fn to_match(&self) -> String {
        fn term(t: &Term) -> String {
            let phrase = t.tokens.join(" ").replace('"', "\"\"");
            if t.prefix { format!("\"{phrase}\" *") } else { format!("\"{phrase}\"") }
        }
        let alternatives: Vec<String> = self
            .any_of
            .iter()
            .map(|all| format!("({})", all.iter().map(term).collect::<Vec<_>>().join(" AND ")))
            .collect();
        let mut expr = alternatives.join(" OR ");
        if !self.none_of.is_empty() {
            expr = format!("({expr}) NOT ({})", self.none_of.iter().map(term).collect::<Vec<_>>().join(" OR "));
        }
        expr
    }

    /// Every term that must match, for highlighting.
    pub fn highlighted(&self) -> impl Iterator<Item = &Term> {
        self.any_of.iter().flatten()
    }
}

/// Why a query cannot be run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Longer than [`QUERY_CHARS_MAX`].
    #[error("A search can be at most {QUERY_CHARS_MAX} characters long; shorten it.")]
    TooLong,
    /// More than [`QUERY_TERMS_MAX`] words and phrases.
    #[error("A search can have at most {QUERY_TERMS_MAX} words and phrases; leave some out.")]
    TooManyTerms,
    /// Only excluded words (`-word`), nothing to find.
    #[error("Add a word to find: a search of only excluded words (-word, NOT word) finds nothing.")]
    OnlyExcluded,
}

/// Reads a person's query: words (all must match), `"exact phrases"` (an unclosed quote runs to the
/// end), `pars*` (a word starting so), `-word` or `NOT word` (leaves out what has it), `OR` between
/// alternatives; `AND` is the default and ignored; other punctuation separates words as in the
/// text. `Ok(None)`: nothing to search for (empty, or only punctuation).
pub fn parse_query(input: &str) -> Result<Option<Query>, QueryError> {
    if input.chars().count() > QUERY_CHARS_MAX {
        return Err(QueryError::TooLong);
    }
    let mut any_of: Vec<Vec<Term>> = vec![Vec::new()];
    let mut none_of = Vec::new();
    let mut negate_next = false;
    let mut count = 0usize;
    let mut rest = input;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let (negated, body) = match rest.strip_prefix('-') {
            Some(after) if after.starts_with(|c: char| !c.is_whitespace()) => (true, after),
            _ => (false, rest),
        };
        let (raw, prefix, quoted, next) = if let Some(after) = body.strip_prefix('"') {
            let end = after.find('"').unwrap_or(after.len());
            let tail = after.get(end + 1..).unwrap_or("");
            let starred = tail.starts_with('*');
            (&after[..end], starred, true, tail.trim_start_matches('*'))
        } else {
            let end = body.find(char::is_whitespace).unwrap_or(body.len());
            let word = &body[..end];
            let trimmed = word.trim_end_matches('*');
            (trimmed, trimmed.len() < word.len(), false, &body[end..])
        };
        rest = next;
        if !quoted && !negated {
            match raw {
                "OR" => {
                    if any_of.last().is_some_and(|l| !l.is_empty()) {
                        any_of.push(Vec::new());
                    }
                    continue;
                }
                "AND" => continue,
                "NOT" => {
                    negate_next = true;
                    continue;
                }
                _ => {}
            }
        }
        let tokens = query_tokens(raw);
        if tokens.is_empty() {
            continue;
        }
        count += 1;
        if count > QUERY_TERMS_MAX {
            return Err(QueryError::TooManyTerms);
        }
        // A one-letter prefix would read most of the index; it is a word.
        let prefix = prefix && tokens.last().is_some_and(|t| t.chars().count() >= 2);
        let term = Term { tokens, prefix };
        if negated || std::mem::take(&mut negate_next) {
            none_of.push(term);
        } else if let Some(last) = any_of.last_mut() {
            last.push(term);
        }
    }
    any_of.retain(|all| !all.is_empty());
    if any_of.is_empty() {
        return if none_of.is_empty() { Ok(None) } else { Err(QueryError::OnlyExcluded) };
    }
    Ok(Some(Query { any_of, none_of }))
}

/// A short excerpt of `text` around its first match of `query`, whitespace runs shown as one
/// space, at most about [`SNIPPET_CHARS`] characters (`…` where it is cut), each match between
/// [`MATCH_START`] and [`MATCH_END`]. Those two characters are removed from the text first.
pub fn snippet(text: &str, query: &Query) -> String {
    let clean: String =
        text.chars().filter(|c| !matches!(*c, MATCH_START | MATCH_END)).take(INDEXED_CHARS_MAX).collect();
    let toks = tokens(&clean);
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for term in query.highlighted() {
        let n = term.tokens.len();
        if n == 0 || toks.len() < n {
            continue;
        }
        for i in 0..=toks.len() - n {
            let hit = term.tokens.iter().enumerate().all(|(k, want)| {
                let got = &toks[i + k].folded;
                if term.prefix && k == n - 1 { got.starts_with(want.as_str()) } else { got == want }
            });
            if hit {
                ranges.push((toks[i].start, toks[i + n - 1].end));
            }
        }
    }
    ranges.sort_unstable();
    // Overlapping matches (a phrase and one of its words) become one.
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in ranges {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    let first = merged.first().map_or(0, |r| r.0);
    // Start a little before the first match, at a word boundary when one is near.
    let lead = SNIPPET_CHARS / 4;
    let mut start = clean[..first].char_indices().rev().nth(lead.saturating_sub(1)).map_or(0, |(i, _)| i);
    if start > 0
        && let Some(space) = clean[start..first].find(char::is_whitespace)
    {
        start += space;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut shown = 0usize;
    let mut last_space = false;
    let mut pending = merged.iter().copied().peekable();
    let mut open_until: Option<usize> = None;
    for (i, c) in clean[start..].char_indices().map(|(i, c)| (i + start, c)) {
        if open_until.is_some_and(|e| i >= e) {
            out.push(MATCH_END);
            open_until = None;
        }
        if shown >= SNIPPET_CHARS {
            let cut = out.trim_end_matches(' ').len();
            out.truncate(cut);
            if open_until.is_some() {
                out.push(MATCH_END);
            }
            out.push('…');
            return out;
        }
        while open_until.is_none() && pending.peek().is_some_and(|&(s, _)| s < i) {
            pending.next();
        }
        if open_until.is_none()
            && let Some((_, e)) = pending.next_if(|&(s, _)| s == i)
        {
            out.push(MATCH_START);
            open_until = Some(e);
        }
        if c.is_whitespace() {
            if !last_space && shown > 0 {
                out.push(' ');
                shown += 1;
            }
            last_space = true;
        } else {
            out.push(c);
            shown += 1;
            last_space = false;
        }
    }
    if open_until.is_some() {
        out.push(MATCH_END);
    }
    let cut = out.trim_end_matches(' ').len();
    out.truncate(cut);
    out
}

#[cfg(test)]
mod tests;
