//! A stdio server's transport: rmcp's JSON-lines transport over the child's pipes, with the
//! child's stdout read through [`LineLimit`], and the child owned as rmcp's own
//! `TokioChildProcess` owns it (closed gracefully, killed when dropped).
//!
//! Why not `TokioChildProcess` itself: rmcp drops a line over its limit (16 MiB) with a log line
//! and nothing else, so the call it answered waits for the tool timeout and then says only that
//! it timed out. [`LineLimit`] sees the line first: it drops it, reads its top-level `id` on the
//! way (wherever in the line it is), and hands rmcp a JSON-RPC error for that id instead, which
//! fails the call at once with the reply's size. The server stays connected and usable.
//!
//! Invariant: rmcp never holds more than [`MAX_MESSAGE_BYTES`] of one line, and no line over it
//! reaches a call as anything but that error.

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

/// The largest message (one line, without its line end) a stdio server may send: rmcp's own
/// line limit, so every line under it reaches rmcp whole.
pub const MAX_MESSAGE_BYTES: usize = DEFAULT_MAX_LINE_LENGTH - 1;
/// How long a closing server has to exit before it is signalled, then killed.
const EXIT_WAIT: Duration = Duration::from_secs(3);
/// How much of a line's top-level `id` value is kept (ids are short).
const MAX_ID_BYTES: usize = 128;

/// A running stdio server: its process and its transport.
pub(super) struct StdioTransport {
    child: Option<Box<dyn ChildWrapper>>,
    io: AsyncRwTransport<RoleClient, LineLimit<ChildStdout>, ChildStdin>,
}

/// Starts `cmd` with piped stdin, stdout and stderr; the stderr is the caller's to read.
pub(super) fn spawn(mut cmd: CommandWrap) -> std::io::Result<(StdioTransport, Option<ChildStderr>)> {
    use std::process::Stdio;
    cmd.command_mut().stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let stdin = child.stdin().take().ok_or_else(|| std::io::Error::other("the server's stdin was not piped"))?;
    let stdout = child.stdout().take().ok_or_else(|| std::io::Error::other("the server's stdout was not piped"))?;
    let stderr = child.stderr().take();
    let io = AsyncRwTransport::new_client(LineLimit::new(stdout, MAX_MESSAGE_BYTES), stdin);
    Ok((StdioTransport { child: Some(child), io }, stderr))
}

impl StdioTransport {
    /// The server's process id.
    pub(super) fn id(&self) -> Option<u32> {
        self.child.as_ref()?.id()
    }

    /// Closes its stdin and waits for it to exit; then SIGTERM, then kill.
    async fn shut_down(&mut self) -> std::io::Result<()> {
        let Some(child) = self.child.as_mut() else { return Ok(()) };
        self.io.close().await?;
        if tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_ok() {
            self.child = None;
            return Ok(());
        }
        #[cfg(unix)]
        {
            const SIGTERM: i32 = 15;
            if child.signal(SIGTERM).is_ok() && tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_ok() {
                self.child = None;
                return Ok(());
            }
        }
        let killed = Box::into_pin(child.kill()).await;
        self.child = None;
        killed
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // Killing waits for the exit; do that off whatever is dropping us.
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = Box::into_pin(child.kill()).await;
                });
            } else {
                let _ = child.start_kill();
            }
        }
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.io.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.io.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shut_down()
    }
}

/// Reads a JSON-lines stream and replaces every line over `limit` bytes with a JSON-RPC error
/// for the line's `id` that names its size. Memory: one read buffer, and what it produced.
pub(super) struct LineLimit<R> {
    inner: R,
    limit: usize,
    /// Bytes of the current line so far.
    line: usize,
    /// The current line is over the limit: its bytes are dropped.
    over: bool,
    id: IdScan,
    /// What the reader gets next, from `at`.
    out: Vec<u8>,
    at: usize,
    buf: Box<[u8]>,
}

impl<R: AsyncRead + Unpin> LineLimit<R> {
    /// `inner` with lines bounded at `limit` bytes (without the line end).
    pub(super) fn new(inner: R, limit: usize) -> Self {
        Self {
            inner,
            limit,
            line: 0,
            over: false,
            id: IdScan::default(),
            out: Vec::new(),
            at: 0,
            buf: vec![0; 64 * 1024].into_boxed_slice(),
        }
    }

