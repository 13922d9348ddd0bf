//! `web_search`: Tavily, Exa or SearXNG, chosen in settings, with the person's own key.
//!
//! The key is read through the tool context for each call (never cached here, never logged) and
//! leaves only as a request header. Every failure the person can fix names where to fix it; every
//! failure the model can work around (a bad query, a rate limit) says what to do instead.

use super::config::{SETTINGS_PAGE, SearchBackend, WebToolsConfig, parse_http_url};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::time::Duration;
use switchboard_core::tool::SecretValue;
use switchboard_core::{Tool, ToolContext, ToolDef, ToolError, ToolOutput};

/// Results returned when the model does not say.
pub const DEFAULT_RESULTS: u64 = 5;
/// The most results one call may ask for.
pub const MAX_RESULTS: u64 = 10;
/// Longest query accepted (Tavily's limit; longer queries search worse everywhere).
pub const MAX_QUERY_CHARS: usize = 400;
/// Characters of a snippet shown per result.
const SNIPPET_CHARS: usize = 300;

/// The environment variable that can hold a tool key: `SWITCHBOARD_KEY_<NAME>`, as
/// `switchboard_secrets::env_var_for` spells it (a test checks they agree).
pub fn key_env_var(secret_name: &str) -> String {
    format!("SWITCHBOARD_KEY_{}", secret_name.to_ascii_uppercase().replace('-', "_"))
}

/// One search hit, whatever the backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Page title.
    pub title: String,
    /// Page URL.
    pub url: String,
    /// A short extract.
    pub snippet: String,
    /// Publication date (`YYYY-MM-DD`) when the backend knows it.
    pub date: Option<String>,
}

/// The `web_search` tool.
pub struct WebSearch {
    def: ToolDef,
    config: WebToolsConfig,
    client: tokio::sync::OnceCell<reqwest::Client>,
}

impl std::fmt::Debug for WebSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSearch").field("backend", &self.config.search_backend).finish()
    }
}

impl WebSearch {
    /// The tool for `config.search_backend`.
    pub fn new(config: &WebToolsConfig) -> Self {
        let backend = config.search_backend;
        let mut def = ToolDef::new(
            "web_search",
            format!(
                "Search the web ({}) and get a numbered list of results: title, URL, a short snippet and the date when \
                 known. Use it for recent events, facts you are not sure of, or anything that may have changed since \
                 your training; then read the most relevant result in full with web_fetch. Cite the URLs you use.",
                backend.label()
            ),
            json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_QUERY_CHARS,
                        "description": "What to search for: a few specific keywords or a short question."
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS,
                        "description": format!("How many results to return (1-{MAX_RESULTS}, default {DEFAULT_RESULTS}).")
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        );
        def.example_output = Some(format!(
            "Results for \"rust async runtime\" from {}:\n\n\
             1. Tokio - An asynchronous Rust runtime\n   https://tokio.rs/\n   Tokio is an event-driven, non-blocking I/O platform for writing asynchronous applications with Rust.\n\n\
             2. Asynchronous Programming in Rust\n   https://rust-lang.github.io/async-book/\n   Published 2024-05-01\n   This book aims to be a comprehensive, up-to-date guide to async programming in Rust.",
            backend.label()
        ));
        Self { def, config: config.clone(), client: tokio::sync::OnceCell::new() }
    }

    fn backend(&self) -> SearchBackend {
        self.config.search_backend
    }

