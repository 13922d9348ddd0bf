//! Where a remote MCP server's requests, and its OAuth sign-in's, may go, judged on the addresses
//! actually connected to: the server's own host may be on the person's network (its first
//! resolution pins which side it is on), but a public server's metadata cannot point its sign-in
//! at this computer or a private network, and its name cannot later resolve there.
//!
//! The network is the test's: a resolver maps names to local test servers, and a policy counts
//! 127.0.0.1 as "the internet" while every other local address keeps the real rules.
//! `internal.example.test` resolves to 127.0.0.2, which stands for the person's network.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::tool::NoSecrets;
use switchboard_core::{Source, SourceStatus};
use switchboard_mcp::net::Network;
use switchboard_mcp::{Approvals, Browser, McpServer, Options, ServerConfig, TokenVault};
use switchboard_net::{AddressPolicy, Resolver, StandardPolicy};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// 127.0.0.1 stands for a public address; everything else is judged as the app judges it.
struct TestPolicy;

impl AddressPolicy for TestPolicy {
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        if ip == IpAddr::V4(Ipv4Addr::LOCALHOST) { Ok(()) } else { StandardPolicy::default().check_ip(ip) }
    }
}

/// Names for the test servers; a test may change an answer (DNS rebinding).
struct TestResolver(Mutex<HashMap<&'static str, IpAddr>>);

impl TestResolver {
    fn answer(&self, host: &'static str, ip: Ipv4Addr) {
        self.0.lock().unwrap().insert(host, IpAddr::V4(ip));
    }
}

impl Resolver for TestResolver {
    fn lookup(&self, host: &str) -> futures::future::BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let found = self.0.lock().unwrap().get(host).copied();
        let host = host.to_owned();
        Box::pin(async move {
            found.map(|ip| vec![ip]).ok_or_else(|| std::io::Error::other(format!("{host} is not in the test's DNS")))
        })
    }
}

const INTERNAL: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// The test's network, and its resolver (to change an answer).
fn network() -> (Network, Arc<TestResolver>) {
    let names = HashMap::from([
        ("mcp.example.test", IpAddr::V4(Ipv4Addr::LOCALHOST)),
        ("internal.example.test", IpAddr::V4(INTERNAL)),
        ("corp.example.test", IpAddr::V4(INTERNAL)),
    ]);
    let resolver = Arc::new(TestResolver(Mutex::new(names)));
    (Network::new(Arc::clone(&resolver) as Arc<dyn Resolver>, Arc::new(TestPolicy)), resolver)
}

#[derive(Default)]
struct MemVault(Mutex<HashMap<String, String>>);

impl TokenVault for MemVault {
    fn load(&self, key: &str) -> Option<String> {
        self.0.lock().unwrap().get(key).cloned()
    }
    fn save(&self, key: &str, value: &str) -> Result<(), String> {
        self.0.lock().unwrap().insert(key.to_owned(), value.to_owned());
        Ok(())
    }
    fn clear(&self, key: &str) {
        self.0.lock().unwrap().remove(key);
    }
}

struct NoApprovals;

impl Approvals for NoApprovals {
    fn approved_tools(&self, _: &str) -> Result<std::collections::BTreeMap<String, String>, String> {
        Ok(Default::default())
    }
    fn record_tools(&self, _: &str, _: &std::collections::BTreeMap<String, String>) -> Result<(), String> {
        Ok(())
    }
}

/// Never gets that far in these tests.
struct NoBrowser;

impl Browser for NoBrowser {
    fn open(&self, url: &str) -> Result<(), String> {
        Err(format!("the test does not open {url}"))
    }
}

/// A listener on `ip` (port 0: any) that answers every request with `answer(its own port,
/// method, path)` and counts requests.
async fn serve_on(
    ip: Ipv4Addr,
    port: u16,
    answer: impl Fn(u16, &str, &str) -> (u16, String) + Send + Sync + 'static,
) -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind((ip, port)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let (counted, answer) = (Arc::clone(&hits), Arc::new(answer));
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let answer = Arc::clone(&answer);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let mut line = text.lines().next().unwrap_or_default().split_whitespace();
                let (method, path) = (line.next().unwrap_or_default(), line.next().unwrap_or_default());
                let (status, body) = answer(port, method, path);
                let auth = if status == 401 { "www-authenticate: Bearer\r\n" } else { "" };
                let response = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{auth}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    (port, hits)
}

async fn serve(
    ip: Ipv4Addr,
    answer: impl Fn(u16, &str, &str) -> (u16, String) + Send + Sync + 'static,
) -> (u16, Arc<AtomicUsize>) {
    serve_on(ip, 0, answer).await
}

/// An MCP server at `host` (on 127.0.0.1) that asks for sign-in, and whose OAuth metadata sends
/// registration and tokens to `endpoint`. Its URL.
async fn server_pointing_at(host: &'static str, endpoint: String) -> String {
    server_on(Ipv4Addr::LOCALHOST, host, move |_| endpoint.clone()).await.0
}

/// An MCP server listening on `ip`, called `host`, that asks for sign-in, and whose OAuth
/// metadata sends registration and tokens to `endpoint(its own base URL)`. Its URL, and the paths
/// it was asked for.
async fn server_on(
    ip: Ipv4Addr,
    host: &'static str,
    endpoint: impl Fn(&str) -> String + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let (port, _) = serve(ip, move |port, _, path| {
        log.lock().unwrap().push(path.to_owned());
        let base = format!("http://{host}:{port}");
        let endpoint = endpoint(&base);
        if path.contains("oauth-protected-resource") {
            let body = serde_json::json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]});
            (200, body.to_string())
        } else if path.contains("oauth-authorization-server") || path.contains("openid-configuration") {
            let body = serde_json::json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{endpoint}/token"),
                "registration_endpoint": format!("{endpoint}/register"),
                "response_types_supported": ["code"],
                "code_challenge_methods_supported": ["S256"],
            });
            (200, body.to_string())
        } else if path == "/mcp" {
            (401, String::new())
        } else {
            (404, String::new())
        }
    })
    .await;
    (format!("http://{host}:{port}/mcp"), asked)
}

