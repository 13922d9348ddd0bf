//! The seam between the API-neutral server and one wire format.
//!
//! Each supported API (today only OpenAI Chat Completions) implements [`WireApi`]; the server routes
//! a path to `handle_chat::<ThatApi>` and everything else — recording, the script queue, pacing,
//! faults — stays shared. Adding the Responses API, Anthropic Messages or Gemini means one new
//! module implementing this trait plus one route.

use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::count::{Counted, Prompt, Units};
use crate::openai_responses::ResponseStore;
use crate::script::{ErrorCategory, Step, StreamOptions};
use crate::sse::StepEncoder;

/// What a wire format needs to know about the request it is answering.
#[derive(Clone, Debug)]
pub(crate) struct ResponseContext {
    /// 1-based number of this request among all chat requests, used to make response ids unique.
    pub request_number: u64,
    /// Unix seconds at the time the request arrived.
    pub created: u64,
    /// The model name to report.
    pub model: String,
    /// Whether the request asked for reasoning items' `encrypted_content` (the Responses API's
    /// `"include": ["reasoning.encrypted_content"]`).
    pub encrypted_reasoning: bool,
    /// Prompt tokens written to the cache by this request, when usage is counted (Anthropic's
    /// `cache_creation_input_tokens`); 0 otherwise.
    pub cache_write_tokens: u64,
}

/// The broad category of an error, mapped by each API onto its own error `type` strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    Server,
    InvalidRequest,
    Auth,
    Permission,
    RateLimit,
    Overloaded,
    ContextLength,
}

impl From<ErrorCategory> for ErrorKind {
    fn from(category: ErrorCategory) -> Self {
        match category {
            ErrorCategory::Auth => ErrorKind::Auth,
            ErrorCategory::Permission => ErrorKind::Permission,
            ErrorCategory::RateLimit => ErrorKind::RateLimit,
            ErrorCategory::Overloaded => ErrorKind::Overloaded,
            ErrorCategory::ContextLength => ErrorKind::ContextLength,
            ErrorCategory::InvalidRequest => ErrorKind::InvalidRequest,
            ErrorCategory::Server => ErrorKind::Server,
        }
    }
}

/// OpenAI's error `type` and `code` for `kind` (Chat Completions and Responses share them).
pub(crate) fn openai_error_type(kind: ErrorKind) -> (&'static str, Option<&'static str>) {
    match kind {
        ErrorKind::Server | ErrorKind::Overloaded => ("server_error", None),
        ErrorKind::InvalidRequest => ("invalid_request_error", None),
        ErrorKind::Auth => ("invalid_request_error", Some("invalid_api_key")),
        ErrorKind::Permission => ("permission_error", None),
        ErrorKind::RateLimit => ("requests", Some("rate_limit_exceeded")),
        ErrorKind::ContextLength => ("invalid_request_error", Some("context_length_exceeded")),
    }
}

/// OpenAI's own words for an error of `kind`.
pub(crate) fn openai_error_message(kind: ErrorKind) -> String {
    match kind {
        ErrorKind::Server => "The server had an error while processing your request. Sorry about that!",
        ErrorKind::InvalidRequest => "Invalid request.",
        ErrorKind::Auth => "Incorrect API key provided: sk-mock****. You can find your API key at https://platform.openai.com/account/api-keys.",
        ErrorKind::Permission => "You are not allowed to sample from this model.",
        ErrorKind::RateLimit => "Rate limit reached for requests per min (RPM) on mock-model.",
        ErrorKind::Overloaded => "The server is overloaded or not ready yet.",
        ErrorKind::ContextLength => "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
    }
    .to_owned()
}

/// The end of a conversation as the echo mode sees it, independent of the message format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ConversationTail {
    /// The last message is a tool result; `name` is the tool's name when it can be found.
    ToolResult { name: Option<String>, content: String },
    /// The text of the last user message.
    User(String),
    /// No user message at all.
    Empty,
}

/// A reply's steps folded into one complete message, for non-streaming requests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Assembled {
    pub text: String,
    pub reasoning: String,
    /// `(id, name, arguments)` in index order.
    pub tool_calls: Vec<(String, String, String)>,
    pub finish_reason: Option<String>,
    pub usage: Option<Usage>,
}

/// Token counts as scripted by [`Step::Usage`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub reasoning_tokens: u64,
    pub cached_tokens: u64,
}

impl Assembled {
    /// Folds the content-bearing steps; pacing and fault steps are the caller's business.
    pub(crate) fn from_steps(steps: &[Step]) -> Self {
        let mut out = Self::default();
        for step in steps {
            match step {
                Step::Text { text } => out.text.push_str(text),
                Step::Reasoning { text } => out.reasoning.push_str(text),
                Step::ToolCall { id, name, arguments } => {
                    out.tool_calls.push((id.clone(), name.clone(), arguments.clone()))
                }
                Step::ParallelToolCalls { calls } => out.tool_calls.extend(calls.iter().cloned()),
                Step::Usage { prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens } => {
                    out.usage = Some(Usage {
                        prompt_tokens: *prompt_tokens,
                        completion_tokens: *completion_tokens,
                        reasoning_tokens: *reasoning_tokens,
                        cached_tokens: *cached_tokens,
                    });
                }
                Step::Finish { reason } => out.finish_reason = Some(reason.clone()),
                Step::Done
                | Step::Delay { .. }
                | Step::Stall
                | Step::Drop
                | Step::ErrorObject { .. }
                | Step::Raw { .. }
                | Step::RawBytes { .. }
                | Step::LongLine { .. }
                | Step::Quote { .. }
                | Step::KeepLines { .. } => {}
            }
        }
        out
    }
}

