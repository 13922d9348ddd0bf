//! A chat's summaries are written by the profile and model picked for it: the summary request
//! goes to that profile's server with its model, the chat's own requests to the chat's; "Compact
//! now" does the same; a pick whose profile is gone falls back to the chat's own model and says
//! so. Checked by what each mock server received.

use futures::FutureExt;
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use switchboard_core::turn::{ApprovalDecision, ApprovalRequest, Approver};
use switchboard_core::{ChatEvent, EventSink};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::{ChatSetupChange, SendRequest, SummariserChange, SummariserChoice};
use switchboard_store::{ProfileOptions, ProviderProfile, Store};

#[derive(Default)]
struct Events(Mutex<Vec<ChatEvent>>);

impl EventSink for Events {
    fn emit(&self, event: ChatEvent) {
        self.0.lock().unwrap().push(event);
    }
}

struct Once;

impl Approver for Once {
    fn decide(&self, _: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        async { ApprovalDecision::Once }.boxed()
    }
}

/// A long answer (about 3,000 tokens) starting with `tag`: two of them pass the chat's small
/// window (8,000 tokens), and the newer one is more than the recent part a summary leaves as it
/// is; with the question before it, it fits one summary request of that window.
fn long_answer(tag: &str) -> String {
    format!("{tag}: {}", "The harbour ledger lists crates of tea, copper and indigo by date. ".repeat(180))
}

/// A service with `chat` (the default, model `big`, window 8,000 tokens, on `chat_mock`) and
/// `cheap` (model `small`, on `cheap_mock`).
fn service(dir: &std::path::Path, chat_mock: &MockServer, cheap_mock: &MockServer) -> Service {
    service_with(dir, (chat_mock, 8_000), (cheap_mock, None))
}

/// The same with the chat's window and the cheap profile's window override.
fn service_with(
    dir: &std::path::Path,
    (chat_mock, chat_window): (&MockServer, u64),
    (cheap_mock, cheap_window): (&MockServer, Option<u64>),
) -> Service {
    let store = Store::open(&dir.join(switchboard_store::DB_FILE)).unwrap();
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    let options = ProfileOptions { context_window: Some(chat_window), ..ProfileOptions::default() };
    let chat = ProviderProfile {
        name: "chat".into(),
        kind: "openai".into(),
        base_url: chat_mock.base_url(),
        model: Some("big".into()),
        options,
    };
    service.add_provider(&chat, true).unwrap();
    let cheap = ProviderProfile {
        name: "cheap".into(),
        kind: "openai".into(),
        base_url: cheap_mock.base_url(),
        model: Some("small".into()),
        options: ProfileOptions { context_window: cheap_window, ..ProfileOptions::default() },
    };
    service.add_provider(&cheap, false).unwrap();
    service
}

fn ask(conversation_id: Option<&str>, text: &str) -> SendRequest {
    SendRequest::text(conversation_id.map(str::to_owned), text)
}

async fn turn(service: &Service, request: SendRequest) -> (String, Vec<ChatEvent>) {
    let events = Arc::new(Events::default());
    let prepared = service.prepare(request).unwrap();
    let report = service.run(prepared, events.clone(), Arc::new(Once)).await;
    assert!(report.outcome.error.is_none(), "{:?}", report.outcome.error);
    let events = std::mem::take(&mut *events.0.lock().unwrap());
    (report.started.conversation_id, events)
}

fn pick(provider: &str, model: &str) -> ChatSetupChange {
    ChatSetupChange {
        summariser: Some(SummariserChange::Pick { provider: provider.into(), model: model.into() }),
        ..ChatSetupChange::default()
    }
}

fn models(mock: &MockServer) -> Vec<String> {
    mock.requests().iter().map(|r| r.body["model"].as_str().unwrap_or_default().to_owned()).collect()
}

fn compacted_by(events: &[ChatEvent]) -> Option<String> {
    events.iter().find_map(|e| match e {
        ChatEvent::Compacted { summariser, .. } => Some(summariser.clone().unwrap_or_default()),
        _ => None,
    })
}

#[tokio::test]
async fn the_summary_goes_to_the_picked_profile_and_the_turn_to_the_chats() {
    let chat_mock = MockServer::start(Script::new([
        Reply::text(long_answer("First")),
        Reply::text(long_answer("Second")),
        Reply::text("Third answer."),
    ]))
    .await;
    let cheap_mock = MockServer::start(Script::new([Reply::text("Cheap summary: tea, copper, indigo.")])).await;
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path(), &chat_mock, &cheap_mock);
    let (id, _) = turn(&service, ask(None, "What does the harbour ledger list?")).await;
    let setup = service.set_chat_setup(&id, pick("cheap", "small")).unwrap();
    assert_eq!(setup.summariser, Some(SummariserChoice { provider: "cheap".into(), model: "small".into() }));
    let (_, events) = turn(&service, ask(Some(&id), "And by which dates?")).await;
    assert_eq!(compacted_by(&events), None, "the newest answer is too long to summarise before");

    let (_, events) = turn(&service, ask(Some(&id), "Which crate came first?")).await;

    assert_eq!(compacted_by(&events).as_deref(), Some("small"), "the picked model wrote the summary");
    assert_eq!(models(&cheap_mock), ["small"], "one summary request, to the picked profile's server");
    assert_eq!(models(&chat_mock), ["big", "big", "big"], "the chat's own requests stay on the chat's server");
    let summarised = cheap_mock.requests()[0].body.to_string();
    assert!(summarised.contains("First: The harbour") && !summarised.contains("Second:"), "{summarised}");
    let last = chat_mock.requests().last().unwrap().body.to_string();
    assert!(last.contains("Cheap summary: tea, copper, indigo."), "the chat's request carries the summary: {last}");
    assert!(!last.contains("First: The harbour") && last.contains("Second: The harbour"), "{last}");
}

