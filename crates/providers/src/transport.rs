//! HTTP for providers: the reqwest client (bounded connect time, no redirect away from the origin
//! a key is sent to), the transport that runs `eventsource-client` on it, and what an origin is.
//! Below both the event-stream seam ([`crate::sse`]) and [`crate::endpoint`], which use it.

use bytes::Bytes;
use futures::TryStreamExt;
use launchdarkly_sdk_transport::{ByteStream, HttpTransport, ResponseFuture, TransportError};
use std::time::Duration;
use sync_wrapper::{SyncFuture, SyncStream};

/// A reqwest client for provider traffic: bounded connect time, no overall timeout (answers stream
/// for minutes; the loop's idle timeout bounds silence instead).
///
/// `tls` is false for endpoints that are plain `http://` (local servers): loading the platform's
/// root certificates is most of a CLI turn's start-up cost, and such a client never needs them.
/// `key_origin` is the origin a key is sent to, when the client will carry one: a redirect away
/// from it is not followed (the response is the redirect itself, which the caller reports).
pub fn client(tls: bool, key_origin: Option<String>) -> Result<reqwest::Client, reqwest::Error> {
    let redirects = reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else if key_origin.as_deref().is_some_and(|o| origin(attempt.url().as_str()) != o) {
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    let mut builder = reqwest::Client::builder()
        .redirect(redirects)
        .connect_timeout(Duration::from_secs(15))
        .pool_idle_timeout(Duration::from_secs(90))
        .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")));
    if !tls {
        builder = builder.tls_certs_only(Vec::<reqwest::Certificate>::new());
    }
    builder.build()
}

/// Redirects followed at most (reqwest's own default).
const MAX_REDIRECTS: usize = 10;

/// Runs `eventsource-client` requests on reqwest.
#[derive(Clone)]
pub struct ReqwestTransport {
    client: reqwest::Client,
    /// The origin the key belongs to and the header it is in: a request to another origin goes
    /// without that header.
    key: Option<(String, &'static str)>,
}

impl ReqwestTransport {
    /// A transport over `client` that sends every header it is given.
    pub fn new(client: reqwest::Client) -> Self {
        Self { client, key: None }
    }

    /// A transport over `client` that drops the `header` holding the key from any request to an
    /// origin other than `origin`.
    pub fn keyed(client: reqwest::Client, origin: String, header: &'static str) -> Self {
        Self { client, key: Some((origin, header)) }
    }
}

impl HttpTransport for ReqwestTransport {
    fn request(&self, request: http::Request<Option<Bytes>>) -> ResponseFuture {
        let client = self.client.clone();
        let key = self.key.clone();
        // The transport trait wants Sync futures and streams; reqwest's are only Send. They are
        // only ever polled through `&mut`, which is exactly what SyncFuture/SyncStream make sound.
        Box::pin(SyncFuture::new(async move {
            let (mut parts, body) = request.into_parts();
            if let Some((key_origin, header)) = &key
                && origin(&parts.uri.to_string()) != *key_origin
            {
                parts.headers.remove(*header);
            }
            let mut builder = client.request(parts.method, parts.uri.to_string()).headers(parts.headers);
            if let Some(body) = body {
                builder = builder.body(body);
            }
            let response = builder.send().await.map_err(TransportError::new)?;
            let status = response.status();
            let headers = response.headers().clone();
            let body: ByteStream = Box::pin(SyncStream::new(response.bytes_stream().map_err(TransportError::new)));
            let mut out = http::Response::new(body);
            *out.status_mut() = status;
            *out.headers_mut() = headers;
            Ok(out)
        }))
    }
}

/// The origin (`scheme://host[:port]`, lower-case, default ports left out) of a base URL: what
/// provider state is tagged with, so it only goes back to the server that made it. A URL that
/// does not parse is its own origin.
pub fn origin(base_url: &str) -> String {
    match reqwest::Url::parse(base_url) {
        Ok(url) => url.origin().ascii_serialization(),
        Err(_) => base_url.to_owned(),
    }
}
