//! The release CLI end to end: one tool round trip plus a 2000-token streamed answer against a
//! local mock, SQLite writes included. Reports wall time beyond the mock's own streaming time,
//! CPU time and peak RSS of the CLI process.
//!
//! `cargo bench -p switchboard-cli --bench cli_roundtrip` (the bench profile builds the binary
//! with release optimizations).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use switchboard_mock_provider::{MockServer, Reply, Script};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const TOKENS: usize = 2000;
const RUNS: usize = 20;

fn push_turn(mock: &MockServer) {
    mock.push(Reply::tool_call("call_1", "get_time", r#"{"timezone":"Europe/Paris"}"#));
    mock.push(Reply::long_text(TOKENS));
}

/// What the mock alone takes to serve the same two responses to a minimal client.
fn mock_only(addr: std::net::SocketAddr) -> Duration {
    let started = Instant::now();
    for _ in 0..2 {
        let body = r#"{"model":"mock-model","stream":true,"messages":[{"role":"user","content":"x"}]}"#;
        let mut s = TcpStream::connect(addr).unwrap();
        write!(
            s,
            "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut sink = Vec::new();
        s.read_to_end(&mut sink).unwrap();
        assert!(sink.windows(6).any(|w| w == b"[DONE]"));
    }
    started.elapsed()
}

struct Child {
    wall: Duration,
    cpu: Duration,
    max_rss_kb: i64,
}

// The child is reaped by wait4 below (which also gives its own rusage), not by Child::wait.
#[allow(clippy::zombie_processes)]
fn run_cli(data_dir: &std::path::Path) -> Child {
    let started = Instant::now();
    let child = Command::new(BIN)
        .args(["chat", "--json", "what time is it in Paris? then tell me a long story"])
        .env("SWITCHBOARD_DATA_DIR", data_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    // SAFETY: wait4 writes the exit status and the child's own rusage into our locals.
    #[allow(unsafe_code)]
    let (status, usage) = unsafe {
        let mut status = 0;
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::wait4(pid, &mut status, 0, &mut usage);
        (status, usage)
    };
    let wall = started.elapsed();
    assert_eq!(status, 0, "the CLI failed");
    let tv = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    Child { wall, cpu: tv(usage.ru_utime) + tv(usage.ru_stime), max_rss_kb: usage.ru_maxrss }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let mock = runtime.block_on(MockServer::start(Script::default()));
    let dir = tempfile::tempdir().unwrap();
    let add = Command::new(BIN)
        .args(["providers", "add", "mock", "--base-url", &mock.base_url(), "--model", "mock-model"])
        .env("SWITCHBOARD_DATA_DIR", dir.path())
        .output()
        .unwrap();
    assert!(add.status.success());

    let (mut over, mut cpu, mut rss, mut base) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..RUNS + 2 {
        push_turn(&mock);
        push_turn(&mock);
        let baseline = mock_only(mock.addr());
        let child = run_cli(dir.path());
        if i >= 2 {
            base.push(baseline.as_secs_f64() * 1e3);
            over.push((child.wall.as_secs_f64() - baseline.as_secs_f64()) * 1e3);
            cpu.push(child.cpu.as_secs_f64() * 1e3);
            rss.push(child.max_rss_kb as f64 / 1024.0);
        }
    }
    for v in [&mut over, &mut cpu, &mut rss, &mut base] {
        v.sort_by(f64::total_cmp);
    }
    let med = |v: &[f64]| v[v.len() / 2];
    println!("release CLI: 1 tool round trip + {TOKENS}-token answer, SQLite included, {RUNS} runs (medians):");
    println!("  mock's own streaming time:  {:.1} ms", med(&base));
    println!("  wall beyond the mock:       {:.1} ms   (target <= 20 ms)", med(&over));
    println!(
        "  CPU of the CLI process:     {:.1} ms   (target <= 10 ms beyond the mock; the mock runs in another process)",
        med(&cpu)
    );
    println!("  peak RSS:                   {:.1} MB   (target < 20 MB)", med(&rss));
}
