//! A tiny recording HTTP server on 127.0.0.1 for the web tool tests: each test says how to answer,
//! and afterwards what was asked. Nothing here touches the internet.

#![allow(dead_code)]

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

/// How to answer.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub delay: Duration,
    /// Send the headers and the body, then never finish.
    pub stall: bool,
}

impl Reply {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
            stall: false,
        }
    }

    pub fn json(status: u16, v: serde_json::Value) -> Self {
        Self::new(status, "application/json", v.to_string())
    }

    pub fn html(body: &str) -> Self {
        Self::new(200, "text/html; charset=utf-8", body)
    }

    pub fn redirect(status: u16, location: &str) -> Self {
        Self::new(status, "text/plain", "").header("location", location)
    }

    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.into(), v.into()));
        self
    }

    pub fn no_content_type(mut self) -> Self {
        self.headers.retain(|(k, _)| k != "content-type");
        self
    }

    pub fn delayed(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }

    pub fn stalled(mut self) -> Self {
        self.stall = true;
        self
    }
}

type Responder = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// The server; stops when the test's runtime ends.
pub struct TestServer {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl TestServer {
    pub async fn start(respond: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let respond: Arc<Responder> = Arc::new(respond);
        let log = requests.clone();
        let app = axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
            let respond = respond.clone();
            let log = log.clone();
            async move {
                let rec = Recorded {
                    method: method.to_string(),
                    path: uri.path().to_owned(),
                    query: uri.query().map(str::to_owned),
                    headers,
                    body,
                };
                log.lock().unwrap().push(rec.clone());
                let reply = respond(&rec);
                tokio::time::sleep(reply.delay).await;
                let mut builder = Response::builder().status(StatusCode::from_u16(reply.status).unwrap());
                for (k, v) in &reply.headers {
                    builder = builder.header(k, v);
                }
                let body = if reply.stall {
                    let first = futures::stream::once(async move { Ok::<_, std::io::Error>(Bytes::from(reply.body)) });
                    Body::from_stream(futures::StreamExt::chain(first, futures::stream::pending()))
                } else {
                    Body::from(reply.body)
                };
                builder.body(body).unwrap()
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { addr, requests }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}
