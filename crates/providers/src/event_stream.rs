//! The guard in front of `eventsource-client`'s parser: every 2xx event-stream body passes through
//! [`Guard`] before the library sees a byte.
//!
//! Why: `eventsource-client` 0.18 gets these wrong, and its parser is private, so they are fixed
//! on the bytes it is given rather than on the items it yields:
//! - an event block whose only fields it does not use (an unknown field, a field with no colon,
//!   `id` with NUL, an invalid `retry`, `data :x` whose name ends in a space) is `InvalidEvent`;
//! - a line that is not UTF-8 is `InvalidLine` (the rules say: decode with replacement);
//! - after either error its parser is poisoned and the stream closes, so nothing later in the
//!   answer can be read, whatever the caller does with the error;
//! - lines and events are buffered without any bound (one 100 MB line is 100 MB, then more).
//!
//! The guard applies the WHATWG event-stream rules itself (a leading BOM dropped; CR, LF and CRLF
//! line ends, also split across reads; `field:value` with one optional space; no colon = a field
//! with an empty value; a line starting with `:` is a comment) and hands the library only
//! canonical lines it cannot reject: `data: <value>`, `event: <value>`, `:` for a comment, and
//! blank lines. `id` and `retry` are dropped (they only serve reconnection, which is off), and so
//! is any other field, as the rules say. A line longer than [`MAX_LINE_BYTES`] or an event whose
//! data passes [`MAX_EVENT_BYTES`] ends the stream with [`StreamViolation`]; the guard never holds
//! more than one line of at most that size.

use bytes::{BufMut, Bytes, BytesMut};

/// The longest line of an event stream we accept, in bytes (without its line end).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// The most data one event may carry, in bytes (its `data` lines together).
pub const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// Why a stream was cut by the guard (or refused before it started).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StreamViolation {
    /// A line longer than [`MAX_LINE_BYTES`].
    #[error("a line longer than {} MiB", MAX_LINE_BYTES / (1024 * 1024))]
    LineTooLong,
    /// An event with more than [`MAX_EVENT_BYTES`] of data.
    #[error("an event larger than {} MiB", MAX_EVENT_BYTES / (1024 * 1024))]
    EventTooLarge,
    /// A success status whose body is an HTML page (a captive portal, a proxy's login page).
    #[error("an HTML page")]
    HtmlPage {
        /// The HTTP status.
        status: u16,
        /// The page's `<title>`, if it has one.
        title: Option<String>,
    },
}

/// Turns event-stream bytes into canonical lines; see the module docs. Pure.
#[derive(Debug)]
pub struct Guard {
    line: Vec<u8>,
    /// The previous byte was a CR: an LF now is the second half of a CRLF.
    after_cr: bool,
    /// Still at the start of the stream: a BOM here is dropped.
    at_start: bool,
    event_bytes: usize,
    failed: Option<StreamViolation>,
    max_line: usize,
    max_event: usize,
}

impl Default for Guard {
    fn default() -> Self {
        Self::with_limits(MAX_LINE_BYTES, MAX_EVENT_BYTES)
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Guard {
    /// A guard with the default limits.
    pub fn new() -> Self {
        Self::default()
    }

    /// A guard with other limits (tests).
    pub fn with_limits(max_line: usize, max_event: usize) -> Self {
        Self { line: Vec::new(), after_cr: false, at_start: true, event_bytes: 0, failed: None, max_line, max_event }
    }

    /// Takes the next bytes of the body and returns the canonical lines they complete. After an
    /// error, returns that error again.
    pub fn push(&mut self, mut bytes: &[u8]) -> Result<Bytes, StreamViolation> {
        if let Some(violation) = &self.failed {
            return Err(violation.clone());
        }
        let mut out = BytesMut::new();
        if self.at_start {
            // The BOM may itself arrive split; hold its prefix in `line` until it is decided.
            let take = (BOM.len() - self.line.len()).min(bytes.len());
            let mut head = self.line.clone();
            head.extend_from_slice(&bytes[..take]);
            if BOM.starts_with(&head) {
                if head.len() < BOM.len() {
                    self.line = head;
                    return Ok(out.freeze());
                }
                self.line.clear();
                bytes = &bytes[take..];
            }
            self.at_start = false;
        }
        while !bytes.is_empty() {
            if self.after_cr && bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
            self.after_cr = false;
            match bytes.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.grow(&bytes[..end])?;
                    self.after_cr = bytes[end] == b'\r';
                    bytes = &bytes[end + 1..];
                    let line = std::mem::take(&mut self.line);
                    self.line_done(&line, &mut out)?;
                    self.line = line;
                    self.line.clear();
                }
                None => {
                    self.grow(bytes)?;
                    bytes = &[];
                }
            }
        }
        Ok(out.freeze())
    }

