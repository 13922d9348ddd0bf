//! A person's attached files as each API takes them: the exact part shapes go through and are
//! recorded as `SentPart`s; malformed ones (a wrong type name, a missing media type, a PDF as an
//! image, a data URL that is not base64, a Chat `file` without its name or data) are refused in
//! the API's own 400, neither recorded nor answered; a model configured without vision refuses
//! an image the way the real API does.

mod common;

use common::TIMEOUT;
use serde_json::{Value, json};
use switchboard_mock_provider::{MockServer, Reply, Script, SentPart};

const PNG: &str = "iVBORw0KGgo=";
const PDF: &str = "JVBERi0xLjQK";

async fn send(server: &MockServer, path: &str, body: &Value) -> (u16, Value) {
    let request = reqwest::Client::new()
        .post(format!("http://{}{path}", server.addr()))
        .header("anthropic-version", "2023-06-01")
        .header("authorization", "Bearer sk-test")
        .json(body);
    let exchange = async {
        let response = request.send().await.expect("request failed");
        let status = response.status().as_u16();
        let text = response.text().await.expect("body failed");
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    };
    tokio::time::timeout(TIMEOUT, exchange).await.expect("request timed out")
}

const CHAT: &str = "/v1/chat/completions";
const RESPONSES: &str = "/v1/responses";
const MESSAGES: &str = "/v1/messages";
const GEMINI: &str = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse";

fn chat(content: Value) -> Value {
    json!({"model": "gpt-test", "stream": true, "messages": [{"role": "user", "content": content}]})
}

fn responses(content: Value) -> Value {
    json!({"model": "gpt-test", "stream": true, "input": [{"role": "user", "content": content}]})
}

fn messages(content: Value) -> Value {
    json!({"model": "claude-test", "max_tokens": 1024, "stream": true, "messages": [{"role": "user", "content": content}]})
}

fn gemini(parts: Value) -> Value {
    json!({"contents": [{"role": "user", "parts": parts}]})
}

/// What every API should have recorded for the good message.
fn expected(pdf_name: Option<&str>) -> Vec<SentPart> {
    vec![
        SentPart::Text("Compare".into()),
        SentPart::Image { media_type: "image/png".into(), data: PNG.into() },
        SentPart::Pdf { name: pdf_name.map(str::to_owned), data: PDF.into() },
        SentPart::Text("File a.txt (text/plain):\n```\nhi\n```".into()),
    ]
}

/// Sends each bad body: refused with a 400 whose message contains its needle; nothing recorded.
async fn refuses(server: &MockServer, path: &str, cases: &[(Value, &str)]) {
    let recorded = server.requests().len();
    for (body, needle) in cases {
        let (status, answer) = send(server, path, body).await;
        assert_eq!(status, 400, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "expected {needle:?} in {answer}");
    }
    assert_eq!(server.requests().len(), recorded, "refused requests are not recorded");
}

#[tokio::test]
async fn chat_takes_image_url_and_file_parts_and_refuses_malformed_ones() {
    let server = MockServer::start(Script::new([Reply::text("ok")])).await;
    let good = chat(json!([
        {"type": "text", "text": "Compare"},
        {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}"), "detail": "auto"}},
        {"type": "file", "file": {"filename": "spec.pdf", "file_data": format!("data:application/pdf;base64,{PDF}")}},
        {"type": "text", "text": "File a.txt (text/plain):\n```\nhi\n```"},
    ]));
    let (status, answer) = send(&server, CHAT, &good).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(server.requests()[0].last_user_parts(), expected(Some("spec.pdf")));

    let image = |url: String| chat(json!([{"type": "image_url", "image_url": {"url": url}}]));
    let file = |file: Value| chat(json!([{"type": "file", "file": file}]));
    refuses(
        &server,
        CHAT,
        &[
            (chat(json!([{"type": "image", "image_url": {"url": "x"}}])), "Invalid value: 'image'"),
            (image(format!("data:application/pdf;base64,{PDF}")), "Only image types are supported"),
            (image("data:image/png;base64,not base64!".into()), "invalid base64"),
            (image(format!("data:;base64,{PNG}")), "Only image types are supported"),
            (file(json!({"file_data": format!("data:application/pdf;base64,{PDF}")})), "file.filename"),
            (file(json!({"filename": "a.pdf"})), "file.file_data"),
            (file(json!({"filename": "a.pdf", "file_data": PDF})), "not a data URL"),
            (file(json!({"filename": "a.png", "file_data": format!("data:image/png;base64,{PNG}")})), "image/png"),
        ],
    )
    .await;
    let (_, answer) = send(&server, CHAT, &file(json!({"filename": "a.pdf"}))).await;
    assert_eq!(answer["error"]["param"], "messages.[0].content.[0].file.file_data");
    assert_eq!(answer["error"]["type"], "invalid_request_error");
}