    /// Built on first use. A plain-http endpoint (a local SearXNG, a test server) skips loading
    /// the platform's TLS roots, which is most of the set-up cost.
    ///
    /// Where it connects: only the endpoint the person set (which may well be a SearXNG on this
    /// computer or the local network, so no address policy applies to it). A redirect is
    /// followed only within that origin: the service cannot steer a search, or its key, anywhere
    /// else.
    async fn client(&self, endpoint: &url::Url) -> Result<&reqwest::Client, ToolError> {
        let tls = endpoint.scheme() == "https";
        let timeout = self.config.search_timeout;
        let home = endpoint.origin();
        self.client
            .get_or_try_init(|| async move {
                let redirects = reqwest::redirect::Policy::custom(move |attempt| {
                    if attempt.url().origin() != home || attempt.previous().len() > 5 {
                        attempt.stop()
                    } else {
                        attempt.follow()
                    }
                });
                let mut b = reqwest::Client::builder()
                    .redirect(redirects)
                    .timeout(timeout)
                    .connect_timeout(timeout.min(Duration::from_secs(10)))
                    .user_agent(concat!("Switchboard/", env!("CARGO_PKG_VERSION"), " (web_search)"));
                if !tls {
                    b = b.tls_certs_only(Vec::<reqwest::Certificate>::new());
                }
                b.build()
            })
            .await
            .map_err(|e| ToolError::Failed(format!("Web search could not set up HTTP: {e}")))
    }

    /// Where requests go, from the configuration.
    fn endpoint(&self) -> Result<url::Url, ToolError> {
        let backend = self.backend();
        let (base, field) = match backend {
            SearchBackend::Tavily => (Some(self.config.tavily_base_url.as_str()), "Tavily base URL"),
            SearchBackend::Exa => (Some(self.config.exa_base_url.as_str()), "Exa base URL"),
            SearchBackend::Searxng => {
                (self.config.searxng_url.as_deref().filter(|s| !s.trim().is_empty()), "SearXNG URL")
            }
        };
        let Some(base) = base else {
            return Err(ToolError::MissingSecret(format!(
                "Web search is set to SearXNG but no SearXNG URL is set. Add your instance's URL in {SETTINGS_PAGE}, then try again."
            )));
        };
        let mut url = parse_http_url(base).ok_or_else(|| {
            ToolError::Failed(format!(
                "Web search cannot run: the {field} '{base}' is not an http:// or https:// URL. Fix it in {SETTINGS_PAGE}."
            ))
        })?;
        // `search` relative to the base, keeping any path prefix (`https://host/searx/`).
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        url.join("search").map_err(|e| ToolError::Failed(format!("Web search cannot build the {field}: {e}")))
    }

    async fn run(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let (query, max_results) = parse_args(&args)?;
        let backend = self.backend();
        let endpoint = self.endpoint()?;
        let key = match backend.secret_name() {
            Some(name) => Some(read_key(ctx, backend, name).await?),
            None => None,
        };
        let client = self.client(&endpoint).await?;
        let request = match backend {
            SearchBackend::Tavily => client.post(endpoint.clone()).bearer_auth(expose(&key)).json(&json!({
                "query": query,
                "max_results": max_results,
                "search_depth": "basic",
                "include_answer": false,
                "include_raw_content": false,
                "include_images": false,
            })),
            SearchBackend::Exa => client.post(endpoint.clone()).header("x-api-key", expose(&key)).json(&json!({
                "query": query,
                "numResults": max_results,
                "type": "auto",
                "contents": {"text": {"maxCharacters": 600}},
            })),
            SearchBackend::Searxng => {
                let mut url = endpoint.clone();
                url.query_pairs_mut().append_pair("q", &query).append_pair("format", "json").append_pair("pageno", "1");
                client.get(url)
            }
        };
        let response = request.send().await.map_err(|e| network_error(backend, &endpoint, &e, &self.config))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .map(|s| s.trim().to_owned());
        if status.is_redirection() {
            let to = response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("?");
            let to: String = to.chars().take(200).collect();
            return Err(ToolError::Failed(format!(
                "{} at {} answered with a redirect to {to}, which web search does not follow (it sends searches and keys \
                 only to the address set in {SETTINGS_PAGE}). If that address is right, set it there.",
                backend.label(),
                origin(&endpoint)
            )));
        }
        let body = response.text().await.map_err(|e| network_error(backend, &endpoint, &e, &self.config))?;
        if !status.is_success() {
            return Err(status_error(backend, &endpoint, status.as_u16(), retry_after.as_deref(), &body, key.as_ref()));
        }
        let value: Value = serde_json::from_str(&body).map_err(|e| {
            ToolError::Failed(format!(
                "{} answered with something that is not the expected JSON ({e}). Try again later, or answer without searching.",
                backend.label()
            ))
        })?;
        let mut hits = parse_hits(backend, &value);
        hits.truncate(max_results as usize);
        Ok(ToolOutput::text(format_hits(&query, backend, &hits)))
    }
}

