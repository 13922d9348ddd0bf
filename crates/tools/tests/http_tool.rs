//! HTTP API tools against local servers: what reaches the server (encoding, typed bodies, keys),
//! redirects (a key never follows one to another origin), error answers, limits, time, and the
//! address policy. Never the internet: every server is on 127.0.0.1, and names are mapped to it
//! by an injected resolver.

mod common;

use common::{Reply, TestServer};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_core::tool::{SecretValue, Secrets};
use switchboard_core::{ApprovalPolicy, Tool, ToolContext, ToolError};
use switchboard_tools::web::{AddressPolicy, Resolver, StandardPolicy};
use switchboard_tools::{HttpTool, HttpToolConfig};

const KEY: &str = "sk-test-4f9a8b7c6d5e";

/// A key store with fixed entries.
struct Keys(HashMap<&'static str, &'static str>);

impl Secrets for Keys {
    fn get(&self, name: &str) -> Result<Option<SecretValue>, String> {
        Ok(self.0.get(name).map(|v| SecretValue::new(*v)))
    }
}

fn keys() -> Arc<dyn Secrets> {
    Arc::new(Keys(HashMap::from([("api_key", KEY)])))
}

/// A definition for a local server (local addresses allowed).
fn local(name: &str, url: String) -> HttpToolConfig {
    HttpToolConfig { allow_local_addresses: true, ..HttpToolConfig::new(name, "A test API.", url) }
}

async fn call(tool: &HttpTool, args: Value) -> Result<String, ToolError> {
    tool.call(args, ToolContext::detached(keys())).await.map(|o| o.text)
}

#[tokio::test]
async fn a_get_reaches_the_server_with_path_and_query_encoded_exactly() {
    let server = TestServer::start(|_| Reply::json(200, json!({"ok": true, "n": [1, 2]}))).await;
    let mut c = local("repos", server.url("/users/{{user}}/repos?sort={{sort}}&fixed=a%20b"));
    c.query.insert("q".into(), "{{q}}".into());
    c.query.insert("page".into(), "{{page}}".into());
    c.parameters = Some(json!({"type": "object", "properties": {
        "user": {"type": "string"}, "sort": {"type": "string"}, "q": {"type": "string"}, "page": {"type": "integer"}
    }, "required": ["user"]}));
    let tool = HttpTool::new(c).unwrap();
    assert_eq!(tool.def().approval, ApprovalPolicy::Auto);
    let out =
        call(&tool, json!({"user": "a b/../c?d#e", "sort": "new&x=1", "q": "é 🚀 +%", "extra": 1})).await.unwrap();
    assert_eq!(out, "{\n  \"n\": [\n    1,\n    2\n  ],\n  \"ok\": true\n}");
    let req = &server.requests()[0];
    assert_eq!(req.method, "GET");
    assert_eq!(req.path, "/users/a%20b%2F..%2Fc%3Fd%23e/repos");
    assert_eq!(req.query.as_deref(), Some("sort=new%26x%3D1&fixed=a%20b&q=%C3%A9%20%F0%9F%9A%80%20%2B%25"));
    assert!(req.header("accept").unwrap().starts_with("application/json"));
    assert!(req.header("user-agent").unwrap().starts_with("Switchboard/"));
}

#[tokio::test]
async fn a_post_sends_a_typed_json_body_and_asks_first() {
    let server = TestServer::start(|r| Reply::json(201, json!({"id": 42, "got": r.json()}))).await;
    let mut c = local("create", server.url("/items"));
    c.method = "post".into();
    c.body = Some(
        json!({"title": "{{title}}", "count": "{{count}}", "done": "{{done}}", "tags": "{{tags}}", "note": "x{{count}}"}),
    );
    c.parameters = Some(json!({"type": "object", "properties": {
        "title": {"type": "string"}, "count": {"type": "integer"}, "done": {"type": "boolean"}, "tags": {"type": "array"}
    }}));
    c.response_pointer = Some("/id".into());
    let tool = HttpTool::new(c).unwrap();
    assert_eq!(tool.def().approval, ApprovalPolicy::Ask);
    let out = call(&tool, json!({"title": "Milk", "count": 2, "done": false, "tags": ["a"]})).await.unwrap();
    assert_eq!(out, "42");
    let req = &server.requests()[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.json(), json!({"title": "Milk", "count": 2, "done": false, "tags": ["a"], "note": "x2"}));
}

