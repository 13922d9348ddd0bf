//! Upgrading: a database of every earlier schema version (1..=7), holding the rows that version
//! could hold, shows every conversation exactly as before once migrated to the message tree, and
//! rebuilds the same provider history.

use rusqlite::Connection;
use serde_json::{Value, json};
use switchboard_core::history::{StoredCall, assistant_messages};
use switchboard_core::{ChatEvent, Message, ProviderState, ToolImage, ToolStatus};
use switchboard_store::{MIGRATIONS, NestedEvent, Role, SCHEMA_VERSION, Store, StoredMessage};

/// What a message shows, in a shape both the raw rows and the store's view reduce to.
#[derive(Debug, PartialEq)]
struct Shown {
    id: String,
    role: String,
    content: String,
    reasoning: String,
    status: String,
    provider: Option<String>,
    model: Option<String>,
    finish_reason: Option<String>,
    error: Option<(String, Option<String>)>,
    notices: Value,
    response_id: Option<String>,
    states: Value,
    calls: Vec<ShownCall>,
}

#[derive(Debug, PartialEq)]
struct ShownCall {
    call_id: String,
    name: String,
    arguments: String,
    text_offset: usize,
    iteration: u32,
    index: u32,
    status: String,
    result: Option<(String, String, u64, Value)>,
    nested: Value,
}

fn parse_or(json: Option<String>, default: Value) -> Value {
    json.and_then(|j| serde_json::from_str(&j).ok()).unwrap_or(default)
}

