//! Terminal rendering. Live output and `conversations show` use the same line formats, so a stored
//! answer prints exactly as it streamed: tool calls sit in the text where they happened.

use std::io::{self, Write};
use std::sync::Mutex;
use switchboard_core::{ChatEvent, EventSink, ToolStatus};
use switchboard_service::ipc::{MATCH_END, MATCH_START, Role, SearchHit, SearchHitKind, StoredMessage};

/// Longest tool output shown in the terminal; the full text is in the database and `show --json`.
const MAX_OUTPUT_CHARS: usize = 160;

/// Text from a model, a tool, a server or a document, made harmless for a terminal: the one
/// neutraliser every print point of such text goes through, [`switchboard_core::visible`]. Every
/// control character but newline and tab (ESC, which starts CSI and OSC sequences; the 8-bit CSI
/// and OSC; BEL, backspace, carriage return, DEL) and every bidi override, isolate or invisible
/// character is shown as a visible stand-in instead of being sent. Without its introducer a
/// sequence is plain text, so a model cannot write the clipboard (OSC 52), hide a link (OSC 8),
/// retitle the window or clear the screen, and a server cannot make a command read as another.
/// `--json` output is never passed here.
pub fn safe(text: &str) -> std::borrow::Cow<'_, str> {
    switchboard_core::visible(text)
}

/// One search hit: the conversation and where the match is, then its snippet with each match in
/// bold (`bold`: a terminal) or between brackets.
pub fn search_hit(out: &mut impl Write, hit: &SearchHit, bold: bool) -> std::io::Result<()> {
    let place = match (hit.kind, hit.role) {
        (SearchHitKind::Title, _) => "title".to_owned(),
        (SearchHitKind::Message, Some(Role::User)) => "you".to_owned(),
        (SearchHitKind::Message, _) => "assistant".to_owned(),
        (SearchHitKind::ToolArguments, _) => "tool call".to_owned(),
        (SearchHitKind::ToolResult, _) => "tool result".to_owned(),
        (SearchHitKind::Attachment, _) => match &hit.attachment {
            Some(name) => format!("attached file {}", safe(name)),
            None => "attached file".to_owned(),
        },
    };
    let branch = if hit.on_current_path { "" } else { " (another version)" };
    let message = hit.message_id.as_deref().map(|m| format!("  message {m}")).unwrap_or_default();
    writeln!(out, "{}  {}  [{place}{branch}]{message}", hit.conversation_id, safe(&hit.title))?;
    let (open, close) = if bold { ("\x1b[1m", "\x1b[0m") } else { ("[", "]") };
    let mut line = String::from("    ");
    for (i, part) in hit.snippet.split([MATCH_START, MATCH_END]).enumerate() {
        // Parts alternate: text outside a match, then a match.
        if i % 2 == 1 {
            line.push_str(open);
            line.push_str(&safe(part));
            line.push_str(close);
        } else {
            line.push_str(&safe(part));
        }
    }
    writeln!(out, "{line}")
}

