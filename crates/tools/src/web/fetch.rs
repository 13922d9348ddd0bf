//! `web_fetch`: one web page, read as Markdown (HTML) or as it is (text, JSON).
//!
//! Every hop is re-checked against the address policy (see [`super::net`]); redirects are followed
//! by hand (at most [`MAX_REDIRECTS`]) precisely so that a public page cannot bounce the fetch to
//! a private address. The body is streamed and cut at the size limit, and the whole fetch,
//! redirects included, runs under one time limit.

use super::config::{SETTINGS_PAGE, WebToolsConfig};
use super::html;
use super::net::{AddressPolicy, Blocked, GuardedResolver, ResolveError, Resolver, StandardPolicy, SystemResolver};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{Tool, ToolContext, ToolDef, ToolError, ToolOutput};
use url::{Host, Url};

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;
/// Characters of content returned when the model does not say.
pub const DEFAULT_MAX_CHARS: usize = 20_000;
/// The most characters the model may ask for.
pub const MAX_MAX_CHARS: usize = 200_000;
/// Stack of the thread that converts HTML. The converter recurses per nesting level; depth is
/// capped ([`super::html::MAX_DEPTH`]) by an estimate, and this margin covers the estimate being
/// off. Committed lazily by the OS, so it costs address space, not memory.
pub(crate) const CONVERT_STACK: usize = 64 * 1024 * 1024;

/// Why a fetch failed. Each message says what happened and, where there is one, what to do.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Not a URL.
    #[error("'{0}' is not a valid URL ({1}); give an absolute http:// or https:// URL")]
    InvalidUrl(String, String),
    /// A scheme other than http/https (also after a redirect).
    #[error("only http:// and https:// URLs can be fetched, not '{0}'")]
    Scheme(String),
    /// The address policy refused a hop.
    #[error(
        "refused to fetch {url}: {blocked}. web_fetch only contacts public internet addresses, so that a web page \
         cannot make it reach into this computer or its local network (local addresses can be allowed in {SETTINGS_PAGE})"
    )]
    Blocked {
        /// The URL of the refused hop.
        url: String,
        /// What was refused and why.
        blocked: Blocked,
    },
    /// More than [`MAX_REDIRECTS`] redirects.
    #[error("gave up after {MAX_REDIRECTS} redirects (last one to {0})")]
    TooManyRedirects(String),
    /// A redirect without a usable `Location`.
    #[error("the server at {0} answered with a redirect but no usable Location header")]
    BadRedirect(String),
    /// The time limit ran out.
    #[error("gave up on {url}: it did not finish loading within {} s", .limit.as_secs_f32())]
    Timeout {
        /// The URL being fetched.
        url: String,
        /// The limit.
        limit: Duration,
    },
    /// DNS failed.
    #[error("could not find the server for {url}: {detail}")]
    Dns {
        /// The URL.
        url: String,
        /// What the resolver said.
        detail: String,
    },
    /// Connecting or reading failed.
    #[error("could not load {url}: {detail}")]
    Network {
        /// The URL.
        url: String,
        /// What went wrong.
        detail: String,
    },
    /// The HTTP client could not be built (TLS roots unreadable).
    #[error("web_fetch could not set up HTTP: {0}")]
    Setup(String),
    /// The server answered with an error status.
    #[error("the server answered HTTP {status} for {url}")]
    Status {
        /// The URL.
        url: String,
        /// The status line.
        status: reqwest::StatusCode,
    },
    /// A content type that is neither a page, text nor JSON.
    #[error(
        "the response from {url} is {content_type}, which web_fetch cannot read; it reads web pages (HTML), plain text and JSON only"
    )]
    ContentType {
        /// The URL.
        url: String,
        /// The declared (or sniffed) type.
        content_type: String,
    },
}

impl From<FetchError> for ToolError {
    fn from(e: FetchError) -> Self {
        match e {
            FetchError::InvalidUrl(..) | FetchError::Scheme(_) => ToolError::InvalidArguments(e.to_string()),
            other => {
                let mut msg = capitalize(&other.to_string());
                if !msg.ends_with('.') {
                    msg.push('.');
                }
                ToolError::Failed(msg)
            }
        }
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// How a body is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyKind {
    /// Converted to Markdown.
    Html,
    /// Passed through.
    Text,
    /// Passed through.
    Json,
}

/// A fetched response body, before conversion.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL asked for.
    pub requested: Url,
    /// The URL that answered (after redirects).
    pub url: Url,
    /// The declared content type, or what the body was sniffed as.
    pub content_type: String,
    /// How to read it.
    pub kind: BodyKind,
    /// The body, at most the size limit.
    pub body: Vec<u8>,
    /// Whether the body was cut at the size limit.
    pub truncated: bool,
}

