//! The HTTP server: routing, request recording and the script queue.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::api::{Assembled, ErrorKind, ResponseContext, WireApi};
use crate::count::{Counted, Prompt, Units};
use crate::echo;
use crate::openai_chat::OpenAiChat;
use crate::openai_responses::ResponseStore;
use crate::parts::SentPart;
use crate::script::{Reply, Script, Step, StreamOptions};
use crate::sse::{self, Pacing};

/// Reported when neither the script nor the request names a model.
const DEFAULT_MODEL: &str = "mock-model";

/// A running mock provider bound to `127.0.0.1`.
///
/// Dropping it stops the server: the listener closes and responses still streaming are cut, so
/// clients see a dead server rather than a clean end of stream.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<AppState>,
    task: JoinHandle<()>,
}

impl MockServer {
    /// Binds `127.0.0.1:0` and serves `script` on a task of the current tokio runtime.
    ///
    /// The server only makes progress while that runtime does, so on a current-thread runtime
    /// (plain `#[tokio::test]`) talk to it with an async client, never a blocking one.
    ///
    /// # Panics
    ///
    /// If the port cannot be bound, which in a test is an environment problem, not a test failure.
    pub async fn start(script: Script) -> MockServer {
        Self::start_on_port(0, script).await.expect("mock provider: cannot bind 127.0.0.1:0")
    }

    /// Binds `127.0.0.1:port` (0 picks a free port) and serves `script` on a task of the current
    /// tokio runtime.
    ///
    /// # Errors
    ///
    /// If the port cannot be bound.
    pub async fn start_on_port(port: u16, script: Script) -> io::Result<MockServer> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await?;
        let addr = listener.local_addr()?;
        // Without TCP_NODELAY, Nagle's algorithm would merge the small writes that `split_bytes`
        // and per-event delays are meant to produce.
        let listener = listener.tap_io(|tcp| {
            if let Err(err) = tcp.set_nodelay(true) {
                tracing::warn!("mock provider: cannot set TCP_NODELAY: {err}");
            }
        });
        let state = Arc::new(AppState::new(script));
        let shutdown = state.shutdown.clone();
        let app = router(Arc::clone(&state));
        let task = tokio::spawn(async move {
            // `serve` only returns on shutdown, and accept errors are retried inside it.
            let _ = axum::serve(listener, app).with_graceful_shutdown(shutdown.cancelled_owned()).await;
        });
        Ok(MockServer { addr, state, task })
    }

    /// The OpenAI-style base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received on a chat endpoint so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.lock().requests.clone()
    }

    /// Appends `reply` to the script queue.
    pub fn push(&self, reply: Reply) {
        self.state.lock().replies.push_back(reply);
    }

    /// How many scripted replies have not been consumed yet.
    pub fn remaining_replies(&self) -> usize {
        self.state.lock().replies.len()
    }

    /// Sets (or, with `None`, lifts) the context window: from the next request on, a prompt
    /// counted longer than `tokens` is refused in its API's "too long" error ([`Script::context_window`]).
    pub fn set_context_window(&self, tokens: Option<u64>) {
        self.state.counting().window = tokens;
    }

    /// Reports usage counted from each request from now on, or the scripted numbers again
    /// ([`Script::counted_usage`]).
    pub fn set_counted_usage(&self, on: bool) {
        self.state.counting().counted_usage = on;
    }

    /// Sets the models that see no images ([`Script::text_only_models`]), from the next request on.
    pub fn set_text_only_models(&self, models: impl IntoIterator<Item = impl Into<String>>) {
        *self.state.text_only() = models.into_iter().map(Into::into).collect();
    }

    /// Every request refused for exceeding the context window, in arrival order.
    pub fn refusals(&self) -> Vec<ContextRefusal> {
        self.state.counting().refusals.clone()
    }
}

/// A request refused because its counted prompt exceeded the context window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextRefusal {
    /// The request path.
    pub path: String,
    /// Its counted prompt tokens.
    pub prompt_tokens: u64,
    /// The window it exceeded.
    pub window: u64,
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.state.shutdown.cancel();
        // Aborting closes the listener now instead of after the graceful drain, so the port is
        // refused immediately; the cancellation above cuts the streams still in flight.
        self.task.abort();
    }
}