#[tokio::test]
async fn a_gone_profile_falls_back_saying_so_and_compact_now_uses_the_pick() {
    let chat_mock = MockServer::start(Script::new([
        Reply::text(long_answer("First")),
        Reply::text(long_answer("Second")),
        Reply::text("Own summary of the ledger."),
        Reply::text(long_answer("Third")),
    ]))
    .await;
    let cheap_mock = MockServer::start(Script::new([Reply::text("Cheap summary of the ledger.")])).await;
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path(), &chat_mock, &cheap_mock);
    let (id, _) = turn(&service, ask(None, "What does the harbour ledger list?")).await;
    service.set_chat_setup(&id, pick("cheap", "small")).unwrap();
    let cheap = service.providers().unwrap().into_iter().find(|p| p.name == "cheap").unwrap();
    let cheap = ProviderProfile {
        name: cheap.name,
        kind: cheap.kind,
        base_url: cheap.base_url,
        model: cheap.model,
        options: ProfileOptions::default(),
    };
    service.remove_provider("cheap").unwrap();
    let notices = |events: &[ChatEvent]| -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                ChatEvent::Notice { message, .. } => Some(message.clone()),
                _ => None,
            })
            .filter(|m| m.contains("'cheap'"))
            .collect()
    };
    // A turn that does not compact says nothing of the summariser.
    let (_, quiet) = turn(&service, ask(Some(&id), "And by which dates?")).await;
    assert!(compacted_by(&quiet).is_none());
    assert_eq!(notices(&quiet), Vec::<String>::new());

    // The picked profile is gone: the chat's own model writes the summary, and the compaction
    // says so (below), not a notice of the turn's.
    let (_, events) = turn(&service, ask(Some(&id), "Which crate came first?")).await;
    assert_eq!(notices(&events), Vec::<String>::new());
    assert_eq!(compacted_by(&events).as_deref(), Some("big"));
    assert_eq!(models(&chat_mock), ["big", "big", "big", "big"], "two turns, the summary, the third turn");
    assert!(cheap_mock.requests().is_empty());
    // The compaction itself says why, where its boundary shows it, and keeps it stored.
    let why = events.iter().find_map(|e| match e {
        ChatEvent::Compacted { summariser_fallback, .. } => summariser_fallback.clone(),
        _ => None,
    });
    assert!(why.as_deref().is_some_and(|w| w.contains("'cheap'") && w.contains("no longer exists")), "{why:?}");
    let stored = service.compactions(&id).unwrap();
    assert_eq!(stored.last().unwrap().summariser_fallback, why, "stored with the row");

    // The profile is back: "Compact now" has the picked model write the next summary.
    service.add_provider(&cheap, false).unwrap();
    let stored = service.compact_conversation(&id).await.unwrap();
    assert_eq!(stored.summariser.as_deref(), Some("small"));
    assert_eq!(stored.compaction.summary.as_deref(), Some("Cheap summary of the ledger."));
    assert_eq!(models(&cheap_mock), ["small"]);
    assert_eq!(chat_mock.requests().len(), 4, "Compact now sent nothing to the chat's server");
}

#[tokio::test]
async fn a_pick_of_a_profile_that_does_not_exist_is_refused_and_clearing_gives_it_back() {
    let chat_mock = MockServer::start(Script::new([Reply::text("ok")])).await;
    let cheap_mock = MockServer::start(Script::new([])).await;
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path(), &chat_mock, &cheap_mock);
    let (id, _) = turn(&service, ask(None, "Hello")).await;
    let err = service.set_chat_setup(&id, pick("ghost", "m")).unwrap_err();
    assert!(err.message.contains("no provider profile named 'ghost'"), "{}", err.message);
    assert_eq!(service.chat_setup(&id).unwrap().summariser, None, "nothing changed");
    service.set_chat_setup(&id, pick("cheap", "small")).unwrap();
    let change = ChatSetupChange { summariser: Some(SummariserChange::Chat), ..ChatSetupChange::default() };
    assert_eq!(service.set_chat_setup(&id, change).unwrap().summariser, None);
    let other = ChatSetupChange { toolsets: Some(Vec::new()), ..ChatSetupChange::default() };
    service.set_chat_setup(&id, pick("cheap", "small")).unwrap();
    assert!(service.set_chat_setup(&id, other).unwrap().summariser.is_some(), "a change that leaves it out keeps it");
}