/// Serialized JSON made harmless for a terminal without changing what it means: serde_json
/// already escapes control characters, and here every bidi override, isolate or invisible
/// character (and the line and paragraph separators) becomes a `\uXXXX` escape too, which any
/// JSON reader reads back as the same character. Every `--json` output goes through it.
pub fn json(text: &str) -> std::borrow::Cow<'_, str> {
    let escaped = |c: char| switchboard_core::visible::is_bidi_or_invisible(c) || matches!(c, '\u{2028}' | '\u{2029}');
    if !text.chars().any(escaped) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut units = [0u16; 2];
    for c in text.chars() {
        if escaped(c) {
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out.into()
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = safe(text).chars().map(|c| if c == '\n' { ' ' } else { c }).collect();
    if flat.chars().count() > max {
        let mut s: String = flat.chars().take(max).collect();
        s.push('…');
        s
    } else {
        flat
    }
}

/// The line a tool call gets.
fn call_line(name: &str, arguments: &str) -> String {
    format!("⚙ {} {}\n", safe(name), one_line(arguments, MAX_OUTPUT_CHARS))
}

/// The line a tool result gets.
fn result_line(name: &str, status: ToolStatus, duration_ms: u64, output: &str) -> String {
    format!("↳ {} {} ({duration_ms} ms): {}\n", safe(name), status.as_str(), one_line(output, MAX_OUTPUT_CHARS))
}

/// A sub-agent's event inside a call, at any depth: the instances down to it (`Lead › Scout[1]`)
/// and the event itself.
fn innermost(instance: &str, event: &ChatEvent) -> (String, ChatEvent) {
    match event {
        ChatEvent::ToolProgress { instance: Some(inner), event: Some(next), .. } => {
            let (path, leaf) = innermost(inner, next);
            (format!("{} › {path}", safe(instance)), leaf)
        }
        other => (safe(instance).into_owned(), other.clone()),
    }
}

/// The line a sub-agent's event gets, indented under its parent's call; `None` for what is not
/// shown (its text streams into its result; usage and bookkeeping stay out of the way).
fn nested_line(path: &str, event: &ChatEvent, names: &std::collections::HashMap<String, String>) -> Option<String> {
    let line = match event {
        ChatEvent::ToolCall { name, arguments, .. } => call_line(name, arguments),
        ChatEvent::ToolResult { id, status, output, duration_ms, .. } => {
            let name = names.get(&format!("{path}/{id}")).map_or(id.as_str(), String::as_str);
            result_line(name, *status, *duration_ms, output)
        }
        ChatEvent::Notice { message, .. } => format!(
            "note: {}
",
            one_line(message, MAX_OUTPUT_CHARS)
        ),
        ChatEvent::Error { message, .. } => format!(
            "error: {}
",
            one_line(message, MAX_OUTPUT_CHARS)
        ),
        ChatEvent::Done { finish_reason, usage, .. } => {
            format!(
                "done ({}, {} tokens)
",
                finish_reason.as_str(),
                usage.prompt_tokens + usage.completion_tokens
            )
        }
        _ => return None,
    };
    Some(format!("    {path}: {line}"))
}

/// Writes text while remembering whether the cursor is at the start of a line.
struct Cursor<W: Write> {
    out: W,
    at_line_start: bool,
}

impl<W: Write> Cursor<W> {
    fn text(&mut self, text: &str) -> io::Result<()> {
        if let Some(last) = text.chars().last() {
            self.out.write_all(safe(text).as_bytes())?;
            self.at_line_start = last == '\n';
        }
        Ok(())
    }

    fn block(&mut self, line: &str) -> io::Result<()> {
        if !self.at_line_start {
            self.out.write_all(b"\n")?;
        }
        self.out.write_all(line.as_bytes())?;
        self.at_line_start = true;
        Ok(())
    }

    fn end(&mut self) -> io::Result<()> {
        if !self.at_line_start {
            self.out.write_all(b"\n")?;
            self.at_line_start = true;
        }
        Ok(())
    }
}

/// Prints a live turn: JSON lines, or text with tool lines in place.
pub struct LivePrinter {
    json: bool,
    state: Mutex<LiveState>,
}

struct LiveState {
    // Batched: the engine calls `flush` whenever it is about to wait, so output is never late,
    // and a burst of buffered events costs one write instead of one per token.
    cursor: Cursor<io::BufWriter<io::Stdout>>,
    names: std::collections::HashMap<String, String>,
}

impl LivePrinter {
    /// A printer to stdout.
    pub fn new(json: bool) -> Self {
        Self {
            json,
            state: Mutex::new(LiveState {
                cursor: Cursor { out: io::BufWriter::with_capacity(64 * 1024, io::stdout()), at_line_start: true },
                names: Default::default(),
            }),
        }
    }

    /// Ends the output with a newline if needed.
    pub fn finish(&self) {
        if let Ok(mut s) = self.state.lock() {
            if !self.json {
                let _ = s.cursor.end();
            }
            let _ = s.cursor.out.flush();
        }
    }

    fn print(&self, event: ChatEvent) -> io::Result<()> {
        let mut s = self.state.lock().map_err(|_| io::Error::other("printer lock"))?;
        if self.json {
            let line = serde_json::to_string(&event)?;
            return writeln!(s.cursor.out, "{}", json(&line));
        }
        match event {
            ChatEvent::TextDelta { text } => s.cursor.text(&text)?,
            ChatEvent::ToolCall { id, name, arguments, .. } => {
                s.cursor.block(&call_line(&name, &arguments))?;
                s.names.insert(id, name);
            }
            ChatEvent::ToolResult { id, status, output, duration_ms, .. } => {
                let name = s.names.get(&id).cloned().unwrap_or(id);
                s.cursor.block(&result_line(&name, status, duration_ms, &output))?;
            }
            ChatEvent::Notice { message, .. } => {
                s.cursor.out.flush()?;
                eprintln!("note: {}", safe(&message));
            }
            ChatEvent::ApprovalRequested { name, .. } => {
                s.cursor.out.flush()?;
                eprintln!("note: '{}' is waiting for approval", safe(&name));
            }
            ChatEvent::ElicitationRequested { server, refused: Some(why), .. } => {
                s.cursor.out.flush()?;
                eprintln!("note: the MCP server '{}' asked for input — {}", safe(&server), safe(&why));
            }
            ChatEvent::ElicitationResolved { action, .. } => {
                s.cursor.out.flush()?;
                eprintln!("note: request for input answered: {}", action.as_str());
            }
            ChatEvent::SamplingResolved { approved, .. } => {
                s.cursor.out.flush()?;
                eprintln!("note: request for a completion {}", if approved { "approved" } else { "denied" });
            }
            ChatEvent::ToolProgress { instance: Some(instance), event: Some(event), .. } => {
                let (path, leaf) = innermost(&instance, &event);
                if let ChatEvent::ToolCall { id, name, .. } = &leaf {
                    s.names.insert(format!("{path}/{id}"), name.clone());
                }
                if let Some(line) = nested_line(&path, &leaf, &s.names) {
                    s.cursor.block(&line)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl EventSink for LivePrinter {
    fn emit(&self, event: ChatEvent) {
        // A closed stdout (piped into `head`) must not stop the turn: it is still being recorded.
        let _ = self.print(event);
    }

    fn flush(&self) {
        if let Ok(mut s) = self.state.lock() {
            let _ = s.cursor.out.flush();
        }
    }
}

/// Prints an assistant message's text with its tool lines at their offsets, as it streamed.
fn assistant<W: Write>(out: W, m: &StoredMessage) -> io::Result<()> {
    let mut cursor = Cursor { out, at_line_start: true };
    let mut calls: Vec<_> = m.tool_calls.iter().collect();
    calls.sort_by_key(|c| (c.iteration, c.index));
    let mut printed = 0usize; // chars of content already written
    let mut i = 0;
    while i < calls.len() {
        let iteration = calls[i].iteration;
        let group: Vec<_> = calls[i..].iter().take_while(|c| c.iteration == iteration).copied().collect();
        i += group.len();
        for c in &group {
            let upto = c.text_offset.max(printed);
            let piece: String = m.content.chars().skip(printed).take(upto - printed).collect();
            cursor.text(&piece)?;
            printed = upto;
            cursor.block(&call_line(&c.name, &c.arguments))?;
        }
        for c in &group {
            let mut names = std::collections::HashMap::new();
            for n in &c.nested {
                let (path, leaf) = innermost(&n.instance, &n.event);
                if let ChatEvent::ToolCall { id, name, .. } = &leaf {
                    names.insert(format!("{path}/{id}"), name.clone());
                }
                if let Some(line) = nested_line(&path, &leaf, &names) {
                    cursor.block(&line)?;
                }
            }
        }
        for c in &group {
            if let Some(r) = &c.result {
                cursor.block(&result_line(&c.name, r.status, r.duration_ms, &r.output))?;
            }
        }
    }
    let rest: String = m.content.chars().skip(printed).collect();
    cursor.text(&rest)?;
    cursor.end()
}

/// One attached file in a line: "attached: report.pdf (PDF, 12 pages, 1.4 MB)", and when a PDF's
/// text was cut, which pages it holds and why ("…; text of pages 1–3 of 12 only: …").
pub fn attachment_line(a: &switchboard_core::Attachment) -> String {
    use switchboard_core::AttachmentKind;
    let mut about = vec![match a.kind {
        AttachmentKind::Image => "image".to_owned(),
        AttachmentKind::Pdf => "PDF".to_owned(),
        AttachmentKind::Text => safe(&a.mime_type).into_owned(),
    }];
    if let (Some(w), Some(h)) = (a.width, a.height) {
        about.push(format!("{w}×{h}"));
    }
    if let Some(p) = a.pages {
        about.push(format!("{p} page{}", if p == 1 { "" } else { "s" }));
    }
    about.push(size(a.size));
    let cut = a.text_note.as_deref().map(|note| format!("; {}", safe(note))).unwrap_or_default();
    format!("attached: {} ({}{cut})", safe(&a.name), about.join(", "))
}

/// Bytes for people: "812 bytes", "14.2 KB", "3.4 MB".
fn size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} bytes")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

/// Prints one stored message for `conversations show`.
pub fn stored_message<W: Write>(mut out: W, m: &StoredMessage) -> io::Result<()> {
    match m.role {
        Role::User => {
            writeln!(out, "> {}", safe(&m.content).replace('\n', "\n> "))?;
            for a in &m.attachments {
                writeln!(out, "> {}", attachment_line(a))?;
            }
            writeln!(out)
        }
        Role::Assistant => {
            assistant(&mut out, m)?;
            for n in &m.notices {
                writeln!(out, "note: {}", safe(&n.message))?;
            }
            if let Some(e) = &m.error {
                writeln!(out, "error[{}]: {}", e.kind, safe(&e.message))?;
                if let Some(detail) = &e.detail {
                    writeln!(out, "details: {}", safe(detail))?;
                }
            }
            writeln!(
                out,
                "[{} · {} · {} tool calls · {} in / {} out tokens]\n",
                m.status.as_str(),
                m.model.as_deref().unwrap_or("-"),
                m.tool_calls_made,
                m.usage.prompt_tokens,
                m.usage.completion_tokens
            )
        }
    }
}

/// "Context: 41,200 of 128,000 tokens (32%): instructions 1,200, tools 3,400, history 30,000,
/// tool results 6,600, attachments 0" (about, when nothing of it was reported).
pub fn context_line(c: &switchboard_service::context::ConversationContext) -> String {
    let n = |v: u64| {
        let s = v.to_string();
        let mut out = String::new();
        for (i, ch) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(ch);
        }
        out
    };
    let b = &c.breakdown;
    let of = match c.window {
        Some(w) if w > 0 => format!("of {} tokens ({}%)", n(w), c.used_tokens * 100 / w),
        _ => "tokens (window unknown)".to_owned(),
    };
    format!(
        "Context: {}{} {of}: instructions {}, tools {}, history {}, tool results {}, attachments {}",
        if c.estimated { "about " } else { "" },
        n(c.used_tokens),
        n(b.instructions),
        n(b.tools),
        n(b.history),
        n(b.tool_results),
        n(b.attachments)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attached_pdf_whose_text_was_cut_says_which_pages_its_text_holds() {
        let mut pdf = switchboard_core::Attachment {
            id: "0".repeat(64),
            name: "long.pdf".into(),
            mime_type: "application/pdf".into(),
            kind: switchboard_core::AttachmentKind::Pdf,
            size: 2048,
            width: None,
            height: None,
            pages: Some(40),
            text_note: None,
        };
        assert_eq!(attachment_line(&pdf), "attached: long.pdf (PDF, 40 pages, 2.0 KB)");
        pdf.text_note = Some("text of pages 1–12 of 40 only: extraction stopped after 20 s".into());
        assert_eq!(
            attachment_line(&pdf),
            "attached: long.pdf (PDF, 40 pages, 2.0 KB; text of pages 1–12 of 40 only: extraction stopped after 20 s)"
        );
    }

    #[test]
    fn a_hit_in_an_attached_file_names_the_file_made_harmless() {
        let hit = SearchHit {
            conversation_id: "c".into(),
            title: "chat".into(),
            message_id: Some("m".into()),
            tool_call_id: None,
            attachment: Some("q3\u{1b}[2J.pdf".into()),
            kind: SearchHitKind::Attachment,
            role: Some(Role::User),
            snippet: format!("revenue {MATCH_START}grew{MATCH_END}"),
            on_current_path: true,
            created_at: 0,
        };
        let mut out = Vec::new();
        search_hit(&mut out, &hit, false).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("c  chat  [attached file q3␛[2J.pdf]  message m\n"), "{text}");
        assert!(text.contains("revenue [grew]"), "{text}");
    }

    #[test]
    fn terminal_control_sequences_are_shown_not_sent() {
        let cases = [
            ("plain text, émoji 👋 and 世界\n\ttabbed", "plain text, émoji 👋 and 世界\n\ttabbed"),
            ("\u{1b}]52;c;aGk=\u{7}", "␛]52;c;aGk=␇"), // OSC 52: write the clipboard
            ("\u{1b}]8;;https://evil\u{1b}\\x\u{1b}]8;;\u{1b}\\", "␛]8;;https://evil␛\\x␛]8;;␛\\"), // OSC 8
            ("\u{1b}]0;pwned\u{7}", "␛]0;pwned␇"),     // window title
            ("\u{1b}[2J\u{1b}[H", "␛[2J␛[H"),          // clear screen
            ("\u{9b}2J \u{9d}0;t\u{9c}", "\\u{9b}2J \\u{9d}0;t\\u{9c}"), // 8-bit CSI, OSC, ST
            ("rm -rf ~\u{202e}", "rm -rf ~\\u{202e}"), // right-to-left override
            ("over\rwrite\u{8}\u{7f}", "over␍write␈␡"),
            ("windows\r\nline", "windows\nline"),
        ];
        for (input, shown) in cases {
            assert_eq!(safe(input), shown, "{input:?}");
        }
        assert!(matches!(safe("nothing to do"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn json_keeps_its_meaning_and_shows_bidi_and_invisible_characters_escaped() {
        let value = serde_json::json!({"d": "a\u{202e}b\u{e0041}\u{2028}\u{1b}[2J\r ok ✓"});
        let text = serde_json::to_string(&value).unwrap();
        let shown = json(&text);
        assert!(!shown.contains(['\u{202e}', '\u{e0041}', '\u{2028}', '\u{1b}', '\r']), "{shown}");
        assert!(shown.contains("\\u202e") && shown.contains("\\udb40\\udc41"), "{shown}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&shown).unwrap(), value, "the same value");
        assert!(matches!(json("{\"a\":\"plain ✓\"}"), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn tool_lines_and_stored_messages_are_neutralised_too() {
        let line = call_line("get_time", "{\"tz\":\"\u{1b}[31mred\"}");
        assert!(!line.contains('\u{1b}') && line.contains("␛[31mred"), "{line}");
        let line = result_line("t", ToolStatus::Ok, 1, "\u{1b}]0;x\u{7}");
        assert!(!line.contains('\u{1b}'), "{line}");
        let mut cursor = Cursor { out: Vec::new(), at_line_start: true };
        cursor.text("a\u{1b}[2Jb").unwrap();
        assert_eq!(String::from_utf8(cursor.out).unwrap(), "a␛[2Jb");
    }
}
