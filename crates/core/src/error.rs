//! Error classification shared by providers, the loop and every shell.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What went wrong, in the terms a person and the retry logic care about.
///
/// The same kinds travel in the `error` [`ChatEvent`](crate::ChatEvent), the CLI's stderr and the
/// desktop app's IPC error, so the UI can tell a missing key from a dead server.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ErrorKind {
    /// The key was rejected (401/403) or is missing.
    Auth,
    /// Too many requests (429); may carry a retry delay.
    RateLimited,
    /// The provider says it is overloaded (529, 503, "overloaded").
    Overloaded,
    /// The conversation no longer fits the model's context window.
    ContextLength,
    /// The provider rejected the request as malformed (400/422).
    BadRequest,
    /// The model or endpoint does not exist (404).
    NotFound,
    /// The provider failed (5xx).
    Server,
    /// The connection failed or was cut.
    Network,
    /// No response, or the stream went silent for longer than the idle timeout.
    Timeout,
    /// The person stopped the turn.
    Cancelled,
    /// The provider sent something that is not the protocol (malformed chunk, HTML page).
    Protocol,
    /// Local configuration is missing or wrong (unknown provider profile, bad settings).
    Config,
    /// Local storage failed (database unreadable, disk full, newer schema).
    Storage,
    /// Anything else.
    Internal,
}

impl ErrorKind {
    /// Every kind, in declaration order: the UI's list of kinds is generated from this.
    pub const ALL: &'static [ErrorKind] = &[
        ErrorKind::Auth,
        ErrorKind::RateLimited,
        ErrorKind::Overloaded,
        ErrorKind::ContextLength,
        ErrorKind::BadRequest,
        ErrorKind::NotFound,
        ErrorKind::Server,
        ErrorKind::Network,
        ErrorKind::Timeout,
        ErrorKind::Cancelled,
        ErrorKind::Protocol,
        ErrorKind::Config,
        ErrorKind::Storage,
        ErrorKind::Internal,
    ];

    /// Whether a request that failed this way may be sent again (only ever before any output).
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorKind::RateLimited
                | ErrorKind::Overloaded
                | ErrorKind::Server
                | ErrorKind::Network
                | ErrorKind::Timeout
        )
    }

    /// The camelCase name used on the wire and on the CLI's stderr.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Auth => "auth",
            ErrorKind::RateLimited => "rateLimited",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::ContextLength => "contextLength",
            ErrorKind::BadRequest => "badRequest",
            ErrorKind::NotFound => "notFound",
            ErrorKind::Server => "server",
            ErrorKind::Network => "network",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Config => "config",
            ErrorKind::Storage => "storage",
            ErrorKind::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A classified provider failure. The message is meant for a person and never contains a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    /// The classification the loop and the UI act on.
    pub kind: ErrorKind,
    /// A specific, actionable message.
    pub message: String,
    /// For rate limits: how long the provider asked us to wait.
    pub retry_after: Option<Duration>,
    /// The HTTP status, when there was one.
    pub status: Option<u16>,
    /// The API refused the request because the model takes no tools ("does not support tools"):
    /// the loop asks again without them.
    pub tools_unsupported: bool,
    /// The technical detail behind the message (a transport error chain), for "Details".
    pub detail: Option<String>,
    /// For a context length error: the numbers the provider gave, when its words have them.
    pub overflow: Option<ContextOverflow>,
}

/// What a provider's "too long" error says did not fit: the prompt as it counted it and the
/// model's window. Each is `None` when its message does not say (the Responses API says neither).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContextOverflow {
    /// The prompt's tokens, as the provider counted them.
    pub prompt_tokens: Option<u64>,
    /// The model's context window in tokens.
    pub window: Option<u64>,
}

impl ProviderError {
    /// An error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            retry_after: None,
            status: None,
            tools_unsupported: false,
            detail: None,
            overflow: None,
        }
    }

    /// Sets what a context length error says did not fit.
    pub fn with_overflow(mut self, overflow: Option<ContextOverflow>) -> Self {
        self.overflow = overflow;
        self
    }

    /// Sets the HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Sets the provider's requested retry delay.
    pub fn with_retry_after(mut self, delay: Option<Duration>) -> Self {
        self.retry_after = delay;
        self
    }

    /// Sets the technical detail shown behind "Details".
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Marks a refusal because the model takes no tools.
    pub fn with_tools_unsupported(mut self) -> Self {
        self.tools_unsupported = true;
        self
    }

    /// Whether the request may be retried (before any output only).
    pub fn is_retryable(&self) -> bool {
        self.kind.is_retryable()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_kind_once_in_declaration_order() {
        // serde's derive knows every variant and names them all, in order, when it refuses an
        // unknown one; that list is independent of `ALL` and of `as_str`.
        let e = serde_json::from_str::<ErrorKind>("\"-\"").unwrap_err().to_string();
        let expected = e.split("expected one of ").nth(1).unwrap_or_else(|| panic!("{e}"));
        let declared: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
        let listed: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(listed, declared);
        for k in ErrorKind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
    }
}