#[tokio::test]
async fn responses_takes_input_image_and_input_file_and_refuses_malformed_ones() {
    let server = MockServer::start(Script::new([Reply::text("ok")])).await;
    let good = responses(json!([
        {"type": "input_text", "text": "Compare"},
        {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}"), "detail": "auto"},
        {"type": "input_file", "filename": "spec.pdf", "file_data": format!("data:application/pdf;base64,{PDF}")},
        {"type": "input_text", "text": "File a.txt (text/plain):\n```\nhi\n```"},
    ]));
    let (status, answer) = send(&server, RESPONSES, &good).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(server.requests()[0].last_user_parts(), expected(Some("spec.pdf")));

    refuses(
        &server,
        RESPONSES,
        &[
            (responses(json!([{"type": "image_url", "image_url": "x"}])), "Invalid value: 'image_url'"),
            (
                responses(json!([{"type": "input_image", "image_url": format!("data:application/pdf;base64,{PDF}")}])),
                "Only image types",
            ),
            (responses(json!([{"type": "input_image", "image_url": "data:image/png;base64,@@"}])), "invalid base64"),
            (
                responses(json!([{"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}"), "detail": "max"}])),
                "'auto', 'low', and 'high'",
            ),
            (
                responses(json!([{"type": "input_file", "file_data": format!("data:application/pdf;base64,{PDF}")}])),
                "filename",
            ),
            (responses(json!([{"type": "input_file", "filename": "a.pdf"}])), "file_data"),
        ],
    )
    .await;
}

#[tokio::test]
async fn anthropic_takes_image_and_document_blocks_and_refuses_malformed_ones() {
    let server = MockServer::start(Script::new([Reply::text("ok")])).await;
    let good = messages(json!([
        {"type": "text", "text": "Compare"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}, "title": "spec.pdf"},
        {"type": "text", "text": "File a.txt (text/plain):\n```\nhi\n```"},
    ]));
    let (status, answer) = send(&server, MESSAGES, &good).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(server.requests()[0].last_user_parts(), expected(Some("spec.pdf")));

    let image = |source: Value| messages(json!([{"type": "image", "source": source}]));
    let document = |source: Value| messages(json!([{"type": "document", "source": source}]));
    refuses(
        &server,
        MESSAGES,
        &[
            (messages(json!([{"type": "image_url", "image_url": {"url": "x"}}])), "Input tag 'image_url'"),
            (image(json!({"type": "base64", "data": PNG})), "image.source.base64.media_type: Field required"),
            (
                image(json!({"type": "base64", "media_type": "application/pdf", "data": PDF})),
                "Input should be 'image/jpeg'",
            ),
            (image(json!({"type": "base64", "media_type": "image/png", "data": "a b"})), "invalid base64"),
            (document(json!({"type": "base64", "media_type": "image/png", "data": PNG})), "'application/pdf'"),
            (document(json!({"type": "base64", "data": PDF})), "document.source.base64.media_type: Field required"),
            (
                image(json!({"type": "base64", "media_type": "image/png", "data": "A".repeat(7 * 1024 * 1024)})),
                "image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes",
            ),
        ],
    )
    .await;
    let (_, answer) = send(&server, MESSAGES, &image(json!({"type": "base64", "data": PNG}))).await;
    assert_eq!(answer["type"], "error");
    assert_eq!(answer["error"]["type"], "invalid_request_error");
}

