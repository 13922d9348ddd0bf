//! One streamed POST with server-sent events, via `eventsource-client` on reqwest, reconnect off.

use crate::classify::{self, MAX_ERROR_BODY};
use crate::http_client::ReqwestTransport;
use eventsource_client::{self as es, Client as _, ReconnectOptions, SSE};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use switchboard_core::{ErrorKind, ProviderError};

/// One item of an SSE stream: the `data` of an event (comments and connection notices dropped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseData {
    /// The `event:` field (`message` when absent).
    pub event: String,
    /// The `data:` field.
    pub data: String,
}

/// Items of a stream: data, then either a clean end (`None`) or one error.
pub type SseStream = BoxStream<'static, Result<SseData, ProviderError>>;

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
        .body(body)
        // An LLM request must never be replayed behind the loop's back: the loop decides retries.
        .reconnect(ReconnectOptions::reconnect(false).retry_initial(false).build())
        .redirect_limit(5)
        .build_with_transport(transport);
    let events = client.stream();
    futures::stream::unfold((events, who, false), |(mut events, who, ended)| async move {
        if ended {
            return None;
        }
        loop {
            match events.next().await {
                None => return None,
                Some(Ok(SSE::Event(ev))) => {
                    return Some((Ok(SseData { event: ev.event_type, data: ev.data }), (events, who, false)));
                }
                Some(Ok(SSE::Comment(_) | SSE::Connected(_))) => continue,
                Some(Err(es::Error::Eof)) => return None,
                Some(Err(e)) => {
                    let err = classify_error(&who, e).await;
                    return Some((Err(err), (events, who, true)));
                }
            }
        }
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

fn describe_transport(err: &(dyn std::error::Error + 'static)) -> String {
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

async fn classify_error(who: &str, err: es::Error) -> ProviderError {
    match err {
        es::Error::UnexpectedResponse(response, body) => {
            let status = response.status();
            let header = |name: &str| response.get_header_value(name).ok().flatten().map(str::to_owned);
            let body = read_error_body(body.into_stream()).await;
            let retry = classify::retry_after(header, &body);
            classify::http_error(who, status, retry, &body)
        }
        es::Error::Transport(e) => ProviderError::new(
            ErrorKind::Network,
            format!(
                "Could not reach {who}: {}. Check the base URL and that the server is running.",
                describe_transport(e.inner())
            ),
        ),
        es::Error::HttpStream(e) => ProviderError::new(
            ErrorKind::Network,
            format!("The connection to {who} was cut mid-response: {}.", describe_transport(e.as_ref())),
        ),
        es::Error::UnexpectedEof => ProviderError::new(
            ErrorKind::Network,
            format!("The connection to {who} closed in the middle of an event; the response is incomplete."),
        ),
        es::Error::TimedOut => ProviderError::new(ErrorKind::Timeout, format!("{who} did not answer in time.")),
        es::Error::InvalidLine(line) => ProviderError::new(
            ErrorKind::Protocol,
            format!("{who} sent a line that is not server-sent events: {}", line.chars().take(120).collect::<String>()),
        ),
        other => ProviderError::new(ErrorKind::Protocol, format!("{who} sent an invalid stream: {other}.")),
    }
}
