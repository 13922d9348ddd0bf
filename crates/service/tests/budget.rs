//! Budgets through the service: a child agent's spend (steps and cost) counts toward its
//! parent's budget, the child pauses through the parent's approver under the calling tool's
//! card, the UI's answer reaches it, and a chat's budget (or the default for new chats) applies
//! to its turns as a running total (a continue raises it for the rest of the chat); nothing spent
//! is lost from the stored answer.

use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{
    Budget, BudgetChoice, BudgetKind, BudgetScope, ChatEvent, EventSink, FinishReason, Prices, ToolStatus,
};
use switchboard_mock_provider::{MockServer, Reply, Script, Step};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::agents::{AgentConfig, Toolset};
use switchboard_service::ipc::SendRequest;
use switchboard_store::{ProfileOptions, ProviderProfile, Store};
use tokio::sync::mpsc;

/// $1 per million tokens in and out: a request of 1,000 + 100 tokens costs $0.0011.
const PRICES: Prices = Prices { input: 1.0, output: 1.0, cached_read: None, cache_write: None, reasoning: None };

fn service() -> (tempfile::TempDir, Service) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    (dir, service)
}

async fn profile(service: &Service, name: &str, script: Script) -> MockServer {
    let mock = MockServer::start(script).await;
    let profile = ProviderProfile {
        name: name.into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some(format!("{name}-model")),
        options: ProfileOptions { prices: Some(PRICES), ..ProfileOptions::default() },
    };
    service.add_provider(&profile, false).unwrap();
    mock
}

/// A reply that calls `tool` and reports 1,000 + 100 tokens.
fn call(id: &str, tool: &str, args: &str) -> Reply {
    Reply::stream([Step::tool_call(id, tool, args), Step::usage(1000, 100), Step::finish("tool_calls")])
}

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

