//! One streamed POST with server-sent events, via `eventsource-client` on reqwest, reconnect off.
//!
//! This is the one seam where every provider's event stream is read. A 2xx body passes through
//! [`event_stream::Guard`] before the library sees it (what the library gets wrong, and how the
//! guard fixes it, is in that module's docs); a 2xx HTML page is refused before parsing.

use crate::classify::{self, MAX_ERROR_BODY};
use crate::event_stream::{self, Guard, StreamViolation};
use crate::transport::ReqwestTransport;
use bytes::Bytes;
use eventsource_client::{self as es, Client as _, ReconnectOptions, SSE};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use launchdarkly_sdk_transport::{ByteStream, HttpTransport, ResponseFuture, TransportError};
use switchboard_core::{ErrorKind, ProviderError};
use sync_wrapper::{SyncFuture, SyncStream};

/// One event of an SSE stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseData {
    /// The `event:` field (`message` when absent).
    pub event: String,
    /// The `data:` field.
    pub data: String,
}

/// One item of an SSE stream: an event, or a sign of life (a comment line such as
/// `: keep-alive`), which the loop counts as activity for its idle timeout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseItem {
    /// An event with data.
    Event(SseData),
    /// A comment line.
    KeepAlive,
}

/// Items of a stream: events and keep-alives, then either a clean end (`None`) or one error.
pub type SseStream = BoxStream<'static, Result<SseItem, ProviderError>>;

/// The transport `post` gives the library: a 2xx event-stream body is guarded, a 2xx HTML page is
/// refused with its title, and anything else (error bodies) passes unchanged for classification.
/// It sends the request body it holds.
#[derive(Clone)]
struct GuardedTransport(ReqwestTransport, Bytes);

impl HttpTransport for GuardedTransport {
    fn request(&self, request: http::Request<Option<Bytes>>) -> ResponseFuture {
        // The body is held here once and lent to the request (`Bytes` is shared, not copied): the
        // event-stream client would keep a copy of its own for the stream's life and copy it again
        // into each request, twice a request's size (27 MB of a PDF's base64 each).
        let (parts, _) = request.into_parts();
        let pending = self.0.request(http::Request::from_parts(parts, Some(self.1.clone())));
        Box::pin(SyncFuture::new(async move {
            let response = pending.await?;
            let status = response.status();
            if !status.is_success() {
                return Ok(response);
            }
            let html = response
                .headers()
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/html"));
            let (parts, body) = response.into_parts();
            if html {
                let page = read_error_body(body).await;
                let title = event_stream::html_title(&page);
                return Err(TransportError::new(StreamViolation::HtmlPage { status: status.as_u16(), title }));
            }
            let guarded =
                futures::stream::unfold((body, Guard::new(), false), |(mut body, mut guard, over)| async move {
                    if over {
                        return None;
                    }
                    loop {
                        match body.next().await? {
                            Ok(bytes) => match guard.push(&bytes) {
                                Ok(out) if out.is_empty() => continue,
                                Ok(out) => return Some((Ok(out), (body, guard, false))),
                                Err(v) => return Some((Err(TransportError::new(v)), (body, guard, true))),
                            },
                            Err(e) => return Some((Err(e), (body, guard, true))),
                        }
                    }
                });
            let guarded: ByteStream = Box::pin(SyncStream::new(guarded));
            Ok(http::Response::from_parts(parts, guarded))
        }))
    }
}