    /// Turns one read into what the reader gets.
    fn process(&mut self, n: usize) {
        let mut pos = 0;
        while pos < n {
            let newline = self.buf[pos..n].iter().position(|&b| b == b'\n').map(|i| pos + i);
            let end = newline.unwrap_or(n);
            let part = &self.buf[pos..end];
            self.id.feed(part);
            self.line += part.len();
            if !self.over {
                if self.line <= self.limit {
                    self.out.extend_from_slice(part);
                } else {
                    // What rmcp holds of this line ends here, unparsable, and is skipped.
                    self.over = true;
                    self.out.push(b'\n');
                }
            }
            if newline.is_some() {
                if self.over {
                    self.out.extend_from_slice(&self.refusal());
                } else {
                    self.out.push(b'\n');
                }
                self.line = 0;
                self.over = false;
                self.id = IdScan::default();
            }
            pos = end + 1;
        }
    }

    /// The error that answers the dropped line, as one line (nothing when it had no usable id).
    fn refusal(&self) -> Vec<u8> {
        let Some(id) = self.id.id() else {
            tracing::warn!(bytes = self.line, "an MCP server sent a message over the limit, without an id; dropped");
            return Vec::new();
        };
        let message = too_large(self.line, self.limit);
        tracing::warn!("{message}");
        let error = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}});
        let mut line = serde_json::to_vec(&error).unwrap_or_default();
        line.push(b'\n');
        line
    }
}

/// The words of the error: "the server's reply was 40.0 MB, over the 16 MB limit".
pub fn too_large(bytes: usize, limit: usize) -> String {
    const MB: f64 = 1024.0 * 1024.0;
    format!(
        "the server's reply was {:.1} MB, over the {} MB limit of one message (it was dropped; the server is still \
         connected)",
        bytes as f64 / MB,
        ((limit as f64 + 1.0) / MB).round()
    )
}

impl<R: AsyncRead + Unpin> AsyncRead for LineLimit<R> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, dst: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.at < this.out.len() {
                let n = (this.out.len() - this.at).min(dst.remaining());
                dst.put_slice(&this.out[this.at..this.at + n]);
                this.at += n;
                return Poll::Ready(Ok(()));
            }
            this.out.clear();
            this.at = 0;
            let mut read = ReadBuf::new(&mut this.buf);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                return Poll::Ready(Ok(())); // end of stream
            }
            this.process(n);
        }
    }
}

/// What a line is, by its top-level keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// It has a `method`: the server's request or notification.
    Message,
    /// It has a `result` or an `error`.
    Reply,
}

