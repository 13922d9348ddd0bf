//! The context meter of a chat opened after a restart: the figure `conversation_context` gives
//! is what the next turn's first request counts before the new message — its files in the form
//! this model is sent them (a fitted image, left out for a model that cannot see; a PDF as a
//! document, or as its text for a model that reads none) — and it counts over the
//! conversation's stored token counts as a turn does.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{Attachment, ChatEvent, ContextBreakdown, EventSink, TextKey};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::agents::AgentConfig;
use switchboard_service::ipc::SendRequest;
use switchboard_store::{ProviderProfile, Store};
use tokio::sync::mpsc;

const PDF: &[u8] = include_bytes!("fixtures/attachments/figures.pdf");

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

fn db(dir: &Path) -> std::path::PathBuf {
    dir.join("switchboard.db")
}

/// A service on the database in `dir` (attachments beside it).
fn service(dir: &Path) -> Service {
    Service::new(Store::open(&db(dir)).unwrap(), Arc::new(MemoryStore::new())).unwrap()
}

/// One profile per API, each named after its kind, all on `mock`.
fn add_profiles(service: &Service, mock: &MockServer) {
    for (kind, model) in [("openai", "gpt-4o"), ("anthropic", "claude-sonnet-4-5"), ("gemini", "gemini-2.5-flash")] {
        let profile = ProviderProfile {
            name: kind.into(),
            kind: kind.into(),
            base_url: if kind == "gemini" { format!("http://{}/v1beta", mock.addr()) } else { mock.base_url() },
            model: Some(model.into()),
            options: Default::default(),
        };
        service.add_provider(&profile, kind == "openai").unwrap();
    }
}

