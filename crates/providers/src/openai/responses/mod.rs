//! The OpenAI Responses API (`POST {base}/responses`, streamed), kind `openai-responses`: the
//! provider and its one-time fallback. Request building (items, chaining, reasoning sent back) is
//! in [`request`], stream parsing (calls, state) in [`stream`].
//!
//! Quirks handled here:
//! - The system prompt is `instructions` (sent on every request: a chained request does not
//!   inherit it); history is a flat list of `input` items: messages (`input_text` for the
//!   person, `output_text` for the model), each tool call a `function_call` item and each result
//!   a `function_call_output` item, in the order they happened. Blank texts are never sent (the
//!   API refuses empty ones).
//! - Tools are declared flat (`{type:function, name, description, parameters, strict}`). `strict`
//!   makes the API hold the model to the schema, but the API refuses a strict tool whose schema
//!   is not in its strict subset, so it is only set where [`strict_compatible`] says so.
//! - Options: `max_output_tokens` when the profile sets an output limit; `reasoning: {effort,
//!   summary: "auto"}` only when it sets a reasoning effort (models that do not reason refuse
//!   the field). `store` is sent only when the profile sets it (the API keeps responses by
//!   default).
//! - Provider state: each response leaves one [`ProviderState`] (api `openai-responses`, this
//!   endpoint's origin) whose data is
//!   `{"responseId": "resp_…", "stored": bool, "items": [...]}`: the response's id, whether it
//!   was asked for with `store` not false (so the API kept it), and its output items in order:
//!   `reasoning` items as the API returned them at `response.output_item.done` (`type`, `id`,
//!   `summary`, and `encrypted_content` when present), `message` items as `{type, id}` and
//!   `function_call` items as `{type, id, call_id}`. Each part is left out when the stream did
//!   not carry it.
//! - Chaining: when `store` is not false and the last assistant message of the history carries
//!   this endpoint's state of a stored response with an id (and every call it made is in that
//!   response), the request sends `previous_response_id` and only the items after that message
//!   (the results of its calls, the person's new message); the API holds the rest, reasoning
//!   included. Otherwise the whole history is sent.
//! - A whole history sends reasoning back: every assistant message with this endpoint's state
//!   gets its reasoning items in front of its message and `function_call` items, in the
//!   response's order, and those items carry their own ids (`msg_…`, `fc_…`), which is how the
//!   API pairs a reasoning item with the item that followed it. A reasoning item is sent only when
//!   the API can resolve it: with its `encrypted_content`, or by id when the response was stored
//!   and this request does not say `store: false`. With `store: false` the request asks for
//!   `include: ["reasoning.encrypted_content"]`, so responses carry what later requests need.
//! - A chained request the API refuses because it no longer has the previous response (HTTP
//!   400/404 `previous_response_not_found`: expired, deleted, another project's key) is sent once
//!   more with the whole history and no `previous_response_id`, inside this provider's stream and
//!   before any output, so the loop only sees the second response. That history sends reasoning
//!   back only where it is encrypted: what the API lost, it cannot resolve by id either. The
//!   refusal is recognized by its message (a [`ProviderError`] keeps no error code).
//! - The stream is typed events. Call arguments arrive as deltas keyed by the item id (with the
//!   output index as a fallback) and are complete at `function_call_arguments.done` or at the
//!   item's `output_item.done`, whichever comes first; the response's end is `response.completed`
//!   (or `response.incomplete`, whose reason `max_output_tokens` / `content_filter` becomes the
//!   stop reason `Length` / `ContentFilter`, or `response.failed`), which carry the usage.
//! - Errors use OpenAI's shape over HTTP; in the stream they come as an `error` event or inside a
//!   `response.failed` event, both classified by their code in `classify.rs`.

pub mod request;
pub mod stream;

pub use request::{Chain, Target, chain, request_body, strict_compatible};
pub use stream::EventParser;

use super::OpenAiConfig;
use crate::endpoint::Endpoint;
use futures::StreamExt;
use switchboard_core::{Provider, ProviderError, ProviderEvent, ProviderRequest, ProviderStream};

/// The kind this module speaks, as its provider state is tagged.
const KIND: &str = "openai-responses";

/// The Responses API provider. It shares [`OpenAiConfig`] with the Chat provider: same base URL
/// and bearer key.
pub struct OpenAiResponses {
    endpoint: Endpoint,
    /// `store` as the profile sets it; `None` leaves the API's default (kept).
    store: Option<bool>,
}

impl std::fmt::Debug for OpenAiResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiResponses").field("base_url", &self.endpoint.base()).finish_non_exhaustive()
    }
}

