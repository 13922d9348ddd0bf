//! Attached files in the store: one content-addressed copy however often a file is attached,
//! references written with the person's message (a turn, an edit), shown with every page of a
//! conversation and handed to the next turn's history, carried into a branch copy, found by
//! search, collected once nothing uses them, and a missing or damaged copy reported by name.

use std::time::Duration;
use switchboard_core::{Attachment, AttachmentKind, ChatEvent, EventSink, FinishReason, Message, Usage};
use switchboard_store::{ATTACHMENTS_DIR, DB_FILE, Error, NewAttachment, SearchHitKind, Store, TurnRows, sha256_hex};

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(DB_FILE)).unwrap();
    (dir, store)
}

fn new<'a>(bytes: &'a [u8], name: &'a str, kind: AttachmentKind) -> NewAttachment<'a> {
    NewAttachment {
        bytes,
        name,
        mime_type: match kind {
            AttachmentKind::Image => "image/png",
            AttachmentKind::Pdf => "application/pdf",
            AttachmentKind::Text => "text/plain",
        },
        kind,
        width: (kind == AttachmentKind::Image).then_some(640),
        height: (kind == AttachmentKind::Image).then_some(480),
        pages: (kind == AttachmentKind::Pdf).then_some(3),
        text_note: None,
        text: (kind != AttachmentKind::Image).then(|| format!("the text of {name}")),
        thumbnail: (kind == AttachmentKind::Image).then(|| b"tiny png".to_vec()),
    }
}

fn put(store: &Store, bytes: &[u8], name: &str, kind: AttachmentKind) -> Attachment {
    store.put_attachment(new(bytes, name, kind)).unwrap()
}

fn answer(store: &Store, rows: &TurnRows, text: &str) {
    let rec = store.recorder(&rows.message_id);
    rec.emit(ChatEvent::TextDelta { text: text.into() });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
    assert!(rec.take_error().is_none());
}

fn blob_path(dir: &tempfile::TempDir, id: &str) -> std::path::PathBuf {
    dir.path().join(ATTACHMENTS_DIR).join(&id[..2]).join(id)
}

fn count(store: &Store, table: &str) -> i64 {
    let conn = rusqlite::Connection::open(store.path().unwrap()).unwrap();
    conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap()
}

#[test]
fn a_file_is_stored_once_under_its_sha256_and_read_back_checked() {
    let (dir, store) = open();
    let photo = put(&store, b"\x89PNG photo bytes", "photo.png", AttachmentKind::Image);
    assert_eq!(photo.id, sha256_hex(b"\x89PNG photo bytes"));
    assert_eq!((photo.name.as_str(), photo.size, photo.width, photo.height), ("photo.png", 16, Some(640), Some(480)));
    assert_eq!(std::fs::read(blob_path(&dir, &photo.id)).unwrap(), b"\x89PNG photo bytes");
    // The same bytes under another name: one copy, one row; the reference carries the new name.
    let again = put(&store, b"\x89PNG photo bytes", "screenshot.png", AttachmentKind::Image);
    assert_eq!((again.id.as_str(), again.name.as_str()), (photo.id.as_str(), "screenshot.png"));
    assert_eq!(count(&store, "attachments"), 1);
    let files: Vec<_> = walk(&dir.path().join(ATTACHMENTS_DIR));
    assert_eq!(files, [blob_path(&dir, &photo.id)], "one file, no temporary left");
    assert_eq!(store.attachment(&photo.id).unwrap().unwrap(), photo, "the row keeps the first name");
    assert_eq!(store.attachment_bytes(&photo.id).unwrap(), b"\x89PNG photo bytes");
    assert_eq!(store.attachment_thumbnail(&photo.id).unwrap().unwrap(), b"tiny png");
    assert_eq!(store.attachment_text(&photo.id).unwrap(), None);
    let pdf = put(&store, b"%PDF-1.7 ...", "report.pdf", AttachmentKind::Pdf);
    assert_eq!(store.attachment_text(&pdf.id).unwrap().as_deref(), Some("the text of report.pdf"));
    assert_eq!(store.attachment_thumbnail(&pdf.id).unwrap(), None);
    assert_eq!(store.attachment("0".repeat(64).as_str()).unwrap(), None);
    assert!(matches!(store.attachment_bytes(&"0".repeat(64)), Err(Error::NotFound { .. })));
    // Bounds: a thumbnail over 64 KB, a nameless file.
    let mut big = new(b"x", "x.png", AttachmentKind::Image);
    big.thumbnail = Some(vec![0; 65 * 1024]);
    assert!(matches!(store.put_attachment(big), Err(Error::Invalid(_))));
    assert!(matches!(store.put_attachment(new(b"y", " ", AttachmentKind::Text)), Err(Error::Invalid(_))));
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().unwrap().is_dir() {
            out.extend(walk(&entry.path()));
        } else {
            out.push(entry.path());
        }
    }
    out.sort();
    out
}

