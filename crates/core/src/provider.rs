//! The provider abstraction: one canonical request in, one stream of canonical events out.
//!
//! Provider quirks (wire formats, how tool-call fragments are assembled, how forcing is spelled)
//! live in each provider's module in `switchboard-providers`; the loop sees only these types.

use crate::error::ProviderError;
use crate::types::{Message, ToolCall, Usage};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};

/// A tool as offered to a provider, under its provider-safe name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Provider-safe name (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Which tool the model must (or must not) call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// Must call some tool among those offered.
    Required,
    /// Must call this tool (provider-safe name).
    Named(String),
    /// Must call one of these (provider-safe names); the request offers exactly these.
    OneOf(Vec<String>),
}

/// One request to a model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderRequest {
    /// Model id.
    pub model: String,
    /// System prompt, tool prompt snippets included.
    pub system: Option<String>,
    /// Canonical history, oldest first.
    pub messages: Vec<Message>,
    /// Tools offered this iteration.
    pub tools: Vec<ToolSpec>,
    /// Forcing for this iteration.
    pub tool_choice: ToolChoice,
}

/// Why one model response ended, as the provider said it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    /// Natural end.
    Stop,
    /// The model wants its tool calls run.
    ToolCalls,
    /// Output token limit.
    Length,
    /// Filtered.
    ContentFilter,
    /// Anything else the provider said.
    Other(String),
}

/// One step of a streamed model response.
#[derive(Clone, Debug, PartialEq)]
pub enum ProviderEvent {
    /// Visible text.
    TextDelta(String),
    /// Reasoning text.
    ReasoningDelta(String),
    /// A complete tool call (provider-safe name), with the number of chars of text this response
    /// had produced when the call's first fragment arrived.
    ToolCall {
        /// The assembled call.
        call: ToolCall,
        /// Chars of this response's text before the call first appeared.
        text_chars_before: usize,
    },
    /// A tool call the provider could not assemble unambiguously (fragments that fit no call, no
    /// tool name). The loop shows it, answers it with an error telling the model what was wrong,
    /// and never runs it; its id is answered like any other.
    MalformedToolCall {
        /// What could be assembled (the id is unique within the response).
        call: ToolCall,
        /// Chars of this response's text before the call first appeared.
        text_chars_before: usize,
        /// What was wrong, for the model: "its arguments arrived without a call id, ...".
        problem: String,
    },
    /// Token usage of this response.
    Usage(Usage),
    /// The server showed it is alive without saying anything (an event-stream comment such as
    /// `: keep-alive`, sent while a model thinks). It resets the loop's idle timeout and nothing
    /// else: it is not output, so a later failure may still be retried.
    KeepAlive,
    /// The response ended normally.
    Finish {
        /// Why.
        reason: StopReason,
        /// Provider response id, for APIs that chain responses.
        response_id: Option<String>,
    },
}

/// The stream a provider returns. It ends after `Finish` or after the first error.
pub type ProviderStream = BoxStream<'static, Result<ProviderEvent, ProviderError>>;

/// A model API. Implementations never retry after output has started; the loop decides retries.
pub trait Provider: Send + Sync {
    /// The kind of API, for logs (`openai`, `anthropic`, ...).
    fn kind(&self) -> &'static str;

    /// Starts one streamed response. Dropping the stream cancels the request.
    fn stream(&self, request: ProviderRequest) -> ProviderStream;

    /// The models the API lists, sorted. APIs without a listing say so; a model typed by hand
    /// still works with them.
    fn list_models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        let kind = self.kind();
        Box::pin(async move {
            Err(ProviderError::new(
                crate::error::ErrorKind::Config,
                format!("The {kind} API does not list its models; type the model's name."),
            ))
        })
    }
}