/// One request as received on a chat endpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordedRequest {
    /// The request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The JSON body; a body that is not valid JSON is recorded as a JSON string of its text.
    pub body: Value,
    /// What the mock counted for it (prompt, cached and cache-written tokens, see
    /// [`crate::count`]), when a context window or counted usage is set; `None` otherwise.
    pub counted: Option<Counted>,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// The names of the tools offered (`body.tools[].function.name`).
    pub fn tool_names(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|tool| tool.pointer("/function/name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect()
    }

    /// The conversation sent (`body.messages`), empty if absent.
    pub fn messages(&self) -> &[Value] {
        self.body.get("messages").and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }

    /// The Responses API's input items (`body.input` when it is an array), empty otherwise.
    pub fn input(&self) -> &[Value] {
        self.body.get("input").and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }

    /// The parts of each of the person's messages, one list per user message in order (a
    /// message whose content is a string is one text part), read from whichever API's shape the
    /// request has: text, images and PDFs as [`SentPart`]s.
    pub fn user_parts(&self) -> Vec<Vec<SentPart>> {
        crate::parts::user_parts(&self.path, &self.body)
    }

    /// The parts of the last user message ([`RecordedRequest::user_parts`]), empty if none.
    pub fn last_user_parts(&self) -> Vec<SentPart> {
        self.user_parts().pop().unwrap_or_default()
    }

    /// The Responses API's `previous_response_id`, if the request chains onto a response.
    pub fn previous_response_id(&self) -> Option<&str> {
        self.body.get("previous_response_id").and_then(Value::as_str)
    }
}

#[derive(Debug)]
struct AppState {
    queue: Mutex<Queue>,
    /// The Responses API's memory of the responses issued (chaining, stored reasoning items).
    responses: Arc<ResponseStore>,
    echo_when_empty: bool,
    chunk_delay_ms: u64,
    shutdown: CancellationToken,
    counting: Mutex<Counting>,
    /// [`Script::text_only_models`].
    text_only: Mutex<Vec<String>>,
}

/// The context window, counted usage and prompt cache of one server.
#[derive(Debug, Default)]
struct Counting {
    window: Option<u64>,
    counted_usage: bool,
    /// The last counted prompt: what the provider's cache holds.
    last: Option<Units>,
    /// The prompt and output of each answered request of an API that continues responses on the
    /// server (Responses' `previous_response_id`), by request number.
    contexts: HashMap<u64, Arc<Prompt>>,
    refusals: Vec<ContextRefusal>,
}

impl Counting {
    fn on(&self) -> bool {
        self.window.is_some() || self.counted_usage
    }
}

#[derive(Debug)]
struct Queue {
    replies: VecDeque<Reply>,
    /// [`Script::routes`]: what a request's body contains, and its own replies.
    routes: Vec<(String, VecDeque<Reply>)>,
    requests: Vec<RecordedRequest>,
}

impl AppState {
    fn new(script: Script) -> Self {
        Self {
            queue: Mutex::new(Queue {
                replies: script.replies.into(),
                routes: script.routes.into_iter().map(|r| (r.contains, r.replies.into())).collect(),
                requests: Vec::new(),
            }),
            responses: Arc::default(),
            echo_when_empty: script.echo_when_empty,
            chunk_delay_ms: script.chunk_delay_ms,
            shutdown: CancellationToken::new(),
            counting: Mutex::new(Counting {
                window: script.context_window,
                counted_usage: script.counted_usage,
                ..Counting::default()
            }),
            text_only: Mutex::new(script.text_only_models),
        }
    }

    fn text_only(&self) -> MutexGuard<'_, Vec<String>> {
        self.text_only.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn counting(&self) -> MutexGuard<'_, Counting> {
        self.counting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A panicking test thread must not take the server down with a poisoned lock.
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records `request` and takes the next scripted reply (of the first route whose needle
    /// `raw` contains, else of the main queue), returning the request's number.
    fn record(&self, request: RecordedRequest, raw: &str, consume: bool) -> (u64, Option<Reply>) {
        let mut queue = self.lock();
        queue.requests.push(request);
        let number = queue.requests.len() as u64;
        let reply = match queue.routes.iter_mut().find(|(needle, _)| raw.contains(needle.as_str())) {
            _ if !consume => None,
            Some((_, replies)) => replies.pop_front(),
            None => queue.replies.pop_front(),
        };
        (number, reply)
    }
}

fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/chat/completions", crate::openai_chat::strict(post(handle_chat::<OpenAiChat>)))
        .route("/v1/messages", crate::anthropic::strict(post(handle_chat::<crate::anthropic::Anthropic>)))
        .route(
            "/v1/responses",
            crate::openai_responses::strict(
                Arc::clone(&state.responses),
                post(handle_chat::<crate::openai_responses::Responses>),
            ),
        )
        .route("/v1/models", get(models))
        .route("/v1beta/models", get(crate::gemini::models))
        .route("/v1beta/models/{model_and_method}", crate::gemini::strict(post(handle_chat::<crate::gemini::Gemini>)))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Conversations with images or long histories can exceed axum's 2 MB default.
        .layer(DefaultBodyLimit::disable())
        .with_state(state)
}

