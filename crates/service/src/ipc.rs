//! The types shells exchange with their UI. TypeScript declarations are generated from these (and
//! from the core and store types they contain) into `ui/src/lib/ipc/bindings.ts`; never hand-write
//! them on the UI side.

use serde::{Deserialize, Serialize};
use switchboard_core::{ApprovalPolicy, ErrorKind, GenerationOptions, ToolSource};

/// Stored types the shells pass through unchanged.
pub use switchboard_store::{
    ChatGrant, ChatSetup, ConversationSummary, MATCH_END, MATCH_START, MessagePage, ProfileOptions, ProviderProfile,
    Role, SearchHit, SearchHitKind, StoredCompaction, StoredMessage, SummariserChoice,
};
/// What requests used and cost (details, totals, reports).
pub use switchboard_store::{
    ConversationUsage, MessageSpend, MessageUsage, RequestUsage, ResultResend, RunUsage, UsageGroup, UsageGrouping,
    UsageQuery, UsageReport, UsageTotals,
};

/// A message to send.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SendRequest {
    /// The conversation to continue, or `null` for a new one.
    pub conversation_id: Option<String>,
    /// What the person typed.
    pub text: String,
    /// Provider profile (default: the default profile).
    pub provider: Option<String>,
    /// Model (default: the profile's model).
    pub model: Option<String>,
    /// Tools forced for the first iteration.
    pub forced: Vec<String>,
    /// `false`: no tools this turn.
    pub use_tools: bool,
    /// Tools return their example output instead of running.
    pub dry_run: bool,
    /// Tools to disable for this chat from this turn on (remembered with the chat). A new chat
    /// has no id to disable tools on before its first turn; this is how it gets them.
    pub disable_for_chat: Vec<String>,
    /// System prompt for this turn.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub system_prompt: Option<String>,
    /// Overrides the settings' most model calls with tools for this turn.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_iterations: Option<u32>,
    /// This chat's generation settings; each one set wins over the profile's. Kept with the
    /// chat; left out in an existing chat: the chat's.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub generation: Option<GenerationOptions>,
    /// The agent a new chat runs (a chat keeps the one it started with).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub agent: Option<String>,
    /// Toolsets switched on from this turn: its tools are theirs (with the agent's, if any);
    /// kept with the chat. Left out in an existing chat: the chat's (its setup).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub toolsets: Option<Vec<String>>,
    /// This turn's budget (steps, time, cost), over the chat's limit by limit.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub budget: Option<switchboard_core::Budget>,
    /// The files attached to the message, in order: ids of attachments the service stored
    /// (`attach_file`, an upload). Only ids: what they are comes from the store, never from the
    /// page. An id the store does not have (any more) refuses the message, storing nothing.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<Vec<String>>"))]
    pub attachments: Vec<String>,
}

/// An edited question: a new version of the person's message, answered on a new branch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct EditRequest {
    /// The conversation.
    pub conversation_id: String,
    /// The person's message to edit.
    pub message_id: String,
    /// The new text.
    pub text: String,
    /// The files the new version carries (ids, in order); left out: the ones the edited message
    /// has. An empty list removes them.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub attachments: Option<Vec<String>>,
    /// The choices to ask with; left out: the ones the message was asked with.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub choices: Option<TurnChoices>,
}

impl SendRequest {
    /// A plain message with tools on.
    pub fn text(conversation_id: Option<String>, text: impl Into<String>) -> Self {
        Self {
            conversation_id,
            text: text.into(),
            provider: None,
            model: None,
            forced: Vec::new(),
            use_tools: true,
            dry_run: false,
            disable_for_chat: Vec::new(),
            system_prompt: None,
            max_iterations: None,
            generation: None,
            agent: None,
            toolsets: None,
            budget: None,
            attachments: Vec::new(),
        }
    }

    /// The choices this message is sent with.
    pub fn choices(&self) -> TurnChoices {
        TurnChoices {
            provider: self.provider.clone(),
            model: self.model.clone(),
            forced: self.forced.clone(),
            use_tools: self.use_tools,
            dry_run: self.dry_run,
            system_prompt: self.system_prompt.clone(),
            max_iterations: self.max_iterations,
            generation: self.generation,
            sent_instructions: None,
            agent: self.agent.clone(),
            toolsets: self.toolsets.clone().unwrap_or_default(),
            budget: self.budget,
        }
    }
}