impl OpenAiResponses {
    /// A provider for `config`.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        Ok(Self { endpoint: Endpoint::new(KIND, &config.base_url, config.api_key)?, store: None })
    }

    /// Sets `store` (whether the API keeps responses, which chaining needs).
    #[must_use]
    pub fn with_store(mut self, store: Option<bool>) -> Self {
        self.store = store;
        self
    }

    /// The models the server lists (`GET /models`), sorted: the same listing as Chat's.
    pub async fn models(&self) -> Result<Vec<String>, ProviderError> {
        super::list_models(&self.endpoint).await
    }

    /// What a request's body depends on besides the request.
    fn target(&self) -> Target {
        Target { origin: self.endpoint.origin().to_owned(), store: self.store, lost_responses: false }
    }
}

impl Provider for OpenAiResponses {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn tool_limits(&self) -> switchboard_core::ToolLimits {
        crate::kinds::ProviderKind::tool_limits(KIND)
    }

    fn list_models(&self) -> futures::future::BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(self.models())
    }

    fn stream(&self, mut request: ProviderRequest) -> ProviderStream {
        let connection =
            Connection { endpoint: self.endpoint.clone(), url: self.endpoint.url("responses"), target: self.target() };
        let payloads = crate::payload::Payloads::take(&mut request);
        let target = &connection.target;
        match chain(&request, target) {
            None => connection.open(payloads.render(&request_body(&request, target, None))),
            Some(chain) => {
                let chained = connection.open(payloads.render(&request_body(&request, target, Some(&chain))));
                // Sent if the API lost the previous response; the reasoning of that chain, which
                // it likely lost too, goes back only where it is encrypted. Written only then: it
                // carries every file of the history again.
                let lost = Target { lost_responses: true, ..target.clone() };
                let previous = chain.previous_response_id;
                with_fallback(chained, previous, move || {
                    connection.open(payloads.render(&request_body(&request, &lost, None)))
                })
            }
        }
    }
}

/// What one request needs to be sent, kept for a second attempt.
struct Connection {
    endpoint: Endpoint,
    url: String,
    target: Target,
}

impl Connection {
    fn open(&self, body: String) -> ProviderStream {
        let parser = EventParser::for_endpoint(&self.target.origin, self.target.store != Some(false));
        self.endpoint.stream(&self.url, &[], body, parser)
    }
}

/// `first` (a chained request), or, when it is refused because the API no longer has the previous
/// response and nothing but keep-alives came before, the stream `fallback` opens (the whole
/// history), once.
fn with_fallback(
    first: ProviderStream,
    previous_response_id: String,
    fallback: impl FnOnce() -> ProviderStream + Send + 'static,
) -> ProviderStream {
    futures::stream::unfold((first, Some((fallback, previous_response_id))), |(mut stream, mut fallback)| async move {
        loop {
            let item = stream.next().await?;
            match item {
                Err(e) if fallback.is_some() && previous_response_missing(&e) => {
                    let (open, previous_response_id) = fallback.take().expect("checked above");
                    tracing::debug!(
                        %previous_response_id,
                        error = %e.message,
                        "the Responses API no longer has the previous response; sending the whole history"
                    );
                    stream = open();
                }
                Ok(ProviderEvent::KeepAlive) => return Some((item, (stream, fallback))),
                // Output (or another error) came: from here on this is the answer.
                item => return Some((item, (stream, None))),
            }
        }
    })
    .boxed()
}

/// Whether `error` is the API's refusal of a `previous_response_id` it does not have (code
/// `previous_response_not_found`, "Previous response with id '…' not found.").
pub fn previous_response_missing(error: &ProviderError) -> bool {
    if !matches!(error.status, None | Some(400) | Some(404)) {
        return false;
    }
    let lower = error.message.to_ascii_lowercase();
    lower.contains("previous_response_not_found")
        || (lower.contains("previous response") && lower.contains("not found"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_refused_previous_response_triggers_the_fallback() {
        let refused = crate::classify::http_error(
            "P",
            400,
            None,
            &json!({"error":{"message":"Previous response with id 'resp_x' not found.","type":"invalid_request_error",
                "param":"previous_response_id","code":"previous_response_not_found"}})
            .to_string(),
        );
        assert!(previous_response_missing(&refused), "{}", refused.message);
        let gone = crate::classify::http_error(
            "P",
            404,
            None,
            r#"{"error":{"message":"Previous response with id 'r' not found."}}"#,
        );
        assert!(previous_response_missing(&gone));
        let other = crate::classify::http_error("P", 400, None, r#"{"error":{"message":"Item 'rs_1' not found."}}"#);
        assert!(!previous_response_missing(&other));
        let server =
            crate::classify::http_error("P", 500, None, r#"{"error":{"message":"Previous response not found"}}"#);
        assert!(!previous_response_missing(&server), "a server error is the loop's to retry");
    }
}
