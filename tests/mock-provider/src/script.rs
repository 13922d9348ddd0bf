//! The API-neutral description of what the mock provider answers.
//!
//! Nothing here knows about a wire format: a [`Reply`] says *what* the model "says" (text, reasoning,
//! tool calls, usage, faults), and an encoder module such as `openai_chat.rs` decides how that
//! looks on the wire. This keeps scripts reusable when more APIs are added.

use serde::{Deserialize, Serialize};

/// Prompt tokens reported by the convenience constructors.
const DEFAULT_PROMPT_TOKENS: u64 = 10;
/// Completion tokens reported by the convenience constructors.
const DEFAULT_COMPLETION_TOKENS: u64 = 5;

/// The ordered replies a [`crate::MockServer`] hands out, one per chat request.
///
/// When the queue is empty the server answers HTTP 500 with an OpenAI-style JSON error, unless
/// [`Script::echo_when_empty`] is set, in which case it echoes the last user message (see
/// [`Script::echo`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Script {
    /// Replies consumed front to back.
    pub replies: Vec<Reply>,
    /// Answer with an echo instead of an error once `replies` is exhausted.
    pub echo_when_empty: bool,
    /// Default pause between SSE events in milliseconds; 0 sends them back to back.
    pub chunk_delay_ms: u64,
    /// The model's context window in tokens (the mock's count, see [`crate::count`]): a request
    /// whose prompt is longer is refused in its API's own "too long" error, before it is
    /// recorded or consumes a reply. `None` takes any size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Report usage counted from the request (see [`crate::count`]) instead of the scripted
    /// numbers: every [`Step::Usage`] gets the counted prompt, cached and completion tokens.
    pub counted_usage: bool,
    /// Replies for requests of a second kind (a summariser's, say), recognised by a string in
    /// their body: a request whose raw body contains a route's `contains` takes its reply from
    /// that route (the first that matches) instead of `replies`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route>,
    /// Models that see no images (`gpt-3.5-turbo`, say): a request naming one whose person's
    /// message carries an image is refused as the real API refuses it (see the README), before
    /// it is recorded or consumes a reply.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub text_only_models: Vec<String>,
}

/// Replies kept apart for the requests whose body contains `contains` ([`Script::with_route`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Route {
    /// What the raw request body contains (as sent, so JSON-escaped).
    pub contains: String,
    /// Replies consumed front to back; when none is left such a request gets no reply (the
    /// script's "exhausted" error, or the echo).
    pub replies: Vec<Reply>,
}

impl Script {
    /// A script that hands out `replies` in order and then fails with "script exhausted".
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        Self { replies: replies.into_iter().collect(), ..Self::default() }
    }

    /// A script that answers every request by echoing `echo: <last user message>`.
    ///
    /// It also drives a tool-loop demo: a user message containing the word "time" gets a
    /// `get_time` tool call (arguments `{}`), and a request ending with a tool message gets a text
    /// reply quoting the tool result.
    pub fn echo() -> Self {
        Self { echo_when_empty: true, ..Self::default() }
    }

    /// Sets the default pause between SSE events.
    #[must_use]
    pub fn with_chunk_delay(mut self, ms: u64) -> Self {
        self.chunk_delay_ms = ms;
        self
    }

    /// Refuses, in each API's own error, any request whose counted prompt exceeds `tokens`.
    #[must_use]
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Reports usage counted from each request instead of the scripted numbers.
    #[must_use]
    pub fn with_counted_usage(mut self) -> Self {
        self.counted_usage = true;
        self
    }

    /// Makes `models` models without vision ([`Script::text_only_models`]).
    #[must_use]
    pub fn with_text_only_models(mut self, models: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.text_only_models.extend(models.into_iter().map(Into::into));
        self
    }

    /// Answers the requests whose raw body contains `contains` from `replies`, in order, apart
    /// from the main queue: e.g. a summariser's requests, which come whenever the client decides.
    #[must_use]
    pub fn with_route(mut self, contains: impl Into<String>, replies: impl IntoIterator<Item = Reply>) -> Self {
        self.routes.push(Route { contains: contains.into(), replies: replies.into_iter().collect() });
        self
    }
}

