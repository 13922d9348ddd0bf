//! Export and import: the app's JSON document round-trips every stored row, ChatGPT's export comes
//! in with its branches and current path, Markdown stays valid around fences, and every bad file
//! gets a clear message and stores nothing, and a bad conversation in a file is left out with why.

#![recursion_limit = "256"]

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use switchboard_core::GenerationOptions;
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::export::ExportFormat;
use switchboard_service::export::import::{ImportFormat, parse};
use switchboard_service::ipc::{ChatSetupChange, SendRequest};
use switchboard_store::{ProviderProfile, Role, Store};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/chatgpt_conversations.json");

fn service_with(store: Store) -> Service {
    Service::new(store, Arc::new(MemoryStore::new())).unwrap()
}

fn empty() -> (Service, Store) {
    let store = Store::open_in_memory().unwrap();
    (service_with(store.clone()), store)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A document with one conversation using every field a row can hold.
fn rich_document() -> Value {
    json!({
        "format": "switchboard.conversations",
        "version": 1,
        "conversations": [{
            "id": "0190a000-0000-7000-8000-000000000001",
            "title": "Everything stored ✓",
            "createdAt": 1_700_000_000_000_i64,
            "updatedAt": 1_700_000_009_000_i64,
            "pinned": false,
            "archived": true,
            "instructions": "Answer in French.",
            "agent": "Lead",
            "disabledTools": ["shell"],
            "approvedTools": ["get_time"],
            "headId": "m2",
            "setup": {
                "toolsets": ["research", "files"],
                "generation": {"maxOutputTokens": 900, "reasoningEffort": "high", "temperature": 0.3, "topP": 0.95},
                "provider": "mock",
                "model": "m"
            },
            "messages": [
                {
                    "id": "m1", "parentId": null, "chosenAt": 5, "seq": 1, "role": "user",
                    "content": "Run it", "reasoning": "", "status": "complete",
                    "provider": null, "model": null, "finishReason": null,
                    "usage": {"promptTokens": 0, "completionTokens": 0, "reasoningTokens": 0, "cachedTokens": 0, "cacheWriteTokens": 0},
                    "toolCallsMade": 0, "error": null, "notices": [], "providerResponseId": null,
                    "turnOptions": {"provider": "mock", "model": "m", "tools": true},
                    "providerState": null, "createdAt": 1_700_000_001_000_i64, "updatedAt": 1_700_000_001_000_i64,
                    "toolCalls": []
                },
                {
                    "id": "m2", "parentId": "m1", "chosenAt": 5, "seq": 2, "role": "assistant",
                    "content": "Before. After.", "reasoning": "thinking…", "status": "error",
                    "provider": "mock", "model": "m", "finishReason": "error",
                    "usage": {"promptTokens": 11, "completionTokens": 22, "reasoningTokens": 3, "cachedTokens": 4, "cacheWriteTokens": 5},
                    "toolCallsMade": 2,
                    "error": {"kind": "server", "message": "The provider failed", "detail": "HTTP 500"},
                    "notices": [{"kind": "retrying", "message": "Retried once"}],
                    "providerResponseId": "resp_1",
                    "turnOptions": null,
                    "providerState": [[1, {"api": "responses", "origin": "mock", "data": {"items": [1, 2]}}]],
                    "createdAt": 1_700_000_002_000_i64, "updatedAt": 1_700_000_009_000_i64,
                    "toolCalls": [
                        {
                            "id": "tc1", "callId": "c1", "iteration": 1, "index": 0, "name": "run_code",
                            "source": {"kind": "mcp", "server": "py"}, "arguments": "{\"code\":\"print(1)\"}",
                            "textOffset": 7, "status": "ok", "createdAt": 1_700_000_003_000_i64,
                            "nested": null,
                            "result": {"status": "ok", "output": "Here:\n```\n1\n```\ndone", "durationMs": 12,
                                       "createdAt": 1_700_000_004_000_i64,
                                       "images": [{"mimeType": "image/png", "data": "iVBORw0KGgo="}]}
                        },
                        {
                            "id": "tc2", "callId": "c2", "iteration": 1, "index": 1, "name": "Scout",
                            "source": {"kind": "agent"}, "arguments": "{\"task\":\"look\"}",
                            "textOffset": 7, "status": "ok", "createdAt": 1_700_000_003_500_i64,
                            "nested": [{"instance": "Scout[1]", "event": {"type": "textDelta", "text": "looked"}}],
                            "result": {"status": "ok", "output": "looked", "durationMs": 40,
                                       "createdAt": 1_700_000_005_000_i64, "images": null}
                        }
                    ]
                }
            ]
        }]
    })
}

async fn real_conversation(service: &Service, mock: &MockServer) -> String {
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("m".into()),
        options: Default::default(),
    };
    service.add_provider(&profile, true).unwrap();
    let turn = service.prepare(SendRequest::text(None, "What time is it in 東京?")).unwrap();
    let id = turn.started.conversation_id.clone();
    let sink: Arc<dyn switchboard_core::EventSink> = Arc::new(|_e: switchboard_core::ChatEvent| {});
    service
        .run(
            turn,
            sink,
            Arc::new(switchboard_core::turn::FixedApprover(switchboard_core::turn::ApprovalDecision::Once)),
        )
        .await;
    service.set_chat_instructions(&id, "Be brief.").unwrap();
    service.set_pinned(&id, true).unwrap();
    let change = ChatSetupChange {
        generation: Some(GenerationOptions { temperature: Some(0.7), ..Default::default() }),
        ..Default::default()
    };
    service.set_chat_setup(&id, change).unwrap();
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_imported_into_an_empty_store_exports_again_identical() {
    let mock = MockServer::start(Script::new([
        Reply::text_then_tool_calls("Checking ", &[("c1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)]),
        Reply::text("It is late."),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let (source, _) = empty();
    let real = real_conversation(&source, &mock).await;
    let rich = write(dir.path(), "rich.json", &rich_document().to_string());
    let report = source.import_conversations(&rich).unwrap();
    assert_eq!(report.imported.len(), 1, "{report:?}");

    let first = source.export_document(None).unwrap();
    let doc: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(doc["format"], "switchboard.conversations");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["conversations"].as_array().unwrap().len(), 2);
    let exported_real = doc["conversations"].as_array().unwrap().iter().find(|c| c["id"] == real.as_str()).unwrap();
    assert_eq!(exported_real["instructions"], "Be brief.");
    assert_eq!(exported_real["pinned"], true);
    assert_eq!(
        exported_real["setup"],
        json!({"toolsets": [], "generation": {"temperature": 0.7}, "provider": "mock", "model": "m"}),
        "the chat's setup travels"
    );
    let answer = &exported_real["messages"][1];
    assert_eq!(answer["toolCalls"][0]["name"], "get_time");
    assert_eq!(answer["toolCalls"][0]["textOffset"], 9);
    assert!(exported_real["messages"][0]["turnOptions"].is_object(), "the choices it was asked with travel");
    // The hand-made conversation comes back exactly as written.
    let exported_rich = doc["conversations"].as_array().unwrap().iter().find(|c| c["title"] == "Everything stored ✓");
    assert_eq!(exported_rich.unwrap(), &rich_document()["conversations"][0]);

    let file = write(dir.path(), "all.json", &first);
    let (target, _) = empty();
    let report = target.import_conversations(&file).unwrap();
    assert_eq!((report.imported.len(), report.skipped), (2, 0), "{report:?}");
    assert_eq!(report.format, ImportFormat::Switchboard);
    assert_eq!(target.export_document(None).unwrap(), first, "export → import → export is identical");
    // What shows is what showed: the same view of the real conversation.
    assert_eq!(target.open_all(&real).unwrap().messages, source.open_all(&real).unwrap().messages);
    assert_eq!(target.chat_setup(&real).unwrap(), source.chat_setup(&real).unwrap());
    let rich_id = "0190a000-0000-7000-8000-000000000001";
    assert_eq!(target.chat_setup(rich_id).unwrap().toolsets, ["research", "files"]);
}

#[test]
fn importing_the_same_file_twice_skips_everything_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (service, store) = empty();
    let file = write(dir.path(), "rich.json", &rich_document().to_string());
    let preview = service.preview_import(&file).unwrap();
    assert_eq!((preview.conversations, preview.already_imported, preview.messages), (1, 0, 2));
    service.import_conversations(&file).unwrap();
    let before = service.export_document(None).unwrap();
    let changes = store.total_changes();

    let preview = service.preview_import(&file).unwrap();
    assert_eq!(preview.summary, "Switchboard export: 1 conversation, 1 already imported");
    assert!(preview.titles.is_empty());
    let again = service.import_conversations(&file).unwrap();
    assert_eq!(again.summary, "Nothing imported: already imported: 1 conversation skipped.");
    assert!(again.imported.is_empty() && again.skipped == 1);
    assert_eq!(store.total_changes(), changes, "nothing written");
    assert_eq!(service.export_document(None).unwrap(), before);

    let chatgpt = Path::new(FIXTURE);
    assert_eq!(service.import_conversations(chatgpt).unwrap().imported.len(), 3);
    let twice = service.import_conversations(chatgpt).unwrap();
    assert_eq!(twice.summary, "Nothing imported: already imported: 3 conversations skipped.");
}

#[test]
fn chatgpt_conversations_come_in_with_tool_turns_images_and_hidden_messages_left_out() {
    let (service, store) = empty();
    let preview = service.preview_import(Path::new(FIXTURE)).unwrap();
    assert_eq!(preview.format, ImportFormat::Chatgpt);
    assert_eq!(preview.summary, "ChatGPT export: 3 conversations");
    let report = service.import_conversations(Path::new(FIXTURE)).unwrap();
    assert_eq!(report.imported.len(), 3, "{report:?}");
    assert!(report.summary.starts_with("Imported 3 conversations"), "{}", report.summary);

    let list = service.conversations().unwrap();
    let by_title = |t: &str| list.iter().find(|c| c.title == t).unwrap_or_else(|| panic!("{t} in {list:?}")).clone();

    let primes = by_title("Primes with Python");
    assert!(primes.archived);
    let view = service.open_all(&primes.id).unwrap();
    let shown: Vec<&str> = view.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(view.messages.len(), 2, "the hidden custom instructions are not a message: {shown:?}");
    assert!(!shown.iter().any(|t| t.contains("Be brief")));
    let answer = &view.messages[1];
    assert_eq!(answer.role, Role::Assistant);
    assert_eq!(answer.model.as_deref(), Some("gpt-4"));
    assert_eq!(answer.tool_calls.len(), 1);
    let call = &answer.tool_calls[0];
    assert_eq!((call.name.as_str(), call.text_offset), ("python", 0));
    assert!(call.arguments.contains("range(2, 30)"), "{}", call.arguments);
    assert_eq!(call.result.as_ref().unwrap().output, "[2, 3, 5, 7, 11, 13, 17, 19, 23, 29]");
    assert!(answer.content.starts_with("Ten primes"));
    // The history a model would get continues the conversation.
    let history = store.history(&primes.id).unwrap();
    assert_eq!(history.len(), 4, "question, call, result, answer: {history:?}");

    let cat = by_title("Cat picture, then Rust news");
    let view = service.open_all(&cat.id).unwrap();
    assert_eq!(
        view.messages[0].content,
        "[image: file-Kx9YbQ2, 1024×768]\nWhat is in this picture?\n[attachment: cat-on-keyboard.jpg]"
    );
    let browse = &view.messages[3];
    assert_eq!(browse.tool_calls[0].name, "browser");
    assert!(browse.tool_calls[0].result.as_ref().unwrap().output.contains("Rust 2024 edition guide"));
    assert!(browse.content.contains("`gen`"));

    let tokyo = by_title("Tokyo trip 🗾");
    let view = service.open_all(&tokyo.id).unwrap();
    let path: Vec<&str> = view.messages.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(path.len(), 4, "the current path only: {path:?}");
    assert_eq!(path[0], "Plan a 2-day trip to 東京 on a budget");
    assert_eq!(view.messages.last().unwrap().content, "Fushimi Inari at dawn, then Gion in the evening.");
    assert_eq!(view.messages[0].versions.len(), 2, "the edited question is version 2 of 2");
    assert_eq!(view.messages[0].versions[1], view.messages[0].id);
    // Version 1 holds the first question with its two answers (the regenerated one current there).
    let first = view.messages[0].versions[0].clone();
    store.select_message(&tokyo.id, &first).unwrap();
    let view = service.open_all(&tokyo.id).unwrap();
    assert!(view.messages[0].content.starts_with("Plan a 3-day"));
    assert_eq!(view.messages[1].versions.len(), 2, "{:?}", view.messages[1]);
    assert!(view.messages[1].content.contains("rail pass"), "the latest answer: {}", view.messages[1].content);
    assert_eq!(tokyo.created_at, 1_700_000_010_000);
}

#[test]
fn chatgpt_branches_become_versions_and_the_current_node_the_current_path() {
    let bytes = std::fs::read(FIXTURE).unwrap();
    let switchboard_service::export::import::Parsed { format, records, refused } = parse(&bytes).unwrap();
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(format, ImportFormat::Chatgpt);
    let tokyo = records.iter().find(|r| r.title == "Tokyo trip 🗾").unwrap();
    let by_id = |id: &str| tokyo.messages.iter().find(|m| m.id == id).unwrap();
    let roots: Vec<_> = tokyo.messages.iter().filter(|m| m.parent_id.is_none()).collect();
    assert_eq!(roots.len(), 2, "the edited first question is a second version of it");
    assert!(roots.iter().all(|m| m.role == Role::User));
    let first = roots.iter().find(|m| m.content.starts_with("Plan a 3-day")).unwrap();
    let answers: Vec<_> = tokyo.messages.iter().filter(|m| m.parent_id.as_deref() == Some(first.id.as_str())).collect();
    assert_eq!(answers.len(), 2, "the regenerated answer is a second version");
    // The current path: the edited question, its answer, the follow-up and its answer.
    let head = by_id(tokyo.head_id.as_deref().unwrap());
    assert_eq!(head.content, "Fushimi Inari at dawn, then Gion in the evening.");
    let mut path = vec![head];
    while let Some(p) = path.last().unwrap().parent_id.as_deref() {
        path.push(by_id(p));
    }
    path.reverse();
    let texts: Vec<&str> = path.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(texts[0], "Plan a 2-day trip to 東京 on a budget");
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert!(path.iter().all(|m| m.chosen_at > 0));
    assert!(tokyo.messages.iter().filter(|m| !path.iter().any(|p| p.id == m.id)).all(|m| m.chosen_at == 0));
    // Along every path positions increase.
    for m in &tokyo.messages {
        if let Some(p) = &m.parent_id {
            assert!(by_id(p).seq < m.seq);
        }
    }
}

#[test]
fn markdown_export_fences_tool_output_that_holds_a_fence() {
    let dir = tempfile::tempdir().unwrap();
    let (service, _) = empty();
    service.import_conversations(&write(dir.path(), "rich.json", &rich_document().to_string())).unwrap();
    let id = service.conversations().unwrap()[0].id.clone();
    let md = service.export_conversation(&id, ExportFormat::Markdown).unwrap();
    assert!(md.contains("````\nHere:\n```\n1\n```\ndone\n````"), "{md}");
}

/// Each bad file: its message, and nothing stored.
#[test]
fn a_bad_file_stores_nothing_and_a_bad_conversation_is_left_out_with_why() {
    let dir = tempfile::tempdir().unwrap();
    let (service, store) = empty();
    service.import_conversations(&write(dir.path(), "ok.json", &rich_document().to_string())).unwrap();
    let before = service.export_document(None).unwrap();
    let changes = store.total_changes();

    let mut newer = rich_document();
    newer["version"] = json!(4);
    let mut missing_parent = rich_document();
    missing_parent["conversations"][0]["id"] = json!("other");
    missing_parent["conversations"][0]["messages"][1]["parentId"] = json!("nope");
    let mut later_parent = rich_document();
    later_parent["conversations"][0]["id"] = json!("other");
    later_parent["conversations"][0]["messages"][0]["parentId"] = json!("m2");
    let mut bad_setup = rich_document();
    bad_setup["conversations"][0]["id"] = json!("other");
    bad_setup["conversations"][0]["setup"]["generation"]["temperature"] = json!(5);
    let mut twice_setup = rich_document();
    twice_setup["conversations"][0]["id"] = json!("other");
    twice_setup["conversations"][0]["setup"]["toolsets"] = json!(["web", "web"]);
    let mut bad_head = rich_document();
    bad_head["conversations"][0]["id"] = json!("other");
    bad_head["conversations"][0]["headId"] = json!("m9");
    // A new conversation whose message ids are another's: refused; the good one beside it comes in.
    let mut taken_ids = rich_document();
    taken_ids["conversations"][0]["id"] = json!("other");
    let mut fresh = rich_document()["conversations"][0].clone();
    fresh["id"] = json!("fresh");
    for (i, m) in fresh["messages"].as_array_mut().unwrap().iter_mut().enumerate() {
        m["id"] = json!(format!("fresh-{i}"));
        for c in m["toolCalls"].as_array_mut().unwrap() {
            c["id"] = json!(format!("fresh-{}", c["id"].as_str().unwrap()));
        }
    }
    fresh["messages"][1]["parentId"] = json!("fresh-0");
    fresh["headId"] = json!("fresh-1");
    taken_ids["conversations"].as_array_mut().unwrap().insert(0, fresh);

    let mut cycle: Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    cycle[0]["mapping"]["client-created-root"]["parent"] = json!("a-2b");
    let mut orphan: Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    orphan[1]["mapping"]["a-3b"]["parent"] = json!("gone");

    // The whole file is refused: nothing is read from it.
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("not-json.json", b"# just notes\n".to_vec(), "is not JSON"),
        ("archive.zip", b"PK\x03\x04rest".to_vec(), "extract it and import the conversations.json inside"),
        ("other.json", br#"{"hello": 1}"#.to_vec(), "neither a Switchboard export nor ChatGPT's conversations.json"),
        (
            "old.json",
            br#"{"format": "switchboard-export", "version": 1, "conversations": []}"#.to_vec(),
            "of an earlier Switchboard, which did not keep enough to import",
        ),
        (
            "newer.json",
            newer.to_string().into_bytes(),
            "exported by a newer Switchboard (format version 4; this one reads up to 3)",
        ),
        ("deep.json", format!("{}{}", "[".repeat(200), "]".repeat(200)).into_bytes(), "is not JSON"),
    ];
    for (name, bytes, expected) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let e = service.import_conversations(&path).unwrap_err();
        assert!(e.message.contains(expected), "{name}: {}", e.message);
        assert!(e.message.starts_with("Nothing was imported"), "{name}: {}", e.message);
        assert!(service.preview_import(&path).is_err(), "{name}: the preview refuses it too");
        assert_eq!(store.total_changes(), changes, "{name}: refused before anything was written");
    }
    assert_eq!(service.export_document(None).unwrap(), before);

    // One bad conversation: it is left out and listed with why; the file's others come in.
    // (name, file, why, the refused one's title, how many others are imported)
    let cases: Vec<(&str, Value, &str, &str, usize)> = vec![
        ("parent.json", missing_parent, "follows 'nope', which is not one of its messages", "Everything stored ✓", 0),
        ("later.json", later_parent, "which comes after it (a cycle)", "Everything stored ✓", 0),
        ("head.json", bad_head, "its current message 'm9' is not one of its messages", "Everything stored ✓", 0),
        (
            "setup.json",
            bad_setup,
            "its chat setup is not valid: The temperature must be a number from 0 to 2.",
            "Everything stored ✓",
            0,
        ),
        (
            "toolsets.json",
            twice_setup,
            "its chat setup is not valid: The toolset 'web' is listed twice.",
            "Everything stored ✓",
            0,
        ),
        ("taken.json", taken_ids, "is already stored in conversation", "Everything stored ✓", 1),
        ("cycle.json", cycle, "parent links form a cycle", "Tokyo trip 🗾", 2),
        ("orphan.json", orphan, "follows 'gone', which does not exist", "Primes with Python", 2),
    ];
    for (name, file, expected, title, others) in cases {
        let (service, store) = empty();
        service.import_conversations(&write(dir.path(), "ok.json", &rich_document().to_string())).unwrap();
        let before = store.conversations().unwrap().len();
        let path = write(dir.path(), name, &file.to_string());
        if name != "taken.json" {
            // Found before importing (a collision with stored ids only shows while writing).
            let preview = service.preview_import(&path).unwrap();
            assert_eq!(preview.refused.len(), 1, "{name}: {preview:?}");
            assert!(preview.refused[0].reason.contains(expected), "{name}: {preview:?}");
            assert!(preview.summary.ends_with(", 1 cannot be imported"), "{name}: {}", preview.summary);
        }
        let report = service.import_conversations(&path).unwrap();
        assert_eq!(report.imported.len(), others, "{name}: {report:?}");
        assert_eq!(report.refused.len(), 1, "{name}: {report:?}");
        let refused = &report.refused[0];
        assert!(refused.reason.contains(expected), "{name}: {}", refused.reason);
        assert_eq!(refused.title, title, "{name}");
        assert!(refused.id.is_some(), "{name}");
        assert!(report.summary.ends_with("; 1 conversation could not be imported."), "{name}: {}", report.summary);
        assert_eq!(store.conversations().unwrap().len(), before + others, "{name}: only the good ones were written");
    }
    // Larger than the bound: refused before it is read (a sparse file costs no disk).
    let big = dir.path().join("big.json");
    std::fs::File::create(&big).unwrap().set_len(513 * 1024 * 1024).unwrap();
    let e = service.import_conversations(&big).unwrap_err();
    assert!(e.message.contains("an import reads at most 512 MB"), "{}", e.message);
}

/// A finished turn whose question carries `files`.
fn turn_with_files(store: &Store, files: &[switchboard_core::Attachment]) -> String {
    use switchboard_core::EventSink;
    let rows = store.begin_turn_with(None, "what are these?", "mock", "m", None, files).unwrap();
    let rec = store.recorder(&rows.message_id);
    rec.emit(switchboard_core::ChatEvent::TextDelta { text: "A photo and a report.".into() });
    rec.emit(switchboard_core::ChatEvent::Done {
        finish_reason: switchboard_core::FinishReason::Stop,
        usage: Default::default(),
        tool_calls_made: 0,
    });
    rows.conversation_id
}

fn file_service(dir: &Path) -> (Service, Store) {
    let store = Store::open(&dir.join("switchboard.db")).unwrap();
    (service_with(store.clone()), store)
}

fn stored_files(dir: &Path) -> usize {
    let Ok(folders) = std::fs::read_dir(dir.join(switchboard_store::ATTACHMENTS_DIR)) else { return 0 };
    folders.flatten().map(|f| std::fs::read_dir(f.path()).map_or(0, |files| files.count())).sum()
}

#[test]
fn attached_files_travel_in_the_document_checked_on_import_and_markdown_names_them() {
    use switchboard_core::AttachmentKind;
    use switchboard_store::NewAttachment;
    let dir = tempfile::tempdir().unwrap();
    let (source, store) = file_service(&dir.path().join("source"));
    let photo = store
        .put_attachment(NewAttachment {
            bytes: b"\x89PNG a tiny photo",
            name: "photo.png",
            mime_type: "image/png",
            kind: AttachmentKind::Image,
            width: Some(2),
            height: Some(2),
            pages: None,
            text_note: None,
            text: None,
            thumbnail: Some(b"thumb".to_vec()),
        })
        .unwrap();
    let pdf = store
        .put_attachment(NewAttachment {
            bytes: b"%PDF-1.7 quarterly",
            name: "q3.pdf",
            mime_type: "application/pdf",
            kind: AttachmentKind::Pdf,
            width: None,
            height: None,
            pages: Some(3),
            text_note: None,
            text: Some("Revenue grew.".into()),
            thumbnail: None,
        })
        .unwrap();
    let id = turn_with_files(&store, &[photo.clone(), pdf.clone()]);
    let md = source.export_conversation(&id, ExportFormat::Markdown).unwrap();
    assert!(
        md.contains("Attached:\n\n- `photo.png` (image/png, 2×2, 17 B)\n- `q3.pdf` (PDF, 3 pages, 18 B)\n"),
        "{md}"
    );

    let text = source.export_document(None).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["version"], 2, "a document with files is version 2");
    let files = doc["conversations"][0]["attachments"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    let exported_pdf = files.iter().find(|f| f["name"] == "q3.pdf").unwrap();
    assert_eq!((exported_pdf["size"].as_u64(), exported_pdf["pages"].as_u64()), (Some(18), Some(3)));
    assert_eq!(exported_pdf["text"], "Revenue grew.");
    assert_eq!(doc["conversations"][0]["messages"][0]["attachments"][1], json!({"id": pdf.id, "name": "q3.pdf"}));
    assert!(doc["conversations"][0]["messages"][1].get("attachments").is_none());

    // Into an empty store: the same files, byte for byte, and the same document out again.
    let file = write(dir.path(), "with-files.json", &text);
    let (target, target_store) = file_service(&dir.path().join("target"));
    assert_eq!(target.import_conversations(&file).unwrap().imported, std::slice::from_ref(&id));
    assert_eq!(target_store.attachment_bytes(&photo.id).unwrap(), b"\x89PNG a tiny photo");
    assert_eq!(target_store.attachment_thumbnail(&photo.id).unwrap().unwrap(), b"thumb");
    assert_eq!(target.export_document(None).unwrap(), text, "export → import → export is identical");
    assert_eq!(target.open_all(&id).unwrap().messages[0].attachments, [photo, pdf]);
    assert_eq!(stored_files(&dir.path().join("target")), 2);

    // A file changed in the document, or cut short: refused by name, nothing stored.
    let mut changed = doc.clone();
    changed["conversations"][0]["attachments"][0]["data"] = json!("b3RoZXI="); // "other"
    changed["conversations"][0]["attachments"][0]["size"] = json!(5);
    let mut cut = doc.clone();
    cut["conversations"][0]["attachments"][0]["size"] = json!(999);
    let mut dangling = doc.clone();
    dangling["conversations"][0]["messages"][0]["attachments"][0]["id"] = json!("0".repeat(64));
    let (empty_service, empty_store) = file_service(&dir.path().join("empty"));
    for (name, bad, expected) in [
        ("changed.json", changed, "does not match its SHA-256: the export was changed or damaged"),
        ("cut.json", cut, "says it has 999 bytes but its data holds 1"),
        ("dangling.json", dangling, "which the export does not hold"),
    ] {
        let path = write(dir.path(), name, &bad.to_string());
        let report = empty_service.import_conversations(&path).unwrap();
        assert!(report.imported.is_empty(), "{name}: {report:?}");
        let why = &report.refused[0].reason;
        assert!(why.contains(expected), "{name}: {why}");
        assert!(why.contains("attached file") || why.contains("refers to the file"), "{why}");
        assert_eq!(report.summary, "Nothing imported; 1 conversation could not be imported.");
    }
    assert!(empty_store.conversations().unwrap().is_empty());
    assert_eq!(stored_files(&dir.path().join("empty")), 0, "no file written for a refused conversation");
}

#[test]
fn an_export_to_a_folder_that_cannot_be_written_says_so() {
    let (service, _) = empty();
    let dir = tempfile::tempdir().unwrap();
    service.import_conversations(&write(dir.path(), "rich.json", &rich_document().to_string())).unwrap();
    let id = service.conversations().unwrap()[0].id.clone();
    let missing = dir.path().join("no-such-folder").join("chat.md");
    let e = service.export_conversation_to(&id, ExportFormat::Markdown, &missing).unwrap_err();
    assert!(
        e.message.starts_with("Could not save to ") && e.message.contains("Choose a folder you can write to"),
        "{}",
        e.message
    );
    assert!(!missing.exists());
    let ok = dir.path().join("chat.md");
    service.export_conversation_to(&id, ExportFormat::Markdown, &ok).unwrap();
    assert!(std::fs::read_to_string(&ok).unwrap().starts_with("# Everything stored ✓"));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_conversation_that_is_not_a_valid_record_is_left_out_by_its_title_and_the_rest_imported() {
    let dir = tempfile::tempdir().unwrap();
    let (service, store) = empty();
    let mut doc = rich_document();
    let unreadable = json!({"id": "broken", "title": "Half a record", "messages": "not a list"});
    let nameless = json!(42);
    doc["conversations"].as_array_mut().unwrap().extend([unreadable, nameless]);
    let path = write(dir.path(), "mixed.json", &doc.to_string());

    let preview = service.preview_import(&path).unwrap();
    assert_eq!((preview.conversations, preview.titles.len()), (3, 1));
    assert_eq!(preview.summary, "Switchboard export: 3 conversations, 2 cannot be imported");
    let report = service.import_conversations(&path).unwrap();
    assert_eq!(report.imported, ["0190a000-0000-7000-8000-000000000001"]);
    assert_eq!(report.summary, "Imported 1 conversation (2 messages); 2 conversations could not be imported.");
    let named: Vec<(Option<&str>, &str)> = report.refused.iter().map(|r| (r.id.as_deref(), r.title.as_str())).collect();
    assert_eq!(named, [(Some("broken"), "Half a record"), (None, "conversation #3")]);
    assert!(report.refused[0].reason.starts_with("it is not a valid conversation record: "), "{:?}", report.refused);
    assert_eq!(store.conversations().unwrap().len(), 1);

    // ChatGPT's export: a conversation not in its format is left out by its title.
    let mut chatgpt: Value = serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    chatgpt[2]["mapping"] = json!("gone");
    let path = write(dir.path(), "conversations.json", &chatgpt.to_string());
    let report = service.import_conversations(&path).unwrap();
    assert_eq!(report.imported.len(), 2, "{report:?}");
    assert_eq!(report.refused[0].title, "Cat picture, then Rust news");
    assert!(report.refused[0].reason.starts_with("it is not in ChatGPT's format"), "{:?}", report.refused);
}

#[test]
fn a_pdf_whose_text_was_cut_travels_with_its_note_in_a_version_3_document() {
    use switchboard_store::NewAttachment;
    let dir = tempfile::tempdir().unwrap();
    let (source, store) = file_service(&dir.path().join("source"));
    let note = "text of pages 1–2 of 30 only: extraction stopped after 20 s";
    let pdf = store
        .put_attachment(NewAttachment {
            bytes: b"%PDF-1.7 long",
            name: "long.pdf",
            mime_type: "application/pdf",
            kind: switchboard_core::AttachmentKind::Pdf,
            width: None,
            height: None,
            pages: Some(30),
            text_note: Some(note.into()),
            text: Some("First pages.".into()),
            thumbnail: None,
        })
        .unwrap();
    let id = turn_with_files(&store, std::slice::from_ref(&pdf));
    let text = source.export_document(None).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["version"], 3, "a document carrying a note on cut text is version 3");
    assert_eq!(doc["conversations"][0]["attachments"][0]["textNote"], note);

    let file = write(dir.path(), "cut.json", &text);
    let (target, _) = file_service(&dir.path().join("target"));
    assert_eq!(target.import_conversations(&file).unwrap().imported, std::slice::from_ref(&id));
    assert_eq!(target.open_all(&id).unwrap().messages[0].attachments[0].text_note.as_deref(), Some(note));
    assert_eq!(target.export_document(None).unwrap(), text, "export → import → export is identical");
}
