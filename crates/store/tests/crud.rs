//! Conversations, per-chat tool choices, settings and provider profiles.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashSet};
use std::time::Duration;
use switchboard_core::{ChatEvent, ErrorKind, EventSink, FinishReason, ToolSource, ToolStatus, Usage};
use switchboard_store::{DB_FILE, Error, ProviderProfile, Store};

fn new_chat(store: &Store, text: &str) -> String {
    store.begin_turn(None, text, "p", "m").unwrap().conversation_id
}

fn titles(list: &[switchboard_store::ConversationSummary]) -> Vec<&str> {
    list.iter().map(|c| c.title.as_str()).collect()
}

#[test]
fn deleting_a_conversation_cascades_to_messages_calls_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let store = Store::open(&path).unwrap();
    let keep = new_chat(&store, "keep");
    let rows = store.begin_turn(None, "drop", "p", "m").unwrap();
    let rec = store.recorder(&rows.message_id);
    rec.emit(ChatEvent::ToolCall {
        id: "c".into(),
        name: "get_time".into(),
        source: ToolSource::Builtin,
        arguments: "{}".into(),
        text_offset: 0,
        iteration: 1,
        index: 0,
    });
    rec.emit(ChatEvent::ToolResult {
        images: Default::default(),
        id: "c".into(),
        status: ToolStatus::Ok,
        output: "now".into(),
        duration_ms: 1,
    });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 1 });
    assert!(rec.take_error().is_none());

    store.delete(&rows.conversation_id).unwrap();

    let raw = rusqlite::Connection::open(&path).unwrap();
    let count =
        |table: &str| -> i64 { raw.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap() };
    assert_eq!(count("conversations"), 1);
    assert_eq!(count("messages"), 2, "only the kept conversation's two messages");
    assert_eq!(count("tool_calls"), 0);
    assert_eq!(count("tool_results"), 0);
    assert!(matches!(store.messages(&rows.conversation_id), Err(Error::NotFound { what: "conversation", .. })));
    assert_eq!(store.conversations().unwrap().len(), 1);
    assert_eq!(store.conversations().unwrap()[0].id, keep);

    let err = store.delete(&rows.conversation_id).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config);
}