/// The next event, or a panic after 10 s.
async fn next(rx: &mut mpsc::UnboundedReceiver<ChatEvent>) -> ChatEvent {
    tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("an event in time").expect("an event")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_spend_counts_toward_its_parents_budget_and_it_pauses_through_the_parents_approver() {
    let (_dir, service) = service();
    let _lead = profile(
        &service,
        "lead",
        Script::new([call("c1", "agent__Clock", r#"{"message":"what time is it?"}"#), Reply::text("It is noon.")]),
    )
    .await;
    let _clock = profile(
        &service,
        "clock",
        Script::new([call("k1", "get_time", "{}"), call("k2", "get_time", "{}"), Reply::text("Noon-ish.")]),
    )
    .await;
    service
        .put_toolset(Toolset { name: "kids".into(), description: String::new(), tools: vec!["agent:Clock".into()] })
        .unwrap();
    service
        .put_toolset(Toolset { name: "time".into(), description: String::new(), tools: vec!["get_time".into()] })
        .unwrap();
    let agent = |name: &str, profile: &str, toolset: &str| AgentConfig {
        name: name.into(),
        description: format!("{name} does its part."),
        instructions: format!("You are {name}."),
        profile: Some(profile.into()),
        toolsets: vec![toolset.into()],
        ..AgentConfig::default()
    };
    service.put_agent(agent("Clock", "clock", "time")).unwrap();
    service.put_agent(agent("Lead", "lead", "kids")).unwrap();

    // Three steps for the whole turn: the lead's first request, the child's first two.
    let request = SendRequest {
        agent: Some("Lead".into()),
        budget: Some(Budget { steps: Some(3), ..Budget::default() }),
        ..SendRequest::text(None, "Time?")
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let started = service.send(request, Arc::new(ChannelSink(tx))).unwrap();
    let mut events = Vec::new();
    let (pause_id, spent) = loop {
        let e = next(&mut rx).await;
        events.push(e.clone());
        if let ChatEvent::ToolProgress { id, instance: Some(i), event: Some(inner), .. } = &e
            && let ChatEvent::BudgetPaused { id: pause, kind, spent, limit, .. } = inner.as_ref()
        {
            assert_eq!((id.as_str(), i.as_str(), *kind, *limit), ("c1", "Clock[1]", BudgetKind::Steps, 3.0));
            break (pause.clone(), *spent);
        }
    };
    // The lead's step and the child's two, and the cost of all three requests.
    assert_eq!(spent.steps, 3);
    assert!((spent.cost_usd - 3.0 * 0.0011).abs() < 1e-9, "{spent:?}");
    assert!(!spent.cost_unknown);
    assert!(pause_id.starts_with("c1/Clock[1]/"), "{pause_id}");
    // An allowance the loop cannot take is refused, and the pause still waits.
    let refused = service.resolve_budget(&pause_id, BudgetChoice::Continue { allowance: Some(0.5) }).unwrap_err();
    assert!(refused.message.contains("whole number of steps"), "{}", refused.message);
    assert!(service.resolve_budget("nope", BudgetChoice::Stop).is_err());
    service.resolve_budget(&pause_id, BudgetChoice::Continue { allowance: Some(5.0) }).unwrap();
    loop {
        let e = next(&mut rx).await;
        let done = matches!(e, ChatEvent::Done { .. });
        events.push(e);
        if done {
            break;
        }
    }
    // The child went on and answered; the lead's next request needed no pause (3 + 5 allowed).
    let resolved = events.iter().filter(|e| matches!(e, ChatEvent::ToolProgress { event: Some(i), .. } if matches!(i.as_ref(), ChatEvent::BudgetResolved { .. }))).count();
    assert_eq!(resolved, 1);
    assert!(events.iter().any(|e| matches!(e, ChatEvent::ToolResult { id, status: ToolStatus::Ok, output, .. } if id == "c1" && output == "Noon-ish.")));
    assert!(matches!(events.last(), Some(ChatEvent::Done { finish_reason: FinishReason::Stop, .. })));

    // Nothing spent is lost: the stored answer's usage has the lead's two requests and the
    // child's three (1,000 prompt tokens each for the calls, 10 for a plain text reply of the
    // mock), and the pause is kept in the child's nested events.
    let view = service.open(&started.conversation_id).unwrap();
    let answer = view.messages.last().unwrap();
    assert_eq!(answer.usage.prompt_tokens, 3020, "{:?}", answer.usage);
    let nested = &answer.tool_calls[0].nested;
    assert!(nested.iter().any(|n| matches!(n.event, ChatEvent::Notice { ref message, .. } if message.contains("would pass this turn's step budget of 3 steps"))), "{nested:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_chat_starts_with_the_default_budget_and_a_chat_budget_is_checked() {
    let (_dir, service) = service();
    let _mock = profile(&service, "solo", Script::new([call("t1", "get_time", "{}"), Reply::text("Late.")])).await;
    let mut settings = service.settings().unwrap();
    settings.chats.budget = Budget { steps: Some(1), ..Budget::default() };
    service.update_settings(&settings).unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let started = service.send(SendRequest::text(None, "Time?"), Arc::new(ChannelSink(tx))).unwrap();
    let pause = loop {
        if let ChatEvent::BudgetPaused { id, kind, .. } = next(&mut rx).await {
            assert_eq!(kind, BudgetKind::Steps);
            break id;
        }
    };
    service.resolve_budget(&pause, BudgetChoice::Stop).unwrap();
    while !matches!(next(&mut rx).await, ChatEvent::Done { finish_reason: FinishReason::Budget, .. }) {}
    let setup = service.chat_setup(&started.conversation_id).unwrap();
    assert_eq!(setup.budget, Some(Budget { steps: Some(1), ..Budget::default() }), "kept as the chat's own");

    // A budget of zero is refused with a message, and the setup keeps what it had.
    let change = switchboard_service::ipc::ChatSetupChange {
        budget: Some(Budget { steps: Some(0), ..Budget::default() }),
        ..Default::default()
    };
    let e = service.set_chat_setup(&started.conversation_id, change).unwrap_err();
    assert!(e.message.contains("step budget"), "{}", e.message);
    // Emptied, the chat has no budget.
    let change = switchboard_service::ipc::ChatSetupChange { budget: Some(Budget::default()), ..Default::default() };
    assert_eq!(service.set_chat_setup(&started.conversation_id, change).unwrap().budget, None);
}

/// A reply of `text` that reports 1,000 + 100 tokens.
fn answer(text: &str) -> Reply {
    Reply::stream([Step::text(text), Step::usage(1000, 100), Step::finish("stop")])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_budget_is_a_running_total_and_continue_raises_it_for_the_rest_of_the_chat() {
    let (_dir, service) = service();
    let script = Script::new([call("t1", "get_time", "{}"), answer("Late."), answer("Still late.")]);
    let _mock = profile(&service, "solo", script).await;
    let mut settings = service.settings().unwrap();
    settings.chats.budget = Budget { cost_usd: Some(0.002), ..Budget::default() };
    service.update_settings(&settings).unwrap();
    // The first turn spends $0.0022 in two requests: each alone stays under the chat's $0.002.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let first = service.send(SendRequest::text(None, "Time?"), Arc::new(ChannelSink(tx))).unwrap();
    loop {
        match next(&mut rx).await {
            ChatEvent::BudgetPaused { .. } => panic!("the first turn stays under the chat's budget"),
            ChatEvent::Done { finish_reason, .. } => break assert_eq!(finish_reason, FinishReason::Stop),
            _ => {}
        }
    }
    // The second turn pauses before its first request: the chat already spent its budget.
    let (tx, mut rx) = mpsc::unbounded_channel();
    service
        .send(SendRequest::text(Some(first.conversation_id.clone()), "And now?"), Arc::new(ChannelSink(tx)))
        .unwrap();
    let pause = loop {
        if let ChatEvent::BudgetPaused { id, kind, scope, spent, limit, .. } = next(&mut rx).await {
            assert_eq!((kind, scope, limit), (BudgetKind::Cost, BudgetScope::Chat, 0.002));
            assert!((spent.cost_usd - 0.0022).abs() < 1e-9, "what the first turn spent: {spent:?}");
            break id;
        }
    };
    service.resolve_budget(&pause, BudgetChoice::Continue { allowance: Some(1.0) }).unwrap();
    while !matches!(next(&mut rx).await, ChatEvent::Done { finish_reason: FinishReason::Stop, .. }) {}
    // Raised for the rest of the chat: spent so far plus the allowance.
    let raised = service.chat_setup(&first.conversation_id).unwrap().budget.unwrap().cost_usd.unwrap();
    assert!((raised - 1.0022).abs() < 1e-9, "{raised}");
}