fn expose(key: &Option<SecretValue>) -> &str {
    key.as_ref().map_or("", |k| k.expose())
}

/// `query` and `max_results`, checked again here (the registry validates the schema, but a tool
/// called outside the loop must not trust its input either).
fn parse_args(args: &Value) -> Result<(String, u64), ToolError> {
    let query = match args.get("query") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.split_whitespace().collect::<Vec<_>>().join(" "),
        Some(Value::String(_)) | None => {
            return Err(ToolError::InvalidArguments("'query' is required: the words to search for".into()));
        }
        Some(other) => return Err(ToolError::InvalidArguments(format!("'query' must be a string, got {other}"))),
    };
    let n = query.chars().count();
    if n > MAX_QUERY_CHARS {
        return Err(ToolError::InvalidArguments(format!(
            "'query' is {n} characters long; use at most {MAX_QUERY_CHARS} (a few specific keywords work best)"
        )));
    }
    let max_results = match args.get("max_results") {
        None | Some(Value::Null) => DEFAULT_RESULTS,
        Some(v) => match whole_number(v) {
            Some(k) if (1..=MAX_RESULTS).contains(&k) => k,
            _ => {
                return Err(ToolError::InvalidArguments(format!(
                    "'max_results' must be an integer from 1 to {MAX_RESULTS}, got {v}"
                )));
            }
        },
    };
    Ok((query, max_results))
}

/// A non-negative whole number, also when sent as `5.0` (JSON Schema's "integer" allows that).
pub(crate) fn whole_number(v: &Value) -> Option<u64> {
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u32::MAX as f64).map(|f| f as u64))
}

/// Reads the backend's key off the async runtime (a keychain call may wait on an unlock prompt).
async fn read_key(ctx: &ToolContext, backend: SearchBackend, name: &'static str) -> Result<SecretValue, ToolError> {
    let secrets = ctx.secrets.clone();
    let label = backend.label();
    let env = key_env_var(name);
    let read = tokio::task::spawn_blocking(move || secrets.get(name)).await.map_err(|_| {
        ToolError::Failed(format!("Web search could not read the {label} API key (the read was interrupted)."))
    })?;
    match read {
        Ok(Some(key)) if !key.expose().trim().is_empty() => Ok(key),
        Ok(_) => {
            let article = if label.starts_with(['A', 'E', 'I', 'O', 'U']) { "an" } else { "a" };
            Err(ToolError::MissingSecret(format!(
                "Web search needs {article} {label} API key. Add it in {SETTINGS_PAGE} (or set {env}), then try again."
            )))
        }
        Err(why) => Err(ToolError::Failed(format!(
            "Web search could not read the {label} API key: {why}. Unlock your system keychain, or set {env}, then try again."
        ))),
    }
}

