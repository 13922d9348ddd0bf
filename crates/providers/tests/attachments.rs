//! A person's attached files through every provider to the strict mock, which checks each API's
//! exact part shapes: text, an image, a PDF and a text file go out as the API's own parts and
//! come back recorded as the same `SentPart`s (in the API's order); a model the mock configures
//! without vision refuses the image in its API's 400, which reaches the caller as a bad request.

use futures::StreamExt;
use switchboard_core::provider::StopReason;
use switchboard_core::tool::SecretValue;
use switchboard_core::{ErrorKind, Message, Part, Provider, ProviderError, ProviderEvent, ProviderRequest, ToolImage};
use switchboard_mock_provider::{MockServer, Reply, Script, SentPart};
use switchboard_providers::anthropic::{Anthropic, AnthropicConfig};
use switchboard_providers::gemini::{Gemini, GeminiConfig};
use switchboard_providers::openai_responses::OpenAiResponses;
use switchboard_providers::{OpenAiChat, OpenAiConfig};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJRU5ErkJggg==";
const PDF: &str = "JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDw+PgplbmRvYmoKdHJhaWxlcgo8PC9Sb290IDEgMCBSPj4KJSVFT0YK";
const KINDS: [&str; 4] = ["openai", "openai-responses", "anthropic", "gemini"];

fn provider(kind: &str, server: &MockServer) -> Box<dyn Provider> {
    let key = Some(SecretValue::new("sk-test"));
    let openai = || OpenAiConfig { base_url: server.base_url(), api_key: key.clone() };
    match kind {
        "openai" => Box::new(OpenAiChat::new(openai()).unwrap()),
        "openai-responses" => Box::new(OpenAiResponses::new(openai()).unwrap()),
        "anthropic" => {
            Box::new(Anthropic::new(AnthropicConfig { base_url: server.base_url(), api_key: key.clone() }).unwrap())
        }
        "gemini" => Box::new(
            Gemini::new(GeminiConfig { base_url: format!("http://{}/v1beta", server.addr()), api_key: key.clone() })
                .unwrap(),
        ),
        other => panic!("no provider {other}"),
    }
}

fn parts() -> Vec<Part> {
    vec![
        Part::Image { name: "shot.png".into(), image: ToolImage { mime_type: "image/png".into(), data: PNG.into() } },
        Part::Pdf { name: "spec.pdf".into(), data: PDF.into() },
        Part::Text {
            name: "main.rs".into(),
            mime_type: "text/x-rust".into(),
            text: "fn main() {}\n".into(),
            note: None,
        },
    ]
}

fn request(model: &str) -> ProviderRequest {
    ProviderRequest {
        model: model.into(),
        system: Some("Be brief.".into()),
        messages: vec![
            Message::user("Hello"),
            Message::assistant("Hi.", vec![]),
            Message::User { text: "What differs?".into(), parts: parts() },
        ],
        ..ProviderRequest::default()
    }
}

async fn run(kind: &str, server: &MockServer, model: &str) -> Vec<Result<ProviderEvent, ProviderError>> {
    provider(kind, server).stream(request(model)).collect().await
}

#[tokio::test]
async fn every_api_sends_text_image_pdf_and_a_text_file_in_shapes_its_strict_mock_accepts() {
    for kind in KINDS {
        let server = MockServer::start(Script::new([Reply::text("They differ.")])).await;
        let events = run(kind, &server, "vision-model").await;
        let problems: Vec<_> = events.iter().filter_map(|e| e.as_ref().err()).collect();
        assert!(problems.is_empty(), "{kind}: {problems:?}");
        assert!(
            events.iter().any(|e| matches!(e, Ok(ProviderEvent::Finish { reason: StopReason::Stop, .. }))),
            "{kind}: {events:?}"
        );
        let recorded = server.requests();
        assert_eq!(recorded.len(), 1, "{kind}");
        let question = SentPart::Text("What differs?".into());
        let image = SentPart::Image { media_type: "image/png".into(), data: PNG.into() };
        let name = (kind != "gemini").then(|| "spec.pdf".to_owned());
        let pdf = SentPart::Pdf { name, data: PDF.into() };
        let file = SentPart::Text("File main.rs (text/x-rust):\n```\nfn main() {}\n```".into());
        let want = match kind {
            "anthropic" | "gemini" => vec![image, pdf, file, question],
            _ => vec![question, image, pdf, file],
        };
        let users = recorded[0].user_parts();
        assert_eq!(users.last(), Some(&want), "{kind}: {}", recorded[0].body);
        assert_eq!(users[0], vec![SentPart::Text("Hello".into())], "{kind}: a message without files is text");
    }
    // Chat keeps a message without parts a plain string, as before attachments existed.
    let server = MockServer::start(Script::new([Reply::text("ok")])).await;
    run("openai", &server, "m").await;
    assert_eq!(server.requests()[0].messages()[1]["content"], "Hello");
}

#[tokio::test]
async fn a_large_pdf_is_written_into_the_body_whole_on_every_api() {
    // 290 KB of base64: over the size below which a payload is copied into the JSON tree.
    let large = PDF.repeat(3000);
    for kind in KINDS {
        let server = MockServer::start(Script::new([Reply::text("Read.")])).await;
        let mut request = request("vision-model");
        request.messages[2] = Message::User {
            text: "Summarise \"it\".".into(),
            parts: vec![Part::Pdf { name: "big.pdf".into(), data: large.as_str().into() }],
        };
        let events: Vec<_> = provider(kind, &server).stream(request).collect().await;
        assert!(events.iter().all(Result::is_ok), "{kind}: {events:?}");
        let recorded = server.requests();
        let name = (kind != "gemini").then(|| "big.pdf".to_owned());
        let pdf = SentPart::Pdf { name, data: large.clone() };
        let question = SentPart::Text("Summarise \"it\".".into());
        let want = match kind {
            "anthropic" | "gemini" => vec![pdf, question],
            _ => vec![question, pdf],
        };
        assert_eq!(recorded[0].user_parts().last(), Some(&want), "{kind}");
    }
}

#[tokio::test]
async fn a_model_without_vision_refuses_the_image_as_a_bad_request_on_every_api() {
    for kind in KINDS {
        let server =
            MockServer::start(Script::new([Reply::text("never")]).with_text_only_models(["blind-model"])).await;
        let events = run(kind, &server, "blind-model").await;
        let error = events.iter().find_map(|e| e.as_ref().err()).unwrap_or_else(|| panic!("{kind}: {events:?}"));
        assert_eq!(error.kind, ErrorKind::BadRequest, "{kind}: {error:?}");
        assert!(
            ["only supported by certain models", "does not support image", "Image input modality is not enabled"]
                .iter()
                .any(|needle| error.message.contains(needle)),
            "{kind}: the API's words reach the person: {}",
            error.message
        );
        assert!(server.requests().is_empty(), "{kind}: refused before it was recorded");
    }
}