#[test]
fn search_matches_title_or_content_literally_and_case_insensitively() {
    let store = Store::open_in_memory().unwrap();
    let pct = new_chat(&store, "100% sure");
    let _plain = new_chat(&store, "100 percent sure");
    let under = new_chat(&store, "snake_case names");
    let _lookalike = new_chat(&store, "snakeXcase names");
    let body = new_chat(&store, "unrelated title");
    store.begin_turn(Some(&body), "find the Needle here", "p", "m").unwrap();

    let ids = |q: &str| -> Vec<String> { store.search(q).unwrap().into_iter().map(|c| c.id).collect() };
    assert_eq!(ids("100%"), vec![pct.clone()], "% is literal");
    assert_eq!(ids("e_c"), vec![under.clone()], "_ is literal");
    assert_eq!(ids("SURE").len(), 2, "ASCII case folded");
    assert_eq!(ids("needle"), vec![body], "message content is searched");
    assert!(ids("nothing like this").is_empty());
    assert!(ids(r"\").is_empty(), "the escape character itself is literal");
}

#[test]
fn conversations_list_newest_updated_first_with_counts_and_rename_keeps_order() {
    let store = Store::open_in_memory().unwrap();
    let a = new_chat(&store, "A\nmore lines");
    std::thread::sleep(Duration::from_millis(3));
    let b = new_chat(&store, "B");
    assert_eq!(titles(&store.conversations().unwrap()), ["B", "A"]);
    std::thread::sleep(Duration::from_millis(3));
    store.begin_turn(Some(&a), "again", "p", "m").unwrap();
    let list = store.conversations().unwrap();
    assert_eq!(titles(&list), ["A", "B"]);
    assert_eq!(list[0].message_count, 4);
    assert!(list[0].updated_at > list[0].created_at);

    store.rename(&b, "Renamed B").unwrap();
    assert_eq!(store.conversation(&b).unwrap().title, "Renamed B");
    assert_eq!(titles(&store.conversations().unwrap()), ["A", "Renamed B"]);
    let err = store.rename("missing", "x").unwrap_err();
    assert_eq!(err.to_string(), "conversation 'missing' not found");
}

#[test]
fn begin_turn_on_an_unknown_conversation_creates_nothing() {
    let store = Store::open_in_memory().unwrap();
    let err = store.begin_turn(Some("nope"), "hi", "p", "m").unwrap_err();
    assert!(matches!(err, Error::NotFound { what: "conversation", ref id } if id == "nope"));
    assert!(store.conversations().unwrap().is_empty());
}

#[test]
fn long_first_lines_make_short_titles() {
    let store = Store::open_in_memory().unwrap();
    let id = new_chat(&store, &format!("  {}  \nsecond line", "日本語".repeat(30)));
    let title = store.conversation(&id).unwrap().title;
    assert_eq!(title.chars().count(), 60);
    assert!(title.ends_with('…') && title.starts_with("日本語"));
}

#[test]
fn disabled_and_approved_tools_round_trip() {
    let store = Store::open_in_memory().unwrap();
    let id = new_chat(&store, "x");
    assert!(store.disabled_tools(&id).unwrap().is_empty());
    let set: BTreeSet<String> = ["web_fetch".to_owned(), "shell__run".to_owned()].into();
    store.set_disabled_tools(&id, &set).unwrap();
    assert_eq!(store.disabled_tools(&id).unwrap(), set);
    store.set_disabled_tools(&id, &BTreeSet::new()).unwrap();
    assert!(store.disabled_tools(&id).unwrap().is_empty());

    store.approve_tool_for_chat(&id, "shell__run").unwrap();
    store.approve_tool_for_chat(&id, "shell__run").unwrap();
    store.approve_tool_for_chat(&id, "http_post").unwrap();
    let expected: HashSet<String> = ["shell__run".to_owned(), "http_post".to_owned()].into();
    assert_eq!(store.approved_tools(&id).unwrap(), expected);

    let other = new_chat(&store, "y");
    assert!(store.approved_tools(&other).unwrap().is_empty(), "approval is per chat");
    assert!(matches!(store.disabled_tools("nope"), Err(Error::NotFound { .. })));
    assert!(matches!(store.set_disabled_tools("nope", &set), Err(Error::NotFound { .. })));
    assert!(matches!(store.approve_tool_for_chat("nope", "t"), Err(Error::NotFound { .. })));
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Appearance {
    theme: String,
    font_size: u32,
}

#[test]
fn settings_round_trip_as_json() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.setting::<Appearance>("appearance").unwrap(), None);
    let v = Appearance { theme: "dark".into(), font_size: 14 };
    store.set_setting("appearance", &v).unwrap();
    assert_eq!(store.setting::<Appearance>("appearance").unwrap(), Some(v));
    store.set_setting("appearance", &Appearance { theme: "light".into(), font_size: 12 }).unwrap();
    assert_eq!(store.setting::<Appearance>("appearance").unwrap().unwrap().theme, "light");
    store.set_setting("max_iterations", &7u32).unwrap();
    assert_eq!(store.setting::<u32>("max_iterations").unwrap(), Some(7));

    let err = store.setting::<u32>("appearance").unwrap_err();
    assert!(matches!(err, Error::Json { .. }), "{err:?}");
    assert!(err.to_string().contains("setting 'appearance'"), "{err}");

    assert!(store.delete_setting("max_iterations").unwrap());
    assert!(!store.delete_setting("max_iterations").unwrap());
    assert_eq!(store.setting::<u32>("max_iterations").unwrap(), None);
}

#[test]
fn provider_profiles_round_trip_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let store = Store::open(&path).unwrap();
    let openai = ProviderProfile {
        name: "openai".into(),
        kind: "openaiChat".into(),
        base_url: "https://api.openai.com/v1".into(),
        model: Some("gpt-4.1".into()),
        options: Default::default(),
    };
    let local = ProviderProfile {
        name: "local".into(),
        kind: "openaiChat".into(),
        base_url: "http://127.0.0.1:8080/v1".into(),
        model: None,
        options: Default::default(),
    };
    store.upsert_provider(&openai).unwrap();
    store.upsert_provider(&local).unwrap();
    assert_eq!(store.providers().unwrap(), vec![local.clone(), openai.clone()]);

    let changed = ProviderProfile { model: Some("gpt-5".into()), ..openai.clone() };
    store.upsert_provider(&changed).unwrap();
    assert_eq!(store.provider("openai").unwrap(), Some(changed));
    assert_eq!(store.provider("missing").unwrap(), None);

    store.delete_provider("local").unwrap();
    assert_eq!(store.providers().unwrap().len(), 1);
    assert!(matches!(store.delete_provider("local"), Err(Error::NotFound { what: "provider", .. })));

    let raw = rusqlite::Connection::open(&path).unwrap();
    let cols: Vec<String> = raw
        .prepare("SELECT name FROM pragma_table_info('providers')")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(!cols.iter().any(|c| c.contains("key") || c.contains("secret")), "{cols:?}");
}

#[test]
fn provider_response_ids_are_stored_on_the_message() {
    let store = Store::open_in_memory().unwrap();
    let rows = store.begin_turn(None, "q", "p", "m").unwrap();
    store.set_provider_response_id(&rows.message_id, "resp_123").unwrap();
    let msgs = store.messages(&rows.conversation_id).unwrap();
    assert_eq!(msgs[1].provider_response_id.as_deref(), Some("resp_123"));
    assert!(matches!(store.set_provider_response_id("nope", "r"), Err(Error::NotFound { what: "message", .. })));
}