/// The person's choices for one turn: which profile and model, which tools. Stored with the
/// question (provider and model resolved), so asking it again runs the same way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct TurnChoices {
    /// Provider profile (default: the default profile).
    pub provider: Option<String>,
    /// Model (default: the profile's model).
    pub model: Option<String>,
    /// Tools forced for the first iteration.
    pub forced: Vec<String>,
    /// `false`: no tools this turn.
    pub use_tools: bool,
    /// Tools return their example output instead of running.
    pub dry_run: bool,
    /// System prompt.
    pub system_prompt: Option<String>,
    /// Most model calls with tools before a final answer (default: the settings').
    pub max_iterations: Option<u32>,
    /// This chat's generation settings over the profile's.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub generation: Option<GenerationOptions>,
    /// What the model was given as its system prompt (the custom instructions, the chat's own
    /// and this turn's), kept with the question for the record. Composed again when asked again.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub sent_instructions: Option<String>,
    /// The agent the chat runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub agent: Option<String>,
    /// Toolsets switched on for the turn.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<Vec<String>>"))]
    pub toolsets: Vec<String>,
    /// This turn's budget, over the chat's limit by limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub budget: Option<switchboard_core::Budget>,
}

/// The instructions of one chat, as its Instructions dialog shows them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ChatInstructions {
    /// The custom instructions every chat gets (Settings → Chats).
    pub custom: String,
    /// This chat's own (empty: none).
    pub chat: String,
    /// What its last question was sent with, if it was recorded.
    pub last_sent: Option<String>,
}

impl Default for TurnChoices {
    fn default() -> Self {
        Self {
            provider: None,
            model: None,
            forced: Vec::new(),
            use_tools: true,
            dry_run: false,
            system_prompt: None,
            max_iterations: None,
            generation: None,
            sent_instructions: None,
            agent: None,
            toolsets: Vec::new(),
            budget: None,
        }
    }
}

/// The rows a turn created; the same ids arrive in its `started` event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct TurnStarted {
    /// Conversation id (new or existing).
    pub conversation_id: String,
    /// The assistant message being produced.
    pub message_id: String,
    /// The person's message.
    pub user_message_id: String,
}

/// A tool as the tools tray shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// Registry name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Where it comes from.
    pub source: ToolSource,
    /// Enabled in Settings (the person as administrator of their own app).
    pub enabled: bool,
    /// Disabled for the conversation asked about.
    pub disabled_for_chat: bool,
    /// Effective approval policy.
    pub approval: ApprovalPolicy,
    /// Offered only when forced, and then alone.
    pub exclusive: bool,
    /// Takes over the answer when it runs.
    pub takes_control: bool,
    /// JSON Schema of the arguments.
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub parameters: serde_json::Value,
    /// What the tool-definition lint found in its description and schema: shown as a warning,
    /// never blocking by itself.
    pub findings: Vec<switchboard_core::Finding>,
}

/// A conversation opened for display: everything needed to draw it as it looked live.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConversationView {
    /// Its summary.
    pub conversation: ConversationSummary,
    /// Its last messages (at most `OPEN_PAGE`), oldest first, with tool calls and results.
    pub messages: Vec<StoredMessage>,
    /// How many messages come before these (read with `older_messages`).
    pub earlier: u32,
    /// Tools disabled for this conversation.
    pub disabled_tools: Vec<String>,
    /// The agent it runs, if any.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Its setup: toolsets switched on, its parameters, the profile and model it last used
    /// (always there from the service; optional for views made without a store).
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<ChatSetup>,
}

/// What to change in a chat's setup; what is left out stays.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct ChatSetupChange {
    /// The toolsets switched on from now on (empty: every tool, or the agent's).
    #[cfg_attr(feature = "ts", ts(optional))]
    pub toolsets: Option<Vec<String>>,
    /// The chat's parameters from now on (none set: the profile's).
    #[cfg_attr(feature = "ts", ts(optional))]
    pub generation: Option<GenerationOptions>,
    /// The profile from now on, with `model` (left out: the profile's model).
    #[cfg_attr(feature = "ts", ts(optional))]
    pub provider: Option<String>,
    /// The model from now on.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub model: Option<String>,
    /// The chat's budget from now on (every limit empty: none).
    #[cfg_attr(feature = "ts", ts(optional))]
    pub budget: Option<switchboard_core::Budget>,
    /// Who writes the chat's summaries from now on.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub summariser: Option<SummariserChange>,
}

