//! The tools file (`tools.json`): what it offers, what waits for the person, and what is wrong
//! with a definition, each tool on its own so one bad entry never hides the others.

use std::sync::Arc;
use switchboard_core::ErrorKind;
use switchboard_service::defined_tools::{DefinedState, TOOLS_FILE};
use switchboard_service::{AlreadyConfirmed, Refuse, Service};
use switchboard_store::Store;
use switchboard_tools::{CommandToolConfig, HttpToolConfig};

/// A service whose config directory is a fresh temporary folder.
fn service() -> (tempfile::TempDir, Service) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let service = Service::new(store, Arc::new(switchboard_secrets::MemoryStore::new())).unwrap();
    (dir, service)
}

fn offered(service: &Service) -> Vec<String> {
    service.tools(None).unwrap().into_iter().map(|t| t.name).collect()
}

fn http(name: &str, url: &str) -> HttpToolConfig {
    HttpToolConfig::new(name, "An API.", url)
}

#[test]
fn a_keyless_http_tool_is_offered_at_once_and_one_with_a_key_only_once_allowed() {
    let (_dir, service) = service();
    let info = service.add_http_tool(http("status", "https://status.example.com/v1/{{component}}"), &Refuse).unwrap();
    assert_eq!(info.state, DefinedState::Ready);
    assert!(offered(&service).contains(&"status".to_owned()));

    let mut keyed = http("issues", "https://api.example.com/issues");
    keyed.headers.insert("Authorization".into(), "Bearer {{secret:tracker}}".into());
    let info = service.add_http_tool(keyed.clone(), &Refuse).unwrap();
    assert!(
        matches!(&info.state, DefinedState::NeedsApproval { reason } if reason.contains("https://api.example.com"))
    );
    assert!(!offered(&service).contains(&"issues".to_owned()));
    assert_eq!(service.approve_defined_tool("issues", &Refuse).unwrap_err().kind, ErrorKind::Cancelled);
    assert_eq!(service.approve_defined_tool("issues", &AlreadyConfirmed).unwrap().state, DefinedState::Ready);
    assert!(offered(&service).contains(&"issues".to_owned()));

    // Pointing the key somewhere else needs the person again.
    keyed.url = "https://elsewhere.example.net/issues".into();
    let info = service.add_http_tool(keyed, &Refuse).unwrap();
    assert!(matches!(info.state, DefinedState::NeedsApproval { .. }));
    assert!(!offered(&service).contains(&"issues".to_owned()));
}

#[test]
fn a_command_tool_always_needs_the_person_and_turning_asking_off_needs_them_again() {
    let (_dir, service) = service();
    let config =
        CommandToolConfig::new("say", "Prints its text.", vec!["printf".into(), "%s".into(), "{{text}}".into()]);
    assert!(matches!(
        service.add_command_tool(config.clone(), &Refuse).unwrap().state,
        DefinedState::NeedsApproval { .. }
    ));
    let info = service.approve_defined_tool("say", &AlreadyConfirmed).unwrap();
    assert!(info.state == DefinedState::Ready && info.asks_first);
    let tools = service.tools(None).unwrap();
    let say = tools.iter().find(|t| t.name == "say").expect("offered");
    assert_eq!(say.approval, switchboard_core::ApprovalPolicy::Ask);

    let mut silent = config;
    silent.approval = Some(switchboard_core::ApprovalPolicy::Auto);
    let info = service.add_command_tool(silent, &Refuse).unwrap();
    assert!(
        matches!(&info.state, DefinedState::NeedsApproval { reason } if reason.contains("WITHOUT asking")),
        "{info:?}"
    );
    assert!(!offered(&service).contains(&"say".to_owned()));
}

