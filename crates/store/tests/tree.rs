//! The message tree: editing a question and answering again add versions, the current path is
//! what is shown and sent, switching follows the branch chosen last (also after reopening),
//! deleting a version moves the path to a neighbour, and a branch copies into a new chat.

use switchboard_core::{ChatEvent, EventSink, FinishReason, Message, ProviderState, ToolSource, ToolStatus, Usage};
use switchboard_store::{Error, MessageStatus, Store, TurnRows};

fn answer(store: &Store, rows: &TurnRows, text: &str) {
    let rec = store.recorder(&rows.message_id);
    rec.emit(ChatEvent::TextDelta { text: text.into() });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
}

/// An answer with a tool call (an image result, nested agent events) and provider state.
fn answer_with_tool(store: &Store, rows: &TurnRows, state: &str) {
    let rec = store.recorder(&rows.message_id);
    rec.emit(ChatEvent::TextDelta { text: "Checking. ".into() });
    rec.emit(ChatEvent::ToolCall {
        id: "call_1".into(),
        name: "clock__now".into(),
        source: ToolSource::Mcp { server: "clock".into() },
        arguments: "{}".into(),
        text_offset: 10,
        iteration: 1,
        index: 0,
    });
    rec.emit(ChatEvent::ToolProgress {
        id: "call_1".into(),
        instance: Some("Helper[0]".into()),
        text: None,
        event: Some(Box::new(ChatEvent::TextDelta { text: "nested".into() })),
    });
    rec.emit(ChatEvent::ToolResult {
        id: "call_1".into(),
        status: ToolStatus::Ok,
        output: "noon".into(),
        duration_ms: 3,
        images: Some(vec![switchboard_core::ToolImage::checked("image/png", "iVBORw0KGgo=").unwrap()]),
    });
    rec.emit(ChatEvent::ProviderState {
        iteration: 1,
        state: ProviderState { api: "openai-responses".into(), origin: "http://x".into(), data: state.into() },
    });
    rec.emit(ChatEvent::TextDelta { text: "Noon.".into() });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 1 });
}

fn contents(store: &Store, conversation: &str) -> Vec<String> {
    store.messages(conversation).unwrap().into_iter().map(|m| m.content).collect()
}

fn count(store: &Store, table: &str) -> i64 {
    // Counted through a second connection to the same file.
    let conn = rusqlite::Connection::open(store.path().unwrap()).unwrap();
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

fn file_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    (dir, store)
}

#[test]
fn editing_a_question_starts_a_branch_and_keeps_the_old_one() {
    let store = Store::open_in_memory().unwrap();
    let a = store.begin_turn(None, "q1", "p", "m").unwrap();
    answer(&store, &a, "a1");
    let c = a.conversation_id.clone();
    let b = store.begin_turn(Some(&c), "q2", "p", "m").unwrap();
    answer(&store, &b, "a2 secret of the old branch");
    let edited = store.begin_edit(&c, &b.user_message_id, "q2 edited", ("p", "m"), Some("{}"), &[]).unwrap();
    assert_eq!(contents(&store, &c), ["q1", "a1", "q2 edited", ""]);
    let history = store.history(&c).unwrap();
    assert_eq!(history.len(), 3, "{history:?}");
    assert_eq!(history[2], Message::user("q2 edited"));
    assert!(!format!("{history:?}").contains("secret"), "the other branch is not sent: {history:?}");
    let shown = store.messages(&c).unwrap();
    assert_eq!(shown[2].versions, [b.user_message_id.clone(), edited.user_message_id.clone()]);
    assert_eq!(shown[2].parent_id.as_deref(), Some(a.message_id.as_str()));
    answer(&store, &edited, "a2 new");
    // Editing the first message: a second root.
    let root = store.begin_edit(&c, &a.user_message_id, "q1 edited", ("p", "m"), None, &[]).unwrap();
    answer(&store, &root, "a1 new");
    let shown = store.messages(&c).unwrap();
    assert_eq!(contents(&store, &c), ["q1 edited", "a1 new"]);
    assert_eq!(shown[0].versions, [a.user_message_id.clone(), root.user_message_id.clone()]);
    assert_eq!(shown[0].parent_id, None);
    // Back to the first version: the branch chosen last below it comes back.
    store.select_message(&c, &a.user_message_id).unwrap();
    assert_eq!(contents(&store, &c), ["q1", "a1", "q2 edited", "a2 new"]);
    store.select_message(&c, &b.user_message_id).unwrap();
    assert_eq!(contents(&store, &c), ["q1", "a1", "q2", "a2 secret of the old branch"]);
    let history = store.history(&c).unwrap();
    assert_eq!(history.len(), 4);
    // An answer is only an answer: editing it is refused.
    assert!(matches!(store.begin_edit(&c, &a.message_id, "x", ("p", "m"), None, &[]), Err(Error::Refused(_))));
}

