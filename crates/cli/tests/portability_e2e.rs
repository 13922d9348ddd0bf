//! `conversations export` and `conversations import` end to end: a conversation exported as JSON
//! imports into another data dir and exports again identical; ChatGPT's export imports once;
//! a bad file says why and changes nothing; a bad conversation in a file is listed with why while
//! the others come in.

mod common;

use common::{Env, stderr, stdout};
use switchboard_mock_provider::{Reply, Script};

const CHATGPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../service/tests/fixtures/chatgpt_conversations.json");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_all_imports_elsewhere_and_exports_again_identical() {
    let source = Env::new(Script::new([
        Reply::text_then_tool_calls("Checking ", &[("c1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)]),
        Reply::text("It is late in 東京."),
    ]))
    .await;
    let (out, _) = source.chat_json(&["What time is it in Tokyo?"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let file = source.data_dir().join("all.json");
    let out = source.run(&["conversations", "export", "--all", "--format", "json", "-o", file.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("Exported to "), "{}", stderr(&out));
    let first = std::fs::read_to_string(&file).unwrap();

    let target = Env::new(Script::new([])).await;
    let out = target.run(&["conversations", "import", file.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Imported 1 conversation (2 messages).");
    let out = target.run(&["conversations", "export", "--all", "--format", "json"]).await;
    assert_eq!(stdout(&out).trim_end(), first.trim_end(), "export → import → export is identical");

    // The same file again: nothing changes, and it says so.
    let out = target.run(&["conversations", "import", file.to_str().unwrap(), "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["summary"], "Nothing imported: already imported: 1 conversation skipped.");
    assert_eq!(report["skipped"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chatgpt_export_imports_with_its_branches_and_markdown_of_the_current_path() {
    let env = Env::new(Script::new([])).await;
    let out = env.run(&["conversations", "import", CHATGPT, "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["format"], "chatgpt");
    assert_eq!(report["imported"].as_array().unwrap().len(), 3);
    let tokyo = report["imported"].as_array().unwrap().iter().find(|id| id.as_str().unwrap().contains("0001")).unwrap();
    let out = env.run(&["conversations", "export", tokyo.as_str().unwrap(), "--format", "md"]).await;
    let md = stdout(&out);
    assert!(md.starts_with("# Tokyo trip 🗾"), "{md}");
    assert!(md.contains("Plan a 2-day trip") && !md.contains("Plan a 3-day trip"), "the current path only:\n{md}");
    let again = env.run(&["conversations", "import", CHATGPT]).await;
    assert_eq!(stdout(&again).trim(), "Nothing imported: already imported: 3 conversations skipped.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_conversation_is_listed_with_why_and_the_others_are_imported() {
    let env = Env::new(Script::new([])).await;
    let mut chatgpt: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(CHATGPT).unwrap()).unwrap();
    chatgpt[1]["mapping"]["a-3b"]["parent"] = serde_json::json!("gone");
    let file = env.data_dir().join("conversations.json");
    std::fs::write(&file, chatgpt.to_string()).unwrap();
    let out = env.run(&["conversations", "import", file.to_str().unwrap()]).await;
    assert_eq!(out.status.code(), Some(1), "a conversation left out fails the command");
    assert_eq!(stdout(&out).trim(), "Imported 2 conversations (11 messages); 1 conversation could not be imported.");
    let err = stderr(&out);
    assert!(
        err.contains("Not imported: Primes with Python (") && err.contains("follows 'gone', which does not exist"),
        "{err}"
    );
    let list = env.run(&["conversations", "list", "--json"]).await;
    let list: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2);

    let out = env.run(&["conversations", "import", file.to_str().unwrap(), "--json"]).await;
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["skipped"], 2);
    assert_eq!(report["refused"][0]["title"], "Primes with Python");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_is_not_an_export_says_why_and_stores_nothing() {
    let env = Env::new(Script::new([])).await;
    let bad = env.data_dir().join("notes.json");
    std::fs::write(&bad, "not json at all").unwrap();
    let out = env.run(&["conversations", "import", bad.to_str().unwrap()]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Nothing was imported") && stderr(&out).contains("is not JSON"), "{}", stderr(&out));
    let list = env.run(&["conversations", "list", "--json"]).await;
    assert_eq!(stdout(&list).trim(), "[]");
    // An export to a folder that does not exist: a clear message.
    let out = env.run(&["conversations", "export", "--all", "-o", "/nonexistent-folder/x.json"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("Choose a folder you can write to"), "{}", stderr(&out));
}
