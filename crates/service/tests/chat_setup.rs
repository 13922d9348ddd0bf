//! A chat keeps its setup (toolsets, parameters, profile and model) through reopening, a restart
//! and regenerate; a later explicit choice changes it; grants made in it are listed and revoked.
//! Checked by what the mock provider received.

use futures::FutureExt;
use futures::future::BoxFuture;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use switchboard_core::turn::{ApprovalDecision, ApprovalRequest, Approver};
use switchboard_core::{ChatEvent, ErrorKind, EventSink, GenerationOptions};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::agents::Toolset;
use switchboard_service::ipc::{ChatGrant, ChatSetupChange, SendRequest};
use switchboard_store::{ProviderProfile, Store};

struct Quiet;

impl EventSink for Quiet {
    fn emit(&self, _: ChatEvent) {}
}

/// Answers every question "once", counting them.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Approver for Counting {
    fn decide(&self, _: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        self.0.fetch_add(1, Ordering::SeqCst);
        async { ApprovalDecision::Once }.boxed()
    }
}

struct ForChat;

impl Approver for ForChat {
    fn decide(&self, _: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        async { ApprovalDecision::ForChat }.boxed()
    }
}

/// A service on the database in `dir` (a restart is a second call), with profiles `mock` (the
/// default, model `m`) and `other` (model `o`) on `mock`.
fn service_in(dir: &Path, mock: &MockServer) -> Service {
    let store = Store::open(&dir.join(switchboard_store::DB_FILE)).unwrap();
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    for (name, model, default) in [("mock", "m", true), ("other", "o", false)] {
        if service.settings().is_ok() && service.providers().unwrap().iter().any(|p| p.name == name) {
            continue;
        }
        let profile = ProviderProfile {
            name: name.into(),
            kind: "openai".into(),
            base_url: mock.base_url(),
            model: Some(model.into()),
            options: Default::default(),
        };
        service.add_provider(&profile, default).unwrap();
    }
    service
}

async fn turn(service: &Service, request: SendRequest) -> String {
    let turn = service.prepare(request).unwrap();
    let report = service.run(turn, Arc::new(Quiet), Arc::new(Counting::default())).await;
    assert!(report.outcome.error.is_none(), "{:?}", report.outcome.error);
    report.started.conversation_id
}

fn last_body(mock: &MockServer) -> serde_json::Value {
    mock.requests().last().unwrap().body.clone()
}

