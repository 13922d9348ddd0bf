//! Where a remote server's requests may go: the MCP endpoint itself and every request its OAuth
//! sign-in makes (discovery, registration, token, refresh), which the server's metadata chooses.
//!
//! The rule is `switchboard-net`'s address policy, judged on the addresses actually connected
//! to ([`switchboard_net::GuardedResolver`] is every client's DNS resolver, IP literals are
//! checked before sending, and no proxy resolves names behind its back), with one allowance: a
//! server whose URL *names* this computer or a private network (`localhost`, `127.0.0.1`,
//! `10.0.0.5`) is a local server the person chose, and may use local addresses (never the cloud
//! metadata service or another link-local address: [`LocalNetworkPolicy`]). A server named
//! by a host name is on the internet, whatever its DNS answers, so neither its own name nor
//! anything its metadata names may reach this computer or the person's network.
//!
//! Invariant: every reqwest client this crate sends with comes from `Reach`, and so does the
//! OAuth HTTP client rmcp's sign-in runs on (`Reach::oauth_http`).

use futures::StreamExt as _;
use rmcp::transport::auth::{OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_net::{
    AddressPolicy, Blocked, GuardedResolver, LocalNetworkPolicy, ResolveError, Resolver, StandardPolicy,
    SystemResolver, check_url, find_resolve_error, names_local_address,
};
use url::Url;

/// The most an OAuth answer (metadata, a token) may be; rmcp's own limit.
const MAX_OAUTH_BODY: usize = 1024 * 1024;
/// How long one OAuth request may take.
const OAUTH_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects an OAuth request may follow (each one checked).
const MAX_OAUTH_REDIRECTS: usize = 5;

/// How remote servers are reached: the resolver, and the policy for servers on the internet.
/// The default is the system's resolver and public internet addresses only; tests inject a
/// resolver that maps public-looking names to local test servers.
#[derive(Clone)]
pub struct Network {
    /// Turns host names into addresses.
    pub resolver: Arc<dyn Resolver>,
    /// Judges every address a server on the internet (or its metadata) leads to.
    pub policy: Arc<dyn AddressPolicy>,
}

impl Default for Network {
    fn default() -> Self {
        Self { resolver: Arc::new(SystemResolver), policy: Arc::new(StandardPolicy::default()) }
    }
}

/// One remote server's reach: its policy, the clients that obey it, and the last refusal (so a
/// failure rmcp words vaguely can be told exactly).
#[derive(Clone)]
pub(crate) struct Reach {
    policy: Arc<dyn AddressPolicy>,
    guard: Arc<Recording>,
}

impl Reach {
    /// The reach of the server at `server_url`.
    pub(crate) fn new(server_url: &str, network: &Network) -> Reach {
        let parsed = Url::parse(server_url).ok();
        let local = parsed.as_ref().is_some_and(names_local_address);
        let policy: Arc<dyn AddressPolicy> =
            if local { Arc::new(LocalNetworkPolicy) } else { Arc::clone(&network.policy) };
        let server = parsed.map(|u| u.origin().ascii_serialization()).unwrap_or_else(|| server_url.to_owned());
        let guard = Recording {
            guard: GuardedResolver { resolver: Arc::clone(&network.resolver), policy: Arc::clone(&policy) },
            refused: Arc::default(),
            server: Server { origin: server, local },
        };
        Reach { policy, guard: Arc::new(guard) }
    }

    /// `url` may be sent to, as far as can be told before connecting (its literal or name).
    pub(crate) fn check(&self, url: &Url) -> Result<(), String> {
        check_url(&*self.policy, url).map_err(|b| self.guard.refuse(&b))
    }

    /// The last request refused since this reach was made, in words.
    pub(crate) fn refusal(&self) -> Option<String> {
        self.guard.refused.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A client for the server's own endpoint: the guarded resolver, no proxy, no redirects (a
    /// header, a key or a token, must never follow a request elsewhere).
    pub(crate) fn client(&self) -> Result<reqwest::Client, String> {
        self.builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("could not set up HTTP: {e}"))
    }

    fn builder(&self) -> reqwest::ClientBuilder {
        reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(Arc::clone(&self.guard))
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("Switchboard/", env!("CARGO_PKG_VERSION")))
    }

    /// The HTTP client rmcp's sign-in runs on: every request and every redirect hop checked.
    pub(crate) fn oauth_http(&self) -> Result<Arc<dyn OAuthHttpClient>, String> {
        let policy = Arc::clone(&self.policy);
        let guard = Arc::clone(&self.guard);
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if let Err(blocked) = check_url(&*policy, attempt.url()) {
                let why = guard.refuse(&blocked);
                attempt.error(Refused(why))
            } else if attempt.previous().len() > MAX_OAUTH_REDIRECTS {
                attempt.error(Refused(format!("more than {MAX_OAUTH_REDIRECTS} redirects")))
            } else {
                attempt.follow()
            }
        });
        let build = |redirect| {
            self.builder()
                .redirect(redirect)
                .timeout(OAUTH_TIMEOUT)
                .build()
                .map_err(|e| format!("could not set up HTTP: {e}"))
        };
        Ok(Arc::new(OAuthHttp {
            reach: self.clone(),
            follow: build(follow)?,
            stop: build(reqwest::redirect::Policy::none())?,
        }))
    }

    /// A request error in words: the refusal when the policy refused it.
    fn error(&self, url: &Url, e: &reqwest::Error) -> String {
        let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(err) = cur {
            if let Some(Refused(why)) = err.downcast_ref::<Refused>() {
                return why.clone();
            }
            cur = err.source();
        }
        match find_resolve_error(e) {
            Some(ResolveError::Blocked(b)) => self.guard.refuse(b),
            Some(other) => format!("{url}: {other}"),
            None => format!("{url}: {}", describe(e)),
        }
    }
}