async fn handle_chat<A: WireApi>(
    State(state): State<Arc<AppState>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let parsed = serde_json::from_slice::<Value>(&body);
    if let Ok(json) = &parsed
        && let Some(model) = crate::parts::model_of(uri.path(), json)
        && state.text_only().iter().any(|m| m == model)
        && let Some((status, refusal)) = crate::parts::vision_refusal(uri.path(), json, model)
    {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
        return (status, axum::Json(refusal)).into_response();
    }
    let prompt = parsed.as_ref().ok().map(|body| {
        let own = A::prompt(body);
        let earlier = A::continues(body).and_then(|number| state.counting().contexts.get(&number).cloned());
        match earlier {
            Some(earlier) => own.continuing(&earlier),
            None => own,
        }
    });
    let counted = match prompt.as_ref().map(|prompt| count::<A>(&state, uri.path(), prompt)) {
        Some(Err(refusal)) => return (StatusCode::BAD_REQUEST, axum::Json(refusal)).into_response(),
        Some(Ok(counted)) => counted,
        None => None,
    };
    let request = RecordedRequest {
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect(),
        body: match &parsed {
            Ok(json) => json.clone(),
            Err(_) => Value::String(String::from_utf8_lossy(&body).into_owned()),
        },
        counted,
    };
    let (number, reply) = state.record(request, &String::from_utf8_lossy(&body), parsed.is_ok());
    tracing::info!(request = number, path = uri.path(), "chat request");

    let body = match parsed {
        Ok(body) => body,
        Err(err) => {
            let message = format!("mock provider: request body is not valid JSON: {err}");
            return json_error::<A>(StatusCode::BAD_REQUEST, ErrorKind::InvalidRequest, &message);
        }
    };
    let reply = match reply {
        Some(reply) => reply,
        None if state.echo_when_empty => echo::reply(&A::conversation_tail(&body), number),
        None => {
            let message = format!("mock provider: script exhausted ({number} requests so far)");
            return json_error::<A>(StatusCode::INTERNAL_SERVER_ERROR, ErrorKind::Server, &message);
        }
    };

    match reply {
        Reply::Http { status, headers, body } => http_reply(status, &headers, body),
        Reply::ApiError { category, status, message, retry_after_secs, headers } => {
            api_error_reply::<A>(category.into(), status, message, retry_after_secs, headers)
        }
        Reply::Stream { steps, options } => {
            let prompt = prompt.unwrap_or_default();
            let counted_usage = state.counting().counted_usage;
            let steps = crate::resolve::steps(steps, &prompt, counted.filter(|_| counted_usage));
            let ctx = ResponseContext {
                request_number: number,
                created: unix_now(),
                model: options
                    .model
                    .clone()
                    .or_else(|| A::requested_model(&body).map(str::to_owned))
                    .unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
                encrypted_reasoning: body["include"]
                    .as_array()
                    .is_some_and(|include| include.iter().any(|i| i == "reasoning.encrypted_content")),
                cache_write_tokens: counted.filter(|_| counted_usage).map_or(0, |c| c.cache_write_tokens),
            };
            A::remember(&state.responses, &ctx, &body, &steps, &options);
            if A::CONTINUES {
                let context = prompt.carried(&crate::prompt::output(&Assembled::from_steps(&steps)));
                state.counting().contexts.insert(number, Arc::new(context));
            }
            if A::wants_stream(&body) {
                stream_reply::<A>(&state, ctx, steps, &options)
            } else {
                complete_reply::<A>(&state, ctx, &steps, &options).await
            }
        }
    }
}

/// Counts `prompt` when the server counts: refuses it (`Err` with `A`'s "too long" error body,
/// for a 400) when it exceeds the window, else remembers it as the cache's content and returns what
/// was counted.
fn count<A: WireApi>(state: &AppState, path: &str, prompt: &Prompt) -> Result<Option<Counted>, Value> {
    if !state.counting().on() {
        return Ok(None);
    }
    // Tokenizing happens outside the lock.
    let units = prompt.units();
    let mut counting = state.counting();
    if let Some(window) = counting.window
        && units.total() > window
    {
        let prompt_tokens = units.total();
        counting.refusals.push(ContextRefusal { path: path.to_owned(), prompt_tokens, window });
        let message = A::context_exceeded(prompt_tokens, window);
        return Err(A::error_body(ErrorKind::ContextLength, &message, None));
    }
    let counted = A::cache(&units, counting.last.as_ref());
    counting.last = Some(units);
    Ok(Some(counted))
}

