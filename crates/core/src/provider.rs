//! The provider abstraction: one canonical request in, one stream of canonical events out.
//!
//! Provider quirks (wire formats, how tool-call fragments are assembled, how forcing is spelled)
//! live in each provider's module in `switchboard-providers`; the loop sees only these types.

use crate::catalogue::ToolLimits;
use crate::error::ProviderError;
use crate::types::{Message, ProviderState, ToolCall, Usage};
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
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolChoice {
    /// The model decides.
    #[default]
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

/// How hard a reasoning model thinks before it answers.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ReasoningEffort {
    /// Little or no reasoning: fastest.
    Low,
    /// The APIs' usual default.
    Medium,
    /// The most reasoning.
    High,
}

impl ReasoningEffort {
    /// The word the OpenAI APIs use.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }

    /// A thinking budget in tokens for APIs that take a budget rather than an effort.
    pub fn budget_tokens(self) -> u32 {
        match self {
            ReasoningEffort::Low => 2048,
            ReasoningEffort::Medium => 8192,
            ReasoningEffort::High => 24576,
        }
    }
}

/// Generation settings a profile (or a chat) sets for every request; `None` leaves the API's
/// default. Each provider maps them to its API's fields and leaves out what its API lacks.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GenerationOptions {
    /// The most tokens one response may produce (reasoning included where the API counts it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_output_tokens: Option<u32>,
    /// Reasoning effort (OpenAI `reasoning_effort` / `reasoning.effort`; a budget elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Thinking budget in tokens (Anthropic extended thinking, Gemini `thinkingBudget`); wins over
    /// the effort for those APIs. 0 turns thinking off where the API allows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub thinking_budget: Option<u32>,
    /// Sampling temperature (0 to 2; Anthropic takes 0 to 1). Left out for models that refuse it
    /// (OpenAI's reasoning models, Claude while it thinks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub temperature: Option<f64>,
    /// Nucleus sampling (0 to 1), where the API takes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub top_p: Option<f64>,
}

impl GenerationOptions {
    /// `self` with every field `over` sets taken from `over` (a chat's settings over its profile's).
    #[must_use]
    pub fn overridden_by(self, over: &GenerationOptions) -> GenerationOptions {
        GenerationOptions {
            max_output_tokens: over.max_output_tokens.or(self.max_output_tokens),
            reasoning_effort: over.reasoning_effort.or(self.reasoning_effort),
            thinking_budget: over.thinking_budget.or(self.thinking_budget),
            temperature: over.temperature.or(self.temperature),
            top_p: over.top_p.or(self.top_p),
        }
    }

    /// Checks the values a person typed: a message naming the field that is out of range.
    pub fn check(&self) -> Result<(), String> {
        let in_range = |v: Option<f64>, max: f64| v.is_none_or(|v| v.is_finite() && (0.0..=max).contains(&v));
        if !in_range(self.temperature, 2.0) {
            return Err("The temperature must be a number from 0 to 2.".into());
        }
        if !in_range(self.top_p, 1.0) {
            return Err("Top-p must be a number from 0 to 1.".into());
        }
        if self.max_output_tokens == Some(0) {
            return Err("The output limit must be at least 1 token.".into());
        }
        Ok(())
    }

    /// The thinking budget to ask for: the budget set, else the effort's, else none.
    pub fn budget(&self) -> Option<u32> {
        self.thinking_budget.or(self.reasoning_effort.map(ReasoningEffort::budget_tokens))
    }
}

/// One request to a model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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
    /// Output limit and reasoning controls.
    #[serde(default)]
    pub options: GenerationOptions,
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
    /// Filtered, with the provider's reason in words for a person ("its safety filters flagged
    /// it (harassment)").
    Filtered(String),
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
    /// What the API wants back unchanged with this response in later requests (see
    /// [`ProviderState`]); at most one per response, before `Finish`.
    State(ProviderState),
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

/// What a model can do; `None` where nothing is known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelCapabilities {
    /// Takes tool definitions and calls tools.
    pub tools: Option<bool>,
    /// Takes images in messages.
    pub images: Option<bool>,
    /// Takes PDF documents as such (a document block, a file part); a model that does not gets
    /// the PDF's extracted text instead.
    pub pdf: Option<bool>,
    /// Takes reasoning controls (effort, thinking budget).
    pub reasoning: Option<bool>,
    /// Takes sampling settings (temperature, top-p); OpenAI's reasoning models refuse them.
    pub sampling: Option<bool>,
}

impl ModelCapabilities {
    /// `self` where it knows, else `fallback`.
    #[must_use]
    pub fn or(self, fallback: ModelCapabilities) -> ModelCapabilities {
        ModelCapabilities {
            tools: self.tools.or(fallback.tools),
            images: self.images.or(fallback.images),
            pdf: self.pdf.or(fallback.pdf),
            reasoning: self.reasoning.or(fallback.reasoning),
            sampling: self.sampling.or(fallback.sampling),
        }
    }
}

/// A model as an API lists it: what the listing says, `None` where it says nothing.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// The id requests name.
    pub id: String,
    /// What the listing says it can do.
    pub capabilities: ModelCapabilities,
    /// The context window it states, in tokens (prompt and answer together).
    pub context_window: Option<u64>,
    /// The most tokens one answer may have, as it states.
    pub max_output: Option<u64>,
    /// What it costs, as it states (US dollars per million tokens); `None`: not stated.
    pub prices: Option<crate::spend::Prices>,
}

impl ModelInfo {
    /// A listed model the listing says nothing more about.
    pub fn id(id: impl Into<String>) -> ModelInfo {
        ModelInfo {
            id: id.into(),
            capabilities: ModelCapabilities::default(),
            context_window: None,
            max_output: None,
            prices: None,
        }
    }
}

/// The stream a provider returns. It ends after `Finish` or after the first error.
pub type ProviderStream = BoxStream<'static, Result<ProviderEvent, ProviderError>>;

/// A model API. Implementations never retry after output has started; the loop decides retries.
pub trait Provider: Send + Sync {
    /// The kind of API, for logs (`openai`, `anthropic`, ...).
    fn kind(&self) -> &'static str;

    /// How many tools, and how many bytes of tool definitions, one request to this API may
    /// carry; the loop never sends more. The default is [`ToolLimits::default`]; each API's
    /// provider returns its documented maximum (the providers' kind table).
    fn tool_limits(&self) -> ToolLimits {
        ToolLimits::default()
    }

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

    /// The models the API lists with what the listing says they can do; APIs whose listing says
    /// nothing about capabilities list the ids alone.
    fn list_model_infos(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, ProviderError>> {
        Box::pin(async move { Ok(self.list_models().await?.into_iter().map(ModelInfo::id).collect()) })
    }
}
