//! Attachments through a turn, against the mock provider: what a model cannot take is refused
//! before anything is stored, a PDF goes as its text (and the turn says so) to a model that
//! reads none, each API gets its own form of the same stored files (also after a switch of API
//! in one chat), and edit, regenerate and branch keep a question's files.

use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{Attachment, ChatEvent, ErrorKind, EventSink, NoticeKind};
use switchboard_mock_provider::{ErrorCategory, MockServer, RecordedRequest, Reply, Script};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::{EditRequest, SendRequest, TurnChoices};
use switchboard_store::{MessageStatus, ProviderProfile, Store};
use tokio::sync::mpsc;

const PHOTO: &[u8] = include_bytes!("fixtures/attachments/photo.png");
const PDF: &[u8] = include_bytes!("fixtures/attachments/figures.pdf");
/// What the PDF's text layer says.
const PDF_TEXT: &str = "Quarterly figures";

struct ChannelSink(mpsc::UnboundedSender<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        let _ = self.0.send(event);
    }
}

/// A service on a database in a folder (attachments live beside it) with one profile per API,
/// each named after its kind, all on one mock.
struct Setup {
    service: Service,
    mock: MockServer,
    _dir: tempfile::TempDir,
}

async fn setup(replies: impl IntoIterator<Item = Reply>) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let mock = MockServer::start(Script::new(replies)).await;
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    for (kind, model) in [
        ("openai", "gpt-4o"),
        ("openai-responses", "gpt-4o"),
        ("anthropic", "claude-sonnet-4-5"),
        ("gemini", "gemini-2.5-flash"),
    ] {
        let profile = ProviderProfile {
            name: kind.into(),
            kind: kind.into(),
            base_url: if kind == "gemini" { format!("http://{}/v1beta", mock.addr()) } else { mock.base_url() },
            model: Some(model.into()),
            options: Default::default(),
        };
        service.add_provider(&profile, kind == "openai").unwrap();
    }
    Setup { service, mock, _dir: dir }
}

impl Setup {
    async fn attach(&self, name: &str, bytes: &[u8]) -> Attachment {
        self.service.attach_bytes(name, bytes.to_vec()).await.unwrap()
    }

    /// Sends `request` and waits for its turn to end; its events.
    async fn turn(&self, request: SendRequest) -> (switchboard_service::ipc::TurnStarted, Vec<ChatEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let started = self.service.send(request, Arc::new(ChannelSink(tx))).unwrap();
        (started, until_done(rx).await)
    }
}

async fn until_done(mut rx: mpsc::UnboundedReceiver<ChatEvent>) -> Vec<ChatEvent> {
    let mut events = Vec::new();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(20), rx.recv()).await.expect("turn stalled") {
        let done = matches!(e, ChatEvent::Done { .. });
        events.push(e);
        if done {
            break;
        }
    }
    events
}

fn send(conversation: Option<&str>, provider: &str, text: &str, attachments: &[&Attachment]) -> SendRequest {
    SendRequest {
        provider: Some(provider.into()),
        attachments: attachments.iter().map(|a| a.id.clone()).collect(),
        ..SendRequest::text(conversation.map(str::to_owned), text)
    }
}

fn with_model(request: SendRequest, model: &str) -> SendRequest {
    SendRequest { model: Some(model.into()), ..request }
}

/// Whether any object in `value` satisfies `pred`.
fn any(value: &Value, pred: &dyn Fn(&serde_json::Map<String, Value>) -> bool) -> bool {
    match value {
        Value::Object(o) => pred(o) || o.values().any(|v| any(v, pred)),
        Value::Array(a) => a.iter().any(|v| any(v, pred)),
        _ => false,
    }
}

fn typed(value: &Value, ty: &str) -> bool {
    any(value, &|o| o.get("type").and_then(Value::as_str) == Some(ty))
}

fn has_key(value: &Value, key: &str) -> bool {
    any(value, &|o| o.contains_key(key))
}

