//! Google Gemini's native API: `POST {base}/models/{model}:streamGenerateContent?alt=sse`: the
//! provider, its URLs and paged model listing. Request building is in [`request`] (with the schema
//! conversion in [`schema`]), stream parsing in [`stream`].
//!
//! The key goes only into the `x-goog-api-key` header (Gemini also takes `?key=` in the URL,
//! which would put it into every error that quotes the URL, proxy log and redirect).
//!
//! Request mapping ([`request_body`]): the system prompt is `systemInstruction`; the history is
//! `contents` with roles `user` and `model`; an assistant turn is its text then one
//! `functionCall` part per call (`args` is the call's arguments as a JSON object); the results of
//! a turn's calls are `functionResponse` parts in one `user` content right after it, in the order
//! of the calls (Gemini matches them by position and name, and refuses a turn whose number of
//! responses differs from its number of calls, so a call without a result is answered as one that
//! has none); adjacent contents of one role are merged, and no empty part is sent. Parameters
//! are converted to the schema subset Gemini accepts by [`schema`]. Forcing is
//! `toolConfig.functionCallingConfig`: `AUTO`, `NONE`, or `ANY` with `allowedFunctionNames`.
//!
//! Streaming ([`StreamParser`]): every event is a whole `GenerateContentResponse`; function calls
//! arrive whole, usually without an id (one is generated, unique across requests); there is no
//! end sentinel, so the end of the body after a `finishReason` is the end of the answer.
//! A blocked prompt (`promptFeedback.blockReason`) is an error that says what was blocked and why.
//! A blocked answer (`finishReason` SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, ...)
//! ends like a filtered answer of the other APIs, [`StopReason::Filtered`] with what was blocked
//! and why (usage kept); MALFORMED_FUNCTION_CALL is an error that says to ask again. What streamed
//! before is kept by the loop.
//! MAX_TOKENS is a [`StopReason::Length`] stop.
//!
//! Generation options ([`generation_config`]): `generationConfig.maxOutputTokens` is the
//! profile's output limit; `thinkingConfig` is sent only when the profile sets a thinking budget
//! or a reasoning effort (mapped to a budget): `thinkingBudget` is that budget (0 turns thinking
//! off; others are clamped into 128..=32768, the range the thinking models take) with
//! `includeThoughts: true` when it is not 0, so thought summaries stream as reasoning. With
//! neither set, the model's default thinking applies and no `generationConfig` field is sent for
//! it.
//!
//! Thought signatures: thinking models put an opaque `thoughtSignature` on parts of a response
//! (Gemini 3 on the first `functionCall` part of every step that calls functions, and on the last
//! part of one that does not, possibly an empty text part at the end of the stream; 2.5 models
//! on any part, thought parts included), and want each one back unchanged, on the part it came
//! with, when the history is sent again; Gemini 3 refuses a request whose current turn has a
//! function call without its signature. The parser keeps them as the response's
//! [`ProviderState`] (tagged `gemini` and the endpoint's origin), which the loop stores on that
//! iteration's assistant message, in this shape:
//! `{"calls": {"<call id>": "<sig>"}, "text": "<sig>", "thoughts": [{"text": "...", "signature":
//! "<sig>"}]}` (each key only when there is one). `calls` is keyed by the canonical call id this
//! parser gave the call (Gemini's own `id`, or a generated one), so the signature goes back on
//! exactly that `functionCall` part; `text` goes on the message's one text part (the response's
//! text parts, joined); each signed run of thought text goes back as a `thought: true` part with
//! that text, before the rest, as Gemini sent it (thought text is never sent back as visible
//! text, and an unsigned run is not sent at all). State made by another API or another endpoint

pub mod request;
pub mod schema;
pub mod stream;

pub use request::{calling_config, generation_config, request_body};
pub use stream::StreamParser;

use crate::endpoint::Endpoint;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use switchboard_core::provider::ModelInfo;
use switchboard_core::tool::SecretValue;
use switchboard_core::{Provider, ProviderError, ProviderRequest, ProviderStream};

/// The kind id this module's state is tagged with.
const API: &str = "gemini";

/// The smallest and largest thinking budgets sent (0, thinking off, is sent as is).
pub const THINKING_BUDGET_RANGE: std::ops::RangeInclusive<u32> = 128..=32768;

/// Ids this provider makes up for calls Gemini sent without one start with this; such ids are
/// never sent back to Gemini (it would not know them).
pub const GENERATED_ID_PREFIX: &str = "gemini-call-";

/// At most this many model-list pages are read (a server that always has a next page would
/// otherwise keep the listing going forever).
const MAX_MODEL_PAGES: usize = 20;

/// Configuration of one Gemini endpoint.
#[derive(Clone, Debug)]
pub struct GeminiConfig {
    /// Base URL, e.g. `https://generativelanguage.googleapis.com/v1beta`.
    pub base_url: String,
    /// The API key (from Google AI Studio).
    pub api_key: Option<SecretValue>,
}

/// The Gemini provider.
pub struct Gemini {
    endpoint: Endpoint,
}

impl std::fmt::Debug for Gemini {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gemini").field("base_url", &self.endpoint.base()).finish_non_exhaustive()
    }
}

impl Gemini {
    /// A provider for `config`.
    pub fn new(config: GeminiConfig) -> Result<Self, ProviderError> {
        Ok(Self { endpoint: Endpoint::new(API, &config.base_url, config.api_key)?.named("The Gemini API") })
    }

