//! Command handlers without a webview: Tauri's mock runtime invokes them the way the UI does and
//! checks the JSON that comes back, errors included.

mod common;

use common::{invoke, invoke_from};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use switchboard_service::{Confirm, Service, Widening};
use switchboard_store::{ProviderProfile, Store};
use tauri::test::{MockRuntime, mock_builder};
use tauri::{App, WebviewWindow, WebviewWindowBuilder};

fn app() -> (App<MockRuntime>, WebviewWindow<MockRuntime>, Service) {
    let (app, webview, service, _store) = app_with_store();
    (app, webview, service)
}

/// Stands in for the native dialog: answers as the test says and keeps what it was asked.
struct Person {
    answer: bool,
    asked: Mutex<Vec<String>>,
    /// What the system opener was handed.
    opened: Mutex<Vec<String>>,
    /// The files they choose in the native file dialog (none: they cancel it).
    chooses: Mutex<Vec<std::path::PathBuf>>,
}

impl Confirm for Person {
    fn confirm(&self, changes: &[Widening]) -> bool {
        self.asked.lock().unwrap().push(Widening::describe_all(changes));
        self.answer
    }
}

/// The app, and its database for tests that seed rows the way a turn would. The person says no
/// to every widening change.
fn app_with_store() -> (App<MockRuntime>, WebviewWindow<MockRuntime>, Service, Store) {
    let (app, webview, service, store, _person) = app_answering(false);
    (app, webview, service, store)
}

/// The app with a person who answers `answer` when the shell asks.
fn app_answering(answer: bool) -> (App<MockRuntime>, WebviewWindow<MockRuntime>, Service, Store, Arc<Person>) {
    let store = Store::open_in_memory().unwrap();
    let service = Service::new(store.clone(), Arc::new(switchboard_secrets::MemoryStore::new())).unwrap();
    let person =
        Arc::new(Person { answer, asked: Mutex::default(), opened: Mutex::default(), chooses: Mutex::default() });
    let opened = person.clone();
    let app = switchboard_desktop::with_commands(mock_builder())
        .manage(service.clone())
        .manage(switchboard_desktop::Confirmer(person.clone()))
        .manage(switchboard_desktop::Opener(Arc::new(move |url| {
            opened.opened.lock().unwrap().push(url.to_owned());
            Ok(())
        })))
        .manage(switchboard_desktop::FilePicker({
            let person = person.clone();
            Arc::new(move |_| person.chooses.lock().unwrap().clone())
        }))
        .build(switchboard_desktop::context())
        .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    (app, webview, service, store, person)
}

#[test]
fn conversations_are_listed_opened_renamed_and_deleted() {
    let (_app, webview, _service, store) = app_with_store();
    assert_eq!(invoke(&webview, "list_conversations", json!({})).unwrap(), json!([]));
    let rows = store.begin_turn(None, "Hello 👋", "p", "m").unwrap();
    let list = invoke(&webview, "list_conversations", json!({})).unwrap();
    assert_eq!(list[0]["id"], rows.conversation_id);
    assert_eq!(list[0]["title"], "Hello 👋");

    let view = invoke(&webview, "open_conversation", json!({"id": rows.conversation_id})).unwrap();
    assert_eq!(view["messages"][0]["content"], "Hello 👋");
    assert_eq!(view["messages"][1]["status"], "streaming");
    assert_eq!(view["disabledTools"], json!([]));

    invoke(&webview, "rename_conversation", json!({"id": rows.conversation_id, "title": "Greetings"})).unwrap();
    let found = invoke(&webview, "search_conversations", json!({"query": "greet"})).unwrap();
    assert_eq!(found[0]["title"], "Greetings");

    let id = rows.conversation_id.clone();
    invoke(&webview, "set_conversation_pinned", json!({"id": id, "pinned": true})).unwrap();
    assert_eq!(invoke(&webview, "list_conversations", json!({})).unwrap()[0]["pinned"], true);
    invoke(&webview, "set_conversation_archived", json!({"id": id, "archived": true})).unwrap();
    let listed = invoke(&webview, "list_conversations", json!({})).unwrap();
    assert_eq!((&listed[0]["archived"], &listed[0]["pinned"]), (&json!(true), &json!(false)));
    // The person cancels the save dialog: nothing is exported, and the page is told so.
    let err = invoke(&webview, "export_conversation", json!({"id": id, "format": "markdown"})).unwrap_err();
    assert_eq!(err["kind"], "cancelled", "{err}");
    assert!(err["message"].as_str().unwrap().contains("no file was chosen"), "{err}");
    invoke(&webview, "delete_conversation", json!({"id": rows.conversation_id})).unwrap();
    assert_eq!(invoke(&webview, "list_conversations", json!({})).unwrap(), json!([]));
}

