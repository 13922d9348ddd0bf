//! Issue 29, "bad input gets a clear error and loses nothing", for what a server asks of the
//! person: a raw JSON-RPC server (`fixtures/hostile_asks_server.py`) floods sampling requests,
//! asks for 1,000,000 tokens, sends forms with types the specification does not allow and a page
//! that is not https, asks outside any call, and asks a client that declared nothing. Each is
//! refused, bounded or declined, the server's log says so, and the server stays usable.

use futures::future::BoxFuture;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use switchboard_core::tool::{NoSecrets, Sampler};
use switchboard_core::{
    ApprovalDecision, ApprovalRequest, Approver, ChatEvent, ElicitationAction, ElicitationAnswer, ElicitationRequest,
    Sampled, SamplingDecision, SamplingRequest, Source, SourceStatus, ToolContext,
};
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

struct Approved;

impl Approvals for Approved {
    fn approved_tools(&self, _: &str) -> Result<BTreeMap<String, String>, String> {
        Ok(BTreeMap::new())
    }
    fn record_tools(&self, _: &str, _: &BTreeMap<String, String>) -> Result<(), String> {
        Ok(())
    }
}

/// A person who accepts every form with a name and approves every completion, counting the
/// questions that reached them.
#[derive(Default)]
struct Person {
    asked: AtomicUsize,
    sampling: Mutex<Vec<SamplingRequest>>,
}

impl Approver for Person {
    fn decide(&self, _: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        Box::pin(async { ApprovalDecision::Deny })
    }
    fn elicit(&self, _: ElicitationRequest) -> BoxFuture<'_, ElicitationAnswer> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let content = serde_json::json!({"name": "Ann"}).as_object().cloned();
        Box::pin(async move { ElicitationAnswer { action: ElicitationAction::Accept, content } })
    }
    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, SamplingDecision> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.sampling.lock().unwrap().push(request);
        Box::pin(async {
            // The person takes a moment: the flood arrives while they read.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            SamplingDecision::Approve { messages: None }
        })
    }
}

/// A model whose output limit is 4,096 tokens.
struct Model;

impl Sampler for Model {
    fn max_tokens(&self, _: &str) -> u32 {
        4096
    }
    fn run(&self, request: SamplingRequest, _: ToolContext) -> BoxFuture<'static, Result<Sampled, String>> {
        Box::pin(async move {
            Ok(Sampled { text: format!("hi ({} tokens)", request.max_tokens), model: "m".into(), truncated: false })
        })
    }
}

fn server(asks: bool, roots: Vec<PathBuf>) -> McpServer {
    let config = ServerConfig {
        command: Some(python()),
        args: vec![repo().join("crates/mcp/tests/fixtures/hostile_asks_server.py").display().to_string()],
        roots,
        ..Default::default()
    };
    let options = Options { asks, ..Options::default() };
    McpServer::new("h", config, options, Arc::new(NoSecrets), Arc::new(Approved), true)
}

async fn call(server: &McpServer, tool: &str, ctx: ToolContext) -> serde_json::Value {
    let tool = server.tools().into_iter().find(|t| t.def().name == format!("h__{tool}")).expect("the tool");
    let out = tool.call(serde_json::json!({}), ctx).await.expect("the call");
    serde_json::from_str(&out.text).unwrap_or(serde_json::Value::String(out.text))
}

