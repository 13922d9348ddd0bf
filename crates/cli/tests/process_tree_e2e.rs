//! Nothing a tool started outlives the CLI (issue 31, "nothing left running"), on every way the
//! CLI ends: a normal exit, Ctrl-C (SIGINT), SIGTERM, SIGHUP, and a server that crashes in the
//! middle of a call. The tool (a command tool, or a stdio MCP server's tool) starts a tree with
//! `fixtures/procs_tree.sh`: a plain child, one in a new process group, one in a new session, a
//! double fork, and a double fork into a new session, each writing its pid to a file. The check
//! reads the process table (`/proc`), not the CLI's own bookkeeping: every recorded pid must be
//! gone (or a zombie, which is no longer running) within a bounded time after the CLI ended.

#![cfg(target_os = "linux")]

mod common;

use common::*;
use std::path::Path;
use std::time::{Duration, Instant};
use switchboard_mock_provider::{Reply, Script};

const KINDS: &[&str] = &["root", "plain", "group", "setsid", "double", "escaped"];

fn script() -> String {
    repo().join("crates/cli/tests/fixtures/procs_tree.sh").display().to_string()
}

fn pid_of(dir: &Path, kind: &str) -> Option<i32> {
    std::fs::read_to_string(dir.join(format!("{kind}.pid"))).ok()?.trim().parse().ok()
}

/// Whether `pid` is running (present in the process table and not a zombie).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start()).unwrap_or("");
            !state.starts_with('Z') && !state.starts_with('X')
        }
        Err(_) => false,
    }
}

/// Asserts every pid recorded in `dir` (of `kinds`) stops running within a few seconds; kills
/// what is left either way, so a failing test leaves nothing behind either.
async fn assert_all_gone(dir: &Path, kinds: &[&str]) {
    let pids: Vec<(&str, i32)> =
        kinds.iter().map(|k| (*k, pid_of(dir, k).unwrap_or_else(|| panic!("{k}.pid was not written")))).collect();
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut left: Vec<(&str, i32)> = pids.clone();
    while Instant::now() < deadline {
        left = pids.iter().copied().filter(|(_, p)| running(*p)).collect();
        if left.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let described: Vec<String> = left
        .iter()
        .map(|(k, p)| format!("{k} ({p}): {}", std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default()))
        .collect();
    for (_, p) in &left {
        // SAFETY: sends SIGKILL to a process this test's tool started (still running, so the pid
        // is still that process's).
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(*p, libc::SIGKILL)
        };
    }
    panic!("still running after the CLI ended:\n{}", described.join("\n"));
}

async fn wait_for(path: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{what} never happened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A data dir with the command tool `tree`, which runs the script in `mode` writing into `dir`.
async fn with_command_tool(dir: &Path, mode: &str) -> Env {
    let env = Env::new(Script::new([Reply::tool_call("c1", "tree", "{}"), Reply::text("Done.")])).await;
    let dir = dir.display().to_string();
    let python = venv_bin("python");
    let script = script();
    let add = [
        "tools",
        "add-command",
        "tree",
        "--yes",
        "--description",
        "Starts a tree of processes.",
        "--timeout",
        "120",
        "--",
        "sh",
        &script,
        &dir,
        mode,
        &python,
    ];
    let out = env.run(&add).await;
    assert!(out.status.success(), "{}", stderr(&out));
    env
}

/// A data dir with the approved MCP server `procs`, whose `spawn_tree` call is the model's.
async fn with_server(dir: &Path, then: &str) -> Env {
    let args = serde_json::json!({ "then": then }).to_string();
    let env = Env::new(Script::new([Reply::tool_call("c1", "procs__spawn_tree", &args), Reply::text("Done.")])).await;
    let config = serde_json::json!({"mcpServers": {"procs": {
        "command": venv_bin("python"),
        "args": [repo().join("crates/cli/tests/fixtures/procs_tree_server.py")],
        "env": {"PROCS_DIR": dir, "PROCS_SCRIPT": script(), "PROCS_PYTHON": venv_bin("python")}
    }}});
    std::fs::write(env.data_dir().join("mcp.json"), config.to_string()).unwrap();
    let out = env.run(&["mcp", "approve", "procs", "--yes"]).await;
    assert!(out.status.success(), "{}\n{}", stdout(&out), stderr(&out));
    env
}

/// Runs a turn whose tool hangs once its tree is up, sends `signal` to the CLI then, and
/// checks the CLI ends and nothing of the tree is left.
async fn ended_by(env: &Env, dir: &Path, signal: i32, kinds: &[&str]) {
    let mut child = env.command(&["chat", "--json", "--approve-all", "Go"]).spawn().unwrap();
    wait_for(&dir.join("ready"), "the tool's tree starting").await;
    let pid = i32::try_from(child.id().unwrap()).unwrap();
    // SAFETY: sends a signal to the CLI this test started.
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, signal)
    };
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the CLI ends within 20 s of the signal")
        .unwrap();
    assert!(!status.success(), "{status}");
    assert_all_gone(dir, kinds).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_tools_tree_ends_when_the_cli_exits_normally() {
    let dir = tempfile::tempdir().unwrap();
    let env = with_command_tool(dir.path(), "exit").await;
    let out = env.run(&["chat", "--json", "--approve-all", "Go"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("started"), "{}", stdout(&out));
    assert_all_gone(dir.path(), KINDS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_tools_tree_ends_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let env = with_command_tool(dir.path(), "hang").await;
    ended_by(&env, dir.path(), libc::SIGINT, KINDS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_tools_tree_ends_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let env = with_command_tool(dir.path(), "hang").await;
    ended_by(&env, dir.path(), libc::SIGTERM, KINDS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_tools_tree_ends_on_sighup() {
    let dir = tempfile::tempdir().unwrap();
    let env = with_command_tool(dir.path(), "hang").await;
    ended_by(&env, dir.path(), libc::SIGHUP, KINDS).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_tree_ends_when_it_crashes_mid_call() {
    let dir = tempfile::tempdir().unwrap();
    let env = with_server(dir.path(), "crash").await;
    let out = env.run(&["chat", "--json", "--approve-all", "Go"]).await;
    assert!(stdout(&out).contains(r#""status":"error""#), "the call failed: {}\n{}", stdout(&out), stderr(&out));
    let mut kinds = KINDS.to_vec();
    kinds.push("server");
    assert_all_gone(dir.path(), &kinds).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_tree_ends_on_sigterm_mid_call() {
    let dir = tempfile::tempdir().unwrap();
    let env = with_server(dir.path(), "hang").await;
    let mut kinds = KINDS.to_vec();
    kinds.push("server");
    ended_by(&env, dir.path(), libc::SIGTERM, &kinds).await;
}
