//! A server that quotes a key back (an error body echoing the `Authorization` header, a tool
//! error repeating its request) does not put the key into an event, the database, an export,
//! the error a turn ends with, or a model listing's error.

use std::sync::{Arc, Mutex};
use switchboard_core::turn::FixedApprover;
use switchboard_core::{ChatEvent, EventSink};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_secrets::{MemoryStore, SecretStore, SecretValue};
use switchboard_service::Service;
use switchboard_service::ipc::{ProviderProfile, SendRequest};
use switchboard_store::Store;

const KEY: &str = "sk-test-echoed-0123456789abcd";
const TAVILY: &str = "tvly-test-echoed-0123456789";

fn echo_401() -> Reply {
    Reply::Http {
        status: 401,
        headers: vec![("content-type".into(), "application/json".into())],
        body: format!(r#"{{"error":{{"message":"Invalid key in header 'Authorization: Bearer {KEY}'"}}}}"#),
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_quoted_back_by_a_server_or_a_tool_is_redacted_everywhere() {
    // The model calls web_fetch with both keys in the URL (web_fetch refuses the local address and
    // says which URL), then the server rejects the next request quoting the key.
    let url = format!("http://127.0.0.1:9/?key={KEY}&tavily={TAVILY}");
    let mock = MockServer::start(Script::new([
        Reply::tool_call("c1", "web_fetch", serde_json::json!({ "url": url }).to_string()),
        echo_401(),
        echo_401(),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("switchboard.db");
    let keys = Arc::new(MemoryStore::new());
    keys.set("tavily", &SecretValue::new(TAVILY)).unwrap();
    let service = Service::new(Store::open(&db).unwrap(), keys).unwrap();
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url: mock.base_url(),
        model: Some("m".into()),
        options: Default::default(),
    };
    service.add_provider(&profile, true).unwrap();
    service.set_key("mock", KEY).unwrap();

    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let sink: Arc<dyn EventSink> = Arc::new(move |e: ChatEvent| seen.lock().unwrap().push(e));
    let turn = service.prepare(SendRequest::text(None, "fetch it")).unwrap();
    let conversation = turn.started.conversation_id.clone();
    let report = service.run(turn, sink, Arc::new(FixedApprover(switchboard_core::turn::ApprovalDecision::Once))).await;

    assert_eq!(
        mock.requests()[1].header("authorization"),
        Some(format!("Bearer {KEY}").as_str()),
        "the server really had the key it quoted"
    );
    let events: Vec<String> = events.lock().unwrap().iter().map(|e| serde_json::to_string(e).unwrap()).collect();
    assert!(events.iter().any(|e| e.contains("toolResult") && e.contains("efused to fetch")), "{events:#?}");
    assert!(events.iter().any(|e| e.contains("\"type\":\"error\"") && e.contains("Invalid key")), "{events:#?}");
    let error = report.outcome.error.expect("the turn failed");
    // The tool's result went back to the model's provider: the keys it quoted did not.
    let tool_results: Vec<String> = mock.requests()[1]
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert!(!tool_results.is_empty() && tool_results.iter().any(|t| t.contains("127.0.0.1:9")), "{tool_results:?}");
    for t in &tool_results {
        assert!(!t.contains(KEY) && !t.contains(TAVILY), "a key went to the model: {t}");
    }
    let export = service.export_document(None).unwrap();
    let view = serde_json::to_string(&service.open_all(&conversation).unwrap()).unwrap();
    for secret in [KEY, TAVILY] {
        for e in &events {
            assert!(!e.contains(secret), "in an event: {e}");
        }
        assert!(!error.message.contains(secret), "in the turn's error: {}", error.message);
        assert!(!export.contains(secret), "in the export");
        assert!(!view.contains(secret), "in the stored conversation");
    }
    drop(service);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(!contains(&bytes, KEY) && !contains(&bytes, TAVILY), "a key is in {}", path.display());
    }
}

/// A server that answers every request with a 401 quoting back the Authorization header it got
/// (the mock provider's model list is fixed, so this one is raw HTTP).
async fn echoing_server() -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut buf = vec![0u8; 16 * 1024];
            let n = socket.read(&mut buf).await.unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]).into_owned();
            let auth = request
                .lines()
                .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("authorization")))
                .map(|(_, v)| v.trim().to_owned())
                .unwrap_or_default();
            let body = serde_json::json!({"error": {"message": format!("Rejected '{auth}'")}}).to_string();
            let response = format!(
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        }
    });
    format!("http://{addr}/v1")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_listing_error_echoing_the_authorization_header_is_redacted() {
    let base_url = echoing_server().await;
    let service = Service::new(Store::open_in_memory().unwrap(), Arc::new(MemoryStore::new())).unwrap();
    let profile = ProviderProfile {
        name: "mock".into(),
        kind: "openai".into(),
        base_url,
        model: Some("m".into()),
        options: Default::default(),
    };
    service.add_provider(&profile, true).unwrap();
    service.set_key("mock", KEY).unwrap();
    let err = service.models(None).await.unwrap_err();
    assert!(err.message.contains("Rejected 'Bearer "), "the server's words are kept: {}", err.message);
    assert!(!err.message.contains(KEY), "{}", err.message);
}