fn remote(name: &str, url: String) -> McpServer {
    remote_on(name, url, network().0)
}

fn remote_on(name: &str, url: String, network: Network) -> McpServer {
    let options = Options {
        init_timeout: Duration::from_secs(10),
        max_restarts: 0,
        tokens: Some(Arc::new(MemVault::default())),
        network,
        ..Options::default()
    };
    let config = ServerConfig { url: Some(url), ..Default::default() };
    McpServer::new(name, config, options, Arc::new(NoSecrets), Arc::new(NoApprovals), true)
}

async fn sign_in(server: &McpServer) -> Result<(), String> {
    tokio::time::timeout(Duration::from_secs(20), server.sign_in(&NoBrowser)).await.expect("the sign-in ends")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_servers_sign_in_metadata_cannot_point_it_at_a_local_address() {
    let (internal, reached) = serve(Ipv4Addr::new(127, 0, 0, 2), |_, _, _| (200, "{}".into())).await;
    for (endpoint, named) in [
        (
            format!("http://internal.example.test:{internal}"),
            "internal.example.test (which resolves to 127.0.0.2) is a loopback address",
        ),
        ("http://169.254.169.254".to_owned(), "169.254.169.254 is a link-local address"),
    ] {
        let server = remote("docs", server_pointing_at("mcp.example.test", endpoint.clone()).await);
        let error = sign_in(&server).await.expect_err("the sign-in is refused");
        assert!(error.contains(named), "{endpoint}: {error}");
        assert!(error.contains("internet address"), "{error}");
    }
    assert_eq!(reached.load(Ordering::SeqCst), 0, "nothing reached the local endpoint");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_url_names_a_local_address_may_sign_in_locally() {
    let (internal, reached) = serve(Ipv4Addr::new(127, 0, 0, 2), |_, _, _| (400, "{}".into())).await;
    let server =
        remote("local", server_pointing_at("127.0.0.1", format!("http://internal.example.test:{internal}")).await);
    let error = sign_in(&server).await.expect_err("the test's registration endpoint says no");
    assert!(!error.contains("refused to connect"), "{error}");
    assert!(reached.load(Ordering::SeqCst) > 0, "the local endpoint was used: {error}");
    // Not the cloud metadata service, though.
    let server = remote("local", server_pointing_at("127.0.0.1", "http://169.254.169.254".to_owned()).await);
    let error = sign_in(&server).await.expect_err("the sign-in is refused");
    assert!(error.contains("169.254.169.254 is a link-local address"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_name_resolves_to_a_local_address_is_a_local_server() {
    // Its metadata points at its own origin: discovery, registration and tokens all go there.
    let (url, asked) = server_on(INTERNAL, "corp.example.test", str::to_owned).await;
    let server = remote("corp", url);
    server.start(Arc::new(|| {})).await;
    if let SourceStatus::Failed { reason } = server.status() {
        assert!(!reason.contains("refused to connect"), "{reason}");
    }
    let error = sign_in(&server).await.expect_err("the test's registration endpoint says no");
    assert!(!error.contains("refused to connect"), "{error}");
    let asked = asked.lock().unwrap().clone();
    assert!(asked.iter().any(|p| p == "/mcp"), "{asked:?}");
    assert!(asked.iter().any(|p| p == "/register"), "registration reached its own origin: {asked:?}; {error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_name_that_changes_sides_is_refused() {
    // Public first (127.0.0.1 is the test's internet), then this computer: refused.
    let (network, dns) = network();
    let (url, asked) = server_on(Ipv4Addr::LOCALHOST, "flip.example.test", str::to_owned).await;
    let port = url::Url::parse(&url).unwrap().port().unwrap();
    let (_, rebound) = serve_on(INTERNAL, port, |_, _, _| (401, String::new())).await;
    dns.answer("flip.example.test", Ipv4Addr::LOCALHOST);
    let server = remote_on("flip", url, network.clone());
    server.start(Arc::new(|| {})).await;
    assert!(asked.lock().unwrap().iter().any(|p| p == "/mcp"), "the public answer was used");
    dns.answer("flip.example.test", INTERNAL);
    let error = sign_in(&server).await.expect_err("the sign-in is refused");
    assert!(error.contains("flip.example.test (which resolves to 127.0.0.2) is a loopback address"), "{error}");
    assert_eq!(rebound.load(Ordering::SeqCst), 0, "nothing reached the rebound address");

    // And the other way: local first, then public.
    let (url, _) = server_on(INTERNAL, "flop.example.test", str::to_owned).await;
    let port = url::Url::parse(&url).unwrap().port().unwrap();
    let (_, public) = serve_on(Ipv4Addr::LOCALHOST, port, |_, _, _| (401, String::new())).await;
    dns.answer("flop.example.test", INTERNAL);
    let server = remote_on("flop", url, network);
    server.start(Arc::new(|| {})).await;
    dns.answer("flop.example.test", Ipv4Addr::LOCALHOST);
    let error = sign_in(&server).await.expect_err("the sign-in is refused");
    assert!(error.contains("flop.example.test (which resolves to 127.0.0.1) is a public internet address"), "{error}");
    assert_eq!(public.load(Ordering::SeqCst), 0, "nothing reached the new address");
}