/// One answer to one chat request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// A streamed response built from steps (or, for a non-streaming request, a single JSON
    /// completion assembled from the same steps).
    Stream {
        /// What happens on the stream, in order.
        steps: Vec<Step>,
        /// Chunking, pacing and model-name knobs.
        #[serde(default)]
        options: StreamOptions,
    },
    /// A plain HTTP response, typically an error (429 with Retry-After, 401, 500, an HTML page).
    ///
    /// Without a `content-type` header the server sends `application/json` when `body` parses as
    /// JSON and `text/plain; charset=utf-8` otherwise.
    Http {
        /// HTTP status code.
        status: u16,
        /// Extra response headers as (name, value) pairs.
        #[serde(default)]
        headers: Vec<(String, String)>,
        /// The response body, sent verbatim.
        body: String,
    },
    /// An HTTP error in the answering API's own shape: each API renders `category` with its own
    /// status, error type and body (see [`ErrorCategory`]), so one script fails the same way on
    /// every API.
    ApiError {
        /// What went wrong.
        category: ErrorCategory,
        /// The HTTP status; `None` uses the API's own for `category`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// The error message; `None` uses the API's own words for `category` (a context length
        /// error needs them: clients recognize it by its wording).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// Ask the client to wait this many seconds, as the API does: a `retry-after` header
        /// (OpenAI, Anthropic) or a `RetryInfo` detail in the body (Gemini).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_secs: Option<u64>,
        /// Extra response headers as (name, value) pairs, sent on every API.
        #[serde(default)]
        headers: Vec<(String, String)>,
    },
}

/// The category of a [`Reply::ApiError`], and how each API spells it.
///
/// | Category | OpenAI (Chat, Responses): status, `type`, `code` | Anthropic: status, `error.type` | Gemini: status, `error.status` |
/// | --- | --- | --- | --- |
/// | `auth` | 401 `invalid_request_error` `invalid_api_key` | 401 `authentication_error` | 401 `UNAUTHENTICATED` |
/// | `permission` | 403 `permission_error` null | 403 `permission_error` | 403 `PERMISSION_DENIED` |
/// | `rate_limit` | 429 `requests` `rate_limit_exceeded` | 429 `rate_limit_error` | 429 `RESOURCE_EXHAUSTED` |
/// | `overloaded` | 503 `server_error` null | 529 `overloaded_error` | 503 `UNAVAILABLE` |
/// | `context_length` | 400 `invalid_request_error` `context_length_exceeded` | 400 `invalid_request_error` ("prompt is too long: ...") | 400 `INVALID_ARGUMENT` ("The input token count ... exceeds the maximum ...") |
/// | `invalid_request` | 400 `invalid_request_error` null | 400 `invalid_request_error` | 400 `INVALID_ARGUMENT` |
/// | `server` | 500 `server_error` null | 500 `api_error` | 500 `INTERNAL` |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCategory {
    /// The key was rejected.
    Auth,
    /// The key may not use this model or feature.
    Permission,
    /// Too many requests.
    RateLimit,
    /// The service is overloaded.
    Overloaded,
    /// The prompt is longer than the model's context window.
    ContextLength,
    /// Any other malformed request.
    InvalidRequest,
    /// An internal server error.
    Server,
}

impl Reply {
    /// A streamed reply from `steps` with default options.
    pub fn stream(steps: impl IntoIterator<Item = Step>) -> Self {
        Self::Stream { steps: steps.into_iter().collect(), options: StreamOptions::default() }
    }

    /// Text as one delta, then finish "stop", usage 10/5 and `[DONE]`.
    pub fn text(text: impl Into<String>) -> Self {
        Self::stream([Step::text(text), Step::finish("stop"), Step::default_usage(), Step::Done])
    }

