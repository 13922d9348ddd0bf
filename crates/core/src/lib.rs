//! The engine core of Switchboard.
//!
//! This crate holds everything the tool loop needs and nothing about how it is shown or stored:
//! canonical messages ([`Message`]), the event stream a turn produces ([`ChatEvent`]), the
//! [`Provider`] and [`Tool`] traits, the tool [`ToolRegistry`], the pure tool [`policy`], and the
//! loop itself ([`Engine`]).
//!
//! The modules read bottom-up with no import circle: the vocabulary ([`types`], [`vocab`],
//! [`error`], [`event`], [`spend`]), the approval contract ([`approval`]), pure decisions ([`policy`],
//! [`catalogue`], [`names`], [`round`], [`history`], [`paging`], [`lint`], [`tokens`], [`visible`]), what the loop talks to ([`tool`], [`provider`],
//! [`registry`], [`source`]), the turn configuration ([`config`]), then the loop: the
//! [`machine`] decides and the driver ([`turn`]) acts. `tests/layers.rs` fails naming the circle
//! if an import ever points back up.
//!
//! Architecture invariant: no I/O of its own beyond what a provider or tool does when the loop calls
//! it; no knowledge of Tauri, SQLite, keychains or HTTP. Persistence and display are consumers of
//! [`ChatEvent`]s through an [`EventSink`].

// Read bottom-up: a module imports only from its own group or the groups listed before it
// (tests/layers.rs fails naming the circle otherwise).

// 1. The vocabulary: plain data (messages, tool definitions and results, errors, events, what
//    may leave after untrusted content).
pub mod egress;
pub mod error;
pub mod event;
pub mod spend;
pub mod types;
pub mod vocab;

// 2. The approval contract: how the loop asks the person about a call (and what a tool's
//    server asks of them during one).
pub mod approval;
pub mod ask;
pub mod budget;

// 3. Pure decisions over the vocabulary: which tools are offered (and how many fit a request),
//    provider-safe names, how a round is planned, how stored rows become history again, what a
//    tool definition says that it should not (the lint), and text made safe to show.
pub mod catalogue;
pub mod compaction;
pub mod history;
pub mod lint;
pub mod names;
pub mod paging;
pub mod policy;
pub mod round;
pub mod summarising;
pub mod token_memo;
pub mod tokens;
pub mod visible;

// 4. What the loop talks to: tools, providers, the registry and its sources, sinks.
pub mod coalesce;
pub mod provider;
pub mod registry;
pub mod source;
pub mod tool;

// 5. The turn configuration: what a turn starts from and runs under.
pub mod config;

// 6. The loop: the machine decides (a folder of its phases), the driver acts.
pub mod machine;
pub mod turn;

pub use approval::{ApprovalDecision, ApprovalRequest, Approver};
pub use ask::{
    ElicitationAction, ElicitationAnswer, ElicitationForm, ElicitationMode, ElicitationRequest, FieldChoice, FieldKind,
    FormField, Sampled, SamplingDecision, SamplingMessage, SamplingRequest, SamplingRole,
};
pub use budget::{Budget, BudgetChoice, BudgetKind, BudgetMeter, BudgetPause, BudgetScope, BudgetSpent, ChatBudget};
pub use catalogue::{FIND_TOOLS, ToolLimits};
pub use coalesce::Coalescing;
pub use compaction::Compaction;
pub use config::{
    ContextLimits, EngineConfig, ReportedContext, SummariserProvider, TurnInput, TurnOptions, TurnOutcome, TurnSampler,
};
pub use egress::{Egress, EgressReason, Exposure};
pub use error::{ContextOverflow, ErrorKind, ProviderError};
pub use event::{ChatEvent, CompactionReason, ContextBreakdown, EventSink, FinishReason, NoticeKind, ToolStatus};
pub use lint::{Finding, FindingKind};
pub use provider::{
    GenerationOptions, Provider, ProviderEvent, ProviderRequest, ProviderStream, ReasoningEffort, ToolChoice,
};
pub use registry::{RegistryError, ToolRegistry};
pub use source::{Catalog, CatalogError, OnChange, Source, SourceState, SourceStatus};
pub use spend::Prices;
pub use token_memo::{Memo, TextKey};
pub use tokens::{CharEstimate, TokenCounter};
pub use tool::{Redact, Sampler, Secrets, Tool, ToolContext};
pub use turn::Engine;
pub use types::{Attachment, AttachmentKind, Message, Part, ProviderState, ToolCall, Usage};
pub use visible::visible;
pub use vocab::{ApprovalPolicy, ToolDef, ToolError, ToolImage, ToolOutput, ToolSource};

/// Cancellation of a turn or a tool call (the stop button).
pub use tokio_util::sync::CancellationToken;
