//! The MCP client as the official conformance suite (`@modelcontextprotocol/conformance`)
//! drives it: `mcp-conformance-client URL`, with the scenario in `MCP_CONFORMANCE_SCENARIO`.
//! It goes through the same [`McpServer`] the app uses: connect, initialize, list, call. For the
//! elicitation scenario a "person" accepts every form as it is, so the client fills in the
//! defaults of the fields left out.
//! A test driver, not shipped: `crates/mcp/tests/conformance.rs` runs it.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::Mutex;
use switchboard_core::tool::NoSecrets;
use switchboard_core::{Approver, ElicitationAction, ElicitationAnswer, ElicitationRequest};
use switchboard_core::{Source, SourceStatus, ToolContext};
use switchboard_mcp::{Approvals, Browser, McpServer, Options, ServerConfig, TokenVault};

struct Remember;

impl Approvals for Remember {
    fn approved_tools(&self, _: &str) -> Result<BTreeMap<String, String>, String> {
        Ok(BTreeMap::new())
    }
    fn record_tools(&self, _: &str, _: &BTreeMap<String, String>) -> Result<(), String> {
        Ok(())
    }
}

/// Tokens in memory, for one run.
#[derive(Default)]
struct Memory(Mutex<BTreeMap<String, String>>);

impl TokenVault for Memory {
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

/// The suite's authorization servers approve at once with a redirect: a "browser" that requests
/// the page and follows the redirect to the client's loopback listener.
struct Headless;

impl Browser for Headless {
    fn open(&self, url: &str) -> Result<(), String> {
        let url = url.to_owned();
        tokio::spawn(async move {
            let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
            let Ok(page) = client.get(&url).send().await else { return };
            if let Some(next) = page.headers().get("location").and_then(|l| l.to_str().ok()) {
                let _ = client.get(next).send().await;
            }
        });
        Ok(())
    }
}

/// Accepts every form without filling in anything.
struct AcceptAsIs;

impl Approver for AcceptAsIs {
    fn decide(
        &self,
        _: switchboard_core::ApprovalRequest,
    ) -> futures::future::BoxFuture<'_, switchboard_core::ApprovalDecision> {
        Box::pin(async { switchboard_core::ApprovalDecision::Deny })
    }
    fn elicit(&self, _: ElicitationRequest) -> futures::future::BoxFuture<'_, ElicitationAnswer> {
        Box::pin(async { ElicitationAnswer { action: ElicitationAction::Accept, content: None } })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: mcp-conformance-client URL (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let config = ServerConfig { url: Some(url), ..Default::default() };
    let options =
        Options { max_restarts: 0, tokens: Some(Arc::new(Memory::default())), asks: true, ..Options::default() };
    let server = McpServer::new("conformance", config, options, Arc::new(NoSecrets), Arc::new(Remember), true);
    server.start(Arc::new(|| {})).await;
    if let SourceStatus::NeedsSignIn { .. } = server.status()
        && let Err(e) = server.sign_in(&Headless).await
    {
        eprintln!("{e}");
        return ExitCode::FAILURE;
    }
    if let SourceStatus::Failed { reason } = server.status() {
        eprintln!("{reason}");
        return ExitCode::FAILURE;
    }
    let outcome = match scenario.as_str() {
        "initialize" => Ok(()),
        "tools_call" => call(&server, "add_numbers", serde_json::json!({"a": 1, "b": 2})).await.map(drop),
        "sse-retry" => call(&server, "test_reconnection", serde_json::json!({})).await.map(drop),
        "elicitation-sep1034-client-defaults" => {
            call(&server, "test_client_elicitation_defaults", serde_json::json!({})).await.map(drop)
        }
        auth if auth.starts_with("auth/") => call(&server, "test-tool", serde_json::json!({})).await.map(drop),
        other => Err(format!("scenario '{other}' is not supported by this client")),
    };
    server.stop().await;
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

async fn call(server: &McpServer, name: &str, args: serde_json::Value) -> Result<(), String> {
    let tool = server
        .tools()
        .into_iter()
        .find(|t| t.def().name == format!("conformance__{name}"))
        .ok_or_else(|| format!("the server offers no tool '{name}'"))?;
    let ctx = ToolContext::detached(Arc::new(NoSecrets)).with_approver(Arc::new(AcceptAsIs));
    tool.call(args, ctx).await.map(drop).map_err(|e| e.to_string())
}
