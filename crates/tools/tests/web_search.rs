//! `web_search` against local mock Tavily, Exa and SearXNG servers: request shapes, output, and
//! every error a person or the model has to act on.

mod common;

use common::{Recorded, Reply, TestServer};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::tool::{SecretValue, Secrets};
use switchboard_core::{ApprovalPolicy, Tool, ToolContext, ToolError};
use switchboard_secrets::{MemoryStore, SecretStore, ToolSecrets};
use switchboard_tools::web::key_env_var;
use switchboard_tools::{SearchBackend, WebSearch, WebToolsConfig, builtin_registry, builtin_registry_with};

const TAVILY_KEY: &str = "tvly-test-0123456789abcdef";
const EXA_KEY: &str = "exa-test-fedcba9876543210";

fn secrets(keys: &[(&str, &str)]) -> Arc<dyn Secrets> {
    let store = Arc::new(MemoryStore::new());
    for (name, value) in keys {
        store.set(name, &SecretValue::new(*value)).unwrap();
    }
    Arc::new(ToolSecrets(store))
}

fn config(backend: SearchBackend, server: &TestServer) -> WebToolsConfig {
    WebToolsConfig {
        search_backend: backend,
        tavily_base_url: server.url(""),
        exa_base_url: server.url("/"),
        searxng_url: Some(server.url("/searx")),
        ..WebToolsConfig::default()
    }
}

async fn search(config: &WebToolsConfig, secrets: Arc<dyn Secrets>, args: Value) -> Result<String, ToolError> {
    WebSearch::new(config).call(args, ToolContext::detached(secrets)).await.map(|o| o.text)
}

fn tavily_results() -> Value {
    json!({
        "query": "rust",
        "response_time": 0.5,
        "results": [
            {"title": "Rust Programming Language", "url": "https://www.rust-lang.org/", "content": "A language empowering everyone\n to build reliable software.", "score": 0.9},
            {"title": "Rust 1.90 released", "url": "https://blog.rust-lang.org/1.90", "content": "Today we release...", "published_date": "2025-09-18T00:00:00Z", "score": 0.8}
        ]
    })
}

#[tokio::test]
async fn tavily_posts_the_query_with_a_bearer_key_and_lists_results() {
    let server = TestServer::start(|_| Reply::json(200, tavily_results())).await;
    let out = search(
        &config(SearchBackend::Tavily, &server),
        secrets(&[("tavily", TAVILY_KEY)]),
        json!({"query": "rust  language", "max_results": 3}),
    )
    .await
    .unwrap();

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/search"));
    assert_eq!(r.header("authorization"), Some(format!("Bearer {TAVILY_KEY}").as_str()));
    assert!(r.header("content-type").unwrap().starts_with("application/json"));
    let body = r.json();
    assert_eq!(body["query"], "rust language");
    assert_eq!(body["max_results"], 3);
    assert!(body.get("api_key").is_none(), "the key goes in the header only: {body}");

    assert_eq!(
        out,
        "Results for \"rust language\" from Tavily:\n\n\
         1. Rust Programming Language\n   https://www.rust-lang.org/\n   A language empowering everyone to build reliable software.\n\n\
         2. Rust 1.90 released\n   https://blog.rust-lang.org/1.90\n   Published 2025-09-18\n   Today we release..."
    );
}