fn stream_reply<A: WireApi>(
    state: &AppState,
    ctx: ResponseContext,
    steps: Vec<Step>,
    options: &StreamOptions,
) -> Response {
    let pacing = Pacing {
        delay: Duration::from_millis(options.chunk_delay_ms.unwrap_or(state.chunk_delay_ms)),
        split_bytes: options.split_bytes.filter(|&bytes| bytes > 0),
    };
    let body = sse::sse_body(steps, A::encoder(ctx, options), pacing, state.shutdown.clone());
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static("text/event-stream")),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response()
}

/// Answers a non-streaming request. Faults still apply in order: delays wait, a stall never
/// answers, a drop cuts the body and an error object becomes an HTTP 500.
async fn complete_reply<A: WireApi>(
    state: &AppState,
    ctx: ResponseContext,
    steps: &[Step],
    options: &StreamOptions,
) -> Response {
    for step in steps {
        match step {
            Step::Delay { ms } => tokio::time::sleep(Duration::from_millis(*ms)).await,
            Step::Stall => {
                state.shutdown.cancelled().await;
                return cut_response(state);
            }
            Step::Drop => return cut_response(state),
            Step::ErrorObject { message, code } => {
                let body = A::error_body(ErrorKind::Server, message, code.as_deref());
                return (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(body)).into_response();
            }
            _ => {}
        }
    }
    axum::Json(A::completion(&ctx, &Assembled::from_steps(steps), options)).into_response()
}

/// A 200 whose body is cut right after the head.
fn cut_response(state: &AppState) -> Response {
    ([(CONTENT_TYPE, HeaderValue::from_static("application/json"))], sse::cut_body(state.shutdown.clone()))
        .into_response()
}

fn http_reply(status: u16, headers: &[(String, String)], body: String) -> Response {
    let Ok(status) = StatusCode::from_u16(status) else {
        return script_error(&format!("invalid HTTP status {status} in script"));
    };
    let mut header_map = HeaderMap::with_capacity(headers.len() + 1);
    for (name, value) in headers {
        let (Ok(name), Ok(value)) = (HeaderName::try_from(name.as_str()), HeaderValue::try_from(value.as_str())) else {
            return script_error(&format!("invalid header {name:?}: {value:?} in script"));
        };
        header_map.append(name, value);
    }
    if !header_map.contains_key(CONTENT_TYPE) {
        let is_json = serde_json::from_str::<serde::de::IgnoredAny>(&body).is_ok();
        let content_type = if is_json { "application/json" } else { "text/plain; charset=utf-8" };
        header_map.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    }
    (status, header_map, body).into_response()
}

/// A [`Reply::ApiError`] in `A`'s shape: its status, body and way of asking for a wait.
fn api_error_reply<A: WireApi>(
    kind: ErrorKind,
    status: Option<u16>,
    message: Option<String>,
    retry_after_secs: Option<u64>,
    mut headers: Vec<(String, String)>,
) -> Response {
    let message = message.unwrap_or_else(|| A::error_message(kind));
    let mut body = A::error_body(kind, &message, None);
    if let Some(secs) = retry_after_secs {
        A::retry_hint(secs, &mut headers, &mut body);
    }
    http_reply(status.unwrap_or_else(|| A::error_status(kind)), &headers, body.to_string())
}

fn script_error(message: &str) -> Response {
    json_error::<OpenAiChat>(StatusCode::INTERNAL_SERVER_ERROR, ErrorKind::Server, &format!("mock provider: {message}"))
}

fn json_error<A: WireApi>(status: StatusCode, kind: ErrorKind, message: &str) -> Response {
    (status, axum::Json(A::error_body(kind, message, None))).into_response()
}

async fn models() -> axum::Json<Value> {
    axum::Json(json!({
        "object": "list",
        "data": [
            { "id": "mock-model", "object": "model", "owned_by": "switchboard" },
            { "id": "mock-reasoner", "object": "model", "owned_by": "switchboard" },
        ],
    }))
}

async fn not_found(uri: Uri) -> Response {
    json_error::<OpenAiChat>(
        StatusCode::NOT_FOUND,
        ErrorKind::InvalidRequest,
        &format!("mock provider: no route for {}", uri.path()),
    )
}

async fn method_not_allowed(uri: Uri) -> Response {
    json_error::<OpenAiChat>(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorKind::InvalidRequest,
        &format!("mock provider: method not allowed on {}", uri.path()),
    )
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}