    fn fail(&mut self, violation: StreamViolation) -> Result<(), StreamViolation> {
        self.failed = Some(violation.clone());
        self.line = Vec::new();
        Err(violation)
    }

    fn grow(&mut self, part: &[u8]) -> Result<(), StreamViolation> {
        if self.line.len() + part.len() > self.max_line {
            return self.fail(StreamViolation::LineTooLong);
        }
        self.line.extend_from_slice(part);
        Ok(())
    }

    fn line_done(&mut self, line: &[u8], out: &mut BytesMut) -> Result<(), StreamViolation> {
        if line.is_empty() {
            self.event_bytes = 0;
            out.put_u8(b'\n');
            return Ok(());
        }
        if line[0] == b':' {
            out.put_slice(b":\n");
            return Ok(());
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        let prefix: &[u8] = match name {
            b"data" => {
                self.event_bytes += value.len() + 1;
                if self.event_bytes > self.max_event {
                    return self.fail(StreamViolation::EventTooLarge);
                }
                b"data: "
            }
            b"event" => b"event: ",
            // `id` and `retry` serve reconnection, which is off; other fields are ignored by rule.
            _ => return Ok(()),
        };
        out.put_slice(prefix);
        out.put_slice(String::from_utf8_lossy(value).as_bytes());
        out.put_u8(b'\n');
        Ok(())
    }
}

/// The `<title>` of an HTML page, whitespace collapsed, at most 120 characters.
pub fn html_title(page: &str) -> Option<String> {
    let lower = page.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let title: String = page[start..end].split_whitespace().collect::<Vec<_>>().join(" ");
    let title: String = title.chars().take(120).collect();
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` in the pieces `cuts` makes and returns the canonical output.
    fn feed_cut(input: &[u8], cuts: &[usize], guard: &mut Guard) -> Result<String, StreamViolation> {
        let mut out = Vec::new();
        let mut from = 0;
        for &cut in cuts.iter().chain([&input.len()]) {
            out.extend_from_slice(&guard.push(&input[from..cut])?);
            from = cut;
        }
        Ok(String::from_utf8(out).expect("the guard emits UTF-8"))
    }

    /// The output for every way of cutting `input` once, and byte by byte, must be `want`.
    fn at_every_split(input: &[u8], want: &str) {
        for cut in 0..=input.len() {
            assert_eq!(feed_cut(input, &[cut], &mut Guard::new()).as_deref(), Ok(want), "cut at {cut} of {input:?}");
        }
        let bytewise: Vec<usize> = (1..input.len()).collect();
        assert_eq!(feed_cut(input, &bytewise, &mut Guard::new()).as_deref(), Ok(want), "byte by byte: {input:?}");
    }

    #[test]
    fn every_field_form_the_rules_allow_is_canonicalised_at_every_split() {
        let cases: &[(&[u8], &str)] = &[
            (b"data: {\"a\":1}\n\n", "data: {\"a\":1}\n\n"),
            (b"data:{\"a\":1}\n\n", "data: {\"a\":1}\n\n"),
            (b"data:  two spaces\n\n", "data:  two spaces\n\n"),
            (b"data\n\n", "data: \n\n"),
            (b"foo: bar\ndata: x\n\n", "data: x\n\n"),
            (b"foo: bar\n\n", "\n"),
            (b"nocolon\n\n", "\n"),
            (b"retry: soon\ndata: x\n\n", "data: x\n\n"),
            (b"retry: 10\n\n", "\n"),
            (b"id: a\0b\ndata: x\n\n", "data: x\n\n"),
            (b"id: \xF0\x9F\x92\xA5 odd\n\n", "\n"),
            (b"data : not data\n\n", "\n"),
            (b"event: message\ndata: x\n\n", "event: message\ndata: x\n\n"),
            (b"data: x\r\n\r\n", "data: x\n\n"),
            (b"data: x\r\rdata: y\r\r", "data: x\n\ndata: y\n\n"),
            (b"data: x\r\n\ndata: y\n\r\n", "data: x\n\ndata: y\n\n"),
            (b"\xEF\xBB\xBFdata: x\n\n", "data: x\n\n"),
            (b": keep-alive\n\n", ":\n\n"),
            (b":\n", ":\n"),
            (b"data: caf\xC3\xA9 \xF0\x9F\x91\x8B\n\n", "data: caf\u{e9} \u{1f44b}\n\n"),
            (b"data: bad \xFF\xFE utf8\n\n", "data: bad \u{fffd}\u{fffd} utf8\n\n"),
            (b"data: a\ndata: b\n\n", "data: a\ndata: b\n\n"),
            (b"data: no end yet", ""),
        ];
        for (input, want) in cases {
            at_every_split(input, want);
        }
    }

    #[test]
    fn a_bom_is_dropped_only_at_the_start() {
        // A BOM later is part of a field name, which is then unknown.
        at_every_split(b"data: a\n\n\xEF\xBB\xBFdata: b\n\n", "data: a\n\n\n");
        // Not a BOM: those bytes begin the first line's field name, which is then unknown.
        at_every_split(b"\xEF\xBBdata: x\n\n", "\n");
        at_every_split(b"\xEFdata: x\n\n", "\n");
    }

    #[test]
    fn a_line_past_the_cap_ends_the_stream_and_holds_no_more_than_the_cap() {
        let mut guard = Guard::with_limits(16, 64);
        assert_eq!(guard.push(b"data: ok\n\n").as_deref(), Ok(&b"data: ok\n\n"[..]));
        assert_eq!(guard.push(b"data: 0123456789X"), Err(StreamViolation::LineTooLong));
        assert!(guard.line.capacity() <= 64, "nothing of the long line is kept");
        assert!(guard.push(b"\n\n").is_err(), "the stream stays failed");
        // Byte by byte the cap holds the same.
        let mut guard = Guard::with_limits(16, 64);
        let line = [b'x'; 17];
        let failed = line.iter().position(|b| guard.push(std::slice::from_ref(b)).is_err());
        assert_eq!(failed, Some(16));
        // A line exactly at the cap passes.
        assert!(Guard::with_limits(16, 64).push(b"data: 0123456789\n\n").is_ok());
    }

    #[test]
    fn an_event_past_the_cap_ends_the_stream() {
        // Each line counts its value and a newline: 10 bytes.
        let mut guard = Guard::with_limits(16, 19);
        assert!(guard.push(b"data: 012345678\n").is_ok());
        assert_eq!(guard.push(b"data: 012345678\n"), Err(StreamViolation::EventTooLarge));
        let mut guard = Guard::with_limits(16, 19);
        assert!(guard.push(b"data: 012345678\n\ndata: 012345678\n\n").is_ok(), "a blank line starts a new event");
    }

    #[test]
    fn titles_are_read_from_html_pages() {
        assert_eq!(html_title("<html><head><TITLE>\n502  Bad Gateway\n</TITLE>").as_deref(), Some("502 Bad Gateway"));
        assert_eq!(html_title("<title lang=en>Hotel Wi-Fi login</title>").as_deref(), Some("Hotel Wi-Fi login"));
        assert_eq!(html_title("<html><body>x</body></html>"), None);
        assert_eq!(html_title("<title></title>"), None);
    }
}
