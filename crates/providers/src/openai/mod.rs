//! OpenAI's two APIs, Chat Completions ([`chat`]) and Responses ([`responses`]), and what they
//! share: the endpoint configuration ([`OpenAiConfig`]) and the model listing (`GET /models`).
//!
//! `openai::request_body`, `openai::ChunkParser` and `openai::OpenAiChat` name the Chat API's
//! pieces, as they did when this module was Chat alone.

pub mod chat;
mod models;
pub mod responses;

pub use chat::{ChunkParser, OpenAiChat, request_body};
pub(crate) use models::{list_model_infos, list_models};

use switchboard_core::tool::SecretValue;

/// Configuration of one OpenAI-compatible endpoint.
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// Base URL, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Bearer key, if the server needs one.
    pub api_key: Option<SecretValue>,
}