#[test]
fn a_missing_or_changed_copy_is_an_error_naming_the_file() {
    let (dir, store) = open();
    let notes = put(&store, b"meeting notes", "notes.txt", AttachmentKind::Text);
    std::fs::write(blob_path(&dir, &notes.id), b"meeting nodes").unwrap();
    let e = store.attachment_bytes(&notes.id).unwrap_err();
    assert!(matches!(e, Error::AttachmentDamaged { ref name, .. } if name == "notes.txt"), "{e:?}");
    assert!(e.to_string().contains("'notes.txt' is damaged") && e.to_string().contains("attach the file again"), "{e}");
    std::fs::write(blob_path(&dir, &notes.id), b"meeting notes, longer now").unwrap();
    assert!(matches!(store.attachment_bytes(&notes.id), Err(Error::AttachmentDamaged { .. })));
    std::fs::remove_file(blob_path(&dir, &notes.id)).unwrap();
    let e = store.attachment_bytes(&notes.id).unwrap_err();
    assert!(matches!(e, Error::AttachmentMissing { ref name, .. } if name == "notes.txt"), "{e:?}");
    assert!(e.to_string().contains("'notes.txt' is missing"), "{e}");
    assert_eq!(e.kind(), switchboard_core::ErrorKind::Storage);
    // Attaching the file again puts its copy back.
    put(&store, b"meeting notes", "notes.txt", AttachmentKind::Text);
    assert_eq!(store.attachment_bytes(&notes.id).unwrap(), b"meeting notes");
}

#[test]
fn a_question_keeps_its_files_in_order_and_the_next_turn_gets_them() {
    let (_dir, store) = open();
    let photo = put(&store, b"photo", "photo.png", AttachmentKind::Image);
    let pdf = put(&store, b"%PDF report", "report.pdf", AttachmentKind::Pdf);
    let first = store.begin_turn_with(None, "what is this?", "p", "m", None, &[pdf.clone(), photo.clone()]).unwrap();
    answer(&store, &first, "a report and a photo");
    let c = first.conversation_id.clone();
    let second = store.begin_turn_with(Some(&c), "thanks", "p", "m", None, &[]).unwrap();
    let shown = store.messages(&c).unwrap();
    assert_eq!(shown[0].attachments, [pdf.clone(), photo.clone()]);
    assert!(shown[1..].iter().all(|m| m.attachments.is_empty()));
    assert_eq!(store.message(&c, &first.user_message_id).unwrap().attachments, [pdf.clone(), photo.clone()]);
    let page = store.messages_page(&c, None, 2).unwrap();
    assert!(page.messages.iter().all(|m| m.attachments.is_empty()), "the last page holds none");
    let page = store.messages_page(&c, Some(&second.user_message_id), 2).unwrap();
    assert_eq!(page.messages[0].attachments.len(), 2);
    // The history the next turn starts from: the question's index and its files.
    let turn = store.turn_history(&c, &|_| None, usize::MAX).unwrap();
    assert_eq!(turn.messages[0], Message::user("what is this?"));
    assert_eq!(turn.attachments, [(0, vec![pdf.clone(), photo.clone()])]);
    assert_eq!(store.history_attachments(&c).unwrap(), turn.attachments);
    assert_eq!(store.question(&c, &first.message_id).unwrap().attachments, [pdf, photo]);
    // JSON: the files travel with the message; a message without any leaves the field out.
    let json = serde_json::to_value(&shown).unwrap();
    assert_eq!(json[0]["attachments"][0]["name"], "report.pdf");
    assert!(json[1].get("attachments").is_none());
}