#[test]
fn the_path_chosen_survives_reopening_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switchboard.db");
    let (c, first_answer) = {
        let store = Store::open(&path).unwrap();
        let a = store.begin_turn(None, "q", "p", "m").unwrap();
        answer(&store, &a, "v1");
        let again = store.begin_answer(&a.conversation_id, &a.user_message_id, ("p", "m2"), None).unwrap();
        answer(&store, &again, "v2");
        let third = store.begin_answer(&a.conversation_id, &a.user_message_id, ("p", "m3"), None).unwrap();
        answer(&store, &third, "v3");
        let next = store.begin_turn(Some(&a.conversation_id), "follow-up on v3", "p", "m").unwrap();
        answer(&store, &next, "r3");
        store.select_message(&a.conversation_id, &a.message_id).unwrap();
        assert_eq!(contents(&store, &a.conversation_id), ["q", "v1"]);
        (a.conversation_id, a.message_id)
    };
    let store = Store::open(&path).unwrap();
    let shown = store.messages(&c).unwrap();
    assert_eq!(shown.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(), ["q", "v1"]);
    assert_eq!(shown[1].id, first_answer);
    assert_eq!(shown[1].versions.len(), 3);
    store.select_message(&c, &shown[1].versions[2]).unwrap();
    assert_eq!(contents(&store, &c), ["q", "v3", "follow-up on v3", "r3"]);
    let page = store.messages_page(&c, None, 2).unwrap();
    assert_eq!(page.earlier, 2);
    assert_eq!(page.messages[0].content, "follow-up on v3");
    // A message of another branch is not on this path: a page cannot start before it.
    assert!(matches!(store.messages_page(&c, Some(&first_answer), 2), Err(Error::NotFound { .. })));
}

#[test]
fn provider_state_comes_only_from_the_current_path() {
    let store = Store::open_in_memory().unwrap();
    let a = store.begin_turn(None, "q", "p", "m").unwrap();
    answer_with_tool(&store, &a, "state of branch one");
    let c = a.conversation_id.clone();
    let again = store.begin_answer(&c, &a.user_message_id, ("p", "m"), None).unwrap();
    answer_with_tool(&store, &again, "state of branch two");
    let next = store.begin_turn(Some(&c), "next", "p", "m").unwrap();
    let history = format!("{:?}", store.history(&c).unwrap());
    assert!(history.contains("state of branch two") && !history.contains("branch one"), "{history}");
    assert_eq!(store.messages(&c).unwrap()[2].parent_id.as_deref(), Some(again.message_id.as_str()));
    drop(next);
}