#[tokio::test]
async fn exa_posts_with_x_api_key_and_reads_highlights_or_text() {
    let server = TestServer::start(|_| {
        Reply::json(
            200,
            json!({"requestId": "r1", "results": [
                {"id": "1", "title": "Exa result", "url": "https://exa.example/a", "publishedDate": "2024-02-03T04:05:06.000Z",
                 "highlights": ["first highlight", "second"], "text": "full text"},
                {"id": "2", "title": "Text only", "url": "https://exa.example/b", "text": "only  text here"}
            ]}),
        )
    })
    .await;
    let out =
        search(&config(SearchBackend::Exa, &server), secrets(&[("exa", EXA_KEY)]), json!({"query": "neural search"}))
            .await
            .unwrap();
    let r = &server.requests()[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/search"));
    assert_eq!(r.header("x-api-key"), Some(EXA_KEY));
    assert!(r.header("authorization").is_none());
    let body = r.json();
    assert_eq!(body["query"], "neural search");
    assert_eq!(body["numResults"], 5);
    assert!(body["contents"].is_object(), "{body}");
    assert!(
        out.contains("1. Exa result\n   https://exa.example/a\n   Published 2024-02-03\n   first highlight … second"),
        "{out}"
    );
    assert!(out.contains("2. Text only\n   https://exa.example/b\n   only text here"), "{out}");
}

#[tokio::test]
async fn searxng_gets_json_without_a_key_and_caps_the_results() {
    let results: Vec<Value> = (1..=8)
        .map(|i| json!({"title": format!("Hit {i}"), "url": format!("https://s.example/{i}"), "content": "c", "engine": "ddg"}))
        .collect();
    let server = TestServer::start(move |_| Reply::json(200, json!({"query": "q", "results": results}))).await;
    let out =
        search(&config(SearchBackend::Searxng, &server), secrets(&[]), json!({"query": "café & co", "max_results": 2}))
            .await
            .unwrap();
    let r = &server.requests()[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("GET", "/searx/search"));
    let query = r.query.clone().unwrap();
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
    assert!(pairs.contains(&("q".into(), "café & co".into())), "{query}");
    assert!(pairs.contains(&("format".into(), "json".into())), "{query}");
    assert!(r.header("authorization").is_none() && r.header("x-api-key").is_none());
    assert!(out.contains("2. Hit 2") && !out.contains("3. Hit 3"), "{out}");
}

#[tokio::test]
async fn a_redirect_to_another_address_is_not_followed_and_the_key_stays() {
    let elsewhere = TestServer::start(|_| Reply::json(200, json!({"results": []}))).await;
    let target = elsewhere.url("/search");
    let server = TestServer::start(move |_| Reply::redirect(307, &target)).await;
    let e = search(&config(SearchBackend::Exa, &server), secrets(&[("exa", EXA_KEY)]), json!({"query": "x"}))
        .await
        .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("answered with a redirect to http://127.0.0.1:"), "{msg}");
    assert!(msg.contains("does not follow"), "{msg}");
    assert_eq!(server.requests().len(), 1);
    assert!(elsewhere.requests().is_empty(), "the search and its key went nowhere else");
}

#[tokio::test]
async fn a_missing_key_says_where_to_add_it_and_sends_nothing() {
    let server = TestServer::start(|_| Reply::json(200, tavily_results())).await;
    let e = search(&config(SearchBackend::Tavily, &server), secrets(&[]), json!({"query": "x"})).await.unwrap_err();
    assert_eq!(
        e,
        ToolError::MissingSecret(
            "Web search needs a Tavily API key. Add it in Settings → Search & web tools (or set SWITCHBOARD_KEY_TAVILY), then try again."
                .into()
        )
    );
    let e = search(&config(SearchBackend::Exa, &server), secrets(&[("tavily", TAVILY_KEY)]), json!({"query": "x"}))
        .await
        .unwrap_err();
    assert!(matches!(&e, ToolError::MissingSecret(m) if m.contains("needs an Exa API key")), "{e}");
    assert!(e.to_string().contains("SWITCHBOARD_KEY_EXA"), "{e}");
    assert!(server.requests().is_empty());
}

/// A store that cannot be read, like a locked keychain.
struct Locked;

impl Secrets for Locked {
    fn get(&self, _name: &str) -> Result<Option<SecretValue>, String> {
        Err("the secret store is unavailable: the keychain is locked".into())
    }
}