#[tokio::test]
async fn a_key_reaches_the_configured_origin_and_is_masked_when_echoed() {
    let server = TestServer::start(|r| {
        Reply::json(200, json!({"auth": r.header("authorization"), "query": r.query, "other": "fine"}))
    })
    .await;
    let mut c = local("echo", server.url("/echo?token={{secret:api_key}}"));
    c.headers.insert("Authorization".into(), "Bearer {{secret:api_key}}".into());
    let tool = HttpTool::new(c).unwrap();
    let out = call(&tool, json!({})).await.unwrap();
    let req = &server.requests()[0];
    assert_eq!(req.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(req.query.as_deref(), Some(format!("token={KEY}").as_str()));
    assert!(!out.contains(KEY) && !out.contains("4f9a8b7c"), "{out}");
    assert!(out.contains("\"auth\": \"Bearer [secret api_key]\""), "{out}");
    assert!(out.contains("\"query\": \"token=[secret api_key]\""), "{out}");

    // An error answer that quotes the key is masked as well.
    let server = TestServer::start(|r| Reply::new(401, "text/plain", format!("bad key {:?}", r.header("x-key")))).await;
    let mut c = local("echo", server.url("/"));
    c.headers.insert("X-Key".into(), "{{secret:api_key}}".into());
    let e = call(&HttpTool::new(c).unwrap(), json!({})).await.unwrap_err();
    assert_eq!(
        e,
        ToolError::Failed(
            "The API answered 401 Unauthorized: bad key Some(\"[secret api_key]\") Check the key 'api_key' in Settings → Keys."
                .into()
        )
    );
}

#[tokio::test]
async fn missing_and_unreadable_keys_are_reported() {
    let server = TestServer::start(|_| Reply::json(200, json!({}))).await;
    let mut c = local("needs_key", server.url("/"));
    c.headers.insert("X-Key".into(), "{{secret:other}}".into());
    let tool = HttpTool::new(c).unwrap();
    let e = call(&tool, json!({})).await.unwrap_err();
    assert_eq!(
        e,
        ToolError::MissingSecret("The HTTP tool 'needs_key' needs the key 'other': add it in Settings → Keys.".into())
    );
    struct Locked;
    impl Secrets for Locked {
        fn get(&self, _: &str) -> Result<Option<SecretValue>, String> {
            Err("the keychain is locked".into())
        }
    }
    let e = tool.call(json!({}), ToolContext::detached(Arc::new(Locked))).await.unwrap_err();
    assert!(
        matches!(&e, ToolError::Failed(m) if m.contains("could not read the key 'other': the keychain is locked")),
        "{e:?}"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_key_never_follows_a_redirect_to_another_origin() {
    let other =
        TestServer::start(|r| Reply::json(200, json!({"elsewhere": true, "auth": r.header("authorization")}))).await;
    let target = other.url("/steal");
    let server = TestServer::start(move |r| match r.path.as_str() {
        "/away" => Reply::redirect(302, &target),
        "/moved" => Reply::redirect(301, "/here"),
        "/here" => Reply::json(200, json!({"here": true})),
        _ => Reply::new(404, "text/plain", ""),
    })
    .await;
    let with_key = |path: &str| {
        let mut c = local("keyed", server.url(path));
        c.headers.insert("Authorization".into(), "Bearer {{secret:api_key}}".into());
        HttpTool::new(c).unwrap()
    };
    let e = call(&with_key("/away"), json!({})).await.unwrap_err();
    let origin = format!("http://{}", server.addr);
    let elsewhere = format!("http://{}", other.addr);
    assert_eq!(
        e,
        ToolError::Failed(format!(
            "The API redirected the request to {elsewhere}; the HTTP tool 'keyed' did not follow, because the key for {origin} is never sent elsewhere."
        ))
    );
    assert!(other.requests().is_empty(), "the other server never saw the key");

    // The same origin is followed, key and all.
    let out = call(&with_key("/moved"), json!({})).await.unwrap();
    assert_eq!(out, "{\n  \"here\": true\n}");
    let seen: Vec<_> =
        server.requests().iter().map(|r| (r.path.clone(), r.header("authorization").map(str::to_owned))).collect();
    assert_eq!(seen.last().unwrap(), &("/here".to_owned(), Some(format!("Bearer {KEY}"))));

    // Without a key, another origin is followed (after the same address checks).
    let out = call(&HttpTool::new(local("plain", server.url("/away"))).unwrap(), json!({})).await.unwrap();
    assert!(out.contains("\"elsewhere\": true") && out.contains("\"auth\": null"), "{out}");
    assert_eq!(other.requests().len(), 1);

    // A POST is never sent again to where a redirect points.
    let mut c = local("poster", server.url("/moved"));
    c.method = "POST".into();
    let e = call(&HttpTool::new(c).unwrap(), json!({})).await.unwrap_err();
    assert!(e.to_string().contains("follows redirects only for GET and HEAD"), "{e}");
}

#[tokio::test]
async fn redirect_loops_stop_after_five_hops() {
    let server = TestServer::start(|r| {
        let n: u32 = r.path.trim_start_matches("/hop/").parse().unwrap_or(0);
        if n == 0 { Reply::json(200, json!("arrived")) } else { Reply::redirect(302, &format!("/hop/{}", n - 1)) }
    })
    .await;
    let ok = call(&HttpTool::new(local("hops", server.url("/hop/5"))).unwrap(), json!({})).await.unwrap();
    assert_eq!(ok, "\"arrived\"");
    let e = call(&HttpTool::new(local("hops", server.url("/hop/6"))).unwrap(), json!({})).await.unwrap_err();
    assert!(e.to_string().starts_with("The HTTP tool 'hops' gave up after 5 redirects"), "{e}");
}

#[tokio::test]
async fn error_answers_are_one_short_line() {
    let server = TestServer::start(|r| match r.path.as_str() {
        "/html" => Reply::new(
            500,
            "text/html",
            "<html><head><title>Database &amp; cache down</title></head><body>".to_owned() + &"<p>x</p>".repeat(5000),
        ),
        "/json" => Reply::json(404, json!({"error": {"message": "no such city", "code": 404}})),
        "/png" => Reply::new(200, "image/png", vec![0x89, b'P', b'N', b'G', 0]),
        "/empty" => Reply::new(204, "text/plain", ""),
        _ => Reply::new(503, "text/plain", ""),
    })
    .await;
    let get = |path: &str| {
        let tool = HttpTool::new(local("api", server.url(path))).unwrap();
        async move { call(&tool, json!({})).await }
    };
    assert_eq!(
        get("/html").await.unwrap_err(),
        ToolError::Failed("The API answered 500 Internal Server Error: Database & cache down".into())
    );
    assert_eq!(
        get("/json").await.unwrap_err(),
        ToolError::Failed(r#"The API answered 404 Not Found: {"error":{"code":404,"message":"no such city"}}"#.into())
    );
    assert_eq!(get("/other").await.unwrap_err(), ToolError::Failed("The API answered 503 Service Unavailable.".into()));
    assert_eq!(
        get("/png").await.unwrap_err(),
        ToolError::Failed(
            "The API answered with image/png, which the HTTP tool 'api' cannot read: it reads JSON and text.".into()
        )
    );
    assert_eq!(get("/empty").await.unwrap(), "The API answered 204 No Content with no content.");
}

#[tokio::test]
async fn a_body_over_the_limit_stops_with_a_clear_error() {
    let big = "x".repeat(2 * 1024 * 1024);
    let server = TestServer::start(move |r| match r.path.as_str() {
        "/big" => Reply::new(200, "text/plain", big.clone()),
        // No length declared, and it never ends: reading must stop at the limit.
        _ => Reply::new(200, "text/plain", "y".repeat(4096)).stalled(),
    })
    .await;
    let e = call(&HttpTool::new(local("big", server.url("/big"))).unwrap(), json!({})).await.unwrap_err();
    assert!(
        e.to_string()
            .starts_with("The response is larger than the limit of 1 MiB (maxResponseBytes) of the HTTP tool 'big'"),
        "{e}"
    );
    let mut c = local("stream", server.url("/stream"));
    c.max_response_bytes = Some(1024);
    c.timeout_secs = Some(20);
    let started = Instant::now();
    let e = call(&HttpTool::new(c).unwrap(), json!({})).await.unwrap_err();
    assert!(e.to_string().starts_with("The response is larger than the limit of 1 KiB"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5), "stopped without waiting for the end");
}

#[tokio::test]
async fn the_response_pointer_picks_a_part_and_output_is_cut() {
    let server = TestServer::start(|r| match r.path.as_str() {
        "/text" => Reply::new(200, "text/plain; charset=utf-8", "é".repeat(50)),
        _ => Reply::json(200, json!({"data": {"items": [{"id": 1}, {"id": 2}]}, "meta": {"page": 1}})),
    })
    .await;
    let mut c = local("items", server.url("/list"));
    c.response_pointer = Some("/data/items/1".into());
    assert_eq!(call(&HttpTool::new(c.clone()).unwrap(), json!({})).await.unwrap(), "{\n  \"id\": 2\n}");
    c.response_pointer = Some("/results".into());
    assert_eq!(
        call(&HttpTool::new(c).unwrap(), json!({})).await.unwrap_err(),
        ToolError::Failed(
            "The response has nothing at /results (the responsePointer); its top-level keys are: data, meta.".into()
        )
    );
    let mut c = local("text", server.url("/text"));
    c.max_chars = Some(10);
    assert_eq!(
        call(&HttpTool::new(c).unwrap(), json!({})).await.unwrap(),
        format!("{}\n\n[Cut at 10 of 50 characters.]", "é".repeat(10))
    );
}

#[tokio::test]
async fn a_slow_server_hits_the_time_limit() {
    let server = TestServer::start(|_| Reply::json(200, json!({})).delayed(Duration::from_secs(10))).await;
    let mut c = local("slow", server.url("/"));
    c.timeout_secs = Some(1);
    let started = Instant::now();
    let e = call(&HttpTool::new(c).unwrap(), json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(e, ToolError::Failed("The HTTP tool 'slow' gave up after 1 s: the API did not answer in time.".into()));
}

#[tokio::test]
async fn cancelling_stops_a_call_promptly() {
    let server = TestServer::start(|_| Reply::json(200, json!({})).delayed(Duration::from_secs(30))).await;
    let tool = HttpTool::new(local("slow", server.url("/"))).unwrap();
    let ctx = ToolContext::detached(keys());
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    assert_eq!(tool.call(json!({}), ctx).await.unwrap_err(), ToolError::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(2));
}

/// Names for tests: a fixed map, no DNS.
struct MapResolver(HashMap<&'static str, Vec<IpAddr>>);

impl Resolver for MapResolver {
    fn lookup(&self, host: &str) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        let found = self.0.get(host).cloned();
        let host = host.to_owned();
        async move { found.ok_or_else(|| std::io::Error::other(format!("no test address for {host}"))) }.boxed()
    }
}

/// The real policy, except that 127.0.0.1 (the test servers) counts as public.
struct TestServerIsPublic;

impl AddressPolicy for TestServerIsPublic {
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        if ip == IpAddr::V4(Ipv4Addr::LOCALHOST) { Ok(()) } else { StandardPolicy::default().check_ip(ip) }
    }
}

fn resolver() -> Arc<dyn Resolver> {
    Arc::new(MapResolver(HashMap::from([
        ("api.test", vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]),
        ("internal.test", vec!["10.1.2.3".parse().unwrap()]),
    ])))
}

#[tokio::test]
async fn the_default_policy_refuses_local_addresses_by_address() {
    let server = TestServer::start(|_| Reply::json(200, json!({"secret": "internal"}))).await;
    let port = server.addr.port();
    // An IP literal, refused before connecting.
    let tool = HttpTool::new(HttpToolConfig::new("lit", "d", server.url("/x"))).unwrap();
    let e = call(&tool, json!({})).await.unwrap_err();
    let m = e.to_string();
    assert!(m.starts_with(&format!("Refused to call {}: 127.0.0.1 is a loopback address", server.url("/x"))), "{m}");
    assert!(m.contains("only contacts public internet addresses, unless its definition allows local addresses"), "{m}");
    // A name that resolves to it, refused after resolution.
    let c = HttpToolConfig::new("named", "d", format!("http://api.test:{port}/x"));
    let tool = HttpTool::with_network(c.clone(), resolver(), Arc::new(StandardPolicy::default())).unwrap();
    let m = call(&tool, json!({})).await.unwrap_err().to_string();
    assert!(m.contains("api.test (which resolves to 127.0.0.1) is a loopback address"), "{m}");
    assert!(server.requests().is_empty(), "nothing reached the server");

    // The same name reaches the server once its address counts as public.
    let tool = HttpTool::with_network(c, resolver(), Arc::new(TestServerIsPublic)).unwrap();
    assert!(call(&tool, json!({})).await.unwrap().contains("internal"));

    // And a public-looking server cannot redirect a keyless call into the private network.
    let bounce = TestServer::start(|_| Reply::redirect(302, "http://internal.test/admin")).await;
    let c = HttpToolConfig::new("bounce", "d", format!("http://api.test:{}/", bounce.addr.port()));
    let tool = HttpTool::with_network(c, resolver(), Arc::new(TestServerIsPublic)).unwrap();
    let m = call(&tool, json!({})).await.unwrap_err().to_string();
    assert!(m.contains("internal.test (which resolves to 10.1.2.3) is a private network address"), "{m}");
}

#[tokio::test]
async fn try_it_reports_the_masked_request_and_the_outcome() {
    let server = TestServer::start(|r| Reply::json(200, json!({"key": r.header("x-api-key")}))).await;
    let mut c = local("weather", server.url("/v1/{{city}}"));
    c.headers.insert("X-Api-Key".into(), "{{secret:api_key}}".into());
    let tool = HttpTool::new(c).unwrap();
    let report = tool.try_it(json!({"city": "São Paulo"}), keys()).await;
    assert_eq!(
        report.request,
        format!(
            "GET {}\nX-Api-Key: [secret api_key]\nAccept: application/json, text/plain;q=0.9, */*;q=0.1",
            server.url("/v1/S%C3%A3o%20Paulo")
        )
    );
    assert_eq!(report.outcome, Ok("{\n  \"key\": \"[secret api_key]\"\n}".into()));
    assert_eq!(server.requests()[0].header("x-api-key"), Some(KEY));
    let report = tool.try_it(json!({"city": ".."}), keys()).await;
    assert!(report.outcome.unwrap_err().contains("'city' cannot be '..'"));
}

#[tokio::test]
async fn head_reports_the_status_and_headers_and_tools_register() {
    let server = TestServer::start(|_| Reply::new(200, "text/plain", "").header("x-rate-remaining", "41")).await;
    let mut c = local("ping", server.url("/status/{{id}}"));
    c.method = "head".into();
    let tool = Arc::new(HttpTool::new(c).unwrap());
    let out = call(&tool, json!({"id": "7"})).await.unwrap();
    assert!(out.starts_with("HTTP 200 OK\n") && out.contains("x-rate-remaining: 41"), "{out}");
    assert_eq!(server.requests()[0].method, "HEAD");
    // The registry compiles and meta-validates the schema of a tool from outside.
    let mut registry = switchboard_core::ToolRegistry::new();
    registry.register(tool).unwrap();
    assert!(registry.validate("ping", &json!({"id": "7"})).is_ok());
    assert!(registry.validate("ping", &json!({})).is_err(), "a generated schema requires every placeholder");
}
