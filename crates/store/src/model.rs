//! What the store hands out: plain data, serialisable (camelCase) so the CLI can print it as JSON
//! and the desktop shell can send it to the UI unchanged.

use serde::{Deserialize, Serialize};
use switchboard_core::{ChatEvent, ErrorKind, FinishReason, NoticeKind, ToolSource, ToolStatus, Usage};

/// The rows [`Store::begin_turn`](crate::Store::begin_turn) created: what `TurnInput` needs.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnRows {
    /// The conversation (created if the turn started a new one).
    pub conversation_id: String,
    /// The person's message.
    pub user_message_id: String,
    /// The assistant message, `streaming` until its recorder sees `done`.
    pub message_id: String,
}

/// A question of a conversation, as needed to ask it again (regenerate, edit): what it said, the
/// choices it was asked with, and who answered it last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    /// The person's message.
    pub id: String,
    /// What the person asked.
    pub text: String,
    /// The choices it was asked with, as stored (`None` for rows older than that column).
    pub turn_options: Option<String>,
    /// The profile that answered, if an answer was started.
    pub provider: Option<String>,
    /// The model that answered.
    pub model: Option<String>,
    /// The files attached to it, in order (asking it again sends them again).
    pub attachments: Vec<switchboard_core::Attachment>,
}

/// One line of the conversation list.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    /// Conversation id.
    pub id: String,
    /// Title (the first line of the first message unless renamed).
    pub title: String,
    /// Unix millis.
    pub created_at: i64,
    /// Unix millis of the last turn started (renaming does not count).
    pub updated_at: i64,
    /// Messages of both roles.
    pub message_count: u64,
    /// Kept at the top of the list.
    pub pinned: bool,
    /// Kept out of the main list (still searchable and openable).
    pub archived: bool,
}

/// Who wrote a message.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Role {
    /// The person.
    User,
    /// The model (one row per turn, all iterations included).
    Assistant,
}

impl Role {
    /// The database name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }

    /// Parses the database name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "user" => Some(Role::User),
            "assistant" => Some(Role::Assistant),
            _ => None,
        }
    }
}

/// Where a message is in its life.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MessageStatus {
    /// A turn is producing it right now.
    Streaming,
    /// The turn ended normally.
    Complete,
    /// The person stopped the turn.
    Cancelled,
    /// The turn failed; see the message's error.
    Error,
    /// The app ended while it was streaming; the text up to the last checkpoint is kept.
    Interrupted,
}

impl MessageStatus {
    /// The database name.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageStatus::Streaming => "streaming",
            MessageStatus::Complete => "complete",
            MessageStatus::Cancelled => "cancelled",
            MessageStatus::Error => "error",
            MessageStatus::Interrupted => "interrupted",
        }
    }

    /// Parses the database name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "streaming" => MessageStatus::Streaming,
            "complete" => MessageStatus::Complete,
            "cancelled" => MessageStatus::Cancelled,
            "error" => MessageStatus::Error,
            "interrupted" => MessageStatus::Interrupted,
            _ => return None,
        })
    }

    /// The status a turn ending for `reason` leaves its message in.
    pub fn from_finish(reason: FinishReason) -> Self {
        match reason {
            FinishReason::Cancelled => MessageStatus::Cancelled,
            FinishReason::Error => MessageStatus::Error,
            _ => MessageStatus::Complete,
        }
    }
}

/// Where a tool call is in its life: the two in-flight states plus how it ended.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolCallStatus {
    /// The model made the call; it has not started (validation, approval, queue).
    Pending,
    /// It is running.
    Running,
    /// See [`ToolStatus::Ok`].
    Ok,
    /// See [`ToolStatus::Error`].
    Error,
    /// See [`ToolStatus::Timeout`].
    Timeout,
    /// See [`ToolStatus::Denied`].
    Denied,
    /// See [`ToolStatus::Skipped`].
    Skipped,
    /// See [`ToolStatus::Cancelled`].
    Cancelled,
}

impl ToolCallStatus {
    /// The database name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallStatus::Pending => "pending",
            ToolCallStatus::Running => "running",
            ToolCallStatus::Ok => "ok",
            ToolCallStatus::Error => "error",
            ToolCallStatus::Timeout => "timeout",
            ToolCallStatus::Denied => "denied",
            ToolCallStatus::Skipped => "skipped",
            ToolCallStatus::Cancelled => "cancelled",
        }
    }

    /// Parses the database name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(ToolCallStatus::Pending),
            "running" => Some(ToolCallStatus::Running),
            other => ToolStatus::parse(other).map(Self::from),
        }
    }
}

impl From<ToolStatus> for ToolCallStatus {
    fn from(status: ToolStatus) -> Self {
        match status {
            ToolStatus::Ok => ToolCallStatus::Ok,
            ToolStatus::Error => ToolCallStatus::Error,
            ToolStatus::Timeout => ToolCallStatus::Timeout,
            ToolStatus::Denied => ToolCallStatus::Denied,
            ToolStatus::Skipped => ToolCallStatus::Skipped,
            ToolStatus::Cancelled => ToolCallStatus::Cancelled,
        }
    }
}

/// A run of a conversation's messages, oldest first, and how many come before it: long
/// conversations are read a page at a time, newest page first.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessagePage {
    /// The messages, oldest first.
    pub messages: Vec<StoredMessage>,
    /// How many of the conversation's messages come before the first of these.
    pub earlier: u32,
}

