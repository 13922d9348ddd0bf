//! What every API shares when it writes a person's attached files ([`Part`]s): the one framing
//! of a text file as text ([`text_file`]), data URLs ([`data_url`]) and the file name a PDF
//! goes under ([`pdf_name`]). Each API's `request.rs` puts these in its own content parts:
//!
//! | Part | OpenAI Chat | Responses | Anthropic | Gemini |
//! | --- | --- | --- | --- | --- |
//! | image | `image_url` (data URL, `detail: auto`) | `input_image` (data URL, `detail: auto`) | `image` (base64 source) | `inlineData` |
//! | PDF | `file` (`filename`, `file_data` data URL) | `input_file` (`filename`, `file_data` data URL) | `document` (base64 `application/pdf` source, `title`) | `inlineData` |
//! | text | `text` ([`text_file`]) | `input_text` ([`text_file`]) | `text` ([`text_file`]) | `text` ([`text_file`]) |
//!
//! Order: the OpenAI APIs send the typed text first, then the files in the order attached (as
//! OpenAI's examples do); Anthropic and Gemini send the files first, then the text, as their
//! guides advise ("Claude works best when images come before text", "place the text prompt
//! after the image part").
//!
//! Invariant: a message without parts is written exactly as before parts existed (a Chat user
//! message's `content` stays a string), so histories, caches and golden requests do not change.

use switchboard_core::Part;

/// `data:<mime>;base64,<data>`, the form both OpenAI APIs take inline files and images in
/// (<https://platform.openai.com/docs/guides/images-vision>, <https://platform.openai.com/docs/guides/pdf-files>).
pub fn data_url(mime_type: &str, base64: &str) -> String {
    format!("data:{mime_type};base64,{base64}")
}

/// The file name a PDF is sent under: its own, or `document.pdf` when it has none (OpenAI's
/// `file` part and `input_file` need one).
pub fn pdf_name(name: &str) -> &str {
    if name.trim().is_empty() { "document.pdf" } else { name }
}

/// A text file (or text taken from a file) as the text a model reads, the same on every API:
///
/// ````text
/// File notes.md (text/markdown):
/// ```
/// the text
/// ```
/// ````
///
/// With a note: `File report.pdf (application/pdf; text extracted from a 12-page PDF):`. The
/// fence is one backtick longer than the longest run of backticks in the text (at least three),
/// so a file that holds Markdown fences cannot end the block early; control characters in the
/// name become spaces, so a name cannot start a line of its own.
pub fn text_file(name: &str, mime_type: &str, text: &str, note: Option<&str>) -> String {
    let clean = |s: &str| s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    let name = clean(name.trim());
    let name = if name.is_empty() { "untitled".to_owned() } else { name };
    let mut about = clean(mime_type.trim());
    if let Some(note) = note.map(str::trim).filter(|n| !n.is_empty()) {
        about.push_str("; ");
        about.push_str(&clean(note));
    }
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let newline = if text.ends_with('\n') || text.is_empty() { "" } else { "\n" };
    format!("File {name} ({about}):\n{fence}\n{text}{newline}{fence}")
}

/// [`text_file`] of a [`Part::Text`]; `None` for the other parts.
pub fn part_text(part: &Part) -> Option<String> {
    match part {
        Part::Text { name, mime_type, text, note } => Some(text_file(name, mime_type, text, note.as_deref())),
        Part::Image { .. } | Part::Pdf { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_file_is_named_typed_and_fenced_safely() {
        assert_eq!(
            text_file("notes.md", "text/markdown", "# Hi\n", None),
            "File notes.md (text/markdown):\n```\n# Hi\n```"
        );
        assert_eq!(
            text_file("a.rs", "text/x-rust", "fn main() {}", None),
            "File a.rs (text/x-rust):\n```\nfn main() {}\n```"
        );
        // A file with its own fences gets a longer one.
        let md = "Before\n```rust\nx\n```\n````\nafter";
        assert_eq!(
            text_file("r.md", "text/markdown", md, None),
            format!("File r.md (text/markdown):\n`````\n{md}\n`````")
        );
        assert_eq!(
            text_file("report.pdf", "application/pdf", "Page one", Some("text extracted from a 2-page PDF")),
            "File report.pdf (application/pdf; text extracted from a 2-page PDF):\n```\nPage one\n```"
        );
        // A name cannot break the heading line; an empty file is still a block.
        assert_eq!(text_file("a\nb.txt", "text/plain", "", Some(" ")), "File a b.txt (text/plain):\n```\n```");
        assert_eq!(text_file("  ", "text/plain", "x", None), "File untitled (text/plain):\n```\nx\n```");
    }

    #[test]
    fn data_urls_and_pdf_names() {
        assert_eq!(data_url("image/png", "iVBOR"), "data:image/png;base64,iVBOR");
        assert_eq!((pdf_name("a.pdf"), pdf_name(" ")), ("a.pdf", "document.pdf"));
    }
}
