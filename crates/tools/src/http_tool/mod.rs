//! HTTP API tools: tools a person defines without code, as a URL template with `{{param}}`
//! placeholders, optional query parameters, headers and a JSON body ([`HttpToolConfig`]).
//!
//! What keeps such a tool safe while the model fills in its arguments:
//!
//! - The origin is fixed when the tool is defined: placeholders are allowed only in the URL's
//!   path and query string, each argument is percent-encoded for its position (one path segment,
//!   one query value), `.` and `..` are refused as path segments, and the final URL's origin is
//!   compared with the configured one before anything is sent.
//! - Keys (`{{secret:NAME}}`) go only into headers and query values, are read from the key store
//!   per call, are never sent to another origin (a redirect elsewhere is refused when the request
//!   carries one), and are masked as `[secret NAME]` in everything the tool returns.
//! - The address policy is `web_fetch`'s: loopback, private and link-local addresses are refused
//!   after resolution unless the definition allows local addresses.
//! - Responses are read up to a byte limit (a larger one fails, nothing more is buffered), binary
//!   types are refused, and the text is cut to a character limit.
//! - Calls that may change something (every method but GET and HEAD) ask first by default.

mod config;
mod request;
mod response;

pub use config::{
    DEFAULT_MAX_CHARS, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_SECS, HttpToolConfig, HttpToolError,
    MAX_RESPONSE_BYTES, MAX_TIMEOUT_SECS, METHODS, is_tool_name,
};
pub use request::encode_component;

use crate::web::net::{GuardedResolver as Guard, ResolveError as GuardError, find_resolve_error};
use crate::web::{AddressPolicy, Blocked, Resolver, StandardPolicy, SystemResolver};
use config::Compiled;
use futures::FutureExt;
use futures::future::BoxFuture;
use request::{Built, Masker};
use response::{Kind, ReadError};
use serde_json::Value;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::tool::{SecretValue, Secrets};
use switchboard_core::{Tool, ToolContext, ToolDef, ToolError, ToolOutput, ToolSource};
use url::{Host, Url};

/// Redirects followed (GET and HEAD only) before giving up.
pub const MAX_REDIRECTS: usize = 5;
/// Bytes of an error answer read for its excerpt.
const ERROR_BODY_BYTES: u64 = 64 * 1024;
/// Where the person adds keys, for messages.
const KEYS_PAGE: &str = "Settings → Keys";

/// What the editor's "try it" shows: the request as sent (keys masked) and what came back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TryReport {
    /// The request, as [`HttpTool::preview`] shows it; the error's text when it could not be
    /// built.
    pub request: String,
    /// The tool's output, or its error's text.
    pub outcome: Result<String, String>,
}

/// An HTTP API tool, ready to call.
pub struct HttpTool {
    config: HttpToolConfig,
    compiled: Compiled,
    def: ToolDef,
    policy: Arc<dyn AddressPolicy>,
    guard: Arc<Guard>,
    client: tokio::sync::OnceCell<reqwest::Client>,
}

impl std::fmt::Debug for HttpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTool")
            .field("name", &self.config.name)
            .field("url", &self.config.url)
            .finish_non_exhaustive()
    }
}

impl HttpTool {
    /// The tool for `config`, with the standard address policy (local addresses only when the
    /// definition allows them) and the system resolver. Fails when the definition does not pass
    /// [`HttpToolConfig::check`].
    pub fn new(config: HttpToolConfig) -> Result<HttpTool, HttpToolError> {
        let policy = StandardPolicy { allow_local_addresses: config.allow_local_addresses };
        Self::with_network(config, Arc::new(SystemResolver), Arc::new(policy))
    }

    /// The tool with another resolver and address policy (tests map names to local servers
    /// with these). The definition's `allowLocalAddresses` is then up to `policy`.
    pub fn with_network(
        mut config: HttpToolConfig,
        resolver: Arc<dyn Resolver>,
        policy: Arc<dyn AddressPolicy>,
    ) -> Result<HttpTool, HttpToolError> {
        config.method = config.method_upper();
        let compiled = config.compile()?;
        let mut def = ToolDef::new(config.name.clone(), config.description.clone(), compiled.parameters.clone());
        def.source = ToolSource::Http;
        def.approval = config.effective_approval();
        def.example_output = config.example_output.clone();
        // The loop's limit must not cut a call before the tool's own, clearer, one.
        def.timeout = Some(Duration::from_secs(config.effective_timeout_secs() + 5));
        Ok(HttpTool {
            guard: Arc::new(Guard { resolver, policy: policy.clone() }),
            policy,
            config,
            compiled,
            def,
            client: tokio::sync::OnceCell::new(),
        })
    }

