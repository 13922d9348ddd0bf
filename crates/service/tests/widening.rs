//! Changes that widen what the app may do take effect only with a confirmation the caller got
//! outside the webview: a stored key sent to another origin, a tool's approval loosened, local
//! addresses allowed for `web_fetch`. Everything else saves as before.

use std::sync::{Arc, Mutex};
use switchboard_core::{ApprovalPolicy, ErrorKind};
use switchboard_service::ipc::ProviderProfile;
use switchboard_service::{AlreadyConfirmed, Confirm, Service, Widening};
use switchboard_store::Store;

const KEY: &str = "sk-test-widening-0123456789abcd";

/// Says `answer` and keeps what it was asked.
#[derive(Default)]
struct Recording {
    answer: bool,
    asked: Mutex<Vec<Vec<Widening>>>,
}

impl Recording {
    fn saying(answer: bool) -> Self {
        Recording { answer, asked: Mutex::default() }
    }
    fn asked(&self) -> Vec<Vec<Widening>> {
        self.asked.lock().unwrap().clone()
    }
}

impl Confirm for Recording {
    fn confirm(&self, changes: &[Widening]) -> bool {
        self.asked.lock().unwrap().push(changes.to_vec());
        self.answer
    }
}

fn profile(name: &str, base_url: &str) -> ProviderProfile {
    ProviderProfile {
        name: name.into(),
        kind: "openai".into(),
        base_url: base_url.into(),
        model: Some("m".into()),
        options: Default::default(),
    }
}

fn base_url(service: &Service, name: &str) -> String {
    service.providers().unwrap().into_iter().find(|p| p.name == name).unwrap().base_url
}

/// A service with profile `p` at `https://api.example.com/v1` and its key stored.
fn with_key() -> Service {
    let service = Service::in_memory().unwrap();
    service.add_provider(&profile("p", "https://api.example.com/v1"), true).unwrap();
    service.set_key("p", KEY).unwrap();
    service
}

#[test]
fn moving_a_profile_with_a_stored_key_to_another_host_is_refused_without_confirmation() {
    let service = with_key();
    let no = Recording::saying(false);
    let err = service.add_provider_confirmed(&profile("p", "https://evil.example/v1"), false, &no).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Cancelled);
    assert!(
        err.message.contains("Send the key of 'p' to https://evil.example instead of https://api.example.com?"),
        "{}",
        err.message
    );
    assert!(!err.message.contains(KEY));
    assert_eq!(base_url(&service, "p"), "https://api.example.com/v1", "nothing was saved");
    assert_eq!(
        no.asked(),
        [vec![Widening::KeyOrigin {
            profile: "p".into(),
            variable: None,
            from: "https://api.example.com".into(),
            to: "https://evil.example".into(),
        }]]
    );
    // Without any way to ask (the plain method), the same.
    assert!(service.add_provider(&profile("p", "https://evil.example/v1"), false).is_err());

    let yes = Recording::saying(true);
    service.add_provider_confirmed(&profile("p", "https://evil.example/v1"), false, &yes).unwrap();
    assert_eq!(base_url(&service, "p"), "https://evil.example/v1");
    // Confirmed once, the key belongs to the new origin: saving it again asks nothing.
    service.add_provider(&profile("p", "https://evil.example/v2"), false).unwrap();
}

#[test]
fn a_change_of_scheme_or_port_is_another_origin() {
    for url in ["http://api.example.com/v1", "https://api.example.com:8443/v1", "https://api.example.com.evil/v1"] {
        let service = with_key();
        let err = service.add_provider(&profile("p", url), false).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Cancelled, "{url}");
    }
}

#[test]
fn a_change_of_path_or_the_default_port_spelled_out_asks_nothing() {
    let service = with_key();
    let never = Recording::saying(false);
    for url in ["https://api.example.com/v2", "https://API.example.com:443/other/path"] {
        service.add_provider_confirmed(&profile("p", url), false, &never).unwrap();
    }
    assert!(never.asked().is_empty());
}

#[test]
fn without_a_key_a_profile_moves_freely_and_a_key_set_later_belongs_to_where_it_points() {
    let service = Service::in_memory().unwrap();
    service.add_provider(&profile("p", "https://api.example.com/v1"), true).unwrap();
    service.add_provider(&profile("p", "https://other.example/v1"), true).unwrap();
    service.set_key("p", KEY).unwrap();
    let err = service.add_provider(&profile("p", "https://api.example.com/v1"), false).unwrap_err();
    assert!(err.message.contains("instead of https://other.example?"), "{}", err.message);
}

