//! Canonical, provider-neutral conversation types.

use serde::{Deserialize, Serialize};

/// A tool call the model made, complete (all argument fragments assembled).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The provider's call id; every call id must get exactly one result.
    pub id: String,
    /// The tool name as the registry knows it (already mapped back from a provider-safe name).
    pub name: String,
    /// The raw argument text as the model produced it (usually JSON, but not guaranteed).
    pub arguments: String,
}

/// One message of the canonical history that every provider converts to its own format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    /// What the person sent: the text they typed, then what they attached, in order.
    User {
        /// The message text.
        text: String,
        /// Attached files (images, PDFs, text files, an MCP resource), ready to send: after
        /// the text, in the order attached. Each API writes them as its own content parts.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        parts: Vec<Part>,
    },
    /// One model response (one loop iteration): text, then the tool calls it made.
    Assistant {
        /// Visible text of this iteration.
        text: String,
        /// Tool calls of this iteration, in the order the model made them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// What the API that produced this response wants back unchanged (signed thinking,
        /// thought signatures, reasoning items, the response id to chain from); every other API
        /// and endpoint leaves it out.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        state: Option<ProviderState>,
    },
    /// The result of one tool call, sent back to the model.
    Tool {
        /// The call this answers.
        call_id: String,
        /// The tool's name (Gemini needs it on the response).
        name: String,
        /// The result text the model sees (errors included: they are data for the model).
        content: String,
        /// Whether the call failed (Anthropic marks such results with `is_error`).
        is_error: bool,
        /// Images the tool returned, for providers that take images in tool results.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<crate::vocab::ToolImage>,
    },
}

impl Message {
    /// A person's message of text only.
    pub fn user(text: impl Into<String>) -> Message {
        Message::User { text: text.into(), parts: Vec::new() }
    }

    /// An assistant message without provider state.
    pub fn assistant(text: impl Into<String>, tool_calls: Vec<ToolCall>) -> Message {
        Message::Assistant { text: text.into(), tool_calls, state: None }
    }
}

/// Provider-specific data of one response that only its own API can use, kept opaque by the loop
/// and the store: Anthropic's signed `thinking` blocks, Gemini's thought signatures, the
/// Responses API's reasoning items and response id. It is tagged with the API kind and the
/// endpoint's origin, and a provider sends it back only when both are its own: after a switch to
/// another API (or another server speaking the same one) it is dropped, never sent where it would
/// be refused.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderState {
    /// The provider kind that produced it (`anthropic`, `gemini`, `openai-responses`, ...).
    pub api: String,
    /// The origin (`scheme://host:port`) of the endpoint that produced it.
    pub origin: String,
    /// The API's own data, as its provider module wrote it.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub data: serde_json::Value,
}

impl ProviderState {
    /// The data, when it was made by `api` at `origin`.
    pub fn for_endpoint<'a>(
        state: Option<&'a ProviderState>,
        api: &str,
        origin: &str,
    ) -> Option<&'a serde_json::Value> {
        state.filter(|s| s.api == api && s.origin == origin).map(|s| &s.data)
    }
}

/// Token usage, summed over a turn's iterations.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens (reasoning included, as providers count them).
    pub completion_tokens: u64,
    /// Of the output, tokens spent on reasoning.
    pub reasoning_tokens: u64,
    /// Of the input, tokens served from the provider's prompt cache.
    pub cached_tokens: u64,
    /// Of the input, tokens written to the provider's prompt cache (Anthropic bills them apart).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<u64>"))]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Adds another iteration's usage to this one.
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.cached_tokens += other.cached_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }

    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        *self == Usage::default()
    }
}

/// Length of `text` in Unicode scalar values: the unit of every `text_offset`.
pub fn char_len(text: &str) -> usize {
    text.chars().count()
}

/// One attached file as a request carries it: the bytes an API reads (an image already fitted
/// to that API's limits) or the text a model reads. Built by the service from a stored
/// [`Attachment`] for the API a request goes to; providers only write it in their own form.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Part {
    /// An image (the same image type a tool result carries).
    Image {
        /// The file's name, as attached.
        name: String,
        /// Its bytes, base64, in a type every API takes.
        image: crate::vocab::ToolImage,
    },
    /// A PDF, for an API and model that read PDFs (the rest get a [`Part::Text`] of its text).
    Pdf {
        /// The file's name, as attached.
        name: String,
        /// The PDF's bytes, base64 (standard alphabet). Shared: a 50 MB PDF is 67 MB of base64,
        /// and each request's copy of the history holds it without copying it.
        data: std::sync::Arc<str>,
    },
    /// A text or code file, or text extracted from a file (a PDF's for a model that reads
    /// none): sent as text under its name.
    Text {
        /// The file's name, as attached (or an MCP resource's URI).
        name: String,
        /// Its media type (`text/plain`, `text/x-rust`, `application/json`, `application/pdf`).
        mime_type: String,
        /// The text.
        text: String,
        /// What the model should know about where the text came from ("text extracted from a
        /// 12-page PDF"); `None` for a text file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
}

impl Part {
    /// The file's name.
    pub fn name(&self) -> &str {
        match self {
            Part::Image { name, .. } | Part::Pdf { name, .. } | Part::Text { name, .. } => name,
        }
    }
}

/// What kind of file an attachment is, which decides how it is sent.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AttachmentKind {
    /// PNG, JPEG, GIF or WebP.
    Image,
    /// A PDF.
    Pdf,
    /// UTF-8 text: plain text, source code, Markdown, JSON, CSV.
    Text,
}

/// A file attached to a person's message, as stored and shown. The bytes live once in the data
/// directory under their SHA-256 (however many messages or branches use them); the message
/// keeps this reference.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attachment {
    /// The SHA-256 of the original bytes, lower-case hex: the content address.
    pub id: String,
    /// The file's name as attached (never a path), or a resource's URI.
    pub name: String,
    /// The media type, as sniffed from the bytes.
    pub mime_type: String,
    /// How it is sent.
    pub kind: AttachmentKind,
    /// Bytes of the original.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub size: u64,
    /// An image's width in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub width: Option<u32>,
    /// An image's height in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub height: Option<u32>,
    /// A PDF's page count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub pages: Option<u32>,
    /// Why a PDF's extracted text is not all of it ("text of pages 1–12 of 40 only: extraction
    /// stopped after 20 s"); absent when it is all of it (or the file has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub text_note: Option<String>,
}
