//! What starting a sub-agent costs the engine beyond its model call: the time from the parent's
//! `toolStarted` for an `agent__Name` call to the child's own `started` (the agents file read,
//! the child's profile, key and settings resolved, its toolsets selected, its engine built; its
//! first request goes out right after). Target: under 2 ms.
//!
//! `cargo bench -p switchboard-service --bench agents`. Both models are the local mock server; the
//! time measured is before the child's first request, so no network wait is in it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::turn::{ApprovalDecision, FixedApprover};
use switchboard_core::{ChatEvent, EventSink};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_service::Service;
use switchboard_service::agents::{AgentConfig, Toolset};
use switchboard_service::ipc::SendRequest;
use switchboard_store::{ProviderProfile, Store};

const RUNS: usize = 200;

/// When the parent's call started and when each child said `started`.
#[derive(Default)]
struct Stamps(Mutex<(Option<Instant>, Vec<Instant>)>);

impl EventSink for Stamps {
    fn emit(&self, event: ChatEvent) {
        let now = Instant::now();
        let mut s = self.0.lock().unwrap();
        match event {
            ChatEvent::ToolStarted { .. } => s.0 = Some(now),
            ChatEvent::ToolProgress { event: Some(e), .. } if matches!(*e, ChatEvent::Started { .. }) => s.1.push(now),
            _ => {}
        }
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let service = Service::new(
        Store::open(&dir.path().join("switchboard.db")).unwrap(),
        Arc::new(switchboard_secrets::MemoryStore::new()),
    )
    .unwrap();
    let replies: Vec<Reply> = (0..RUNS)
        .flat_map(|_| [Reply::tool_call("c1", "agent__Child", r#"{"message":"go"}"#), Reply::text("done")])
        .collect();
    let (lead, child) = runtime.block_on(async {
        (
            MockServer::start(Script::new(replies)).await,
            MockServer::start(Script::new((0..RUNS).map(|_| Reply::text("ok")))).await,
        )
    });
    for (name, mock) in [("lead", &lead), ("child", &child)] {
        let profile = ProviderProfile {
            name: name.into(),
            kind: "openai".into(),
            base_url: mock.base_url(),
            model: Some("m".into()),
            options: Default::default(),
        };
        service.add_provider(&profile, false).unwrap();
    }
    service
        .put_toolset(Toolset { name: "kids".into(), description: String::new(), tools: vec!["agent:Child".into()] })
        .unwrap();
    // The child has tools of its own to select, as a real one would.
    service
        .put_toolset(Toolset { name: "own".into(), description: String::new(), tools: vec!["builtin".into()] })
        .unwrap();
    let agent = |name: &str, profile: &str, toolsets: &[&str]| AgentConfig {
        name: name.into(),
        instructions: format!("You are {name}."),
        profile: Some(profile.into()),
        toolsets: toolsets.iter().map(|t| (*t).to_owned()).collect(),
        ..AgentConfig::default()
    };
    service.put_agent(agent("Child", "child", &["own"])).unwrap();
    service.put_agent(agent("Lead", "lead", &["kids"])).unwrap();

    let mut starts: Vec<Duration> = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let turn =
            service.prepare(SendRequest { agent: Some("Lead".into()), ..SendRequest::text(None, "go") }).unwrap();
        let stamps = Arc::new(Stamps::default());
        runtime.block_on(service.run(turn, stamps.clone(), Arc::new(FixedApprover(ApprovalDecision::Once))));
        let s = stamps.0.lock().unwrap();
        starts.push(s.1[0] - s.0.expect("the agent call started"));
    }
    starts.sort_unstable();
    let pct = |p: f64| starts[((starts.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "sub-agent start (toolStarted -> child started), {RUNS} runs: median {:.2} ms, p95 {:.2} ms, max {:.2} ms (target < 2 ms)",
        pct(0.5).as_secs_f64() * 1e3,
        pct(0.95).as_secs_f64() * 1e3,
        pct(1.0).as_secs_f64() * 1e3,
    );
}