#[test]
fn a_file_that_was_never_stored_writes_nothing() {
    let (_dir, store) = open();
    let ghost = Attachment {
        id: sha256_hex(b"never stored"),
        name: "ghost.txt".into(),
        mime_type: "text/plain".into(),
        kind: AttachmentKind::Text,
        size: 12,
        width: None,
        height: None,
        pages: None,
        text_note: None,
    };
    let e = store.begin_turn_with(None, "hi", "p", "m", None, &[ghost]).unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }), "{e:?}");
    assert!(e.to_string().contains("ghost.txt"), "{e}");
    assert!(store.conversations().unwrap().is_empty(), "no conversation half-written");
    let many = vec![put(&store, b"x", "x.txt", AttachmentKind::Text); 101];
    assert!(matches!(store.begin_turn_with(None, "hi", "p", "m", None, &many), Err(Error::Invalid(_))));
    assert!(store.conversations().unwrap().is_empty());
}

#[test]
fn an_edit_carries_the_files_it_is_given_and_the_old_version_keeps_its_own() {
    let (_dir, store) = open();
    let a = put(&store, b"aaa", "a.txt", AttachmentKind::Text);
    let b = put(&store, b"bbb", "b.txt", AttachmentKind::Text);
    let first = store.begin_turn_with(None, "compare", "p", "m", None, std::slice::from_ref(&a)).unwrap();
    answer(&store, &first, "ok");
    let c = first.conversation_id.clone();
    let edited = store
        .begin_edit(&c, &first.user_message_id, "compare both", ("p", "m"), None, &[a.clone(), b.clone()])
        .unwrap();
    assert_eq!(store.messages(&c).unwrap()[0].attachments, [a.clone(), b.clone()]);
    assert_eq!(store.turn_history(&c, &|_| None, usize::MAX).unwrap().attachments, [(0, vec![a.clone(), b])]);
    answer(&store, &edited, "done");
    store.select_message(&c, &first.user_message_id).unwrap();
    assert_eq!(store.messages(&c).unwrap()[0].attachments, [a]);
}

#[test]
fn collection_keeps_a_shared_file_until_no_branch_uses_it_and_the_grace_has_passed() {
    let (dir, store) = open();
    let photo = put(&store, b"shared photo", "photo.png", AttachmentKind::Image);
    let file = blob_path(&dir, &photo.id);
    let one = store.begin_turn_with(None, "look", "p", "m", None, std::slice::from_ref(&photo)).unwrap();
    answer(&store, &one, "seen");
    let c = one.conversation_id.clone();
    // A second version of the question using the same file: two references, one copy.
    let two = store
        .begin_edit(&c, &one.user_message_id, "look again", ("p", "m"), None, std::slice::from_ref(&photo))
        .unwrap();
    answer(&store, &two, "seen again");
    assert_eq!(count(&store, "message_attachments"), 2);
    store.delete_version(&c, &one.user_message_id).unwrap();
    assert_eq!(store.collect_attachments(Duration::ZERO).unwrap(), 0, "the other branch still uses it");
    assert!(file.exists());
    // Both gone: kept during the grace period (it might be in the composer again), then removed.
    store.delete(&c).unwrap();
    assert!(file.exists(), "within the grace period");
    assert_eq!(store.collect_attachments(Duration::from_secs(3600)).unwrap(), 0);
    assert!(file.exists());
    assert_eq!(store.collect_attachments(Duration::ZERO).unwrap(), 1);
    assert!(!file.exists());
    assert_eq!(count(&store, "attachments"), 0);
    // A file attached in the composer and never sent survives the store's own collections.
    let pending = put(&store, b"not sent yet", "draft.txt", AttachmentKind::Text);
    drop(store);
    let store = Store::open(&dir.path().join(DB_FILE)).unwrap();
    assert_eq!(store.attachment_bytes(&pending.id).unwrap(), b"not sent yet");
}

