//! Full-text search: the index follows every write (finished answers, renames, deletes, cascades),
//! leaves an answer out while it streams and takes it in once it ends, finds words, phrases,
//! prefixes and scripts without spaces, and never fails on what a person types.

use std::time::Duration;
use switchboard_core::{ChatEvent, EventSink, FinishReason, ToolSource, ToolStatus, Usage};
use switchboard_store::{DB_FILE, Error, MATCH_END, MATCH_START, Recorder, Role, SearchHit, SearchHitKind, Store};

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join(DB_FILE)).unwrap();
    (dir, store)
}

/// A finished turn: the question, the answer, and tool calls with their results.
fn turn(
    store: &Store,
    conversation: Option<&str>,
    question: &str,
    answer: &str,
    tools: &[(&str, &str)],
) -> (String, String) {
    let rows = store.begin_turn(conversation, question, "p", "m").unwrap();
    let rec = store.recorder(&rows.message_id).with_checkpoint_interval(Duration::ZERO);
    for (i, (args, output)) in tools.iter().enumerate() {
        let id = format!("call{i}");
        rec.emit(ChatEvent::ToolCall {
            id: id.clone(),
            name: "lookup".into(),
            source: ToolSource::Builtin,
            arguments: (*args).into(),
            text_offset: 0,
            iteration: 1,
            index: i as u32,
        });
        rec.emit(ChatEvent::ToolResult {
            id,
            status: ToolStatus::Ok,
            output: (*output).into(),
            duration_ms: 1,
            images: None,
        });
    }
    rec.emit(ChatEvent::TextDelta { text: answer.into() });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
    assert!(rec.take_error().is_none());
    (rows.conversation_id, rows.message_id)
}

fn search(store: &Store, query: &str) -> Vec<SearchHit> {
    store.search_messages(query, 50).unwrap_or_else(|e| panic!("search {query:?}: {e}"))
}

fn kinds(hits: &[SearchHit]) -> Vec<SearchHitKind> {
    hits.iter().map(|h| h.kind).collect()
}

/// The index's own consistency check, through a second connection as another process would run it.
fn integrity_check(dir: &tempfile::TempDir) {
    let raw = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
    raw.execute("INSERT INTO search_index (search_index) VALUES ('integrity-check')", []).unwrap();
}

#[test]
fn the_bundled_sqlite_has_fts5() {
    let raw = rusqlite::Connection::open_in_memory().unwrap();
    let on: bool = raw.query_row("SELECT sqlite_compileoption_used('ENABLE_FTS5')", [], |r| r.get(0)).unwrap();
    assert!(on);
}