/// Fetches URLs under the address policy. The policy and resolver are injectable for tests.
pub struct Fetcher {
    policy: Arc<dyn AddressPolicy>,
    guard: Arc<GuardedResolver>,
    client: tokio::sync::OnceCell<reqwest::Client>,
    max_bytes: usize,
    timeout: Duration,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher").field("max_bytes", &self.max_bytes).field("timeout", &self.timeout).finish()
    }
}

impl Fetcher {
    /// The app's fetcher: the standard policy and the system resolver.
    pub fn new(config: &WebToolsConfig) -> Self {
        Self::with_network(
            config,
            Arc::new(SystemResolver),
            Arc::new(StandardPolicy { allow_local_addresses: config.allow_local_addresses }),
        )
    }

    /// A fetcher with another resolver and policy (tests map names to local servers with these).
    pub fn with_network(config: &WebToolsConfig, resolver: Arc<dyn Resolver>, policy: Arc<dyn AddressPolicy>) -> Self {
        Self {
            guard: Arc::new(GuardedResolver { resolver, policy: policy.clone() }),
            policy,
            client: tokio::sync::OnceCell::new(),
            max_bytes: config.fetch_max_bytes.max(1),
            timeout: config.fetch_timeout,
        }
    }

    /// The client, built on first use (loading TLS roots is not free, and many sessions never
    /// fetch). No proxy: a proxy would resolve names itself and bypass the address check. No
    /// automatic redirects: each hop is checked here.
    async fn client(&self) -> Result<&reqwest::Client, FetchError> {
        self.client
            .get_or_try_init(|| async {
                reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .no_proxy()
                    .dns_resolver(self.guard.clone())
                    .connect_timeout(self.timeout.min(Duration::from_secs(10)))
                    .user_agent(concat!("Switchboard/", env!("CARGO_PKG_VERSION"), " (web_fetch)"))
                    .build()
            })
            .await
            .map_err(|e| FetchError::Setup(describe(&e)))
    }

    /// Checks what can be checked before connecting: the scheme, IP literals (as normalized by
    /// the WHATWG parser), and refused names such as `localhost`. Names are resolved and checked
    /// by the client's resolver when it connects.
    fn check_hop(&self, url: &Url) -> Result<(), FetchError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Scheme(url.scheme().to_owned()));
        }
        let blocked =
            |what: String, reason| FetchError::Blocked { url: url.to_string(), blocked: Blocked { what, reason } };
        match url.host() {
            None => Err(FetchError::InvalidUrl(url.to_string(), "it has no host".into())),
            Some(Host::Ipv4(ip)) => self.policy.check_ip(IpAddr::V4(ip)).map_err(|r| blocked(ip.to_string(), r)),
            Some(Host::Ipv6(ip)) => self.policy.check_ip(IpAddr::V6(ip)).map_err(|r| blocked(ip.to_string(), r)),
            Some(Host::Domain(d)) => self.policy.check_name(d).map_err(|r| blocked(d.to_owned(), r)),
        }
    }

    /// Fetches `raw`, following redirects, under the time limit.
    pub async fn fetch(&self, raw: &str) -> Result<Fetched, FetchError> {
        let requested = Url::parse(raw.trim()).map_err(|e| FetchError::InvalidUrl(raw.to_owned(), e.to_string()))?;
        if !matches!(requested.scheme(), "http" | "https") {
            return Err(FetchError::Scheme(requested.scheme().to_owned()));
        }
        let limit = self.timeout;
        match tokio::time::timeout(limit, self.fetch_hops(requested.clone())).await {
            Ok(r) => r,
            Err(_) => Err(FetchError::Timeout { url: requested.to_string(), limit }),
        }
    }

    async fn fetch_hops(&self, requested: Url) -> Result<Fetched, FetchError> {
        let client = self.client().await?;
        let mut url = requested.clone();
        let mut redirects = 0;
        let response = loop {
            self.check_hop(&url)?;
            let response = client
                .get(url.clone())
                .header(
                    reqwest::header::ACCEPT,
                    "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1",
                )
                .send()
                .await
                .map_err(|e| request_error(&url, &e))?;
            if !response.status().is_redirection() || response.status() == reqwest::StatusCode::NOT_MODIFIED {
                break response;
            }
            let next = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|loc| url.join(loc.trim()).ok())
                .ok_or_else(|| FetchError::BadRedirect(url.to_string()))?;
            redirects += 1;
            if redirects > MAX_REDIRECTS {
                return Err(FetchError::TooManyRedirects(next.to_string()));
            }
            url = next;
        };
        let status = response.status();
        if !status.is_success() {
            return Err(FetchError::Status { url: url.to_string(), status });
        }
        let declared = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        let declared_kind = match &declared {
            Some(ct) => Some(kind_of(ct).ok_or_else(|| FetchError::ContentType {
                url: url.to_string(),
                content_type: ct.split(';').next().unwrap_or(ct).trim().to_owned(),
            })?),
            None => None,
        };
        let (body, truncated) = self.read_body(response, &url).await?;
        let (kind, content_type) = match (declared_kind, declared) {
            (Some(kind), Some(ct)) => (kind, ct),
            _ => match sniff(&body) {
                Some(kind) => (kind, format!("{} (sniffed)", kind_label(kind))),
                None => {
                    return Err(FetchError::ContentType {
                        url: url.to_string(),
                        content_type: "binary data without a content type".into(),
                    });
                }
            },
        };
        Ok(Fetched { requested, url, content_type, kind, body, truncated })
    }

    /// Reads at most `max_bytes`, then stops (dropping the response closes the connection, so
    /// the rest is never downloaded).
    async fn read_body(&self, mut response: reqwest::Response, url: &Url) -> Result<(Vec<u8>, bool), FetchError> {
        let mut body = Vec::with_capacity(self.max_bytes.min(64 * 1024));
        while let Some(chunk) =
            response.chunk().await.map_err(|e| FetchError::Network { url: url.to_string(), detail: describe(&e) })?
        {
            let room = self.max_bytes - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                return Ok((body, true));
            }
            body.extend_from_slice(&chunk);
        }
        Ok((body, false))
    }
}

