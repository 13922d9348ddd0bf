//! Model providers for Switchboard.
//!
//! Each API is a folder ([`anthropic`], [`gemini`], [`openai::chat`], [`openai::responses`]) with
//! the provider in `mod.rs`, request building in `request.rs` and stream parsing in `stream.rs`:
//! canonical requests go out in the API's wire format and its stream comes back as
//! [`ProviderEvent`](switchboard_core::ProviderEvent)s; the loop sees nothing else. Below them,
//! shared by all: [`endpoint`] (the origin check and the key-to-header rule over [`transport`]'s
//! reqwest client),
//! [`sse`] (one streamed POST read through [`event_stream`]'s guard, and the end of a body),
//! [`classify`] (HTTP failures into error kinds) and [`kinds`] (the table of APIs). Server-sent
//! events are parsed by `eventsource-client` over a reqwest transport with reconnect off, because
//! an LLM request must never be replayed behind our back.
//!
//! Architecture invariant: no knowledge of storage, secrets storage, the UI or the tool registry.
//! A key arrives as a [`SecretValue`](switchboard_core::tool::SecretValue) and leaves only as the
//! request header its kind names in [`KINDS`], and only to its endpoint's origin; no error
//! message, log line or event contains it. Adding an API is one folder, one entry in [`KINDS`],
//! one arm in `build.rs` (which turns a kind into its provider) and an encoder in the mock
//! provider, so the parser table runs it.

pub mod anthropic;
mod build;
pub mod classify;
pub mod endpoint;
pub mod event_stream;
pub mod gemini;
pub mod kinds;
pub mod models;
pub mod openai;
pub mod parts;
mod payload;
pub mod presets;
pub mod retry_hint;
pub mod sse;
pub mod transport;

/// Gemini's schema conversion under its old path.
pub use gemini::schema as gemini_schema;
pub use kinds::{Capabilities, KINDS, ProviderKind, ProviderSettings};
pub use models::{ModelCapabilities, ModelInfo, capabilities as model_capabilities};
/// The Responses API's module under its old name (`openai_responses::EventParser`, ...).
pub use openai::responses as openai_responses;
pub use openai::{OpenAiChat, OpenAiConfig};
pub use presets::{PRESETS, Preset};