/// What the API said about an error, short, from the usual JSON shapes; never the key.
fn api_detail(body: &str, key: Option<&SecretValue>) -> Option<String> {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let pick = |v: &Value| v.as_str().map(str::to_owned);
        v.pointer("/detail/error")
            .and_then(pick)
            .or_else(|| v.get("detail").and_then(pick))
            .or_else(|| v.get("error").and_then(pick))
            .or_else(|| v.pointer("/error/message").and_then(pick))
            .or_else(|| v.get("message").and_then(pick))
    });
    let text = match from_json {
        Some(t) => t,
        // JSON without a known message field: nothing readable to add.
        None if serde_json::from_str::<Value>(body).is_ok() => return None,
        // An HTML error page says nothing useful to a model.
        None if body.trim_start().starts_with('<') => return None,
        None => body.to_owned(),
    };
    let mut text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(k) = key.map(|k| k.expose()).filter(|k| k.len() >= 4) {
        text = text.replace(k, "<redacted>");
    }
    if text.chars().count() > 200 {
        text = text.chars().take(200).collect::<String>() + "…";
    }
    (!text.is_empty()).then_some(text)
}

/// `Retry-After` as words: seconds or an HTTP date.
fn retry_hint(retry_after: Option<&str>) -> String {
    match retry_after {
        Some(v) => match v.parse::<u64>() {
            Ok(s) => format!("Wait {s} s (the service's Retry-After) before searching again."),
            Err(_) => format!("Wait until {v} (the service's Retry-After) before searching again."),
        },
        None => "Wait a minute before searching again, or answer without searching.".into(),
    }
}

/// The message for an HTTP error status.
fn status_error(
    backend: SearchBackend,
    endpoint: &url::Url,
    status: u16,
    retry_after: Option<&str>,
    body: &str,
    key: Option<&SecretValue>,
) -> ToolError {
    let label = backend.label();
    let detail = api_detail(body, key).map(|d| format!(": {d}")).unwrap_or_default();
    let env = backend.secret_name().map(key_env_var).unwrap_or_default();
    let msg = match (backend, status) {
        (SearchBackend::Searxng, 401 | 403) => format!(
            "SearXNG at {} refused the search (HTTP {status}{detail}). Many instances only answer format=json when \
             `json` is listed under `search.formats` in their settings.yml; enable it, or choose another instance in {SETTINGS_PAGE}.",
            origin(endpoint)
        ),
        (_, 401 | 403) => format!(
            "{label} rejected the API key (HTTP {status}{detail}). Check or replace the {label} API key in {SETTINGS_PAGE} \
             (or {env}). Searching again will not help until the key is fixed."
        ),
        (_, 400 | 422) => format!(
            "{label} rejected the search request (HTTP {status}{detail}). Rephrase the query with fewer, plainer words and try again."
        ),
        (SearchBackend::Tavily, 432) => format!(
            "Your Tavily plan's credits are used up (HTTP 432{detail}). Upgrade the plan or add credits at Tavily, or choose \
             another search service in {SETTINGS_PAGE}."
        ),
        (SearchBackend::Tavily, 433) => format!(
            "Your Tavily pay-as-you-go spending limit is reached (HTTP 433{detail}). Raise it at Tavily, or choose another \
             search service in {SETTINGS_PAGE}."
        ),
        (_, 402) => format!(
            "{label} says the account has no credits left (HTTP 402{detail}). Add credits at {label}, or choose another search \
             service in {SETTINGS_PAGE}."
        ),
        (_, 429) => format!("{label} is rate-limiting searches (HTTP 429{detail}). {}", retry_hint(retry_after)),
        (_, 500..=599) => format!(
            "{label} had a server error (HTTP {status}{detail}). Try again in a moment, or answer without searching."
        ),
        _ => format!("{label} answered HTTP {status}{detail}."),
    };
    ToolError::Failed(msg)
}

fn origin(u: &url::Url) -> String {
    u.origin().ascii_serialization()
}

