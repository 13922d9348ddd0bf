//! Prompts, resources, templates, completion, subscriptions and logging against the reference
//! "everything" server from npm (installed by `scripts/setup.sh`), over stdio.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::tool::NoSecrets;
use switchboard_core::{Source, SourceStatus, ToolContext};
use switchboard_mcp::context::{CompletionRef, LogLevel, PromptContent, ResourceBody};
use switchboard_mcp::{Approvals, ContextError, McpServer, Options, ServerConfig};

fn everything_bin() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../node_modules/.bin/mcp-server-everything");
    assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
    path.display().to_string()
}

#[derive(Default)]
struct MemApprovals(Mutex<HashMap<String, BTreeMap<String, String>>>);

impl Approvals for MemApprovals {
    fn approved_tools(&self, server: &str) -> Result<BTreeMap<String, String>, String> {
        Ok(self.0.lock().unwrap().get(server).cloned().unwrap_or_default())
    }
    fn record_tools(&self, server: &str, fingerprints: &BTreeMap<String, String>) -> Result<(), String> {
        self.0.lock().unwrap().insert(server.to_owned(), fingerprints.clone());
        Ok(())
    }
}

async fn everything() -> McpServer {
    let config = ServerConfig { command: Some(everything_bin()), args: vec!["stdio".into()], ..Default::default() };
    let server = McpServer::new(
        "every",
        config,
        Options::default(),
        Arc::new(NoSecrets),
        Arc::new(MemApprovals::default()),
        true,
    );
    server.start(Arc::new(|| {})).await;
    assert_eq!(server.status(), SourceStatus::Ready, "{:?}", server.stderr());
    server
}

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

async fn eventually(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_and_got_with_arguments_and_embedded_resources() {
    let server = everything().await;
    let offers = server.offers();
    assert!(offers.prompts && offers.resources && offers.subscribe && offers.logging, "{offers:?}");
    let prompts = server.prompts().await.unwrap();
    let names: Vec<_> = prompts.items.iter().map(|p| p.name.as_str()).collect();
    for want in ["simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"] {
        assert!(names.contains(&want), "{names:?}");
    }
    let args_prompt = prompts.items.iter().find(|p| p.name == "args-prompt").unwrap();
    let city = args_prompt.arguments.iter().find(|a| a.name == "city").unwrap();
    assert!(city.required && city.description.as_deref() == Some("Name of the city"));

    let got = server.get_prompt("args-prompt", &args(&[("city", "Paris"), ("state", "Texas")])).await.unwrap();
    assert_eq!(got.messages[0].content, PromptContent::Text("What's weather in Paris, Texas?".into()));

    // The server refuses a missing required argument: the error names the server and the prompt.
    let refused = server.get_prompt("args-prompt", &BTreeMap::new()).await.unwrap_err();
    assert!(matches!(refused, ContextError::Refused(_)), "{refused:?}");
    assert!(refused.to_string().starts_with("the MCP server 'every' refused the prompt 'args-prompt'"), "{refused}");

    let embedded =
        server.get_prompt("resource-prompt", &args(&[("resourceType", "Text"), ("resourceId", "3")])).await.unwrap();
    assert_eq!(embedded.messages.len(), 2);
    let PromptContent::Resource(resource) = &embedded.messages[1].content else { panic!("{embedded:?}") };
    assert_eq!(resource.uri, "demo://resource/dynamic/text/3");
    assert!(resource.text().unwrap().starts_with("Resource 3: This is a plaintext resource"), "{resource:?}");
    let blob =
        server.get_prompt("resource-prompt", &args(&[("resourceType", "Blob"), ("resourceId", "2")])).await.unwrap();
    let PromptContent::Resource(resource) = &blob.messages[1].content else { panic!("{blob:?}") };
    assert!(
        matches!(&resource.body, ResourceBody::Blob(bytes) if bytes.starts_with(b"Resource 2: This is a base64 blob"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_and_templates_are_listed_read_and_completed() {
    let server = everything().await;
    let resources = server.resources().await.unwrap();
    let doc = resources
        .items
        .iter()
        .find(|r| r.uri.starts_with("demo://resource/static/document/"))
        .expect("a static document");
    let read = server.read_resource(&doc.uri).await.unwrap();
    assert_eq!(read[0].uri, doc.uri);
    assert!(!read[0].text().unwrap_or_default().is_empty());

    let templates = server.resource_templates().await.unwrap();
    let text = templates.items.iter().find(|t| t.uri_template == "demo://resource/dynamic/text/{resourceId}").unwrap();
    assert_eq!(text.variables, ["resourceId"]);
    assert_eq!(text.problem, None);
    let (uri, read) = server.read_template(&text.uri_template, &args(&[("resourceId", "5")])).await.unwrap();
    assert_eq!(uri, "demo://resource/dynamic/text/5");
    assert!(read[0].text().unwrap().starts_with("Resource 5:"));

    let department = server
        .complete(&CompletionRef::Prompt { name: "completable-prompt".into() }, "department", "E", &BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(department.values, ["Engineering"], "offers: {:?}", server.offers());
    let name = server
        .complete(
            &CompletionRef::Prompt { name: "completable-prompt".into() },
            "name",
            "",
            &args(&[("department", "Sales")]),
        )
        .await
        .unwrap();
    assert_eq!(name.values, ["David", "Eve", "Frank"], "the other arguments are sent as context");
    let id = server
        .complete(&CompletionRef::Resource { uri: text.uri_template.clone() }, "resourceId", "12", &BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(id.values, ["12"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribed_resources_report_updates_until_read_and_log_notifications_reach_the_log() {
    let server = everything().await;
    let uri = server.resources().await.unwrap().items[0].uri.clone();
    server.subscribe(&uri).await.unwrap();
    assert_eq!(server.subscriptions(), std::slice::from_ref(&uri));
    server.set_log_level(LogLevel::Debug).await.unwrap();
    assert_eq!(server.log_level(), Some(LogLevel::Debug));
    assert_eq!(server.detail().log_level, Some(LogLevel::Debug));
    for tool in ["every__toggle-subscriber-updates", "every__toggle-simulated-logging"] {
        let tool = server.tools().into_iter().find(|t| t.def().name == tool).unwrap();
        tool.call(serde_json::json!({}), ToolContext::detached(Arc::new(NoSecrets))).await.unwrap();
    }
    eventually("a resource update", Duration::from_secs(15), || server.resource_updates().iter().any(|u| u.uri == uri))
        .await;
    // The subscription itself was logged by the server at info, and the simulated messages follow.
    eventually("a log line", Duration::from_secs(15), || server.stderr().iter().any(|l| l.starts_with("[log "))).await;
    let line = server.stderr().into_iter().find(|l| l.starts_with("[log ")).unwrap();
    assert!(line.contains("level message") || line.contains("Subscribe"), "{line}");
    // Reading it again is the refresh: its updates are cleared.
    server.read_resource(&uri).await.unwrap();
    assert!(server.resource_updates().iter().all(|u| u.uri != uri));
    server.unsubscribe(&uri).await.unwrap();
    assert!(server.subscriptions().is_empty());
}
