//! Edges of what a provider streams, end to end through the CLI: a refusal streamed in its own
//! field is the answer (with a notice, and stored), an empty `data` field is not a malformed
//! chunk, and the Responses API's unknown model is the error kind every API's unknown model is.

mod common;

use common::*;
use switchboard_mock_provider::{Reply, Script, Step};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refusal_is_shown_and_stored_as_the_answer_with_a_notice() {
    let refusal = |text: &str| Step::Raw {
        data: format!(r#"data: {{"id":"r1","choices":[{{"index":0,"delta":{{"content":null,"refusal":"{text}"}}}}]}}"#)
            + "\n\n",
    };
    let env = Env::new(Script::new([Reply::stream([
        refusal("I'm sorry, "),
        refusal("I can't help with that."),
        Step::finish("stop"),
        Step::Done,
    ])]))
    .await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let notices = of_type(&events, "notice");
    assert!(
        notices.iter().any(|n| n["message"] == "The model refused: I'm sorry, I can't help with that."),
        "{notices:?}"
    );
    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[1]["content"], "I'm sorry, I can't help with that.");
    assert_eq!(stored[1]["notices"][0]["message"], "The model refused: I'm sorry, I can't help with that.", "{stored}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_line_without_a_colon_is_an_empty_field_not_a_malformed_chunk() {
    let env = Env::new(Script::new([Reply::stream([
        Step::text("one "),
        Step::Raw { data: "data\n\n".into() },
        Step::text("two"),
        Step::finish("stop"),
        Step::Done,
    ])]))
    .await;
    let (out, events) = env.chat_json(&["hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let stored = env.show_json(&conversation_id(&events)).await;
    assert_eq!(stored[1]["content"], "one two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_model_is_not_found_on_chat_completions_and_on_responses() {
    let body = r#"{"error":{"message":"The model `gpt-nope` does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}"#;
    let reply = |status: u16| Reply::Http { status, headers: Vec::new(), body: body.into() };
    // Chat Completions says 404, the Responses API 400.
    let chat = Env::new(Script::new([reply(404)])).await;
    let (out, events) = chat.chat_json(&["hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(of_type(&events, "error")[0]["kind"], "notFound");
    let responses = Env::with_profile(Script::new([reply(400)]), "resp", "openai-responses").await;
    let (out, events) = responses.json_with_key(&["chat", "--json", "hi"], "resp", "test-responses-key-not-real").await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let error = of_type(&events, "error")[0];
    assert_eq!(error["kind"], "notFound", "{error}");
    assert!(error["message"].as_str().unwrap().contains("gpt-nope"), "{error}");
}