/// The message for a request that got no answer.
fn network_error(
    backend: SearchBackend,
    endpoint: &url::Url,
    e: &reqwest::Error,
    config: &WebToolsConfig,
) -> ToolError {
    let label = backend.label();
    if e.is_timeout() {
        return ToolError::Failed(format!(
            "{label} did not answer within {} s. Try again, or answer without searching.",
            config.search_timeout.as_secs_f32()
        ));
    }
    let mut cause = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        cause = s.to_string();
        src = s.source();
    }
    let hint = match backend {
        SearchBackend::Searxng => format!("Check that the SearXNG instance is running and its URL in {SETTINGS_PAGE}."),
        _ => "Check the internet connection, then try again.".into(),
    };
    ToolError::Failed(format!("Could not reach {label} at {}: {cause}. {hint}", origin(endpoint)))
}

fn text_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

/// The date part of an ISO-ish timestamp, or the string as given.
fn date_of(s: &str) -> String {
    let s = s.trim();
    match s.get(..10) {
        Some(d) if d.as_bytes().get(4) == Some(&b'-') && d.as_bytes().get(7) == Some(&b'-') => d.to_owned(),
        _ => s.to_owned(),
    }
}

/// Hits from each backend's response shape. Missing fields are skipped, not errors: a result
/// without a URL is useless, one without a snippet is still worth listing.
pub fn parse_hits(backend: SearchBackend, v: &Value) -> Vec<Hit> {
    let Some(results) = v.get("results").and_then(Value::as_array) else {
        return Vec::new();
    };
    results
        .iter()
        .filter_map(|r| {
            let url = text_at(r, "url")?.to_owned();
            let title = text_at(r, "title").unwrap_or(&url).to_owned();
            let (snippet, date) = match backend {
                SearchBackend::Tavily => {
                    (text_at(r, "content").unwrap_or(""), text_at(r, "published_date").map(date_of))
                }
                SearchBackend::Exa => {
                    let highlights = r
                        .get("highlights")
                        .and_then(Value::as_array)
                        .map(|h| h.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" … "))
                        .filter(|h| !h.trim().is_empty());
                    let snippet = highlights
                        .as_deref()
                        .or_else(|| text_at(r, "summary"))
                        .or_else(|| text_at(r, "text"))
                        .unwrap_or("");
                    return Some(Hit {
                        title,
                        url,
                        snippet: short(snippet),
                        date: text_at(r, "publishedDate").map(date_of),
                    });
                }
                SearchBackend::Searxng => {
                    (text_at(r, "content").unwrap_or(""), text_at(r, "publishedDate").map(date_of))
                }
            };
            Some(Hit { title, url, snippet: short(snippet), date })
        })
        .collect()
}

/// Whitespace collapsed, at most [`SNIPPET_CHARS`] characters, cut at a word.
fn short(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= SNIPPET_CHARS {
        return s;
    }
    let head: String = s.chars().take(SNIPPET_CHARS).collect();
    let cut = head.rfind(' ').filter(|&i| i > head.len() * 3 / 4).unwrap_or(head.len());
    format!("{}…", &head[..cut])
}

/// The numbered list the model reads.
pub fn format_hits(query: &str, backend: SearchBackend, hits: &[Hit]) -> String {
    if hits.is_empty() {
        return format!(
            "No results for \"{query}\" from {}. Try fewer or different words, or a broader query.",
            backend.label()
        );
    }
    let mut out = format!("Results for \"{query}\" from {}:\n", backend.label());
    for (i, h) in hits.iter().enumerate() {
        out.push_str(&format!("\n{}. {}\n   {}\n", i + 1, h.title, h.url));
        if let Some(d) = &h.date {
            out.push_str(&format!("   Published {d}\n"));
        }
        if !h.snippet.is_empty() {
            out.push_str(&format!("   {}\n", h.snippet));
        }
    }
    out.trim_end().to_owned()
}

