//! The one way a provider reaches its API: the reqwest client, the origin check and the rule that
//! turns a key into a request header.
//!
//! Every provider holds one [`Endpoint`] (a checked base URL, its origin, the key and an HTTP
//! client made for it) and sends through it: model listings with [`Endpoint::get_json`], answers
//! with [`Endpoint::stream`]. How a kind's key becomes a header ([`KeyHeader`]) is declared once per
//! kind in [`crate::kinds::KINDS`], not in provider code.
//!
//! Invariant: a key never follows a request to another origin. The key is attached only to URLs
//! of the endpoint's own origin; the client follows no redirect to another origin while it holds
//! a key (reqwest would strip `Authorization` there but keep `x-api-key` and `x-goog-api-key`), and
//! the event-stream transport drops the key header from any request it is asked to send to
//! another origin (`eventsource-client` follows 301 and 307 itself, headers and all).

use crate::kinds::KINDS;
pub use crate::kinds::KeyHeader;
use crate::sse;
pub use crate::transport::{ReqwestTransport, client, origin};
use serde_json::Value;
use switchboard_core::tool::SecretValue;
use switchboard_core::{ErrorKind, ProviderError, ProviderStream};

/// One provider's API: its checked base URL (`http://` or `https://`, no trailing slash), origin,
/// key and HTTP client, and how it names itself in messages. Cheap to clone (the client is shared).
#[derive(Clone)]
pub struct Endpoint {
    base: String,
    origin: String,
    who: String,
    /// The key and the header it goes in, as the kind table says.
    key: Option<(SecretValue, KeyHeader)>,
    client: reqwest::Client,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint").field("base", &self.base).finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The endpoint at `base_url` for a provider of kind `kind` (an id in [`crate::kinds::KINDS`],
    /// which says how its key travels). Plain-http bases (local servers) skip loading TLS roots;
    /// one that redirects to https fails certificate checks and should be configured with its https
    /// URL.
    pub fn new(kind: &str, base_url: &str, key: Option<SecretValue>) -> Result<Self, ProviderError> {
        let header = KINDS.iter().find(|k| k.id == kind).map(|k| k.key_header).ok_or_else(|| {
            ProviderError::new(ErrorKind::Internal, format!("The kind '{kind}' is not in the kind table."))
        })?;
        let base = base_url.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ProviderError::new(
                ErrorKind::Config,
                format!("The base URL '{base}' must start with http:// or https://."),
            ));
        }
        let origin = origin(&base);
        let client = client(base.starts_with("https://"), key.as_ref().map(|_| origin.clone()))
            .map_err(|e| ProviderError::new(ErrorKind::Internal, format!("Cannot set up HTTP: {e}")))?;
        let who = format!("The provider at {base}");
        Ok(Self { base, origin, who, key: key.map(|k| (k, header)), client })
    }

    /// Names the endpoint `{name} at {base}` in messages instead of "The provider at …".
    #[must_use]
    pub fn named(mut self, name: &str) -> Self {
        self.who = format!("{name} at {}", self.base);
        self
    }

    /// The base URL, checked and without a trailing slash.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The base URL's origin, which provider state is tagged with.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// How messages name this endpoint ("The provider at http://…").
    pub fn who(&self) -> &str {
        &self.who
    }

    /// `{base}/{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base)
    }

    /// The key's header for a request to `url`: none without a key, or when `url` is at another
    /// origin than the endpoint's.
    fn key_header(&self, url: &str) -> Option<(&'static str, String)> {
        let (key, header) = self.key.as_ref()?;
        (origin(url) == self.origin).then(|| (header.name(), header.value(key)))
    }

    /// `GET url` with the key and `headers`, read as JSON: what every model listing asks. A
    /// failure is classified like a chat request's (unreachable, HTTP error with its retry hint,
    /// a body that is not JSON).
    pub async fn get_json(&self, url: &str, headers: &[(&str, &str)]) -> Result<Value, ProviderError> {
        let mut req = self.client.get(url);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        if let Some((name, value)) = self.key_header(url) {
            req = req.header(name, value);
        }
        let resp = req.send().await.map_err(|e| {
            let who = crate::classify::mid_sentence(&self.who);
            crate::classify::unreachable(&who, sse::describe_transport(&e.without_url()))
        })?;
        let status = resp.status().as_u16();
        let response_headers = resp.headers().clone();
        let text = resp.text().await.unwrap_or_default();
        if !(200..300).contains(&status) {
            let header = |name: &str| response_headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let retry = crate::classify::retry_after(header, &text);
            return Err(crate::classify::http_error(&self.who, status, retry, &text));
        }
        serde_json::from_str(&text).map_err(|_| {
            ProviderError::new(ErrorKind::Protocol, format!("{} returned a model list that is not JSON.", self.who))
        })
    }

    /// `POST url` of a JSON `body` with the key and `headers`, its event stream read by `parser`:
    /// every answer of every API.
    pub fn stream<P: sse::Parser>(
        &self,
        url: &str,
        headers: &[(&str, &str)],
        body: String,
        parser: P,
    ) -> ProviderStream {
        let key = self.key_header(url);
        let mut all = vec![("content-type", "application/json"), ("accept", "text/event-stream")];
        all.extend_from_slice(headers);
        if let Some((name, value)) = &key {
            all.push((name, value.as_str()));
        }
        let transport = match &self.key {
            Some((_, header)) => ReqwestTransport::keyed(self.client.clone(), self.origin.clone(), header.name()),
            None => ReqwestTransport::new(self.client.clone()),
        };
        let events = sse::post(transport, self.who.clone(), url, &all, body);
        sse::parse(events, self.who.clone(), parser)
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