#[test]
fn hits_name_the_place_and_mark_the_match() {
    let (dir, store) = open();
    let (conv, answer) = turn(
        &store,
        None,
        "How do I configure the parser?",
        "Set the tokenizer option, then rebuild.",
        &[(r#"{"query":"parser settings"}"#, "Found: the zebra manual, chapter 3")],
    );
    let hits = search(&store, "zebra");
    assert_eq!(kinds(&hits), [SearchHitKind::ToolResult]);
    let hit = &hits[0];
    assert_eq!(hit.conversation_id, conv);
    assert_eq!(hit.message_id.as_deref(), Some(answer.as_str()));
    assert_eq!(hit.tool_call_id.as_deref(), Some("call0"));
    assert_eq!(hit.title, "How do I configure the parser?");
    assert_eq!(hit.snippet, format!("Found: the {MATCH_START}zebra{MATCH_END} manual, chapter 3"));
    assert!(hit.on_current_path);

    // The title, the question and the tool's arguments all say "parser".
    let hits = search(&store, "parser");
    let mut found = kinds(&hits);
    found.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(found, [SearchHitKind::Message, SearchHitKind::Title, SearchHitKind::ToolArguments]);
    let message = hits.iter().find(|h| h.kind == SearchHitKind::Message).unwrap();
    assert_eq!(message.role, Some(Role::User));
    assert!(hits.iter().find(|h| h.kind == SearchHitKind::Title).unwrap().message_id.is_none());

    let hits = search(&store, "tokenizer");
    assert_eq!(hits[0].role, Some(Role::Assistant));
    assert_eq!(hits[0].message_id.as_deref(), Some(answer.as_str()));
    integrity_check(&dir);
}

#[test]
fn phrases_prefixes_exclusions_and_alternatives() {
    let (_dir, store) = open();
    turn(&store, None, "one", "the quick brown fox jumps over the lazy dog", &[]);
    turn(&store, None, "two", "a brown quick fox is not the same", &[]);
    turn(&store, None, "three", "Parsing résumés in café menus", &[]);
    let count = |q: &str| search(&store, q).len();
    assert_eq!(count("\"quick brown\""), 1);
    assert_eq!(count("quick brown"), 2);
    assert_eq!(count("quick -lazy"), 1);
    assert_eq!(count("quick NOT lazy"), 1);
    assert_eq!(count("lazy OR same"), 2);
    assert_eq!(count("pars*"), 1);
    assert_eq!(count("resumes"), 1, "diacritics folded");
    assert_eq!(count("CAFÉ"), 1, "case folded");
    assert_eq!(count("\"quick brown"), 1, "an unclosed quote runs to the end");
}

#[test]
fn chinese_japanese_and_thai_match_inside_sentences() {
    let (_dir, store) = open();
    turn(&store, None, "zh", "我们明天去北京参观故宫博物院。", &[]);
    turn(&store, None, "ja", "東京タワーの近くで美味しいラーメンを食べました。", &[]);
    turn(&store, None, "th", "วันนี้อากาศดีมากและฉันอยากไปเที่ยวทะเล", &[]);
    turn(&store, None, "mixed", "The 数据库 (database) is ready", &[]);
    let first = |q: &str| -> Vec<String> { search(&store, q).into_iter().map(|h| h.title).collect() };
    for (query, title) in [
        ("北京", "zh"),
        ("故宫博物院", "zh"),
        ("宫", "zh"),
        ("ラーメン", "ja"),
        ("東京タワー", "ja"),
        ("美味しい", "ja"),
        ("อากาศ", "th"),
        ("ทะเล", "th"),
        ("เที่ยว", "th"),
        ("数据", "mixed"),
        ("数据库 database", "mixed"),
    ] {
        assert_eq!(first(query), [title], "query {query:?}");
    }
    // Characters in another order are not the word.
    assert!(first("京北").is_empty());
    let hit = &search(&store, "博物院")[0];
    assert!(hit.snippet.contains(&format!("故宫{MATCH_START}博物院{MATCH_END}。")), "{}", hit.snippet);
    let hit = &search(&store, "ทะเล")[0];
    assert!(hit.snippet.ends_with(&format!("{MATCH_START}ทะเล{MATCH_END}")), "{}", hit.snippet);
}

#[test]
fn fts_syntax_in_a_query_never_is_an_sqlite_error() {
    let (_dir, store) = open();
    turn(&store, None, "syntax", "NEAR the (group) of \"quoted\" words: col^umn and -minus AND or OR not", &[]);
    let cases = [
        "\"",
        "\"\"",
        "\"\"\"",
        "*",
        "**",
        "a*b",
        "NEAR",
        "NEAR(",
        "NEAR(a b, 2)",
        "-",
        "--",
        "-(",
        "(",
        ")",
        "()",
        "(a",
        "a)",
        ":",
        "col:",
        ":col",
        "^",
        "^a",
        "a^",
        "\"unbalanced",
        "unbalanced\"",
        "AND",
        "OR",
        "NOT",
        "a AND",
        "OR b",
        "NOT NOT",
        "a OR OR b",
        "+",
        "{a b}",
        "'",
        "[x]",
        "\\",
        "a\"b",
        "\u{E000}",
        "😀",
    ];
    for q in cases {
        match store.search_messages(q, 10) {
            Ok(_) => {}
            Err(Error::Search(_)) => {}
            Err(e) => panic!("query {q:?}: {e}"),
        }
    }
    assert_eq!(search(&store, "NEAR(the").len(), 1);
    assert_eq!(search(&store, "\"quoted\"").len(), 1);
    assert_eq!(search(&store, "col:umn").len(), 1, "punctuation separates words, as in the text");
    assert_eq!(search(&store, "col^umn").len(), 1);
    let err = store.search_messages("-minus", 10).unwrap_err();
    assert!(err.to_string().contains("Add a word to find"), "{err}");
    assert_eq!(err.kind(), switchboard_core::ErrorKind::Config);
}

#[test]
fn the_index_follows_finished_answers_renames_and_deletes() {
    let (dir, store) = open();
    let rows = store.begin_turn(None, "a question about otters", "p", "m").unwrap();
    let rec = store.recorder(&rows.message_id).with_checkpoint_interval(Duration::ZERO);
    rec.emit(ChatEvent::TextDelta { text: "Sea otters ".into() });
    // Each delta after the interval is a checkpoint, but a streaming answer is not indexed yet:
    // its text is found once the answer ends.
    assert!(search(&store, "sea").is_empty());
    rec.emit(ChatEvent::TextDelta { text: "hold hands while sleeping".into() });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
    assert_eq!(kinds(&search(&store, "sea")), [SearchHitKind::Message]);
    assert_eq!(search(&store, "sleeping").len(), 1);
    assert_eq!(search(&store, "sea otters").len(), 1, "one entry per message");
    integrity_check(&dir);

    store.rename(&rows.conversation_id, "Marine mammals").unwrap();
    assert_eq!(kinds(&search(&store, "marine")), [SearchHitKind::Title]);
    assert!(search(&store, "question").iter().all(|h| h.kind != SearchHitKind::Title));

    // Versions: regenerating keeps the first answer off the current path; its hits say so.
    let (conv, first_answer) =
        turn(&store, None, "unique kestrel question", "kestrel answer", &[("{\"bird\":\"kestrel\"}", "kestrel facts")]);
    assert_eq!(search(&store, "kestrel").len(), 5, "title, question, arguments, result, answer");
    let question = store.messages(&conv).unwrap()[0].id.clone();
    let again = store.begin_answer(&conv, &question, ("p", "m"), None).unwrap();
    let rec = store.recorder(&again.message_id).with_checkpoint_interval(Duration::ZERO);
    rec.emit(ChatEvent::TextDelta { text: "falcon answer".into() });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
    let hits = search(&store, "kestrel");
    let off: Vec<SearchHitKind> = hits.iter().filter(|h| !h.on_current_path).map(|h| h.kind).collect();
    assert_eq!(off.len(), 3, "the first answer, its call and result: {hits:#?}");
    assert!(hits.iter().filter(|h| !h.on_current_path).all(|h| h.message_id.as_deref() == Some(first_answer.as_str())));
    assert!(search(&store, "falcon")[0].on_current_path);
    // Switching back puts it on the path again.
    store.select_message(&conv, &first_answer).unwrap();
    assert!(search(&store, "kestrel").iter().all(|h| h.on_current_path));
    assert!(!search(&store, "falcon")[0].on_current_path);

    // Deleting a version takes its calls, results and their entries with it.
    store.delete_version(&conv, &first_answer).unwrap();
    let mut left = kinds(&search(&store, "kestrel"));
    left.sort_by_key(|k| format!("{k:?}"));
    assert_eq!(left, [SearchHitKind::Message, SearchHitKind::Title]);
    integrity_check(&dir);

    // An edit is a new row; the question it replaces stays, as a version off the path.
    store.begin_edit(&conv, &question, "edited osprey question", ("p", "m"), None, &[]).unwrap();
    assert!(search(&store, "osprey")[0].on_current_path);
    let old = search(&store, "kestrel").into_iter().find(|h| h.kind == SearchHitKind::Message).unwrap();
    assert!(!old.on_current_path);
    // A branch copied into a new conversation is indexed as its own rows.
    let copy = store.branch_to_new_conversation(&conv, &question).unwrap();
    assert!(search(&store, "kestrel").iter().any(|h| h.conversation_id == copy && h.kind == SearchHitKind::Message));
    store.delete(&copy).unwrap();
    integrity_check(&dir);

    // Deleting a conversation cascades to its messages, calls and results, and to their entries.
    store.delete(&conv).unwrap();
    store.delete(&rows.conversation_id).unwrap();
    for q in ["kestrel", "otters", "marine", "sleeping"] {
        assert!(search(&store, q).is_empty(), "{q} left a stale hit");
    }
    let raw = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
    let left: i64 = raw.query_row("SELECT count(*) FROM search_index_docsize", [], |r| r.get(0)).unwrap();
    assert_eq!(left, 0, "no entries outlive their rows");
    integrity_check(&dir);
}

/// A new answer streaming `text`, every delta checkpointed; no Done yet.
fn streaming(store: &Store, text: &str) -> (String, String, Recorder) {
    let rows = store.begin_turn(None, "a question", "p", "m").unwrap();
    let rec = store.recorder(&rows.message_id).with_checkpoint_interval(Duration::ZERO);
    for word in text.split_inclusive(' ') {
        rec.emit(ChatEvent::TextDelta { text: word.into() });
    }
    rec.flush();
    assert!(rec.take_error().is_none());
    (rows.conversation_id, rows.message_id, rec)
}

/// Ends the answer and drops its recorder (which holds the store open).
fn end(rec: Recorder, reason: FinishReason) {
    rec.emit(ChatEvent::Done { finish_reason: reason, usage: Usage::default(), tool_calls_made: 0 });
    assert!(rec.take_error().is_none());
}

fn message_hits(store: &Store, query: &str) -> usize {
    search(store, query).iter().filter(|h| h.kind == SearchHitKind::Message).count()
}

#[test]
fn a_streaming_answer_is_indexed_once_it_ends_however_it_ends() {
    let (dir, store) = open();

    // Done: text checkpointed while streaming is not in the index; the final text is, once.
    let (_, _, rec) = streaming(&store, "puffins nest in burrows");
    assert_eq!(message_hits(&store, "puffins"), 0, "checkpointed while streaming: not indexed");
    integrity_check(&dir);
    rec.emit(ChatEvent::TextDelta { text: " on cliffs".into() });
    end(rec, FinishReason::Stop);
    assert_eq!(message_hits(&store, "puffins"), 1);
    assert_eq!(message_hits(&store, "cliffs"), 1, "the final text is what is indexed");
    integrity_check(&dir);

    // Stopped by the person (cancelled) and failed (an error, then done): indexed too.
    let (_, _, rec) = streaming(&store, "gannets dive");
    assert_eq!(message_hits(&store, "gannets"), 0);
    end(rec, FinishReason::Cancelled);
    assert_eq!(message_hits(&store, "gannets"), 1, "a stopped answer is found");
    let (_, _, rec) = streaming(&store, "cormorants dry their wings");
    rec.emit(ChatEvent::Error {
        kind: switchboard_core::ErrorKind::Network,
        message: "The server hung up.".into(),
        retryable: true,
        detail: None,
    });
    assert_eq!(message_hits(&store, "cormorants"), 0, "an error alone does not end the answer");
    end(rec, FinishReason::Error);
    assert_eq!(message_hits(&store, "cormorants"), 1, "a failed answer's partial text is found");
    integrity_check(&dir);

    // Deleting a conversation whose answer streams (never indexed) leaves the index consistent.
    let (doomed, _, rec) = streaming(&store, "albatrosses glide");
    drop(rec);
    store.delete(&doomed).unwrap();
    assert_eq!(message_hits(&store, "albatrosses"), 0);
    assert_eq!(message_hits(&store, "puffins"), 1, "other entries untouched");
    integrity_check(&dir);

    // A process that dies mid-answer: start-up recovery ends the answer (interrupted) and that
    // indexes its checkpointed text.
    let (_, killed, rec) = streaming(&store, "shearwaters migrate far");
    assert_eq!(message_hits(&store, "shearwaters"), 0);
    integrity_check(&dir);
    drop((rec, store));
    let store = Store::open(&dir.path().join(DB_FILE)).unwrap();
    assert_eq!(store.recovered_on_open(), 1);
    let hits = search(&store, "shearwaters");
    assert_eq!(kinds(&hits), [SearchHitKind::Message]);
    assert_eq!(hits[0].message_id.as_deref(), Some(killed.as_str()));
    assert_eq!(message_hits(&store, "puffins"), 1, "finished answers are not indexed twice");
    integrity_check(&dir);
}

#[test]
fn deleting_an_entry_that_is_not_in_the_index_is_harmless() {
    let (dir, store) = open();
    turn(&store, None, "a question", "terns fly far", &[]);
    let raw = rusqlite::Connection::open(dir.path().join(DB_FILE)).unwrap();
    // What the message delete trigger runs for a streaming row: a rowid the index never had.
    let n = raw.execute("DELETE FROM search_index WHERE rowid = ?1", [(1_i64 << 40) + 9_999]).unwrap();
    assert!(n <= 1);
    assert_eq!(message_hits(&store, "terns"), 1);
    integrity_check(&dir);
    // A streaming row deleted directly (its trigger deletes the absent entry).
    let (_, answer, _rec) = streaming(&store, "skuas steal fish");
    raw.pragma_update(None, "foreign_keys", "ON").unwrap();
    raw.execute("DELETE FROM messages WHERE id = ?1", [&answer]).unwrap();
    assert_eq!(message_hits(&store, "skuas"), 0);
    assert_eq!(message_hits(&store, "terns"), 1);
    integrity_check(&dir);
}

#[test]
fn results_are_bounded_and_newer_ranks_first_among_equals() {
    let (_dir, store) = open();
    let conv = turn(&store, None, "start", "first heron note", &[]).0;
    for i in 0..30 {
        turn(&store, Some(&conv), &format!("q{i}"), "heron note", &[]);
    }
    assert_eq!(store.search_messages("heron", 5).unwrap().len(), 5);
    assert_eq!(store.search_messages("heron", 0).unwrap().len(), 1, "at least one");
    assert_eq!(store.search_messages("heron", 10_000).unwrap().len(), 31);
    let hits = store.search_messages("heron note", 50).unwrap();
    // Equal text: the newest first.
    assert!(hits.windows(2).all(|w| w[0].created_at >= w[1].created_at || w[0].snippet != w[1].snippet));
}
