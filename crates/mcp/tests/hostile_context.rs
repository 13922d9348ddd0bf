//! A hostile server's prompts, resources and templates (`fixtures/hostile_context_server.py`, a
//! scripted stdio server): floods are capped with reasons, a refused prompt names the server and
//! the prompt, a 200 MB resource and one that decodes past the bound are refused while the
//! server stays usable, an unknown binary has no text, a template whose scheme is a variable is
//! refused, and notifications are bounded.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_core::tool::NoSecrets;
use switchboard_core::{Source, SourceStatus};
use switchboard_mcp::context::{CompletionRef, LogLevel, MAX_COMPLETIONS, MAX_LISTED};
use switchboard_mcp::server::STDERR_LINES;
use switchboard_mcp::{Approvals, ContextError, McpServer, Options, ServerConfig};

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
    fn approved_tools(&self, _: &str) -> Result<BTreeMap<String, String>, String> {
        Ok(Default::default())
    }
    fn record_tools(&self, _: &str, _: &BTreeMap<String, String>) -> Result<(), String> {
        Ok(())
    }
}

async fn hostile() -> McpServer {
    let script = repo().join("crates/mcp/tests/fixtures/hostile_context_server.py");
    let config =
        ServerConfig { command: Some(python()), args: vec![script.display().to_string()], ..Default::default() };
    let server = McpServer::new("h", config, Options::default(), Arc::new(NoSecrets), Arc::new(AllApproved), true);
    server.start(Arc::new(|| {})).await;
    assert_eq!(server.status(), SourceStatus::Ready, "{:?}", server.stderr());
    server
}

fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn floods_are_capped_and_bad_entries_skip_themselves() {
    let server = hostile().await;
    let prompts = server.prompts().await.unwrap();
    assert_eq!(prompts.items.len(), MAX_LISTED);
    assert_eq!(prompts.items[0].name, "weather");
    assert!(prompts.skipped.iter().any(|s| s.contains("without a name")), "{:?}", prompts.skipped);
    assert!(prompts.skipped.iter().any(|s| s.contains("'bad-args': its arguments are not a list")));
    assert!(prompts.skipped.iter().any(|s| s.contains("more past 1000 entries")), "{:?}", prompts.skipped);
    let resources = server.resources().await.unwrap();
    assert_eq!(resources.items.len(), MAX_LISTED);
    assert!(resources.skipped.iter().any(|s| s.contains("a resource without a uri")));

    let completion =
        server.complete(&CompletionRef::Prompt { name: "weather".into() }, "city", "", &BTreeMap::new()).await.unwrap();
    assert_eq!(completion.values.len(), MAX_COMPLETIONS);
    assert!(completion.has_more && completion.total == Some(500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_whose_arguments_are_refused_names_the_server_and_the_prompt() {
    let server = hostile().await;
    let e = server.get_prompt("weather", &BTreeMap::new()).await.unwrap_err();
    assert!(matches!(e, ContextError::Refused(_)));
    assert_eq!(
        e.to_string(),
        "the MCP server 'h' refused the prompt 'weather' with these arguments: Missing required argument: city"
    );
    assert!(server.get_prompt("weather", &values(&[("city", "Oslo")])).await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_and_binary_resources_are_refused_and_the_server_stays_usable() {
    let server = hostile().await;
    let started = Instant::now();
    let e = server.read_resource("big://200mb").await.unwrap_err();
    assert!(e.to_string().contains("the server's reply was 200.0 MB, over the 16 MB limit"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(60));
    let e = server.read_resource("big://decoded").await.unwrap_err();
    assert!(matches!(e, ContextError::Invalid(_)));
    assert!(e.to_string().contains("is 9.0 MB, more than the 8.0 MB a resource may be"), "{e}");
    let unknown = server.read_resource("bin://unknown").await.unwrap();
    assert_eq!(unknown[0].text(), None, "bytes that are not UTF-8 are not text, whatever the type");
    let utf8 = server.read_resource("bin://utf8").await.unwrap();
    assert_eq!(utf8[0].text(), Some("plain words in an odd type"));
    let e = server.read_resource("notes://missing-key").await;
    assert!(e.is_ok(), "notes are made up on demand");
    assert!(server.read_resource("nowhere://x").await.unwrap_err().to_string().contains("could not read nowhere://x"));
    assert_eq!(server.status(), SourceStatus::Ready);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_cannot_expand_to_another_scheme() {
    let server = hostile().await;
    let templates = server.resource_templates().await.unwrap();
    let any = templates.items.iter().find(|t| t.name == "any scheme").unwrap();
    assert!(any.variables.is_empty() && any.problem.as_deref().unwrap().contains("does not start with its scheme"));
    let reserved = templates.items.iter().find(|t| t.name == "reserved expansion").unwrap();
    assert!(reserved.problem.as_deref().unwrap().contains("'{+path}'"));
    let e = server.read_template(&any.uri_template, &values(&[("scheme", "file"), ("id", "x")])).await.unwrap_err();
    assert!(matches!(e, ContextError::Invalid(_)), "{e:?}");
    // A value that looks like another URI stays inside the template's own scheme and path.
    let (uri, read) = server.read_template("notes://n/{id}", &values(&[("id", "file:///etc/passwd")])).await.unwrap();
    assert_eq!(uri, "notes://n/file%3A%2F%2F%2Fetc%2Fpasswd");
    assert_eq!(read[0].text(), Some("the note notes://n/file%3A%2F%2F%2Fetc%2Fpasswd"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_are_followed_and_bounded() {
    let server = hostile().await;
    let before = server.resources().await.unwrap();
    assert!(before.items.iter().all(|r| r.uri != "notes://new"));
    server.set_log_level(LogLevel::Warning).await.unwrap();
    server.subscribe("notes://n/1").await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !server.stderr().iter().any(|l| l.contains("the end")) {
        assert!(Instant::now() < deadline, "the last log line never came: {:?}", server.stderr().last());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = server.stderr();
    assert!(log.len() <= STDERR_LINES);
    assert!(log.iter().all(|l| !l.starts_with("[log debug]")), "below the chosen level: dropped");
    // The client handles each notification in a task of its own, so the last few lines may come
    // in another order; the newest are kept and the oldest made room.
    assert!(log.iter().any(|l| l == "[log error] last: the end"), "{:?}", log.last());
    assert!(log.iter().all(|l| l != "[log error] flood 0"), "the oldest lines made room");
    // Only the subscribed resource counts its update; the list change is followed.
    let updates = server.resource_updates();
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(updates[0].uri, "notes://n/1");
    let after = server.resources().await.unwrap();
    assert_eq!(after.items[0].uri, "notes://new", "listed again after resources/list_changed");
}
