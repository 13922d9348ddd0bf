//! The one reqwest client configuration, and the transport that lets `eventsource-client` use it.

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
pub fn client(tls: bool) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(15))
        .pool_idle_timeout(Duration::from_secs(90))
        .user_agent(concat!("switchboard/", env!("CARGO_PKG_VERSION")));
    if !tls {
        builder = builder.tls_certs_only(Vec::<reqwest::Certificate>::new());
    }
    builder.build()
}

/// Runs `eventsource-client` requests on reqwest.
#[derive(Clone)]
pub struct ReqwestTransport {
    client: reqwest::Client,
}

impl ReqwestTransport {
    /// A transport over `client`.
    pub fn new(client: reqwest::Client) -> Self {
        Self { client }
    }
}

impl HttpTransport for ReqwestTransport {
    fn request(&self, request: http::Request<Option<Bytes>>) -> ResponseFuture {
        let client = self.client.clone();
        // The transport trait wants Sync futures and streams; reqwest's are only Send. They are
        // only ever polled through `&mut`, which is exactly what SyncFuture/SyncStream make sound.
        Box::pin(SyncFuture::new(async move {
            let (parts, body) = request.into_parts();
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

/// A provider's base URL, checked (`http://` or `https://`) and without a trailing slash, and an
/// HTTP client for it. Plain-http bases (local servers) skip loading TLS roots; one that
/// redirects to https fails certificate checks and should be configured with its https URL.
pub fn endpoint(base_url: &str) -> Result<(String, reqwest::Client), switchboard_core::ProviderError> {
    use switchboard_core::{ErrorKind, ProviderError};
    let base = base_url.trim_end_matches('/').to_owned();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(ProviderError::new(
            ErrorKind::Config,
            format!("The base URL '{base}' must start with http:// or https://."),
        ));
    }
    let client = client(base.starts_with("https://"))
        .map_err(|e| ProviderError::new(ErrorKind::Internal, format!("Cannot set up HTTP: {e}")))?;
    Ok((base, client))
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

#[cfg(test)]
mod tests {
    use super::origin;

    #[test]
    fn an_origin_is_scheme_host_and_port_without_the_path() {
        assert_eq!(origin("https://api.anthropic.com/v1"), "https://api.anthropic.com");
        assert_eq!(origin("https://API.anthropic.com:443/v1/"), "https://api.anthropic.com");
        assert_eq!(origin("http://127.0.0.1:11434/v1"), "http://127.0.0.1:11434");
        assert_ne!(origin("http://127.0.0.1:11434/v1"), origin("http://127.0.0.1:1234/v1"));
    }
}