#[test]
fn a_long_conversation_opens_at_its_end_and_reads_older_pages() {
    let (_app, webview, _service, store) = app_with_store();
    let id = store.begin_turn(None, "question 0", "p", "m").unwrap().conversation_id;
    for turn in 1..40 {
        store.begin_turn(Some(&id), &format!("question {turn}"), "p", "m").unwrap();
    }
    let view = invoke(&webview, "open_conversation", json!({"id": id})).unwrap();
    let page = view["messages"].as_array().unwrap();
    assert_eq!(page.len(), switchboard_service::OPEN_PAGE);
    assert_eq!(view["earlier"], 80 - switchboard_service::OPEN_PAGE);
    assert_eq!(page.last().unwrap()["role"], "assistant");
    assert_eq!(page[page.len() - 2]["content"], "question 39");

    let older = invoke(&webview, "older_messages", json!({"id": id, "before": page[0]["id"], "limit": 15})).unwrap();
    assert_eq!(older["messages"].as_array().unwrap().len(), 15);
    assert_eq!(older["earlier"], 80 - switchboard_service::OPEN_PAGE - 15);
    let rest = invoke(&webview, "older_messages", json!({"id": id, "before": older["messages"][0]["id"], "limit": 50}))
        .unwrap();
    assert_eq!(rest["earlier"], 0);
    assert_eq!(rest["messages"][0]["content"], "question 0");

    let err = invoke(&webview, "older_messages", json!({"id": id, "before": "nope", "limit": 10})).unwrap_err();
    assert_eq!(err["kind"], "config");
    assert!(err["message"].as_str().unwrap().contains("nope"), "{err}");
}

#[test]
fn errors_reach_the_ui_typed() {
    let (_app, webview, _service) = app();
    let err = invoke(&webview, "open_conversation", json!({"id": "nope"})).unwrap_err();
    assert_eq!(err["kind"], "config");
    assert_eq!(err["retryable"], false);
    assert!(err["message"].as_str().unwrap().contains("nope"), "{err}");

    let err = invoke(&webview, "rename_conversation", json!({"id": "nope", "title": "  "})).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("cannot be empty"), "{err}");

    let err = invoke(&webview, "resolve_approval", json!({"callId": "c1", "choice": "once"})).unwrap_err();
    assert_eq!(err["kind"], "config");
}

#[test]
fn tools_can_be_disabled_for_a_chat() {
    let (_app, webview, _service, store) = app_with_store();
    let rows = store.begin_turn(None, "hi", "p", "m").unwrap();
    let tools = invoke(&webview, "list_tools", json!({"conversationId": rows.conversation_id})).unwrap();
    let get_time = tools.as_array().unwrap().iter().find(|t| t["name"] == "get_time").unwrap().clone();
    assert_eq!(get_time["source"], json!({"kind": "builtin"}));
    assert_eq!(get_time["disabledForChat"], false);
    invoke(
        &webview,
        "set_chat_tool_disabled",
        json!({"conversationId": rows.conversation_id, "name": "get_time", "disabled": true}),
    )
    .unwrap();
    let tools = invoke(&webview, "list_tools", json!({"conversationId": rows.conversation_id})).unwrap();
    assert_eq!(tools[0]["disabledForChat"], true);
    let tools = invoke(&webview, "list_tools", json!({"conversationId": null})).unwrap();
    assert_eq!(tools[0]["disabledForChat"], false, "other chats are unaffected");

    // A whole source at once, and back on.
    let all = json!(["get_time", "web_search", "web_fetch", "read_tool_result"]);
    invoke(
        &webview,
        "set_chat_tools_disabled",
        json!({"conversationId": rows.conversation_id, "names": all, "disabled": true}),
    )
    .unwrap();
    let tools = invoke(&webview, "list_tools", json!({"conversationId": rows.conversation_id})).unwrap();
    assert!(tools.as_array().unwrap().iter().all(|t| t["disabledForChat"] == true), "{tools}");
    invoke(
        &webview,
        "set_chat_tools_disabled",
        json!({"conversationId": rows.conversation_id, "names": all, "disabled": false}),
    )
    .unwrap();
    let tools = invoke(&webview, "list_tools", json!({"conversationId": rows.conversation_id})).unwrap();
    assert!(tools.as_array().unwrap().iter().all(|t| t["disabledForChat"] == false), "{tools}");
}

#[test]
fn providers_are_listed_without_keys() {
    let (_app, webview, service) = app();
    let profile = ProviderProfile {
        name: "local".into(),
        kind: "openai".into(),
        base_url: "http://127.0.0.1:9/v1".into(),
        model: Some("m".into()),
        options: Default::default(),
    };
    service.add_provider(&profile, true).unwrap();
    let providers = invoke(&webview, "list_providers", json!({})).unwrap();
    assert_eq!(
        providers,
        json!([{"name": "local", "kind": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "isDefault": true,
                "options": {"generation": {}}}])
    );
    assert_eq!(invoke(&webview, "stop_turn", json!({"messageId": "x"})).unwrap(), json!(false));
}

#[test]
fn commands_are_refused_to_remote_origins() {
    let (_app, webview, _service) = app();
    let err = invoke_from(&webview, "https://evil.example", "list_conversations", json!({})).unwrap_err();
    assert!(err.as_str().unwrap_or_default().contains("not allowed"), "{err}");
}

