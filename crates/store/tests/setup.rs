//! A chat's setup and its grants: kept across reopening the database, checked before storing,
//! revoked for good.

use switchboard_core::GenerationOptions;
use switchboard_store::{ChatGrant, ChatSetup, DB_FILE, Error, Store};

#[test]
fn a_chat_setup_survives_reopening_and_a_bad_one_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let store = Store::open(&path).unwrap();
    let id = store.begin_turn(None, "hi", "p", "m").unwrap().conversation_id;
    assert_eq!(store.chat_setup(&id).unwrap(), ChatSetup::default(), "nothing stored: the empty setup");
    let generation = GenerationOptions { temperature: Some(0.3), ..GenerationOptions::default() };
    let set = store
        .update_chat_setup(&id, |s| {
            s.toolsets = vec!["research".into()];
            s.generation = Some(generation);
            s.provider = Some("p".into());
            s.model = Some("m2".into());
        })
        .unwrap();
    let bad = store.update_chat_setup(&id, |s| s.toolsets.push("research".into())).unwrap_err();
    assert!(matches!(bad, Error::Invalid(ref m) if m.contains("twice")), "{bad}");
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.chat_setup(&id).unwrap(), set);
    assert_eq!(set.toolsets, ["research"]);
    // Parameters that set nothing are none.
    let cleared = store.update_chat_setup(&id, |s| s.generation = Some(GenerationOptions::default())).unwrap();
    assert_eq!(cleared.generation, None);
    assert!(matches!(store.chat_setup("nope"), Err(Error::NotFound { .. })));
    assert!(matches!(store.update_chat_setup("nope", |_| {}), Err(Error::NotFound { .. })));
}

#[test]
fn grants_are_listed_by_kind_and_a_revoked_one_is_gone() {
    let store = Store::open_in_memory().unwrap();
    let id = store.begin_turn(None, "hi", "p", "m").unwrap().conversation_id;
    store.approve_tool_for_chat(&id, "shell").unwrap();
    store.approve_tool_for_chat(&id, "egress:example.net").unwrap();
    store.approve_tool_for_chat(&id, "write_file").unwrap();
    assert_eq!(
        store.chat_grants(&id).unwrap(),
        [ChatGrant::Tool("shell".into()), ChatGrant::Tool("write_file".into()), ChatGrant::Host("example.net".into())]
    );
    assert!(store.revoke_chat_grant(&id, &ChatGrant::Tool("shell".into())).unwrap());
    assert!(store.revoke_chat_grant(&id, &ChatGrant::Host("example.net".into())).unwrap());
    assert!(!store.revoke_chat_grant(&id, &ChatGrant::Tool("shell".into())).unwrap(), "already gone");
    assert_eq!(store.approved_tools(&id).unwrap().into_iter().collect::<Vec<_>>(), ["write_file"]);
    assert!(matches!(store.chat_grants("nope"), Err(Error::NotFound { .. })));
}