impl Tool for WebSearch {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        async move {
            tokio::select! {
                r = self.run(args, &ctx) => r,
                _ = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
            }
        }
        .boxed()
    }

    /// Titles and snippets are what the pages' authors wrote. (The query itself goes only to
    /// the search service the person set up, so it declares no egress.)
    fn untrusted_output(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> url::Url {
        url::Url::parse("https://api.tavily.com/search").unwrap()
    }

    fn msg(e: ToolError) -> String {
        e.to_string()
    }

    #[test]
    fn arguments_are_checked() {
        assert_eq!(parse_args(&json!({"query": "  rust   async "})).unwrap(), ("rust async".into(), 5));
        assert_eq!(parse_args(&json!({"query": "x", "max_results": 10})).unwrap().1, 10);
        assert_eq!(parse_args(&json!({"query": "x", "max_results": 3.0})).unwrap().1, 3);
        assert!(msg(parse_args(&json!({})).unwrap_err()).contains("'query' is required"));
        assert!(msg(parse_args(&json!({"query": 3})).unwrap_err()).contains("must be a string"));
        assert!(msg(parse_args(&json!({"query": "x", "max_results": 11})).unwrap_err()).contains("1 to 10"));
        assert!(msg(parse_args(&json!({"query": "x", "max_results": 0})).unwrap_err()).contains("1 to 10"));
        assert!(msg(parse_args(&json!({"query": "x".repeat(401)})).unwrap_err()).contains("at most 400"));
    }

    #[test]
    fn error_details_are_short_and_never_hold_the_key() {
        let key = SecretValue::new("tvly-SECRET-1234");
        let body = r#"{"detail":{"error":"Unauthorized: invalid API key tvly-SECRET-1234"}}"#;
        assert_eq!(api_detail(body, Some(&key)).unwrap(), "Unauthorized: invalid API key <redacted>");
        assert_eq!(api_detail(r#"{"error":{"message":"bad"}}"#, None).unwrap(), "bad");
        assert_eq!(api_detail("<html><body>502</body></html>", None), None);
        assert_eq!(api_detail(&"y".repeat(500), None).unwrap().chars().count(), 201);
        let e = status_error(SearchBackend::Tavily, &url(), 401, None, body, Some(&key));
        assert!(!msg(e).contains("SECRET"));
    }

    #[test]
    fn each_status_gets_its_message() {
        let e = |status, retry| msg(status_error(SearchBackend::Tavily, &url(), status, retry, "{}", None));
        assert!(e(401, None).contains("Tavily rejected the API key (HTTP 401)"));
        assert!(e(401, None).contains("Settings → Search & web tools (or SWITCHBOARD_KEY_TAVILY)"));
        assert!(e(400, None).contains("Rephrase the query"));
        assert!(e(429, Some("30")).contains("Wait 30 s"));
        assert!(e(429, None).contains("Wait a minute"));
        assert!(e(432, None).contains("credits are used up"));
        assert!(e(503, None).contains("server error (HTTP 503)"));
        assert_eq!(e(418, None), "Tavily answered HTTP 418.");
        let s = msg(status_error(SearchBackend::Searxng, &url(), 403, None, "", None));
        assert!(s.contains("search.formats"), "{s}");
    }

    #[test]
    fn hits_are_formatted_compactly() {
        let v = json!({"results": [
            {"title": "A", "url": "https://a.example/", "content": "alpha  text", "published_date": "2025-03-04T10:00:00Z"},
            {"url": "https://b.example/"},
            {"title": "no url"}
        ]});
        let hits = parse_hits(SearchBackend::Tavily, &v);
        assert_eq!(hits.len(), 2);
        let text = format_hits("q", SearchBackend::Tavily, &hits);
        assert_eq!(
            text,
            "Results for \"q\" from Tavily:\n\n1. A\n   https://a.example/\n   Published 2025-03-04\n   alpha text\n\n2. https://b.example/\n   https://b.example/"
        );
        assert!(format_hits("q", SearchBackend::Exa, &[]).starts_with("No results for \"q\" from Exa."));
        let long = short(&"word ".repeat(200));
        assert!(long.chars().count() <= SNIPPET_CHARS + 1 && long.ends_with('…'));
    }
}