    /// Reasoning, then text, then finish "stop", usage 10/5 and `[DONE]`.
    pub fn reasoning_then_text(reasoning: impl Into<String>, text: impl Into<String>) -> Self {
        Self::stream([
            Step::Reasoning { text: reasoning.into() },
            Step::text(text),
            Step::finish("stop"),
            Step::default_usage(),
            Step::Done,
        ])
    }

    /// One tool call, then finish "tool_calls", usage 10/5 and `[DONE]`.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self::stream([
            Step::tool_call(id, name, arguments),
            Step::finish("tool_calls"),
            Step::default_usage(),
            Step::Done,
        ])
    }

    /// Text followed by sequential tool calls `(id, name, arguments)`, then finish "tool_calls",
    /// usage 10/5 and `[DONE]`. An empty `text` sends no text step.
    pub fn text_then_tool_calls(text: impl Into<String>, calls: &[(&str, &str, &str)]) -> Self {
        let text = text.into();
        let mut steps = Vec::with_capacity(calls.len() + 4);
        if !text.is_empty() {
            steps.push(Step::Text { text });
        }
        steps.extend(calls.iter().map(|&(id, name, arguments)| Step::tool_call(id, name, arguments)));
        steps.extend([Step::finish("tool_calls"), Step::default_usage(), Step::Done]);
        Self::stream(steps)
    }

    /// Several tool calls `(id, name, arguments)` whose fragments are interleaved round-robin,
    /// then finish "tool_calls", usage 10/5 and `[DONE]`.
    pub fn parallel_tool_calls(calls: &[(&str, &str, &str)]) -> Self {
        Self::stream([
            Step::ParallelToolCalls {
                calls: calls
                    .iter()
                    .map(|&(id, name, args)| (id.to_owned(), name.to_owned(), args.to_owned()))
                    .collect(),
            },
            Step::finish("tool_calls"),
            Step::default_usage(),
            Step::Done,
        ])
    }

    /// `n_tokens` tokens `"word0 word1 ..."`, one token per SSE event, then finish "stop",
    /// usage (10, n) and `[DONE]`. Meant for throughput benchmarks.
    pub fn long_text(n_tokens: usize) -> Self {
        let mut steps = Vec::with_capacity(n_tokens + 3);
        steps.extend((0..n_tokens).map(|i| Step::Text { text: format!("word{i} ") }));
        steps.extend([
            Step::finish("stop"),
            Step::Usage {
                prompt_tokens: DEFAULT_PROMPT_TOKENS,
                completion_tokens: n_tokens as u64,
                reasoning_tokens: 0,
                cached_tokens: 0,
            },
            Step::Done,
        ]);
        Self::stream(steps)
    }

    /// Text quoting every line of the request that starts with `marker` (see [`Step::Quote`]),
    /// then finish "stop", usage 10/5 and `[DONE]`: an answer that can only cite a fact if it
    /// reached the model.
    pub fn quote(marker: impl Into<String>) -> Self {
        Self::stream([Step::Quote { marker: marker.into() }, Step::finish("stop"), Step::default_usage(), Step::Done])
    }

    /// Text keeping every line of the request that contains `marker` (see [`Step::KeepLines`]),
    /// then finish "stop", usage 10/5 and `[DONE]`: a summary that keeps exactly the marked facts.
    pub fn keep_lines(marker: impl Into<String>) -> Self {
        Self::stream([
            Step::KeepLines { marker: marker.into() },
            Step::finish("stop"),
            Step::default_usage(),
            Step::Done,
        ])
    }

    /// A plain HTTP response with `status` and `body` (content type inferred, see [`Reply::Http`]).
    pub fn http(status: u16, body: impl Into<String>) -> Self {
        Self::Http { status, headers: Vec::new(), body: body.into() }
    }

    /// An HTML page with `content-type: text/html`, as a misconfigured proxy or gateway returns.
    pub fn html(status: u16, html: impl Into<String>) -> Self {
        Self::Http {
            status,
            headers: vec![("content-type".to_owned(), "text/html; charset=utf-8".to_owned())],
            body: html.into(),
        }
    }

    /// HTTP 429 with `Retry-After: <secs>` and an OpenAI-style JSON error of type
    /// `rate_limit_exceeded`.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let body = serde_json::json!({
            "error": {
                "message": format!(
                    "mock provider: rate limit reached, please try again in {retry_after_secs}s"
                ),
                "type": "rate_limit_exceeded",
                "code": "rate_limit_exceeded",
            }
        });
        Self::Http {
            status: 429,
            headers: vec![("retry-after".to_owned(), retry_after_secs.to_string())],
            body: body.to_string(),
        }
    }

    /// An HTTP error of `category` in the answering API's own shape, status and words (see
    /// [`ErrorCategory`]); refine it with [`Reply::with_status`], [`Reply::with_message`],
    /// [`Reply::with_retry_after`] and [`Reply::with_header`].
    pub fn api_error(category: ErrorCategory) -> Self {
        Self::ApiError { category, status: None, message: None, retry_after_secs: None, headers: Vec::new() }
    }

    /// Sets the HTTP status of a [`Reply::ApiError`] or [`Reply::Http`]; a no-op for a stream.
    #[must_use]
    pub fn with_status(mut self, new_status: u16) -> Self {
        match &mut self {
            Self::ApiError { status, .. } => *status = Some(new_status),
            Self::Http { status, .. } => *status = new_status,
            Self::Stream { .. } => {}
        }
        self
    }

    /// Sets the message of a [`Reply::ApiError`]; a no-op for the other replies.
    #[must_use]
    pub fn with_message(mut self, new_message: impl Into<String>) -> Self {
        if let Self::ApiError { message, .. } = &mut self {
            *message = Some(new_message.into());
        }
        self
    }

    /// Makes a [`Reply::ApiError`] ask the client to wait `secs` seconds, the way the answering
    /// API says it; a no-op for the other replies.
    #[must_use]
    pub fn with_retry_after(mut self, secs: u64) -> Self {
        if let Self::ApiError { retry_after_secs, .. } = &mut self {
            *retry_after_secs = Some(secs);
        }
        self
    }

    /// Adds a response header to a [`Reply::ApiError`] or [`Reply::Http`]; a no-op for a stream.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Self::ApiError { headers, .. } | Self::Http { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Replaces the stream options; a no-op for [`Reply::Http`], which has none.
    #[must_use]
    pub fn with_options(mut self, new_options: StreamOptions) -> Self {
        if let Self::Stream { options, .. } = &mut self {
            *options = new_options;
        }
        self
    }
}

