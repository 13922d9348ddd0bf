//! Agents and toolsets end to end against the mock provider: a person chatting with an agent,
//! agents called as tools by another (in parallel, nested, approved through the parent, stopped
//! with it), and everything a broken setup says instead of failing. An agent call's turn is
//! built like a person's: what its model refuses is not sent, its instructions follow one rule,
//! a store error is an error, and the whole turn reads each key once.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::event::VecSink;
use switchboard_core::turn::{ApprovalDecision, FixedApprover};
use switchboard_core::{
    ApprovalPolicy, ChatEvent, EventSink, FinishReason, GenerationOptions, NoticeKind, ReasoningEffort, ToolStatus,
};
use switchboard_mock_provider::{MockServer, Reply, Script, Step};
use switchboard_secrets::{MemoryStore, SecretStore, SecretValue};
use switchboard_service::Service;
use switchboard_service::agents::{AgentConfig, AgentInput, Toolset};
use switchboard_service::ipc::{ApprovalChoice, SendRequest};
use switchboard_store::{ProviderProfile, Store};
use tokio::sync::mpsc;

/// A service whose config directory is a fresh temporary folder.
fn service() -> (tempfile::TempDir, Service) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    (dir, service)
}

/// A profile `name` on its own mock server.
async fn profile(service: &Service, name: &str, script: Script) -> MockServer {
    let mock = MockServer::start(script).await;
    let profile = ProviderProfile {
        name: name.into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some(format!("{name}-model")),
        options: Default::default(),
    };
    service.add_provider(&profile, false).unwrap();
    mock
}

fn agent(name: &str, profile: &str, toolsets: &[&str]) -> AgentConfig {
    AgentConfig {
        name: name.into(),
        description: format!("{name} does its part."),
        instructions: format!("You are {name}."),
        profile: Some(profile.into()),
        toolsets: toolsets.iter().map(|t| (*t).to_owned()).collect(),
        ..AgentConfig::default()
    }
}

fn toolset(name: &str, tools: &[&str]) -> Toolset {
    Toolset { name: name.into(), description: String::new(), tools: tools.iter().map(|t| (*t).to_owned()).collect() }
}

async fn run(service: &Service, request: SendRequest) -> (switchboard_service::TurnReport, Vec<ChatEvent>) {
    let turn = service.prepare(request).unwrap();
    let sink = Arc::new(VecSink::default());
    let report = tokio::time::timeout(
        Duration::from_secs(20),
        service.run(turn, sink.clone(), Arc::new(FixedApprover(ApprovalDecision::Once))),
    )
    .await
    .expect("the turn ended");
    (report, sink.events())
}

fn with_agent(text: &str, agent: &str) -> SendRequest {
    SendRequest { agent: Some(agent.into()), ..SendRequest::text(None, text) }
}

fn result<'a>(events: &'a [ChatEvent], call: &str) -> (&'a ToolStatus, &'a str) {
    events
        .iter()
        .find_map(|e| match e {
            ChatEvent::ToolResult { id, status, output, .. } if id == call => Some((status, output.as_str())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {call}"))
}

/// The nested events of call `id`: (instance, event).
fn nested<'a>(events: &'a [ChatEvent], call: &str) -> Vec<(&'a str, &'a ChatEvent)> {
    events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::ToolProgress { id, instance: Some(i), event: Some(ev), .. } if id == call => {
                Some((i.as_str(), ev.as_ref()))
            }
            _ => None,
        })
        .collect()
}

