//! Plain HTTP replies and the server's own errors and endpoints.

mod common;

use common::{chat_body, post_chat};
use serde_json::{Value, json};
use switchboard_mock_provider::{MockServer, Reply, Script};

#[tokio::test]
async fn rate_limited_has_retry_after_and_a_json_error() {
    let server = MockServer::start(Script::new([Reply::rate_limited(7)])).await;
    let response = post_chat(&server, &chat_body("hi")).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "rate_limit_exceeded");
    assert!(body["error"]["message"].as_str().unwrap().contains("7s"));
}

#[tokio::test]
async fn html_error_page_is_served_as_text_html() {
    let page = "<html><body><h1>502 Bad Gateway</h1></body></html>";
    let server = MockServer::start(Script::new([Reply::html(502, page)])).await;
    let response = post_chat(&server, &chat_body("hi")).await;
    assert_eq!(response.status(), 502);
    assert_eq!(response.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(response.text().await.unwrap(), page);
}

#[tokio::test]
async fn http_reply_content_type_is_inferred_from_the_body() {
    let server = MockServer::start(Script::new([
        Reply::http(401, r#"{"error":{"message":"bad key","type":"invalid_request_error"}}"#),
        Reply::http(500, "oops"),
    ]))
    .await;
    let unauthorized = post_chat(&server, &chat_body("hi")).await;
    assert_eq!(unauthorized.status(), 401);
    assert_eq!(unauthorized.headers()["content-type"], "application/json");
    let plain = post_chat(&server, &chat_body("hi")).await;
    assert_eq!(plain.status(), 500);
    assert_eq!(plain.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(plain.text().await.unwrap(), "oops");
}

#[tokio::test]
async fn exhausted_script_answers_500_with_an_openai_error() {
    let server = MockServer::start(Script::new([Reply::text("only one")])).await;
    let _ = post_chat(&server, &chat_body("1")).await.text().await;
    let response = post_chat(&server, &chat_body("2")).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body,
        json!({"error": {
            "message": "mock provider: script exhausted (2 requests so far)",
            "type": "server_error",
        }})
    );
}

#[tokio::test]
async fn invalid_json_body_is_a_400_and_is_recorded() {
    let server = MockServer::start(Script::new([Reply::text("unused")])).await;
    let response = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "invalid_request_error");
    assert!(body["error"]["message"].as_str().unwrap().contains("not valid JSON"));
    assert_eq!(server.requests()[0].body, json!("{not json"));
    assert_eq!(server.remaining_replies(), 1, "a bad request consumes no reply");
}

#[tokio::test]
async fn models_lists_the_mock_models() {
    let server = MockServer::start(Script::default()).await;
    let response = reqwest::get(format!("{}/models", server.base_url())).await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["object"], "list");
    let ids: Vec<_> = body["data"].as_array().unwrap().iter().map(|model| model["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["mock-model", "mock-reasoner"]);
    assert_eq!(body["data"][0]["owned_by"], "switchboard");
    assert!(server.requests().is_empty(), "only chat requests are recorded");
}

#[tokio::test]
async fn unknown_paths_and_methods_get_json_errors() {
    let server = MockServer::start(Script::default()).await;
    let missing = reqwest::get(format!("{}/embeddings", server.base_url())).await.unwrap();
    assert_eq!(missing.status(), 404);
    let body: Value = missing.json().await.unwrap();
    assert!(body["error"]["message"].as_str().unwrap().contains("/v1/embeddings"));

    let wrong_method = reqwest::get(format!("{}/chat/completions", server.base_url())).await.unwrap();
    assert_eq!(wrong_method.status(), 405);
    assert!(wrong_method.json::<Value>().await.unwrap()["error"].is_object());
}