    fn stream_url(&self, model: &str) -> String {
        self.endpoint.url(&format!("{}:streamGenerateContent?alt=sse", model_path(model)))
    }

    /// The models that can generate content (`GET {base}/models`, every page), sorted, without
    /// the `models/` prefix.
    pub async fn models(&self) -> Result<Vec<String>, ProviderError> {
        Ok(self.model_infos().await?.into_iter().map(|m| m.id).collect())
    }

    /// [`Gemini::models`] with the token limits each one states.
    pub async fn model_infos(&self) -> Result<Vec<ModelInfo>, ProviderError> {
        let mut models = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_MODEL_PAGES {
            let mut url = self.endpoint.url("models?pageSize=1000");
            if let Some(t) = &token {
                url.push_str("&pageToken=");
                url.push_str(&percent_encode(t));
            }
            let page = self.endpoint.get_json(&url, &[]).await?;
            let (more, next) = models_page(&page);
            models.extend(more);
            match next {
                Some(next) if token.as_deref() != Some(next.as_str()) => token = Some(next),
                _ => break,
            }
        }
        models.sort_by(|a, b| a.id.cmp(&b.id));
        models.dedup_by(|a, b| a.id == b.id);
        Ok(models)
    }
}

/// A positive token limit at `value`, else nothing.
fn limit(value: &Value) -> Option<u64> {
    value.as_u64().filter(|&n| n > 0)
}

/// One page of `GET /models`: the models that support `generateContent` (named without
/// `models/`, with their `inputTokenLimit` as the window and `outputTokenLimit`), and the next
/// page's token.
pub fn models_page(page: &Value) -> (Vec<ModelInfo>, Option<String>) {
    let models = page["models"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| {
            m["supportedGenerationMethods"].as_array().is_some_and(|ms| ms.iter().any(|x| x == "generateContent"))
        })
        .filter_map(|m| {
            let name = m["name"].as_str()?;
            let id = name.strip_prefix("models/").unwrap_or(name);
            (!id.is_empty()).then(|| ModelInfo {
                context_window: limit(&m["inputTokenLimit"]),
                max_output: limit(&m["outputTokenLimit"]),
                ..ModelInfo::id(id)
            })
        })
        .collect();
    let next = page["nextPageToken"].as_str().filter(|t| !t.is_empty()).map(str::to_owned);
    (models, next)
}

/// `text` with every byte outside the URL-safe unreserved set percent-encoded.
fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The model's resource path: `models/{model}` (a `models/` or `tunedModels/` prefix the person
/// typed is kept), with anything outside the characters model names use percent-encoded.
fn model_path(model: &str) -> String {
    let model = model.trim();
    let path = if model.starts_with("models/") || model.starts_with("tunedModels/") {
        model.to_owned()
    } else {
        format!("models/{model}")
    };
    path.split('/').map(percent_encode).collect::<Vec<_>>().join("/")
}

/// A prefix for the ids of one response's generated calls, unique in this process and across
/// restarts (the store keeps call ids of every turn).
fn id_prefix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{GENERATED_ID_PREFIX}{nanos:x}-{n:x}-")
}

impl Provider for Gemini {
    fn kind(&self) -> &'static str {
        API
    }

    fn tool_limits(&self) -> switchboard_core::ToolLimits {
        crate::kinds::ProviderKind::tool_limits(API)
    }

    fn list_models(&self) -> futures::future::BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(self.models())
    }

    fn list_model_infos(&self) -> futures::future::BoxFuture<'_, Result<Vec<ModelInfo>, ProviderError>> {
        Box::pin(self.model_infos())
    }

    fn stream(&self, mut request: ProviderRequest) -> ProviderStream {
        let payloads = crate::payload::Payloads::take(&mut request);
        let body = payloads.render(&request_body(&request, self.endpoint.origin()));
        let parser = StreamParser::new(id_prefix(), self.endpoint.origin());
        self.endpoint.stream(&self.stream_url(&request.model), &[], body, parser)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls_keep_the_key_out_and_model_pages_are_read() {
        let g = Gemini::new(GeminiConfig {
            base_url: "https://generativelanguage.googleapis.com/v1beta/".into(),
            api_key: Some(SecretValue::new("AIza-secret")),
        })
        .unwrap();
        let url = g.stream_url("gemini-2.0-flash");
        assert_eq!(
            url,
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            g.stream_url("models/x y"),
            "https://generativelanguage.googleapis.com/v1beta/models/x%20y:streamGenerateContent?alt=sse"
        );
        assert!(!format!("{g:?}").contains("AIza"));
        let (models, next) = models_page(&json!({"models": [
            {"name": "models/gemini-2.0-flash", "supportedGenerationMethods": ["generateContent", "countTokens"],
             "inputTokenLimit": 1_048_576, "outputTokenLimit": 8192},
            {"name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"]},
            {"name": "models/gemma-3", "supportedGenerationMethods": ["generateContent"], "inputTokenLimit": 0}
        ], "nextPageToken": "p2"}));
        let flash =
            ModelInfo { context_window: Some(1_048_576), max_output: Some(8192), ..ModelInfo::id("gemini-2.0-flash") };
        assert_eq!((models, next.as_deref()), (vec![flash, ModelInfo::id("gemma-3")], Some("p2")));
        assert_eq!(models_page(&json!({"models": []})), (vec![], None));
    }
}
