//! Where a remote server's requests may go: the MCP endpoint itself and every request its OAuth
//! sign-in makes (discovery, registration, token, refresh), which the server's metadata chooses.
//!
//! Who chose the destination decides. The server's own host is the person's choice, so it may
//! be wherever it resolves, a private network included, but pinned against DNS rebinding: the
//! first time its name resolves in this run decides its class, *local* (every address on this
//! computer or a private network) or *public*, and a later answer of the other class is refused.
//! Every other host (the ones its metadata names) must resolve to public internet addresses,
//! unless the server is local (its URL names a local address, such as `127.0.0.1` or
//! `localhost`, or its host was pinned local). Link-local addresses (the cloud metadata service)
//! and the other special ranges are never reached ([`LocalNetworkPolicy`]).
//!
//! Checked on the addresses actually connected to: [`Recording`] is every client's DNS resolver,
//! IP literals are checked before sending, and no proxy is used (a proxy resolves names itself,
//! so its addresses could not be checked; a person behind one is told so: `Reach::proxy_note`).
//!
//! Invariant: every reqwest client this crate sends with comes from `Reach`, and so does the
//! OAuth HTTP client rmcp's sign-in runs on (`Reach::oauth_http`).

use futures::StreamExt as _;
use rmcp::transport::auth::{OAuthHttpClient, OAuthHttpClientFuture, OAuthHttpRedirectPolicy, OAuthHttpRequest};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_net::{
    AddressPolicy, Blocked, LocalNetworkPolicy, ResolveError, Resolver, StandardPolicy, SystemResolver,
    check_addresses, check_url, find_resolve_error, names_local_address,
};
use url::Url;

/// The most an OAuth answer (metadata, a token) may be; rmcp's own limit.
const MAX_OAUTH_BODY: usize = 1024 * 1024;
/// How long one OAuth request may take.
const OAUTH_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects an OAuth request may follow (each one checked).
const MAX_OAUTH_REDIRECTS: usize = 5;

/// How remote servers are reached: the resolver, the policy for public servers, and the class
/// each server host was pinned to. The default is the system's resolver and public internet
/// addresses only; tests inject a resolver that maps names to local test servers.
#[derive(Clone)]
pub struct Network {
    /// Turns host names into addresses.
    pub resolver: Arc<dyn Resolver>,
    /// Judges every address a public server (or its metadata) leads to. An address it refuses
    /// but [`LocalNetworkPolicy`] allows is a local one.
    pub policy: Arc<dyn AddressPolicy>,
    /// Server host name → its class, from its first resolution (shared by every clone; the
    /// default network's is the whole run's).
    pins: Arc<Mutex<HashMap<String, Class>>>,
}

impl Network {
    /// Servers reached through `resolver`, public ones judged by `policy`, with pins of their own.
    pub fn new(resolver: Arc<dyn Resolver>, policy: Arc<dyn AddressPolicy>) -> Network {
        Network { resolver, policy, pins: Arc::default() }
    }
}

/// The app's pins: one map for the whole run, so a server entry made again (edited, reloaded)
/// keeps its host's first answer.
static PINS: std::sync::LazyLock<Arc<Mutex<HashMap<String, Class>>>> = std::sync::LazyLock::new(Arc::default);

impl Default for Network {
    /// The system's resolver, public internet addresses, and the run's pins.
    fn default() -> Self {
        let resolver: Arc<dyn Resolver> = Arc::new(SystemResolver);
        Network { resolver, policy: Arc::new(StandardPolicy::default()), pins: Arc::clone(&PINS) }
    }
}

/// What a server's host resolved to the first time in this run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// Only this computer or private networks.
    Local,
    /// The internet (any public address).
    Public,
}

/// A server's view of the network: which addresses its requests may reach.
struct ServerPolicy {
    /// The policy for public servers.
    public: Arc<dyn AddressPolicy>,
    /// Its URL names a local address.
    named_local: bool,
    /// Its host name (lower case, no trailing dot), when the URL names one.
    host: Option<String>,
    pins: Arc<Mutex<HashMap<String, Class>>>,
}