/// What a request sent as the conversation, whichever API.
fn sent(r: &RecordedRequest) -> Value {
    r.body
        .get("messages")
        .or_else(|| r.body.get("input"))
        .or_else(|| r.body.get("contents"))
        .cloned()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_cannot_see_is_refused_images_before_anything_is_stored() {
    let s = setup([Reply::text("fine")]).await;
    let photo = s.attach("photo.png", PHOTO).await;
    let request = with_model(send(None, "openai", "What is this?", &[&photo]), "gpt-3.5-turbo");
    let e = s.service.prepare(request).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadRequest);
    assert_eq!(e.message, "gpt-3.5-turbo can't see images — remove them or pick another model");
    assert!(s.service.conversations().unwrap().is_empty(), "no chat was started");
    assert!(s.mock.requests().is_empty(), "nothing was sent");

    // In a chat that exists: nothing is added to it either, and asking again is refused alike.
    let (started, _) = s.turn(send(None, "openai", "hi", &[&photo])).await;
    let c = started.conversation_id;
    let before = s.service.open(&c).unwrap().messages.len();
    let e = s.service.prepare(with_model(send(Some(&c), "openai", "again", &[&photo]), "gpt-3.5-turbo")).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadRequest);
    let blind =
        TurnChoices { provider: Some("openai".into()), model: Some("gpt-3.5-turbo".into()), ..Default::default() };
    let e = s.service.prepare_regenerate(&c, None, Some(blind)).unwrap_err();
    assert_eq!(e.message, "gpt-3.5-turbo can't see images — remove them or pick another model");
    assert_eq!(s.service.open(&c).unwrap().messages.len(), before);
    assert_eq!(s.mock.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_id_the_store_does_not_have_is_refused_and_nothing_is_stored() {
    let s = setup([]).await;
    let mut request = SendRequest::text(None, "look");
    request.attachments = vec!["0".repeat(64)];
    let e = s.service.prepare(request).unwrap_err();
    assert_eq!(e.kind, ErrorKind::NotFound);
    assert!(e.message.contains("attach the file again"), "{}", e.message);
    assert!(s.service.conversations().unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_alone_make_a_message() {
    let s = setup([Reply::text("A gradient.")]).await;
    let photo = s.attach("photo.png", PHOTO).await;
    let (started, events) = s.turn(send(None, "openai", "", &[&photo])).await;
    assert!(matches!(events.last(), Some(ChatEvent::Done { .. })));
    let view = s.service.open(&started.conversation_id).unwrap();
    assert_eq!(view.messages[0].attachments, [photo]);
    assert!(s.service.prepare(SendRequest::text(None, "  ")).is_err(), "no text and no files: empty");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_goes_as_its_text_to_a_model_that_reads_none_and_the_turn_says_so() {
    let s = setup([Reply::text("Revenue is up."), Reply::text("Read it.")]).await;
    let pdf = s.attach("figures.pdf", PDF).await;
    // gpt-4 reads no PDFs (and sees no images).
    let (_, events) = s.turn(with_model(send(None, "openai", "Summarise", &[&pdf]), "gpt-4")).await;
    let notices: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::Notice { kind: NoticeKind::Attachment, message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "{events:?}");
    assert!(notices[0].contains("figures.pdf") && notices[0].contains("gpt-4"), "{notices:?}");
    let request = sent(&s.mock.requests()[0]);
    assert!(request.to_string().contains(PDF_TEXT), "the text went: {request}");
    assert!(!typed(&request, "file"), "no file part: {request}");

    // A model that reads PDFs gets the document itself, and no notice.
    let (_, events) = s.turn(send(None, "anthropic", "Summarise", &[&pdf])).await;
    assert!(!events.iter().any(|e| matches!(e, ChatEvent::Notice { kind: NoticeKind::Attachment, .. })));
    assert!(typed(&sent(&s.mock.requests()[1]), "document"), "{}", sent(&s.mock.requests()[1]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_api_of_one_chat_gets_the_same_files_in_its_own_form() {
    let s = setup([Reply::text("One."), Reply::text("Two."), Reply::text("Three."), Reply::text("Four.")]).await;
    let photo = s.attach("photo.png", PHOTO).await;
    let pdf = s.attach("figures.pdf", PDF).await;
    let (started, _) = s.turn(send(None, "openai", "Look", &[&photo, &pdf])).await;
    let c = started.conversation_id;
    for kind in ["anthropic", "gemini", "openai-responses"] {
        let (_, events) = s.turn(send(Some(&c), kind, "And now?", &[])).await;
        assert!(!events.iter().any(|e| matches!(e, ChatEvent::Error { .. })), "{kind}: {events:?}");
    }
    let requests = s.mock.requests();
    assert_eq!(requests.len(), 4);
    let [chat, anthropic, gemini, responses] = [0, 1, 2, 3].map(|i| sent(&requests[i]));
    assert!(typed(&chat, "image_url") && typed(&chat, "file"), "OpenAI Chat: {chat}");
    assert!(!chat.to_string().contains(PDF_TEXT), "the PDF went as a file, not as text");
    assert!(typed(&anthropic, "image") && typed(&anthropic, "document"), "Anthropic: {anthropic}");
    assert!(has_key(&gemini, "inline_data") || has_key(&gemini, "inlineData"), "Gemini: {gemini}");
    assert!(typed(&responses, "input_image") && typed(&responses, "input_file"), "Responses: {responses}");
    // Nobody got another API's form.
    assert!(!typed(&anthropic, "image_url") && !typed(&gemini, "image_url") && !typed(&responses, "image_url"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_regenerate_and_branch_keep_the_questions_files() {
    let s = setup((0..6).map(|i| Reply::text(format!("Answer {i}.")))).await;
    let photo = s.attach("photo.png", PHOTO).await;
    let (started, _) = s.turn(send(None, "anthropic", "Look", &[&photo])).await;
    let c = started.conversation_id.clone();

    let (tx, rx) = mpsc::unbounded_channel();
    s.service.regenerate(&c, None, None, Arc::new(ChannelSink(tx))).unwrap();
    until_done(rx).await;
    assert!(typed(&sent(&s.mock.requests()[1]), "image"), "asked again with the photo");

    let (tx, rx) = mpsc::unbounded_channel();
    let edited = s.service.edit_message(&c, &started.user_message_id, "Look closer", None, Arc::new(ChannelSink(tx)));
    let edited = edited.unwrap();
    until_done(rx).await;
    assert!(typed(&sent(&s.mock.requests()[2]), "image"), "the edit keeps the photo");
    let view = s.service.open(&c).unwrap();
    assert_eq!(view.messages[0].id, edited.user_message_id);
    assert_eq!(view.messages[0].attachments, std::slice::from_ref(&photo));

    // Branched into a new chat, the question still has its photo, and the next turn sends it.
    let branch = s.service.branch_conversation(&c, &edited.message_id).unwrap();
    assert_eq!(s.service.open(&branch).unwrap().messages[0].attachments, std::slice::from_ref(&photo));
    s.turn(send(Some(&branch), "anthropic", "More?", &[])).await;
    assert!(typed(&sent(&s.mock.requests()[3]), "image"), "the branch sends it");

    // An edit that says otherwise: without the photo.
    let (tx, rx) = mpsc::unbounded_channel();
    let request = EditRequest {
        conversation_id: c.clone(),
        message_id: edited.user_message_id.clone(),
        text: "Never mind the picture".into(),
        attachments: Some(vec![]),
        choices: None,
    };
    let without = s.service.edit(request, Arc::new(ChannelSink(tx))).unwrap();
    until_done(rx).await;
    assert!(!typed(&sent(&s.mock.requests()[4]), "image"));
    assert!(s.service.open(&c).unwrap().messages[0].attachments.is_empty());
    assert_eq!(s.service.open(&c).unwrap().messages[0].id, without.user_message_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_refuses_a_file_fails_the_turn_in_its_words_and_the_question_stays() {
    let refusal = Reply::api_error(ErrorCategory::InvalidRequest).with_message("Could not process image");
    let s = setup([refusal]).await;
    let photo = s.attach("photo.png", PHOTO).await;
    let (started, events) = s.turn(send(None, "openai", "Look", &[&photo])).await;
    let error = events.iter().find_map(|e| match e {
        ChatEvent::Error { message, .. } => Some(message.clone()),
        _ => None,
    });
    assert!(error.as_deref().is_some_and(|m| m.contains("Could not process image")), "{events:?}");
    let view = s.service.open(&started.conversation_id).unwrap();
    assert_eq!(view.messages[0].attachments, [photo]);
    assert_eq!(view.messages[1].status, MessageStatus::Error);
}
