//! Model providers for Switchboard.
//!
//! Each API gets one module that converts canonical requests into its wire format and its stream
//! back into [`ProviderEvent`](switchboard_core::ProviderEvent)s; the loop sees nothing else.
//! HTTP is reqwest; server-sent events are parsed by `eventsource-client` running over a reqwest
//! transport with reconnect off, because an LLM request must never be replayed behind our back.
//!
//! Architecture invariant: no knowledge of storage, secrets storage, the UI or the tool registry.
//! A key arrives as a [`SecretValue`](switchboard_core::tool::SecretValue) and leaves only as a
//! request header; no error message, log line or event contains it.

pub mod classify;
pub mod http_client;
pub mod openai;
pub mod sse;

pub use openai::{OpenAiChat, OpenAiConfig};

use switchboard_core::tool::SecretValue;
use switchboard_core::{ErrorKind, Provider, ProviderError};

/// The provider APIs Switchboard speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProviderKind {
    /// OpenAI Chat Completions, and every server that speaks it (Ollama, LM Studio, vLLM,
    /// llama.cpp, OpenRouter).
    Openai,
}

impl ProviderKind {
    /// Parses a kind name as typed on the command line or stored in the database.
    pub fn parse(s: &str) -> Result<Self, ProviderError> {
        match s {
            "openai" | "openai-compatible" | "openai_compatible" => Ok(ProviderKind::Openai),
            other => Err(ProviderError::new(
                ErrorKind::Config,
                format!("Unknown provider kind '{other}'. Supported: openai (also for OpenAI-compatible servers)."),
            )),
        }
    }

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
        }
    }

    /// The environment variable this kind's key is usually in.
    pub fn usual_key_env(self) -> &'static str {
        match self {
            ProviderKind::Openai => "OPENAI_API_KEY",
        }
    }

    /// The base URL used when a profile gives none.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::Openai => "https://api.openai.com/v1",
        }
    }
}

/// Everything needed to build a provider for one profile.
#[derive(Clone, Debug)]
pub struct ProviderSettings {
    /// Which API.
    pub kind: ProviderKind,
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// The key, if the profile has one (local servers often need none).
    pub api_key: Option<SecretValue>,
}

/// Builds the provider for a profile.
pub fn build(settings: ProviderSettings) -> Result<Box<dyn Provider>, ProviderError> {
    match settings.kind {
        ProviderKind::Openai => {
            Ok(Box::new(OpenAiChat::new(OpenAiConfig { base_url: settings.base_url, api_key: settings.api_key })?))
        }
    }
}