impl ServerPolicy {
    /// The server is on this computer or the person's network: by its URL, or by its host's
    /// pinned first resolution.
    fn local(&self) -> bool {
        self.named_local || self.pinned() == Some(Class::Local)
    }

    fn pinned(&self) -> Option<Class> {
        let host = self.host.as_ref()?;
        self.pins.lock().unwrap_or_else(|p| p.into_inner()).get(host).copied()
    }

    /// Whether `host` is the server's own host name.
    fn is_own(&self, host: &str) -> bool {
        self.host.as_deref() == Some(normalize(host).as_str())
    }

    /// Checks the addresses `host` resolved to, and gives the ones the client may connect to.
    /// The server's own name (when its URL does not name a local address) is judged by its
    /// pinned class, pinning it on first sight: local when no address is public. A local name's
    /// link-local addresses (`pi.local` often has an `fe80::` one too) are left out, not used.
    fn check_resolved(&self, host: &str, ips: Vec<IpAddr>) -> Result<Vec<IpAddr>, Blocked> {
        if self.named_local || !self.is_own(host) {
            return check_addresses(self, host, &ips).map(|()| ips);
        }
        let first = if ips.iter().all(|ip| self.public.check_ip(*ip).is_err()) { Class::Local } else { Class::Public };
        let class = *self.pins.lock().unwrap_or_else(|p| p.into_inner()).entry(normalize(host)).or_insert(first);
        match class {
            Class::Public => check_addresses(&*self.public, host, &ips).map(|()| ips),
            Class::Local => {
                let stays = StaysLocal(&*self.public);
                // A public address now: the name changed sides.
                let public: Vec<IpAddr> = ips.iter().copied().filter(|ip| self.public.check_ip(*ip).is_ok()).collect();
                check_addresses(&stays, host, &public)?;
                // Never-reached addresses (link-local) are left out; refused when nothing is left.
                let usable: Vec<IpAddr> = ips.iter().copied().filter(|ip| stays.check_ip(*ip).is_ok()).collect();
                if usable.is_empty() {
                    check_addresses(&stays, host, &ips)?;
                }
                Ok(usable)
            }
        }
    }
}

/// A request for anything other than the server's own host name (and every IP literal).
impl AddressPolicy for ServerPolicy {
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        if self.local() { LocalNetworkPolicy.check_ip(ip) } else { self.public.check_ip(ip) }
    }

    fn check_name(&self, host: &str) -> Result<(), &'static str> {
        if self.local() { LocalNetworkPolicy.check_name(host) } else { self.public.check_name(host) }
    }
}

/// A host pinned local: a public address now means its DNS answer changed class.
struct StaysLocal<'a>(&'a dyn AddressPolicy);

impl AddressPolicy for StaysLocal<'_> {
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        if self.0.check_ip(ip).is_ok() {
            return Err("a public internet address, but the server's name resolved only to local addresses \
                        earlier in this run (a name that changes sides is how DNS rebinding works; after \
                        changing networks, such as a VPN, restart Switchboard)");
        }
        LocalNetworkPolicy.check_ip(ip)
    }
}

