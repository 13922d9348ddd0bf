//! Counting tokens: the [`TokenCounter`] a turn is handed (a model family's tokenizer or a
//! calibrated estimate, both from `switchboard-models`), and [`CharEstimate`], the calibrated
//! estimate the loop falls back to when it is handed none.
//!
//! Invariant: counting is pure and deterministic (the same text always gives the same count), so
//! the loop can cache a message's count and subtract one request's estimate from another's.

use crate::vocab::ToolImage;

/// Counts the tokens of text as one model family's tokenizer does (or estimates them).
pub trait TokenCounter: Send + Sync + std::fmt::Debug {
    /// Tokens of `text`.
    fn count(&self, text: &str) -> u64;

    /// Tokens of one image (`width` × `height` when its header said so).
    fn image(&self, size: Option<(u32, u32)>) -> u64 {
        image_tokens(size)
    }

    /// Whether [`TokenCounter::count`] is the model family's own tokenizer (not an estimate).
    fn exact(&self) -> bool {
        false
    }
}

/// The calibrated estimate: `chars_per_token` characters of ASCII text per token, and one token
/// per other character (CJK and most non-Latin scripts take a token or more per character in
/// every tokenizer measured; accented Latin letters are over-counted, which errs on the safe
/// side).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharEstimate {
    /// ASCII characters per token.
    pub chars_per_token: f64,
}

impl Default for CharEstimate {
    /// 4 characters per token: OpenAI's and Google's documented rule of thumb for English.
    fn default() -> Self {
        Self { chars_per_token: 4.0 }
    }
}

impl TokenCounter for CharEstimate {
    fn count(&self, text: &str) -> u64 {
        let ascii = text.bytes().filter(u8::is_ascii).count();
        let other = if ascii == text.len() { 0 } else { text.chars().filter(|c| !c.is_ascii()).count() };
        (ascii as f64 / self.chars_per_token).ceil() as u64 + other as u64
    }
}

/// An image's tokens when its size is known: Anthropic's documented `width × height / 750`,
/// after the provider's downscale to at most 1.15 megapixels (so at most about 1,600); when it is
/// not known, that upper bound. OpenAI (85 + 170 per 512-pixel tile after its downscale) and
/// Gemini (258 per 768-pixel tile) come to similar or smaller figures for the same image.
pub fn image_tokens(size: Option<(u32, u32)>) -> u64 {
    const MAX: u64 = 1_600;
    match size {
        Some((w, h)) if w > 0 && h > 0 => {
            let pixels = u64::from(w) * u64::from(h);
            (pixels.min(1_150_000) / 750).clamp(1, MAX)
        }
        _ => MAX,
    }
}

/// The width and height a PNG, GIF or WebP image's header gives (JPEG keeps them further in:
/// `None`, and the estimate takes the upper bound).
pub fn image_size(image: &ToolImage) -> Option<(u32, u32)> {
    // 40 base64 characters are 30 bytes: enough for each header read here.
    let head = decode_base64_prefix(image.data.get(..40)?)?;
    let be = |i: usize| u32::from_be_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
    let le16 = |i: usize| u32::from(u16::from_le_bytes([head[i], head[i + 1]]));
    match image.mime_type.as_str() {
        "image/png" if head.starts_with(b"\x89PNG") => Some((be(16), be(20))),
        "image/gif" if head.starts_with(b"GIF") => Some((le16(6), le16(8))),
        "image/webp" if head.get(12..16) == Some(b"VP8X") => {
            let le24 = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], 0]) + 1;
            Some((le24(24), le24(27)))
        }
        _ => None,
    }
}

/// What [`image_size`] reads from an image of type `mime` that is `width` × `height`, told
/// without its bytes: PNG and GIF headers give the size; JPEG keeps it further in and WebP gives
/// it only in its extended form, so both are taken as not giving it (the upper bound).
pub fn header_size(mime: &str, width: u32, height: u32) -> Option<(u32, u32)> {
    matches!(mime, "image/png" | "image/gif").then_some((width, height))
}

/// Decodes 40 characters of standard base64 (no padding inside) into 30 bytes.
fn decode_base64_prefix(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(30);
    for chunk in text.as_bytes().chunks_exact(4) {
        let mut n = 0u32;
        for &c in chunk {
            n = (n << 6) | value(c)?;
        }
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
    }
    Some(out)
}

/// A count as a person reads it: `128000` is `128,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_counts_ascii_by_the_ratio_and_other_characters_one_each() {
        let est = CharEstimate::default();
        assert_eq!(est.count(""), 0);
        assert_eq!(est.count("abcd"), 1);
        assert_eq!(est.count("abcde"), 2);
        assert_eq!(est.count("日本語"), 3);
        assert!(!est.exact());
    }

    #[test]
    fn a_png_header_gives_its_size_and_the_tokens_follow_it() {
        // A 1x1 PNG.
        let data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
        let image = ToolImage { mime_type: "image/png".into(), data: data.into() };
        assert_eq!(image_size(&image), Some((1, 1)));
        assert_eq!(image_tokens(Some((1000, 750))), 1000);
        assert_eq!(image_tokens(Some((4000, 3000))), 1533);
        assert_eq!(image_tokens(None), 1600);
        let jpeg = ToolImage { mime_type: "image/jpeg".into(), data: "/9j/4AAQSkZJRgABAQAAAQABAAD".repeat(2) };
        assert_eq!(image_size(&jpeg), None);
        // Told without the bytes, the same.
        assert_eq!(header_size("image/png", 1, 1), image_size(&image));
        assert_eq!(header_size("image/jpeg", 800, 600), image_size(&jpeg));
    }
}
