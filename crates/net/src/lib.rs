//! Which addresses the app may connect to, and how host names become addresses: the one policy
//! every outbound request whose destination someone other than the person chose is checked by
//! (`web_fetch`, HTTP and OpenAPI tools, OpenAPI documents by URL, remote MCP servers and their
//! OAuth sign-in).
//!
//! Why: a model that reads untrusted pages chooses `web_fetch`'s URL, and a server's metadata
//! chooses where its sign-in's requests go. Without a policy either could steer the app into
//! `http://192.168.1.1/` (the router), an intranet service, or the cloud metadata endpoint
//! `169.254.169.254` from the person's own machine (SSRF). So every hop is checked, by address,
//! after resolution:
//!
//! - IP literals are checked as the URL parser normalized them (`http://2130706433/`,
//!   `http://0x7f.1/`, `http://0177.0.0.1/` and `http://127.1/` are all `127.0.0.1` to a WHATWG
//!   parser, and to us): [`check_url`]. The HTTP client never resolves a literal, so this check
//!   is the only one it gets.
//! - Host names are resolved by us ([`Resolver`]), *every* address is checked, and the HTTP client
//!   connects only to the addresses that were checked ([`GuardedResolver`] is the client's DNS
//!   resolver), so a name cannot resolve to a public address for the check and to a private one
//!   for the connection (DNS rebinding).
//!
//! Invariant: a client built for such requests has [`GuardedResolver`] as its resolver, no proxy
//! (a proxy resolves names itself) and no redirect that [`check_url`] has not seen.
//!
//! Both the policy and the resolver are traits so tests can map a "public-looking" name to a local
//! test server while everything else keeps the real rules.

use futures::FutureExt;
use futures::future::BoxFuture;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Why an address or host is refused. Its text completes "… is …".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} is {reason}")]
pub struct Blocked {
    /// The host or address as the person would recognize it.
    pub what: String,
    /// The kind of address ("a loopback address (this computer)").
    pub reason: &'static str,
}

/// Decides whether a request may connect somewhere.
pub trait AddressPolicy: Send + Sync {
    /// `Err` with the reason when `ip` must not be contacted.
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str>;

    /// `Err` with the reason when a host name must be refused before resolving it. By default,
    /// `localhost` and `*.localhost` (RFC 6761: always loopback, whatever DNS says).
    fn check_name(&self, host: &str) -> Result<(), &'static str> {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host == "localhost" || host.ends_with(".localhost") { Err(LOOPBACK) } else { Ok(()) }
    }
}

/// The app's policy: only public internet addresses, unless the person allowed local ones.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StandardPolicy {
    /// Allow everything (Settings → Search & web tools → allow local addresses).
    pub allow_local_addresses: bool,
}

impl AddressPolicy for StandardPolicy {
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        if self.allow_local_addresses {
            return Ok(());
        }
        match non_public_reason(ip) {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    fn check_name(&self, host: &str) -> Result<(), &'static str> {
        if self.allow_local_addresses {
            return Ok(());
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host == "localhost" || host.ends_with(".localhost") { Err(LOOPBACK) } else { Ok(()) }
    }
}

/// A server the person set up on this computer or their network: this computer and private
/// networks are allowed too, but never a link-local address (the cloud metadata service),
/// multicast, broadcast or a reserved range, which no such server needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocalNetworkPolicy;

impl AddressPolicy for LocalNetworkPolicy {
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        match non_public_reason(ip) {
            None | Some(LOOPBACK | PRIVATE | CGNAT) => Ok(()),
            Some(reason) => Err(reason),
        }
    }

    fn check_name(&self, _host: &str) -> Result<(), &'static str> {
        Ok(())
    }
}

const LOOPBACK: &str = "a loopback address (this computer)";
const PRIVATE: &str = "a private network address";
const LINK_LOCAL: &str = "a link-local address (such as the cloud metadata service 169.254.169.254)";
const CGNAT: &str = "a carrier-grade NAT address (100.64.0.0/10)";
const UNSPECIFIED: &str = "an unspecified address (0.0.0.0 or ::)";
const MULTICAST: &str = "a multicast address";
const BROADCAST: &str = "the broadcast address";
const RESERVED: &str = "a reserved or documentation address that is not on the public internet";

