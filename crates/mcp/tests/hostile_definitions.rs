//! Issue 31, "tool definitions from servers are input", at the crate's edge: a hostile server
//! (`fixtures/hostile_definitions_server.py`, raw JSON-RPC) lists malformed entries among good
//! ones and adds a tool after its tools were approved, and a list changes while the server runs
//! (`tools/list_changed` is re-read through the same path).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use switchboard_core::tool::NoSecrets;
use switchboard_core::{FindingKind, Source, SourceStatus};
use switchboard_mcp::{Approvals, McpServer, Options, ServerConfig};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn python() -> String {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| repo().join("target"));
    let target = if target.is_absolute() { target } else { repo().join(target) };
    let python = target.join("mcp-venv/bin/python3");
    assert!(python.exists(), "{} is missing: run scripts/setup.sh", python.display());
    python.display().to_string()
}

/// Approvals that remember, as the service's do, that a server's tools were approved at all.
#[derive(Default)]
struct Remembered(Mutex<HashMap<String, BTreeMap<String, String>>>);

impl Approvals for Remembered {
    fn approved_tools(&self, server: &str) -> Result<BTreeMap<String, String>, String> {
        Ok(self.0.lock().unwrap().get(server).cloned().unwrap_or_default())
    }
    fn record_tools(&self, server: &str, fingerprints: &BTreeMap<String, String>) -> Result<(), String> {
        self.0.lock().unwrap().insert(server.to_owned(), fingerprints.clone());
        Ok(())
    }
    fn tools_approved_before(&self, server: &str) -> Result<bool, String> {
        Ok(self.0.lock().unwrap().contains_key(server))
    }
}

fn names(server: &McpServer) -> Vec<String> {
    server.tools().iter().map(|t| t.def().name.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_entries_are_skipped_and_a_tool_added_after_approval_is_held() {
    let dir = tempfile::tempdir().unwrap();
    let config = ServerConfig {
        command: Some(python()),
        args: vec![repo().join("crates/mcp/tests/fixtures/hostile_definitions_server.py").display().to_string()],
        env: [("FIXTURE_DIR".to_owned(), dir.path().display().to_string())].into(),
        ..Default::default()
    };
    let approvals = Arc::new(Remembered::default());
    let server = McpServer::new("h", config, Options::default(), Arc::new(NoSecrets), approvals.clone(), true);
    server.start(Arc::new(|| {})).await;
    assert_eq!(server.status(), SourceStatus::Ready, "{:?}", server.stderr());

    // One page, four malformed entries: each skipped with its reason, the good tools all load.
    assert_eq!(names(&server), ["h__echo", "h__add", "h__shared", "h__sum"]);
    let detail = server.detail();
    assert_eq!(detail.skipped.len(), 4, "{:?}", detail.skipped);
    assert_eq!(detail.skipped[0], "a tool without a name");
    assert!(detail.skipped[1].contains("inputSchema is not an object"), "{:?}", detail.skipped);
    assert!(detail.skipped[2].starts_with("'bad name␛[31m!': not a valid MCP tool name"), "{:?}", detail.skipped);
    assert!(detail.skipped[3].contains("not a valid MCP tool name"), "{:?}", detail.skipped);
    let add = detail.tools.iter().find(|t| t.name == "h__add").unwrap();
    assert!(add.findings.iter().any(|f| f.kind == FindingKind::HiddenInstructions), "{:?}", add.findings);

    // The server adds a tool: it is held, with why and its findings, and the rest stay offered.
    std::fs::write(dir.path().join("add-tool"), "").unwrap();
    server.refresh().await;
    assert_eq!(names(&server), ["h__echo", "h__add", "h__shared", "h__sum"], "the new tool is not offered");
    let held = server.detail().held;
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].name, "h__exfiltrate");
    assert_eq!(held[0].why, "the server added it after you approved its tools");
    assert!(held[0].findings.iter().any(|f| f.kind == FindingKind::AsksForSecrets), "{:?}", held[0].findings);

    // Approved as shown, it is offered.
    server.approve_tools(&held).unwrap();
    assert!(names(&server).contains(&"h__exfiltrate".to_owned()));
    assert!(server.detail().held.is_empty());
    server.stop().await;
}
