//! A remote MCP server's requests, and its OAuth sign-in's, reach only public internet addresses,
//! judged on the addresses actually connected to: a server's metadata cannot point its sign-in
//! at this computer or a private network, and a server's own name cannot resolve there.
//!
//! The network is the test's: a resolver maps public-looking names to local test servers, and
//! a policy counts 127.0.0.1 as "the internet" while every other local address keeps the real
//! rules. `internal.example.test` resolves to 127.0.0.2, which stands for the person's network.

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

/// Public-looking names for the test servers.
struct TestResolver(HashMap<&'static str, IpAddr>);

impl Resolver for TestResolver {
    fn lookup(&self, host: &str) -> futures::future::BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let found = self.0.get(host).copied();
        let host = host.to_owned();
        Box::pin(async move {
            found.map(|ip| vec![ip]).ok_or_else(|| std::io::Error::other(format!("{host} is not in the test's DNS")))
        })
    }
}

fn network() -> Network {
    let names = HashMap::from([
        ("mcp.example.test", IpAddr::V4(Ipv4Addr::LOCALHOST)),
        ("internal.example.test", IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))),
        ("rebound.example.test", IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))),
    ]);
    Network { resolver: Arc::new(TestResolver(names)), policy: Arc::new(TestPolicy) }
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

/// A listener that answers every request with `answer(its own port, method, path)` and counts
/// requests.
async fn serve(
    ip: Ipv4Addr,
    answer: impl Fn(u16, &str, &str) -> (u16, String) + Send + Sync + 'static,
) -> (u16, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
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

/// An MCP server at `host` (on 127.0.0.1) that asks for sign-in, and whose OAuth metadata sends
/// registration and tokens to `endpoint`. Its URL.
async fn server_pointing_at(host: &'static str, endpoint: String) -> String {
    let (port, _) = serve(Ipv4Addr::LOCALHOST, move |port, _, path| {
        let base = format!("http://{host}:{port}");
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
    format!("http://{host}:{port}/mcp")
}

fn remote(name: &str, url: String) -> McpServer {
    let options = Options {
        init_timeout: Duration::from_secs(10),
        max_restarts: 0,
        tokens: Some(Arc::new(MemVault::default())),
        network: network(),
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
async fn a_remote_servers_own_name_cannot_resolve_to_a_local_address() {
    let (port, reached) = serve(Ipv4Addr::new(127, 0, 0, 2), |_, _, _| (404, String::new())).await;
    let server = remote("rebound", format!("http://rebound.example.test:{port}/mcp"));
    server.start(Arc::new(|| {})).await;
    let SourceStatus::Failed { reason } = server.status() else { panic!("{:?}", server.status()) };
    assert!(reason.contains("rebound.example.test (which resolves to 127.0.0.2) is a loopback address"), "{reason}");
    assert_eq!(reached.load(Ordering::SeqCst), 0);
}
