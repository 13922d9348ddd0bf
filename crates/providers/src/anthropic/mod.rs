//! The Anthropic Messages API (`POST {base}/messages`, streamed): the provider and its model
//! listing. Request building is in [`request`], stream parsing in [`stream`].
//!
//! Quirks handled here:
//! - The system prompt is a top-level field, not a message; history alternates user/assistant,
//!   so adjacent messages of one role are merged and tool results (which are `user` content) are
//!   grouped into one user message that starts with its `tool_result` blocks, as the API demands.
//! - Empty or whitespace-only text blocks are refused by the API: they are never sent.
//! - `max_tokens` is required. The canonical request has no such field, so [`DEFAULT_MAX_TOKENS`]
//!   (8192) is sent, except 4096 for the Claude 3 models (Opus, Sonnet, Haiku 3) whose output
//!   limit is 4096: a larger value is an error there, not a cap.
//! - Prompt caching: `cache_control: ephemeral` breakpoints on the system prompt, on the last tool
//!   definition and on the last block of the last two messages (the API's 4), so each iteration
//!   of a turn reads the previous one's prefix from the cache, also after a compaction stubbed
//!   the previous request's last result (the message before it is still a breakpoint). Cache reads are
//!   [`Usage::cached_tokens`], cache writes [`Usage::cache_write_tokens`]; both are also in
//!   [`Usage::prompt_tokens`] (which, as with OpenAI, is every input token: uncached, written and
//!   read).
//! - Tool-call input is a JSON object on the wire, while the canonical call keeps the model's raw
//!   argument text. Arguments that are not a JSON object (the model sent broken JSON, or an array)
//!   are sent back as `{}`, the only input the API accepts, and the raw text is added to that
//!   call's `tool_result` unless the result already quotes it, so the model still sees what it
//!   sent and why it failed.
//! - A history that holds tool calls must declare tools; when an iteration offers none (the last
//!   answer with tools off), the tools the history used are declared with an empty schema and
//!   `tool_choice: none`.
//! - `max_tokens` is the profile's output limit when it sets one; `temperature` (capped at 1) or
//!   else `top_p`, never both (newer models refuse the pair) and neither while thinking.
//! - Extended thinking (`thinking: {type: enabled, budget_tokens}`) is asked for when the profile
//!   sets a thinking budget or a reasoning effort (mapped to a budget; at least 1024, and
//!   `max_tokens` raised above it). Thinking text is shown as reasoning. The signed `thinking`
//!   and `redacted_thinking` blocks are kept as the response's [`ProviderState`] (`{"blocks":
//!   [...]}`, exactly as received) and sent back unchanged, first in that assistant message, to
//!   this API at this origin only. Thinking is left off for a request that forces a tool (the
//!   API refuses the two together) and for one whose last assistant message called tools without
//!   thinking blocks of its own (the API demands that such a message start with them, which a
//!   forced first iteration or a history from another API cannot).

pub mod request;
pub mod stream;

pub use request::{
    CLAUDE_3_MAX_TOKENS, DEFAULT_MAX_TOKENS, MIN_THINKING_BUDGET, max_tokens_for, request_body, wire_call_id,
};
pub use stream::{EventParser, stop_reason};

use crate::endpoint::Endpoint;
use futures::StreamExt;
use switchboard_core::tool::SecretValue;
use switchboard_core::{Provider, ProviderError, ProviderRequest, ProviderStream};

/// The kind id this module's state is tagged with.
const API: &str = "anthropic";

/// The API version every request names (`anthropic-version`).
pub const API_VERSION: &str = "2023-06-01";

/// At most this many pages of `GET /models` are read (a guard against a server that always says
/// there is more).
const MAX_MODEL_PAGES: usize = 20;

/// Configuration of one Anthropic endpoint.
#[derive(Clone, Debug)]
pub struct AnthropicConfig {
    /// Base URL, e.g. `https://api.anthropic.com/v1`.
    pub base_url: String,
    /// The key, sent as `x-api-key`. A gateway in front of the API may need none.
    pub api_key: Option<SecretValue>,
}

/// The Messages API provider.
pub struct Anthropic {
    endpoint: Endpoint,
}

impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic").field("base_url", &self.endpoint.base()).finish_non_exhaustive()
    }
}

impl Anthropic {
    /// A provider for `config`.
    pub fn new(config: AnthropicConfig) -> Result<Self, ProviderError> {
        Ok(Self { endpoint: Endpoint::new(API, &config.base_url, config.api_key)? })
    }

    /// The models the API lists (`GET /models`, every page), sorted.
    pub async fn models(&self) -> Result<Vec<String>, ProviderError> {
        let mut ids = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_MODEL_PAGES {
            let url = match &after {
                Some(after) => self.endpoint.url(&format!("models?limit=1000&after_id={after}")),
                None => self.endpoint.url("models?limit=1000"),
            };
            let v = self.endpoint.get_json(&url, &[("anthropic-version", API_VERSION)]).await?;
            let page: Vec<String> = v["data"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["id"].as_str().map(str::to_owned))
                .collect();
            let next = v["last_id"].as_str().map(str::to_owned).or_else(|| page.last().cloned());
            ids.extend(page);
            match next {
                // Ids are plain tokens; one that would need escaping in a URL ends the listing.
                Some(next)
                    if v["has_more"].as_bool() == Some(true)
                        && after.as_ref() != Some(&next)
                        && next.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)) =>
                {
                    after = Some(next);
                }
                _ => break,
            }
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }
}

impl Provider for Anthropic {
    fn kind(&self) -> &'static str {
        API
    }

    fn tool_limits(&self) -> switchboard_core::ToolLimits {
        crate::kinds::ProviderKind::tool_limits(API)
    }

    fn list_models(&self) -> futures::future::BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(self.models())
    }

    fn stream(&self, mut request: ProviderRequest) -> ProviderStream {
        let payloads = crate::payload::Payloads::take(&mut request);
        let body = payloads.render(&request_body(&request, self.endpoint.origin()));
        let url = self.endpoint.url("messages");
        let parser = EventParser::for_origin(self.endpoint.origin());
        let model = request.model;
        self.endpoint
            .stream(&url, &[("anthropic-version", API_VERSION)], body, parser)
            .map(move |item| item.map_err(|e| with_model(e, &model)))
            .boxed()
    }
}

/// Names the model in a 404, which the status alone cannot tell from a wrong base URL.
fn with_model(mut error: ProviderError, model: &str) -> ProviderError {
    if error.status == Some(404) {
        error.message = format!(
            "{} The model asked for was '{model}'; the model list in Settings shows the ones this key can use.",
            error.message
        );
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::ErrorKind;

    #[test]
    fn a_404_names_the_model() {
        let e = ProviderError::new(ErrorKind::NotFound, "P has no such model (404): model: x.").with_status(404);
        assert!(with_model(e, "claude-x").message.contains("'claude-x'"));
        let e = ProviderError::new(ErrorKind::Server, "boom").with_status(500);
        assert_eq!(with_model(e, "claude-x").message, "boom");
    }
}
