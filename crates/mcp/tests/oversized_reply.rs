//! A stdio server's reply over the transport's limit of one message fails its call at once, with
//! the reply's size named, and the server stays usable; without that, the call would wait for
//! the tool timeout. The server is `fixtures/hostile_small_server.py`, on the official Python SDK.

use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::tool::NoSecrets;
use switchboard_core::{Source, SourceStatus, Tool, ToolContext, ToolError};
use switchboard_mcp::{Approvals, McpServer, Options, ServerConfig};

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

struct AllApproved;

impl Approvals for AllApproved {
    fn approved_tools(&self, _: &str) -> Result<std::collections::BTreeMap<String, String>, String> {
        Ok(Default::default())
    }
    fn record_tools(&self, _: &str, _: &std::collections::BTreeMap<String, String>) -> Result<(), String> {
        Ok(())
    }
}

fn tool(server: &McpServer, name: &str) -> Arc<dyn Tool> {
    server.tools().into_iter().find(|t| t.def().name == name).unwrap_or_else(|| panic!("{name} is not offered"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_over_the_line_limit_fails_at_once_with_its_size_and_the_server_stays_usable() {
    let script = repo().join("crates/mcp/tests/fixtures/hostile_small_server.py");
    let config = ServerConfig {
        command: Some(python()),
        args: vec![script.display().to_string()],
        // The tool timeout the error must not wait for.
        timeout: Some(600),
        ..Default::default()
    };
    let server = McpServer::new("big", config, Options::default(), Arc::new(NoSecrets), Arc::new(AllApproved), true);
    server.start(Arc::new(|| {})).await;
    assert_eq!(server.status(), SourceStatus::Ready, "{:?}", server.stderr());
    let ctx = || ToolContext::detached(Arc::new(NoSecrets));

    let huge = tool(&server, "big__huge");
    let call = huge.call(json!({"megabytes": 40}), ctx());
    let error = tokio::time::timeout(Duration::from_secs(60), call)
        .await
        .expect("the call fails well before the tool timeout (600 s)")
        .expect_err("a 40 MB reply is refused");
    let ToolError::Failed(message) = error else { panic!("{error:?}") };
    // The SDK sends the text twice (as content and as structured content): at least 40 MB.
    let size = message.split("the server's reply was ").nth(1).and_then(|rest| rest.split(" MB").next());
    assert!(size.and_then(|s| s.parse::<f64>().ok()).is_some_and(|mb| mb >= 40.0), "{message}");
    assert!(message.contains("MB, over the 16 MB limit"), "{message}");

    let echo = tool(&server, "big__echo");
    let small = tokio::time::timeout(Duration::from_secs(30), echo.call(json!({"text": "still here"}), ctx()))
        .await
        .expect("the server still answers")
        .expect("a small reply passes");
    assert_eq!(small.text, "still here");
    assert_eq!(server.status(), SourceStatus::Ready);
    server.stop().await;
}