#[test]
fn collection_removes_stray_files_no_row_names_and_leaves_other_files_alone() {
    let (dir, store) = open();
    let kept = put(&store, b"kept", "kept.txt", AttachmentKind::Text);
    let stray_id = sha256_hex(b"stray");
    let stray = blob_path(&dir, &stray_id);
    std::fs::create_dir_all(stray.parent().unwrap()).unwrap();
    std::fs::write(&stray, b"stray").unwrap();
    let foreign = dir.path().join(ATTACHMENTS_DIR).join("README.txt");
    std::fs::write(&foreign, b"not ours").unwrap();
    assert_eq!(store.collect_attachments(Duration::from_secs(3600)).unwrap(), 0, "too young");
    assert_eq!(store.collect_attachments(Duration::ZERO).unwrap(), 2, "the stray file and the unused row");
    assert!(!stray.exists() && foreign.exists());
    assert!(!blob_path(&dir, &kept.id).exists());
}

#[test]
fn a_branch_copy_shares_the_files_of_its_questions() {
    let (dir, store) = open();
    let photo = put(&store, b"branch photo", "photo.png", AttachmentKind::Image);
    let first = store.begin_turn_with(None, "see", "p", "m", None, std::slice::from_ref(&photo)).unwrap();
    answer(&store, &first, "seen");
    let copy = store.branch_to_new_conversation(&first.conversation_id, &first.message_id).unwrap();
    assert_eq!(store.messages(&copy).unwrap()[0].attachments, std::slice::from_ref(&photo));
    assert_eq!(count(&store, "attachments"), 1, "references copied, not bytes");
    store.delete(&first.conversation_id).unwrap();
    store.collect_attachments(Duration::ZERO).unwrap();
    assert_eq!(store.attachment_bytes(&photo.id).unwrap(), b"branch photo", "the copy still uses it");
    assert!(blob_path(&dir, &photo.id).exists());
}

#[test]
fn an_attachment_s_name_and_text_are_found_and_the_hit_points_at_its_message() {
    let (_dir, store) = open();
    let mut pdf = new(b"%PDF quarterly", "q3-report.pdf", AttachmentKind::Pdf);
    pdf.text = Some("Revenue grew in the flamingo segment".into());
    let pdf = store.put_attachment(pdf).unwrap();
    let rows = store.begin_turn_with(None, "summarise this", "p", "m", None, std::slice::from_ref(&pdf)).unwrap();
    answer(&store, &rows, "It grew.");
    let hits = store.search_messages("flamingo", 10).unwrap();
    assert_eq!(hits.len(), 1, "{hits:#?}");
    let hit = &hits[0];
    assert_eq!(hit.kind, SearchHitKind::Attachment);
    assert_eq!(hit.message_id.as_deref(), Some(rows.user_message_id.as_str()));
    assert_eq!(hit.attachment.as_deref(), Some("q3-report.pdf"));
    assert!(hit.on_current_path && hit.tool_call_id.is_none());
    assert!(hit.snippet.contains("flamingo"), "{}", hit.snippet);
    assert_eq!(store.search_messages("q3", 10).unwrap().len(), 1, "the name is found too");
    // Deleting the message takes its entry out of the index.
    store.delete(&rows.conversation_id).unwrap();
    assert!(store.search_messages("flamingo", 10).unwrap().is_empty());
}

