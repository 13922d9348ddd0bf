//! The message tree through the CLI against the mock provider: `conversations edit` streams a new
//! branch whose request holds only that branch, `regenerate --message` adds a version, `versions`
//! and `switch` list and choose them (`show` marks them), `branch` copies into a new chat, and a
//! Responses-API continuation never chains from another branch's response.

mod common;

use common::*;
use serde_json::Value;
use switchboard_mock_provider::{Reply, Script};

fn ok(out: &std::process::Output) {
    assert!(out.status.success(), "stdout: {}\nstderr: {}", stdout(out), stderr(out));
}

/// The ids of the conversation's shown messages.
async fn shown(env: &Env, conversation: &str) -> Vec<Value> {
    env.show_json(conversation).await.as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_regenerate_versions_switch_and_branch_from_the_command_line() {
    let script = Script::new([
        Reply::text("first answer"),
        Reply::text("answer on the old branch: OLD-BRANCH-SECRET"),
        Reply::text("answer to the edit"),
        Reply::text("answer asked again"),
    ]);
    let env = Env::new(script).await;
    let (out, events) = env.chat_json(&["first question"]).await;
    ok(&out);
    let c = conversation_id(&events);
    let out = env.run(&["chat", "--json", "--conversation", &c, "second question OLD-QUESTION"]).await;
    ok(&out);
    let messages = shown(&env, &c).await;
    let second_question = messages[2]["id"].as_str().unwrap().to_owned();

    // Edit the second question: streamed like chat, sent with the path up to it only.
    let out = env.run(&["conversations", "edit", &c, &second_question, "second question, edited", "--json"]).await;
    ok(&out);
    assert!(stdout(&out).contains("answer to the edit"), "{}", stdout(&out));
    let body = env.mock.requests()[2].body.to_string();
    assert!(body.contains("second question, edited") && body.contains("first answer"), "{body}");
    assert!(!body.contains("OLD-BRANCH-SECRET") && !body.contains("OLD-QUESTION"), "{body}");
    let messages = shown(&env, &c).await;
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[2]["content"], "second question, edited");
    assert_eq!(messages[2]["versions"].as_array().unwrap().len(), 2);

    // Regenerate the first answer by id, with another model: a version beside it.
    let first_answer = messages[1]["id"].as_str().unwrap().to_owned();
    let out = env.run(&["regenerate", &c, "--message", &first_answer, "--model", "other-model", "--json"]).await;
    ok(&out);
    let last = env.mock.requests()[3].clone();
    assert_eq!(last.body["model"], "other-model");
    assert!(!last.body.to_string().contains("second question"), "only the path up to the question: {}", last.body);
    let messages = shown(&env, &c).await;
    assert_eq!(
        messages.iter().map(|m| m["content"].as_str().unwrap()).collect::<Vec<_>>(),
        ["first question", "answer asked again"]
    );

    // `show` marks the versions; `versions` lists them with the shown one starred.
    let out = env.run(&["conversations", "show", &c]).await;
    ok(&out);
    assert!(stdout(&out).contains("‹2/2›"), "{}", stdout(&out));
    let out = env.run(&["conversations", "versions", &c, &first_answer]).await;
    ok(&out);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("  1  ") && lines[0].contains("first answer"), "{lines:?}");
    assert!(lines[1].starts_with("* 2  ") && lines[1].contains("[other-model]"), "{lines:?}");

    // Switch back to the first answer: its branch (with the edit, chosen last) comes back.
    let out = env.run(&["conversations", "switch", &c, &first_answer]).await;
    ok(&out);
    let messages = shown(&env, &c).await;
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[3]["content"], "answer to the edit");
    let out = env.run(&["conversations", "versions", &c, &second_question, "--json"]).await;
    ok(&out);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list[0]["current"], false);
    assert_eq!(list[1]["current"], true);
    assert_eq!(list[1]["index"], 2);

    // Branch into a new chat from the edited question's answer.
    let out = env.run(&["conversations", "branch", &c, messages[3]["id"].as_str().unwrap()]).await;
    ok(&out);
    let copy = stdout(&out).trim().to_owned();
    assert_ne!(copy, c);
    let copied = shown(&env, &copy).await;
    assert_eq!(copied.len(), 4);
    assert_eq!(copied[3]["content"], "answer to the edit");
    assert_ne!(copied[3]["id"], messages[3]["id"]);
    let out = env.run(&["conversations", "list"]).await;
    assert!(stdout(&out).contains("(branch)"), "{}", stdout(&out));

    // Bad input: an answer cannot be edited, an unknown message is named.
    let out = env.run(&["conversations", "edit", &c, &first_answer, "x"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("regenerate"), "{}", stderr(&out));
    let out = env.run(&["conversations", "switch", &c, "ghost"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("'ghost' not found"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_responses_continuation_never_chains_from_another_branch() {
    let script = Script::new([Reply::text("one"), Reply::text("two"), Reply::text("two again"), Reply::text("three")]);
    let env = Env::with_profile(script, "resp", "openai-responses").await;
    let key = "sk-test-tree-e2e-0123456789";
    let (out, events) = env.json_with_key(&["chat", "--json", "q1"], "resp", key).await;
    ok(&out);
    let c = conversation_id(&events);
    let (out, _) = env.json_with_key(&["chat", "--json", "--conversation", &c, "q2"], "resp", key).await;
    ok(&out);
    // Asked again: the new answer may continue from q1's answer (on its path), never from q2's.
    let (out, _) = env.json_with_key(&["regenerate", &c, "--json"], "resp", key).await;
    ok(&out);
    let (out, _) = env.json_with_key(&["chat", "--json", "--conversation", &c, "q3"], "resp", key).await;
    ok(&out);
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[1].previous_response_id(), Some("resp_mock_1"));
    assert_eq!(requests[2].previous_response_id(), Some("resp_mock_1"), "the regenerate continues from q1's answer");
    assert_eq!(requests[3].previous_response_id(), Some("resp_mock_3"), "q3 follows the answer shown, not resp_mock_2");
}