#[test]
fn bad_definitions_are_refused_when_added_and_listed_when_written_by_hand() {
    let (dir, service) = service();
    let e = service.add_http_tool(http("t", "https://api.example.com/{{city}}?q={{query}}").clone(), &Refuse);
    assert!(e.is_ok(), "every placeholder is a generated parameter");
    let mut undefined = http("u", "https://api.example.com/{{city}}");
    undefined.parameters =
        Some(serde_json::json!({ "type": "object", "properties": { "town": { "type": "string" } } }));
    let e = service.add_http_tool(undefined, &Refuse).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("{{city}}"), "{}", e.message);
    let e = service.add_http_tool(http("get_time", "https://api.example.com/x"), &Refuse).unwrap_err();
    assert!(e.message.contains("already exists"), "a built-in's name: {}", e.message);

    // Written by hand: one bad entry, one duplicate, one good one; the good one is offered.
    let file = serde_json::json!({
        "httpTools": [
            { "name": "good", "description": "Works.", "url": "https://api.example.com/ok" },
            { "name": "hostile", "description": "No.", "url": "https://{{host}}/x" },
            { "name": "good", "description": "Twice.", "url": "https://api.example.com/again" }
        ]
    });
    std::fs::write(dir.path().join(TOOLS_FILE), file.to_string()).unwrap();
    let overview = service.defined_tools().unwrap();
    let state = |name: &str, i: usize| overview.tools.iter().filter(|t| t.name == name).nth(i).unwrap().state.clone();
    assert_eq!(state("good", 0), DefinedState::Ready);
    assert!(matches!(state("hostile", 0), DefinedState::Invalid { reason } if reason.contains("host")));
    assert!(matches!(state("good", 1), DefinedState::Invalid { reason } if reason.contains("also named 'good'")));
    assert!(offered(&service).contains(&"good".to_owned()));

    // A file that is not JSON: said once, and the last good tools stay.
    std::fs::write(dir.path().join(TOOLS_FILE), "{ not json").unwrap();
    let overview = service.defined_tools().unwrap();
    assert!(overview.problem.as_deref().is_some_and(|p| p.contains("is not a valid tools file")), "{overview:?}");
    assert!(offered(&service).contains(&"good".to_owned()));
}

#[test]
fn importing_a_tools_file_adds_its_tools_and_asks_once_for_what_needs_the_person() {
    let (dir, service) = service();
    service.add_http_tool(http("status", "https://status.example.com/v1/{{component}}"), &Refuse).unwrap();
    let mut keyed = http("issues", "https://api.example.com/issues");
    keyed.headers.insert("Authorization".into(), "Bearer {{secret:tracker}}".into());
    let mut updated = http("status", "https://status.example.com/v2/{{component}}");
    updated.description = "The newer status API.".into();
    let command =
        CommandToolConfig::new("say", "Prints its text.", vec!["printf".into(), "%s".into(), "{{text}}".into()]);
    let shared = serde_json::json!({ "httpTools": [keyed, updated], "commandTools": [command] });
    let path = dir.path().join("shared-tools.json");
    std::fs::write(&path, serde_json::to_string_pretty(&shared).unwrap()).unwrap();

    // Refused: the keyless tool is offered (and replaced the old one), the others wait.
    let added = service.import_defined_tools(&path, &Refuse).unwrap();
    let state = |name: &str| added.iter().find(|t| t.name == name).map(|t| t.state.clone());
    assert_eq!(added.len(), 3);
    assert_eq!(state("status"), Some(DefinedState::Ready));
    assert!(matches!(state("issues"), Some(DefinedState::NeedsApproval { .. })));
    assert!(matches!(state("say"), Some(DefinedState::NeedsApproval { .. })));
    let overview = service.defined_tools().unwrap();
    assert_eq!(overview.tools.iter().filter(|t| t.name == "status").count(), 1);
    assert!(overview.tools.iter().any(|t| t.name == "status" && t.target.contains("/v2/")));
    let now = offered(&service);
    assert!(
        now.contains(&"status".to_owned()) && !now.contains(&"issues".to_owned()) && !now.contains(&"say".to_owned())
    );

    // Allowed: every tool of the file is offered.
    let added = service.import_defined_tools(&path, &AlreadyConfirmed).unwrap();
    assert!(added.iter().all(|t| t.state == DefinedState::Ready), "{added:?}");
    let now = offered(&service);
    assert!(["status", "issues", "say"].iter().all(|n| now.contains(&(*n).to_owned())), "{now:?}");

    // A file that is not a tools file changes nothing and says which file.
    std::fs::write(&path, r#"{"httpTools": [{"name": "x"}]}"#).unwrap();
    let e = service.import_defined_tools(&path, &AlreadyConfirmed).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.message.contains("shared-tools.json"), "{}", e.message);
    assert_eq!(service.defined_tools().unwrap().tools.len(), 3);
}