/// A screenshot-like PNG every API must scale down (3000 × 1500).
fn wide_png() -> Vec<u8> {
    let image = image::RgbImage::from_fn(3000, 1500, |x, y| image::Rgb([(x % 251) as u8, (y % 241) as u8, 90]));
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

fn send(
    conversation: Option<&str>,
    provider: &str,
    model: Option<&str>,
    text: &str,
    files: &[&Attachment],
) -> SendRequest {
    SendRequest {
        provider: Some(provider.into()),
        model: model.map(str::to_owned),
        attachments: files.iter().map(|a| a.id.clone()).collect(),
        ..SendRequest::text(conversation.map(str::to_owned), text)
    }
}

/// The counts of a turn's first request.
#[derive(Debug)]
struct First {
    used: u64,
    window: Option<u64>,
    breakdown: ContextBreakdown,
    estimated: bool,
}

/// Runs `request` to its end; its conversation and its first request's `context` event.
async fn turn(service: &Service, request: SendRequest) -> (String, First) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let started = service.send(request, Arc::new(ChannelSink(tx))).unwrap();
    let mut first = None;
    while let Some(e) = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.expect("turn stalled") {
        match e {
            ChatEvent::Context { used_tokens, window, breakdown, estimated, .. } if first.is_none() => {
                first = Some(First { used: used_tokens, window, breakdown, estimated });
            }
            ChatEvent::Error { message, .. } => panic!("the turn failed: {message}"),
            ChatEvent::Done { .. } => break,
            _ => {}
        }
    }
    (started.conversation_id, first.expect("a context event"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reopened_chat_counts_its_files_as_the_next_turn_sends_them_to_each_model() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script::new((0..4).map(|i| Reply::text(format!("Answer {i}.")))).with_counted_usage();
    let mock = MockServer::start(script).await;
    let first = service(dir.path());
    add_profiles(&first, &mock);
    let photo = first.attach_bytes("wide.png", wide_png()).await.unwrap();
    let pdf = first.attach_bytes("figures.pdf", PDF.to_vec()).await.unwrap();
    let (c, _) = turn(&first, send(None, "openai", None, "What are these?", &[&photo, &pdf])).await;
    drop(first);

    // After a restart, on another API: the image fitted to Anthropic's limits and the PDF as a
    // document, both in the attachments bucket, as its next turn's first request counts them.
    let service = service(dir.path());
    let meter = service.conversation_context(&c, Some("anthropic"), None).unwrap();
    assert!(meter.estimated, "claude did not answer last: an estimate");
    let pdf_tokens = switchboard_core::machine::pdf_tokens(PDF.len() as u64);
    // 3000 × 1500 fitted to 1.15 megapixels: 1,533 tokens.
    assert_eq!(meter.breakdown.attachments, 1_533 + pdf_tokens, "{meter:?}");
    let (_, next) = turn(&service, send(Some(&c), "anthropic", None, "And now?", &[])).await;
    assert_eq!(next.breakdown.attachments, meter.breakdown.attachments, "{next:?} after {meter:?}");
    assert_eq!(next.breakdown.tool_results, meter.breakdown.tool_results);
    let question = next.breakdown.history - meter.breakdown.history;
    assert!((3..20).contains(&question), "only the new message is new: {next:?} after {meter:?}");

    // gpt-4 sees no images and reads no PDFs: the image is a note, the PDF its text.
    let blind = service.conversation_context(&c, Some("openai"), Some("gpt-4")).unwrap();
    assert!(blind.breakdown.attachments > 0 && blind.breakdown.attachments < 100, "{blind:?}");
    let (_, next) = turn(&service, send(Some(&c), "openai", Some("gpt-4"), "And the text?", &[])).await;
    assert_eq!(next.breakdown.attachments, blind.breakdown.attachments, "{next:?} after {blind:?}");

    // The model that answered last counts from its report: the same figure as its next turn,
    // but for the new message (the breakdown scaled to the report alike).
    drop(service);
    let service = self::service(dir.path());
    let again = service.conversation_context(&c, None, Some("gpt-4")).unwrap();
    assert!(!again.estimated, "{again:?}");
    let (_, next) = turn(&service, send(Some(&c), "openai", Some("gpt-4"), "Thanks.", &[])).await;
    assert!(!next.estimated);
    eprintln!("gpt-4 reopened: {again:?}; its next turn's first request: {next:?}");
    assert!(next.used > again.used_tokens && next.used - again.used_tokens < 20, "{next:?} after {again:?}");
    assert!(next.breakdown.attachments.abs_diff(again.breakdown.attachments) <= 1, "{next:?} after {again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_meter_counts_over_the_stored_token_counts_and_stores_what_it_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockServer::start(Script::new([Reply::text("Hi, what shall we look at?")])).await;
    let service = service(dir.path());
    add_profiles(&service, &mock);
    // Claude's turns store no counts (its estimate is not a tokenizer's).
    let (c, _) = turn(&service, send(None, "anthropic", None, "Hello there", &[])).await;
    let store = Store::open(&db(dir.path())).unwrap();
    assert!(store.token_counts(&c, "o200k_base").unwrap().is_empty());
    // gpt-4o's tokenizer loaded, as after any OpenAI turn.
    assert_eq!(switchboard_models::tokens::counter("openai", "gpt-4o").count("Hello there"), 2);

    // A stored count is taken as it is (here an absurd one, to see it was read)...
    store.put_token_counts(&c, "o200k_base", &[(TextKey::of("Hello there"), 50_000)]).unwrap();
    let meter = service.conversation_context(&c, Some("openai"), Some("gpt-4o")).unwrap();
    assert!(meter.breakdown.history > 50_000, "{meter:?}");
    // ...and what the meter had to count is stored for the next turn and opening.
    let stored = store.token_counts(&c, "o200k_base").unwrap();
    let answer = TextKey::of("Hi, what shall we look at?");
    assert!(stored.iter().any(|(key, n)| *key == answer && *n == 8), "{stored:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_a_compaction_summarised_are_not_counted_until_it_is_undone() {
    let dir = tempfile::tempdir().unwrap();
    let summary = &switchboard_core::compaction::SUMMARY_PROMPT[..60];
    let script = Script::default().with_counted_usage().with_route(summary, [Reply::keep_lines("FACT")]);
    let mock = MockServer::start(script).await;
    let service = service(dir.path());
    let profile = ProviderProfile {
        name: "openai".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("gpt-4o".into()),
        // A small window: "compact now" keeps only the latest (long) question as it is.
        options: switchboard_store::ProfileOptions { context_window: Some(4_000), ..Default::default() },
    };
    service.add_provider(&profile, true).unwrap();
    let pdf = service.attach_bytes("figures.pdf", PDF.to_vec()).await.unwrap();
    mock.push(Reply::text("FACT: revenue is up."));
    let (c, _) = turn(&service, send(None, "openai", None, "Read this.", &[&pdf])).await;
    mock.push(Reply::text("Noted."));
    let long = format!("And then? {}", "Some more context for the next step. ".repeat(120));
    turn(&service, send(Some(&c), "openai", None, &long, &[])).await;
    // (Scaled to the provider's report, as the turn's figures are.)
    let before = service.conversation_context(&c, None, None).unwrap();
    assert!(before.breakdown.attachments > 0, "{before:?}");

    // The question that carried the PDF is summarised: the PDF is no longer sent.
    let compacted = service.compact_conversation(&c).await.unwrap();
    assert!(compacted.compaction.covered >= 2, "{compacted:?}");
    let after = service.conversation_context(&c, None, None).unwrap();
    assert_eq!(after.breakdown.attachments, 0, "{after:?}");
    mock.push(Reply::text("Next."));
    let (_, next) = turn(&service, send(Some(&c), "openai", None, "Next?", &[])).await;
    assert_eq!(next.breakdown.attachments, 0, "{next:?}");

    // Undone: it is sent, and counted, again.
    service.set_compaction_undone(&c, &compacted.id, true).unwrap();
    let undone = service.conversation_context(&c, None, None).unwrap();
    assert!(undone.breakdown.attachments > 0, "{undone:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_with_an_agent_is_metered_on_the_model_its_next_turn_runs_on() {
    let mock = MockServer::start(Script::new([Reply::text("Read."), Reply::text("Read again.")])).await;
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    add_profiles(&service, &mock);
    let reader = |profile: &str, model: &str| AgentConfig {
        name: "Reader".into(),
        description: "Reads what it is given.".into(),
        instructions: "You read.".into(),
        profile: Some(profile.into()),
        model: Some(model.into()),
        ..AgentConfig::default()
    };
    service.put_agent(reader("anthropic", "claude-sonnet-4-5")).unwrap();
    let request = SendRequest { agent: Some("Reader".into()), ..SendRequest::text(None, "Read the ledger.") };
    let (id, first) = turn(&service, request).await;
    let claude = first.window.expect("Claude's window is known");

    // The agent now runs on Gemini: so does the chat's next turn, and the meter says so before it.
    service.put_agent(reader("gemini", "gemini-2.5-flash")).unwrap();
    let meter = service.conversation_context(&id, None, None).unwrap();
    let (_, next) = turn(&service, SendRequest::text(Some(id.clone()), "And again?")).await;
    let gemini = next.window.expect("Gemini's window is known");
    assert_ne!(gemini, claude);
    assert_eq!(meter.window, Some(gemini), "the meter counts for the model the turn ran on");
    let last = mock.requests().last().unwrap().path.clone();
    assert!(last.contains("gemini-2.5-flash"), "{last}");
}
