//! Drives a streamed reply onto the wire, independent of the API's event format.
//!
//! A producer task walks the steps, lets the API's [`StepEncoder`] render each step into SSE events,
//! and hands the bytes to the response body through a small channel. Pacing (delays, stalls, cuts,
//! byte splitting) lives here so every API gets the same fault injection for free.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::body::Body;
use bytes::{Bytes, BytesMut};
use futures::Stream;
use serde::Serialize;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::script::Step;

/// Without a delay, events are coalesced into body frames of about this size: one frame (and one
/// channel message and task wake) per event would dominate the cost of a 2000-token benchmark.
const BATCH_BYTES: usize = 16 * 1024;

/// Enough in-flight frames to keep the connection busy while bounding memory for slow readers.
const CHANNEL_CAPACITY: usize = 8;

/// The SSE events rendered for one step, back to back in one reusable buffer.
#[derive(Debug, Default)]
pub(crate) struct Events {
    buf: Vec<u8>,
    ends: Vec<usize>,
}

impl Events {
    /// Appends `data: <json>\n\n`.
    pub(crate) fn data_json<T: Serialize>(&mut self, value: &T) {
        self.buf.extend_from_slice(b"data: ");
        serde_json::to_writer(&mut self.buf, value).expect("serializing a plain struct into a Vec cannot fail");
        self.buf.extend_from_slice(b"\n\n");
        self.ends.push(self.buf.len());
    }

    /// Appends one event made of exactly these bytes.
    pub(crate) fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        self.ends.push(self.buf.len());
    }

    fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
    }

    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let event = &self.buf[start..end];
            start = end;
            event
        })
    }
}

/// Renders API-neutral steps as one API's SSE events.
pub(crate) trait StepEncoder: Send + 'static {
    /// Appends the events for `step`. The driver handles [`Step::Delay`], [`Step::Stall`],
    /// [`Step::Drop`] and [`Step::Raw`] itself, so encoders never see them.
    fn encode(&mut self, step: &Step, events: &mut Events);
}

/// How fast and in what pieces the body is written.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Pacing {
    /// Pause between events.
    pub delay: Duration,
    /// Write the body in pieces of this many bytes, ignoring event and character boundaries.
    pub split_bytes: Option<usize>,
}

/// What the producer tells the body.
#[derive(Debug)]
enum Item {
    Data(Bytes),
    /// Return `Pending` once: hyper flushes its write buffer whenever the body is not ready, which
    /// is the only way to force bytes onto the socket before the next piece or a cut.
    Flush,
    /// End the body with an I/O error so hyper drops the connection without the final chunk.
    Cut,
}

/// The producer's receiver is gone: the client hung up or the connection was cut.
#[derive(Debug)]
struct Closed;

/// Builds a streamed response body for `steps` and spawns the task that produces it.
pub(crate) fn sse_body(
    steps: Vec<Step>,
    encoder: impl StepEncoder,
    pacing: Pacing,
    shutdown: CancellationToken,
) -> Body {
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    tokio::spawn(async move {
        // `Closed` only means nobody is listening any more; there is nothing left to do.
        let _ = produce(&steps, encoder, Writer::new(tx, pacing)).await;
    });
    Body::from_stream(BodyStream { rx, shutdown: Box::pin(shutdown.cancelled_owned()), done: false })
}

/// A body that fails right after the response head is on the wire, for a scripted drop on a
/// non-streaming request: the client sees a 200 whose body is cut, as with a streamed drop.
pub(crate) fn cut_body(shutdown: CancellationToken) -> Body {
    let (tx, rx) = mpsc::channel(2);
    for item in [Item::Flush, Item::Cut] {
        tx.try_send(item).expect("a fresh channel has room for two items");
    }
    Body::from_stream(BodyStream { rx, shutdown: Box::pin(shutdown.cancelled_owned()), done: false })
}

