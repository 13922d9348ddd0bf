//! The message tree on a long conversation: opening it (its last page of the current path, as the
//! app opens a chat: 60 messages) and switching a version near its start (`select_message`, then
//! the page the view redraws), on a file database of 1,000 messages on the current path (every
//! fifth answer with a tool call and its result) plus a second version of its first answer whose
//! branch holds 200 more. Targets: opening stays about where it was before the tree (~65 ms for
//! the whole app), a switch repaints in under 100 ms.
//!
//! `cargo bench -p switchboard-store --bench tree`.

use std::hint::black_box;
use std::time::Instant;
use switchboard_core::{ChatEvent, EventSink, FinishReason, ToolSource, ToolStatus, Usage};
use switchboard_store::{Store, TurnRows};

const OPEN_PAGE: usize = 60;

fn answer(store: &Store, rows: &TurnRows, i: usize) {
    let rec = store.recorder(&rows.message_id);
    rec.emit(ChatEvent::TextDelta { text: format!("Answer {i}: ").repeat(20) });
    if i.is_multiple_of(5) {
        rec.emit(ChatEvent::ToolCall {
            id: format!("call_{i}"),
            name: "clock__now".into(),
            source: ToolSource::Mcp { server: "clock".into() },
            arguments: r#"{"tz":"Europe/Paris"}"#.into(),
            text_offset: 40,
            iteration: 1,
            index: 0,
        });
        rec.emit(ChatEvent::ToolResult {
            id: format!("call_{i}"),
            status: ToolStatus::Ok,
            output: "12:00".into(),
            duration_ms: 3,
            images: None,
        });
    }
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
}

/// A conversation of 500 turns, and the ids of its first answer's two versions.
fn build(store: &Store) -> (String, String, String) {
    let first = store.begin_turn(None, "question 0", "p", "m").unwrap();
    answer(store, &first, 0);
    let c = first.conversation_id.clone();
    let other = store.begin_answer(&c, &first.user_message_id, ("p", "m2"), None).unwrap();
    answer(store, &other, 1);
    for i in 1..100 {
        let rows = store.begin_turn(Some(&c), &format!("question on the other branch {i}"), "p", "m").unwrap();
        answer(store, &rows, i);
    }
    store.select_message(&c, &first.message_id).unwrap();
    for i in 1..500 {
        let rows = store.begin_turn(Some(&c), &format!("question {i}"), "p", "m").unwrap();
        answer(store, &rows, i);
    }
    (c, first.message_id, other.message_id)
}

const RUNS: usize = 30;

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
    let (conversation, first, other) = build(&store);
    assert_eq!(store.messages(&conversation).unwrap().len(), 1000);
    time("open: last page of a 1,000-message path", || {
        black_box(store.messages_page(&conversation, None, OPEN_PAGE).unwrap());
    });
    time("read the whole 1,000-message path (export, history)", || {
        black_box(store.messages(&conversation).unwrap());
    });
    time("history of the 1,000-message path", || {
        black_box(store.history(&conversation).unwrap());
    });
    let mut flip = false;
    time("switch a version near the start, then read the page shown", || {
        flip = !flip;
        let to = if flip { &other } else { &first };
        store.select_message(&conversation, to).unwrap();
        black_box(store.messages_page(&conversation, None, OPEN_PAGE).unwrap());
    });
}
