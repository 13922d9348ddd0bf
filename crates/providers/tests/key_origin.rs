//! A key never follows a request to another origin: the endpoint helper attaches it only to its
//! own origin, in the header the kind table names, and a redirect elsewhere does not carry it,
//! neither for a model listing nor for an answer's event stream.

use futures::StreamExt;
use std::io::{BufRead, BufReader, Read, Write};
use switchboard_core::tool::SecretValue;
use switchboard_core::{Message, Provider, ProviderRequest};
use switchboard_providers::anthropic::{Anthropic, AnthropicConfig};
use switchboard_providers::endpoint::{Endpoint, KeyHeader};
use switchboard_providers::gemini::{Gemini, GeminiConfig};
use switchboard_providers::{KINDS, OpenAiChat, OpenAiConfig};

const KEY: &str = "sk-origin-test-0123456789";

/// A one-thread HTTP server that answers every request with `reply(path)` and sends each
/// request's head (lower-cased) back over the channel.
fn server(
    requests: usize,
    reply: impl Fn(&str) -> String + Send + 'static,
) -> (String, std::sync::mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(requests) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut head, mut line) = (String::new(), String::new());
            while reader.read_line(&mut line).unwrap_or(0) > 2 {
                head.push_str(&line);
                line.clear();
            }
            let length = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
            let _ = tx.send(head.to_ascii_lowercase());
            let _ = stream.write_all(reply(&path).as_bytes());
        }
    });
    (format!("http://{addr}"), rx)
}

fn redirect_to(location: String) -> impl Fn(&str) -> String {
    move |path| {
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}{path}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
    }
}

fn not_found(_: &str) -> String {
    "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned()
}

#[test]
fn each_kind_names_its_key_header_in_the_kind_table() {
    let header = |id: &str| KINDS.iter().find(|k| k.id == id).unwrap().key_header;
    assert_eq!(header("openai"), KeyHeader::Bearer);
    assert_eq!(header("openai-responses"), KeyHeader::Bearer);
    assert_eq!(header("anthropic"), KeyHeader::XApiKey);
    assert_eq!(header("gemini"), KeyHeader::XGoogApiKey);
    let key = SecretValue::new(KEY);
    assert_eq!((KeyHeader::Bearer.name(), KeyHeader::Bearer.value(&key)), ("authorization", format!("Bearer {KEY}")));
    assert_eq!((KeyHeader::XApiKey.name(), KeyHeader::XApiKey.value(&key)), ("x-api-key", KEY.to_owned()));
    assert_eq!((KeyHeader::XGoogApiKey.name(), KeyHeader::XGoogApiKey.value(&key)), ("x-goog-api-key", KEY.to_owned()));
    let e = Endpoint::new("no-such-kind", "http://127.0.0.1:1/v1", None).unwrap_err();
    assert!(e.message.contains("'no-such-kind'"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_listing_redirected_to_another_origin_does_not_take_the_key_there() {
    for kind in ["openai", "anthropic", "gemini"] {
        let (elsewhere, seen_elsewhere) = server(1, not_found);
        let (base, seen) = server(1, redirect_to(elsewhere));
        let key = Some(SecretValue::new(KEY));
        let provider: Box<dyn Provider> = match kind {
            "openai" => {
                Box::new(OpenAiChat::new(OpenAiConfig { base_url: format!("{base}/v1"), api_key: key }).unwrap())
            }
            "anthropic" => {
                Box::new(Anthropic::new(AnthropicConfig { base_url: format!("{base}/v1"), api_key: key }).unwrap())
            }
            _ => Box::new(Gemini::new(GeminiConfig { base_url: format!("{base}/v1beta"), api_key: key }).unwrap()),
        };
        let e = provider.list_models().await.unwrap_err();
        assert_eq!(e.status, Some(307), "{kind}: the redirect is the answer: {}", e.message);
        assert!(seen.recv().unwrap().contains(&KEY.to_ascii_lowercase()), "{kind}: its own origin gets the key");
        assert!(seen_elsewhere.try_recv().is_err(), "{kind}: nothing went to the other origin");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_redirected_to_another_origin_goes_there_without_the_key() {
    let (elsewhere, seen_elsewhere) = server(1, not_found);
    let (base, seen) = server(1, redirect_to(elsewhere));
    let provider =
        Anthropic::new(AnthropicConfig { base_url: format!("{base}/v1"), api_key: Some(SecretValue::new(KEY)) })
            .unwrap();
    let request =
        ProviderRequest { model: "m".into(), messages: vec![Message::user("hi")], ..ProviderRequest::default() };
    let items: Vec<_> = provider.stream(request).collect().await;
    assert!(items.iter().any(Result::is_err), "{items:?}");
    assert!(seen.recv().unwrap().contains(&format!("x-api-key: {}", KEY.to_ascii_lowercase())));
    // `eventsource-client` follows a 307 itself; the transport drops the key on the way.
    let head = seen_elsewhere.recv_timeout(std::time::Duration::from_secs(5)).expect("the redirect was followed");
    assert!(!head.contains(&KEY.to_ascii_lowercase()), "the key followed the redirect: {head}");
}
