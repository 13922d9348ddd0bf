//! The release CLI end to end: one tool round trip plus a 2000-token streamed answer against a
//! local mock, SQLite writes included. Reports, per CLI binary, the wall time (and what of it is
//! beyond the mock's own streaming time), the CPU time (user + sys) and peak RSS of the CLI
//! process, and, from a separate pass under `strace`, its system calls per token and its futex
//! calls and eventfd wake-ups per turn.
//!
//! `cargo bench -p switchboard-cli --bench cli_roundtrip` (the bench profile builds the binary
//! with release optimizations). With `SWITCHBOARD_BASELINE_CLI=/path/to/an/older/switchboard`
//! the older binary runs beside this one, in turns (pair by pair, the order flipped every other
//! pair), and every figure gets a ratio current/previous: a regression shows up as a ratio above 1
//! whatever the machine's speed. `scripts/bench-cli.sh [REV]` builds such a baseline and runs this.
//! `SWITCHBOARD_BENCH_PAIRS` sets the number of counted runs (pairs) (default 15).
//!
//! The answer's events reach the CLI about one per network write (`split_bytes`), as a real
//! provider sends them, not coalesced into a few large frames: a per-token cost (a task or thread
//! hop, a syscall) only shows under that delivery.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use switchboard_mock_provider::{MockServer, Reply, Script, StreamOptions};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");
const TOKENS: usize = 2000;
const DEFAULT_PAIRS: usize = 15;
const WARMUP: usize = 2;
/// Runs under `strace` per binary; the median is reported.
const TRACED: usize = 3;
const PROMPT: &str = "what time is it in Paris? then tell me a long story";

