//! A kind from the table ([`crate::kinds::KINDS`]) turned into its provider: the one module
//! that knows every API folder, so the folders and the table below it never import each other.

use crate::anthropic::{Anthropic, AnthropicConfig};
use crate::gemini::{Gemini, GeminiConfig};
use crate::kinds::{ProviderKind, ProviderSettings};
use crate::openai::responses::OpenAiResponses;
use crate::openai::{OpenAiChat, OpenAiConfig};
use switchboard_core::{ErrorKind, Provider, ProviderError};

impl ProviderKind {
    /// A provider of this kind for a profile.
    pub fn provider(&self, s: ProviderSettings) -> Result<Box<dyn Provider>, ProviderError> {
        let openai = |s: ProviderSettings| OpenAiConfig { base_url: s.base_url, api_key: s.api_key };
        Ok(match self.id {
            "openai" => Box::new(OpenAiChat::new(openai(s))?),
            "openai-responses" => {
                let store = s.store;
                Box::new(OpenAiResponses::new(openai(s))?.with_store(store))
            }
            "anthropic" => Box::new(Anthropic::new(AnthropicConfig { base_url: s.base_url, api_key: s.api_key })?),
            "gemini" => Box::new(Gemini::new(GeminiConfig { base_url: s.base_url, api_key: s.api_key })?),
            other => {
                return Err(ProviderError::new(
                    ErrorKind::Internal,
                    format!("The kind '{other}' is in the kind table but no provider is built for it."),
                ));
            }
        })
    }
}
