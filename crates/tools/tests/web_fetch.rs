//! `web_fetch` against local pages (conversion, limits, content types) and the address policy
//! (literal, spelled-oddly, resolved and redirected private addresses). Never the internet: the
//! only server is on 127.0.0.1, and "public" names are mapped to it by an injected resolver.

mod common;

use common::{Reply, TestServer};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::json;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_core::tool::NoSecrets;
use switchboard_core::{Tool, ToolContext, ToolError};
use switchboard_tools::web::{AddressPolicy, Fetcher, Resolver, StandardPolicy};
use switchboard_tools::{WebFetch, WebToolsConfig};

fn local_config() -> WebToolsConfig {
    WebToolsConfig { allow_local_addresses: true, ..WebToolsConfig::default() }
}

async fn fetch_with(tool: &WebFetch, args: serde_json::Value) -> Result<String, ToolError> {
    tool.call(args, ToolContext::detached(Arc::new(NoSecrets))).await.map(|o| o.text)
}

async fn fetch(config: &WebToolsConfig, url: &str) -> Result<String, ToolError> {
    fetch_with(&WebFetch::new(config), json!({"url": url})).await
}

const PAGE: &str = r##"<!doctype html>
<html><head><title>Test &amp; Page</title><style>body{color:red}</style><script>var secret = 1;</script></head>
<body>
<nav><a href="/">Home</a><a href="/menu">Menu</a></nav>
<main>
<h1>Welcome</h1>
<p>Read the <a href="/docs/guide.html">guide</a> or the <a href="https://other.example/x">other site</a>.</p>
<h2>Steps</h2>
<ol><li>Install</li><li>Run</li></ol>
<ul><li>alpha</li><li>beta</li></ul>
</main>
<footer>© footer text</footer>
</body></html>"##;

#[tokio::test]
async fn html_becomes_markdown_with_absolute_links() {
    let server = TestServer::start(|r| match r.path.as_str() {
        "/page" => Reply::html(PAGE),
        _ => Reply::new(404, "text/plain", "nope"),
    })
    .await;
    let out = fetch(&local_config(), &server.url("/page")).await.unwrap();
    let base = server.url("");
    let expected_head =
        format!("Title: Test & Page\nURL: {base}/page\nContent-Type: text/html; charset=utf-8\n\n# Welcome\n\n");
    assert!(out.starts_with(&expected_head), "{out}");
    assert!(
        out.contains(&format!(
            "Read the [guide]({base}/docs/guide.html) or the [other site](https://other.example/x)."
        )),
        "{out}"
    );
    assert!(out.contains("## Steps\n\n1. Install\n2. Run"), "{out}");
    assert!(out.contains("- alpha\n- beta"), "{out}");
    for gone in ["secret", "color:red", "Menu", "footer text"] {
        assert!(!out.contains(gone), "{gone}: {out}");
    }
    let req = &server.requests()[0];
    assert!(req.header("accept").unwrap().starts_with("text/html"));
    assert!(req.header("user-agent").unwrap().starts_with("Switchboard/"));

    let e = fetch(&local_config(), &server.url("/missing")).await.unwrap_err();
    assert_eq!(e.to_string(), format!("The server answered HTTP 404 Not Found for {base}/missing."));
}

