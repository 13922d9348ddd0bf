//! What a file is, from its first bytes: an image format, a PDF, UTF-8 text, or something
//! refused (SVG, a known binary, an unknown one). The extension is read only to name a text
//! file's language; it never makes a file what its bytes are not.

use crate::{MediaError, Result};
use image::ImageFormat;

/// What [`sniff`] found.
pub(crate) enum Sniffed {
    /// An image the decoders take.
    Image(ImageFormat),
    /// `%PDF-`.
    Pdf,
    /// Valid UTF-8 without NUL, its type from the extension.
    Text {
        /// `text/plain`, `text/x-rust`, ...
        mime_type: &'static str,
        /// The text (a byte-order mark removed).
        text: String,
    },
}

/// The type of an image's bytes, for the four types every API takes (`image/png`,
/// `image/jpeg`, `image/gif`, `image/webp`); `None` for anything else.
pub fn image_mime(bytes: &[u8]) -> Option<&'static str> {
    image_format(bytes).map(mime_of)
}

pub(crate) fn image_format(bytes: &[u8]) -> Option<ImageFormat> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageFormat::Png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageFormat::Jpeg)
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some(ImageFormat::Gif)
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some(ImageFormat::WebP)
    } else {
        None
    }
}

pub(crate) fn mime_of(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Png => "image/png",
        ImageFormat::Jpeg => "image/jpeg",
        ImageFormat::Gif => "image/gif",
        _ => "image/webp",
    }
}

/// What `bytes` are (see the module doc).
pub(crate) fn sniff(name: &str, bytes: &[u8]) -> Result<Sniffed> {
    if let Some(format) = image_format(bytes) {
        return Ok(Sniffed::Image(format));
    }
    // A PDF may have junk before its header; readers accept it within the first KiB.
    if bytes.get(..1024).unwrap_or(bytes).windows(5).any(|w| w == b"%PDF-") {
        return Ok(Sniffed::Pdf);
    }
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if !body.contains(&0)
        && let Ok(text) = std::str::from_utf8(body)
    {
        if is_svg(text) {
            return Err(MediaError::Svg { name: name.to_owned() });
        }
        return Ok(Sniffed::Text { mime_type: text_mime(name), text: text.to_owned() });
    }
    let what = match infer::get(bytes) {
        Some(t) if t.mime_type() == "image/svg+xml" => return Err(MediaError::Svg { name: name.to_owned() }),
        Some(t) => format!("{} ({})", describe(t.matcher_type()), t.mime_type()),
        None if looks_like_utf16(bytes) => "UTF-16 text (save it as UTF-8 and attach it again)".to_owned(),
        None => "an unknown binary file".to_owned(),
    };
    Err(MediaError::Unsupported { name: name.to_owned(), what })
}

fn describe(kind: infer::MatcherType) -> &'static str {
    use infer::MatcherType as M;
    match kind {
        M::Archive => "an archive",
        M::Audio => "an audio file",
        M::Book => "an e-book",
        M::Doc => "an office document",
        M::Font => "a font",
        M::Image => "an image of a type models don't take",
        M::Video => "a video",
        M::App => "a program",
        _ => "a binary file",
    }
}

fn looks_like_utf16(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF])
}

/// Whether `text` is an SVG document: its first element (after an XML declaration, comments and
/// a doctype) is `<svg`.
fn is_svg(text: &str) -> bool {
    let head: String = text.chars().take(4096).collect::<String>().to_ascii_lowercase();
    let mut rest = head.trim_start();
    loop {
        if let Some(after) = rest.strip_prefix("<?") {
            rest = after.split_once("?>").map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("<!--") {
            rest = after.split_once("-->").map_or("", |(_, r)| r).trim_start();
        } else if let Some(after) = rest.strip_prefix("<!doctype") {
            if after.trim_start().starts_with("svg") {
                return true;
            }
            rest = after.split_once('>').map_or("", |(_, r)| r).trim_start();
        } else {
            return rest.starts_with("<svg");
        }
    }
}

/// A text file's media type from its extension (the code language); `text/plain` otherwise.
pub(crate) fn text_mime(name: &str) -> &'static str {
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "md" | "markdown" => "text/markdown",
        "json" => "application/json",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "xml" => "application/xml",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" | "tsx" => "text/x-typescript",
        "jsx" => "text/jsx",
        "svelte" => "text/x-svelte",
        "rs" => "text/x-rust",
        "py" => "text/x-python",
        "rb" => "text/x-ruby",
        "go" => "text/x-go",
        "java" => "text/x-java",
        "kt" | "kts" => "text/x-kotlin",
        "swift" => "text/x-swift",
        "c" | "h" => "text/x-c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "text/x-c++",
        "cs" => "text/x-csharp",
        "php" => "text/x-php",
        "sh" | "bash" | "zsh" => "application/x-sh",
        "sql" => "application/sql",
        "tex" => "text/x-tex",
        _ => "text/plain",
    }
}
