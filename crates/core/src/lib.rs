//! The engine core of Switchboard.
//!
//! This crate holds everything the tool loop needs and nothing about how it is shown or stored:
//! canonical messages ([`Message`]), the event stream a turn produces ([`ChatEvent`]), the
//! [`Provider`] and [`Tool`] traits, the tool [`ToolRegistry`], the pure tool [`policy`], and the
//! loop itself ([`Engine`]).
//!
//! Architecture invariant: no I/O of its own beyond what a provider or tool does when the loop calls
//! it; no knowledge of Tauri, SQLite, keychains or HTTP. Persistence and display are consumers of
//! [`ChatEvent`]s through an [`EventSink`].

pub mod approval;
pub mod coalesce;
pub mod config;
pub mod error;
pub mod event;
pub mod history;
pub mod machine;
pub mod names;
pub mod policy;
pub mod provider;
pub mod registry;
pub mod round;
pub mod source;
pub mod tool;
pub mod turn;
pub mod types;
pub mod vocab;

pub use approval::{ApprovalDecision, ApprovalRequest, Approver};
pub use coalesce::Coalescing;
pub use config::{EngineConfig, TurnInput, TurnOptions, TurnOutcome};
pub use error::{ErrorKind, ProviderError};
pub use event::{ChatEvent, EventSink, FinishReason, NoticeKind, ToolStatus};
pub use provider::{
    GenerationOptions, Provider, ProviderEvent, ProviderRequest, ProviderStream, ReasoningEffort, ToolChoice,
};
pub use registry::{RegistryError, ToolRegistry};
pub use source::{Catalog, CatalogError, OnChange, Source, SourceState, SourceStatus};
pub use tool::{Redact, Secrets, Tool, ToolContext};
pub use turn::Engine;
pub use types::{Message, ProviderState, ToolCall, Usage};
pub use vocab::{ApprovalPolicy, ToolDef, ToolError, ToolImage, ToolOutput, ToolSource};

/// Cancellation of a turn or a tool call (the stop button).
pub use tokio_util::sync::CancellationToken;
