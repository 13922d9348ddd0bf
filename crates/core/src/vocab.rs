//! The plain vocabulary of tools: what a tool is ([`ToolDef`], [`ToolSource`], [`ApprovalPolicy`])
//! and what one call of it returns ([`ToolOutput`], [`ToolImage`], [`ToolError`]).
//!
//! Invariant: data only (serde, no runtime, no other module of this crate), so every layer above
//! (messages, events, the approval contract, the loop) can speak it without importing the loop.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Where a tool comes from. Shown on tool cards and used in the registry's error messages.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ToolSource {
    /// Shipped with the app.
    Builtin,
    /// A tool of an MCP server.
    Mcp {
        /// The server's configured name.
        server: String,
    },
    /// An HTTP API tool from config.
    Http,
    /// An operation of an OpenAPI document.
    OpenApi {
        /// The document's configured name.
        document: String,
    },
    /// A local command the person configured (always behind approval by default).
    Command,
    /// Another agent exposed as a tool.
    Agent,
    /// The model called a name no source provides.
    Unknown,
}

impl std::fmt::Display for ToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolSource::Builtin => f.write_str("built-in"),
            ToolSource::Mcp { server } => write!(f, "MCP server '{server}'"),
            ToolSource::Http => f.write_str("HTTP tool"),
            ToolSource::OpenApi { document } => write!(f, "OpenAPI '{document}'"),
            ToolSource::Command => f.write_str("command tool"),
            ToolSource::Agent => f.write_str("agent"),
            ToolSource::Unknown => f.write_str("unknown"),
        }
    }
}

/// Whether a call may run without asking the person.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalPolicy {
    /// Runs without asking.
    #[default]
    Auto,
    /// Pauses the loop until the person approves or denies.
    Ask,
    /// Never runs; the model is told it was denied.
    Deny,
}

impl ApprovalPolicy {
    /// The settings name.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Auto => "auto",
            ApprovalPolicy::Ask => "ask",
            ApprovalPolicy::Deny => "deny",
        }
    }

    /// Parses the settings name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(ApprovalPolicy::Auto),
            "ask" => Some(ApprovalPolicy::Ask),
            "deny" => Some(ApprovalPolicy::Deny),
            _ => None,
        }
    }
}

/// Everything the policy, the UI and the model need to know about a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    /// Unique registry name (`server__tool` for MCP, `agent__Name` for agents).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
    /// Where it comes from.
    pub source: ToolSource,
    /// Added to the system prompt in iterations where the tool is offered.
    pub prompt: Option<String>,
    /// Offered only when forced, and then alone.
    pub exclusive: bool,
    /// Must be called alone; when it runs its output becomes the rest of the answer.
    pub takes_control: bool,
    /// Default approval policy (settings may override it).
    pub approval: ApprovalPolicy,
    /// What a dry run returns instead of running the tool.
    pub example_output: Option<String>,
    /// Overrides the loop's per-call timeout.
    pub timeout: Option<Duration>,
}

impl ToolDef {
    /// A definition with defaults: built-in, auto-approved, no prompt, not exclusive.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: serde_json::Value) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters,
            source: ToolSource::Builtin,
            prompt: None,
            exclusive: false,
            takes_control: false,
            approval: ApprovalPolicy::Auto,
            example_output: None,
            timeout: None,
        }
    }
}

/// An image a tool returned: shown on its card, and given to the model where the provider
/// accepts images in tool results (the text says it is there either way).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolImage {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// The bytes, base64 (standard alphabet).
    pub data: String,
}

impl ToolImage {
    /// The media types accepted (what every provider and the webview can show; no SVG).
    pub const TYPES: [&'static str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
    /// The largest image accepted, in base64 characters (about 3.75 MB decoded).
    pub const MAX_DATA: usize = 5 * 1024 * 1024;
    /// The most images one result keeps.
    pub const MAX_PER_RESULT: usize = 4;

    /// An image, if it is of an accepted type and size and its data is plain base64; `None`
    /// otherwise (the caller says in the text that it was left out).
    pub fn checked(mime_type: &str, data: &str) -> Option<ToolImage> {
        let mime_type = mime_type.trim().to_ascii_lowercase();
        let base64 = !data.is_empty()
            && data.len() <= Self::MAX_DATA
            && data.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
        (Self::TYPES.contains(&mime_type.as_str()) && base64).then(|| ToolImage { mime_type, data: data.to_owned() })
    }
}

/// A successful result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// What the model sees.
    pub text: String,
    /// Images, at most [`ToolImage::MAX_PER_RESULT`].
    pub images: Vec<ToolImage>,
    /// Set when this result carries untrusted content although the tool is not always
    /// untrusted (a sub-agent whose turn read some): the source it came from.
    pub untrusted: Option<String>,
}

impl ToolOutput {
    /// A text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: text.into(), images: Vec::new(), untrusted: None }
    }

    /// With these images (beyond [`ToolImage::MAX_PER_RESULT`] they are left out).
    pub fn with_images(mut self, mut images: Vec<ToolImage>) -> Self {
        images.truncate(ToolImage::MAX_PER_RESULT);
        self.images = images;
        self
    }

    /// Marked as carrying untrusted content read from `source`.
    pub fn untrusted(mut self, source: impl Into<String>) -> Self {
        self.untrusted = Some(source.into());
        self
    }
}

/// How a tool call failed. Every variant becomes tool-result text the model can act on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments are valid JSON Schema-wise but make no sense (a bad time zone name).
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// A key the tool needs is not set; the message says where in Settings to add it.
    #[error("{0}")]
    MissingSecret(String),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_base64_images_of_the_usual_types_and_sizes_are_kept() {
        assert!(ToolImage::checked("image/png", "iVBORw0KGgo=").is_some());
        assert_eq!(ToolImage::checked(" Image/JPEG ", "AAAA").unwrap().mime_type, "image/jpeg");
        assert!(ToolImage::checked("image/svg+xml", "AAAA").is_none(), "no SVG");
        assert!(ToolImage::checked("image/png", "").is_none());
        assert!(ToolImage::checked("image/png", "AA\"><script>").is_none());
        assert!(ToolImage::checked("image/png", &"A".repeat(ToolImage::MAX_DATA + 1)).is_none());
        let five = vec![ToolImage::checked("image/png", "AAAA").unwrap(); 5];
        assert_eq!(ToolOutput::text("x").with_images(five).images.len(), ToolImage::MAX_PER_RESULT);
    }
}
