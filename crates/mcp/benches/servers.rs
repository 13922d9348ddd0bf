//! What the MCP client costs on top of the servers themselves, against the reference servers
//! `scripts/setup.sh` installs:
//!
//! - start-up: ten stdio servers configured, started together as the app starts them; the
//!   wall time until all are ready against the slowest one's own time (they must overlap, not
//!   queue);
//! - calls: `echo` on server-everything through [`McpServer`] against the same request written
//!   as a raw JSON-RPC line to the same kind of server, round trip for round trip.
//!
//! `cargo bench -p switchboard-mcp --bench servers`

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_core::tool::NoSecrets;
use switchboard_core::{Source, SourceStatus, ToolContext};
use switchboard_mcp::{Approvals, McpServer, Options, ServerConfig};

const SERVERS: usize = 10;
const CALLS: usize = 300;

struct Open;

impl Approvals for Open {
    fn approved_tools(&self, _: &str) -> Result<BTreeMap<String, String>, String> {
        Ok(BTreeMap::new())
    }
    fn record_tools(&self, _: &str, _: &BTreeMap<String, String>) -> Result<(), String> {
        Ok(())
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn everything() -> String {
    let bin = repo().join("node_modules/.bin/mcp-server-everything");
    assert!(bin.exists(), "run scripts/setup.sh first");
    bin.display().to_string()
}

fn server(name: &str, command: &str, args: &[&str]) -> McpServer {
    let config = ServerConfig {
        command: Some(command.into()),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        ..Default::default()
    };
    McpServer::new(name, config, Options::default(), Arc::new(NoSecrets), Arc::new(Open), true)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn startup() {
    let servers: Vec<McpServer> = (0..SERVERS).map(|i| server(&format!("s{i}"), &everything(), &["stdio"])).collect();
    let began = Instant::now();
    let own: Vec<Duration> = futures::future::join_all(servers.iter().map(|s| async move {
        let t = Instant::now();
        s.start(Arc::new(|| {})).await;
        assert_eq!(s.status(), SourceStatus::Ready);
        t.elapsed()
    }))
    .await;
    let all = began.elapsed();
    let slowest = own.iter().max().copied().unwrap_or_default();
    let sum: Duration = own.iter().sum();
    println!(
        "start-up, {SERVERS} stdio servers together: all ready in {:.0} ms; slowest alone-in-the-crowd {:.0} ms \
         (+{:.1} ms); one after another would be {:.0} ms",
        ms(all),
        ms(slowest),
        ms(all.saturating_sub(slowest)),
        ms(sum)
    );
    for s in &servers {
        s.stop().await;
    }
}

/// `echo` round trips as raw JSON-RPC lines on the server's stdin/stdout: the server's own time.
fn raw_calls() -> Duration {
    let mut child = Command::new(everything())
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut request = |stdin: &mut std::process::ChildStdin, id: usize, body: String| {
        writeln!(stdin, "{body}").unwrap();
        loop {
            line.clear();
            stdout.read_line(&mut line).unwrap();
            if line.contains(&format!("\"id\":{id}")) {
                break;
            }
        }
    };
    request(
        &mut stdin,
        0,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#.into(),
    );
    writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#).unwrap();
    let began = Instant::now();
    for id in 1..=CALLS {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello {id}"}}}}}}"#
        );
        request(&mut stdin, id, body);
    }
    let took = began.elapsed();
    drop(stdin);
    let _ = child.wait();
    took / CALLS as u32
}

async fn client_calls() -> Duration {
    let s = server("every", &everything(), &["stdio"]);
    s.start(Arc::new(|| {})).await;
    let echo = s.tools().into_iter().find(|t| t.def().name == "every__echo").unwrap();
    let began = Instant::now();
    for i in 0..CALLS {
        let out = echo
            .call(serde_json::json!({"message": format!("hello {i}")}), ToolContext::detached(Arc::new(NoSecrets)))
            .await
            .unwrap();
        assert!(out.text.starts_with("Echo: hello"));
    }
    let took = began.elapsed();
    s.stop().await;
    took / CALLS as u32
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(startup());
    let raw = raw_calls();
    let ours = rt.block_on(client_calls());
    println!(
        "calls, echo x{CALLS}: {:.3} ms through the client, {:.3} ms as raw JSON-RPC lines: +{:.3} ms per call",
        ms(ours),
        ms(raw),
        ms(ours.saturating_sub(raw))
    );
}
