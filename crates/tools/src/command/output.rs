//! A command's output: each pipe read to its end at the same time as the other, the first bytes
//! up to the limit kept and the rest counted and dropped (so the command never blocks on a full
//! pipe), then put into the call's text or its error.

use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncReadExt};

/// How much of the end of stdout and of stderr an error quotes.
const ERROR_TAIL_CHARS: usize = 2000;

/// What was read from one pipe: the first bytes up to the limit, and how many there were.
#[derive(Clone, Debug, Default)]
pub(super) struct Captured {
    kept: Vec<u8>,
    total: u64,
}

impl Captured {
    /// The kept bytes as text (invalid UTF-8 replaced; a character the limit cut in half
    /// left out).
    fn text(&self) -> String {
        let bytes = match std::str::from_utf8(&self.kept) {
            Err(e) if e.error_len().is_none() && self.cut() => &self.kept[..e.valid_up_to()],
            _ => &self.kept[..],
        };
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// Whether the limit cut the output.
    fn cut(&self) -> bool {
        self.total > self.kept.len() as u64
    }

    /// The note that says the output was cut, if it was.
    fn cut_note(&self, what: &str) -> Option<String> {
        self.cut().then(|| format!("[{what} cut: kept the first {} of {} bytes]", self.kept.len(), self.total))
    }
}

/// Reads `pipe` to its end, keeping the first `limit` bytes in `into` and dropping the rest.
pub(super) async fn capture(mut pipe: impl AsyncRead + Unpin, limit: usize, into: Arc<Mutex<Captured>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut c = lock(&into);
                let room = limit.saturating_sub(c.kept.len());
                c.kept.extend_from_slice(&buf[..n.min(room)]);
                c.total += n as u64;
            }
        }
    }
}

pub(super) fn lock(c: &Mutex<Captured>) -> std::sync::MutexGuard<'_, Captured> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

/// A successful call's text: stdout, then a `stderr:` section when there is any.
pub(super) fn success_text(stdout: &Captured, stderr: &Captured) -> String {
    let mut text = stdout.text();
    if let Some(note) = stdout.cut_note("output") {
        push_line(&mut text, &note);
    }
    if stderr.total > 0 {
        if !text.is_empty() {
            push_line(&mut text, "\n");
        }
        text.push_str("stderr:\n");
        text.push_str(&stderr.text());
        if let Some(note) = stderr.cut_note("stderr") {
            push_line(&mut text, &note);
        }
    }
    if text.is_empty() {
        text.push_str("(the command finished with no output)");
    }
    text
}

/// The end of stderr and of stdout, labelled, for an error message; empty when both are.
pub(super) fn tails(stdout: &Captured, stderr: &Captured) -> String {
    let mut out = String::new();
    for (label, c) in [("stderr", stderr), ("stdout", stdout)] {
        let text = c.text();
        let text = text.trim_end();
        if text.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        let n = text.chars().count();
        if n > ERROR_TAIL_CHARS || c.cut() {
            let start = text.char_indices().nth(n.saturating_sub(ERROR_TAIL_CHARS)).map_or(0, |(i, _)| i);
            out.push_str(&format!("{label} (the end of what was kept):\n…{}", &text[start..]));
        } else {
            out.push_str(&format!("{label}:\n{text}"));
        }
    }
    out
}

fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_output_says_so_and_never_ends_in_half_a_character() {
        let c = Captured { kept: "aé".as_bytes()[..2].to_vec(), total: 100 };
        assert_eq!(c.text(), "a");
        let text = success_text(&c, &Captured::default());
        assert_eq!(text, "a\n[output cut: kept the first 2 of 100 bytes]");
        let err = Captured { kept: b"boom\n".to_vec(), total: 5 };
        assert_eq!(success_text(&Captured::default(), &err), "stderr:\nboom\n");
        assert_eq!(success_text(&Captured::default(), &Captured::default()), "(the command finished with no output)");
    }
}
