//! Importing conversation records: the good ones are written in one transaction, each bad one is
//! refused with why and leaves nothing behind.

use switchboard_core::{ChatEvent, EventSink, FinishReason, Usage};
use switchboard_store::{ConversationRecord, Store};

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    (dir, store)
}

/// A store's records of `n` answered chats, titled "chat 0", "chat 1", ….
fn records(n: usize) -> Vec<ConversationRecord> {
    let (_dir, store) = open();
    let ids: Vec<String> = (0..n)
        .map(|i| {
            let rows = store.begin_turn(None, &format!("chat {i}"), "p", "m").unwrap();
            let rec = store.recorder(&rows.message_id);
            rec.emit(ChatEvent::TextDelta { text: format!("answer {i}") });
            rec.emit(ChatEvent::Done {
                finish_reason: FinishReason::Stop,
                usage: Usage::default(),
                tool_calls_made: 0,
            });
            assert!(rec.take_error().is_none());
            rows.conversation_id
        })
        .collect();
    store.conversation_records(&ids).unwrap()
}

fn stored_ids(store: &Store) -> Vec<String> {
    let mut ids: Vec<String> = store.conversations().unwrap().into_iter().map(|c| c.id).collect();
    ids.sort();
    ids
}

#[test]
fn a_bad_conversation_is_refused_with_why_and_the_good_ones_are_imported() {
    let mut file = records(3);
    file[1].head_id = Some("nowhere".into());
    let (_dir, store) = open();
    let outcome = store.import_records(&file).unwrap();
    let mut want = vec![file[0].id.clone(), file[2].id.clone()];
    assert_eq!(outcome.imported, want);
    assert!(outcome.skipped.is_empty());
    assert_eq!(outcome.refused.len(), 1);
    let refused = &outcome.refused[0];
    assert_eq!((refused.id.as_str(), refused.title.as_str()), (file[1].id.as_str(), file[1].title.as_str()));
    assert_eq!(refused.reason, "its current message 'nowhere' is not one of its messages");
    want.sort();
    assert_eq!(stored_ids(&store), want);
    assert!(store.messages(&file[1].id).is_err() || store.messages(&file[1].id).unwrap().is_empty());
    // The good ones read back as they were written.
    assert_eq!(store.conversation_records(std::slice::from_ref(&file[0].id)).unwrap()[0], file[0]);

    // Importing the same file again: the good ones are already there, the bad one still refused.
    let again = store.import_records(&file).unwrap();
    assert!(again.imported.is_empty());
    assert_eq!(again.skipped.len(), 2);
    assert_eq!(again.refused, outcome.refused);
}

#[test]
fn a_conversation_whose_rows_collide_with_stored_ones_is_refused_alone_leaving_nothing() {
    let file = records(2);
    let (_dir, store) = open();
    // Already stored under another conversation id: its message ids are taken.
    let mut moved = file[0].clone();
    moved.id = "elsewhere".into();
    assert_eq!(store.import_records(std::slice::from_ref(&moved)).unwrap().imported, ["elsewhere"]);

    let outcome = store.import_records(&file).unwrap();
    assert_eq!(outcome.imported, [file[1].id.clone()]);
    assert_eq!(outcome.refused.len(), 1);
    assert_eq!(outcome.refused[0].id, file[0].id);
    assert!(outcome.refused[0].reason.contains("is already stored in conversation 'elsewhere'"), "{outcome:?}");
    let mut want = vec!["elsewhere".to_owned(), file[1].id.clone()];
    want.sort();
    assert_eq!(stored_ids(&store), want, "nothing of the refused conversation was kept");
    assert_eq!(store.search_messages("chat 0", 10).unwrap().len(), 2, "the stored copy only: title and question");
}

#[test]
fn a_conversation_twice_in_a_file_is_taken_once_and_the_second_is_refused() {
    let file = records(1);
    let twice = [file[0].clone(), file[0].clone()];
    let (_dir, store) = open();
    let outcome = store.import_records(&twice).unwrap();
    assert_eq!(outcome.imported, [file[0].id.clone()]);
    assert_eq!(outcome.refused.len(), 1);
    assert!(outcome.refused[0].reason.contains("appears twice in the file"), "{outcome:?}");
}

#[test]
fn a_file_of_only_bad_conversations_writes_nothing() {
    let mut file = records(2);
    for r in &mut file {
        r.messages[1].parent_id = Some("missing".into());
    }
    let (_dir, store) = open();
    let outcome = store.import_records(&file).unwrap();
    assert!(outcome.imported.is_empty() && outcome.skipped.is_empty());
    assert_eq!(
        outcome.refused.iter().map(|r| r.id.clone()).collect::<Vec<_>>(),
        [file[0].id.clone(), file[1].id.clone()]
    );
    assert!(store.conversations().unwrap().is_empty());
}