#[test]
fn deleting_a_version_moves_the_path_to_a_neighbour_and_refuses_what_would_lose_meaning() {
    let (_dir, store) = file_store();
    let a = store.begin_turn(None, "q", "p", "m").unwrap();
    answer(&store, &a, "v1");
    let c = a.conversation_id.clone();
    let v2 = store.begin_answer(&c, &a.user_message_id, ("p", "m"), None).unwrap();
    answer(&store, &v2, "v2");
    let follow = store.begin_turn(Some(&c), "under v2", "p", "m").unwrap();
    answer(&store, &follow, "deep");
    let v3 = store.begin_answer(&c, &a.user_message_id, ("p", "m"), None).unwrap();
    // v3 streams: deleting it (or a branch holding it) is refused; nothing changes.
    let before = (count(&store, "messages"), store.messages(&c).unwrap());
    assert!(matches!(store.delete_version(&c, &v3.message_id), Err(Error::Busy(_))));
    assert!(matches!(store.delete_version(&c, &a.user_message_id), Err(Error::Busy(_))));
    assert_eq!((count(&store, "messages"), store.messages(&c).unwrap()), before);
    answer(&store, &v3, "v3");
    // Deleting v2 (not on the path) takes its follow-up with it and leaves the path alone.
    store.delete_version(&c, &v2.message_id).unwrap();
    assert_eq!(contents(&store, &c), ["q", "v3"]);
    assert_eq!(store.messages(&c).unwrap()[1].versions, [a.message_id.clone(), v3.message_id.clone()]);
    assert_eq!(count(&store, "messages"), 3);
    // Deleting the shown last version: the previous one is shown.
    store.delete_version(&c, &v3.message_id).unwrap();
    assert_eq!(contents(&store, &c), ["q", "v1"]);
    // The only answer: the path ends at its question.
    store.delete_version(&c, &a.message_id).unwrap();
    assert_eq!(contents(&store, &c), ["q"]);
    // The only first message: refused, delete the conversation instead.
    let only = store.delete_version(&c, &a.user_message_id).unwrap_err();
    assert!(matches!(only, Error::Refused(_)) && only.to_string().contains("delete the conversation"), "{only}");
    // A second first message: deleting the shown one shows the other, with its branch.
    let root = store.begin_edit(&c, &a.user_message_id, "q'", ("p", "m"), None, &[]).unwrap();
    answer(&store, &root, "a'");
    store.select_message(&c, &a.user_message_id).unwrap();
    store.delete_version(&c, &a.user_message_id).unwrap();
    assert_eq!(contents(&store, &c), ["q'", "a'"]);
    assert!(matches!(store.delete_version("nope", &root.message_id), Err(Error::NotFound { .. })));
}

#[test]
fn edit_and_answer_again_are_refused_while_an_answer_streams_and_change_nothing() {
    let (_dir, store) = file_store();
    let a = store.begin_turn(None, "q", "p", "m").unwrap();
    let c = a.conversation_id.clone();
    let before = (count(&store, "messages"), store.messages(&c).unwrap());
    let edit = store.begin_edit(&c, &a.user_message_id, "q2", ("p", "m"), None, &[]).unwrap_err();
    assert!(matches!(edit, Error::Busy(_)) && edit.to_string().contains("stop it first"), "{edit}");
    assert!(matches!(store.begin_answer(&c, &a.user_message_id, ("p", "m"), None), Err(Error::Busy(_))));
    assert!(matches!(store.branch_to_new_conversation(&c, &a.message_id), Err(Error::Busy(_))));
    assert_eq!((count(&store, "messages"), store.messages(&c).unwrap()), before);
    assert_eq!(count(&store, "conversations"), 1);
    // Switching to a branch that leaves the streaming answer behind is refused too.
    answer(&store, &a, "a");
    let v2 = store.begin_answer(&c, &a.user_message_id, ("p", "m"), None).unwrap();
    assert!(matches!(store.select_message(&c, &a.message_id), Err(Error::Busy(_))));
    assert_eq!(store.messages(&c).unwrap()[1].id, v2.message_id);
}

