//! A stdio server's stderr, kept as a bounded tail: at most [`STDERR_LINES`] lines of at most
//! [`STDERR_LINE_MAX`] bytes, so a server that floods stderr costs a bounded amount of memory.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::io::AsyncReadExt as _;

/// How many lines of a server's stderr are kept (Settings and `mcp logs` show them).
pub const STDERR_LINES: usize = 200;

/// The longest stderr line kept; the rest of a longer line is dropped.
pub const STDERR_LINE_MAX: usize = 2048;

/// Adds a line to a server's log (its stderr, and its log notifications beside it), dropping
/// the oldest past [`STDERR_LINES`].
pub(super) fn push_line(tail: &Mutex<VecDeque<String>>, line: String) {
    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
    if tail.len() == STDERR_LINES {
        tail.pop_front();
    }
    tail.push_back(line);
}

/// Keeps the last [`STDERR_LINES`] lines of a server's stderr, each cut to
/// [`STDERR_LINE_MAX`] bytes: a server that floods stderr costs a bounded amount of memory.
pub(super) async fn read_stderr(
    mut stderr: tokio::process::ChildStderr,
    tail: Arc<Mutex<VecDeque<String>>>,
    server: String,
) {
    let mut buf = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let mut dropping = false;
    let push = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line).trim_end().to_owned();
        line.clear();
        tracing::debug!(server = %server, "stderr: {text}");
        push_line(&tail, text);
    };
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b == b'\n' {
                if !dropping || !line.is_empty() {
                    push(&mut line);
                }
                dropping = false;
            } else if line.len() < STDERR_LINE_MAX {
                line.push(b);
            } else if !dropping {
                line.extend_from_slice("…".as_bytes());
                push(&mut line);
                dropping = true;
            }
        }
    }
    if !line.is_empty() {
        push(&mut line);
    }
}