/// One thing that happens on a streamed reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Step {
    /// Assistant text, one delta per [`StreamOptions::text_chunk_chars`] characters (default: the
    /// whole string as one delta).
    Text {
        /// The text.
        text: String,
    },
    /// Reasoning text, sent as `delta.reasoning_content` (what DeepSeek, vLLM and llama.cpp
    /// send) or, with [`StreamOptions::reasoning_field`], `delta.reasoning` (OpenRouter,
    /// Ollama); chunked like [`Step::Text`].
    Reasoning {
        /// The reasoning text.
        text: String,
    },
    /// One tool call whose arguments arrive in fragments of [`StreamOptions::args_chunk_chars`]
    /// characters (default 8). Its index is its position among this reply's tool calls.
    ToolCall {
        /// Tool call id, e.g. `call_1`.
        id: String,
        /// Function name.
        name: String,
        /// The complete arguments string (normally JSON).
        arguments: String,
    },
    /// Several tool calls `(id, name, arguments)` whose fragments are interleaved round-robin, as
    /// some servers do.
    ParallelToolCalls {
        /// The calls, indexed in order after any earlier calls of this reply.
        calls: Vec<(String, String, String)>,
    },
    /// Assistant text computed from the request: every line of the request's text (system
    /// prompt, messages, tool calls and results; for a chained Responses request, the chain's
    /// too) that starts with `marker` once leading whitespace is trimmed, each once, in order,
    /// joined with newlines; `no line starts with <marker>` when there is none.
    Quote {
        /// What a quoted line starts with.
        marker: String,
    },
    /// Like [`Step::Quote`], but every line that contains `marker` anywhere (a summariser that
    /// keeps the marked facts); `no line contains <marker>` when there is none.
    KeepLines {
        /// What a kept line contains.
        marker: String,
    },
    /// Token usage, sent as a final chunk with `"choices": []`.
    Usage {
        /// Prompt tokens.
        prompt_tokens: u64,
        /// Completion tokens (including reasoning tokens).
        completion_tokens: u64,
        /// Reasoning tokens, reported in `completion_tokens_details`.
        #[serde(default)]
        reasoning_tokens: u64,
        /// Cached prompt tokens, reported in `prompt_tokens_details`.
        #[serde(default)]
        cached_tokens: u64,
    },
    /// The finish reason (`stop`, `tool_calls`, `length`, ...) on an empty delta.
    Finish {
        /// The finish reason.
        reason: String,
    },
    /// The end-of-stream marker (`data: [DONE]` for OpenAI Chat).
    Done,
    /// A pause of `ms` milliseconds.
    Delay {
        /// Milliseconds to wait.
        ms: u64,
    },
    /// Stop sending forever but keep the connection open until the client hangs up.
    Stall,
    /// Cut the connection abruptly: the client sees a truncated body, not a clean end.
    Drop,
    /// A mid-stream error event, after which the stream ends.
    ErrorObject {
        /// The error message.
        message: String,
        /// An optional machine-readable code.
        #[serde(default)]
        code: Option<String>,
    },
    /// These exact bytes, for malformed chunks (`data: {not json\n\n`) or comments
    /// (`: keep-alive\n\n`).
    Raw {
        /// The bytes to write.
        data: String,
    },
    /// These exact bytes, which need not be UTF-8 (a BOM, a broken character, a NUL); a JSON
    /// array of numbers in a script file.
    RawBytes {
        /// The bytes to write.
        bytes: Vec<u8>,
    },
    /// `prefix`, then `len` bytes of `x`, written a piece at a time (the server never holds the
    /// line), with no line end: a line of any size (`{"type":"long_line","prefix":"data: ","len":
    /// 104857600}` is a 100 MB line).
    LongLine {
        /// What the line starts with, e.g. `data: ` or `: `.
        #[serde(default)]
        prefix: String,
        /// How many `x` bytes follow.
        len: u64,
    },
}