/// Starts a POST of `body` to `url` and yields its events. `who` names the provider in messages.
/// Headers are (name, value); a value that is a secret is only ever put here.
pub fn post(transport: ReqwestTransport, who: String, url: &str, headers: &[(&str, &str)], body: String) -> SseStream {
    let builder = es::ClientBuilder::for_url(url)
        .and_then(|b| headers.iter().try_fold(b, |b, (name, value)| b.header(name, value)));
    let builder = match builder {
        Ok(b) => b,
        Err(e) => {
            // Never echo header values: one of them is the key.
            let detail =
                if matches!(e, es::Error::InvalidParameter(_)) { "invalid URL or header" } else { "bad request" };
            let err = ProviderError::new(ErrorKind::Config, format!("Cannot build the request to {url}: {detail}."));
            return futures::stream::once(async move { Err(err) }).boxed();
        }
    };
    let client = builder
        .method("POST".into())
        // An LLM request must never be replayed behind the loop's back: the loop decides retries.
        .reconnect(ReconnectOptions::reconnect(false).retry_initial(false).build())
        .redirect_limit(5)
        .build_with_transport(GuardedTransport(transport, Bytes::from(body)));
    let events = client.stream();
    // `connected`: the response began (a 2xx with a body), so a transport error is a cut, not an
    // unreachable server.
    futures::stream::unfold((events, who, false, false), |(mut events, who, connected, ended)| async move {
        if ended {
            return None;
        }
        let item = match events.next().await? {
            // An event whose data is empty (`data` with no colon is a data field with an empty
            // value, like `data:`) says nothing: a sign of life, never a malformed chunk.
            Ok(SSE::Event(ev)) if ev.data.trim().is_empty() => SseItem::KeepAlive,
            Ok(SSE::Event(ev)) => SseItem::Event(SseData { event: ev.event_type, data: ev.data }),
            // The response head (the server answered) and comment lines are both signs of life.
            Ok(SSE::Comment(_) | SSE::Connected(_)) => SseItem::KeepAlive,
            Err(es::Error::Eof) => return None,
            Err(e) => {
                let err = classify_error(&who, connected, e).await;
                return Some((Err(err), (events, who, connected, true)));
            }
        };
        Some((Ok(item), (events, who, true, false)))
    })
    .boxed()
}

