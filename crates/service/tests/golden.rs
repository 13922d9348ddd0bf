//! Golden turns for the UI: real turns through the service (mock provider over loopback HTTP, the
//! real store and recorder), each captured twice, as the events a shell receives live and as the
//! stored message opening the conversation returns. `ui/tests/golden.test.ts` builds the UI's
//! model from both and requires them to look the same. This test fails when the committed
//! `ui/tests/fixtures/golden-turns.json` is stale; regenerate it with
//! `UPDATE_GOLDEN=1 cargo test -p switchboard-service --test golden`.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{ApprovalPolicy, ChatEvent, EventSink};
use switchboard_mock_provider::{MockServer, Reply, Script, Step};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::{ApprovalChoice, SendRequest};
use switchboard_store::{ProviderProfile, Store};
use tokio::sync::mpsc;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ui/tests/fixtures/golden-turns.json");

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

/// What the person does while the turn runs.
enum Act {
    Nothing,
    /// Stop the turn once the first text has arrived.
    StopAfterText,
    /// Answer every approval request this way.
    Approve(ApprovalChoice),
    /// Stop the turn while it waits for an approval (a call in flight).
    StopAtApproval,
}

struct Scenario {
    name: &'static str,
    prompt: &'static str,
    replies: Vec<Reply>,
    act: Act,
    ask_for: Option<&'static str>,
}

async fn capture(s: Scenario) -> Value {
    let mock = MockServer::start(Script::new(s.replies)).await;
    let service = Service::new(Store::open_in_memory().unwrap(), Arc::new(MemoryStore::new())).unwrap();
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("m".into()),
        options: Default::default(),
    };
    service.add_provider(&profile, true).unwrap();
    if let Some(tool) = s.ask_for {
        let mut settings = service.settings().unwrap();
        settings.tools.approval.insert(tool.into(), ApprovalPolicy::Ask);
        service.update_settings(&settings).unwrap();
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let started = service.send(SendRequest::text(None, s.prompt), Arc::new(ChannelSink(tx))).unwrap();
    let mut events = Vec::new();
    let mut stopped = false;
    loop {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("turn stalled").expect("sink");
        match (&s.act, &e) {
            (Act::StopAfterText, ChatEvent::TextDelta { .. }) if !stopped => {
                stopped = service.stop(&started.message_id);
                assert!(stopped, "{}: the turn was running", s.name);
            }
            (Act::Approve(choice), ChatEvent::ApprovalRequested { id, .. }) => {
                service.resolve_approval(id, *choice).unwrap();
            }
            (Act::StopAtApproval, ChatEvent::ApprovalRequested { .. }) => {
                assert!(service.stop(&started.message_id), "{}: the turn was running", s.name);
            }
            _ => {}
        }
        let done = matches!(e, ChatEvent::Done { .. });
        events.push(serde_json::to_value(&e).unwrap());
        if done {
            break;
        }
    }
    let view = service.open(&started.conversation_id).unwrap();
    let stored = view.messages.iter().find(|m| m.id == started.message_id).expect("the answer is stored");
    let mut scenario =
        json!({"name": s.name, "prompt": s.prompt, "events": events, "stored": serde_json::to_value(stored).unwrap()});
    normalize(
        &mut scenario,
        &mock.base_url(),
        &[&started.conversation_id, &started.message_id, &started.user_message_id],
    );
    scenario
}