impl Step {
    /// A [`Step::Text`].
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// A [`Step::ToolCall`].
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self::ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }

    /// A [`Step::Finish`].
    pub fn finish(reason: impl Into<String>) -> Self {
        Self::Finish { reason: reason.into() }
    }

    /// A [`Step::Usage`] without reasoning or cached tokens.
    pub fn usage(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self::Usage { prompt_tokens, completion_tokens, reasoning_tokens: 0, cached_tokens: 0 }
    }

    fn default_usage() -> Self {
        Self::usage(DEFAULT_PROMPT_TOKENS, DEFAULT_COMPLETION_TOKENS)
    }
}

/// Knobs for how a [`Reply::Stream`] is put on the wire.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StreamOptions {
    /// Characters per text or reasoning delta; `None` sends each step's text as one delta.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_chunk_chars: Option<usize>,
    /// Characters per tool-call arguments fragment; `None` means 8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args_chunk_chars: Option<usize>,
    /// Write the body in network chunks of this many bytes regardless of SSE event boundaries,
    /// deliberately splitting SSE lines and multi-byte UTF-8 characters across writes (each piece
    /// is flushed on its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split_bytes: Option<usize>,
    /// Pause between SSE events in milliseconds; overrides [`Script::chunk_delay_ms`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunk_delay_ms: Option<u64>,
    /// The `model` field of every chunk; `None` echoes the request's model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The OpenAI Chat field reasoning is sent in; `None` means `reasoning_content`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_field: Option<ReasoningField>,
}

/// Where OpenAI-compatible servers put reasoning text in a Chat Completions delta or message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningField {
    /// `reasoning_content`, as DeepSeek, vLLM and llama.cpp send it.
    #[default]
    ReasoningContent,
    /// `reasoning`, as OpenRouter and Ollama send it.
    Reasoning,
}