#[test]
fn an_in_memory_store_keeps_files_in_memory() {
    let store = Store::open_in_memory().unwrap();
    let a = put(&store, b"in memory", "m.txt", AttachmentKind::Text);
    let rows = store.begin_turn_with(None, "q", "p", "m", None, std::slice::from_ref(&a)).unwrap();
    assert_eq!(store.attachment_bytes(&a.id).unwrap(), b"in memory");
    store.delete(&rows.conversation_id).unwrap();
    assert_eq!(store.collect_attachments(Duration::ZERO).unwrap(), 1);
    assert!(matches!(store.attachment_bytes(&a.id), Err(Error::NotFound { .. })));
}

#[test]
fn records_carry_the_files_and_an_import_checks_them_before_writing_anything() {
    let (_dir, store) = open();
    let pdf = put(&store, b"%PDF transfer", "t.pdf", AttachmentKind::Pdf);
    let rows = store.begin_turn_with(None, "read", "p", "m", None, &[pdf.clone(), pdf.clone()]).unwrap();
    answer(&store, &rows, "read");
    let records = store.conversation_records(std::slice::from_ref(&rows.conversation_id)).unwrap();
    assert_eq!(records[0].attachments.len(), 1, "one file, used twice");
    assert_eq!(records[0].messages[0].attachments.len(), 2);
    assert!(records[0].messages[1].attachments.is_empty());

    let (_other_dir, other) = open();
    let outcome = other.import_records(&records).unwrap();
    assert_eq!(outcome.imported, std::slice::from_ref(&rows.conversation_id));
    assert_eq!(other.attachment_bytes(&pdf.id).unwrap(), b"%PDF transfer");
    assert_eq!(other.conversation_records(std::slice::from_ref(&rows.conversation_id)).unwrap(), records);
    assert_eq!(other.search_messages("t.pdf", 5).unwrap().len(), 1, "imported files are searchable");

    let (_third_dir, third) = open();
    let mut changed = records.clone();
    changed[0].attachments[0].data = "b3RoZXI=".into();
    changed[0].attachments[0].size = 5;
    let outcome = third.import_records(&changed).unwrap();
    assert!(outcome.imported.is_empty());
    assert!(outcome.refused[0].reason.contains("'t.pdf' does not match its SHA-256"), "{outcome:?}");
    let mut answer_with_file = records.clone();
    answer_with_file[0].messages[1].attachments = answer_with_file[0].messages[0].attachments.clone();
    let outcome = third.import_records(&answer_with_file).unwrap();
    assert!(outcome.refused[0].reason.contains("is an answer but carries attached files"), "{outcome:?}");
    assert!(third.conversations().unwrap().is_empty());
    assert_eq!(third.attachment(&pdf.id).unwrap(), None);
}

#[test]
fn a_pdf_s_note_on_its_cut_text_is_kept_read_with_its_messages_and_carried_by_an_export() {
    let (_dir, store) = open();
    let note = "text of pages 1–2 of 9 only: extraction stopped after 20 s";
    let pdf = store
        .put_attachment(NewAttachment {
            text_note: Some(note.into()),
            ..new(b"%PDF cut", "cut.pdf", AttachmentKind::Pdf)
        })
        .unwrap();
    assert_eq!(pdf.text_note.as_deref(), Some(note));
    assert_eq!(store.attachment(&pdf.id).unwrap().unwrap().text_note.as_deref(), Some(note));
    let whole = put(&store, b"%PDF whole", "whole.pdf", AttachmentKind::Pdf);
    assert_eq!(whole.text_note, None);
    let rows = store.begin_turn_with(None, "read", "p", "m", None, &[pdf.clone(), whole]).unwrap();
    answer(&store, &rows, "read");
    let shown = store.messages(&rows.conversation_id).unwrap();
    assert_eq!(shown[0].attachments[0].text_note.as_deref(), Some(note));
    assert_eq!(serde_json::to_value(&shown).unwrap()[0]["attachments"][0]["textNote"], note);

    let records = store.conversation_records(std::slice::from_ref(&rows.conversation_id)).unwrap();
    let (_other_dir, other) = open();
    other.import_records(&records).unwrap();
    assert_eq!(other.attachment(&pdf.id).unwrap().unwrap().text_note.as_deref(), Some(note));
}