    /// The same tool, shown as coming from `source` (an operation of an OpenAPI document).
    pub fn with_source(mut self, source: ToolSource) -> Self {
        self.def.source = source;
        self
    }

    /// The definition (method in upper case).
    pub fn config(&self) -> &HttpToolConfig {
        &self.config
    }

    /// The origin every call goes to, as in `https://api.example.com`.
    pub fn origin(&self) -> String {
        self.compiled.origin.ascii_serialization()
    }

    /// The exact request `args` make, as text, with every key shown as `[secret NAME]`: the
    /// method and full URL, one header a line, a blank line and the body. For the approval
    /// dialog and the editor's "try it". Reads the keys, so a missing one is reported here.
    pub fn preview(&self, args: &Value, secrets: &dyn Secrets) -> Result<String, ToolError> {
        let keys = self.read_secrets(secrets)?;
        let (masker, built) = self.build(args, &keys).map_err(|(m, e)| m.mask_error(e))?;
        Ok(masker.mask(&built.text()))
    }

    /// Runs one call with a context of its own (no loop, no cancellation) and reports the
    /// request with the result, for the editor's "try it".
    pub async fn try_it(&self, args: Value, secrets: Arc<dyn Secrets>) -> TryReport {
        let request = match self.preview(&args, &*secrets) {
            Ok(text) => text,
            Err(e) => return TryReport { request: e.to_string(), outcome: Err(e.to_string()) },
        };
        let outcome = self.call(args, ToolContext::detached(secrets)).await.map(|o| o.text).map_err(|e| e.to_string());
        TryReport { request, outcome }
    }

    /// The request for `args` with the keys given, and the masker for those keys. On error the
    /// masker comes along, so the message can be masked too.
    fn build(&self, args: &Value, keys: &[(String, SecretValue)]) -> Result<(Masker, Built), (Masker, ToolError)> {
        let mut masker = Masker::default();
        for (name, value) in keys {
            masker.add(name, value.expose());
        }
        let lookup =
            |name: &str| keys.iter().find(|(n, _)| n == name).map(|(_, v)| v.expose().to_owned()).unwrap_or_default();
        match request::build(&self.tool_label(), &self.compiled, args, &lookup) {
            Ok(built) => Ok((masker, built)),
            Err(e) => Err((masker, e)),
        }
    }

    fn tool_label(&self) -> String {
        format!("the HTTP tool '{}'", self.config.name)
    }

    /// Every key the definition uses, read from `secrets`.
    fn read_secrets(&self, secrets: &dyn Secrets) -> Result<Vec<(String, SecretValue)>, ToolError> {
        read_keys(&self.config.name, self.config.secrets(), secrets)
    }

    /// The client, built on first use. No proxy (a proxy would resolve names itself and bypass
    /// the address check) and no automatic redirects (each hop is checked here).
    async fn client(&self) -> Result<&reqwest::Client, ToolError> {
        let timeout = Duration::from_secs(self.config.effective_timeout_secs());
        self.client
            .get_or_try_init(|| async {
                reqwest::Client::builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .no_proxy()
                    .dns_resolver(self.guard.clone())
                    .connect_timeout(timeout.min(Duration::from_secs(10)))
                    .user_agent(concat!("Switchboard/", env!("CARGO_PKG_VERSION"), " (HTTP tool)"))
                    .build()
            })
            .await
            .map_err(|e| ToolError::Failed(format!("The HTTP tool could not set up HTTP: {}.", response::describe(&e))))
    }

    fn blocked(&self, url: &Url, blocked: &Blocked) -> ToolError {
        ToolError::Failed(format!(
            "Refused to call {url}: {blocked}. The HTTP tool '{}' only contacts public internet addresses, unless its \
             definition allows local addresses (allowLocalAddresses).",
            self.config.name
        ))
    }