/// The guarded resolver, remembering what it refused (rmcp turns a failed request into a vague
/// message; the person is told this instead).
struct Recording {
    guard: GuardedResolver,
    refused: Arc<Mutex<Option<String>>>,
    server: Server,
}

impl Recording {
    fn refuse(&self, blocked: &Blocked) -> String {
        record(&self.refused, &self.server, blocked)
    }
}

/// Puts a refusal in words and keeps it as the last one.
fn record(slot: &Mutex<Option<String>>, server: &Server, blocked: &Blocked) -> String {
    let why = if server.local {
        format!("refused to connect: {blocked}, which no request made for the MCP server {} may reach", server.origin)
    } else {
        format!(
            "refused to connect: {blocked}. The MCP server {} has an internet address, so no request made for \
             it (its own, or one its sign-in metadata points to) may reach this computer or a private network. A \
             server on this computer or your network is used by writing its address in its URL \
             (http://127.0.0.1:8080/mcp)",
            server.origin
        )
    };
    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
    why
}

/// Which server a refusal was for, in words.
#[derive(Clone)]
struct Server {
    origin: String,
    /// Its URL names a local address.
    local: bool,
}

impl reqwest::dns::Resolve for Recording {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let guard =
            GuardedResolver { resolver: Arc::clone(&self.guard.resolver), policy: Arc::clone(&self.guard.policy) };
        let (slot, server) = (Arc::clone(&self.refused), self.server.clone());
        Box::pin(async move {
            match guard.resolve_checked(&host).await {
                // Port 0: the client puts the URL's port in.
                Ok(ips) => {
                    Ok(Box::new(ips.into_iter().map(|ip| std::net::SocketAddr::new(ip, 0))) as reqwest::dns::Addrs)
                }
                Err(e) => {
                    if let ResolveError::Blocked(b) = &e {
                        record(&slot, &server, b);
                    }
                    Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>)
                }
            }
        })
    }
}

/// A request refused by the policy (a redirect hop), in words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Refused(String);

/// rmcp's OAuth requests, on clients that obey the reach.
struct OAuthHttp {
    reach: Reach,
    follow: reqwest::Client,
    stop: reqwest::Client,
}

impl OAuthHttpClient for OAuthHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let client = match request.redirect_policy {
                OAuthHttpRedirectPolicy::Stop => &self.stop,
                _ => &self.follow,
            };
            let request = reqwest::Request::try_from(request.request)?;
            let url = request.url().clone();
            self.reach.check(&url).map_err(Refused)?;
            let response = client.execute(request).await.map_err(|e| Refused(self.reach.error(&url, &e)))?;
            let mut builder = http::Response::builder().status(response.status()).version(response.version());
            for (name, value) in response.headers() {
                builder = builder.header(name, value);
            }
            let mut body = Vec::new();
            let mut chunks = response.bytes_stream();
            while let Some(chunk) = chunks.next().await {
                let chunk = chunk.map_err(|e| Refused(self.reach.error(&url, &e)))?;
                if body.len() + chunk.len() > MAX_OAUTH_BODY {
                    return Err(Refused(format!("{url} answered with more than {} KiB", MAX_OAUTH_BODY / 1024)).into());
                }
                body.extend_from_slice(&chunk);
            }
            Ok(builder.body(body)?)
        })
    }
}

/// reqwest's error with its causes (its own text is generic: "error sending request").
fn describe(e: &reqwest::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    parts.join(": ")
}