#[test]
fn a_key_set_through_ipc_never_comes_back() {
    const KEY: &str = "sk-test-ipc-leakcheck-0123456789abcd";
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let mock =
        runtime.block_on(switchboard_mock_provider::MockServer::start(switchboard_mock_provider::Script::new([
            switchboard_mock_provider::Reply::tool_call("c1", "get_time", "{}"),
            switchboard_mock_provider::Reply::text("Done."),
        ])));
    let (_app, webview, service) = app();
    service
        .add_provider(
            &ProviderProfile {
                name: "mock".into(),
                kind: "openai".into(),
                base_url: mock.base_url(),
                model: Some("m".into()),
                options: Default::default(),
            },
            true,
        )
        .unwrap();
    let mut responses = vec![invoke(&webview, "set_key", json!({"name": "mock", "value": KEY})).unwrap()];
    assert_eq!(responses[0]["isSet"], true);
    assert_eq!(responses[0]["last4"], "abcd");

    // A whole conversation with a tool call, on the key.
    let (tx, rx) = std::sync::mpsc::channel();
    let sink: Arc<dyn switchboard_core::EventSink> = Arc::new(move |e: switchboard_core::ChatEvent| {
        let _ = tx.send(e);
    });
    let started = runtime
        .block_on(async { service.send(switchboard_service::ipc::SendRequest::text(None, "time?"), sink) })
        .unwrap();
    let mut events = Vec::new();
    while let Ok(e) = rx.recv_timeout(std::time::Duration::from_secs(10)) {
        let done = matches!(e, switchboard_core::ChatEvent::Done { .. });
        events.push(serde_json::to_string(&e).unwrap());
        if done {
            break;
        }
    }
    assert_eq!(mock.requests()[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    for (cmd, args) in [
        ("list_keys", json!({})),
        ("get_settings", json!({})),
        ("list_providers", json!({})),
        ("list_tools", json!({"conversationId": null})),
        ("list_conversations", json!({})),
        ("open_conversation", json!({"id": started.conversation_id})),
        ("keychain_status", json!({})),
        ("data_info", json!({})),
    ] {
        responses.push(invoke(&webview, cmd, args).unwrap());
    }
    for text in events.iter().cloned().chain(responses.iter().map(Value::to_string)) {
        assert!(!text.contains(KEY), "the key came back: {text}");
    }
    assert!(events.iter().any(|e| e.contains("toolResult")), "the conversation used a tool");
}

/// Waits until no turn runs (the window's channel is not read in these tests).
fn until_idle(service: &Service) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !service.running().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the turn did not end");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn regenerate_from_the_window_asks_with_the_choices_of_the_first_ask() {
    use switchboard_mock_provider::{MockServer, Reply, Script};
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let mock = runtime.block_on(MockServer::start(Script::new([Reply::text("first"), Reply::text("second")])));
    let (_app, webview, service) = app();
    let profile = json!({"name": "mock", "kind": "openai", "baseUrl": mock.base_url(), "model": "m"});
    invoke(&webview, "add_provider", json!({"profile": profile, "makeDefault": true})).unwrap();
    let request = json!({
        "conversationId": null, "text": "q", "provider": null, "model": "picked",
        "forced": [], "useTools": false, "dryRun": false, "disableForChat": []
    });
    let started = invoke(&webview, "send_message", json!({"request": request, "onEvent": "__CHANNEL__:1"})).unwrap();
    until_idle(&service);
    let id = started["conversationId"].clone();
    invoke(&webview, "regenerate", json!({"conversationId": id, "onEvent": "__CHANNEL__:2"})).unwrap();
    until_idle(&service);

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for r in &requests {
        assert_eq!(r.body["model"], "picked", "the model picked for the first ask");
        assert!(r.tool_names().is_empty(), "tools stay off for the retry");
    }
    let view = invoke(&webview, "open_conversation", json!({"id": id})).unwrap();
    let texts: Vec<&str> =
        view["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(texts, ["q", "second"]);
}

#[test]
fn approving_for_this_chat_from_the_window_is_remembered_for_the_next_turn() {
    use switchboard_mock_provider::{MockServer, Reply, Script};
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let mock = runtime.block_on(MockServer::start(Script::new([
        Reply::tool_call("c1", "get_time", "{}"),
        Reply::text("first"),
        Reply::tool_call("c2", "get_time", "{}"),
        Reply::text("second"),
    ])));
    let (_app, webview, service) = app();
    let profile = json!({"name": "mock", "kind": "openai", "baseUrl": mock.base_url(), "model": "m"});
    invoke(&webview, "add_provider", json!({"profile": profile, "makeDefault": true})).unwrap();
    let mut settings = invoke(&webview, "get_settings", json!({})).unwrap();
    settings["tools"]["approval"]["get_time"] = json!("ask");
    invoke(&webview, "update_settings", json!({"settings": settings})).unwrap();

    let send = |conversation: Value, text: &str, channel: u32| {
        let request = json!({
            "conversationId": conversation, "text": text, "provider": null, "model": null,
            "forced": [], "useTools": true, "dryRun": false, "disableForChat": []
        });
        invoke(&webview, "send_message", json!({"request": request, "onEvent": format!("__CHANNEL__:{channel}")}))
            .unwrap()
    };
    let started = send(Value::Null, "time?", 1);
    // The call waits for the person; answer it the way the dialog does.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while invoke(&webview, "resolve_approval", json!({"callId": "c1", "choice": "chat"})).is_err() {
        assert!(std::time::Instant::now() < deadline, "the call never waited for approval");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    until_idle(&service);
    send(started["conversationId"].clone(), "again", 2);
    // Nobody answers this time: the turn ends only if it did not ask.
    until_idle(&service);
    let view = invoke(&webview, "open_conversation", json!({"id": started["conversationId"]})).unwrap();
    assert_eq!(view["messages"][3]["toolCalls"][0]["result"]["status"], "ok");
}

const STORED_KEY: &str = "sk-test-window-0123456789wxyz";

/// A profile at `https://api.example.com/v1` whose key the person stored from the window.
fn profile_with_key(webview: &WebviewWindow<MockRuntime>) {
    let profile = json!({"name": "openai", "kind": "openai", "baseUrl": "https://api.example.com/v1", "model": "m"});
    invoke(webview, "add_provider", json!({"profile": profile, "makeDefault": true})).unwrap();
    invoke(webview, "set_key", json!({"name": "openai", "value": STORED_KEY})).unwrap();
}

#[test]
fn the_page_cannot_point_a_stored_key_at_another_host_unless_the_person_agrees_natively() {
    let (_app, webview, service, _store, person) = app_answering(false);
    profile_with_key(&webview);
    let evil = json!({"name": "openai", "kind": "openai", "baseUrl": "https://evil.example/v1", "model": "m"});
    // Whatever the page adds to the arguments, only the shell's confirmer counts.
    let err =
        invoke(&webview, "add_provider", json!({"profile": evil, "makeDefault": true, "confirmed": true})).unwrap_err();
    assert_eq!(err["kind"], "cancelled", "{err}");
    let message = err["message"].as_str().unwrap();
    assert!(message.contains("Send the key of 'openai' to https://evil.example instead of https://api.example.com?"));
    assert_eq!(person.asked.lock().unwrap().len(), 1, "the person was asked once");
    assert_eq!(service.providers().unwrap()[0].base_url, "https://api.example.com/v1");

    let (_app, webview, service, _store, person) = app_answering(true);
    profile_with_key(&webview);
    let providers = invoke(&webview, "add_provider", json!({"profile": evil, "makeDefault": true})).unwrap();
    assert_eq!(providers[0]["baseUrl"], "https://evil.example/v1");
    assert!(person.asked.lock().unwrap()[0].contains("https://evil.example"));
    assert_eq!(service.providers().unwrap()[0].base_url, "https://evil.example/v1");
}

#[test]
fn the_page_cannot_loosen_approvals_or_allow_local_addresses_unless_the_person_agrees_natively() {
    let (_app, webview, service, _store, person) = app_answering(false);
    let mut settings = invoke(&webview, "get_settings", json!({})).unwrap();
    settings["tools"]["approval"]["get_time"] = json!("deny");
    invoke(&webview, "update_settings", json!({"settings": settings})).unwrap();
    assert!(person.asked.lock().unwrap().is_empty(), "tightening asks nothing");

    for change in [json!({"tools": {"approval": {"get_time": "auto"}}}), json!({"web": {"allowLocalAddresses": true}})]
    {
        let mut widened = settings.clone();
        for (k, v) in change.as_object().unwrap() {
            for (kk, vv) in v.as_object().unwrap() {
                widened[k][kk] = vv.clone();
            }
        }
        let err = invoke(&webview, "update_settings", json!({"settings": widened})).unwrap_err();
        assert_eq!(err["kind"], "cancelled", "{err}");
    }
    assert_eq!(person.asked.lock().unwrap().len(), 2);
    let saved = service.settings().unwrap();
    assert_eq!(saved.tools.approval["get_time"], switchboard_core::ApprovalPolicy::Deny);
    assert!(!saved.web.allow_local_addresses);

    let (_app, webview, service, _store, _person) = app_answering(true);
    let mut settings = invoke(&webview, "get_settings", json!({})).unwrap();
    settings["web"]["allowLocalAddresses"] = json!(true);
    let saved = invoke(&webview, "update_settings", json!({"settings": settings})).unwrap();
    assert_eq!(saved["web"]["allowLocalAddresses"], true);
    assert!(service.settings().unwrap().web.allow_local_addresses);
}

#[test]
fn links_are_checked_in_rust_before_the_system_opener_sees_them() {
    let (_app, webview, _service, _store, person) = app_answering(true);
    for url in ["https://example.com/docs", "mailto:someone@example.com", "https://bücher.example/"] {
        invoke(&webview, "open_url", json!({ "url": url })).unwrap();
    }
    assert_eq!(
        *person.opened.lock().unwrap(),
        ["https://example.com/docs", "mailto:someone@example.com", "https://xn--bcher-kva.example/"]
    );
    for url in ["javascript:alert(1)", "file:///etc/passwd", "http://a b", "https://x\u{0000}", "smb://host/share"] {
        let err = invoke(&webview, "open_url", json!({ "url": url })).unwrap_err();
        assert_eq!(err["kind"], "badRequest", "{url}: {err}");
        assert!(err["message"].as_str().unwrap().starts_with("Not opened: "), "{err}");
    }
    assert_eq!(person.opened.lock().unwrap().len(), 3, "nothing refused reached the opener");
}

#[test]
fn the_window_never_navigates_away_from_the_apps_own_content() {
    use switchboard_desktop::navigation_allowed;
    let url = |s: &str| tauri::Url::parse(s).unwrap();
    for own in ["tauri://localhost/", "tauri://localhost/index.html#/chat", "http://tauri.localhost/", "about:blank"] {
        assert!(navigation_allowed(&url(own)), "{own}");
    }
    for away in [
        "https://evil.example/",
        "http://localhost:8080/",
        "tauri://evil.example/",
        "http://tauri.localhost.evil.example/",
        "file:///etc/passwd",
        "data:text/html,hi",
        "javascript:alert(1)",
        "about:srcdoc",
    ] {
        assert!(!navigation_allowed(&url(away)), "{away}");
    }
}

/// Runs one turn whose `get_time` call asks, answers it "always" from the window, and returns
/// the tool's approval in Settings afterwards, plus what the native dialog was asked.
fn always_from_the_window(person_agrees: bool) -> (Value, Vec<String>, Value) {
    use switchboard_mock_provider::{MockServer, Reply, Script};
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let mock = runtime
        .block_on(MockServer::start(Script::new([Reply::tool_call("c1", "get_time", "{}"), Reply::text("done")])));
    let (_app, webview, service, _store, person) = app_answering(person_agrees);
    let profile = json!({"name": "mock", "kind": "openai", "baseUrl": mock.base_url(), "model": "m"});
    invoke(&webview, "add_provider", json!({"profile": profile, "makeDefault": true})).unwrap();
    let mut settings = invoke(&webview, "get_settings", json!({})).unwrap();
    settings["tools"]["approval"]["get_time"] = json!("ask");
    invoke(&webview, "update_settings", json!({"settings": settings})).unwrap();
    let request = json!({
        "conversationId": null, "text": "time?", "provider": null, "model": null,
        "forced": [], "useTools": true, "dryRun": false, "disableForChat": []
    });
    let started = invoke(&webview, "send_message", json!({"request": request, "onEvent": "__CHANNEL__:1"})).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while invoke(&webview, "resolve_approval", json!({"callId": "c1", "choice": "always"})).is_err() {
        assert!(std::time::Instant::now() < deadline, "the call never waited for approval");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    until_idle(&service);
    let view = invoke(&webview, "open_conversation", json!({"id": started["conversationId"]})).unwrap();
    let status = view["messages"][1]["toolCalls"][0]["result"]["status"].clone();
    let approval = invoke(&webview, "get_settings", json!({})).unwrap()["tools"]["approval"]["get_time"].clone();
    let asked = person.asked.lock().unwrap().clone();
    (approval, asked, status)
}

#[test]
fn always_from_the_window_stops_a_tool_asking_only_after_the_person_agrees_natively() {
    let (approval, asked, status) = always_from_the_window(false);
    assert_eq!(status, "ok", "the call still runs this once");
    assert_eq!(approval, "ask", "the page alone cannot make a tool stop asking");
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("'get_time' without asking you"), "{asked:?}");

    let (approval, _, status) = always_from_the_window(true);
    assert_eq!((approval, status), (json!("auto"), json!("ok")));
}

/// The app over a database in a temporary folder (the tools file goes next to it), with a person
/// who answers `answer` when the shell asks.
fn app_with_config_dir(answer: bool) -> (App<MockRuntime>, WebviewWindow<MockRuntime>, Arc<Person>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let service = Service::new(store, Arc::new(switchboard_secrets::MemoryStore::new())).unwrap();
    let person =
        Arc::new(Person { answer, asked: Mutex::default(), opened: Mutex::default(), chooses: Mutex::default() });
    let app = switchboard_desktop::with_commands(mock_builder())
        .manage(service)
        .manage(switchboard_desktop::Confirmer(person.clone()))
        .manage(switchboard_desktop::Opener(Arc::new(|_| Ok(()))))
        .manage(switchboard_desktop::FilePicker({
            let person = person.clone();
            Arc::new(move |_| person.chooses.lock().unwrap().clone())
        }))
        .build(switchboard_desktop::context())
        .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    (app, webview, person, dir)
}

#[test]
fn a_command_tool_from_the_page_runs_only_after_the_person_agrees_natively() {
    let (_app, webview, person, _dir) = app_with_config_dir(false);
    let config = json!({
        "name": "grep_notes",
        "description": "Search my notes",
        "argv": ["grep", "-n", "--", "{{pattern}}", "notes.txt"],
        "env": {"NOTES_TOKEN": "{{secret:notes}}"}
    });
    // Whatever the page adds, only the shell's confirmer counts: the tool is saved and waits.
    let info = invoke(&webview, "add_command_tool", json!({"config": config, "confirmed": true})).unwrap();
    assert_eq!(info["state"]["state"], "needsApproval", "{info}");
    assert_eq!(person.asked.lock().unwrap().len(), 1);
    assert!(person.asked.lock().unwrap()[0].contains("grep -n --"), "{:?}", person.asked.lock().unwrap());
    // The dialog names every key the program will receive.
    assert!(
        person.asked.lock().unwrap()[0].contains("Keys it receives from your key store: 'notes'."),
        "{:?}",
        person.asked.lock().unwrap()
    );
    let err = invoke(&webview, "approve_defined_tool", json!({"name": "grep_notes"})).unwrap_err();
    assert_eq!(err["kind"], "cancelled", "{err}");

    let edit = invoke(&webview, "defined_tool_config", json!({"name": "grep_notes"})).unwrap();
    assert_eq!(edit["kind"], "command");
    assert_eq!(edit["config"]["argv"][3], "{{pattern}}");
    let listed = invoke(&webview, "defined_tools", json!({})).unwrap();
    assert_eq!(listed["tools"][0]["name"], "grep_notes");

    let (_app, webview, person, _dir) = app_with_config_dir(true);
    let info = invoke(&webview, "add_command_tool", json!({"config": config})).unwrap();
    assert_eq!(info["state"]["state"], "ready", "{info}");
    assert_eq!(person.asked.lock().unwrap().len(), 1);
    let left = invoke(&webview, "remove_defined_tool", json!({"name": "grep_notes"})).unwrap();
    assert_eq!(left["tools"], json!([]));
}

#[test]
fn an_http_tool_with_a_key_is_asked_about_and_a_bad_one_is_a_config_error() {
    let (_app, webview, person, _dir) = app_with_config_dir(false);
    let bad = json!({"name": "w", "description": "Weather", "method": "GET", "url": "https://{{host}}/v1"});
    let err = invoke(&webview, "add_http_tool", json!({"config": bad})).unwrap_err();
    assert_eq!(err["kind"], "config", "{err}");
    assert!(person.asked.lock().unwrap().is_empty());

    let keyed = json!({"name": "weather", "description": "Weather", "method": "GET", "url": "https://api.example.com/v1/{{city}}",
        "headers": {"X-Api-Key": "{{secret:weather}}"}});
    let info = invoke(&webview, "add_http_tool", json!({"config": keyed})).unwrap();
    assert_eq!(info["state"]["state"], "needsApproval", "{info}");
    assert_eq!(info["keys"], json!(["weather"]));
    assert!(person.asked.lock().unwrap()[0].contains("https://api.example.com"));

    // Trying it is the person's own act: the request is built (here it fails before any network,
    // as the argument is missing) and reported, not thrown.
    let tried = invoke(&webview, "try_http_tool", json!({"name": "weather", "args": {}})).unwrap();
    assert!(tried["error"].is_string(), "{tried}");
    assert!(tried["ok"].is_null());
    let err = invoke(&webview, "try_http_tool", json!({"name": "weather", "args": [1]})).unwrap_err();
    assert!(err.to_string().contains("invalid args `args`"), "{err}");
}

#[test]
fn an_openapi_document_is_previewed_then_imported_and_its_key_waits_for_the_person() {
    let (_app, webview, person, dir) = app_with_config_dir(false);
    let doc = json!({
        "openapi": "3.0.0",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": "https://pets.example.com/v1"}],
        "components": {"securitySchemes": {"api_key": {"type": "apiKey", "in": "header", "name": "X-Api-Key"}}},
        "security": [{"api_key": []}],
        "paths": {
            "/pets": {"get": {"operationId": "listPets", "summary": "List pets", "responses": {"200": {"description": "ok"}}}},
            "/pets/{petId}": {"get": {"operationId": "showPet", "summary": "One pet",
                "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}}}}
        }
    });
    let path = dir.path().join("pets.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    // The person chooses the file in the native dialog: the page gets its name and a pick, never its path.
    *person.chooses.lock().unwrap() = vec![path.clone()];
    let choose = json!({"name": "pets", "source": {"kind": "chooseFile"}, "server": null, "keys": {}, "include": null, "allowLocalAddresses": false});

    let answer = invoke(&webview, "preview_openapi", json!({"request": choose})).unwrap();
    assert_eq!(answer["file"]["name"], "pets.json", "{answer}");
    assert!(!answer.to_string().contains(dir.path().to_str().unwrap()), "the page never sees the path: {answer}");
    let pick = answer["file"]["pick"].clone();
    let request = json!({"name": "pets", "source": {"kind": "picked", "pick": pick}, "server": null, "keys": {}, "include": null, "allowLocalAddresses": false});
    // Read again by its pick: the same file, nothing asked.
    assert_eq!(invoke(&webview, "preview_openapi", json!({"request": request})).unwrap(), answer);
    let preview = &answer["preview"];
    assert_eq!(preview["title"], "Pets", "{preview}");
    let routes: Vec<&str> =
        preview["operations"].as_array().unwrap().iter().map(|o| o["route"].as_str().unwrap()).collect();
    assert_eq!(routes.len(), 2, "{preview}");
    assert!(routes.contains(&"GET /pets") && routes.contains(&"GET /pets/{petId}"), "{routes:?}");
    assert_eq!(preview["schemes"][0]["name"], "api_key", "{preview}");
    assert_eq!(preview["schemes"][0]["supported"], true, "{preview}");
    assert!(person.asked.lock().unwrap().is_empty(), "a preview asks nothing");

    // The person says no in the native dialog: the document is kept, its key-sending tools wait.
    let imported = invoke(&webview, "import_openapi", json!({"request": request})).unwrap();
    assert_eq!(imported["document"]["kind"], "openApi", "{imported}");
    assert_eq!(imported["document"]["state"]["state"], "needsApproval", "{imported}");
    assert_eq!(person.asked.lock().unwrap().len(), 1);
    let listed = invoke(&webview, "defined_tools", json!({})).unwrap();
    let entry = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "pets").cloned().unwrap_or_default();
    assert_eq!((&entry["kind"], &entry["state"]["state"]), (&json!("openApi"), &json!("needsApproval")), "{listed}");
}

#[test]
fn the_page_cannot_have_a_local_file_read_as_an_openapi_document_unless_the_person_picks_it_natively() {
    let (_app, webview, person, dir) = app_with_config_dir(false);
    let path = dir.path().join("private.json");
    let doc = json!({"openapi": "3.0.0", "info": {"title": "Private", "version": "1"}, "paths": {}});
    std::fs::write(&path, doc.to_string()).unwrap();
    let path = path.to_str().unwrap().to_owned();
    let request = |source: Value| json!({"request": {"name": "private", "source": source, "keys": {}}});
    for command in ["preview_openapi", "import_openapi"] {
        // A path as the source is not a request the window can send.
        let err = invoke(&webview, command, request(json!(path))).unwrap_err();
        assert!(err.to_string().contains("invalid args `request`"), "{command}: {err}");
        // Nor is a path, or a file: URL, where a URL goes: refused, typed, and nothing read.
        for url in [path.clone(), format!("file://{path}"), format!(" {path}")] {
            let err = invoke(&webview, command, request(json!({"kind": "url", "url": url}))).unwrap_err();
            assert_eq!(err["kind"], "config", "{command} {url}: {err}");
            assert!(err["message"].as_str().unwrap().contains("Choose file"), "{err}");
        }
        // A pick the person never made (or a path in its place) is refused, not read.
        for pick in [json!("pick-1"), json!(path)] {
            let err = invoke(&webview, command, request(json!({"kind": "picked", "pick": pick}))).unwrap_err();
            assert_eq!(err["kind"], "config", "{command}: {err}");
            assert!(!err.to_string().contains("Private"), "{err}");
        }
        // The person cancels the native file dialog: nothing is read.
        let err = invoke(&webview, command, request(json!({"kind": "chooseFile"}))).unwrap_err();
        assert_eq!(err["kind"], "cancelled", "{command}: {err}");
    }
    assert!(person.asked.lock().unwrap().is_empty());
    let listed = invoke(&webview, "defined_tools", json!({})).unwrap();
    assert_eq!(listed["tools"], json!([]), "{listed}");
}

#[test]
fn agents_and_toolsets_are_saved_listed_copied_and_removed_from_the_page() {
    let (_app, webview, _person, _dir) = app_with_config_dir(false);
    let listed =
        invoke(&webview, "put_toolset", json!({"toolset": {"name": "clock", "tools": ["get_time", "gone_tool"]}}))
            .unwrap();
    assert_eq!(listed["toolsets"][0]["tools"], json!(["get_time"]));
    assert!(
        listed["toolsets"][0]["missing"][0].as_str().unwrap().contains("'gone_tool' names nothing now"),
        "{listed}"
    );

    let agent = json!({"name": "Timer", "instructions": "Tell the time.", "toolsets": ["clock"], "maxIterations": 3});
    let listed = invoke(&webview, "put_agent", json!({"agent": agent})).unwrap();
    assert_eq!(listed["agents"][0]["toolName"], "agent__Timer");
    assert_eq!(listed["agents"][0]["config"]["maxIterations"], 3);
    let err = invoke(&webview, "put_agent", json!({"agent": {"name": "bad name"}})).unwrap_err();
    assert_eq!(err["kind"], "config", "{err}");
    let listed = invoke(&webview, "duplicate_agent", json!({"name": "Timer", "newName": "Timer2"})).unwrap();
    assert_eq!(listed["agents"][1]["config"]["instructions"], "Tell the time.");
    let err = invoke(&webview, "remove_toolset", json!({"name": "clock"})).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("take it out of the agent first"), "{err}");
    invoke(&webview, "remove_agent", json!({"name": "Timer"})).unwrap();
    invoke(&webview, "remove_agent", json!({"name": "Timer2"})).unwrap();
    let listed = invoke(&webview, "remove_toolset", json!({"name": "clock"})).unwrap();
    assert_eq!(listed, invoke(&webview, "agents", json!({})).unwrap());
    assert_eq!(listed["agents"], json!([]));
}

#[test]
fn exports_are_saved_where_the_person_chooses_and_imports_read_only_the_file_they_picked() {
    let (_app, webview, person, dir) = app_with_config_dir(true);
    let import = dir.path().join("conversations.json");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../crates/service/tests/fixtures/chatgpt_conversations.json"),
        &import,
    )
    .unwrap();
    // The page never names the file: a pick it did not get from the dialog is refused.
    let err = invoke(&webview, "import_conversations", json!({"pick": "pick-1"})).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("no longer known"), "{err}");
    *person.chooses.lock().unwrap() = vec![import.clone()];
    let preview = invoke(&webview, "preview_conversation_import", json!({})).unwrap();
    assert_eq!(preview["file"]["name"], "conversations.json");
    assert_eq!(preview["preview"]["summary"], "ChatGPT export: 3 conversations");
    assert_eq!(invoke(&webview, "list_conversations", json!({})).unwrap(), json!([]), "a preview writes nothing");
    let report = invoke(&webview, "import_conversations", json!({"pick": preview["file"]["pick"]})).unwrap();
    assert_eq!(report["imported"].as_array().unwrap().len(), 3, "{report}");
    let again = invoke(&webview, "import_conversations", json!({"pick": preview["file"]["pick"]})).unwrap();
    assert_eq!(again["summary"], "Nothing imported: already imported: 3 conversations skipped.");

    let list = invoke(&webview, "list_conversations", json!({})).unwrap();
    let id = list[0]["id"].as_str().unwrap().to_owned();
    let target = dir.path().join("chosen.md");
    *person.chooses.lock().unwrap() = vec![target.clone()];
    let saved = invoke(&webview, "export_conversation", json!({"id": id, "format": "markdown"})).unwrap();
    assert_eq!(saved, target.display().to_string());
    assert!(std::fs::read_to_string(&target).unwrap().starts_with("# "));
    // A folder that cannot be written: a clear message, nothing written.
    let nowhere = dir.path().join("missing-folder").join("all.json");
    *person.chooses.lock().unwrap() = vec![nowhere.clone()];
    let err = invoke(&webview, "export_all", json!({})).unwrap_err();
    assert!(err["message"].as_str().unwrap().contains("Choose a folder you can write to"), "{err}");
    assert!(!nowhere.exists());
}

/// Standard base64 with padding (as the page's `btoa`).
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            out.push(if i <= c.len() { char::from(ABC[(n >> (18 - 6 * i)) as usize & 63]) } else { '=' });
        }
    }
    out
}