/// The innermost useful message of an error chain (reqwest's own Display is only the outer
/// "error sending request").
pub(crate) fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur = Some(e);
    while let Some(err) = cur {
        let s = err.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = err.source();
    }
    parts.last().cloned().unwrap_or_default()
}

fn request_error(url: &Url, e: &reqwest::Error) -> FetchError {
    match super::net::find_resolve_error(e) {
        Some(ResolveError::Blocked(b)) => FetchError::Blocked { url: url.to_string(), blocked: b.clone() },
        Some(ResolveError::Lookup(host, detail)) => {
            FetchError::Dns { url: url.to_string(), detail: format!("{host}: {detail}") }
        }
        None => FetchError::Network { url: url.to_string(), detail: describe(e) },
    }
}

/// How a declared content type is read; `None` for types web_fetch refuses.
fn kind_of(content_type: &str) -> Option<BodyKind> {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match essence.as_str() {
        "text/html" | "application/xhtml+xml" => Some(BodyKind::Html),
        "application/json" | "text/json" => Some(BodyKind::Json),
        e if e.ends_with("+json") => Some(BodyKind::Json),
        "application/xml" | "application/javascript" | "application/ecmascript" => Some(BodyKind::Text),
        // OpenAPI documents, configs.
        "application/yaml" | "application/x-yaml" => Some(BodyKind::Text),
        e if e.ends_with("+yaml") => Some(BodyKind::Text),
        e if e.ends_with("+xml") => Some(BodyKind::Text),
        e if e.starts_with("text/") => Some(BodyKind::Text),
        _ => None,
    }
}

fn kind_label(kind: BodyKind) -> &'static str {
    match kind {
        BodyKind::Html => "text/html",
        BodyKind::Text => "text/plain",
        BodyKind::Json => "application/json",
    }
}

/// Guesses an undeclared body: HTML by its opening, text when it is UTF-8 without NULs.
fn sniff(body: &[u8]) -> Option<BodyKind> {
    let head = String::from_utf8_lossy(&body[..body.len().min(512)]).trim_start().to_ascii_lowercase();
    if head.starts_with("<!doctype html") || head.starts_with("<html") || head.starts_with("<head") {
        return Some(BodyKind::Html);
    }
    if body.contains(&0) {
        return None;
    }
    let valid = match std::str::from_utf8(body) {
        Ok(_) => true,
        // A cut at the size limit may split the last character.
        Err(e) => e.error_len().is_none(),
    };
    if !valid {
        return None;
    }
    let trimmed = head.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') { Some(BodyKind::Json) } else { Some(BodyKind::Text) }
}