/// Why `ip` is not a public internet address, or `None` when it is.
///
/// Covers loopback, private (RFC 1918, IPv6 ULA), link-local, CGNAT, unspecified, multicast,
/// broadcast and reserved/documentation ranges, and IPv6 forms that embed an IPv4 address
/// (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
/// `2002::/16`), which are judged by the IPv4 address inside.
pub fn non_public_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_unspecified() || a == 0 {
        return Some(UNSPECIFIED);
    }
    if ip.is_loopback() {
        return Some(LOOPBACK);
    }
    if ip.is_private() {
        return Some(PRIVATE);
    }
    if ip.is_link_local() {
        return Some(LINK_LOCAL);
    }
    if a == 100 && (64..128).contains(&b) {
        return Some(CGNAT);
    }
    if ip.is_broadcast() {
        return Some(BROADCAST);
    }
    if ip.is_multicast() {
        return Some(MULTICAST);
    }
    // IETF protocol assignments, TEST-NET-1/2/3, benchmarking, the deprecated 6to4 relay
    // anycast, and class E.
    let reserved = matches!(
        (a, b, c),
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) | (198, 18 | 19, _) | (192, 88, 99)
    ) || a >= 240;
    reserved.then_some(RESERVED)
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some(UNSPECIFIED);
    }
    if ip.is_loopback() {
        return Some(LOOPBACK);
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_reason(v4);
    }
    let s = ip.segments();
    // IPv4-compatible ::a.b.c.d (deprecated, but some stacks still route it as IPv4).
    if s[..6] == [0; 6] {
        return v4_reason(Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8));
    }
    // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address through a gateway.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return v4_reason(Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8));
    }
    // 6to4 (2002::/16) embeds an IPv4 address in bits 16..48.
    if s[0] == 0x2002 {
        return v4_reason(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    if s[0] & 0xfe00 == 0xfc00 {
        return Some(PRIVATE); // unique local fc00::/7
    }
    if s[0] & 0xffc0 == 0xfe80 || s[0] & 0xffc0 == 0xfec0 {
        return Some(LINK_LOCAL); // link-local fe80::/10, deprecated site-local fec0::/10
    }
    if s[0] & 0xff00 == 0xff00 {
        return Some(MULTICAST);
    }
    if (s[0] == 0x2001 && s[1] == 0x0db8) || s[..4] == [0x100, 0, 0, 0] {
        return Some(RESERVED); // documentation 2001:db8::/32, discard-only 100::/64
    }
    None
}

/// Turns a host name into addresses. Injected so tests can map names without DNS.
pub trait Resolver: Send + Sync {
    /// Every address `host` resolves to.
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver (`getaddrinfo` on a blocking thread, via tokio).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let host = host.to_owned();
        async move {
            let addrs = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let mut ips: Vec<IpAddr> = addrs.map(|a| a.ip()).collect();
            ips.dedup();
            Ok(ips)
        }
        .boxed()
    }
}

/// The HTTP client's DNS resolver: resolves with the injected [`Resolver`], refuses the name if
/// *any* address is refused by the policy, and hands the client only checked addresses. Its
/// refusal travels inside the client's error as a [`Blocked`], which the fetcher finds again to
/// tell the person exactly what was refused.
pub struct GuardedResolver {
    /// Turns names into addresses.
    pub resolver: Arc<dyn Resolver>,
    /// Judges every address.
    pub policy: Arc<dyn AddressPolicy>,
}

impl GuardedResolver {
    /// The checked addresses of `host`.
    pub async fn resolve_checked(&self, host: &str) -> Result<Vec<IpAddr>, ResolveError> {
        if let Err(reason) = self.policy.check_name(host) {
            return Err(ResolveError::Blocked(Blocked { what: host.to_owned(), reason }));
        }
        let ips = self.resolver.lookup(host).await.map_err(|e| ResolveError::Lookup(host.to_owned(), e.to_string()))?;
        if ips.is_empty() {
            return Err(ResolveError::Lookup(host.to_owned(), "no addresses".into()));
        }
        check_addresses(&*self.policy, host, &ips).map_err(ResolveError::Blocked)?;
        Ok(ips)
    }
}

/// Checks every address `host` resolved to; the refusal names the host and the address.
pub fn check_addresses(policy: &dyn AddressPolicy, host: &str, ips: &[IpAddr]) -> Result<(), Blocked> {
    for ip in ips {
        if let Err(reason) = policy.check_ip(*ip) {
            return Err(Blocked { what: format!("{host} (which resolves to {ip})"), reason });
        }
    }
    Ok(())
}

/// Why the guarded resolver gave no addresses.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The policy refused the name or one of its addresses.
    #[error("{0}")]
    Blocked(Blocked),
    /// DNS failed.
    #[error("could not resolve {0}: {1}")]
    Lookup(String, String),
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let this = GuardedResolver { resolver: self.resolver.clone(), policy: self.policy.clone() };
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let ips = this
                .resolve_checked(&host)
                .await
                .map_err(|e| -> Box<dyn std::error::Error + Send + Sync> { Box::new(e) })?;
            // Port 0: the client puts the URL's port in.
            let addrs: reqwest::dns::Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// Checks what can be checked of `url` before connecting: it has a host, an IP literal (as the
/// WHATWG parser normalized it) is allowed, and a name is not one refused before resolving
/// (`localhost`). A name's addresses are checked by [`GuardedResolver`] when the client connects.
pub fn check_url(policy: &dyn AddressPolicy, url: &url::Url) -> Result<(), Blocked> {
    let blocked = |what: String, reason| Blocked { what, reason };
    match url.host() {
        None => Err(blocked(url.to_string(), "a URL without a host")),
        Some(url::Host::Ipv4(ip)) => policy.check_ip(IpAddr::V4(ip)).map_err(|r| blocked(ip.to_string(), r)),
        Some(url::Host::Ipv6(ip)) => policy.check_ip(IpAddr::V6(ip)).map_err(|r| blocked(ip.to_string(), r)),
        Some(url::Host::Domain(d)) => policy.check_name(d).map_err(|r| blocked(d.to_owned(), r)),
    }
}

