//! OpenAI Chat Completions, which OpenAI-compatible servers (Ollama, LM Studio, vLLM, llama.cpp,
//! OpenRouter) also speak: the provider. Request building is in [`request`], stream parsing in
//! [`stream`].
//!
//! Quirks handled here: tool-call fragments are assembled by `index` (falling back to the call id
//! for servers that omit it); reasoning arrives as `reasoning_content` (DeepSeek, vLLM, llama.cpp)
//! or `reasoning` (OpenRouter, Ollama); usage comes in a last chunk with empty `choices` when
//! `stream_options.include_usage` is set; some servers omit `[DONE]` after the finish reason.

pub mod request;
pub mod stream;

pub use request::request_body;
pub use stream::ChunkParser;

use super::OpenAiConfig;
use crate::endpoint::Endpoint;
use switchboard_core::provider::ModelInfo;
use switchboard_core::{Provider, ProviderError, ProviderRequest, ProviderStream};

/// The kind this provider is.
const KIND: &str = "openai";

/// The Chat Completions provider.
pub struct OpenAiChat {
    endpoint: Endpoint,
}

impl std::fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiChat").field("base_url", &self.endpoint.base()).finish_non_exhaustive()
    }
}

impl OpenAiChat {
    /// A provider for `config`.
    pub fn new(config: OpenAiConfig) -> Result<Self, ProviderError> {
        Ok(Self { endpoint: Endpoint::new(KIND, &config.base_url, config.api_key)? })
    }

    /// The models the server lists (`GET /models`), sorted.
    pub async fn models(&self) -> Result<Vec<String>, ProviderError> {
        super::list_models(&self.endpoint).await
    }
}

impl Provider for OpenAiChat {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn tool_limits(&self) -> switchboard_core::ToolLimits {
        crate::kinds::ProviderKind::tool_limits(KIND)
    }

    fn list_models(&self) -> futures::future::BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(self.models())
    }

    fn list_model_infos(&self) -> futures::future::BoxFuture<'_, Result<Vec<ModelInfo>, ProviderError>> {
        Box::pin(super::list_model_infos(&self.endpoint))
    }

    fn stream(&self, mut request: ProviderRequest) -> ProviderStream {
        let payloads = crate::payload::Payloads::take(&mut request);
        let mut body = request_body(&request);
        if request::is_openai(self.endpoint.base())
            && let Some(limit) = body.as_object_mut().and_then(|b| b.remove("max_tokens"))
        {
            // OpenAI's own API wants the newer name (its reasoning models refuse the old one);
            // compatible servers know the old one best.
            body["max_completion_tokens"] = limit;
        }
        let url = self.endpoint.url("chat/completions");
        self.endpoint.stream(&url, &[], payloads.render(&body), ChunkParser::new())
    }
}