/// A stored message, with everything needed to draw it exactly as it looked live.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredMessage {
    /// Message id.
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// The visible text (the whole turn's, for an assistant message).
    pub content: String,
    /// Reasoning text, shown collapsed.
    pub reasoning: String,
    /// Where it is in its life.
    pub status: MessageStatus,
    /// Provider profile name (assistant messages).
    pub provider: Option<String>,
    /// Model id (assistant messages).
    pub model: Option<String>,
    /// Why the turn ended, once it has.
    pub finish_reason: Option<FinishReason>,
    /// Tokens summed over the turn.
    pub usage: Usage,
    /// How many tool calls the model made in the turn.
    pub tool_calls_made: u32,
    /// Why the turn failed, if it did.
    pub error: Option<StoredError>,
    /// Notices shown during the turn, in order.
    pub notices: Vec<StoredNotice>,
    /// The provider's id for the response, where the provider has one.
    pub provider_response_id: Option<String>,
    /// Unix millis.
    pub created_at: i64,
    /// Unix millis of the last write.
    pub updated_at: i64,
    /// The turn's tool calls, ordered by (iteration, index).
    pub tool_calls: Vec<StoredToolCall>,
    /// The message it follows on its branch (`None`: a first message).
    pub parent_id: Option<String>,
    /// Its versions (messages of the same role under the same parent, this one included), oldest
    /// first; one entry when it has no other version.
    pub versions: Vec<String>,
    /// The person pinned it: it is never summarised, always sent verbatim.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<bool>"))]
    pub pinned: bool,
    /// The files attached to it (the person's messages), in order, each under the name it was
    /// attached with: references only, the bytes are read on demand.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<Vec<switchboard_core::Attachment>>"))]
    pub attachments: Vec<switchboard_core::Attachment>,
    /// What each iteration's API wants back unchanged, by 1-based iteration: rebuilt into the
    /// history for that API only, never shown.
    #[serde(skip)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub provider_states: Vec<(u32, switchboard_core::ProviderState)>,
}

/// The error that ended a turn.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredError {
    /// Classification.
    pub kind: ErrorKind,
    /// The message the person saw.
    pub message: String,
    /// The technical detail behind it, for "Details".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub detail: Option<String>,
}

/// A notice shown during a turn.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredNotice {
    /// What kind.
    pub kind: NoticeKind,
    /// The text shown.
    pub message: String,
}

/// A stored tool call and, once written, its result.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredToolCall {
    /// The provider's call id.
    pub call_id: String,
    /// Registry name of the tool.
    pub name: String,
    /// Where the tool comes from.
    pub source: ToolSource,
    /// Raw argument text as the model sent it.
    pub arguments: String,
    /// Chars (Unicode scalar values) of the turn's text before the call: where its card goes.
    pub text_offset: usize,
    /// 1-based loop iteration.
    pub iteration: u32,
    /// 0-based position in its iteration.
    pub index: u32,
    /// Where it is in its life.
    pub status: ToolCallStatus,
    /// The result, if one was written.
    pub result: Option<StoredToolResult>,
    /// What the sub-agents it ran did, in order (an agent's call; empty for other tools).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<Vec<NestedEvent>>"))]
    pub nested: Vec<NestedEvent>,
}

/// One event of a sub-agent's turn inside a call: which instance (`Name[i]`) and what happened,
/// as it streamed (runs of text merged).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NestedEvent {
    /// The instance, `Name[i]`.
    pub instance: String,
    /// The child's event (its own sub-agents' events nested inside, the same way).
    pub event: ChatEvent,
}

/// A tool call's result.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredToolResult {
    /// How the call ended.
    pub status: ToolStatus,
    /// What the model saw.
    pub output: String,
    /// Wall time of the call.
    pub duration_ms: u64,
    /// Images the tool returned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<Vec<switchboard_core::ToolImage>>"))]
    pub images: Vec<switchboard_core::ToolImage>,
}

/// A provider profile: which API to talk to and where. The key lives in the keychain, never here.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderProfile {
    /// Unique name the person chose ("openai", "work-anthropic").
    pub name: String,
    /// Which API the providers crate should speak (its own naming).
    pub kind: String,
    /// Endpoint base URL.
    pub base_url: String,
    /// Default model for new turns.
    pub model: Option<String>,
    /// Generation settings and capability overrides.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<ProfileOptions>"))]
    pub options: ProfileOptions,
}

/// A profile's generation settings, and what the person says its model can do, holds and costs
/// where the capability table or the model catalogue guesses wrong.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileOptions {
    /// Output limit and reasoning controls sent with every request.
    #[serde(default)]
    pub generation: switchboard_core::GenerationOptions,
    /// Whether the model takes tools; `None` leaves it to the capability table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tools: Option<bool>,
    /// Responses API only: whether the provider keeps responses (`store`), which continuing
    /// from the previous response needs; `None` is the API's default (kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub store: Option<bool>,
    /// The model's context window in tokens, where the catalogue is wrong or silent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub context_window: Option<u64>,
    /// The model's output limit in tokens, where the catalogue is wrong or silent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_output_tokens: Option<u64>,
    /// The model's prices, where the catalogue is wrong or silent (a negotiated rate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub prices: Option<switchboard_core::Prices>,
}