fn normalize(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// One remote server's reach: its policy, the clients that obey it, and the last refusal (so a
/// failure rmcp words vaguely can be told exactly).
#[derive(Clone)]
pub(crate) struct Reach {
    guard: Arc<Recording>,
}

impl Reach {
    /// The reach of the server at `server_url`.
    pub(crate) fn new(server_url: &str, network: &Network) -> Reach {
        let parsed = Url::parse(server_url).ok();
        let named_local = parsed.as_ref().is_some_and(names_local_address);
        let host = parsed.as_ref().and_then(|u| u.domain()).map(normalize);
        let origin = parsed.map(|u| u.origin().ascii_serialization()).unwrap_or_else(|| server_url.to_owned());
        let policy =
            ServerPolicy { public: Arc::clone(&network.policy), named_local, host, pins: Arc::clone(&network.pins) };
        let guard = Recording {
            resolver: Arc::clone(&network.resolver),
            policy: Arc::new(policy),
            refused: Arc::default(),
            origin,
        };
        Reach { guard: Arc::new(guard) }
    }

    /// `url` may be sent to, as far as can be told before connecting (its literal or name).
    pub(crate) fn check(&self, url: &Url) -> Result<(), String> {
        check_url(&*self.guard.policy, url).map_err(|b| self.guard.refuse(&b))
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
        let guard = Arc::clone(&self.guard);
        let follow = reqwest::redirect::Policy::custom(move |attempt| {
            if let Err(blocked) = check_url(&*guard.policy, attempt.url()) {
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
        let note = self.proxy_note(e);
        match find_resolve_error(e) {
            Some(ResolveError::Blocked(b)) => self.guard.refuse(b),
            Some(other) => format!("{url}: {other}{note}"),
            None => format!("{url}: {}{note}", describe(e)),
        }
    }

    /// What to add to a failure to reach a server that is not local when a proxy is set: that
    /// the proxy is not used, and why. Empty otherwise.
    pub(crate) fn proxy_note(&self, e: &(dyn std::error::Error + 'static)) -> String {
        if self.guard.policy.local() || !unreachable(e) {
            return String::new();
        }
        proxy_words(|v| std::env::var(v).ok()).unwrap_or_default()
    }
}

/// Whether `e` (anywhere in its chain) is a failure to reach the host at all: DNS, connecting,
/// or a timeout, which is what a person behind a proxy sees.
fn unreachable(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(err) = cur {
        if let Some(r) = err.downcast_ref::<reqwest::Error>()
            && (r.is_connect() || r.is_timeout())
        {
            return true;
        }
        if let Some(ResolveError::Lookup(..)) = err.downcast_ref::<ResolveError>() {
            return true;
        }
        // rmcp keeps only the text of its transport's error: reqwest's words for a request that
        // got no answer.
        if err.to_string().contains("error sending request") {
            return true;
        }
        cur = err.source();
    }
    false
}

/// What a person with a proxy set (`HTTPS_PROXY` and the like, read through `var`) is told when
/// a remote server cannot be reached: it is never used, and why.
fn proxy_words(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let set = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
        .into_iter()
        .find(|v| var(v).is_some_and(|value| !value.trim().is_empty()))?;
    Some(format!(
        ". {set} is set, but Switchboard connects to MCP servers directly, never through a proxy (a proxy \
         chooses the addresses itself, so they could not be checked). If this network reaches the internet \
         only through that proxy, remote MCP servers cannot be used from it"
    ))
}

/// The guarded resolver, remembering what it refused (rmcp turns a failed request into a vague
/// message; the person is told this instead).
struct Recording {
    resolver: Arc<dyn Resolver>,
    policy: Arc<ServerPolicy>,
    refused: Arc<Mutex<Option<String>>>,
    /// The server's origin, in words.
    origin: String,
}

impl Recording {
    fn refuse(&self, blocked: &Blocked) -> String {
        record(&self.refused, &self.origin, self.policy.local(), blocked)
    }
}

/// Puts a refusal in words and keeps it as the last one.
fn record(slot: &Mutex<Option<String>>, origin: &str, local: bool, blocked: &Blocked) -> String {
    let why = if local {
        format!("refused to connect: {blocked}, which no request made for the MCP server {origin} may reach")
    } else {
        format!(
            "refused to connect: {blocked}. The MCP server {origin} has an internet address (the first address \
             its name resolved to in this run, or its URL), so no request made for it (its own, or one its \
             sign-in metadata points to) may reach this computer or a private network (after changing networks, \
             such as a VPN, restart Switchboard)"
        )
    };
    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(why.clone());
    why
}

impl reqwest::dns::Resolve for Recording {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let (resolver, policy) = (Arc::clone(&self.resolver), Arc::clone(&self.policy));
        let (slot, origin) = (Arc::clone(&self.refused), self.origin.clone());
        Box::pin(async move {
            let checked = async {
                if let Err(reason) = policy.check_name(&host) {
                    return Err(ResolveError::Blocked(Blocked { what: host.clone(), reason }));
                }
                let ips =
                    resolver.lookup(&host).await.map_err(|e| ResolveError::Lookup(host.clone(), e.to_string()))?;
                if ips.is_empty() {
                    return Err(ResolveError::Lookup(host.clone(), "no addresses".into()));
                }
                policy.check_resolved(&host, ips).map_err(ResolveError::Blocked)
            };
            match checked.await {
                // Port 0: the client puts the URL's port in.
                Ok(ips) => {
                    Ok(Box::new(ips.into_iter().map(|ip| std::net::SocketAddr::new(ip, 0))) as reqwest::dns::Addrs)
                }
                Err(e) => {
                    if let ResolveError::Blocked(b) = &e {
                        record(&slot, &origin, policy.local(), b);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn server(url: &str) -> Arc<ServerPolicy> {
        let network = Network::new(Arc::new(SystemResolver), Arc::new(StandardPolicy::default()));
        Arc::clone(&Reach::new(url, &network).guard.policy)
    }

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|ip| ip.parse().unwrap()).collect()
    }

    #[test]
    fn a_name_on_the_local_network_is_a_local_server_without_its_link_local_addresses() {
        let pi = server("http://pi.local:8000/mcp");
        assert_eq!(pi.check_resolved("pi.local", ips(&["192.168.1.20", "fe80::1"])), Ok(ips(&["192.168.1.20"])));
        assert!(pi.local());
        // What its metadata names may be on the local network too, never link-local.
        assert_eq!(pi.check_resolved("auth.lan", ips(&["10.0.0.9"])), Ok(ips(&["10.0.0.9"])));
        let err = pi.check_resolved("auth.lan", ips(&["169.254.169.254"])).unwrap_err();
        assert!(err.reason.starts_with("a link-local address"), "{err}");
        let err = pi.check_resolved("pi.local", ips(&["fe80::1"])).unwrap_err();
        assert!(err.reason.starts_with("a link-local address"), "{err}");
        // Rebinding to the internet is refused, naming the address.
        let err = pi.check_resolved("PI.local.", ips(&["10.0.0.3", "93.184.216.34"])).unwrap_err();
        assert_eq!(err.what, "PI.local. (which resolves to 93.184.216.34)");
        assert!(err.reason.starts_with("a public internet address"), "{err}");
    }

    #[test]
    fn a_public_server_stays_public_and_its_metadata_names_only_public_hosts() {
        let public = server("https://mcp.example.com/mcp");
        assert!(public.check_resolved("mcp.example.com", ips(&["93.184.216.34"])).is_ok());
        assert!(!public.local());
        let err = public.check_resolved("mcp.example.com", ips(&["127.0.0.1"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "mcp.example.com (which resolves to 127.0.0.1) is a loopback address (this computer)"
        );
        assert!(public.check_resolved("auth.example.com", ips(&["192.168.1.1"])).is_err());
        // A name with a public and a private address is public, and refused.
        let mixed = server("https://mixed.example.com/mcp");
        assert!(mixed.check_resolved("mixed.example.com", ips(&["93.184.216.34", "10.0.0.1"])).is_err());
        assert!(!mixed.local());
    }

    #[test]
    fn a_proxy_in_the_environment_is_named() {
        assert_eq!(proxy_words(|_| None), None);
        assert_eq!(proxy_words(|v| (v == "HTTPS_PROXY").then(|| " ".into())), None);
        let note = proxy_words(|v| (v == "https_proxy").then(|| "http://proxy:3128".into())).unwrap();
        assert!(note.contains("https_proxy is set") && note.contains("never through a proxy"), "{note}");
    }
}