/// A 2×2 PNG.
const PNG_2X2: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a, 0x73, 0x00, 0x00, 0x00, 0x12, 0x49,
    0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x38, 0x61, 0x63, 0x63, 0x53, 0x71, 0x87, 0x01, 0x42, 0x01, 0x00, 0x26, 0x56,
    0x05, 0xa1, 0xda, 0x9a, 0xa0, 0x1c, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

#[test]
fn attachments_come_from_the_native_picker_or_the_pages_chunks_never_a_path() {
    let (_app, webview, person, dir) = app_with_config_dir(true);
    let png = dir.path().join("shot.png");
    std::fs::write(&png, PNG_2X2).unwrap();
    let svg = dir.path().join("logo.svg");
    std::fs::write(&svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>").unwrap();
    // A cancelled dialog attaches nothing and is no error.
    let none = invoke(&webview, "attach_pick", json!({})).unwrap();
    assert_eq!(none, json!({"attached": [], "refused": []}));
    *person.chooses.lock().unwrap() = vec![png.clone(), svg.clone()];
    let picked = invoke(&webview, "attach_pick", json!({})).unwrap();
    assert_eq!(picked["attached"][0]["name"], "shot.png", "{picked}");
    assert_eq!(picked["attached"][0]["kind"], "image");
    assert_eq!(picked["refused"][0]["name"], "logo.svg", "{picked}");
    assert!(picked["refused"][0]["message"].as_str().unwrap().contains("SVG"), "{picked}");
    assert!(!picked.to_string().contains(&dir.path().display().to_string()), "a path reached the page: {picked}");

    // What the person pasted: in chunks, then the same attachment (by its bytes).
    let (head, tail) = PNG_2X2.split_at(40);
    let id = invoke(&webview, "upload_begin", json!({"name": "pasted.png", "size": PNG_2X2.len()})).unwrap();
    for chunk in [head, tail] {
        let data = base64(chunk);
        invoke(&webview, "upload_chunk", json!({"id": id, "data": data})).unwrap();
    }
    let pasted = invoke(&webview, "upload_finish", json!({"id": id})).unwrap();
    assert_eq!(pasted["id"], picked["attached"][0]["id"]);
    assert_eq!((pasted["width"].clone(), pasted["height"].clone()), (json!(2), json!(2)));
    let thumb = invoke(&webview, "attachment_thumbnail", json!({"id": pasted["id"]})).unwrap();
    assert!(thumb.as_str().unwrap().starts_with("data:image/"), "{thumb}");
    let preview = invoke(&webview, "attachment_preview", json!({"id": pasted["id"]})).unwrap();
    assert!(preview["image"].as_str().unwrap().starts_with("data:image/"), "{preview}");
    // A finished upload is gone; a cancelled one too.
    assert!(invoke(&webview, "upload_chunk", json!({"id": id, "data": "AA=="})).is_err());
    let other = invoke(&webview, "upload_begin", json!({"name": "x.txt", "size": 3})).unwrap();
    invoke(&webview, "upload_cancel", json!({"id": other})).unwrap();
    assert!(invoke(&webview, "upload_finish", json!({"id": other})).is_err());
}