#[tokio::test]
async fn gemini_takes_inline_data_and_refuses_malformed_parts() {
    let server = MockServer::start(Script::new([Reply::text("ok")])).await;
    let good = gemini(json!([
        {"text": "Compare"},
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
        {"inline_data": {"mime_type": "application/pdf", "data": PDF}},
        {"text": "File a.txt (text/plain):\n```\nhi\n```"},
    ]));
    let (status, answer) = send(&server, GEMINI, &good).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(server.requests()[0].last_user_parts(), expected(None));

    refuses(
        &server,
        GEMINI,
        &[
            (gemini(json!([{"image": {"data": PNG}}])), "Unknown name \"image\""),
            (gemini(json!([{"inlineData": {"data": PNG}}])), "mime_type is not specified"),
            (gemini(json!([{"inlineData": {"mimeType": "application/zip", "data": PNG}}])), "Unsupported MIME type"),
            (gemini(json!([{"inlineData": {"mimeType": "image/png", "data": "!!"}}])), "Base64 decoding failed"),
        ],
    )
    .await;
    let (_, answer) = send(&server, GEMINI, &gemini(json!([{"image": {}}]))).await;
    assert_eq!(
        (answer["error"]["code"].clone(), answer["error"]["status"].clone()),
        (json!(400), json!("INVALID_ARGUMENT"))
    );
}

#[tokio::test]
async fn a_model_without_vision_refuses_an_image_as_its_api_does() {
    let server = MockServer::start(
        Script::new([Reply::text("ok"), Reply::text("ok")]).with_text_only_models(["gpt-test", "gemini-test"]),
    )
    .await;
    let image = json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}});
    let (status, answer) = send(&server, CHAT, &chat(json!([{"type": "text", "text": "See"}, image.clone()]))).await;
    assert_eq!(status, 400);
    assert_eq!(
        answer,
        json!({"error": {"message": "Invalid content type. image_url is only supported by certain models.",
            "type": "invalid_request_error", "param": "messages.[0].content.[1].type", "code": null}})
    );
    let (status, answer) =
        send(&server, GEMINI, &gemini(json!([{"inlineData": {"mimeType": "image/png", "data": PNG}}]))).await;
    assert_eq!(status, 400);
    assert_eq!(answer["error"]["message"], "Image input modality is not enabled for models/gemini-test");
    assert!(server.requests().is_empty(), "refused, not recorded");

    // Text (and a PDF) still go through; a model with vision takes the image.
    let pdf = json!({"type": "file", "file": {"filename": "a.pdf", "file_data": format!("data:application/pdf;base64,{PDF}")}});
    assert_eq!(send(&server, CHAT, &chat(json!([{"type": "text", "text": "Read"}, pdf]))).await.0, 200);
    server.set_text_only_models(Vec::<String>::new());
    assert_eq!(send(&server, CHAT, &chat(json!([image]))).await.0, 200);
}

#[tokio::test]
async fn on_gemini_files_sent_alone_start_a_new_turn_so_earlier_calls_need_no_signature() {
    let server = MockServer::start(Script::new([Reply::text("ok")])).await;
    let body = json!({"contents": [
        {"role": "user", "parts": [{"text": "Time?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "get_time", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "get_time", "response": {"content": "noon"}}}]},
        {"role": "model", "parts": [{"text": "Noon."}]},
        {"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}]},
    ]});
    let (status, answer) = send(&server, GEMINI, &body).await;
    assert_eq!(status, 200, "{answer}");
}