    /// Checks what can be checked before connecting: the scheme, IP literals (as the WHATWG
    /// parser normalized them) and refused names such as `localhost`. Names are resolved and
    /// checked by the client's resolver when it connects.
    fn check_hop(&self, url: &Url) -> Result<(), ToolError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ToolError::Failed(format!(
                "The HTTP tool '{}' only calls http:// and https:// URLs, not {url}.",
                self.config.name
            )));
        }
        let refuse = |what: String, reason| self.blocked(url, &Blocked { what, reason });
        match url.host() {
            None => Err(ToolError::Failed(format!("{url} has no host."))),
            Some(Host::Ipv4(ip)) => self.policy.check_ip(IpAddr::V4(ip)).map_err(|r| refuse(ip.to_string(), r)),
            Some(Host::Ipv6(ip)) => self.policy.check_ip(IpAddr::V6(ip)).map_err(|r| refuse(ip.to_string(), r)),
            Some(Host::Domain(d)) => self.policy.check_name(d).map_err(|r| refuse(d.to_owned(), r)),
        }
    }

    fn request_error(&self, url: &Url, e: &reqwest::Error) -> ToolError {
        match find_resolve_error(e) {
            Some(GuardError::Blocked(b)) => self.blocked(url, b),
            Some(GuardError::Lookup(host, detail)) => {
                ToolError::Failed(format!("Could not find the server for {url}: {host}: {detail}."))
            }
            None if e.is_timeout() => ToolError::Failed(format!("Could not reach {url}: the connection timed out.")),
            None => ToolError::Failed(format!("Could not reach {url}: {}.", response::describe(e))),
        }
    }

    /// One call: keys, request, the hops, the answer; every message masked.
    async fn run(&self, args: Value, secrets: Arc<dyn Secrets>) -> Result<ToolOutput, ToolError> {
        // A keychain read may wait on an unlock prompt: off the async threads.
        let names = self.config.secrets();
        let keys = if names.is_empty() {
            Vec::new()
        } else {
            let tool = self.config.name.clone();
            tokio::task::spawn_blocking(move || read_keys(&tool, names, &*secrets)).await.map_err(|_| {
                ToolError::Failed(format!(
                    "The HTTP tool '{}' could not read its keys (the read was interrupted).",
                    self.config.name
                ))
            })??
        };
        let (masker, built) = self.build(&args, &keys).map_err(|(m, e)| m.mask_error(e))?;
        let limit = Duration::from_secs(self.config.effective_timeout_secs());
        let result = match tokio::time::timeout(limit, self.send(built, !keys.is_empty())).await {
            Ok(r) => r,
            Err(_) => Err(ToolError::Failed(format!(
                "The HTTP tool '{}' gave up after {} s: the API did not answer in time.",
                self.config.name,
                limit.as_secs()
            ))),
        };
        match result {
            Ok(text) => {
                Ok(ToolOutput::text(response::limit_output(&masker.mask(&text), self.config.effective_max_chars())))
            }
            Err(e) => Err(masker.mask_error(e)),
        }
    }

    /// Sends `built`, following redirects by hand, and reads the answer.
    async fn send(&self, built: Built, carries_key: bool) -> Result<String, ToolError> {
        let client = self.client().await?;
        let origin = &self.compiled.origin;
        let mut url = built.url.clone();
        let mut redirects = 0;
        let response = loop {
            self.check_hop(&url)?;
            let mut request = client.request(built.method.clone(), url.clone());
            for (shown, name, value, sensitive) in &built.headers {
                let mut value = reqwest::header::HeaderValue::from_bytes(value.as_bytes()).map_err(|_| {
                    ToolError::InvalidArguments(format!("the header '{shown}' would not be a valid header value"))
                })?;
                value.set_sensitive(*sensitive);
                request = request.header(name.clone(), value);
            }
            if let Some(body) = &built.body {
                request = request.body(body.clone());
            }
            let response = request.send().await.map_err(|e| self.request_error(&url, &e))?;
            let status = response.status();
            if !status.is_redirection() || status == reqwest::StatusCode::NOT_MODIFIED {
                break response;
            }
            let Some(next) = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|loc| url.join(loc.trim()).ok())
            else {
                break response;
            };
            if !matches!(built.method, reqwest::Method::GET | reqwest::Method::HEAD) {
                return Err(ToolError::Failed(format!(
                    "The API answered {status} with a redirect to {next}; the HTTP tool '{}' follows redirects only for \
                     GET and HEAD, so the {} request was not sent again.",
                    self.config.name, built.method
                )));
            }
            if carries_key && next.origin() != *origin {
                return Err(ToolError::Failed(format!(
                    "The API redirected the request to {}; the HTTP tool '{}' did not follow, because the key for {} \
                     is never sent elsewhere.",
                    next.origin().ascii_serialization(),
                    self.config.name,
                    origin.ascii_serialization()
                )));
            }
            redirects += 1;
            if redirects > MAX_REDIRECTS {
                return Err(ToolError::Failed(format!(
                    "The HTTP tool '{}' gave up after {MAX_REDIRECTS} redirects (the last one to {next}).",
                    self.config.name
                )));
            }
            url = next;
        };
        self.read_answer(response, &url, built.method == reqwest::Method::HEAD).await
    }

    /// The answer as the model reads it, or the error it becomes.
    async fn read_answer(&self, response: reqwest::Response, url: &Url, head: bool) -> Result<String, ToolError> {
        let status = response.status();
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        let network = |detail: String| ToolError::Failed(format!("Could not read the answer from {url}: {detail}."));
        if !status.is_success() {
            let ct = content_type.clone().unwrap_or_default();
            let body = match response::read_limited(response, ERROR_BODY_BYTES).await {
                Ok(body) => response::excerpt(&body, &ct),
                Err(_) => String::new(),
            };
            let mut message = if body.is_empty() {
                format!("The API answered {status}.")
            } else {
                format!("The API answered {status}: {body}")
            };
            let keys = self.config.secrets();
            if matches!(status.as_u16(), 401 | 403) && !keys.is_empty() {
                message.push_str(&format!(" Check the key '{}' in {KEYS_PAGE}.", keys.join("', '")));
            }
            return Err(ToolError::Failed(message));
        }
        if head {
            let mut out = format!("HTTP {status}");
            for (name, value) in response.headers() {
                out.push_str(&format!("\n{name}: {}", String::from_utf8_lossy(value.as_bytes())));
            }
            return Ok(out);
        }
        let max = self.config.effective_max_response_bytes();
        let body = match response::read_limited(response, max).await {
            Ok(body) => body,
            Err(ReadError::TooLarge) => {
                return Err(ToolError::Failed(format!(
                    "The response is larger than the limit of {} (maxResponseBytes) of the HTTP tool '{}'; ask the \
                     API for less (a filter, a smaller page), or raise the limit (up to {}).",
                    response::size_text(max),
                    self.config.name,
                    response::size_text(MAX_RESPONSE_BYTES)
                )));
            }
            Err(ReadError::Network(detail)) => return Err(network(detail)),
        };
        if body.is_empty() {
            return Ok(format!("The API answered {status} with no content."));
        }
        let ct = content_type.clone().unwrap_or_default();
        let kind = match &content_type {
            Some(ct) => response::kind_of(ct),
            None => response::sniff(&body),
        };
        let Some(kind) = kind else {
            let what = content_type.map(|c| response::essence(&c)).unwrap_or_else(|| "binary data".into());
            return Err(ToolError::Failed(format!(
                "The API answered with {what}, which the HTTP tool '{}' cannot read: it reads JSON and text.",
                self.config.name
            )));
        };
        let text = response::decode(&body, &ct);
        let pointer = self.config.response_pointer.as_deref().unwrap_or("");
        let json = match kind {
            Kind::Json => serde_json::from_str::<Value>(&text).ok(),
            Kind::Html | Kind::Text => None,
        };
        match json {
            Some(value) => {
                let picked = response::pick(&value, pointer).map_err(ToolError::Failed)?;
                Ok(serde_json::to_string_pretty(picked).unwrap_or_default())
            }
            None if !pointer.is_empty() => Err(ToolError::Failed(format!(
                "The HTTP tool '{}' has the responsePointer {pointer}, but the API answered with {}, not JSON.",
                self.config.name,
                if ct.is_empty() { "text".to_owned() } else { response::essence(&ct) }
            ))),
            None => Ok(text),
        }
    }
}