#[tokio::test]
async fn an_unreadable_store_is_its_own_error() {
    let server = TestServer::start(|_| Reply::json(200, tavily_results())).await;
    let e = search(&config(SearchBackend::Tavily, &server), Arc::new(Locked), json!({"query": "x"})).await.unwrap_err();
    let ToolError::Failed(msg) = e else { panic!("{e:?}") };
    assert!(
        msg.starts_with(
            "Web search could not read the Tavily API key: the secret store is unavailable: the keychain is locked."
        ),
        "{msg}"
    );
    assert!(msg.contains("Unlock your system keychain, or set SWITCHBOARD_KEY_TAVILY"), "{msg}");
    assert!(server.requests().is_empty());
}

async fn error_for(backend: SearchBackend, reply: Reply) -> (String, Vec<Recorded>) {
    let server = TestServer::start(move |_| reply.clone()).await;
    let keys = secrets(&[("tavily", TAVILY_KEY), ("exa", EXA_KEY)]);
    let e = search(&config(backend, &server), keys, json!({"query": "x"})).await.unwrap_err();
    assert!(matches!(e, ToolError::Failed(_)), "{e:?}");
    (e.to_string(), server.requests())
}

#[tokio::test]
async fn each_error_status_gets_a_specific_message() {
    use SearchBackend::*;
    let (m, _) = error_for(
        Tavily,
        Reply::json(401, json!({"detail": {"error": format!("Unauthorized: invalid key {TAVILY_KEY}")}})),
    )
    .await;
    assert!(m.starts_with("Tavily rejected the API key (HTTP 401: Unauthorized: invalid key <redacted>)."), "{m}");
    assert!(m.contains("Settings → Search & web tools (or SWITCHBOARD_KEY_TAVILY)"), "{m}");
    assert!(!m.contains(TAVILY_KEY));

    let (m, _) = error_for(Exa, Reply::json(403, json!({"error": "forbidden"}))).await;
    assert!(m.starts_with("Exa rejected the API key (HTTP 403: forbidden)."), "{m}");
    assert!(m.contains("SWITCHBOARD_KEY_EXA"), "{m}");

    let (m, _) = error_for(Tavily, Reply::json(400, json!({"detail": {"error": "Query is too long."}}))).await;
    assert_eq!(
        m,
        "Tavily rejected the search request (HTTP 400: Query is too long.). Rephrase the query with fewer, plainer words and try again."
    );

    let (m, _) =
        error_for(Exa, Reply::json(429, json!({"error": "Too many requests"})).header("retry-after", "17")).await;
    assert_eq!(
        m,
        "Exa is rate-limiting searches (HTTP 429: Too many requests). Wait 17 s (the service's Retry-After) before searching again."
    );

    let (m, _) = error_for(Tavily, Reply::new(429, "text/plain", "")).await;
    assert!(m.contains("HTTP 429") && m.contains("Wait a minute"), "{m}");

    let (m, _) = error_for(
        Tavily,
        Reply::json(432, json!({"detail": {"error": "This request exceeds your plan's set usage limit."}})),
    )
    .await;
    assert!(m.starts_with("Your Tavily plan's credits are used up (HTTP 432"), "{m}");

    let (m, _) = error_for(Tavily, Reply::new(502, "text/html", "<html><body>Bad gateway</body></html>")).await;
    assert_eq!(m, "Tavily had a server error (HTTP 502). Try again in a moment, or answer without searching.");

    let (m, _) = error_for(Searxng, Reply::new(403, "text/html", "<h1>Forbidden</h1>")).await;
    assert!(m.contains("SearXNG at http://127.0.0.1:") && m.contains("search.formats"), "{m}");

    let (m, _) = error_for(Tavily, Reply::new(200, "application/json", "not json")).await;
    assert!(m.starts_with("Tavily answered with something that is not the expected JSON"), "{m}");
}

