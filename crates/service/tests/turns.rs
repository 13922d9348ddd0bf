//! The service end to end against the mock provider: background turns, stop, approvals,
//! regenerate, per-chat tool state.

use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{ChatEvent, EventSink};
use switchboard_mock_provider::{MockServer, Reply, Script, Step, StreamOptions};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::{ApprovalChoice, SendRequest};
use switchboard_store::{MessageStatus, ProviderProfile, Store};
use tokio::sync::mpsc;

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

async fn setup(script: Script) -> (Service, MockServer) {
    let mock = MockServer::start(script).await;
    let service = Service::new(Store::open_in_memory().unwrap(), Arc::new(MemoryStore::new())).unwrap();
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("m".into()),
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
    service.regenerate(&started.conversation_id, SendRequest::text(None, ""), sink2).unwrap();
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