#[tokio::test]
async fn text_and_json_pass_through_and_other_types_are_refused() {
    let server = TestServer::start(|r| match r.path.as_str() {
        "/a.txt" => Reply::new(200, "text/plain; charset=utf-8", "line one\n  <b>not html</b>\n"),
        "/a.json" => Reply::new(200, "application/json", r#"{"a": [1, 2], "b": "<c>"}"#),
        "/a.png" => Reply::new(200, "image/png", vec![0x89, b'P', b'N', b'G', 0, 0]),
        "/a.pdf" => Reply::new(200, "application/pdf", "%PDF-1.7"),
        "/bare-html" => Reply::new(200, "", "<!DOCTYPE html><title>T</title><p>sniffed</p>").no_content_type(),
        "/bare-bin" => Reply::new(200, "", vec![0u8, 159, 146, 150]).no_content_type(),
        _ => Reply::new(404, "text/plain", ""),
    })
    .await;
    let c = local_config();
    let out = fetch(&c, &server.url("/a.txt")).await.unwrap();
    assert!(out.ends_with("Content-Type: text/plain; charset=utf-8\n\nline one\n  <b>not html</b>"), "{out}");
    let out = fetch(&c, &server.url("/a.json")).await.unwrap();
    assert!(out.ends_with("Content-Type: application/json\n\n{\"a\": [1, 2], \"b\": \"<c>\"}"), "{out}");
    let out = fetch(&c, &server.url("/bare-html")).await.unwrap();
    assert!(
        out.contains("Title: T\n") && out.contains("Content-Type: text/html (sniffed)") && out.ends_with("sniffed"),
        "{out}"
    );

    for (path, ty) in [("/a.png", "image/png"), ("/a.pdf", "application/pdf"), ("/bare-bin", "binary data")] {
        let e = fetch(&c, &server.url(path)).await.unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, ToolError::Failed(_)));
        assert!(
            m.contains(&format!("is {ty}")) && m.contains("reads web pages (HTML), plain text and JSON only"),
            "{m}"
        );
    }
}

#[tokio::test]
async fn the_body_stops_at_the_size_limit_and_max_chars_cuts_the_text() {
    let big = "0123456789".repeat(100_000); // 1 MB
    let server = TestServer::start(move |_| Reply::new(200, "text/plain", big.clone())).await;
    let c = WebToolsConfig { fetch_max_bytes: 10_000, ..local_config() };
    let out = fetch_with(&WebFetch::new(&c), json!({"url": server.url("/big"), "max_chars": 100_000})).await.unwrap();
    assert!(out.contains(&"0123456789".repeat(1000)), "the first 10 000 bytes are there");
    assert!(!out.contains(&"0123456789".repeat(1001)), "nothing beyond the limit");
    assert!(
        out.ends_with(
            "[The response is larger than the 10000-byte download limit; only the first 10000 bytes were read.]"
        ),
        "{}",
        &out[out.len() - 200..]
    );

    let out = fetch_with(&WebFetch::new(&c), json!({"url": server.url("/big"), "max_chars": 500})).await.unwrap();
    assert!(out.contains("[Cut at 500 of 10000 characters. Call web_fetch again with a larger max_chars"), "{out}");
    let e = fetch_with(&WebFetch::new(&c), json!({"url": server.url("/big"), "max_chars": 5})).await.unwrap_err();
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e:?}");
}

#[tokio::test]
async fn slow_servers_hit_the_time_limit() {
    let server = TestServer::start(|r| match r.path.as_str() {
        "/slow-headers" => Reply::html("<p>late</p>").delayed(Duration::from_secs(10)),
        _ => Reply::html("<p>partial").stalled(),
    })
    .await;
    let c = WebToolsConfig { fetch_timeout: Duration::from_millis(500), ..local_config() };
    for path in ["/slow-headers", "/stalled-body"] {
        let started = Instant::now();
        let e = fetch(&c, &server.url(path)).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(3), "{path}: {:?}", started.elapsed());
        assert_eq!(e.to_string(), format!("Gave up on {}: it did not finish loading within 0.5 s.", server.url(path)));
    }
}

#[tokio::test]
async fn redirects_are_followed_up_to_five_hops() {
    let server = TestServer::start(|r| {
        let path = r.path.as_str();
        match path.strip_prefix("/hop/").and_then(|n| n.parse::<u32>().ok()) {
            Some(0) => Reply::html("<title>Arrived</title><p>done</p>"),
            Some(n) => Reply::redirect(if n % 2 == 0 { 302 } else { 308 }, &format!("/hop/{}", n - 1)),
            None => Reply::new(404, "text/plain", ""),
        }
    })
    .await;
    let out = fetch(&local_config(), &server.url("/hop/5")).await.unwrap();
    assert!(
        out.starts_with(&format!(
            "Title: Arrived\nURL: {}\nRedirected from: {}\n",
            server.url("/hop/0"),
            server.url("/hop/5")
        )),
        "{out}"
    );
    let e = fetch(&local_config(), &server.url("/hop/6")).await.unwrap_err();
    assert_eq!(e.to_string(), format!("Gave up after 5 redirects (last one to {}).", server.url("/hop/0")));
}

