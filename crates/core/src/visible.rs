//! Text someone else wrote (a server, a document, a model), made safe to show: [`visible`].
//!
//! Invariant: what it returns contains no character that acts on a terminal or reorders what a
//! person reads. Every C0 and C1 control but newline and tab (ESC, which starts CSI and OSC
//! sequences; the 8-bit CSI and OSC; BEL, backspace, a lone carriage return, DEL), the line and
//! paragraph separators, the bidi embeddings, overrides and isolates (U+202A–U+202E,
//! U+2066–U+2069, and the marks U+200E, U+200F, U+061C) and the invisible characters that hide
//! text (zero-width space, word joiner and invisible operators, the byte-order mark, the tag
//! characters of U+E0000–U+E007F, interlinear annotations) is shown as a visible stand-in, never
//! passed on. A sequence without its introducer is plain text, so a server cannot write the
//! clipboard (OSC 52), hide a link (OSC 8), retitle the window, clear the screen, overwrite the
//! line a person is about to approve, or make `rm -rf ~` read as something else.
//!
//! The zero-width joiner and non-joiner stay: scripts and emoji need them, and they reorder
//! nothing. The tool-definition lint ([`crate::lint`]) still reports them.

use std::borrow::Cow;

/// Whether `c` is reordered or hidden text: bidi controls and invisible characters that are
/// shown as `\u{…}`.
pub fn is_bidi_or_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200B}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{FFF9}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

/// Whether `c` hides or reorders text without showing, or acts on a terminal: the characters
/// [`visible`] replaces, plus the joiners, the soft hyphen and the Mongolian vowel separator it
/// leaves alone. What a tool definition or a link should never contain (the lint reports them; a
/// link with one is refused). A lone carriage return is the caller's to judge.
pub fn hides_text(c: char) -> bool {
    is_bidi_or_invisible(c)
        || matches!(c, '\u{200C}' | '\u{200D}' | '\u{00AD}' | '\u{180E}' | '\u{2028}' | '\u{2029}')
        || (c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
}

fn harmful(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{2028}' | '\u{2029}') || is_bidi_or_invisible(c)
}

/// `text` with every character that could act on a terminal or hide what it says replaced by a
/// visible stand-in (see the module's invariant): a C0 control or DEL by its Control Pictures
/// symbol (`␛`, `␍`, `␡`), anything else by its escape (`\u{202e}`). A Windows line end stays a
/// line end. Borrowed when there is nothing to replace.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(harmful) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            // The Control Pictures block has a symbol for each C0 control and DEL.
            '\u{0}'..='\u{1f}' if harmful(c) => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            c if harmful(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_controls_bidi_and_invisible_characters_are_shown_not_sent() {
        let cases = [
            ("plain émoji 👋 世界\n\ttabbed", "plain émoji 👋 世界\n\ttabbed"),
            ("\u{1b}]52;c;aGk=\u{7}", "␛]52;c;aGk=␇"), // OSC 52: write the clipboard
            ("\u{1b}[2J\u{1b}[H", "␛[2J␛[H"),          // clear the screen
            ("\u{9b}2J \u{9d}0;t\u{9c}", "\\u{9b}2J \\u{9d}0;t\\u{9c}"), // 8-bit CSI, OSC, ST
            ("rm -rf /tmp/x\rls", "rm -rf /tmp/x␍ls"), // a carriage return hides what came before
            ("over\u{8}\u{7f}", "over␈␡"),
            ("windows\r\nline", "windows\nline"),
            ("safe \u{202e}fdp.exe", "safe \\u{202e}fdp.exe"), // right-to-left override
            ("\u{2066}a\u{2069}\u{200f}", "\\u{2066}a\\u{2069}\\u{200f}"),
            ("zero\u{200b}width\u{feff}", "zero\\u{200b}width\\u{feff}"),
            ("tag\u{e0041}\u{e007f}", "tag\\u{e0041}\\u{e007f}"),
            ("line\u{2028}sep", "line\\u{2028}sep"),
            ("family 👨\u{200d}👩\u{200d}👧", "family 👨\u{200d}👩\u{200d}👧"), // joiners build emoji
        ];
        for (input, shown) in cases {
            assert_eq!(visible(input), shown, "{input:?}");
        }
        assert!(matches!(visible("nothing to do"), Cow::Borrowed(_)));
    }

    #[test]
    fn nothing_harmful_survives_any_input() {
        let every: String =
            (0u32..0x3000).chain(0xE0000..0xE0080).chain(0xFEFF..0xFFFF).filter_map(char::from_u32).collect();
        let shown = visible(&every);
        assert!(!shown.chars().any(harmful), "{:?}", shown.chars().find(|c| harmful(*c)));
    }
}