#[tokio::test]
async fn compact_now_with_a_gone_pick_says_why_on_the_compaction_and_after_a_restart() {
    let chat_mock = MockServer::start(Script::new([
        Reply::text(long_answer("First")),
        Reply::text(long_answer("Second")),
        Reply::text("Own summary of the ledger."),
        Reply::text(long_answer("Third")),
        Reply::text("Own summary, again."),
    ]))
    .await;
    let cheap_mock = MockServer::start(Script::new([])).await;
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path(), &chat_mock, &cheap_mock);
    let (id, _) = turn(&service, ask(None, "What does the harbour ledger list?")).await;
    service.set_chat_setup(&id, pick("cheap", "small")).unwrap();
    service.remove_provider("cheap").unwrap();
    turn(&service, ask(Some(&id), "And by which dates?")).await;
    turn(&service, ask(Some(&id), "Which crate came first?")).await;

    let stored = service.compact_conversation(&id).await.unwrap();
    assert_eq!(stored.compaction.summary.as_deref(), Some("Own summary, again."));
    assert_eq!(stored.summariser.as_deref(), Some("big"), "the chat's own model wrote it");
    let why = stored.summariser_fallback.clone().expect("the result says why");
    assert!(why.contains("'cheap'") && why.contains("no longer exists") && why.contains("(big)"), "{why}");
    drop(service);

    let store = Store::open(&dir.path().join(switchboard_store::DB_FILE)).unwrap();
    let reopened = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    let rows = reopened.compactions(&id).unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.summariser_fallback.as_deref().is_some_and(|w| w.contains("no longer exists"))));
    assert_eq!(rows[1].summariser_fallback.as_deref(), Some(why.as_str()), "kept after a restart");
}

/// A turn's answer of about 2,000 tokens holding three facts (`FACT-<tag>-<k>`) among filler.
fn answer_with_facts(tag: usize) -> String {
    let mut text = String::new();
    for line in 0..200 {
        if line % 70 == 5 {
            text.push_str(&format!("FACT-{tag}-{line}: crate {line} of turn {tag} weighs {} kg\n", 100 + line));
        } else {
            text.push_str("The ledger lists tea, copper and indigo by date.\n");
        }
    }
    text
}

#[tokio::test]
async fn a_summariser_with_a_small_window_gets_pieces_that_fit_it_and_the_chat_loses_nothing() {
    let small: u64 = 3_000;
    let chat_mock = MockServer::start(Script::new((0..6).map(|t| Reply::text(answer_with_facts(t))))).await;
    // The summariser refuses, as a provider does, any prompt over its window.
    let cheap_mock =
        MockServer::start(Script::new((0..40).map(|_| Reply::keep_lines("FACT"))).with_context_window(small)).await;
    let dir = tempfile::tempdir().unwrap();
    let service = service_with(dir.path(), (&chat_mock, 10_000), (&cheap_mock, Some(small)));
    let (id, _) = turn(&service, ask(None, "Turn 0: what does the ledger list?")).await;
    service.set_chat_setup(&id, pick("cheap", "small")).unwrap();
    let mut compacted = None;
    for t in 1..6 {
        let (_, events) = turn(&service, ask(Some(&id), &format!("Turn {t}: and then?"))).await;
        compacted = compacted.or(compacted_by(&events));
    }
    assert_eq!(compacted.as_deref(), Some("small"), "the chat compacted by itself, with the picked model");
    let summaries = cheap_mock.requests();
    assert!(summaries.len() > 1, "more than one request of the small window: {}", summaries.len());
    assert!(cheap_mock.refusals().is_empty(), "{:?}", cheap_mock.refusals());
    for r in &summaries {
        let prompt = r.counted.expect("counted").prompt_tokens;
        let output =
            r.body["max_completion_tokens"].as_u64().or(r.body["max_tokens"].as_u64()).expect("an output limit");
        assert!(prompt + output <= small, "{prompt} + {output} tokens passed the summariser's {small}");
    }
    // Compact now goes the same way.
    let before = cheap_mock.requests().len();
    let stored = service.compact_conversation(&id).await.unwrap();
    assert_eq!(stored.summariser.as_deref(), Some("small"));
    assert!(cheap_mock.requests().len() > before && cheap_mock.refusals().is_empty());
    // Nothing lost: every fact of what is summarised is in the summary, every message stored whole.
    let summary = stored.compaction.summary.clone().unwrap();
    let history = service.open_all(&id).unwrap().messages;
    let covered = &history[..stored.compaction.covered as usize];
    let facts: Vec<String> = covered
        .iter()
        .flat_map(|m| m.content.lines().filter(|l| l.starts_with("FACT-")).map(str::to_owned).collect::<Vec<_>>())
        .collect();
    assert!(facts.len() >= 6, "{} facts covered", facts.len());
    for fact in &facts {
        assert!(summary.contains(fact.as_str()), "{fact} lost from the summary");
    }
    for (m, t) in history.iter().filter(|m| m.role == switchboard_store::Role::Assistant).zip(0..) {
        assert_eq!(m.content, answer_with_facts(t), "stored whole");
    }
}