/// The conversation as the build before the tree read it: every message, in seq order.
fn raw(conn: &Connection, conversation: &str, version: usize) -> Vec<Shown> {
    let opt = |column: &str, since: usize| if version >= since { column.to_owned() } else { "NULL".to_owned() };
    let mut stmt = conn
        .prepare(&format!(
            "SELECT id, role, content, reasoning, status, provider, model, finish_reason, error_message, {},
                    notices, provider_response_id, {} FROM messages WHERE conversation_id = ?1 ORDER BY seq",
            opt("error_detail", 5),
            opt("provider_state", 4)
        ))
        .unwrap();
    let mut out: Vec<Shown> = stmt
        .query_map([conversation], |r| {
            let error_message: Option<String> = r.get(8)?;
            let error_detail: Option<String> = r.get(9)?;
            Ok(Shown {
                id: r.get(0)?,
                role: r.get(1)?,
                content: r.get(2)?,
                reasoning: r.get(3)?,
                status: r.get(4)?,
                provider: r.get(5)?,
                model: r.get(6)?,
                finish_reason: r.get(7)?,
                error: error_message.map(|m| (m, error_detail)),
                notices: parse_or(r.get(10)?, json!([])),
                response_id: r.get(11)?,
                states: parse_or(r.get(12)?, json!([])),
                calls: Vec::new(),
            })
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    for m in &mut out {
        let mut stmt = conn
            .prepare(&format!(
                "SELECT tc.call_id, tc.name, tc.arguments, tc.text_offset, tc.iteration, tc.idx, tc.status,
                        tr.status, tr.output, tr.duration_ms, {}, {}
                 FROM tool_calls tc LEFT JOIN tool_results tr ON tr.tool_call_id = tc.id
                 WHERE tc.message_id = ?1 ORDER BY tc.iteration, tc.idx",
                opt("tr.images", 3),
                opt("tc.nested", 7)
            ))
            .unwrap();
        m.calls = stmt
            .query_map([&m.id], |r| {
                let result_status: Option<String> = r.get(7)?;
                Ok(ShownCall {
                    call_id: r.get(0)?,
                    name: r.get(1)?,
                    arguments: r.get(2)?,
                    text_offset: r.get(3)?,
                    iteration: r.get(4)?,
                    index: r.get(5)?,
                    status: r.get(6)?,
                    result: match result_status {
                        None => None,
                        Some(s) => Some((s, r.get(8)?, r.get(9)?, parse_or(r.get(10)?, json!([])))),
                    },
                    nested: parse_or(r.get(11)?, json!([])),
                })
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
    }
    out
}

fn shown(m: &StoredMessage) -> Shown {
    Shown {
        id: m.id.clone(),
        role: m.role.as_str().to_owned(),
        content: m.content.clone(),
        reasoning: m.reasoning.clone(),
        status: m.status.as_str().to_owned(),
        provider: m.provider.clone(),
        model: m.model.clone(),
        finish_reason: m.finish_reason.map(|f| serde_json::to_value(f).unwrap().as_str().unwrap().to_owned()),
        error: m.error.as_ref().map(|e| (e.message.clone(), e.detail.clone())),
        notices: serde_json::to_value(&m.notices).unwrap(),
        response_id: m.provider_response_id.clone(),
        states: serde_json::to_value(&m.provider_states).unwrap(),
        calls: m
            .tool_calls
            .iter()
            .map(|c| ShownCall {
                call_id: c.call_id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                text_offset: c.text_offset,
                iteration: c.iteration,
                index: c.index,
                status: c.status.as_str().to_owned(),
                result: c.result.as_ref().map(|r| {
                    (
                        r.status.as_str().to_owned(),
                        r.output.clone(),
                        r.duration_ms,
                        serde_json::to_value(&r.images).unwrap(),
                    )
                }),
                nested: serde_json::to_value(&c.nested).unwrap(),
            })
            .collect(),
    }
}

/// The history the build before the tree sent: every message in order, rebuilt from its rows.
fn old_history(messages: &[Shown]) -> Vec<Message> {
    let mut out = Vec::new();
    for m in messages {
        if m.role == "user" {
            out.push(Message::user(m.content.clone()));
            continue;
        }
        if m.status == "streaming" || (m.content.is_empty() && m.calls.is_empty()) {
            continue;
        }
        let calls: Vec<StoredCall> = m
            .calls
            .iter()
            .map(|c| StoredCall {
                id: c.call_id.clone(),
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                text_offset: c.text_offset,
                iteration: c.iteration,
                result: c.result.as_ref().map(|r| (ToolStatus::parse(&r.0).unwrap(), r.1.clone())),
                images: c.result.as_ref().map(|r| serde_json::from_value(r.3.clone()).unwrap()).unwrap_or_default(),
                untrusted: None,
            })
            .collect();
        let states: Vec<(u32, ProviderState)> = serde_json::from_value(m.states.clone()).unwrap();
        out.extend(assistant_messages(&m.content, &calls, &states, switchboard_core::paging::DEFAULT_LIMIT));
    }
    out
}

/// Fills a database of schema `version` with what that version could hold.
fn fill(conn: &Connection, version: usize) {
    let exec = |sql: &str, params: &[&dyn rusqlite::ToSql]| {
        conn.execute(sql, params).unwrap();
    };
    for (c, title) in [("c1", "tools and agents"), ("c2", "errors and notices"), ("c3", "empty")] {
        exec("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?1, ?2, 1, 2)", &[&c, &title]);
    }
    let message = |id: &str, conv: &str, seq: i64, role: &str, content: &str, status: &str| {
        exec(
            "INSERT INTO messages (id, conversation_id, seq, role, content, reasoning, status, provider, model,
                                   finish_reason, notices, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?3, ?3)",
            &[
                &id,
                &conv,
                &seq,
                &role,
                &content,
                &if role == "assistant" { "thinking…" } else { "" },
                &status,
                &(role == "assistant").then_some("mock"),
                &(role == "assistant").then_some("mock-model"),
                &(role == "assistant" && status == "complete").then_some("stop"),
                &if status == "error" { r#"[{"kind":"retrying","message":"retrying once"}]"# } else { "[]" },
            ],
        );
    };
    message("u1", "c1", 1, "user", "What time is it in Paris? ```", "complete");
    message("a1", "c1", 2, "assistant", "Let me check. It is noon. Then asked the agent: done.", "complete");
    message("u2", "c1", 3, "user", "And the weather?", "complete");
    message("a2", "c1", 4, "assistant", "Partly", "interrupted");
    message("u3", "c2", 1, "user", "fail please", "complete");
    message("a3", "c2", 2, "assistant", "", "error");
    message("u4", "c2", 3, "user", "again", "complete");
    message("a4", "c2", 4, "assistant", "stopped here", "cancelled");
    exec("UPDATE messages SET error_kind = 'network', error_message = 'The server hung up.' WHERE id = 'a3'", &[]);
    exec("UPDATE messages SET provider_response_id = 'resp_1' WHERE id = 'a1'", &[]);
    let call = |id: &str, message: &str, call_id: &str, iteration: i64, idx: i64, offset: i64, status: &str| {
        exec(
            "INSERT INTO tool_calls (id, message_id, call_id, iteration, idx, name, source, arguments, text_offset,
                                     status, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 'clock__now', '{\"kind\":\"mcp\",\"server\":\"clock\"}', '{\"tz\":\"Paris\"}',
                     ?6, ?7, 1)",
            &[&id, &message, &call_id, &iteration, &idx, &offset, &status],
        );
    };
    call("t1", "a1", "call_1", 1, 0, 14, "ok");
    call("t2", "a1", "call_2", 1, 1, 14, "error");
    call("t3", "a1", "call_3", 2, 0, 27, "ok");
    call("t4", "a2", "call_4", 1, 0, 6, "cancelled");
    let result = |call: &str, status: &str, output: &str| {
        exec(
            "INSERT INTO tool_results (tool_call_id, status, output, duration_ms, created_at) VALUES (?1, ?2, ?3, 7, 1)",
            &[&call, &status, &output],
        );
    };
    result("t1", "ok", "12:00 ```not a fence end");
    result("t2", "error", "no such zone");
    result("t3", "ok", "done");
    if version >= 2 {
        exec("UPDATE messages SET turn_options = '{\"useTools\":true}' WHERE role = 'user'", &[]);
    }
    if version >= 3 {
        let images = serde_json::to_string(&vec![ToolImage::checked("image/png", "iVBORw0KGgo=").unwrap()]).unwrap();
        exec("UPDATE tool_results SET images = ?1 WHERE tool_call_id = 't1'", &[&images]);
    }
    if version >= 4 {
        let state = ProviderState {
            api: "openai-responses".into(),
            origin: "http://127.0.0.1:1".into(),
            data: json!({"id": "resp_1"}),
        };
        let states = serde_json::to_string(&vec![(1_u32, state)]).unwrap();
        exec("UPDATE messages SET provider_state = ?1, cache_write_tokens = 5 WHERE id = 'a1'", &[&states]);
    }
    if version >= 5 {
        exec("UPDATE messages SET error_detail = 'HTTP 502 from the proxy' WHERE id = 'a3'", &[]);
        exec("UPDATE conversations SET pinned = 1 WHERE id = 'c2'", &[]);
    }
    if version >= 6 {
        exec("UPDATE conversations SET instructions = 'Be brief.' WHERE id = 'c1'", &[]);
    }
    if version >= 7 {
        let inner = ChatEvent::ToolProgress {
            id: "sub_1".into(),
            instance: Some("Helper[0]".into()),
            text: None,
            event: Some(Box::new(ChatEvent::TextDelta { text: "deep".into() })),
        };
        let nested = vec![
            NestedEvent { instance: "Helper[0]".into(), event: ChatEvent::TextDelta { text: "looking".into() } },
            NestedEvent { instance: "Helper[0]".into(), event: inner },
        ];
        exec("UPDATE tool_calls SET nested = ?1 WHERE id = 't3'", &[&serde_json::to_string(&nested).unwrap()]);
        exec("UPDATE conversations SET agent = 'Planner' WHERE id = 'c1'", &[]);
    }
}

fn path_first(conversation: &str, store: &Store) -> String {
    store.messages(conversation).unwrap()[0].id.clone()
}

#[test]
fn every_earlier_schema_upgrades_to_the_tree_showing_and_sending_the_same_conversations() {
    // 9 (the search index) adds no columns: its own rows are what it indexes, checked below.
    // 10 (a chat's setup) adds a column neither messages() nor history() reads; its own migration
    // test (in schema.rs) checks what it is filled with.
    // 11 (per-request usage) adds a table of new rows only: an upgraded answer has no requests
    // (checked below) and every total it had stays on its message row.
    // 12 (compactions, pins): an upgraded conversation has no compaction and no pin, so a turn
    // starts from its whole history; both work on it (checked below).
    // 13 (the last context count of each answer) adds a table that starts empty: an old answer
    // has no count until it is asked again.
    // 14 (token counts per text) adds a cache that starts empty: an upgraded conversation's first
    // turn counts its history once and stores the counts.
    // 15 (attached files) adds two tables that start empty: an upgraded question has no files
    // (checked below) and a new one on an upgraded database keeps its own.
    // 16 (why a compaction's summary was not written by the picked model) adds a column an
    // upgraded conversation has no compaction to fill.
    // 17 (a note on a PDF's cut text) adds a column that is NULL for files stored before: checked
    // in schema.rs (`a_file_stored_before_notes_on_cut_text_has_none`).
    assert_eq!(SCHEMA_VERSION, 17, "extend this test with the new version's rows");
    for version in 1..=7_usize {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("switchboard.db");
        let before = {
            let conn = Connection::open(&path).unwrap();
            for sql in &MIGRATIONS[..version] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", version as i64).unwrap();
            fill(&conn, version);
            ["c1", "c2", "c3"].map(|c| raw(&conn, c, version))
        };
        assert!(before[0][1].calls.len() == 3 && before[0][1].calls[2].text_offset == 27);
        if version >= 7 {
            assert_ne!(before[0][1].calls[2].nested, json!([]), "version {version}: the fixture has nested runs");
        }
        let store = Store::open(&path).unwrap();
        for (conversation, before) in ["c1", "c2", "c3"].iter().zip(&before) {
            let after = store.messages(conversation).unwrap();
            let after_shown: Vec<Shown> = after.iter().map(shown).collect();
            assert_eq!(&after_shown, before, "version {version}, conversation {conversation}");
            assert_eq!(store.history(conversation).unwrap(), old_history(before), "version {version}, {conversation}");
            let turn = store.turn_history(conversation, &|_| None, usize::MAX).unwrap();
            assert_eq!(turn.messages, old_history(before));
            assert!(turn.compaction.is_empty() && turn.pinned.is_empty() && after.iter().all(|m| !m.pinned));
            assert!(store.compactions(conversation).unwrap().is_empty());
            for (i, m) in after.iter().enumerate() {
                assert_eq!(m.versions.as_slice(), std::slice::from_ref(&m.id), "one path: no versions");
                assert_eq!(m.parent_id, i.checked_sub(1).map(|p| after[p].id.clone()));
            }
        }
        assert_eq!(store.last_question("c1").unwrap().text, "And the weather?");
        // Every earlier row is in the search index: the titles, and the question found on its path.
        let hits = store.search_messages("weather", 50).unwrap();
        assert!(hits.iter().any(|h| h.conversation_id == "c1" && h.on_current_path), "version {version}: {hits:#?}");
        assert_eq!(store.search_messages("notices", 50).unwrap()[0].conversation_id, "c2");
        assert_eq!(store.messages("c1").unwrap()[0].role, Role::User);
        // The tree works on an upgraded conversation: a new turn goes under its last message.
        let rows = store.begin_turn(Some("c2"), "third", "mock", "m").unwrap();
        let path = store.messages("c2").unwrap();
        assert_eq!(path.len(), 6);
        assert_eq!(path[4].id, rows.user_message_id);
        assert_eq!(path[4].parent_id.as_deref(), Some("a4"));
        // c3 has no messages: still opens, and a first turn roots its tree.
        assert!(store.messages("c3").unwrap().is_empty());
        let first = store.begin_turn(Some("c3"), "hello", "mock", "m").unwrap();
        assert_eq!(store.messages("c3").unwrap()[0].id, first.user_message_id);
        // Answers from before per-request usage have no requests; their totals stay on the row.
        let a1 = store.message_usage("a1").unwrap();
        assert!(a1.requests.is_empty() && a1.total.requests == 0, "version {version}: {a1:?}");
        assert_eq!(store.conversation_usage("c1").unwrap().total.requests, 0);
        // A new turn on an upgraded database records its requests.
        let rec = store.recorder(&rows.message_id);
        use switchboard_core::EventSink;
        rec.emit(ChatEvent::Started {
            conversation_id: "c2".into(),
            message_id: rows.message_id.clone(),
            user_message_id: rows.user_message_id.clone(),
            provider: "mock".into(),
            model: "m".into(),
        });
        let usage = switchboard_core::Usage { prompt_tokens: 7, completion_tokens: 2, ..Default::default() };
        rec.emit(ChatEvent::Usage {
            usage,
            total: usage,
            request: 1,
            cost_usd: None,
            estimated: false,
            agent_call: None,
        });
        assert!(rec.take_error().is_none());
        assert_eq!(store.conversation_usage("c2").unwrap().total.prompt_tokens, 7, "version {version}");
        // An upgraded question has no files; a new one on an upgraded database keeps its own.
        assert!(store.messages("c1").unwrap().iter().all(|m| m.attachments.is_empty()));
        let file = store
            .put_attachment(switchboard_store::NewAttachment {
                bytes: b"fn main() {}",
                name: "main.rs",
                mime_type: "text/x-rust",
                kind: switchboard_core::AttachmentKind::Text,
                width: None,
                height: None,
                pages: None,
                text_note: None,
                text: Some("fn main() {}".into()),
                thumbnail: None,
            })
            .unwrap();
        let with_file =
            store.begin_turn_with(Some("c3"), "see file", "mock", "m", None, std::slice::from_ref(&file)).unwrap();
        let shown = store.message("c3", &with_file.user_message_id).unwrap();
        assert_eq!(shown.attachments, [file], "version {version}");
        assert!(store.turn_history("c1", &|_| None, usize::MAX).unwrap().attachments.is_empty());
        // Pins and compactions work on an upgraded conversation.
        store.set_message_pinned("c1", &path_first("c1", &store), true).unwrap();
        assert_eq!(store.turn_history("c1", &|_| None, usize::MAX).unwrap().pinned, [0]);
    }
}
