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

pub mod anthropic;
pub mod classify;
pub mod endpoint;
pub mod event_stream;
pub mod gemini;
pub use gemini::schema as gemini_schema;
pub mod kinds;
pub mod models;
pub mod openai;
pub mod presets;
pub mod retry_hint;
pub mod sse;

pub use kinds::{Capabilities, KINDS, ProviderKind, ProviderSettings};
pub use models::{ModelCapabilities, ModelInfo, capabilities as model_capabilities};
pub use openai::responses as openai_responses;
pub use openai::{OpenAiChat, OpenAiConfig};
pub use presets::{PRESETS, Preset};