fn usage_prompt_tokens(events: &[ChatEvent]) -> u64 {
    match events.last() {
        Some(ChatEvent::Done { usage, .. }) => usage.prompt_tokens,
        other => panic!("the turn did not end with done: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_agent_calls_two_children_in_parallel_and_their_work_nests_in_its_calls() {
    let (_dir, service) = service();
    let usage = |p| Step::usage(p, 1);
    let lead = profile(
        &service,
        "lead",
        Script::new([
            Reply::stream([
                Step::tool_call("c1", "agent__Scout", r#"{"message":"Paris","focus":"museums"}"#),
                Step::tool_call("c2", "agent__Scout", r#"{"message":"Rome"}"#),
                Step::tool_call("c3", "agent__Writer", r#"{"message":"a haiku"}"#),
                usage(100),
                Step::finish("tool_calls"),
            ]),
            Reply::stream([Step::text("Both cities, and a haiku."), usage(200), Step::finish("stop")]),
            Reply::text("You're welcome."),
        ]),
    )
    .await;
    let scouts = profile(&service, "scouts", Script::echo()).await;
    let writer = profile(
        &service,
        "writer",
        Script::new([Reply::stream([Step::text("Old pond, "), Step::text("a frog."), usage(7), Step::finish("stop")])]),
    )
    .await;
    service.put_toolset(toolset("helpers", &["agent:Scout", "agent:Writer"])).unwrap();
    let mut scout = agent("Scout", "scouts", &[]);
    scout.inputs = vec![AgentInput { name: "focus".into(), ..AgentInput::default() }];
    service.put_agent(scout).unwrap();
    service.put_agent(agent("Writer", "writer", &[])).unwrap();
    service.put_agent(agent("Lead", "lead", &["helpers"])).unwrap();

    let (report, events) = run(&service, with_agent("Research Paris and Rome", "Lead")).await;

    assert_eq!(report.outcome.finish_reason, FinishReason::Stop, "{events:#?}");
    // The lead's model got the agents as tools, with their input schemas.
    let first = &lead.requests()[0].body;
    let tools: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["agent__Scout", "agent__Writer"]);
    assert_eq!(first["tools"][0]["function"]["parameters"]["properties"]["focus"]["type"], "string");
    assert!(first["messages"][0]["content"].as_str().unwrap().contains("You are Lead."));
    // Each call ran its own instance, with its own instructions and question.
    assert_eq!(result(&events, "c1"), (&ToolStatus::Ok, "echo: Paris\n\nfocus: museums"));
    assert_eq!(result(&events, "c2"), (&ToolStatus::Ok, "echo: Rome"));
    assert_eq!(result(&events, "c3"), (&ToolStatus::Ok, "Old pond, a frog."));
    let instances: Vec<&str> = ["c1", "c2"].iter().map(|c| nested(&events, c)[0].0).collect();
    let mut sorted = instances.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["Scout[1]", "Scout[2]"], "parallel calls of one agent are numbered");
    assert_eq!(nested(&events, "c3")[0].0, "Writer[1]");
    assert!(nested(&events, "c3").iter().any(|(_, e)| matches!(e, ChatEvent::TextDelta { .. })));
    assert_eq!(scouts.requests().len(), 2);
    assert_eq!(scouts.requests()[0].body["messages"][0]["content"], "You are Scout.");
    assert_eq!(writer.requests().len(), 1);
    // Usage: the lead's two requests, the writer's, and the two scouts' (the echo server
    // reports 10 prompt tokens a request).
    assert_eq!(usage_prompt_tokens(&events), 100 + 200 + 7 + 2 * 10);

    // After a restart the nested events are there, with the call they belong to.
    let view = service.open(&report.started.conversation_id).unwrap();
    let calls = &view.messages[1].tool_calls;
    let writer_call = calls.iter().find(|c| c.call_id == "c3").unwrap();
    assert_eq!(writer_call.nested[0].instance, "Writer[1]");
    assert!(writer_call.nested.iter().any(|n| n.event == ChatEvent::TextDelta { text: "Old pond, a frog.".into() }));
    assert!(writer_call.nested.iter().any(|n| matches!(n.event, ChatEvent::Done { .. })));
    assert_eq!(view.messages[1].content, "Both cities, and a haiku.");

    // The chat's tools are the agent's (its tray forces and turns off those).
    let listed: Vec<String> =
        service.tools(Some(&report.started.conversation_id)).unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(listed, ["agent__Scout", "agent__Writer"]);
    assert!(service.tools(None).unwrap().iter().any(|t| t.name == "get_time"), "a plain chat lists every tool");
    // A new chat with the agent picked lists the same, before it has an id.
    let picked: Vec<String> = service.agent_tools("Lead").unwrap().into_iter().map(|t| t.name).collect();
    assert_eq!(picked, listed);

    // The chat remembers its agent: the next question runs with it again.
    let next = SendRequest::text(Some(report.started.conversation_id.clone()), "Thanks");
    let lead_before = lead.requests().len();
    let (report, _) = run(&service, next).await;
    assert_eq!(report.profile.name, "lead");
    assert_eq!(report.outcome.finish_reason, FinishReason::Stop);
    assert_eq!(lead.requests().len(), lead_before + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cycles_and_depth_are_refused_with_a_clear_result_and_the_turn_goes_on() {
    let (_dir, service) = service();
    let _lead = profile(
        &service,
        "lead",
        Script::new([Reply::tool_call("c1", "agent__Alpha", r#"{"message":"go"}"#), Reply::text("Done.")]),
    )
    .await;
    // Alpha calls Lead back (a cycle), then Beta; Beta would be the fourth level down... no:
    // Lead → Alpha → Beta is three, and Beta calling Gamma would be the fourth.
    let _alpha = profile(
        &service,
        "alpha",
        Script::new([
            Reply::tool_call("a1", "agent__Lead", r#"{"message":"back"}"#),
            Reply::tool_call("a2", "agent__Beta", r#"{"message":"deeper"}"#),
            Reply::text("Alpha is done."),
        ]),
    )
    .await;
    let _beta = profile(
        &service,
        "beta",
        Script::new([Reply::tool_call("b1", "agent__Gamma", r#"{"message":"deepest"}"#), Reply::text("Beta is done.")]),
    )
    .await;
    let gamma = profile(&service, "gamma", Script::echo()).await;
    service.put_toolset(toolset("up", &["agent:Lead", "agent:Beta"])).unwrap();
    service.put_toolset(toolset("alpha", &["agent:Alpha"])).unwrap();
    service.put_toolset(toolset("gamma", &["agent:Gamma"])).unwrap();
    service.put_agent(agent("Gamma", "gamma", &[])).unwrap();
    service.put_agent(agent("Beta", "beta", &["gamma"])).unwrap();
    service.put_agent(agent("Alpha", "alpha", &["up"])).unwrap();
    service.put_agent(agent("Lead", "lead", &["alpha"])).unwrap();

    let (report, events) = run(&service, with_agent("Start", "Lead")).await;

    assert_eq!(report.outcome.finish_reason, FinishReason::Stop);
    assert_eq!(result(&events, "c1"), (&ToolStatus::Ok, "Alpha is done."));
    let inside = nested(&events, "c1");
    let child_result = |call: &str| {
        inside.iter().find_map(|(_, e)| match e {
            ChatEvent::ToolResult { id, status, output, .. } if id == call => Some((*status, output.clone())),
            _ => None,
        })
    };
    let (status, output) = child_result("a1").expect("the cycle got a result");
    assert_eq!(status, ToolStatus::Error);
    assert!(output.contains("'Lead' is already running above this call (Lead → Alpha → Lead)"), "{output}");
    assert_eq!(child_result("a2").unwrap().1, "Beta is done.");
    // Beta's own call to Gamma, two levels down, was refused for depth.
    let deep = inside
        .iter()
        .filter_map(|(_, e)| match e {
            ChatEvent::ToolProgress { event: Some(inner), .. } => Some(inner.as_ref()),
            _ => None,
        })
        .find_map(|e| match e {
            ChatEvent::ToolResult { id, output, .. } if id == "b1" => Some(output.clone()),
            _ => None,
        })
        .expect("Beta's call to Gamma got a result");
    assert!(
        deep.contains("Agents nest at most 3 deep; 'Gamma' would be deeper (Lead → Alpha → Beta → Gamma)."),
        "{deep}"
    );
    assert!(gamma.requests().is_empty(), "nothing ran below the limit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_child_or_one_without_a_profile_is_a_tool_error_and_keeps_what_it_wrote() {
    let (_dir, service) = service();
    let _lead = profile(
        &service,
        "lead",
        Script::new([
            Reply::parallel_tool_calls(&[
                ("c1", "agent__Flaky", r#"{"message":"try"}"#),
                ("c2", "agent__Orphan", r#"{"message":"try"}"#),
                ("c3", "agent__Looper", r#"{"message":"try"}"#),
            ]),
            Reply::text("Reported."),
        ]),
    )
    .await;
    let _flaky =
        profile(&service, "flaky", Script::new([Reply::stream([Step::text("Half an answer"), Step::Drop])])).await;
    let _looper = profile(
        &service,
        "looper",
        Script::new([
            Reply::tool_call("l1", "agent__Looper", r#"{"message":"again"}"#),
            Reply::tool_call("l2", "agent__Looper", r#"{"message":"again"}"#),
            // Asked for a final answer with tools off.
            Reply::text("Partial findings."),
        ]),
    )
    .await;
    let _orphan = profile(&service, "orphan", Script::echo()).await;
    service.put_toolset(toolset("all", &["agent:Flaky", "agent:Orphan", "agent:Looper"])).unwrap();
    service.put_toolset(toolset("self", &["agent:Looper"])).unwrap();
    service.put_agent(agent("Flaky", "flaky", &[])).unwrap();
    service.put_agent(agent("Orphan", "orphan", &[])).unwrap();
    service.put_agent(AgentConfig { max_iterations: Some(2), ..agent("Looper", "looper", &["self"]) }).unwrap();
    service.put_agent(agent("Lead", "lead", &["all"])).unwrap();
    service.remove_provider("orphan").unwrap();
    let listed = service.agent_info("Orphan").unwrap();
    assert!(listed.problems.iter().any(|p| p.contains("orphan")), "{listed:?}");

    let (report, events) = run(&service, with_agent("Try all three", "Lead")).await;

    assert_eq!(report.outcome.finish_reason, FinishReason::Stop, "the parent goes on");
    let (status, output) = result(&events, "c1");
    assert_eq!(*status, ToolStatus::Error);
    assert!(output.starts_with("Flaky[1] failed:") && output.ends_with("Half an answer"), "{output}");
    let (status, output) = result(&events, "c2");
    assert_eq!(*status, ToolStatus::Error);
    assert!(output.starts_with("Orphan[1] could not start:") && output.contains("orphan"), "{output}");
    let (status, output) = result(&events, "c3");
    assert_eq!(*status, ToolStatus::Ok);
    assert_eq!(output, "Partial findings.\n\n(Looper[1] used all of its 2 steps; this is what it had then.)");
    assert!(
        nested(&events, "c3")
            .iter()
            .any(|(_, e)| matches!(e, ChatEvent::Notice { kind: NoticeKind::MaxIterations, .. }))
    );
}

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_call_that_asks_is_put_to_the_person_in_the_parent_chat_and_stop_reaches_children() {
    let (_dir, service) = service();
    let _lead = profile(
        &service,
        "lead",
        Script::new([
            Reply::tool_call("c1", "agent__Clock", r#"{"message":"what time is it?"}"#),
            Reply::text("It is noon."),
            Reply::tool_call("c1", "agent__Slow", r#"{"message":"take your time"}"#),
        ]),
    )
    .await;
    let _clock =
        profile(&service, "clock", Script::new([Reply::tool_call("c1", "get_time", "{}"), Reply::text("Noon-ish.")]))
            .await;
    let _slow = profile(&service, "slow", Script::new([Reply::stream([Step::text("Thinking"), Step::Stall])])).await;
    service.put_toolset(toolset("time", &["get_time"])).unwrap();
    service.put_toolset(toolset("kids", &["agent:Clock", "agent:Slow"])).unwrap();
    let mut clock = agent("Clock", "clock", &["time"]);
    clock.approval.insert("get_time".into(), ApprovalPolicy::Ask);
    service.put_agent(clock).unwrap();
    service.put_agent(agent("Slow", "slow", &[])).unwrap();
    service.put_agent(agent("Lead", "lead", &["kids"])).unwrap();

    // The child's get_time asks (the agent's approval default); the question reaches the
    // person through the parent's turn, under an id no other call has.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let started = service.send(with_agent("Time?", "Lead"), Arc::new(ChannelSink(tx))).unwrap();
    let mut events = Vec::new();
    let asked = loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap().unwrap();
        events.push(e.clone());
        if let ChatEvent::ToolProgress { event: Some(inner), instance: Some(i), .. } = &e
            && let ChatEvent::ApprovalRequested { id, name, .. } = inner.as_ref()
        {
            assert_eq!((i.as_str(), name.as_str()), ("Clock[1]", "get_time"));
            break id.clone();
        }
    };
    assert_eq!(asked, "c1/Clock[1]/c1");
    service.resolve_approval(&asked, ApprovalChoice::Once).unwrap();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap().unwrap();
        let done = matches!(e, ChatEvent::Done { .. });
        events.push(e);
        if done {
            break;
        }
    }
    assert_eq!(result(&events, "c1"), (&ToolStatus::Ok, "Noon-ish."));
    assert!(
        nested(&events, "c1").iter().any(|(_, e)| matches!(e, ChatEvent::ToolResult { status: ToolStatus::Ok, .. }))
    );

    // Stop while a child streams: the child is cancelled with the parent, what it wrote is kept.
    let (tx, mut rx) = mpsc::unbounded_channel();
    let next = SendRequest::text(Some(started.conversation_id.clone()), "Slowly now");
    let started = service.send(next, Arc::new(ChannelSink(tx))).unwrap();
    let mut events = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap().unwrap();
        let child_text = matches!(&e, ChatEvent::ToolProgress { event: Some(inner), .. } if matches!(inner.as_ref(), ChatEvent::TextDelta { .. }));
        events.push(e);
        if child_text {
            break;
        }
    }
    assert!(service.stop(&started.message_id));
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.unwrap().unwrap();
        let done = matches!(e, ChatEvent::Done { .. });
        events.push(e);
        if done {
            break;
        }
    }
    assert_eq!(result(&events, "c1").0, &ToolStatus::Cancelled);
    assert!(matches!(events.last(), Some(ChatEvent::Done { finish_reason: FinishReason::Cancelled, .. })));
    let view = service.open(&started.conversation_id).unwrap();
    let call = &view.messages.last().unwrap().tool_calls[0];
    assert!(call.nested.iter().any(|n| n.event == ChatEvent::TextDelta { text: "Thinking".into() }), "{call:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toolset_naming_what_is_gone_is_said_once_and_the_turn_runs_with_the_rest() {
    let (_dir, service) = service();
    let mock = profile(&service, "solo", Script::new([Reply::text("Fine.")])).await;
    service.put_toolset(toolset("mixed", &["get_time", "vanished_tool", "mcp:nowhere", "agent:Nobody"])).unwrap();
    let listed = service.agents().unwrap();
    assert_eq!(listed.toolsets[0].tools, ["get_time"]);
    assert_eq!(listed.toolsets[0].missing.len(), 3, "{:?}", listed.toolsets[0].missing);

    let request = SendRequest {
        toolsets: Some(vec!["mixed".into()]),
        provider: Some("solo".into()),
        ..SendRequest::text(None, "hi")
    };
    let (report, events) = run(&service, request).await;
    assert_eq!(report.outcome.finish_reason, FinishReason::Stop);
    let notices: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::Notice { kind: NoticeKind::ToolUnavailable, message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 3, "{notices:?}");
    assert!(notices[0].contains("'vanished_tool'") && notices[0].contains("no tool has this name now"));
    let requests = mock.requests();
    let offered: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.get("function").unwrap()["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["get_time"], "only the toolset's tools");

    // An agent whose chat lost it goes on as a plain chat, and says so.
    service.put_agent(agent("Temp", "solo", &[])).unwrap();
    let mock2 = profile(&service, "solo2", Script::new([Reply::text("One."), Reply::text("Two.")])).await;
    let (report, _) = run(&service, SendRequest { provider: Some("solo2".into()), ..with_agent("hi", "Temp") }).await;
    service.remove_agent("Temp").unwrap();
    let next = SendRequest {
        provider: Some("solo2".into()),
        ..SendRequest::text(Some(report.started.conversation_id), "again")
    };
    let (report, events) = run(&service, next).await;
    assert_eq!(report.outcome.finish_reason, FinishReason::Stop);
    assert!(events.iter().any(
        |e| matches!(e, ChatEvent::Notice { message, .. } if message.contains("'Temp' this chat ran no longer exists"))
    ));
    assert_eq!(mock2.requests().len(), 2);
    assert!(service.prepare(with_agent("hi", "Nobody")).is_err(), "a new chat with an unknown agent is refused");
}

#[test]
fn agents_and_toolsets_are_checked_and_looser_approval_defaults_are_not_applied() {
    let (_dir, service) = service();
    let e = service.put_agent(AgentConfig { name: "has space".into(), ..AgentConfig::default() }).unwrap_err();
    assert!(e.message.contains("cannot name an agent"), "{}", e.message);
    let e = service.put_agent(agent("A", "nope", &[])).unwrap_err();
    assert!(e.message.contains("nope"), "{}", e.message);
    let e = service.put_agent(AgentConfig { toolsets: vec!["ghost".into()], ..AgentConfig::default() }).unwrap_err();
    assert!(e.message.contains("cannot name an agent") || e.message.contains("ghost"), "{}", e.message);
    let e = service
        .put_agent(AgentConfig { name: "B".into(), max_iterations: Some(0), ..AgentConfig::default() })
        .unwrap_err();
    assert!(e.message.contains("1 to 50"), "{}", e.message);

    let mut settings = service.settings().unwrap();
    settings.tools.approval.insert("get_time".into(), ApprovalPolicy::Ask);
    service.update_settings_confirmed(&settings, &switchboard_service::AlreadyConfirmed).unwrap();
    service.put_toolset(toolset("t", &["get_time"])).unwrap();
    let mut loose = AgentConfig { name: "Loose".into(), toolsets: vec!["t".into()], ..AgentConfig::default() };
    loose.approval.insert("get_time".into(), ApprovalPolicy::Auto);
    let info = service.put_agent(loose).unwrap();
    assert!(info.problems.iter().any(|p| p.contains("only make a tool stricter")), "{:?}", info.problems);
    // A stricter one is no problem.
    let mut strict = AgentConfig { name: "Strict".into(), toolsets: vec!["t".into()], ..AgentConfig::default() };
    strict.approval.insert("get_time".into(), ApprovalPolicy::Deny);
    let strict = service.put_agent(strict).unwrap();
    assert!(!strict.problems.iter().any(|p| p.contains("stricter")), "{:?}", strict.problems);
    service.remove_agent("Strict").unwrap();
    assert_eq!(info.tool_name, "agent__Loose");

    let copy = service.duplicate_agent("Loose", "Loose2").unwrap();
    assert_eq!(copy.config.toolsets, ["t"]);
    assert!(service.duplicate_agent("Loose", "Loose2").is_err());
    let e = service.remove_toolset("t").unwrap_err();
    assert!(e.message.contains("take it out of the agent first"), "{}", e.message);
    service.remove_agent("Loose").unwrap();
    service.remove_agent("Loose2").unwrap();
    service.remove_toolset("t").unwrap();
    assert!(service.agents().unwrap().agents.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_whose_model_takes_no_tools_gets_none_and_says_so_in_its_run() {
    let (_dir, service) = service();
    let _lead = profile(
        &service,
        "lead",
        Script::new([Reply::tool_call("c1", "agent__Plain", r#"{"message":"hi"}"#), Reply::text("Done.")]),
    )
    .await;
    let plain = MockServer::start(Script::new([Reply::text("Hello without tools.")])).await;
    let options = switchboard_store::ProfileOptions { tools: Some(false), ..Default::default() };
    let profile = ProviderProfile {
        name: "plain".into(),
        kind: "openai".into(),
        base_url: plain.base_url(),
        model: Some("plain-model".into()),
        options,
    };
    service.add_provider(&profile, false).unwrap();
    service.put_toolset(toolset("clock", &["get_time"])).unwrap();
    service.put_toolset(toolset("kids", &["agent:Plain"])).unwrap();
    service.put_agent(agent("Plain", "plain", &["clock"])).unwrap();
    service.put_agent(agent("Lead", "lead", &["kids"])).unwrap();

    let (report, events) = run(&service, with_agent("Say hi", "Lead")).await;

    assert_eq!(report.outcome.finish_reason, FinishReason::Stop);
    assert_eq!(result(&events, "c1"), (&ToolStatus::Ok, "Hello without tools."));
    assert!(plain.requests()[0].body.get("tools").is_none(), "the child's model was offered no tools");
    assert!(nested(&events, "c1").iter().any(|(_, e)| matches!(
        e,
        ChatEvent::Notice { kind: NoticeKind::ToolUnavailable, message } if message.contains("does not take tools, so Plain[1] has none")
    )));
}

/// A profile `name` on model `model` of the OpenAI kind, with `generation` set, on its own mock.
async fn model_profile(
    service: &Service,
    name: &str,
    model: &str,
    generation: GenerationOptions,
    script: Script,
) -> MockServer {
    let mock = MockServer::start(script).await;
    let options = switchboard_store::ProfileOptions { generation, ..Default::default() };
    let profile = ProviderProfile {
        name: name.into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some(model.into()),
        options,
    };
    service.add_provider(&profile, false).unwrap();
    mock
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_on_a_model_that_refuses_sampling_settings_is_sent_none_as_in_a_persons_chat() {
    let (_dir, service) = service();
    let _lead = profile(
        &service,
        "lead",
        Script::new([
            Reply::parallel_tool_calls(&[
                ("c1", "agent__Thinker", r#"{"message":"think"}"#),
                ("c2", "agent__Talker", r#"{"message":"talk"}"#),
            ]),
            Reply::text("Both answered."),
        ]),
    )
    .await;
    let set = GenerationOptions {
        temperature: Some(0.7),
        top_p: Some(0.9),
        reasoning_effort: Some(ReasoningEffort::High),
        ..Default::default()
    };
    // o3 refuses sampling settings; gpt-4o refuses reasoning controls. Same profile settings.
    let thinker = model_profile(&service, "thinker", "o3", set, Script::new([Reply::text("Thought.")])).await;
    let talker = model_profile(&service, "talker", "gpt-4o", set, Script::new([Reply::text("Talked.")])).await;
    service.put_toolset(toolset("kids", &["agent:Thinker", "agent:Talker"])).unwrap();
    service.put_agent(agent("Thinker", "thinker", &[])).unwrap();
    service.put_agent(agent("Talker", "talker", &[])).unwrap();
    service.put_agent(agent("Lead", "lead", &["kids"])).unwrap();

    let (report, events) = run(&service, with_agent("Ask both", "Lead")).await;

    assert_eq!(report.outcome.finish_reason, FinishReason::Stop, "{events:#?}");
    assert_eq!(result(&events, "c1"), (&ToolStatus::Ok, "Thought."));
    let body = &thinker.requests()[0].body;
    assert_eq!(body["model"], "o3");
    assert!(body.get("temperature").is_none() && body.get("top_p").is_none(), "{body:#}");
    assert_eq!(body["reasoning_effort"], "high", "what it takes is still sent: {body:#}");
    assert_eq!(result(&events, "c2"), (&ToolStatus::Ok, "Talked."));
    let body = &talker.requests()[0].body;
    assert_eq!((body["temperature"].as_f64(), body["top_p"].as_f64()), (Some(0.7), Some(0.9)), "{body:#}");
    assert!(body.get("reasoning_effort").is_none(), "{body:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_gets_its_own_instructions_only_while_the_persons_chat_gets_every_part() {
    let (_dir, service) = service();
    let lead = profile(
        &service,
        "lead",
        Script::new([Reply::tool_call("c1", "agent__Scout", r#"{"message":"look"}"#), Reply::text("Fini.")]),
    )
    .await;
    let scouts = profile(&service, "scouts", Script::echo()).await;
    let quiet = profile(&service, "quiet", Script::echo()).await;
    let mut settings = service.settings().unwrap();
    settings.chats.instructions = "Answer in French.".into();
    service.update_settings(&settings).unwrap();
    service.put_toolset(toolset("kids", &["agent:Scout", "agent:Quiet"])).unwrap();
    service.put_agent(agent("Scout", "scouts", &[])).unwrap();
    service.put_agent(AgentConfig { instructions: String::new(), ..agent("Quiet", "quiet", &[]) }).unwrap();
    service.put_agent(agent("Lead", "lead", &["kids"])).unwrap();

    let request = SendRequest { system_prompt: Some("Be brief.".into()), ..with_agent("Go", "Lead") };
    let (report, events) = run(&service, request).await;
    assert_eq!(report.outcome.finish_reason, FinishReason::Stop, "{events:#?}");

    // The person's chat: custom instructions, the agent's, then the chat's own.
    let first = &lead.requests()[0].body["messages"][0];
    assert_eq!(first["role"], "system");
    assert_eq!(first["content"], "Answer in French.\n\nYou are Lead.\n\nBe brief.");
    // The sub-agent: its own instructions, nothing of the chat that called it.
    let child = &scouts.requests()[0].body["messages"];
    assert_eq!(child[0]["role"], "system");
    assert_eq!(child[0]["content"], "You are Scout.");
    assert_eq!(child[1]["content"], "look");

    // An agent without instructions sends no system prompt, not the chat's.
    let next = SendRequest::text(Some(report.started.conversation_id), "Again");
    lead.push(Reply::tool_call("c2", "agent__Quiet", r#"{"message":"hush"}"#));
    lead.push(Reply::text("Fini."));
    let (report, events) = run(&service, next).await;
    assert_eq!(report.outcome.finish_reason, FinishReason::Stop, "{events:#?}");
    let child = &quiet.requests()[0].body["messages"];
    assert_eq!(child.as_array().unwrap().len(), 1, "{child:#}");
    assert_eq!(child[0]["role"], "user");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_cannot_say_what_the_chat_approved_fails_the_agent_call_instead_of_approving_nothing() {
    let (dir, service) = service();
    let _lead = profile(
        &service,
        "lead",
        Script::new([Reply::tool_call("c1", "agent__Scout", r#"{"message":"look"}"#), Reply::text("Reported.")]),
    )
    .await;
    let scouts = profile(&service, "scouts", Script::echo()).await;
    service.put_toolset(toolset("kids", &["agent:Scout"])).unwrap();
    service.put_agent(agent("Scout", "scouts", &[])).unwrap();
    service.put_agent(agent("Lead", "lead", &["kids"])).unwrap();

    let turn = service.prepare(with_agent("Go", "Lead")).unwrap();
    // After the person's turn read its approvals, the row goes bad behind the service's back.
    let db = rusqlite::Connection::open(dir.path().join("switchboard.db")).unwrap();
    let changed = db
        .execute(
            "UPDATE conversations SET approved_tools = 'not a list' WHERE id = ?1",
            [&turn.started.conversation_id],
        )
        .unwrap();
    assert_eq!(changed, 1);
    let sink = Arc::new(VecSink::default());
    let approver = Arc::new(FixedApprover(ApprovalDecision::Once));
    let report = tokio::time::timeout(Duration::from_secs(20), service.run(turn, sink.clone(), approver))
        .await
        .expect("the turn ended");
    let events = sink.events();

    assert_eq!(report.outcome.finish_reason, FinishReason::Stop, "the parent goes on: {events:#?}");
    let (status, output) = result(&events, "c1");
    assert_eq!(*status, ToolStatus::Error);
    assert!(output.starts_with("Scout[1] could not start:") && output.contains("approved tools"), "{output}");
    assert!(scouts.requests().is_empty(), "the child did not run as if nothing were approved");
}

/// A key store that counts its reads, per name.
#[derive(Default)]
struct Counting {
    keys: MemoryStore,
    reads: Mutex<BTreeMap<String, usize>>,
}

impl SecretStore for Counting {
    fn describe(&self) -> &'static str {
        "the counting keychain"
    }

    fn get(&self, name: &str) -> switchboard_secrets::Result<Option<SecretValue>> {
        *self.reads.lock().unwrap().entry(name.to_owned()).or_default() += 1;
        self.keys.get(name)
    }

    fn set(&self, name: &str, value: &SecretValue) -> switchboard_secrets::Result<()> {
        self.keys.set(name, value)
    }

    fn delete(&self, name: &str) -> switchboard_secrets::Result<bool> {
        self.keys.delete(name)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_reads_each_key_once_however_many_agents_and_tools_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Arc::new(Counting::default());
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let service = Service::new(store, keys.clone()).unwrap();
    let _lead = profile(
        &service,
        "lead",
        Script::new([
            Reply::parallel_tool_calls(&[
                ("c1", "agent__Scout", r#"{"message":"Paris"}"#),
                ("c2", "agent__Scout", r#"{"message":"Rome"}"#),
                ("c3", "agent__Clock", r#"{"message":"time?"}"#),
            ]),
            Reply::text("Done."),
        ]),
    )
    .await;
    let _scouts = profile(&service, "scouts", Script::echo()).await;
    let _clock =
        profile(&service, "clock", Script::new([Reply::tool_call("t1", "get_time", "{}"), Reply::text("Noon.")])).await;
    for name in ["lead", "scouts", "tavily"] {
        service.set_key(name, &format!("sk-test-{name}-0123456789")).unwrap();
    }
    service.put_toolset(toolset("time", &["get_time"])).unwrap();
    service.put_toolset(toolset("kids", &["agent:Scout", "agent:Clock"])).unwrap();
    service.put_agent(agent("Scout", "scouts", &[])).unwrap();
    service.put_agent(agent("Clock", "clock", &["time"])).unwrap();
    service.put_agent(agent("Lead", "lead", &["kids"])).unwrap();
    keys.reads.lock().unwrap().clear();

    let (report, events) = run(&service, with_agent("Go", "Lead")).await;

    assert_eq!(report.outcome.finish_reason, FinishReason::Stop, "{events:#?}");
    assert_eq!(result(&events, "c3"), (&ToolStatus::Ok, "Noon."));
    let reads = keys.reads.lock().unwrap().clone();
    // Every profile's key and the web search keys (for the redactor), each once: not again for
    // the turn's provider, nor for each agent call's provider and redactor.
    let once: BTreeMap<String, usize> =
        ["clock", "exa", "lead", "scouts", "tavily"].iter().map(|n| ((*n).to_owned(), 1)).collect();
    assert_eq!(reads, once);
}
