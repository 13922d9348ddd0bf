//! Editing an MCP server after adding it: a name another server has is refused and changes
//! nothing, a changed command line asks as adding does (a rename alone does not), and a call the
//! server was running is stopped with a notice that says why. Uses the fixture server on the
//! official Python SDK (`crates/mcp/tests/fixtures/fixture_server.py`, installed by setup).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::{ChatEvent, ErrorKind, EventSink, SourceStatus, ToolStatus};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_secrets::MemoryStore;
use switchboard_service::ipc::{ApprovalChoice, SendRequest};
use switchboard_service::mcp::ServerConfig;
use switchboard_service::{Confirm, Service, Widening};
use switchboard_store::{ProviderProfile, Store};
use tokio::sync::mpsc;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn python() -> String {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("target"));
    let target = if target.is_absolute() { target } else { repo().join(target) };
    let python = target.join("mcp-venv/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/setup.sh", python.display());
    python.display().to_string()
}

fn fixture(dir: &std::path::Path) -> ServerConfig {
    let script = repo().join("crates/mcp/tests/fixtures/fixture_server.py");
    ServerConfig {
        command: Some(python()),
        args: vec![script.display().to_string()],
        env: [("FIXTURE_DIR".to_owned(), dir.display().to_string())].into(),
        ..Default::default()
    }
}

/// Says `answer` and keeps what it was asked.
struct Recording {
    answer: bool,
    asked: Mutex<Vec<Vec<Widening>>>,
}

impl Recording {
    fn saying(answer: bool) -> Self {
        Recording { answer, asked: Mutex::default() }
    }
    fn asked(&self) -> Vec<Vec<Widening>> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }
}

impl Confirm for Recording {
    fn confirm(&self, changes: &[Widening]) -> bool {
        self.asked.lock().unwrap().push(changes.to_vec());
        self.answer
    }
}

fn service(dir: &std::path::Path) -> Service {
    let store = Store::open(&dir.join("switchboard.db")).unwrap();
    Service::new(store, Arc::new(MemoryStore::new())).unwrap()
}

fn names(service: &Service) -> Vec<String> {
    service.mcp_servers().unwrap().servers.into_iter().map(|s| s.detail.name).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_another_server_has_is_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let no = Recording::saying(false);
    let remote = |url: &str| ServerConfig { url: Some(url.into()), ..Default::default() };
    service.mcp_add("alpha", fixture(dir.path()), &no).await.unwrap();
    service.mcp_add("beta", remote("http://127.0.0.1:9/mcp"), &no).await.unwrap();
    let before = service.mcp_servers().unwrap();

    let taken = service.mcp_edit("alpha", "beta", fixture(dir.path()), &no).await.unwrap_err();
    assert_eq!(taken.kind, ErrorKind::Config);
    assert!(taken.message.contains("already an MCP server named 'beta'"), "{}", taken.message);
    let missing = service.mcp_edit("gamma", "gamma", remote("http://127.0.0.1:9/x"), &no).await.unwrap_err();
    assert_eq!(missing.kind, ErrorKind::NotFound);
    let bad = service.mcp_edit("alpha", "bad name!", fixture(dir.path()), &no).await.unwrap_err();
    assert_eq!(bad.kind, ErrorKind::Config);
    assert_eq!(service.mcp_servers().unwrap().servers, before.servers, "a refused edit changes nothing");

    // A remote server's URL and headers can be edited too (nothing runs here: nothing asks).
    let mut moved = remote("http://127.0.0.1:9/v2");
    moved.headers.insert("X-Team".into(), "blue".into());
    let edited = service.mcp_edit("beta", "beta", moved.clone(), &no).await.unwrap();
    assert_eq!(edited.server.config.url, moved.url);
    assert_eq!(edited.server.config.headers, moved.headers);
    assert_eq!(edited.stopped_calls, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_command_line_asks_as_adding_does_and_a_rename_alone_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let yes = Recording::saying(true);
    let added = service.mcp_add("fx", fixture(dir.path()), &yes).await.unwrap();
    assert_eq!(added.detail.status, SourceStatus::Ready);
    assert_eq!(yes.asked().len(), 1);

    let renamed = service.mcp_edit("fx", "greeter", fixture(dir.path()), &yes).await.unwrap();
    assert!(yes.asked().is_empty(), "the same command under a new name is still approved");
    assert_eq!(renamed.server.detail.status, SourceStatus::Ready);
    assert_eq!(names(&service), ["greeter"]);

    let no = Recording::saying(false);
    let mut changed = fixture(dir.path());
    changed.args.push("--verbose".into());
    let edited = service.mcp_edit("greeter", "greeter", changed.clone(), &no).await.unwrap();
    let asked = no.asked();
    assert_eq!(asked.len(), 1, "the new command line is shown");
    let Widening::RunCommand { command_line, .. } = &asked[0][0] else { panic!("{asked:?}") };
    assert!(command_line.contains("--verbose"), "{command_line}");
    assert!(matches!(edited.server.detail.status, SourceStatus::NeedsApproval { .. }), "{:?}", edited.server.detail);
    assert_eq!(edited.server.config.args, changed.args, "the edit is kept, waiting for approval");
}

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_running_during_an_edit_is_stopped_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let mock = MockServer::start(Script::new([
        Reply::tool_call("c1", "fx__wait_forever", r#"{"tag":"edit"}"#),
        Reply::text("It was stopped."),
    ]))
    .await;
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("m".into()),
        options: Default::default(),
    };
    service.add_provider(&profile, true).unwrap();
    let yes = Recording::saying(true);
    service.mcp_add("fx", fixture(dir.path()), &yes).await.unwrap();

    let (tx, mut rx) = mpsc::unbounded_channel();
    service.send(SendRequest::text(None, "wait"), Arc::new(ChannelSink(tx))).unwrap();
    let started = dir.path().join("started-edit");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !started.exists() {
        assert!(tokio::time::Instant::now() < deadline, "the call never started");
        if let Ok(Some(ChatEvent::ApprovalRequested { id, .. })) =
            tokio::time::timeout(Duration::from_millis(50), rx.recv()).await
        {
            service.resolve_approval(&id, ApprovalChoice::Once).unwrap();
        }
    }

    let mut edited = fixture(dir.path());
    edited.env.insert("GREETING".into(), "hi".into());
    let done = service.mcp_edit("fx", "fx", edited, &yes).await.unwrap();
    assert_eq!(done.stopped_calls, 1);
    assert_eq!(done.server.detail.status, SourceStatus::Ready, "the edited server runs");

    let result = loop {
        match tokio::time::timeout(Duration::from_secs(15), rx.recv()).await.expect("the turn goes on").unwrap() {
            ChatEvent::ToolResult { status, output, .. } => break (status, output),
            _ => continue,
        }
    };
    assert_eq!(result.0, ToolStatus::Error);
    assert!(result.1.contains("was edited while this call was running"), "{}", result.1);
}