/// The keys `names` of the tool `tool`, read from `secrets`; a missing one says where to add it.
fn read_keys(tool: &str, names: Vec<String>, secrets: &dyn Secrets) -> Result<Vec<(String, SecretValue)>, ToolError> {
    names
        .into_iter()
        .map(|name| match secrets.get(&name) {
            Ok(Some(value)) if !value.expose().is_empty() => Ok((name, value)),
            Ok(_) => Err(ToolError::MissingSecret(format!(
                "The HTTP tool '{tool}' needs the key '{name}': add it in {KEYS_PAGE}."
            ))),
            Err(why) => Err(ToolError::Failed(format!(
                "The HTTP tool '{tool}' could not read the key '{name}': {why}. Unlock your system keychain, then try again."
            ))),
        })
        .collect()
}

impl Tool for HttpTool {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        async move {
            tokio::select! {
                r = self.run(args, ctx.secrets.clone()) => r,
                _ = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
            }
        }
        .boxed()
    }

    /// The request with keys shown by name, without reading them (pure).
    fn preview(&self, args: &Value) -> Option<String> {
        let names = self.config.secrets();
        let stand_ins: Vec<(String, SecretValue)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), SecretValue::new(format!("__switchboard_secret_{i}__"))))
            .collect();
        let (masker, built) = self.build(args, &stand_ins).ok()?;
        Some(masker.mask(&built.text()))
    }

    /// A call that may change something (every method but GET and HEAD) sends its request to
    /// the tool's host: the person chose that host, but a write there can still publish what it
    /// carries (a public issue, a shared channel), so after untrusted content it asks. Reads
    /// of the person's own API declare nothing.
    fn egress(&self, args: &Value) -> Option<switchboard_core::Egress> {
        if matches!(self.config.method.as_str(), "GET" | "HEAD") {
            return None;
        }
        let destination = match self.compiled.origin.clone() {
            url::Origin::Tuple(_, host, _) => switchboard_core::egress::normal_host(&host.to_string()),
            opaque => opaque.ascii_serialization(),
        };
        let sends = Tool::preview(self, args)
            .unwrap_or_else(|| format!("{} {} with {args}", self.config.method, self.origin()));
        Some(switchboard_core::Egress { destination, sends })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_core::ApprovalPolicy;

    struct Keys(Vec<(&'static str, &'static str)>);

    impl Secrets for Keys {
        fn get(&self, name: &str) -> Result<Option<SecretValue>, String> {
            Ok(self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| SecretValue::new(*v)))
        }
    }

    fn tool() -> HttpTool {
        let mut c = HttpToolConfig::new(
            "create_item",
            "Create an item.",
            "https://api.example.com/v1/{{list}}/items?sig={{secret:sig}}",
        );
        c.method = "post".into();
        c.headers.insert("Authorization".into(), "Bearer {{secret:api_key}}".into());
        c.body = Some(json!({"name": "{{name}}", "n": "{{n}}"}));
        c.parameters =
            Some(json!({"type": "object", "properties": {"list": {}, "name": {}, "n": {"type": "integer"}}}));
        HttpTool::new(c).unwrap()
    }

    #[test]
    fn the_definition_the_model_sees() {
        let t = tool();
        let def = t.def();
        assert_eq!(def.name, "create_item");
        assert_eq!(def.source, ToolSource::Http);
        assert_eq!(def.approval, ApprovalPolicy::Ask);
        assert_eq!(def.timeout, Some(Duration::from_secs(DEFAULT_TIMEOUT_SECS + 5)));
        assert_eq!(t.config().method, "POST");
        assert_eq!(t.origin(), "https://api.example.com");
        let get = HttpTool::new(HttpToolConfig::new("g", "d", "https://x.test/{{a}}")).unwrap();
        assert_eq!(get.def().approval, ApprovalPolicy::Auto);
        assert_eq!(get.def().parameters["required"], json!(["a"]));
    }

    #[test]
    fn previews_show_the_exact_request_with_keys_masked() {
        let t = tool();
        let args = json!({"list": "my list", "name": "Milk", "n": 2});
        let keys = Keys(vec![("api_key", "sk-live-123456"), ("sig", "s+g/1")]);
        let text = t.preview(&args, &keys).unwrap();
        assert_eq!(
            text,
            "POST https://api.example.com/v1/my%20list/items?sig=[secret sig]\n\
             Authorization: Bearer [secret api_key]\n\
             Accept: application/json, text/plain;q=0.9, */*;q=0.1\n\
             Content-Type: application/json\n\n\
             {\"n\":2,\"name\":\"Milk\"}"
        );
        assert!(!text.contains("sk-live") && !text.contains("s%2Bg"));
        // The loop's preview does not read keys, and says the same.
        assert_eq!(Tool::preview(&t, &args).unwrap(), text);
        // A write sends that request to the tool's host: its egress, keys still masked.
        let egress = Tool::egress(&t, &args).expect("a POST declares its egress");
        assert_eq!((egress.destination.as_str(), egress.sends.as_str()), ("api.example.com", text.as_str()));
        assert!(Tool::untrusted_output(&t), "what an HTTP API returns is untrusted");
        let read = HttpTool::new(HttpToolConfig::new("list", "List.", "https://api.example.com/v1/items")).unwrap();
        assert_eq!(Tool::egress(&read, &json!({})), None, "a read of the person's own API sends nothing new");
        let e = t.preview(&args, &Keys(vec![("sig", "x")])).unwrap_err();
        assert_eq!(
            e,
            ToolError::MissingSecret(
                "The HTTP tool 'create_item' needs the key 'api_key': add it in Settings → Keys.".into()
            )
        );
    }
}