fn log(server: &McpServer) -> String {
    server.stderr().join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_hostile_server_asks_is_refused_bounded_or_declined() {
    let root = std::env::temp_dir().join("switchboard-roots-test");
    let server = server(true, vec![root.clone()]);
    server.start(Arc::new(|| {})).await;
    assert_eq!(server.status(), SourceStatus::Ready, "{:?}", server.stderr());
    let person = Arc::new(Person::default());
    let events = Arc::new(switchboard_core::event::VecSink::default());
    let ctx = || {
        ToolContext::detached_with_events(Arc::new(NoSecrets), events.clone())
            .with_approver(person.clone())
            .with_sampler(Arc::new(Model))
    };

    // 100 requests for a completion at once: a burst gets through, the rest are refused at once.
    let flood = call(&server, "flood", ctx()).await;
    let ok = flood["ok"].as_u64().unwrap();
    assert!((1..=5).contains(&ok), "{flood}");
    assert_eq!(flood["refused"].as_u64().unwrap() + ok, 100, "{flood}");
    assert!(person.asked.load(Ordering::SeqCst) <= 5, "the flood reached the person");
    let asked = events.events().iter().filter(|e| matches!(e, ChatEvent::SamplingRequested { .. })).count();
    assert_eq!(asked as u64, ok, "only what was admitted reaches the card");
    assert!(log(&server).contains("faster than one a second"), "{}", log(&server));

    // 1,000,000 tokens: capped to the model's limit, and the card shows both.
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    let huge = call(&server, "huge_tokens", ctx()).await;
    assert_eq!(huge["result"]["content"]["text"], "hi (4096 tokens)", "{huge}");
    let last = person.sampling.lock().unwrap().last().cloned().unwrap();
    assert_eq!((last.max_tokens, last.requested_max_tokens), (4096, Some(1_000_000)));
    assert!(events.events().iter().any(|e| matches!(e,
        ChatEvent::SamplingRequested { max_tokens: 4096, requested_max_tokens: Some(1_000_000), tool, .. } if tool == "huge_tokens")));

    // Forms the specification does not allow and a page that is not https: declined without
    // asking, the card saying why.
    let before = person.asked.load(Ordering::SeqCst);
    for (tool, why) in [
        ("nested_form", "'address' is a nested object"),
        ("array_form", "'numbers' is a list"),
        ("http_page", "not https"),
    ] {
        let answer = call(&server, tool, ctx()).await;
        assert_eq!(answer["result"]["action"], "decline", "{tool}: {answer}");
        assert!(
            events.events().iter().any(|e| matches!(e,
                ChatEvent::ElicitationRequested { refused: Some(r), tool: t, .. } if t == tool && r.contains(why))),
            "{tool}: no card saying '{why}'"
        );
    }
    assert_eq!(person.asked.load(Ordering::SeqCst), before, "nothing refused reached the person");

    // A good form (after the burst of three questions refilled): asked, and what goes back has
    // the default filled in.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let good = call(&server, "good_form", ctx()).await;
    assert_eq!(
        good["result"],
        serde_json::json!({"action": "accept", "content": {"name": "Ann", "size": "m"}}),
        "{good}"
    );

    // The roots it was given.
    let roots = call(&server, "roots", ctx()).await;
    let uri = roots["result"]["roots"][0]["uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("file:///") && uri.ends_with("switchboard-roots-test"), "{roots}");

    // A question after the call ended: declined, and the log says why.
    call(&server, "ask_later", ctx()).await;
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let outside = call(&server, "outside", ctx()).await;
    assert_eq!(outside["result"]["action"], "decline", "{outside}");
    assert!(log(&server).contains("no tool call of the server was running"), "{}", log(&server));
    assert_eq!(server.status(), SourceStatus::Ready);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_declared_nothing_refuses_and_the_log_says_so() {
    let server = server(false, Vec::new());
    server.start(Arc::new(|| {})).await;
    assert_eq!(server.status(), SourceStatus::Ready, "{:?}", server.stderr());
    let ctx = ToolContext::detached(Arc::new(NoSecrets)).with_approver(Arc::new(Person::default()));
    let huge = call(&server, "huge_tokens", ctx.clone()).await;
    assert_eq!(huge["error"]["code"], -32601, "{huge}");
    let form = call(&server, "good_form", ctx.clone()).await;
    assert_eq!(form["error"]["code"], -32601, "{form}");
    assert!(log(&server).contains("which Switchboard did not declare to it; refused"), "{}", log(&server));
    // And the server still answers.
    assert_eq!(call(&server, "roots", ctx).await["error"]["code"], -32601);
    assert_eq!(server.status(), SourceStatus::Ready);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_outside_a_chat_declines_forms_and_refuses_completions() {
    let server = server(true, Vec::new());
    server.start(Arc::new(|| {})).await;
    let detached = ToolContext::detached(Arc::new(NoSecrets));
    let form = call(&server, "good_form", detached.clone()).await;
    assert_eq!(form["result"]["action"], "decline", "{form}");
    let sampled = call(&server, "huge_tokens", detached).await;
    assert!(sampled["error"]["message"].as_str().unwrap().contains("cannot run a completion"), "{sampled}");
    server.stop().await;
}
