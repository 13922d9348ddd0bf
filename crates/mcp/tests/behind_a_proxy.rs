//! Remote MCP servers are reached directly, never through a proxy (a proxy chooses the addresses
//! itself, so they could not be checked): a person with `HTTPS_PROXY` set whose server cannot be
//! reached is told the proxy is not used. Its own test binary, because it sets a variable of the
//! process that other tests would otherwise see.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::tool::NoSecrets;
use switchboard_core::{Source, SourceStatus};
use switchboard_mcp::net::Network;
use switchboard_mcp::{Approvals, McpServer, Options, ServerConfig};
use switchboard_net::{AddressPolicy, Resolver, StandardPolicy};

/// 127.0.0.1 stands for a public address; everything else is judged as the app judges it.
struct TestPolicy;

impl AddressPolicy for TestPolicy {
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        if ip == IpAddr::V4(Ipv4Addr::LOCALHOST) { Ok(()) } else { StandardPolicy::default().check_ip(ip) }
    }
}

/// `closed.example.test` is 127.0.0.1 (nothing listens on the port the test uses); nothing
/// else resolves, as on a network whose only way out is a proxy.
struct TestResolver;

impl Resolver for TestResolver {
    fn lookup(&self, host: &str) -> futures::future::BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let found = (host == "closed.example.test").then(|| vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]);
        let host = host.to_owned();
        Box::pin(async move { found.ok_or_else(|| std::io::Error::other(format!("{host}: no such host"))) })
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

async fn failure(url: String) -> String {
    let options = Options {
        init_timeout: Duration::from_secs(10),
        max_restarts: 0,
        network: Network::new(Arc::new(TestResolver), Arc::new(TestPolicy)),
        ..Options::default()
    };
    let config = ServerConfig { url: Some(url), ..Default::default() };
    let server = McpServer::new("remote", config, options, Arc::new(NoSecrets), Arc::new(NoApprovals), true);
    server.start(Arc::new(|| {})).await;
    let SourceStatus::Failed { reason } = server.status() else { panic!("{:?}", server.status()) };
    reason
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(unsafe_code)] // setting an environment variable; see the SAFETY note
async fn a_person_behind_a_proxy_is_told_it_is_not_used() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let note = "HTTPS_PROXY is set, but Switchboard connects to MCP servers directly, never through a proxy";
    let unresolved = failure("https://mcp.example.test/mcp".into()).await;
    assert!(!unresolved.contains("PROXY"), "no proxy, no note: {unresolved}");
    // SAFETY: this binary's only test; no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("HTTPS_PROXY", "http://proxy.example.test:3128") };
    for url in ["https://mcp.example.test/mcp".to_owned(), format!("http://closed.example.test:{port}/mcp")] {
        let reason = failure(url.clone()).await;
        assert!(reason.contains(note), "{url}: {reason}");
    }
    // A server on this computer never goes through a proxy anyway: no note.
    let local = failure(format!("http://127.0.0.1:{port}/mcp")).await;
    assert!(!local.contains("PROXY"), "{local}");
}