#[tokio::test]
async fn urls_must_be_absolute_http() {
    let c = WebToolsConfig::default();
    for (url, want) in [
        ("ftp://example.com/file", "only http:// and https:// URLs can be fetched, not 'ftp'"),
        ("file:///etc/passwd", "not 'file'"),
        ("example.com/page", "is not a valid URL"),
        ("", "'url' is required"),
    ] {
        let e = fetch(&c, url).await.unwrap_err();
        assert!(matches!(e, ToolError::InvalidArguments(_)), "{url}: {e:?}");
        assert!(e.to_string().contains(want), "{url}: {e}");
    }
}

/// Every spelling of a local address the policy must refuse, with no server needed: nothing is
/// contacted, so these are refused before any connection.
#[tokio::test]
async fn local_and_private_addresses_are_refused_by_default() {
    let c = WebToolsConfig::default();
    for (url, kind) in [
        ("http://127.0.0.1/", "loopback"),
        ("http://127.0.0.1:8080/admin", "loopback"),
        ("http://localhost/", "loopback"),
        ("http://LOCALHOST.:3000/", "loopback"),
        ("http://app.localhost/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://2130706433/", "loopback"),
        ("http://0x7f.1/", "loopback"),
        ("http://0177.0.0.1/", "loopback"),
        ("http://127.1/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://[::ffff:169.254.169.254]/", "link-local"),
        ("http://10.0.0.1/", "private"),
        ("http://172.16.5.4/", "private"),
        ("https://192.168.1.1/", "private"),
        ("http://[fd00::1]/", "private"),
        ("http://[fe80::1]/", "link-local"),
        ("http://100.64.1.1/", "carrier-grade NAT"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://255.255.255.255/", "broadcast"),
        ("http://224.0.0.1/", "multicast"),
    ] {
        let started = Instant::now();
        let e = fetch(&c, url).await.unwrap_err();
        let m = e.to_string();
        assert!(matches!(e, ToolError::Failed(_)), "{url}: {e:?}");
        assert!(m.starts_with("Refused to fetch "), "{url}: {m}");
        assert!(m.contains(kind), "{url}: {m}");
        assert!(m.contains("web_fetch only contacts public internet addresses"), "{url}: {m}");
        assert!(m.contains("Settings → Search & web tools"), "{url}: {m}");
        assert!(started.elapsed() < Duration::from_secs(1), "{url} was refused without connecting");
    }
    // The normalized address is what the person sees.
    let m = fetch(&c, "http://0x7f.1/").await.unwrap_err().to_string();
    assert!(m.contains("127.0.0.1 is a loopback address"), "{m}");
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

/// The real policy, except that the test server's exact address counts as public.
struct TestServerIsPublic;

impl AddressPolicy for TestServerIsPublic {
    fn check_ip(&self, ip: IpAddr) -> Result<(), &'static str> {
        if ip == IpAddr::V4(Ipv4Addr::LOCALHOST) {
            return Ok(());
        }
        StandardPolicy::default().check_ip(ip)
    }

    fn check_name(&self, host: &str) -> Result<(), &'static str> {
        StandardPolicy::default().check_name(host)
    }
}

fn public_looking_fetcher(port: u16) -> WebFetch {
    let _ = port;
    let resolver = MapResolver(HashMap::from([
        ("public.test", vec![IpAddr::V4(Ipv4Addr::LOCALHOST)]),
        ("internal.test", vec!["10.20.30.40".parse().unwrap()]),
        ("mixed.test", vec!["93.184.216.34".parse().unwrap(), "192.168.0.10".parse().unwrap()]),
        ("metadata.test", vec!["::ffff:169.254.169.254".parse().unwrap()]),
    ]));
    let config = WebToolsConfig { fetch_timeout: Duration::from_secs(5), ..WebToolsConfig::default() };
    WebFetch::with_fetcher(&config, Fetcher::with_network(&config, Arc::new(resolver), Arc::new(TestServerIsPublic)))
}