/// One wire format: how requests are read and how replies are written.
pub(crate) trait WireApi: Send + Sync + 'static {
    /// The streaming encoder for one response.
    type Encoder: StepEncoder;

    /// Whether a request can continue a response the server keeps ([`WireApi::continues`]).
    const CONTINUES: bool = false;

    /// Whether the client asked for a streamed response.
    fn wants_stream(body: &Value) -> bool;

    /// The model the request names, if any.
    fn requested_model(body: &Value) -> Option<&str>;

    /// The streaming encoder for a response in `ctx`.
    fn encoder(ctx: ResponseContext, options: &StreamOptions) -> Self::Encoder;

    /// The complete non-streamed response body.
    fn completion(ctx: &ResponseContext, reply: &Assembled, options: &StreamOptions) -> Value;

    /// An error body in this API's shape.
    fn error_body(kind: ErrorKind, message: &str, code: Option<&str>) -> Value;

    /// The HTTP status this API answers an error of `kind` with ([`crate::Reply::ApiError`]).
    fn error_status(kind: ErrorKind) -> u16 {
        usual_error_status(kind)
    }

    /// This API's own words for an error of `kind` ([`crate::Reply::ApiError`] without a message).
    fn error_message(kind: ErrorKind) -> String {
        openai_error_message(kind)
    }

    /// Tells the client to wait `secs` seconds before retrying, as this API does: by default a
    /// `retry-after` header.
    fn retry_hint(secs: u64, headers: &mut Vec<(String, String)>, _body: &mut Value) {
        headers.push(("retry-after".to_owned(), secs.to_string()));
    }

    /// The end of the conversation in the request, for echo mode.
    fn conversation_tail(body: &Value) -> ConversationTail;

    /// The request flattened for counting and quoting ([`crate::count`]): tool definitions,
    /// system prompt, messages, in that order.
    fn prompt(body: &Value) -> Prompt;

    /// The request number of the response this request continues on the server (the Responses
    /// API's `previous_response_id`), whose prompt and output come before this request's own.
    fn continues(_body: &Value) -> Option<u64> {
        None
    }

    /// What this API's prompt caching reads and writes for `units`, after `previous`.
    fn cache(units: &Units, previous: Option<&Units>) -> Counted {
        units.openai(previous)
    }

    /// This API's words for a prompt of `prompt` tokens over a window of `window`.
    fn context_exceeded(prompt: u64, window: u64) -> String {
        format!(
            "This model's maximum context length is {window} tokens. However, your messages resulted in {prompt} tokens. Please reduce the length of the messages."
        )
    }

    /// Called when a scripted stream reply (`steps`, `options`) is about to answer `body` in
    /// `ctx`. An API whose server keeps state between requests (the Responses API) remembers the
    /// response in `store`; the others have nothing to do.
    fn remember(
        _store: &ResponseStore,
        _ctx: &ResponseContext,
        _body: &Value,
        _steps: &[Step],
        _options: &StreamOptions,
    ) {
    }
}

/// The most tools OpenAI's Chat Completions and Responses APIs take in one request.
pub(crate) const OPENAI_MAX_TOOLS: usize = 128;

/// OpenAI's refusal of a `tools` array over [`OPENAI_MAX_TOOLS`], in its words.
pub(crate) fn too_many_tools(body: &Value) -> Option<String> {
    let n = body.get("tools").and_then(Value::as_array).map_or(0, Vec::len);
    (n > OPENAI_MAX_TOOLS).then(|| {
        format!(
            "Invalid 'tools': array too long. Expected an array with maximum length {OPENAI_MAX_TOOLS}, but got an array with length {n} instead."
        )
    })
}

/// The strict layer of every API: reads the request's body, lets `check` refuse it with a 400 and
/// the API's error body, else passes the request on with its body intact. A body that is not
/// JSON is left to the handler (which answers it in its own way).
pub(crate) async fn refuse_with(
    request: Request,
    next: Next,
    check: impl FnOnce(&axum::http::request::Parts, &Value) -> Option<Value>,
) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    if let Ok(json) = serde_json::from_slice::<Value>(&bytes)
        && let Some(error) = check(&parts, &json)
    {
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The HTTP status most APIs answer an error of `kind` with.
pub(crate) fn usual_error_status(kind: ErrorKind) -> u16 {
    match kind {
        ErrorKind::InvalidRequest | ErrorKind::ContextLength => 400,
        ErrorKind::Auth => 401,
        ErrorKind::Permission => 403,
        ErrorKind::RateLimit => 429,
        ErrorKind::Overloaded => 503,
        ErrorKind::Server => 500,
    }
}