#[tokio::test]
async fn empty_results_and_timeouts_are_explained() {
    let server = TestServer::start(|_| Reply::json(200, json!({"results": []}))).await;
    let out = search(&config(SearchBackend::Searxng, &server), secrets(&[]), json!({"query": "zzz"})).await.unwrap();
    assert_eq!(out, "No results for \"zzz\" from SearXNG. Try fewer or different words, or a broader query.");

    let server = TestServer::start(|_| Reply::json(200, json!({"results": []})).delayed(Duration::from_secs(5))).await;
    let mut c = config(SearchBackend::Tavily, &server);
    c.search_timeout = Duration::from_millis(300);
    let e = search(&c, secrets(&[("tavily", TAVILY_KEY)]), json!({"query": "x"})).await.unwrap_err();
    assert_eq!(e.to_string(), "Tavily did not answer within 0.3 s. Try again, or answer without searching.");
}

#[tokio::test]
async fn an_unreachable_searxng_and_a_missing_url_say_what_to_check() {
    // Bind then drop a listener: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let c = WebToolsConfig {
        search_backend: SearchBackend::Searxng,
        searxng_url: Some(format!("http://127.0.0.1:{port}")),
        ..Default::default()
    };
    let e = search(&c, secrets(&[]), json!({"query": "x"})).await.unwrap_err();
    let m = e.to_string();
    assert!(m.starts_with(&format!("Could not reach SearXNG at http://127.0.0.1:{port}:")), "{m}");
    assert!(m.contains("Check that the SearXNG instance is running"), "{m}");

    let c = WebToolsConfig { search_backend: SearchBackend::Searxng, searxng_url: None, ..Default::default() };
    let e = search(&c, secrets(&[]), json!({"query": "x"})).await.unwrap_err();
    assert!(
        matches!(&e, ToolError::MissingSecret(m) if m.contains("no SearXNG URL is set") && m.contains("Settings → Search & web tools")),
        "{e:?}"
    );
}

#[tokio::test]
async fn bad_arguments_are_for_the_model_to_fix() {
    let server = TestServer::start(|_| Reply::json(200, tavily_results())).await;
    let c = config(SearchBackend::Tavily, &server);
    let keys = secrets(&[("tavily", TAVILY_KEY)]);
    let e = search(&c, keys.clone(), json!({"query": "  "})).await.unwrap_err();
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e:?}");
    let e = search(&c, keys, json!({"query": "x", "max_results": 50})).await.unwrap_err();
    assert!(e.to_string().contains("from 1 to 10"), "{e}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn the_registry_offers_the_web_tools_read_only_with_examples() {
    assert_eq!(builtin_registry().unwrap().defs().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["get_time"]);
    let reg = builtin_registry_with(&WebToolsConfig::default()).unwrap();
    let names: Vec<&str> = reg.defs().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["get_time", "web_fetch", "web_search"]);
    for name in ["web_fetch", "web_search"] {
        let def = reg.get(name).unwrap().def();
        assert_eq!(def.approval, ApprovalPolicy::Auto, "{name} is read-only");
        assert!(def.example_output.as_deref().is_some_and(|e| !e.is_empty()), "{name}");
        assert!(def.description.contains("Use it"), "{name}: {}", def.description);
    }
    assert!(reg.validate("web_search", &json!({"query": "x", "max_results": 10})).is_ok());
    assert!(reg.validate("web_search", &json!({"query": "x", "max_results": 11})).is_err());
    assert!(reg.validate("web_search", &json!({})).is_err());
    assert!(reg.validate("web_fetch", &json!({"url": "https://example.com", "max_chars": 500})).is_ok());
    assert!(reg.validate("web_fetch", &json!({"url": "https://example.com", "extra": 1})).is_err());
    let exa =
        builtin_registry_with(&WebToolsConfig { search_backend: SearchBackend::Exa, ..Default::default() }).unwrap();
    assert!(exa.get("web_search").unwrap().def().description.contains("(Exa)"));
}

#[test]
fn key_variables_match_the_secrets_crate() {
    for name in ["tavily", "exa", "my-key"] {
        assert_eq!(key_env_var(name), switchboard_secrets::env_var_for(name));
    }
}
