//! Terminal rendering. Live output and `conversations show` use the same line formats, so a stored
//! answer prints exactly as it streamed: tool calls sit in the text where they happened.

use std::io::{self, Write};
use std::sync::Mutex;
use switchboard_core::{ChatEvent, EventSink, ToolStatus};
use switchboard_service::ipc::{Role, StoredMessage};

/// Longest tool output shown in the terminal; the full text is in the database and `show --json`.
const MAX_OUTPUT_CHARS: usize = 160;

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect();
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
    format!("⚙ {name} {}\n", one_line(arguments, MAX_OUTPUT_CHARS))
}

/// The line a tool result gets.
fn result_line(name: &str, status: ToolStatus, duration_ms: u64, output: &str) -> String {
    format!("↳ {name} {} ({duration_ms} ms): {}\n", status.as_str(), one_line(output, MAX_OUTPUT_CHARS))
}

/// Writes text while remembering whether the cursor is at the start of a line.
struct Cursor<W: Write> {
    out: W,
    at_line_start: bool,
}

impl<W: Write> Cursor<W> {
    fn text(&mut self, text: &str) -> io::Result<()> {
        if let Some(last) = text.chars().last() {
            self.out.write_all(text.as_bytes())?;
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
            let mut line = serde_json::to_vec(&event)?;
            line.push(b'\n');
            return s.cursor.out.write_all(&line);
        }
        match event {
            ChatEvent::TextDelta { text } => s.cursor.text(&text)?,
            ChatEvent::ToolCall { id, name, arguments, .. } => {
                s.cursor.block(&call_line(&name, &arguments))?;
                s.names.insert(id, name);
            }
            ChatEvent::ToolResult { id, status, output, duration_ms } => {
                let name = s.names.get(&id).cloned().unwrap_or(id);
                s.cursor.block(&result_line(&name, status, duration_ms, &output))?;
            }
            ChatEvent::Notice { message, .. } => {
                s.cursor.out.flush()?;
                eprintln!("note: {message}");
            }
            ChatEvent::ApprovalRequested { name, .. } => {
                s.cursor.out.flush()?;
                eprintln!("note: '{name}' is waiting for approval");
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
            if let Some(r) = &c.result {
                cursor.block(&result_line(&c.name, r.status, r.duration_ms, &r.output))?;
            }
        }
    }
    let rest: String = m.content.chars().skip(printed).collect();
    cursor.text(&rest)?;
    cursor.end()
}

/// Prints one stored message for `conversations show`.
pub fn stored_message<W: Write>(mut out: W, m: &StoredMessage) -> io::Result<()> {
    match m.role {
        Role::User => writeln!(out, "> {}\n", m.content.replace('\n', "\n> ")),
        Role::Assistant => {
            assistant(&mut out, m)?;
            for n in &m.notices {
                writeln!(out, "note: {}", n.message)?;
            }
            if let Some(e) = &m.error {
                writeln!(out, "error[{}]: {}", e.kind, e.message)?;
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

/// Writes a conversation as Markdown, tool calls as fenced blocks where they happened.
pub fn markdown<W: Write>(mut out: W, title: &str, messages: &[StoredMessage]) -> io::Result<()> {
    writeln!(out, "# {title}\n")?;
    for m in messages {
        match m.role {
            Role::User => writeln!(out, "## You\n\n{}\n", m.content)?,
            Role::Assistant => {
                writeln!(out, "## Assistant ({})\n", m.model.as_deref().unwrap_or("unknown model"))?;
                let mut printed = 0usize;
                let mut calls: Vec<_> = m.tool_calls.iter().collect();
                calls.sort_by_key(|c| (c.iteration, c.index));
                for c in calls {
                    let upto = c.text_offset.max(printed);
                    let piece: String = m.content.chars().skip(printed).take(upto - printed).collect();
                    write!(out, "{piece}")?;
                    printed = upto;
                    let args = serde_json::from_str::<serde_json::Value>(&c.arguments)
                        .and_then(|v| serde_json::to_string_pretty(&v))
                        .unwrap_or_else(|_| c.arguments.clone());
                    writeln!(
                        out,
                        "\n\n<details><summary>Tool call: <code>{}</code> ({})</summary>\n",
                        c.name, c.source
                    )?;
                    writeln!(out, "```json\n{args}\n```\n")?;
                    if let Some(r) = &c.result {
                        writeln!(
                            out,
                            "Result ({}, {} ms):\n\n```\n{}\n```\n",
                            r.status.as_str(),
                            r.duration_ms,
                            r.output
                        )?;
                    }
                    writeln!(out, "</details>\n")?;
                }
                let rest: String = m.content.chars().skip(printed).collect();
                writeln!(out, "{rest}\n")?;
                if let Some(e) = &m.error {
                    writeln!(out, "> **Error ({})**: {}\n", e.kind, e.message)?;
                }
            }
        }
    }
    Ok(())
}