async fn read_error_body(mut stream: launchdarkly_sdk_transport::ByteStream) -> String {
    let mut bytes = Vec::new();
    while let Ok(Some(chunk)) = stream.try_next().await {
        bytes.extend_from_slice(&chunk);
        if bytes.len() >= MAX_ERROR_BODY {
            bytes.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

pub(crate) fn describe_transport(err: &(dyn std::error::Error + 'static)) -> String {
    // reqwest's top-level text is generic ("error sending request"); the cause says what happened.
    let mut parts = vec![err.to_string()];
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}

fn violation_error(who: &str, violation: &StreamViolation) -> ProviderError {
    match violation {
        StreamViolation::HtmlPage { status, title } => {
            let title = title.as_ref().map(|t| format!(" (\u{201c}{t}\u{201d})")).unwrap_or_default();
            ProviderError::new(
                ErrorKind::Protocol,
                format!(
                    "{who} answered {status} with an HTML page{title} instead of an event stream. A captive portal or proxy login may be in the way (open any web page in a browser to sign in), or the base URL points at a website rather than the API."
                ),
            )
            .with_status(*status)
        }
        v => ProviderError::new(
            ErrorKind::Protocol,
            format!("{who} sent {v} in its event stream; the response was cut there (what came before is kept)."),
        ),
    }
}

async fn classify_error(who: &str, connected: bool, err: es::Error) -> ProviderError {
    let mid = classify::mid_sentence(who);
    if let es::Error::Transport(e) = &err
        && let Some(violation) = e.inner().downcast_ref::<StreamViolation>()
    {
        return violation_error(who, violation);
    }
    match err {
        es::Error::UnexpectedResponse(response, body) => {
            let status = response.status();
            let header = |name: &str| response.get_header_value(name).ok().flatten().map(str::to_owned);
            let body = read_error_body(body.into_stream()).await;
            let retry = classify::retry_after(header, &body);
            classify::http_error(who, status, retry, &body)
        }
        es::Error::Transport(e) if connected => ProviderError::new(
            ErrorKind::Network,
            format!("The connection to {mid} was lost mid-answer. What arrived before is kept."),
        )
        .with_detail(describe_transport(e.inner())),
        es::Error::Transport(e) => classify::unreachable(who, describe_transport(e.inner())),
        es::Error::HttpStream(e) => ProviderError::new(
            ErrorKind::Network,
            format!("The connection to {mid} was lost mid-answer. What arrived before is kept."),
        )
        .with_detail(describe_transport(e.as_ref())),
        es::Error::UnexpectedEof => ProviderError::new(
            ErrorKind::Network,
            format!("The connection to {mid} closed in the middle of an event; the response is incomplete."),
        ),
        es::Error::TimedOut => ProviderError::new(ErrorKind::Timeout, format!("{who} did not answer in time.")),
        // The guard hands the library only lines it accepts; if one is still refused, say which.
        es::Error::InvalidLine(line) => ProviderError::new(
            ErrorKind::Protocol,
            format!("{who} sent a line that is not server-sent events: {}", line.chars().take(120).collect::<String>()),
        ),
        other => ProviderError::new(ErrorKind::Protocol, format!("{who} sent an invalid stream: {other}.")),
    }
}

/// The events a parser has decided, in order, waiting to be handed out.
pub type Decided = std::collections::VecDeque<Result<switchboard_core::ProviderEvent, ProviderError>>;

/// A provider's pure stream parser, as the shared driver ([`parse`]) runs it.
///
/// The end of the body is handled here once for every API ([`Parser::end`]): an answer whose own
/// end was read is complete, any other was cut short.
pub trait Parser: Send + 'static {
    /// Reads one event (`event` is the SSE event name, `message` when the server gave none).
    fn push(&mut self, who: &str, event: &str, data: &str, out: &mut Decided);
    /// Nothing more will be decided.
    fn is_done(&self) -> bool;
    /// The answer's own end (its finish or stop reason) was already read, so a connection cut now
    /// loses only the closing event and is not an error.
    fn has_finished(&self) -> bool {
        false
    }
    /// Hands out what a finished answer still holds (open calls, usage, state, the finish) when
    /// the body ends after [`Parser::has_finished`]; afterwards the parser is done.
    fn finish(&mut self, out: &mut Decided);
    /// The stream failed; nothing more will be decided.
    fn fail(&mut self);
    /// The body ended: complete if the answer's end was read, else an error that says it was cut.
    fn end(&mut self, who: &str, out: &mut Decided) {
        if self.is_done() {
            return;
        }
        if self.has_finished() {
            self.finish(out);
        } else {
            self.fail();
            out.push_back(Err(cut_short(who)));
        }
    }
}

/// The error of a body that ended before the answer did.
pub fn cut_short(who: &str) -> ProviderError {
    ProviderError::new(
        ErrorKind::Network,
        format!("The stream from {} ended before the response was complete.", classify::mid_sentence(who)),
    )
}

/// Runs `parser` over an event stream: what every provider's stream does between the seam and
/// the loop. Keep-alives pass through as [`ProviderEvent::KeepAlive`](switchboard_core::ProviderEvent).
pub fn parse<P: Parser>(events: SseStream, who: String, parser: P) -> switchboard_core::ProviderStream {
    let state = (events, parser, Decided::new(), who);
    futures::stream::unfold(state, |(mut events, mut parser, mut queue, who)| async move {
        loop {
            if let Some(item) = queue.pop_front() {
                return Some((item, (events, parser, queue, who)));
            }
            if parser.is_done() {
                return None;
            }
            match events.next().await {
                Some(Ok(SseItem::Event(ev))) => parser.push(&who, &ev.event, &ev.data, &mut queue),
                Some(Ok(SseItem::KeepAlive)) => queue.push_back(Ok(switchboard_core::ProviderEvent::KeepAlive)),
                Some(Err(e)) if parser.has_finished() && e.kind == ErrorKind::Network => parser.end(&who, &mut queue),
                Some(Err(e)) => {
                    parser.fail();
                    queue.push_back(Err(e));
                }
                None => parser.end(&who, &mut queue),
            }
        }
    })
    .boxed()
}