#[test]
fn a_conversation_reads_back_a_page_at_a_time_newest_first_with_its_tool_calls() {
    let store = Store::open_in_memory().unwrap();
    let other = new_chat(&store, "another chat");
    let mut conversation = None;
    for turn in 0..5u32 {
        let rows = store.begin_turn(conversation.as_deref(), &format!("question {turn}"), "p", "m").unwrap();
        conversation = Some(rows.conversation_id.clone());
        let rec = store.recorder(&rows.message_id);
        rec.emit(ChatEvent::TextDelta { text: format!("answer {turn} ") });
        rec.emit(ChatEvent::ToolCall {
            id: format!("call-{turn}"),
            name: "get_time".into(),
            source: ToolSource::Builtin,
            arguments: "{}".into(),
            text_offset: 9,
            iteration: 1,
            index: 0,
        });
        rec.emit(ChatEvent::ToolResult {
            images: Default::default(),
            id: format!("call-{turn}"),
            status: ToolStatus::Ok,
            output: "now".into(),
            duration_ms: 1,
        });
        rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 1 });
        assert!(rec.take_error().is_none());
    }
    let id = conversation.unwrap();
    let all = store.messages(&id).unwrap();
    assert_eq!(all.len(), 10);

    // Newest page first, then the pages before it, each oldest first, until nothing is earlier.
    let last = store.messages_page(&id, None, 4).unwrap();
    assert_eq!(last.earlier, 6);
    assert_eq!(last.messages, all[6..]);
    let middle = store.messages_page(&id, Some(&last.messages[0].id), 4).unwrap();
    assert_eq!(middle.earlier, 2);
    assert_eq!(middle.messages, all[2..6]);
    let first = store.messages_page(&id, Some(&middle.messages[0].id), 4).unwrap();
    assert_eq!(first.earlier, 0);
    assert_eq!(first.messages, all[..2]);
    // Each answer keeps its own call, and only its own.
    for m in all.iter().filter(|m| m.role == switchboard_store::Role::Assistant) {
        assert_eq!(m.tool_calls.len(), 1, "{}", m.content);
        let turn = m.content.trim().trim_start_matches("answer ");
        assert_eq!(m.tool_calls[0].call_id, format!("call-{turn}"));
    }

    let none = store.messages_page(&id, Some(&all[0].id), 4).unwrap();
    assert!(none.messages.is_empty());
    assert_eq!(none.earlier, 0);
    assert_eq!(store.messages_page(&id, None, 0).unwrap().messages, all[9..], "a page holds at least one message");
    assert_eq!(store.messages_page(&id, None, 100).unwrap().messages, all);

    // A message of another conversation (or none at all) is not a place to page from.
    let stranger = store.messages(&other).unwrap()[0].id.clone();
    assert!(matches!(store.messages_page(&id, Some(&stranger), 4), Err(Error::NotFound { what: "message", .. })));
    assert!(matches!(store.messages_page(&id, Some("nope"), 4), Err(Error::NotFound { what: "message", .. })));
    assert!(matches!(store.messages_page("nope", None, 4), Err(Error::NotFound { what: "conversation", .. })));
}

#[test]
fn pinned_conversations_lead_the_list_and_archiving_unpins() {
    let store = Store::open_in_memory().unwrap();
    let first = new_chat(&store, "first");
    std::thread::sleep(Duration::from_millis(2));
    let second = new_chat(&store, "second");
    assert_eq!(titles(&store.conversations().unwrap()), ["second", "first"]);
    store.set_pinned(&first, true).unwrap();
    let list = store.conversations().unwrap();
    assert_eq!(titles(&list), ["first", "second"], "a pinned one leads, newer ones follow");
    assert!(list[0].pinned && !list[0].archived);
    store.set_archived(&first, true).unwrap();
    let first_now = store.conversation(&first).unwrap();
    assert!(first_now.archived && !first_now.pinned, "archiving unpins");
    assert_eq!(titles(&store.conversations().unwrap()), ["second", "first"]);
    store.set_archived(&first, false).unwrap();
    assert!(!store.conversation(&first).unwrap().archived);
    assert!(matches!(store.set_pinned("nope", true), Err(Error::NotFound { what: "conversation", .. })));
    assert!(matches!(store.set_archived("nope", true), Err(Error::NotFound { .. })));
    let _ = second;
}

#[test]
fn a_conversation_keeps_its_own_instructions_and_blank_removes_them() {
    let store = Store::open_in_memory().unwrap();
    let id = new_chat(&store, "chat");
    assert_eq!(store.instructions(&id).unwrap(), None);
    store.set_instructions(&id, Some("Answer in French.\nBe brief.")).unwrap();
    assert_eq!(store.instructions(&id).unwrap().as_deref(), Some("Answer in French.\nBe brief."));
    store.set_instructions(&id, Some("  \n")).unwrap();
    assert_eq!(store.instructions(&id).unwrap(), None, "blank is none");
    assert!(matches!(store.instructions("nope"), Err(Error::NotFound { what: "conversation", .. })));
    assert!(matches!(store.set_instructions("nope", Some("x")), Err(Error::NotFound { what: "conversation", .. })));
}