/// Decodes a body by its declared charset, a BOM, or (for HTML) a `<meta charset>`; UTF-8
/// otherwise. Undecodable bytes become U+FFFD rather than failing the fetch.
pub(crate) fn decode(body: &[u8], content_type: &str, kind: BodyKind) -> String {
    let label = charset_param(content_type).or_else(|| (kind == BodyKind::Html).then(|| meta_charset(body)).flatten());
    let encoding = label.and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes())).unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches('"').to_owned())
    })
}

fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(2048)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let rest = head[at..].trim_start_matches(['"', '\'']);
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')).unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_owned())
}

/// Cuts `text` to `max` characters on a line or word boundary when one is near.
fn cut(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        None => (text, false),
        Some((end, _)) => {
            let head = &text[..end];
            let soft = head
                .rfind('\n')
                .filter(|&i| i > end * 9 / 10)
                .or_else(|| head.rfind(' ').filter(|&i| i > end * 9 / 10));
            (&head[..soft.unwrap_or(end)], true)
        }
    }
}

/// The `web_fetch` tool.
pub struct WebFetch {
    def: ToolDef,
    fetcher: Fetcher,
    max_bytes: usize,
}

impl std::fmt::Debug for WebFetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebFetch").field("fetcher", &self.fetcher).finish()
    }
}

impl WebFetch {
    /// The tool with the app's address policy and the system resolver.
    pub fn new(config: &WebToolsConfig) -> Self {
        Self::with_fetcher(config, Fetcher::new(config))
    }

    /// The tool over a given fetcher (tests inject the resolver and policy through it).
    pub fn with_fetcher(config: &WebToolsConfig, fetcher: Fetcher) -> Self {
        let mut def = ToolDef::new(
            "web_fetch",
            "Fetch one web page by URL and read it. HTML is converted to Markdown (headings, paragraphs, lists, \
             links made absolute); plain text and JSON come back as they are. Use it to read a page the user gave \
             you or a result from web_search, to quote it or check details. It cannot read PDFs, images or other \
             binary files, pages that need a login, or addresses on the local network.",
            json!({
                "type": "object",
                "properties": {
                    "url": {
                        "type": "string",
                        "description": "Absolute http:// or https:// URL of the page."
                    },
                    "max_chars": {
                        "type": "integer",
                        "minimum": 100,
                        "maximum": MAX_MAX_CHARS,
                        "description": format!("Most characters of content to return (default {DEFAULT_MAX_CHARS}). Ask for more only when a page was cut and you need the rest.")
                    }
                },
                "required": ["url"],
                "additionalProperties": false
            }),
        );
        def.example_output = Some(
            "Title: Example Domain\nURL: https://example.com/\nContent-Type: text/html; charset=UTF-8\n\n# Example Domain\n\n\
             This domain is for use in documentation examples without needing permission. \
             [Learn more](https://iana.org/domains/example)"
                .into(),
        );
        // The loop's per-call limit must not cut the fetch before its own, clearer, time limit.
        def.timeout = Some(config.fetch_timeout + Duration::from_secs(10));
        Self { def, fetcher, max_bytes: config.fetch_max_bytes }
    }

    async fn run(&self, args: Value) -> Result<ToolOutput, ToolError> {
        let url = match args.get("url") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_owned(),
            Some(Value::String(_)) | None => {
                return Err(ToolError::InvalidArguments("'url' is required: an absolute http(s) URL".into()));
            }
            Some(other) => return Err(ToolError::InvalidArguments(format!("'url' must be a string, got {other}"))),
        };
        let max_chars = match args.get("max_chars") {
            None | Some(Value::Null) => DEFAULT_MAX_CHARS,
            Some(v) => match super::search::whole_number(v) {
                Some(n) if (100..=MAX_MAX_CHARS as u64).contains(&n) => n as usize,
                _ => {
                    return Err(ToolError::InvalidArguments(format!(
                        "'max_chars' must be an integer from 100 to {MAX_MAX_CHARS}, got {v}"
                    )));
                }
            },
        };
        let fetched = self.fetcher.fetch(&url).await?;
        Ok(ToolOutput::text(render(fetched, max_chars, self.max_bytes).await))
    }
}

