//! What the shell configures about the web tools (Settings → Search & web tools).

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Where settings for these tools live, for messages that tell the person where to fix things.
pub const SETTINGS_PAGE: &str = "Settings → Search & web tools";

/// The search service behind `web_search`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchBackend {
    /// Tavily (`https://api.tavily.com`), key `tavily`.
    #[default]
    Tavily,
    /// Exa (`https://api.exa.ai`), key `exa`.
    Exa,
    /// A SearXNG instance the person runs or trusts; no key.
    Searxng,
}

impl SearchBackend {
    /// The name people know it by.
    pub fn label(self) -> &'static str {
        match self {
            SearchBackend::Tavily => "Tavily",
            SearchBackend::Exa => "Exa",
            SearchBackend::Searxng => "SearXNG",
        }
    }

    /// The settings name (`tavily`, `exa`, `searxng`).
    pub fn as_str(self) -> &'static str {
        match self {
            SearchBackend::Tavily => "tavily",
            SearchBackend::Exa => "exa",
            SearchBackend::Searxng => "searxng",
        }
    }

    /// Parses the settings name.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "tavily" => Some(SearchBackend::Tavily),
            "exa" => Some(SearchBackend::Exa),
            "searxng" => Some(SearchBackend::Searxng),
            _ => None,
        }
    }

    /// The secret name its API key is stored under, if it needs one.
    pub fn secret_name(self) -> Option<&'static str> {
        match self {
            SearchBackend::Tavily => Some("tavily"),
            SearchBackend::Exa => Some("exa"),
            SearchBackend::Searxng => None,
        }
    }
}

/// Configuration of `web_search` and `web_fetch`, passed by the shell when it builds the registry
/// ([`crate::builtin_registry_with`]). Serializable so the shell can keep it in its settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WebToolsConfig {
    /// Which service `web_search` uses.
    pub search_backend: SearchBackend,
    /// Base URL of the SearXNG instance (`https://searx.example.org`); required for
    /// [`SearchBackend::Searxng`]. Trusted: it is the person's choice, so the local-address
    /// policy of `web_fetch` does not apply to it (a SearXNG on localhost is common).
    pub searxng_url: Option<String>,
    /// Tavily's API base; overridable for tests and proxies.
    pub tavily_base_url: String,
    /// Exa's API base; overridable for tests and proxies.
    pub exa_base_url: String,
    /// Lets `web_fetch` reach loopback, private, link-local and other non-public addresses.
    /// Off by default: a model reading an untrusted page could otherwise be steered into
    /// probing the person's router, intranet or a cloud metadata service.
    pub allow_local_addresses: bool,
    /// The most bytes `web_fetch` reads from one response body; the rest is not downloaded.
    pub fetch_max_bytes: usize,
    /// The time limit of one `web_fetch` call, redirects and body included.
    #[serde(with = "secs")]
    pub fetch_timeout: Duration,
    /// The time limit of one search request.
    #[serde(with = "secs")]
    pub search_timeout: Duration,
}

impl Default for WebToolsConfig {
    fn default() -> Self {
        Self {
            search_backend: SearchBackend::Tavily,
            searxng_url: None,
            tavily_base_url: "https://api.tavily.com".into(),
            exa_base_url: "https://api.exa.ai".into(),
            allow_local_addresses: false,
            fetch_max_bytes: 2 * 1024 * 1024,
            fetch_timeout: Duration::from_secs(20),
            search_timeout: Duration::from_secs(20),
        }
    }
}

/// A setting that cannot work, named so the settings screen can show it next to the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// SearXNG is chosen but no URL is set.
    #[error("web search is set to SearXNG but no SearXNG URL is set; add it in {SETTINGS_PAGE}")]
    MissingSearxngUrl,
    /// A base URL is not an absolute http(s) URL.
    #[error("the {field} '{value}' is not an http:// or https:// URL")]
    BadUrl {
        /// Which setting.
        field: &'static str,
        /// What it holds.
        value: String,
    },
    /// A limit is zero.
    #[error("{0} must be greater than zero")]
    Zero(&'static str),
}

impl WebToolsConfig {
    /// Checks the settings; the tools also work with a bad configuration (each call then says
    /// what is wrong), so calling this is for the settings screen's benefit.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |field: &'static str, value: &str| {
            parse_http_url(value).map(|_| ()).ok_or_else(|| ConfigError::BadUrl { field, value: value.to_owned() })
        };
        check("Tavily base URL", &self.tavily_base_url)?;
        check("Exa base URL", &self.exa_base_url)?;
        match (&self.searxng_url, self.search_backend) {
            (Some(u), _) if !u.trim().is_empty() => check("SearXNG URL", u.trim())?,
            (_, SearchBackend::Searxng) => return Err(ConfigError::MissingSearxngUrl),
            _ => {}
        }
        if self.fetch_max_bytes == 0 {
            return Err(ConfigError::Zero("the web_fetch size limit"));
        }
        if self.fetch_timeout.is_zero() {
            return Err(ConfigError::Zero("the web_fetch time limit"));
        }
        if self.search_timeout.is_zero() {
            return Err(ConfigError::Zero("the web_search time limit"));
        }
        Ok(())
    }
}

/// An absolute http(s) URL, or `None`.
pub(crate) fn parse_http_url(s: &str) -> Option<url::Url> {
    url::Url::parse(s.trim()).ok().filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

/// Durations as whole (or fractional) seconds in settings JSON, not serde's `{secs, nanos}`.
mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v)
            .map_err(|_| serde::de::Error::custom("expected a non-negative number of seconds"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_round_trip_as_json() {
        let c = WebToolsConfig::default();
        c.validate().unwrap();
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["searchBackend"], "tavily");
        assert_eq!(json["fetchTimeout"], 20.0);
        let back: WebToolsConfig = serde_json::from_value(json).unwrap();
        assert_eq!(back, c);
        let partial: WebToolsConfig =
            serde_json::from_str(r#"{"searchBackend":"searxng","searxngUrl":"http://localhost:8888"}"#).unwrap();
        assert_eq!(partial.search_backend, SearchBackend::Searxng);
        assert_eq!(partial.fetch_max_bytes, c.fetch_max_bytes);
        partial.validate().unwrap();
    }

    #[test]
    fn validation_names_the_field() {
        let c = WebToolsConfig { search_backend: SearchBackend::Searxng, ..Default::default() };
        assert_eq!(c.validate(), Err(ConfigError::MissingSearxngUrl));
        assert!(ConfigError::MissingSearxngUrl.to_string().contains(SETTINGS_PAGE));
        let c = WebToolsConfig { searxng_url: Some("ftp://x".into()), ..Default::default() };
        assert!(c.validate().unwrap_err().to_string().contains("SearXNG URL 'ftp://x'"));
        let c = WebToolsConfig { fetch_max_bytes: 0, ..Default::default() };
        assert!(c.validate().is_err());
        assert_eq!(SearchBackend::parse(" SearXNG "), Some(SearchBackend::Searxng));
        assert_eq!(SearchBackend::parse("bing"), None);
    }
}