/// One turn's replies: a tool call, then the long answer in writes of about one event each.
fn push_turn(mock: &MockServer) {
    mock.push(Reply::tool_call("call_1", "get_time", r#"{"timezone":"Europe/Paris"}"#));
    mock.push(Reply::long_text(TOKENS).with_options(StreamOptions { split_bytes: Some(256), ..Default::default() }));
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

/// A CLI binary with its own data directory (an older binary may not open a newer database).
struct Cli {
    bin: PathBuf,
    data: tempfile::TempDir,
    samples: Samples,
}

#[derive(Default)]
struct Samples {
    wall: Vec<f64>,
    over: Vec<f64>,
    cpu: Vec<f64>,
    rss: Vec<f64>,
}

impl Cli {
    fn new(bin: PathBuf, mock: &MockServer) -> Cli {
        let data = tempfile::tempdir().unwrap();
        let add = Command::new(&bin)
            .args(["providers", "add", "mock", "--base-url", &mock.base_url(), "--model", "mock-model"])
            .env("SWITCHBOARD_DATA_DIR", data.path())
            .output()
            .unwrap();
        assert!(
            add.status.success(),
            "{}: providers add failed: {}",
            bin.display(),
            String::from_utf8_lossy(&add.stderr)
        );
        Cli { bin, data, samples: Samples::default() }
    }

    fn chat(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.args(["chat", "--json", PROMPT]).env("SWITCHBOARD_DATA_DIR", self.data.path());
        cmd
    }

    /// One measured turn; `counted` keeps its figures.
    fn turn(&mut self, mock: &MockServer, counted: bool) {
        push_turn(mock);
        push_turn(mock);
        let baseline = mock_only(mock.addr());
        let run = run_child(self.chat());
        if counted {
            let s = &mut self.samples;
            s.wall.push(ms(run.wall));
            s.over.push(ms(run.wall) - ms(baseline));
            s.cpu.push(ms(run.cpu));
            s.rss.push(run.max_rss_kb as f64 / 1024.0);
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

struct Run {
    wall: Duration,
    cpu: Duration,
    max_rss_kb: i64,
}

// The child is reaped by wait4 below (which also gives its own rusage), not by Child::wait.
#[allow(clippy::zombie_processes)]
fn run_child(mut cmd: Command) -> Run {
    let started = Instant::now();
    let child = cmd.stdout(Stdio::null()).stderr(Stdio::inherit()).spawn().unwrap();
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
    Run { wall, cpu: tv(usage.ru_utime) + tv(usage.ru_stime), max_rss_kb: usage.ru_maxrss }
}

/// System calls of one turn, from a full `strace -f -y` trace of the CLI and its threads.
#[derive(Clone, Copy)]
struct Syscalls {
    total: f64,
    futex: f64,
    eventfd_wakes: f64,
}

/// Whether `strace` can trace here; `Err` says why not.
fn strace_usable() -> Result<(), String> {
    match Command::new("strace").args(["-f", "-o", "/dev/null", "true"]).stderr(Stdio::piped()).output() {
        Err(e) => Err(format!("strace is not installed ({e})")),
        Ok(out) if !out.status.success() => {
            Err(format!("strace cannot trace here: {}", String::from_utf8_lossy(&out.stderr).trim()))
        }
        Ok(_) => Ok(()),
    }
}

/// Median counts over [`TRACED`] turns of `cli` under `strace` (never in the timed runs).
fn count_syscalls(cli: &Cli, mock: &MockServer, trace: &Path) -> Syscalls {
    let mut runs = Vec::new();
    for _ in 0..TRACED {
        push_turn(mock);
        let chat = cli.chat();
        let mut cmd = Command::new("strace");
        cmd.args(["-f", "-y", "-o"]).arg(trace).arg(chat.get_program()).args(chat.get_args());
        cmd.envs(chat.get_envs().filter_map(|(k, v)| Some((k, v?))));
        let status = cmd.stdout(Stdio::null()).status().unwrap();
        assert!(status.success(), "the CLI failed under strace");
        runs.push(parse_trace(&std::fs::read_to_string(trace).unwrap()));
    }
    let med = |f: fn(&Syscalls) -> f64| median(&mut runs.iter().map(f).collect::<Vec<_>>());
    Syscalls { total: med(|s| s.total), futex: med(|s| s.futex), eventfd_wakes: med(|s| s.eventfd_wakes) }
}

/// Counts the calls in a trace: a call split by another thread's is counted at its start, not
/// at its `resumed` line; an eventfd wake-up is a write to an eventfd.
fn parse_trace(text: &str) -> Syscalls {
    let mut s = Syscalls { total: 0.0, futex: 0.0, eventfd_wakes: 0.0 };
    for line in text.lines() {
        // `PID name(args) = result`; `PID <... name resumed>`, `PID +++ exited`, `PID --- SIG` are not calls.
        let Some(call) = line.split_once(' ').map(|(_, rest)| rest.trim_start()) else { continue };
        if call.starts_with("<...") || call.starts_with("+++") || call.starts_with("---") {
            continue;
        }
        s.total += 1.0;
        if call.starts_with("futex(") {
            s.futex += 1.0;
        } else if call.starts_with("write(") && call.contains("<anon_inode:[eventfd]>") {
            s.eventfd_wakes += 1.0;
        }
    }
    s
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let pairs = std::env::var("SWITCHBOARD_BENCH_PAIRS").ok().and_then(|n| n.parse().ok()).unwrap_or(DEFAULT_PAIRS);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let mock = runtime.block_on(MockServer::start(Script::default()));
    let mut current = Cli::new(PathBuf::from(BIN), &mock);
    let mut previous = std::env::var_os("SWITCHBOARD_BASELINE_CLI").map(|p| Cli::new(PathBuf::from(p), &mock));

    // In turns: current, previous, then previous, current, ... so neither always runs first.
    let (mut wall_ratios, mut cpu_ratios) = (Vec::new(), Vec::new());
    for i in 0..WARMUP + pairs {
        let counted = i >= WARMUP;
        match previous.as_mut() {
            None => current.turn(&mock, counted),
            Some(prev) if i % 2 == 0 => {
                current.turn(&mock, counted);
                prev.turn(&mock, counted);
            }
            Some(prev) => {
                prev.turn(&mock, counted);
                current.turn(&mock, counted);
            }
        }
        if let (true, Some(prev)) = (counted, previous.as_ref()) {
            let (c, p) = (&current.samples, &prev.samples);
            wall_ratios.push(c.wall.last().unwrap() / p.wall.last().unwrap());
            cpu_ratios.push(c.cpu.last().unwrap() / p.cpu.last().unwrap());
        }
    }

    let trace_file = tempfile::NamedTempFile::new().unwrap();
    let syscalls = strace_usable().map(|()| {
        let prev = previous.as_ref().map(|p| count_syscalls(p, &mock, trace_file.path()));
        (count_syscalls(&current, &mock, trace_file.path()), prev)
    });

    let runs = if previous.is_some() { format!("{pairs} pairs in turns") } else { format!("{pairs} runs") };
    println!("release CLI: 1 tool round trip + {TOKENS}-token answer, SQLite included, {runs} (medians):");
    let Some(prev) = previous.as_mut() else {
        let c = &mut current.samples;
        println!("  wall:                       {:.1} ms", median(&mut c.wall));
        println!("  wall beyond the mock:       {:.1} ms   (target <= 20 ms)", median(&mut c.over));
        println!(
            "  CPU of the CLI process:     {:.1} ms   (target <= 10 ms beyond the mock; the mock runs in another process)",
            median(&mut c.cpu)
        );
        println!("  peak RSS:                   {:.1} MB   (target < 20 MB)", median(&mut c.rss));
        match &syscalls {
            Ok((s, _)) => {
                println!("  syscalls per token:         {:.2}", s.total / TOKENS as f64);
                println!("  futex calls per turn:       {:.0}", s.futex);
                println!("  eventfd wake-ups per turn:  {:.0}", s.eventfd_wakes);
            }
            Err(why) => println!("  syscalls: not counted: {why}"),
        }
        println!("No baseline: set SWITCHBOARD_BASELINE_CLI to an older binary (scripts/bench-cli.sh builds one).");
        return;
    };
    println!("  current:  {BIN}");
    println!("  previous: {}", prev.bin.display());
    println!("{:<28}{:>12}{:>12}{:>20}", "", "current", "previous", "current/previous");
    let (c, p) = (&mut current.samples, &mut prev.samples);
    let row = |name: &str, unit: &str, c: f64, p: f64, ratio: f64| {
        let show = |v: f64| if unit.is_empty() { format!("{v:.1}") } else { format!("{v:.1} {unit}") };
        println!("{name:<28}{:>12}{:>12}{ratio:>20.2}", show(c), show(p));
    };
    row("wall", "ms", median(&mut c.wall), median(&mut p.wall), median(&mut wall_ratios));
    let (co, po) = (median(&mut c.over), median(&mut p.over));
    row("wall beyond the mock", "ms", co, po, co / po);
    row("CPU (user+sys)", "ms", median(&mut c.cpu), median(&mut p.cpu), median(&mut cpu_ratios));
    let (cr, pr) = (median(&mut c.rss), median(&mut p.rss));
    row("peak RSS", "MB", cr, pr, cr / pr);
    match syscalls {
        Ok((c, Some(p))) => {
            let per_token = |s: &Syscalls| s.total / TOKENS as f64;
            let ratio = |a: f64, b: f64| if b == 0.0 { if a == 0.0 { 1.0 } else { f64::INFINITY } } else { a / b };
            row("syscalls per token", "", per_token(&c), per_token(&p), ratio(per_token(&c), per_token(&p)));
            row("futex calls per turn", "", c.futex, p.futex, ratio(c.futex, p.futex));
            row(
                "eventfd wake-ups per turn",
                "",
                c.eventfd_wakes,
                p.eventfd_wakes,
                ratio(c.eventfd_wakes, p.eventfd_wakes),
            );
        }
        Ok((_, None)) => unreachable!("a baseline is counted whenever there is one"),
        Err(why) => println!("syscalls: not counted: {why}"),
    }
    println!("(wall and CPU ratios: the median of the pairs' own ratios; the others: ratio of the medians)");
}
