//! Attached files: opening a conversation whose questions carry 100 images costs what opening
//! one without any does (a page reads the files' metadata in one query; thumbnails and bytes
//! are read on demand), and storing and reading a large file back (hash, write, verify).
//! Two conversations of 100 turns on a file database: one plain, one with an image of 200 KB
//! (thumbnail 40 KB) on every question. Target: the same open time within noise.
//!
//! `cargo bench -p switchboard-store --bench attachments`.

use std::hint::black_box;
use std::time::Instant;
use switchboard_core::{Attachment, AttachmentKind, ChatEvent, EventSink, FinishReason, Usage};
use switchboard_store::{NewAttachment, Store};

const OPEN_PAGE: usize = 60;
const TURNS: usize = 100;
const RUNS: usize = 30;

fn image(store: &Store, i: usize) -> Attachment {
    let mut bytes = vec![0_u8; 200 * 1024];
    bytes[..8].copy_from_slice(&(i as u64).to_le_bytes());
    store
        .put_attachment(NewAttachment {
            bytes: &bytes,
            name: &format!("photo-{i}.png"),
            mime_type: "image/png",
            kind: AttachmentKind::Image,
            width: Some(4000),
            height: Some(3000),
            pages: None,
            text_note: None,
            text: None,
            thumbnail: Some(vec![i as u8; 40 * 1024]),
        })
        .unwrap()
}

fn build(store: &Store, with_files: bool) -> String {
    let mut conversation: Option<String> = None;
    for i in 0..TURNS {
        let files = if with_files { vec![image(store, i)] } else { Vec::new() };
        let rows = store
            .begin_turn_with(conversation.as_deref(), &format!("what is in picture {i}?"), "p", "m", None, &files)
            .unwrap();
        let rec = store.recorder(&rows.message_id);
        rec.emit(ChatEvent::TextDelta { text: format!("Picture {i} shows a cat. ").repeat(10) });
        rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
        conversation = Some(rows.conversation_id);
    }
    conversation.unwrap()
}

/// Runs `f` `RUNS` times and prints its median and worst time.
fn time(label: &str, mut f: impl FnMut()) {
    let mut ms: Vec<f64> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    ms.sort_by(f64::total_cmp);
    println!("{label}: median {:.2} ms, max {:.2} ms ({RUNS} runs)", ms[RUNS / 2], ms[RUNS - 1]);
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("bench.db")).unwrap();
    let plain = build(&store, false);
    let pictures = build(&store, true);
    let shown = store.messages(&pictures).unwrap();
    assert_eq!(shown.iter().map(|m| m.attachments.len()).sum::<usize>(), TURNS);
    for (label, c) in [("without files", &plain), ("with 100 images", &pictures)] {
        time(&format!("open (last page of 60) {label}"), || {
            black_box(store.messages_page(c, None, OPEN_PAGE).unwrap());
        });
        time(&format!("read the whole path {label}"), || {
            black_box(store.messages(c).unwrap());
        });
        time(&format!("turn history {label}"), || {
            black_box(store.turn_history(c, &|_| None, usize::MAX).unwrap());
        });
    }
    let first = &shown[0].attachments[0].id;
    time("one thumbnail (40 KB)", || {
        black_box(store.attachment_thumbnail(first).unwrap());
    });
    let big: Vec<u8> = (0..20 * 1024 * 1024).map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let mut id = String::new();
    let t = Instant::now();
    let put = |store: &Store| {
        store
            .put_attachment(NewAttachment {
                bytes: &big,
                name: "scan.pdf",
                mime_type: "application/pdf",
                kind: AttachmentKind::Pdf,
                width: None,
                height: None,
                pages: Some(300),
                text_note: None,
                text: None,
                thumbnail: None,
            })
            .unwrap()
    };
    id.push_str(&put(&store).id);
    println!("store a 20 MB file (hash, write, flush, rename): {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    let t = Instant::now();
    put(&store);
    println!("store it again (already there: read and hash): {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    let t = Instant::now();
    black_box(store.attachment_bytes(&id).unwrap());
    println!("read it back (read, verify SHA-256): {:.1} ms", t.elapsed().as_secs_f64() * 1000.0);
    let t = Instant::now();
    black_box(store.collect_attachments(std::time::Duration::from_secs(3600)).unwrap());
    println!("collect (101 files, nothing to remove): {:.2} ms", t.elapsed().as_secs_f64() * 1000.0);
}
