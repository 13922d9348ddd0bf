//! OpenAI's two APIs, Chat Completions ([`chat`]) and Responses ([`responses`]), and what they
//! share: the endpoint configuration ([`OpenAiConfig`]) and the model listing (`GET /models`).
//!
//! `openai::request_body`, `openai::ChunkParser` and `openai::OpenAiChat` name the Chat API's
//! pieces, as they did when this module was Chat alone.

pub mod chat;
mod models;
pub mod responses;

pub use chat::{ChunkParser, OpenAiChat, request_body};

/// The longest part of a refusal repeated in its notice (the whole of it is the answer).
const REFUSAL_NOTICE_CHARS: usize = 300;

/// How an answer that was a refusal ends: filtered, with a notice that quotes it. OpenAI streams
/// a refusal in its own field (`delta.refusal`, `response.refusal.delta`), not as text; the
/// parsers give it as the answer's text (so it is shown, and stored like any answer) and end the
/// response with this, so the person sees it was a refusal and not an answer.
pub(crate) fn refused(refusal: &str) -> switchboard_core::provider::StopReason {
    let refusal = refusal.trim();
    let mut quoted: String = refusal.chars().take(REFUSAL_NOTICE_CHARS).collect();
    if quoted.len() < refusal.len() {
        quoted.push('…');
    }
    switchboard_core::provider::StopReason::Filtered(format!("The model refused: {quoted}"))
}
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
