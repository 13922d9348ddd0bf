//! Switchboard's SQLite persistence: conversations, messages with their tool calls and results,
//! attached files (content-addressed blobs beside the database, see `blobs`), settings and
//! provider profiles.
//!
//! Architecture invariant: this crate knows SQLite and `switchboard-core`'s types, nothing about
//! Tauri, HTTP or any provider's wire format. Secrets never reach it.
//!
//! A turn is stored in three steps: [`Store::begin_turn`] creates the rows before the engine
//! runs, a [`Recorder`] (an [`EventSink`](switchboard_core::EventSink)) writes the turn's events
//! durably as they happen, and [`Store::history`] rebuilds the provider history for the next turn
//! from those rows, so a reloaded conversation continues exactly as a live one would.

mod blobs;
mod data_dir;
mod error;
mod fts;
mod model;
mod recorder;
mod schema;
mod store;

pub use blobs::{ATTACHMENTS_DIR, sha256_hex};
pub use data_dir::{DATA_DIR_ENV, DB_FILE, default_data_dir, resolve_data_dir};
pub use error::{Error, Result};
pub use fts::{MATCH_END, MATCH_START, QueryError, register as register_sql_functions};
pub use model::{
    ConversationSummary, MessagePage, MessageStatus, NestedEvent, ProfileOptions, ProviderProfile, Question, Role,
    StoredError, StoredMessage, StoredNotice, StoredToolCall, StoredToolResult, ToolCallStatus, TurnRows,
};
pub use recorder::{CHECKPOINT_INTERVAL, Recorder};
pub use schema::{MIGRATIONS, SCHEMA_VERSION};
pub use store::{ATTACHMENT_GRACE, MAX_ATTACHMENTS_PER_MESSAGE, NAME_MAX_BYTES, NewAttachment, THUMBNAIL_MAX_BYTES};
pub use store::{AttachmentRecord, MessageAttachmentRecord};
pub use store::{
    ChatGrant, ChatSetup, ConversationRecord, ErrorRecord, ImportOutcome, MAX_CHAT_TOOLSETS, MAX_SETUP_NAME_CHARS,
    MessageRecord, NewCompaction, RefusedRecord, SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, SearchHit, SearchHitKind,
    Store, StoredCompaction, StoredContext, SummariserChoice, ToolCallRecord, ToolResultRecord, TurnHistory,
    check_record, title_from,
};
pub use store::{
    ConversationUsage, MessageSpend, MessageUsage, RequestUsage, ResultResend, RunUsage, UsageGroup, UsageGrouping,
    UsageQuery, UsageReport, UsageTotals,
};