/// Who writes a chat's summaries when it is compacted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum SummariserChange {
    /// The chat's own model.
    Chat,
    /// A profile and model picked for it.
    Pick {
        /// The provider profile.
        provider: String,
        /// The model on it.
        model: String,
    },
}

/// A provider profile as pickers show it (never with its key).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProviderInfo {
    /// Profile name.
    pub name: String,
    /// API kind.
    pub kind: String,
    /// Base URL.
    pub base_url: String,
    /// Default model.
    pub model: Option<String>,
    /// Whether it is the default profile.
    pub is_default: bool,
    /// Generation settings and capability overrides.
    pub options: switchboard_store::ProfileOptions,
}

/// What "Test connection" found, step by step, and one line that says it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ConnectionReport {
    /// Everything needed for a turn works.
    pub ok: bool,
    /// One line for a person: what works, or what is wrong and what to do.
    pub summary: String,
    /// Whether the key was accepted; `None` when the server was not reached.
    pub key_accepted: Option<bool>,
    /// How many models the API listed; `None` when it lists none or the listing failed.
    pub models: Option<u32>,
    /// Whether the profile's model is in the listing; `None` when unknown.
    pub model_listed: Option<bool>,
    /// Whether the model took a tool definition in a tiny request; `None` when not tried.
    pub tools: Option<bool>,
    /// The failure's classification, when something failed.
    pub error_kind: Option<switchboard_core::ErrorKind>,
    /// The failure's full message, for "Details".
    pub detail: Option<String>,
}

/// The person's answer to an approval request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ApprovalChoice {
    /// Run this call.
    Once,
    /// Run it and don't ask again in this chat.
    Chat,
    /// Run it and never ask again.
    Always,
    /// Don't run it.
    Deny,
}

/// The one error type commands return to the UI: a `kind` to act on, a message to show.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
#[error("{message}")]
pub struct IpcError {
    /// Classification.
    pub kind: ErrorKind,
    /// What to tell the person. Never contains a secret.
    pub message: String,
    /// Whether trying again may work.
    pub retryable: bool,
}

impl From<crate::Error> for IpcError {
    fn from(e: crate::Error) -> Self {
        IpcError { kind: e.kind, retryable: e.kind.is_retryable(), message: e.message }
    }
}

/// Where keys are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum KeyMode {
    /// The OS keychain (environment variables still work as a fallback).
    Keychain,
    /// Environment variables only (`SWITCHBOARD_KEY_<NAME>`), read-only.
    Environment,
    /// Kept in memory until the app quits (and environment variables).
    Memory,
}

/// The key store in use, and why the keychain is not, if it is not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct KeychainStatus {
    /// Where keys go now.
    pub mode: KeyMode,
    /// Why the keychain cannot be used (names the cause and the choices), if it cannot.
    pub problem: Option<String>,
}

/// What a key is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum KeyPurpose {
    /// A provider profile's API key.
    Provider,
    /// A tool's credential (web search).
    Tool,
}

/// One key as Settings shows it: set or not, its last four characters. Never the key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct KeyInfo {
    /// Key name (profile name, `tavily`, `exa`).
    pub name: String,
    /// What to call it on screen.
    pub label: String,
    /// Provider or tool.
    pub purpose: KeyPurpose,
    /// Whether a value is set anywhere.
    pub is_set: bool,
    /// Last four characters (only for keys of 8 or more).
    pub last4: Option<String>,
    /// Which store holds it.
    pub source: String,
    /// The environment variable that also provides it.
    pub env_var: String,
}

/// Where the data lives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct DataInfo {
    /// The data directory.
    pub data_dir: Option<String>,
    /// The SQLite database file.
    pub database: Option<String>,
}

/// What the native attachment picker gave: the files attached, in the order chosen, and each one
/// that could not be attached with the reason (too big, a type that cannot be sent, damaged…).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PickedAttachments {
    /// The attached files.
    pub attached: Vec<switchboard_core::Attachment>,
    /// The files refused, each with why.
    pub refused: Vec<AttachRefusal>,
}

/// A file the picker chose that could not be attached.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AttachRefusal {
    /// The file's name (never its path).
    pub name: String,
    /// Why, in the service's words.
    pub message: String,
}