#[test]
fn a_branch_copies_into_a_new_conversation_with_new_ids_and_the_chats_setup() {
    let (_dir, store) = file_store();
    let a = store.begin_turn(None, "q", "p", "m").unwrap();
    answer_with_tool(&store, &a, "state one");
    let c = a.conversation_id.clone();
    store.set_instructions(&c, Some("Be brief.")).unwrap();
    store.set_agent(&c, Some("Planner")).unwrap();
    store.set_disabled_tools(&c, &["web__fetch".to_owned()].into_iter().collect()).unwrap();
    store.approve_tool_for_chat(&c, "shell__run").unwrap();
    let setup = store
        .update_chat_setup(&c, |s| {
            s.toolsets = vec!["research".into()];
            s.generation = Some(switchboard_core::GenerationOptions { temperature: Some(0.2), ..Default::default() });
            s.provider = Some("p".into());
            s.model = Some("m".into());
        })
        .unwrap();
    let b = store.begin_turn(Some(&c), "second", "p", "m").unwrap();
    answer(&store, &b, "not copied");
    let copy = store.branch_to_new_conversation(&c, &a.message_id).unwrap();
    assert_ne!(copy, c);
    assert_eq!(store.conversation(&copy).unwrap().title, "q (branch)");
    let original = store.messages(&c).unwrap();
    let copied = store.messages(&copy).unwrap();
    assert_eq!(copied.len(), 2);
    for (o, n) in original.iter().zip(&copied) {
        assert_ne!(o.id, n.id);
        assert_eq!(
            (&o.content, &o.tool_calls, &o.provider_states, o.status),
            (&n.content, &n.tool_calls, &n.provider_states, n.status)
        );
    }
    assert_eq!(copied[1].parent_id.as_deref(), Some(copied[0].id.as_str()));
    assert_eq!(copied[1].tool_calls[0].nested.len(), 1);
    assert_eq!(copied[1].tool_calls[0].result.as_ref().unwrap().images.len(), 1);
    assert_eq!(store.history(&copy).unwrap(), store.history(&c).unwrap()[..4].to_vec());
    assert_eq!(store.instructions(&copy).unwrap().as_deref(), Some("Be brief."));
    assert_eq!(store.agent(&copy).unwrap().as_deref(), Some("Planner"));
    assert!(store.disabled_tools(&copy).unwrap().contains("web__fetch"));
    assert_eq!(store.chat_setup(&copy).unwrap(), setup, "the chat's setup comes along");
    assert!(store.approved_tools(&copy).unwrap().is_empty(), "a grant for a chat stays with that chat");
    assert_eq!(count(&store, "tool_calls"), 2);
    assert_eq!(count(&store, "tool_results"), 2);
    // The copy is its own: deleting the original leaves it whole.
    store.delete(&c).unwrap();
    assert_eq!(store.messages(&copy).unwrap(), copied);
    assert_eq!(copied[1].status, MessageStatus::Complete);
}

#[test]
fn a_very_long_branch_deletes_without_hitting_the_cascade_depth() {
    let (_dir, store) = file_store();
    let a = store.begin_turn(None, "q0", "p", "m").unwrap();
    answer(&store, &a, "a0");
    let c = a.conversation_id.clone();
    let mut second = None;
    for i in 1..520 {
        let rows = store.begin_turn(Some(&c), &format!("q{i}"), "p", "m").unwrap();
        answer(&store, &rows, &format!("a{i}"));
        second.get_or_insert(rows);
    }
    assert_eq!(store.messages(&c).unwrap().len(), 1040);
    store.delete_version(&c, &second.unwrap().user_message_id).unwrap();
    assert_eq!(contents(&store, &c), ["q0", "a0"]);
    for i in 1..520 {
        let rows = store.begin_turn(Some(&c), &format!("q{i}"), "p", "m").unwrap();
        answer(&store, &rows, "x");
    }
    store.delete(&c).unwrap();
    assert_eq!(count(&store, "messages"), 0);
}