/// The text the model reads: a short header, then the content, then notes about cuts.
async fn render(f: Fetched, max_chars: usize, max_bytes: usize) -> String {
    let text = decode(&f.body, &f.content_type, f.kind);
    let (title, content) = match f.kind {
        BodyKind::Html => {
            let base = f.url.clone();
            let (tx, rx) = tokio::sync::oneshot::channel();
            let spawned =
                std::thread::Builder::new().name("web_fetch-html".into()).stack_size(CONVERT_STACK).spawn(move || {
                    let _ = tx.send(html::to_markdown(&text, &base));
                });
            match (spawned, rx.await) {
                (Ok(_), Ok(c)) => (c.title, c.markdown),
                _ => (None, "(the page could not be converted to text)".to_owned()),
            }
        }
        BodyKind::Text | BodyKind::Json => (None, text),
    };
    let mut out = String::new();
    if let Some(t) = title {
        out.push_str(&format!("Title: {t}\n"));
    }
    out.push_str(&format!("URL: {}\n", f.url));
    if f.url != f.requested {
        out.push_str(&format!("Redirected from: {}\n", f.requested));
    }
    out.push_str(&format!("Content-Type: {}\n\n", f.content_type));
    let total = content.chars().count();
    let (shown, cut_chars) = cut(content.trim(), max_chars);
    if shown.is_empty() {
        out.push_str("(the page has no readable text)");
    } else {
        out.push_str(shown);
    }
    if cut_chars {
        out.push_str(&format!(
            "\n\n[Cut at {max_chars} of {total} characters. Call web_fetch again with a larger max_chars (up to {MAX_MAX_CHARS}) to read more.]"
        ));
    }
    if f.truncated {
        out.push_str(&format!(
            "\n\n[The response is larger than the {max_bytes}-byte download limit; only the first {max_bytes} bytes were read.]"
        ));
    }
    out
}

impl Tool for WebFetch {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        async move {
            tokio::select! {
                r = self.run(args) => r,
                _ = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
            }
        }
        .boxed()
    }

    /// A page says whatever its author wants.
    fn untrusted_output(&self) -> bool {
        true
    }

    /// The URL leaves, query and all, to its host (the whole text when it names none, so an
    /// odd URL is never taken for a known host).
    fn egress(&self, args: &Value) -> Option<switchboard_core::Egress> {
        let url = args.get("url")?.as_str()?.trim();
        let destination = url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(switchboard_core::egress::normal_host))
            .unwrap_or_else(|| url.to_owned());
        Some(switchboard_core::Egress { destination, sends: url.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_are_sorted() {
        assert_eq!(kind_of("text/html; charset=utf-8"), Some(BodyKind::Html));
        assert_eq!(kind_of("application/xhtml+xml"), Some(BodyKind::Html));
        assert_eq!(kind_of("application/json"), Some(BodyKind::Json));
        assert_eq!(kind_of("application/ld+json"), Some(BodyKind::Json));
        assert_eq!(kind_of("text/plain"), Some(BodyKind::Text));
        assert_eq!(kind_of("text/markdown"), Some(BodyKind::Text));
        assert_eq!(kind_of("application/rss+xml"), Some(BodyKind::Text));
        for refused in ["application/pdf", "image/png", "application/octet-stream", "video/mp4", "application/zip"] {
            assert_eq!(kind_of(refused), None, "{refused}");
        }
    }

    #[test]
    fn undeclared_bodies_are_sniffed() {
        assert_eq!(sniff(b"  <!DOCTYPE html><p>x"), Some(BodyKind::Html));
        assert_eq!(sniff(b"{\"a\":1}"), Some(BodyKind::Json));
        assert_eq!(sniff(b"just text"), Some(BodyKind::Text));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0"), None);
        assert_eq!(sniff(&[0xff, 0xfe, 0xfd, b'a']), None);
        assert_eq!(sniff("caf\u{e9}".as_bytes().split_last().unwrap().1), Some(BodyKind::Text));
    }

    #[test]
    fn charsets_are_honoured() {
        assert_eq!(decode(b"caf\xe9", "text/plain; charset=ISO-8859-1", BodyKind::Text), "café");
        let html = b"<html><head><meta charset=\"windows-1252\"></head><body>\x93hi\x94</body></html>";
        assert!(decode(html, "text/html", BodyKind::Html).contains("\u{201c}hi\u{201d}"));
        assert_eq!(decode("naïve".as_bytes(), "text/plain", BodyKind::Text), "naïve");
    }

    #[test]
    fn cuts_prefer_boundaries() {
        assert_eq!(cut("short", 10), ("short", false));
        let (head, cut_) = cut("aaaa bbbb cccc dddd", 12);
        assert!(cut_);
        assert_eq!(head, "aaaa bbbb cc");
        let text = format!("{} tail", "x".repeat(100));
        assert_eq!(cut(&text, 103).0.len(), 100);
        assert_eq!(cut("ééééé", 3), ("ééé", true));
    }
}