async fn produce(steps: &[Step], mut encoder: impl StepEncoder, mut writer: Writer) -> Result<(), Closed> {
    let mut events = Events::default();
    for step in steps {
        match step {
            Step::Delay { ms } => writer.pause(Duration::from_millis(*ms)).await?,
            Step::Stall => {
                writer.flush().await?;
                writer.tx.closed().await;
                return Ok(());
            }
            Step::Drop => {
                writer.flush().await?;
                return writer.send(Item::Cut).await;
            }
            Step::Raw { data } => writer.event(data.as_bytes()).await?,
            Step::RawBytes { bytes } => writer.event(bytes).await?,
            Step::LongLine { prefix, len } => {
                writer.event(prefix.as_bytes()).await?;
                let piece = [b'x'; 64 * 1024];
                let mut left = *len;
                while left > 0 {
                    let n = left.min(piece.len() as u64) as usize;
                    writer.event(&piece[..n]).await?;
                    left -= n as u64;
                }
            }
            _ => {
                events.clear();
                encoder.encode(step, &mut events);
                for event in events.iter() {
                    writer.event(event).await?;
                }
                if matches!(step, Step::ErrorObject { .. }) {
                    break;
                }
            }
        }
    }
    writer.finish().await
}

/// Buffers outgoing bytes and decides when and in what pieces they leave.
struct Writer {
    tx: mpsc::Sender<Item>,
    pending: BytesMut,
    pacing: Pacing,
    wrote_event: bool,
}

impl Writer {
    fn new(tx: mpsc::Sender<Item>, pacing: Pacing) -> Self {
        Self { tx, pending: BytesMut::with_capacity(BATCH_BYTES), pacing, wrote_event: false }
    }

    async fn send(&self, item: Item) -> Result<(), Closed> {
        self.tx.send(item).await.map_err(|_| Closed)
    }

    async fn event(&mut self, bytes: &[u8]) -> Result<(), Closed> {
        if self.wrote_event && !self.pacing.delay.is_zero() {
            self.pause(self.pacing.delay).await?;
        }
        self.wrote_event = true;
        self.pending.extend_from_slice(bytes);
        match self.pacing.split_bytes {
            Some(piece) => {
                while self.pending.len() >= piece {
                    let data = self.pending.split_to(piece).freeze();
                    self.send(Item::Data(data)).await?;
                    self.send(Item::Flush).await?;
                }
            }
            None if self.pending.len() >= BATCH_BYTES => {
                let data = self.pending.split().freeze();
                self.send(Item::Data(data)).await?;
            }
            None => {}
        }
        Ok(())
    }

    /// Puts everything written so far on the socket, then waits.
    async fn pause(&mut self, duration: Duration) -> Result<(), Closed> {
        self.flush().await?;
        tokio::time::sleep(duration).await;
        Ok(())
    }

    /// Puts everything written so far on the socket now.
    async fn flush(&mut self) -> Result<(), Closed> {
        self.finish().await?;
        self.send(Item::Flush).await
    }

    /// Hands over the rest; ending the body makes hyper flush it anyway.
    async fn finish(&mut self) -> Result<(), Closed> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let data = self.pending.split().freeze();
        self.send(Item::Data(data)).await
    }
}

/// The response body: frames from the producer, cut short when the server shuts down.
struct BodyStream {
    rx: mpsc::Receiver<Item>,
    shutdown: Pin<Box<WaitForCancellationFutureOwned>>,
    done: bool,
}

impl Stream for BodyStream {
    type Item = io::Result<Bytes>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if this.shutdown.as_mut().poll(cx).is_ready() {
            // A dropped MockServer must look like a dead server to clients mid-stream, not like a
            // reply that ended normally.
            this.done = true;
            return Poll::Ready(Some(Err(cut("mock provider shut down"))));
        }
        match ready!(this.rx.poll_recv(cx)) {
            Some(Item::Data(data)) => Poll::Ready(Some(Ok(data))),
            Some(Item::Flush) => {
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Some(Item::Cut) => {
                this.done = true;
                Poll::Ready(Some(Err(cut("scripted connection drop"))))
            }
            None => {
                this.done = true;
                Poll::Ready(None)
            }
        }
    }
}

fn cut(reason: &str) -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionAborted, reason.to_owned())
}