/// Makes a capture repeatable: generated ids become fixed names, times and durations zero,
/// `get_time`'s answers (the clock) numbered placeholders, and the mock's port a fixed address.
/// Tool events of one round may finish in any order; they are put in call order.
fn normalize(v: &mut Value, base_url: &str, ids: &[&String]) {
    let names = ["conversation-1", "message-1", "user-message-1"];
    let ids: BTreeMap<&str, &str> = ids.iter().map(|s| s.as_str()).zip(names).collect();
    let mut clock = BTreeMap::new();
    let time_calls: Vec<String> = v["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "toolCall" && e["name"] == "get_time")
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    for e in v["events"].as_array().unwrap().iter().chain(v["stored"]["toolCalls"].as_array().unwrap()) {
        let (id, result) = match e["type"].as_str() {
            Some("toolResult") => (&e["id"], e),
            _ => (&e["callId"], &e["result"]),
        };
        if let (Some(id), Some(out)) = (id.as_str(), result["output"].as_str())
            && result["status"] == "ok"
            && time_calls.iter().any(|c| c == id)
            && !clock.contains_key(out)
        {
            let n = clock.len() + 1;
            clock.insert(out.to_owned(), format!("<get_time output {n}>"));
        }
    }
    fn walk(v: &mut Value, key: Option<&str>, f: &dyn Fn(Option<&str>, &str) -> Option<Value>) {
        match v {
            Value::Object(m) => m.iter_mut().for_each(|(k, x)| walk(x, Some(k), f)),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, key, f)),
            Value::String(s) => {
                if let Some(n) = f(key, s) {
                    *v = n;
                }
            }
            Value::Number(_) => {
                if matches!(key, Some("createdAt" | "updatedAt" | "durationMs")) {
                    *v = json!(0);
                }
            }
            _ => {}
        }
    }
    walk(v, None, &|key, s| {
        if let Some(n) = ids.get(s) {
            return Some(json!(n));
        }
        if let Some(n) = clock.get(s) {
            return Some(json!(n));
        }
        if key == Some("providerResponseId") {
            return Some(json!("<response id>"));
        }
        s.contains(base_url).then(|| json!(s.replace(base_url, "http://mock/v1")))
    });
    let events = v["events"].as_array_mut().unwrap();
    let mut i = 0;
    while i < events.len() {
        let tool_event = |e: &Value| matches!(e["type"].as_str(), Some("toolStarted" | "toolResult"));
        let mut j = i;
        while j < events.len() && tool_event(&events[j]) {
            j += 1;
        }
        events[i..j].sort_by_key(|e| (e["id"].as_str().unwrap_or_default().to_owned(), e["type"] == "toolResult"));
        i = j.max(i + 1);
    }
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "text with emoji and CJK, a get_time call at an offset, more text",
            prompt: "What time is it in Tokyo? 🗼",
            replies: vec![
                Reply::text_then_tool_calls(
                    "Let me check 東京 for you 👋🏽. ",
                    &[("call_1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)],
                ),
                Reply::reasoning_then_text(
                    "The tool answered; say it kindly 🤔.",
                    "It is evening in 東京 🌙 — おやすみ.",
                ),
            ],
            act: Act::Nothing,
            ask_for: None,
        },
        Scenario {
            name: "two parallel calls in one round",
            prompt: "Time in UTC and in Paris?",
            replies: vec![
                Reply::parallel_tool_calls(&[
                    ("call_a", "get_time", r#"{"timezone":"UTC"}"#),
                    ("call_b", "get_time", r#"{"timezone":"Europe/Paris"}"#),
                ]),
                Reply::text("Both clocks are read ⏱️."),
            ],
            act: Act::Nothing,
            ask_for: None,
        },
        Scenario {
            name: "an error after partial text",
            prompt: "Tell me a story",
            replies: vec![Reply::stream([
                Step::text("Once upon a time 🐉, "),
                Step::text("in a land far away"),
                Step::ErrorObject { message: "The upstream model crashed.".into(), code: Some("server_error".into()) },
            ])],
            act: Act::Nothing,
            ask_for: None,
        },
        Scenario {
            name: "the connection drops after partial text",
            prompt: "Another story",
            replies: vec![Reply::stream([Step::text("It was a dark night 🌑"), Step::Drop])],
            act: Act::Nothing,
            ask_for: None,
        },
        Scenario {
            name: "stopped by the person while text streams",
            prompt: "Count slowly",
            replies: vec![Reply::stream([Step::text("One, two, 三, "), Step::Stall])],
            act: Act::StopAfterText,
            ask_for: None,
        },
        Scenario {
            name: "an approval denied",
            prompt: "What time is it?",
            replies: vec![
                Reply::text_then_tool_calls("I need the clock. ", &[("call_d", "get_time", "{}")]),
                Reply::text("You said no, so I cannot tell 🙅."),
            ],
            act: Act::Approve(ApprovalChoice::Deny),
            ask_for: Some("get_time"),
        },
        Scenario {
            name: "stopped by the person while a call waits for approval",
            prompt: "What time is it, again?",
            replies: vec![
                Reply::text_then_tool_calls("Checking ⌚ ", &[("call_s", "get_time", r#"{"timezone":"UTC"}"#)]),
                Reply::text("never sent"),
            ],
            act: Act::StopAtApproval,
            ask_for: Some("get_time"),
        },
    ]
}

fn render() -> String {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let captured: Vec<Value> = runtime.block_on(async {
        let mut out = Vec::new();
        for s in scenarios() {
            out.push(capture(s).await);
        }
        out
    });
    let mut text = serde_json::to_string_pretty(&json!({
        "generatedBy": "crates/service/tests/golden.rs (UPDATE_GOLDEN=1 cargo test -p switchboard-service --test golden)",
        "scenarios": captured,
    }))
    .unwrap();
    text.push('\n');
    text
}

#[test]
fn golden_turns_are_fresh() {
    let fresh = render();
    // Twice, so a capture that is not repeatable fails here and not at someone else's next run.
    assert_eq!(fresh, render(), "the golden capture is not repeatable");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(std::path::Path::new(PATH).parent().unwrap()).unwrap();
        std::fs::write(PATH, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(PATH).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/tests/fixtures/golden-turns.json is stale: run `UPDATE_GOLDEN=1 cargo test -p switchboard-service --test golden` and commit it"
    );
}
