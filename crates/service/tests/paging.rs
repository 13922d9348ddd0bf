//! `read_tool_result` end to end through the service: a result over the limit reaches the model
//! cut, the model reads ranges of it back, reading reads only this conversation, a result read
//! back from an untrusted source is framed as untrusted, and the next turn's rebuilt history sends
//! exactly what the live turn sent.

use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{ChatEvent, EventSink, paging};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::SendRequest;
use switchboard_store::{ProviderProfile, Store};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

/// A page of `n` characters: numbered lines.
fn page_text(n: usize) -> String {
    let mut text: String = (0..).map(|i| format!("line {i:05} fact\n")).take(n / 16 + 1).collect();
    text.truncate(n);
    text
}

/// Serves `body` as text/plain to every request on 127.0.0.1; returns the page's URL.
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
    format!("http://{addr}/page.txt")
}

async fn setup(limit: u32) -> (Service, MockServer) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    std::mem::forget(dir);
    let mock = MockServer::start(Script::default()).await;
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("m".into()),
        options: Default::default(),
    };
    service.add_provider(&profile, true).unwrap();
    let mut settings = service.settings().unwrap();
    settings.web.allow_local_addresses = true;
    settings.limits.tool_result_chars = Some(limit);
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

fn read(id: &str, offset: Option<u64>, length: Option<u64>) -> String {
    let mut args = json!({"call_id": id});
    if let Some(o) = offset {
        args["offset"] = json!(o);
    }
    if let Some(l) = length {
        args["length"] = json!(l);
    }
    args.to_string()
}

/// The content of the tool message answering `id` in a recorded request.
fn tool_content(body: &Value, id: &str) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .unwrap_or_else(|| panic!("no tool message {id}"))["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_of_a_cut_untrusted_result_are_read_back_untrusted_and_only_in_this_conversation() {
    let (service, mock) = setup(1_000).await;
    let text = page_text(5_000);
    let url = serve(text.clone()).await;
    for reply in [
        Reply::tool_call("c1", "web_fetch", json!({"url": url}).to_string()),
        Reply::tool_call("c2", paging::TOOL, read("c1", Some(600), Some(300))),
        Reply::tool_call("c3", paging::TOOL, read("nope", None, None)),
        Reply::tool_call("c4", paging::TOOL, read("c1", Some(999_999), None)),
        Reply::tool_call("c5", paging::TOOL, read("c1", Some(4_900), None)),
        Reply::text("done"),
        Reply::text("again"),
        Reply::tool_call("b0", "web_fetch", json!({"url": url}).to_string()),
        Reply::tool_call("b1", paging::TOOL, read("c1", None, None)),
        Reply::text("other chat done"),
    ] {
        mock.push(reply);
    }
    let conversation = turn(&service, None, &format!("Read {url}")).await;
    let requests = mock.requests();
    let fetched = service.open(&conversation).unwrap().messages[1].tool_calls[0].result.clone().unwrap().output;
    assert!(fetched.chars().count() > 5_000 - 10 && fetched.contains("line 00300 fact"), "stored whole");

    // The fetch reached the model cut and framed; from then on the reader is offered.
    let sent = tool_content(&requests[1].body, "c1");
    assert_eq!(sent, switchboard_core::egress::frame("web_fetch", &paging::cut("c1", &fetched, 1_000)));
    assert!(!tool_names(&requests[0].body).contains(&paging::TOOL.to_owned()));
    assert!(tool_names(&requests[1].body).contains(&paging::TOOL.to_owned()));

    // A range, framed as coming from the page: reading back never launders untrusted text.
    let page = tool_content(&requests[2].body, "c2");
    let slice: String = fetched.chars().skip(600).take(300).collect();
    let body = format!(
        "{slice}\n\n[Characters 600 to 900 of {} of the result of 'c1' (web_fetch). To read on, call read_tool_result with {{\"call_id\": \"c1\", \"offset\": 900}}.]",
        fetched.chars().count()
    );
    assert_eq!(page, switchboard_core::egress::frame("read_tool_result (which read web_fetch)", &body));

    // Clear errors for an unknown id and an offset past the end; the last page says it is the end.
    let unknown = tool_content(&requests[3].body, "c3");
    assert!(unknown.contains("There is no tool call with the id 'nope' in this conversation"), "{unknown}");
    let past = tool_content(&requests[4].body, "c4");
    assert!(past.contains("The offset 999999 is past the end of the result of 'c1'"), "{past}");
    let last = tool_content(&requests[5].body, "c5");
    assert!(last.contains("That is the end of the result."), "{last}");

    // The next turn rebuilds the history from the store and sends exactly what the live turn sent.
    turn(&service, Some(conversation.clone()), "and?").await;
    let rebuilt = &mock.requests()[6].body;
    for id in ["c1", "c2", "c3", "c4", "c5"] {
        assert_eq!(tool_content(rebuilt, id), tool_content(&requests[5].body, id), "{id}");
    }
    assert!(tool_names(rebuilt).contains(&paging::TOOL.to_owned()), "offered from the first request");

    // Another conversation (where a cut result offers the reader too) cannot read this one's.
    turn(&service, None, &format!("Read {url}, then c1 of the other chat")).await;
    let other = mock.requests().last().unwrap().body.clone();
    let refused = tool_content(&other, "b1");
    assert!(refused.contains("There is no tool call with the id 'c1' in this conversation"), "{refused}");
}