/// Finds a JSON object's top-level `"id"` value in a line read piece by piece, wherever it is
/// (Python servers write it first, TypeScript ones after the result). Keeps only the value.
#[derive(Default)]
struct IdScan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    /// The next string at depth 1 is a key.
    expect_key: bool,
    reading_key: bool,
    key: Vec<u8>,
    /// The key just read is `id`: its value follows the colon.
    id_key: bool,
    /// Whether a top-level `method` (a request or notification from the server) or `result` /
    /// `error` (a reply) was seen: only a reply may answer one of our calls.
    kind: Option<Kind>,
    capture: Option<Vec<u8>>,
    found: Option<Vec<u8>>,
}

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        if self.found.is_some() && self.kind.is_some() {
            return;
        }
        for &b in bytes {
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        if let Some(value) = &mut self.capture {
            let ends = !self.in_string && self.depth == 1 && (b == b',' || b == b'}');
            if ends {
                self.found = self.capture.take();
            } else if !self.in_string && (b == b'{' || b == b'[') || value.len() >= MAX_ID_BYTES {
                self.capture = None; // not an id a request could have
            } else if self.in_string || !b.is_ascii_whitespace() {
                value.push(b);
            }
        }
        if self.in_string {
            let closes = !self.escaped && b == b'"';
            self.escaped = !self.escaped && b == b'\\';
            if closes {
                self.in_string = false;
                if self.reading_key {
                    self.reading_key = false;
                    self.id_key = self.key == b"id";
                    match self.key.as_slice() {
                        b"method" => self.kind = Some(Kind::Message),
                        b"result" | b"error" => self.kind = self.kind.or(Some(Kind::Reply)),
                        _ => {}
                    }
                }
            } else if self.reading_key && self.key.len() < 7 {
                // Seven bytes tell "id", "method", "result" and "error" from anything else; an
                // escape is never part of them.
                self.key.push(if b == b'\\' { b'#' } else { b });
            }
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key && self.capture.is_none() {
                    self.expect_key = false;
                    self.reading_key = true;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.expect_key = self.depth == 1 && b == b'{';
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => self.expect_key = true,
            b':' if self.depth == 1 && self.id_key => {
                self.id_key = false;
                self.capture = Some(Vec::new());
            }
            _ => {}
        }
    }

    /// The id, when it was found, is a number or a string, and the line is a reply (not the
    /// server's own request, whose id is the server's and would answer a call of ours).
    fn id(&self) -> Option<serde_json::Value> {
        if self.kind == Some(Kind::Message) {
            return None;
        }
        let value: serde_json::Value = serde_json::from_slice(self.found.as_deref()?).ok()?;
        (value.is_number() || value.is_string()).then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    /// The id `IdScan` finds in `line`, fed in two pieces at every split (and the same at each).
    fn scan(line: &str) -> Option<serde_json::Value> {
        let ids: Vec<_> = (0..=line.len())
            .map(|cut| {
                let mut s = IdScan::default();
                s.feed(&line.as_bytes()[..cut]);
                s.feed(&line.as_bytes()[cut..]);
                s.id()
            })
            .collect();
        assert!(ids.windows(2).all(|w| w[0] == w[1]), "{line}: {ids:?}");
        ids[0].clone()
    }

    #[test]
    fn the_top_level_id_is_found_wherever_it_is() {
        use serde_json::json;
        assert_eq!(scan(r#"{"jsonrpc":"2.0","id":7,"result":{"id":"nested"}}"#), Some(json!(7)));
        assert_eq!(
            scan(r#"{"result":{"content":[{"id":1,"text":"a,b}"}]},"jsonrpc":"2.0","id":"r-9"}"#),
            Some(json!("r-9"))
        );
        assert_eq!(scan(r#"{ "id" : 12 , "result": {}}"#), Some(json!(12)));
        assert_eq!(scan(r#"{"jsonrpc":"2.0","idx":3,"result":{"id":4}}"#), None);
        assert_eq!(scan(r#"{"id":{"x":1},"result":{}}"#), None);
        assert_eq!(scan(r#"{"i\"d":5}"#), None);
        // The server's own request: its id is the server's, and answers no call of ours.
        assert_eq!(scan(r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{}}"#), None);
        assert_eq!(scan(r#"{"method":"roots/list","params":{},"id":"s1"}"#), None);
        assert_eq!(scan(r#"{"id":2,"result":{"method":"x"}}"#), Some(json!(2)));
    }

    async fn through(input: &[u8], limit: usize) -> String {
        let mut reader = LineLimit::new(input, limit);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        String::from_utf8(out).unwrap()
    }

    #[tokio::test]
    async fn a_line_over_the_limit_becomes_an_error_for_its_id_and_the_next_line_passes() {
        let big = format!("{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"{}\"}}\n", "x".repeat(200));
        let input = format!("{{\"a\":1}}\n{big}{{\"b\":2}}\n");
        let out = through(input.as_bytes(), 100).await;
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines[0], r#"{"a":1}"#);
        // What rmcp was given of the big line: cut, unparsable, skipped.
        assert!(lines[1].len() <= 100 && serde_json::from_str::<serde_json::Value>(lines[1]).is_err());
        let error: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
        assert_eq!(error["id"], 3);
        assert!(error["error"]["message"].as_str().unwrap().starts_with("the server's reply was 0.0 MB"));
        assert_eq!(lines[3], r#"{"b":2}"#);
    }

    #[test]
    fn the_size_is_said_in_megabytes() {
        let m = too_large(40 * 1024 * 1024 + 1, MAX_MESSAGE_BYTES);
        assert!(m.starts_with("the server's reply was 40.0 MB, over the 16 MB limit"), "{m}");
    }
}
