//! "Compact now" through the service against the mock: the chat's model writes the summary, the
//! compaction is stored, the next turn sends the summary instead of the messages it stands for,
//! undo sends the full history again, and every original message stays stored whole.

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::compaction::SUMMARY_PROMPT;
use switchboard_core::{ChatEvent, CompactionReason, EventSink};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::SendRequest;
use switchboard_store::{ProfileOptions, ProviderProfile, Store};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

const FACT: &str = "FACT-A: the warehouse in Lyon holds 412 pallets";
const QUESTION: &str = "Which warehouse report should I read first? (QUESTION-ONE)";

/// 6,000 characters: the fact first, then lines only this result holds.
fn report() -> String {
    let mut text = format!("{FACT}\n");
    text.extend((0..).map(|i| format!("report line {i:03}: stock counted and signed\n")).take(200));
    text.truncate(6_000);
    text.truncate(text.trim_end().len());
    text
}

async fn serve(body: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = socket.read(&mut buf).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let _ = socket.write_all(body.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}/report.txt")
}

async fn setup() -> (Service, MockServer) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    std::mem::forget(dir);
    // The summariser's requests (recognised by its instructions) keep the fact's line.
    let script = Script::default().with_counted_usage().with_route(&SUMMARY_PROMPT[..60], [Reply::keep_lines("FACT")]);
    let mock = MockServer::start(script).await;
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("m".into()),
        // A small window: what "compact now" keeps as it is (a quarter of the threshold) is
        // smaller than the conversation, so there is something to summarise.
        options: ProfileOptions { context_window: Some(4_000), ..ProfileOptions::default() },
    };
    service.add_provider(&profile, true).unwrap();
    let mut settings = service.settings().unwrap();
    settings.web.allow_local_addresses = true;
    service.update_settings_confirmed(&settings, &switchboard_service::AlreadyConfirmed).unwrap();
    (service, mock)
}

async fn turn(service: &Service, conversation: Option<String>, text: &str) -> String {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let started = service.send(SendRequest::text(conversation, text), Arc::new(ChannelSink(tx))).unwrap();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.expect("turn stalled").unwrap();
        if matches!(e, ChatEvent::Done { .. }) {
            break;
        }
    }
    started.conversation_id
}

/// The messages of the last conversation request (the summariser's apart), and their text.
fn last_sent(mock: &MockServer) -> (Vec<Value>, String) {
    let requests = mock.requests();
    let last = requests.iter().rev().find(|r| !r.body.to_string().contains(&SUMMARY_PROMPT[..60])).unwrap();
    let messages = last.messages().to_vec();
    let text = messages.iter().map(Value::to_string).collect::<Vec<_>>().join("\n");
    (messages, text)
}

fn tool_messages(messages: &[Value]) -> usize {
    messages.iter().filter(|m| m["role"] == "tool").count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_now_summarises_with_the_chats_model_and_undo_sends_everything_again() {
    let (service, mock) = setup().await;
    let url = serve(report()).await;
    for reply in [
        Reply::tool_call("c1", "web_fetch", json!({"url": url}).to_string()),
        Reply::text("The Lyon report is the one to read first."),
        Reply::text("Paris comes second."),
    ] {
        mock.push(reply);
    }
    let id = turn(&service, None, &format!("{QUESTION} It is at {url}")).await;
    let id = turn(&service, Some(id), "And which one after that?").await;
    let stored_before = service.open_all(&id).unwrap().messages;
    assert_eq!(stored_before.len(), 4);

    // Compact now: the chat's model (the mock) writes the summary; the row is stored.
    let compacted = service.compact_conversation(&id).await.unwrap();
    assert_eq!(compacted.reason, CompactionReason::Manual);
    assert_eq!(compacted.summariser.as_deref(), Some("m"));
    let summary = compacted.compaction.summary.clone().expect("a summary");
    assert!(summary.contains(FACT), "{summary}");
    assert!(compacted.compaction.covered > 0);
    assert!(compacted.tokens_after < compacted.tokens_before, "{compacted:?}");
    let rows = service.compactions(&id).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].id, compacted.id);
    assert!(!rows[0].undone);
    let summariser_request = mock.requests().last().unwrap().body.to_string();
    assert!(summariser_request.contains(&SUMMARY_PROMPT[..60]));

    // The next turn sends the summary, not the messages it stands for.
    mock.push(Reply::text("Then Marseille."));
    turn(&service, Some(id.clone()), "And the third?").await;
    let (messages, sent) = last_sent(&mock);
    assert!(sent.contains(FACT), "the summary is sent: {sent}");
    assert!(!sent.contains("report line 100"), "the summarised result is not sent: {sent}");
    assert_eq!(tool_messages(&messages), 0, "nor the call it answered: {sent}");
    // The question of the summarised round is quoted verbatim after the summary.
    assert!(sent.contains("QUESTION-ONE"));

    // Undo: the full history goes again.
    service.set_compaction_undone(&id, &compacted.id, true).unwrap();
    assert!(service.compactions(&id).unwrap()[0].undone);
    mock.push(Reply::text("And Nice."));
    turn(&service, Some(id.clone()), "And the fourth?").await;
    let (messages, sent) = last_sent(&mock);
    assert!(sent.contains("report line 100"), "the whole result is sent again: {sent}");
    assert_eq!(tool_messages(&messages), 1, "{sent}");
    assert!(!sent.contains("FACT-A: the warehouse in Lyon holds 412 pallets\\n\\n"), "no summary: {sent}");
    // Four questions, the call, its result and three answers: every message, as stored.
    assert_eq!(messages.len(), 9, "{sent}");

    // Nothing was deleted or rewritten: the stored messages are the originals, and more.
    let stored = service.open_all(&id).unwrap().messages;
    assert_eq!(stored.len(), 8);
    for (before, after) in stored_before.iter().zip(&stored) {
        assert_eq!(before.id, after.id);
        assert_eq!(before.content, after.content);
    }
    let result = stored[1].tool_calls[0].result.as_ref().unwrap();
    assert!(result.output.contains(&report()), "the result is stored whole");
}