#[test]
fn a_removed_profile_of_the_same_name_elsewhere_does_not_inherit_its_key_silently() {
    let service = with_key();
    // `switchboard providers remove` removes the profile only; the key stays.
    service.remove_provider("p").unwrap();
    let err = service.add_provider(&profile("p", "https://evil.example/v1"), true).unwrap_err();
    assert!(err.message.contains("instead of https://api.example.com?"), "{}", err.message);
    // Removing the key too (Settings' remove) forgets where it went.
    let service = with_key();
    service.remove_provider_and_key("p").unwrap();
    service.add_provider(&profile("p", "https://evil.example/v1"), true).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_key_is_not_sent_to_an_origin_it_was_not_saved_for() {
    use switchboard_mock_provider::{MockServer, Reply, Script};
    let mock = MockServer::start(Script::new([Reply::text("hi")])).await;
    let store = Store::open_in_memory().unwrap();
    let service = Service::new(store.clone(), Arc::new(switchboard_secrets::MemoryStore::new())).unwrap();
    service.add_provider(&profile("p", "https://api.example.com/v1"), true).unwrap();
    service.set_key("p", KEY).unwrap();
    // The profile changes behind the service's back (an older version, an edited database).
    store.upsert_provider(&profile("p", &mock.base_url())).unwrap();
    let err = service.prepare(switchboard_service::ipc::SendRequest::text(None, "hi")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Auth);
    assert!(err.message.contains("was saved for https://api.example.com"), "{}", err.message);
    assert!(service.models(None).await.is_err());
    assert!(mock.requests().is_empty(), "nothing was sent");
    // Saving the profile again, confirmed, moves the key; then it is used.
    service.add_provider_confirmed(&profile("p", &mock.base_url()), false, &AlreadyConfirmed).unwrap();
    service.prepare(switchboard_service::ipc::SendRequest::text(None, "hi")).unwrap();
}

#[test]
fn loosening_a_tools_approval_needs_confirmation_and_tightening_does_not() {
    let service = Service::in_memory().unwrap();
    let mut settings = service.settings().unwrap();
    settings.tools.approval.insert("get_time".into(), ApprovalPolicy::Deny);
    service.update_settings(&settings).unwrap();

    settings.tools.approval.insert("get_time".into(), ApprovalPolicy::Auto);
    let no = Recording::saying(false);
    let err = service.update_settings_confirmed(&settings, &no).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Cancelled);
    assert!(err.message.contains("'get_time'"), "{}", err.message);
    assert_eq!(service.settings().unwrap().tools.approval["get_time"], ApprovalPolicy::Deny);
    assert_eq!(
        no.asked(),
        [vec![Widening::ToolApproval {
            tool: "get_time".into(),
            from: ApprovalPolicy::Deny,
            to: ApprovalPolicy::Auto
        }]]
    );
    service.update_settings_confirmed(&settings, &Recording::saying(true)).unwrap();
    assert_eq!(service.settings().unwrap().tools.approval["get_time"], ApprovalPolicy::Auto);

    // Through one setting, and by removing the override (the default runs without asking).
    service.set_setting("tools", serde_json::json!({"approval": {"get_time": "deny"}})).unwrap();
    assert!(service.set_setting("tools", serde_json::json!({"approval": {"get_time": "ask"}})).is_err());
    assert!(service.unset_setting("tools").is_err());
    assert_eq!(service.settings().unwrap().tools.approval["get_time"], ApprovalPolicy::Deny);
    service.unset_setting_confirmed("tools", &AlreadyConfirmed).unwrap();
}

#[test]
fn allowing_local_addresses_needs_confirmation_and_turning_it_off_does_not() {
    let service = Service::in_memory().unwrap();
    let mut settings = service.settings().unwrap();
    settings.web.allow_local_addresses = true;
    let err = service.update_settings(&settings).unwrap_err();
    assert!(err.message.contains("web_fetch reach addresses on this computer"), "{}", err.message);
    assert!(!service.settings().unwrap().web.allow_local_addresses);
    let err = service.set_setting("web", serde_json::json!({"allowLocalAddresses": true})).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Cancelled);

    service.update_settings_confirmed(&settings, &AlreadyConfirmed).unwrap();
    assert!(service.settings().unwrap().web.allow_local_addresses);
    // Narrowing again, and saving other settings meanwhile, ask nothing.
    settings.limits.max_iterations = Some(3);
    service.update_settings(&settings).unwrap();
    settings.web.allow_local_addresses = false;
    service.update_settings(&settings).unwrap();
    service.unset_setting("web").unwrap();
}

#[test]
fn exempting_a_tool_from_the_egress_question_needs_confirmation_and_ending_it_does_not() {
    let service = Service::in_memory().unwrap();
    let refuse = Recording::saying(false);
    let err = service.set_tool_egress_exempt("web_fetch", true, &refuse).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Cancelled);
    assert_eq!(refuse.asked(), [vec![Widening::EgressExempt { tool: "web_fetch".into() }]]);
    assert!(err.message.contains("Let the tool 'web_fetch' send data to sites and servers not used in a chat"));
    assert!(service.settings().unwrap().tools.egress_exempt.is_empty());
    // The whole-settings path (the app's Settings screen) asks the same.
    let mut settings = service.settings().unwrap();
    settings.tools.egress_exempt.insert("web_fetch".into());
    assert_eq!(service.update_settings(&settings).unwrap_err().kind, ErrorKind::Cancelled);

    let agree = Recording::saying(true);
    service.set_tool_egress_exempt("web_fetch", true, &agree).unwrap();
    assert!(service.settings().unwrap().engine_config().tool_settings.egress_exempt.contains("web_fetch"));
    let untouched = Recording::saying(false);
    service.set_tool_egress_exempt("web_fetch", false, &untouched).unwrap();
    assert!(untouched.asked().is_empty(), "narrowing asks nothing");
    assert!(service.settings().unwrap().tools.egress_exempt.is_empty());
}