fn offered(body: &serde_json::Value) -> Vec<String> {
    let mut names: Vec<String> = body["tools"]
        .as_array()
        .map(|tools| tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_keeps_its_toolsets_parameters_and_model_across_a_restart_and_regenerate() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockServer::start(Script::new((0..8).map(|i| Reply::text(format!("answer {i}"))))).await;
    let service = service_in(dir.path(), &mock);
    service
        .put_toolset(Toolset { name: "clock".into(), description: String::new(), tools: vec!["get_time".into()] })
        .unwrap();
    let warm = GenerationOptions { temperature: Some(0.3), ..GenerationOptions::default() };
    let first = SendRequest {
        toolsets: Some(vec!["clock".into()]),
        generation: Some(warm),
        provider: Some("other".into()),
        ..SendRequest::text(None, "hi")
    };
    let id = turn(&service, first).await;
    let setup = service.open(&id).unwrap().setup.unwrap();
    assert_eq!(setup.toolsets, ["clock"]);
    assert_eq!(setup.generation, Some(warm));
    assert_eq!((setup.provider.as_deref(), setup.model.as_deref()), (Some("other"), Some("o")));

    // A restart: the chat opens with the same setup, and a continued turn that names nothing
    // runs with it.
    drop(service);
    let service = service_in(dir.path(), &mock);
    assert_eq!(service.open(&id).unwrap().setup, Some(setup.clone()));
    turn(&service, SendRequest::text(Some(id.clone()), "again")).await;
    let body = last_body(&mock);
    assert_eq!(offered(&body), ["get_time"], "only the chat's toolset's tools: {body}");
    assert_eq!(body["temperature"], 0.3);
    assert_eq!(body["model"], "o", "the model the chat used, not the default profile's");

    // Regenerate keeps the chat's parameters as they are now.
    let hot = GenerationOptions { temperature: Some(0.9), ..GenerationOptions::default() };
    service.set_chat_setup(&id, ChatSetupChange { generation: Some(hot), ..Default::default() }).unwrap();
    let again = service.prepare_regenerate(&id, None, None).unwrap();
    service.run(again, Arc::new(Quiet), Arc::new(Counting::default())).await;
    let body = last_body(&mock);
    assert_eq!((body["temperature"].clone(), offered(&body)), (serde_json::json!(0.9), vec!["get_time".to_owned()]));

    // A later explicit choice changes the setup: every tool again, the parameters cleared, the
    // default profile.
    let all = SendRequest {
        toolsets: Some(vec![]),
        generation: Some(GenerationOptions::default()),
        provider: Some("mock".into()),
        ..SendRequest::text(Some(id.clone()), "everything")
    };
    turn(&service, all).await;
    let body = last_body(&mock);
    let every_tool = offered(&body);
    assert!(every_tool.len() > 1 && every_tool.contains(&"get_time".to_owned()), "{every_tool:?}");
    assert!(body.get("temperature").is_none(), "{body}");
    let setup = service.chat_setup(&id).unwrap();
    assert_eq!((setup.toolsets.len(), setup.generation, setup.model.as_deref()), (0, None, Some("m")));
    turn(&service, SendRequest::text(Some(id.clone()), "still everything")).await;
    assert_eq!(offered(&last_body(&mock)), every_tool);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changing_a_setup_checks_every_part_and_a_refused_change_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockServer::start(Script::new([Reply::text("ok"), Reply::text("ok")])).await;
    let service = service_in(dir.path(), &mock);
    service
        .put_toolset(Toolset { name: "clock".into(), description: String::new(), tools: vec!["get_time".into()] })
        .unwrap();
    let id = turn(&service, SendRequest::text(None, "hi")).await;
    let before = service.chat_setup(&id).unwrap();
    let cases = [
        (ChatSetupChange { toolsets: Some(vec!["ghost".into()]), ..Default::default() }, "no toolset named 'ghost'"),
        (
            ChatSetupChange {
                generation: Some(GenerationOptions { top_p: Some(4.0), ..GenerationOptions::default() }),
                ..Default::default()
            },
            "Top-p",
        ),
        (ChatSetupChange { provider: Some("gone".into()), ..Default::default() }, "no provider profile named 'gone'"),
        (ChatSetupChange { toolsets: Some(vec!["clock".into(), "clock".into()]), ..Default::default() }, "twice"),
    ];
    for (change, says) in cases {
        let e = service.set_chat_setup(&id, change).unwrap_err();
        assert!(e.message.contains(says), "{e:?}");
        assert_eq!(service.chat_setup(&id).unwrap(), before, "nothing changed");
    }
    assert_eq!(service.set_chat_setup("nope", ChatSetupChange::default()).unwrap_err().kind, ErrorKind::Config);
    // The picker names a profile and model; the tray a toolset.
    let set = service
        .set_chat_setup(
            &id,
            ChatSetupChange {
                toolsets: Some(vec!["clock".into()]),
                provider: Some("other".into()),
                model: Some("o2".into()),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        (set.toolsets.as_slice(), set.provider.as_deref(), set.model.as_deref()),
        (&["clock".to_owned()][..], Some("other"), Some("o2"))
    );
    turn(&service, SendRequest::text(Some(id.clone()), "now")).await;
    let body = last_body(&mock);
    assert_eq!((body["model"].as_str(), offered(&body)), (Some("o2"), vec!["get_time".to_owned()]));

    // The profile the chat used is deleted: the default answers, and the turn says so.
    service.remove_provider("other").unwrap();
    mock.push(Reply::text("ok"));
    let turn = service.prepare(SendRequest::text(Some(id.clone()), "then")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    struct Collect(std::sync::Mutex<std::sync::mpsc::Sender<ChatEvent>>);
    impl EventSink for Collect {
        fn emit(&self, e: ChatEvent) {
            let _ = self.0.lock().unwrap().send(e);
        }
    }
    service.run(turn, Arc::new(Collect(std::sync::Mutex::new(tx))), Arc::new(Counting::default())).await;
    let said: Vec<ChatEvent> = rx.try_iter().collect();
    assert!(format!("{said:?}").contains("no longer exists"), "{said:?}");
    assert_eq!(last_body(&mock)["model"], "m");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_grant_is_asked_about_again_on_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockServer::start(Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::text("done"),
        Reply::tool_call("c2", "get_time", "{}"),
        Reply::text("done"),
        Reply::tool_call("c3", "get_time", "{}"),
        Reply::text("done"),
    ]))
    .await;
    let service = service_in(dir.path(), &mock);
    let mut settings = service.settings().unwrap();
    settings.tools.approval.insert("get_time".into(), switchboard_core::ApprovalPolicy::Ask);
    service.update_settings(&settings).unwrap();

    let prepared = service.prepare(SendRequest::text(None, "time?")).unwrap();
    let id = prepared.started.conversation_id.clone();
    service.run(prepared, Arc::new(Quiet), Arc::new(ForChat)).await;
    assert_eq!(service.chat_grants(&id).unwrap(), [ChatGrant::Tool("get_time".into())]);

    // Allowed for the chat: not asked.
    let asked = Arc::new(Counting::default());
    let prepared = service.prepare(SendRequest::text(Some(id.clone()), "again")).unwrap();
    service.run(prepared, Arc::new(Quiet), asked.clone()).await;
    assert_eq!(asked.0.load(Ordering::SeqCst), 0);

    // Revoked: asked again.
    assert_eq!(service.revoke_chat_grant(&id, &ChatGrant::Tool("get_time".into())).unwrap(), []);
    let prepared = service.prepare(SendRequest::text(Some(id.clone()), "and again")).unwrap();
    service.run(prepared, Arc::new(Quiet), asked.clone()).await;
    assert_eq!(asked.0.load(Ordering::SeqCst), 1, "the next call asks again");
    let e = service.revoke_chat_grant(&id, &ChatGrant::Host("example.net".into())).unwrap_err();
    assert!(e.message.contains("nothing to revoke"), "{e:?}");
}