/// Whether `url` itself names this computer or a private network: `localhost` (or
/// `*.localhost`), or an IP literal that is not a public internet address. What a name resolves
/// to does not count here, since whoever runs its DNS chooses that (the MCP crate judges a
/// server's own name by its first answer, pinned, in its `net` module).
pub fn names_local_address(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => non_public_reason(IpAddr::V4(ip)).is_some(),
        Some(url::Host::Ipv6(ip)) => non_public_reason(IpAddr::V6(ip)).is_some(),
        Some(url::Host::Domain(d)) => StandardPolicy::default().check_name(d).is_err(),
        None => false,
    }
}

/// Finds a [`ResolveError`] inside an error chain (the client wraps the resolver's error).
pub fn find_resolve_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a ResolveError> {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(found) = err.downcast_ref::<ResolveError>() {
            return Some(found);
        }
        cur = err.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(s: &str) -> Option<&'static str> {
        non_public_reason(s.parse().unwrap())
    }

    #[test]
    fn non_public_ranges_are_refused() {
        for (ip, want) in [
            ("127.0.0.1", LOOPBACK),
            ("127.255.0.9", LOOPBACK),
            ("10.1.2.3", PRIVATE),
            ("172.16.0.1", PRIVATE),
            ("172.31.255.255", PRIVATE),
            ("192.168.1.1", PRIVATE),
            ("169.254.169.254", LINK_LOCAL),
            ("100.64.0.1", CGNAT),
            ("100.127.255.254", CGNAT),
            ("0.0.0.0", UNSPECIFIED),
            ("0.1.2.3", UNSPECIFIED),
            ("224.0.0.1", MULTICAST),
            ("255.255.255.255", BROADCAST),
            ("240.0.0.1", RESERVED),
            ("192.0.2.10", RESERVED),
            ("::1", LOOPBACK),
            ("::", UNSPECIFIED),
            ("fc00::1", PRIVATE),
            ("fd12:3456::1", PRIVATE),
            ("fe80::1", LINK_LOCAL),
            ("ff02::1", MULTICAST),
            ("::ffff:127.0.0.1", LOOPBACK),
            ("::ffff:10.0.0.1", PRIVATE),
            ("::ffff:169.254.169.254", LINK_LOCAL),
            ("::127.0.0.1", LOOPBACK),
            ("64:ff9b::a00:1", PRIVATE),
            ("2002:c0a8:101::1", PRIVATE),
            ("2001:db8::1", RESERVED),
        ] {
            assert_eq!(reason(ip), Some(want), "{ip}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in ["93.184.216.34", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert_eq!(reason(ip), None, "{ip}");
        }
    }

    #[test]
    fn a_local_network_may_be_reached_but_never_the_metadata_service() {
        let local = LocalNetworkPolicy;
        for ip in ["127.0.0.1", "10.0.0.5", "192.168.1.1", "100.64.0.1", "fd00::1", "::1", "1.1.1.1"] {
            assert_eq!(local.check_ip(ip.parse().unwrap()), Ok(()), "{ip}");
        }
        for ip in ["169.254.169.254", "fe80::1", "224.0.0.1", "255.255.255.255", "0.0.0.0", "192.0.2.1"] {
            assert!(local.check_ip(ip.parse().unwrap()).is_err(), "{ip}");
        }
        assert!(local.check_name("localhost").is_ok());
    }

    #[test]
    fn urls_are_checked_by_their_normalized_literal_or_name() {
        let strict = StandardPolicy::default();
        let check = |u: &str| check_url(&strict, &url::Url::parse(u).unwrap());
        assert_eq!(check("http://0x7f.1/").unwrap_err().what, "127.0.0.1");
        assert_eq!(check("http://169.254.169.254/latest").unwrap_err().reason, LINK_LOCAL);
        assert_eq!(check("http://[::1]:8080/").unwrap_err().reason, LOOPBACK);
        assert_eq!(check("http://api.localhost/").unwrap_err().reason, LOOPBACK);
        assert!(check("https://example.com/").is_ok());
        assert!(check("https://93.184.216.34/").is_ok());
        let local = |u: &str| names_local_address(&url::Url::parse(u).unwrap());
        assert!(local("http://localhost:3000/mcp") && local("http://127.0.0.1/") && local("http://10.0.0.5/"));
        assert!(!local("https://mcp.example.com/") && !local("https://93.184.216.34/"));
    }

    #[test]
    fn the_policy_can_allow_local_addresses_and_names() {
        let strict = StandardPolicy::default();
        assert!(strict.check_ip("127.0.0.1".parse().unwrap()).is_err());
        assert_eq!(strict.check_name("LocalHost."), Err(LOOPBACK));
        assert_eq!(strict.check_name("api.localhost"), Err(LOOPBACK));
        assert_eq!(strict.check_name("example.com"), Ok(()));
        let open = StandardPolicy { allow_local_addresses: true };
        assert!(open.check_ip("127.0.0.1".parse().unwrap()).is_ok());
        assert!(open.check_name("localhost").is_ok());
    }
}