#[tokio::test]
async fn a_public_page_cannot_redirect_the_fetch_into_the_private_network() {
    let server = TestServer::start(|r| match r.path.as_str() {
        "/ok" => Reply::html("<p>public content</p>"),
        "/to-private-ip" => Reply::redirect(302, "http://10.0.0.5/admin"),
        "/to-metadata" => Reply::redirect(301, "http://169.254.169.254/latest/meta-data/iam"),
        "/to-hex" => Reply::redirect(307, "http://0xA9FEA9FE/secret"),
        "/to-localhost" => Reply::redirect(302, "http://localhost/secret"),
        "/to-internal-name" => Reply::redirect(303, "http://internal.test/secret"),
        "/to-mapped-name" => Reply::redirect(302, "http://metadata.test/latest"),
        "/to-file" => Reply::redirect(302, "file:///etc/passwd"),
        "/secret" => Reply::html("<p>SECRET</p>"),
        _ => Reply::new(404, "text/plain", ""),
    })
    .await;
    let port = server.addr.port();
    let tool = public_looking_fetcher(port);

    // The mapping works: the "public" name reaches the test server.
    let out = fetch_with(&tool, json!({"url": format!("http://public.test:{port}/ok")})).await.unwrap();
    assert!(out.ends_with("public content"), "{out}");

    for (path, refused) in [
        ("/to-private-ip", "10.0.0.5 is a private network address"),
        ("/to-metadata", "169.254.169.254 is a link-local address"),
        ("/to-hex", "169.254.169.254 is a link-local address"),
        ("/to-localhost", "localhost is a loopback address"),
        ("/to-internal-name", "internal.test (which resolves to 10.20.30.40) is a private network address"),
        ("/to-mapped-name", "metadata.test (which resolves to ::ffff:169.254.169.254) is a link-local address"),
    ] {
        let e = fetch_with(&tool, json!({"url": format!("http://public.test:{port}{path}")})).await.unwrap_err();
        let m = e.to_string();
        assert!(m.starts_with("Refused to fetch "), "{path}: {m}");
        assert!(m.contains(refused), "{path}: {m}");
    }
    let e = fetch_with(&tool, json!({"url": format!("http://public.test:{port}/to-file")})).await.unwrap_err();
    assert!(e.to_string().contains("not 'file'"), "{e}");
    // No redirect reached the test server's secret page.
    assert!(server.requests().iter().all(|r| r.path != "/secret"));
}

#[tokio::test]
async fn a_name_with_any_private_address_is_refused() {
    let tool = public_looking_fetcher(0);
    for (url, refused) in [
        ("http://mixed.test/", "mixed.test (which resolves to 192.168.0.10) is a private network address"),
        ("http://internal.test:8080/", "internal.test (which resolves to 10.20.30.40)"),
    ] {
        let m = fetch_with(&tool, json!({"url": url})).await.unwrap_err().to_string();
        assert!(m.starts_with(&format!("Refused to fetch {url}")) && m.contains(refused), "{url}: {m}");
    }
    let m = fetch_with(&tool, json!({"url": "http://unknown.test/"})).await.unwrap_err().to_string();
    assert!(m.starts_with("Could not find the server for http://unknown.test/"), "{m}");
}

#[tokio::test]
async fn cancelling_stops_a_fetch_promptly() {
    let server = TestServer::start(|_| Reply::html("<p>late</p>").delayed(Duration::from_secs(30))).await;
    let tool = WebFetch::new(&local_config());
    let ctx = ToolContext::detached(Arc::new(NoSecrets));
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let e = tool.call(json!({"url": server.url("/slow")}), ctx).await.unwrap_err();
    assert_eq!(e, ToolError::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_fetch_is_untrusted_and_declares_its_url_as_leaving_for_its_host() {
    let tool = WebFetch::new(&WebToolsConfig::default());
    assert!(tool.untrusted_output());
    let egress = tool.egress(&json!({"url": "https://User@Evil.Example.com:8443/c?d=notes"})).unwrap();
    assert_eq!(egress.destination, "evil.example.com");
    assert_eq!(egress.sends, "https://User@Evil.Example.com:8443/c?d=notes");
    let odd = tool.egress(&json!({"url": "not a url"})).unwrap();
    assert_eq!(odd.destination, "not a url", "never taken for a known host");
}
