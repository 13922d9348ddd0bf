//! Running the real `switchboard` binary against the mock provider, in a throwaway data dir.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;
use switchboard_mock_provider::{MockServer, Script};
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// A data dir with a `mock` provider profile pointing at a running mock server.
pub struct Env {
    pub dir: TempDir,
    pub mock: MockServer,
}

impl Env {
    pub async fn new(script: Script) -> Env {
        let mock = MockServer::start(script).await;
        let env = Env { dir: tempfile::tempdir().unwrap(), mock };
        let out =
            env.run(&["providers", "add", "mock", "--base-url", &env.mock.base_url(), "--model", "mock-model"]).await;
        assert!(out.status.success(), "providers add failed: {}", String::from_utf8_lossy(&out.stderr));
        env
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn db_path(&self) -> PathBuf {
        self.dir.path().join("switchboard.db")
    }

    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.args(args)
            .env("SWITCHBOARD_DATA_DIR", self.dir.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("SWITCHBOARD_KEY_MOCK")
            .env("RUST_LOG", "warn")
            // Tests never touch the person's keychain; the keychain tests opt in explicitly.
            .env("SWITCHBOARD_KEYCHAIN", "off")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        cmd
    }

    pub async fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().await.expect("run switchboard")
    }

    /// `chat --json ARGS`: the events, parsed.
    pub async fn chat_json(&self, args: &[&str]) -> (Output, Vec<serde_json::Value>) {
        let mut full = vec!["chat", "--json"];
        full.extend_from_slice(args);
        let out = self.run(&full).await;
        let events = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
            .collect();
        (out, events)
    }

    pub async fn show_json(&self, conversation: &str) -> serde_json::Value {
        let out = self.run(&["conversations", "show", conversation, "--json"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

impl Env {
    /// A data dir whose only profile, `name` of `kind`, points at a mock running `script`.
    pub async fn with_profile(script: Script, name: &str, kind: &str) -> Env {
        let env = Env { dir: tempfile::tempdir().unwrap(), mock: MockServer::start(script).await };
        let base = env.mock.base_url();
        let out =
            env.run(&["providers", "add", name, "--kind", kind, "--base-url", &base, "--model", "mock-model"]).await;
        assert!(out.status.success(), "providers add failed: {}", stderr(&out));
        env
    }

    /// `ARGS` with `key` in the variable of profile `profile` and none of the kinds' usual
    /// variables around; the output and its JSON lines.
    pub async fn json_with_key(&self, args: &[&str], profile: &str, key: &str) -> (Output, Vec<serde_json::Value>) {
        let out = self
            .command(args)
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .env(format!("SWITCHBOARD_KEY_{}", profile.to_uppercase()), key)
            .output()
            .await
            .unwrap();
        let events = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        (out, events)
    }
}

/// Events without what differs between two runs of the same script (ids, the profile's name,
/// a tool's output, durations): what must be equal whichever API carried the turn.
pub fn comparable(events: &[serde_json::Value]) -> Vec<serde_json::Value> {
    events
        .iter()
        .map(|e| {
            let mut e = e.clone();
            let o = e.as_object_mut().unwrap();
            // A `context` event's figures are each API's own count (the event itself must match).
            for k in [
                "conversationId",
                "messageId",
                "userMessageId",
                "provider",
                "output",
                "durationMs",
                "usedTokens",
                "breakdown",
                "estimate",
                "estimated",
            ] {
                o.remove(k);
            }
            e
        })
        .collect()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn of_type<'a>(events: &'a [serde_json::Value], ty: &str) -> Vec<&'a serde_json::Value> {
    events.iter().filter(|e| e["type"] == ty).collect()
}

pub fn conversation_id(events: &[serde_json::Value]) -> String {
    events[0]["conversationId"].as_str().expect("started event first").to_owned()
}

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `path` as a string; a test that needs it fails with what to run when setup has not installed it.
pub fn installed(path: PathBuf) -> String {
    assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
    path.display().to_string()
}

/// The reference "everything" MCP server from npm.
pub fn everything() -> String {
    installed(repo().join("node_modules/.bin/mcp-server-everything"))
}

/// A program of the Python MCP servers' virtualenv (`scripts/mcp-servers.sh`).
pub fn venv_bin(name: &str) -> String {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("target"));
    let target = if target.is_absolute() { target } else { repo().join(target) };
    installed(target.join("mcp-venv/bin").join(name))
}

/// A fixture MCP server of `crates/mcp/tests/fixtures` run by the test as
/// `python FIXTURE --http PORT` on a free loopback port, serving streamable HTTP at `url()`;
/// killed and reaped when dropped, so no test leaves it running.
pub struct HttpFixture {
    child: std::process::Child,
    port: u16,
}

impl HttpFixture {
    /// Starts `fixture` with `envs` and waits (up to 30 s) until its port accepts connections.
    pub fn start(fixture: &str, envs: &[(&str, &str)]) -> HttpFixture {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let script = repo().join("crates/mcp/tests/fixtures").join(fixture);
        let child = std::process::Command::new(venv_bin("python3"))
            .arg(&script)
            .args(["--http", &port.to_string()])
            .envs(envs.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut fixture = HttpFixture { child, port };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(fixture.child.try_wait().unwrap().is_none(), "{fixture:?} exited before listening");
            assert!(std::time::Instant::now() < deadline, "{script:?} did not listen on port {port} in 30 s");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        fixture
    }

    /// The server's MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl std::fmt::Debug for HttpFixture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP fixture {} on port {}", self.child.id(), self.port)
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
