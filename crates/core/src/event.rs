//! The event stream of one turn: the only way a shell learns what happened.

use crate::error::ErrorKind;
use crate::types::Usage;
use crate::vocab::ToolSource;
use serde::{Deserialize, Serialize};

/// How a tool call ended.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolStatus {
    /// It ran and succeeded.
    Ok,
    /// It failed: unknown tool, bad arguments, or the tool's own error.
    Error,
    /// It ran past its time limit.
    Timeout,
    /// The person (or the approval policy) refused it.
    Denied,
    /// It was not run: over the per-round cap, or batched with a control-taking tool.
    Skipped,
    /// The turn was stopped while it ran.
    Cancelled,
}

impl ToolStatus {
    /// The wire and database name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Ok => "ok",
            ToolStatus::Error => "error",
            ToolStatus::Timeout => "timeout",
            ToolStatus::Denied => "denied",
            ToolStatus::Skipped => "skipped",
            ToolStatus::Cancelled => "cancelled",
        }
    }

    /// Parses the database name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "ok" => ToolStatus::Ok,
            "error" => ToolStatus::Error,
            "timeout" => ToolStatus::Timeout,
            "denied" => ToolStatus::Denied,
            "skipped" => ToolStatus::Skipped,
            "cancelled" => ToolStatus::Cancelled,
            _ => return None,
        })
    }

    /// Whether the model should see this result as a failure.
    pub fn is_error(self) -> bool {
        self != ToolStatus::Ok
    }
}

/// Why a turn ended.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FinishReason {
    /// The model finished its answer.
    Stop,
    /// The model hit its output token limit.
    Length,
    /// The provider filtered the output.
    ContentFilter,
    /// The loop reached `max_iterations`; the answer came from a last call with tools off.
    MaxIterations,
    /// A control-taking tool produced the answer.
    ToolTookControl,
    /// The person stopped the turn.
    Cancelled,
    /// A budget was reached and the person chose to stop there (or to answer now, with tools
    /// off); everything so far is kept.
    Budget,
    /// The turn failed (an `error` event precedes `done`).
    Error,
}

impl FinishReason {
    /// The wire and database name.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "contentFilter",
            FinishReason::MaxIterations => "maxIterations",
            FinishReason::ToolTookControl => "toolTookControl",
            FinishReason::Cancelled => "cancelled",
            FinishReason::Budget => "budget",
            FinishReason::Error => "error",
        }
    }
}

/// The kind of a [`ChatEvent::Notice`].
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NoticeKind {
    /// The loop hit `max_iterations` and asked for a final answer with tools off.
    MaxIterations,
    /// A request failed before any output and is being retried.
    Retrying,
    /// A forced or requested tool is not available.
    ToolUnavailable,
    /// Tools were requested but the dry-run switch made them return example output.
    DryRun,
    /// A provider's content filter ended the answer.
    Filtered,
    /// More tools are enabled than one request to the API can carry: some are offered directly,
    /// the rest through the `find_tools` step.
    TooManyTools,
    /// A budget paused the turn, and what the person chose.
    Budget,
    /// Something about the context window: compaction failed or could not help, the window is
    /// not known.
    Context,
    /// An attached file goes to the model in another form than attached (a PDF as its
    /// extracted text for a model that reads no PDFs) or not at all.
    Attachment,
}

/// Why the loop compacted.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CompactionReason {
    /// The next request would have passed the threshold.
    Threshold,
    /// The provider refused a request as too long.
    TooLong,
    /// The person asked ("Compact now").
    Manual,
}

/// One thing that happened during a turn. camelCase on the wire, tagged by `type`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ChatEvent {
    /// Sent before any model output: the ids the turn's rows have.
    Started {
        /// The conversation (new or existing).
        conversation_id: String,
        /// The assistant message being produced.
        message_id: String,
        /// The person's message that started the turn.
        user_message_id: String,
        /// Provider profile name.
        provider: String,
        /// Model id.
        model: String,
    },
    /// Visible answer text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// Reasoning ("thinking") text, shown collapsed.
    ReasoningDelta {
        /// The new text.
        text: String,
    },
    /// A complete tool call, at the place in the answer where it appeared.
    ToolCall {
        /// Provider call id.
        id: String,
        /// Registry name of the tool.
        name: String,
        /// Where the tool comes from.
        source: ToolSource,
        /// Raw argument text as the model sent it.
        arguments: String,
        /// Length in Unicode scalar values of the turn's answer text when the call first appeared.
        text_offset: usize,
        /// 1-based loop iteration.
        iteration: u32,
        /// 0-based position of the call in its iteration.
        index: u32,
    },
    /// The call passed validation (and approval) and is running.
    ToolStarted {
        /// Call id.
        id: String,
    },
    /// Intermediate output of a running tool (sub-agents: nested events of `Name[i]`).
    ToolProgress {
        /// Call id.
        id: String,
        /// Sub-agent instance name, `Name[i]`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        instance: Option<String>,
        /// A line of progress text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// A nested event of a sub-agent's own turn.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event: Option<Box<ChatEvent>>,
    },
    /// The loop is paused until the person decides about this call.
    ApprovalRequested {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Where the tool comes from.
        source: ToolSource,
        /// The exact arguments that will run.
        arguments: String,
        /// What the call will do in the tool's words (a command line, an HTTP request), when the
        /// tool says more than its arguments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        preview: Option<String>,
        /// Why it is asked although its policy or a grant would let it run: it would send data
        /// to a destination not used in this chat after the chat read untrusted content.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        egress: Option<crate::egress::EgressReason>,
    },
    /// The person decided (or the turn ended while waiting).
    ApprovalResolved {
        /// Call id.
        id: String,
        /// Whether the call may run.
        approved: bool,
    },
    /// A tool's server asks the person for input during the call (the call waits; the card
    /// shows the form, or the page to open, naming the server and its tool). With `refused` set
    /// it was declined without asking, and the card says why.
    ElicitationRequested {
        /// The call it came during.
        call_id: String,
        /// The request's id, for `answer_elicitation`.
        request_id: String,
        /// The server asking.
        server: String,
        /// The server's tool being called.
        tool: String,
        /// What the server says it needs.
        message: String,
        /// A form, or a page to open.
        mode: crate::ask::ElicitationMode,
        /// The form's fields, in order (form mode; only the types the MCP specification allows).
        fields: Vec<crate::ask::FormField>,
        /// The page to open after the person agrees (URL mode).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        url: Option<String>,
        /// Why it was declined without asking (a type the specification does not allow, a URL
        /// that is not https).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        refused: Option<String>,
    },
    /// The person answered (or the call ended while it waited: `cancel`).
    ElicitationResolved {
        /// The call it came during.
        call_id: String,
        /// The request's id.
        request_id: String,
        /// What went back to the server.
        action: crate::ask::ElicitationAction,
    },
    /// A tool's server asks for a model completion during the call: the person approves (the
    /// messages as they are or edited) or denies. An approved one runs nested in the call's card.
    SamplingRequested {
        /// The call it came during.
        call_id: String,
        /// The request's id, for `answer_sampling`.
        request_id: String,
        /// The server asking.
        server: String,
        /// The server's tool being called.
        tool: String,
        /// The messages to complete (images and audio named in words).
        messages: Vec<crate::ask::SamplingMessage>,
        /// The system prompt it asks for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        system_prompt: Option<String>,
        /// The most output tokens the completion may use (capped).
        max_tokens: u32,
        /// What the server asked for, when it was more than the cap.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        requested_max_tokens: Option<u32>,
        /// The server's model preferences in words (shown, not obeyed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        model_preferences: Option<String>,
    },
    /// The person decided (or the call ended while it waited: not approved).
    SamplingResolved {
        /// The call it came during.
        call_id: String,
        /// The request's id.
        request_id: String,
        /// Whether the completion runs.
        approved: bool,
    },
    /// The loop paused before a request that would pass a budget, until the person chooses:
    /// continue (with a new allowance), answer now (tools off) or stop.
    BudgetPaused {
        /// The pause's id, for the answer.
        id: String,
        /// The limit reached.
        kind: crate::budget::BudgetKind,
        /// Whose limit: the chat's (a running total) or this turn's.
        #[serde(default)]
        scope: crate::budget::BudgetScope,
        /// What the turn (with its sub-agents) spent so far; for the chat's limit, the chat's
        /// total.
        spent: crate::budget::BudgetSpent,
        /// The limit of `kind`: steps, seconds or USD.
        limit: f64,
        /// The estimated cost of the next request's input, when its price is known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        next_cost_usd: Option<f64>,
    },
    /// The person chose (a turn stopped while paused resolves with `stop`).
    BudgetResolved {
        /// The pause's id.
        id: String,
        /// What they chose.
        choice: crate::budget::BudgetChoice,
    },
    /// The result of a call; every call id gets exactly one.
    ToolResult {
        /// Call id.
        id: String,
        /// How it ended.
        status: ToolStatus,
        /// What the model sees.
        output: String,
        /// Wall time of the call.
        duration_ms: u64,
        /// Images the tool returned.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        images: Option<Vec<crate::vocab::ToolImage>>,
    },
    /// Provider-specific data of an iteration's response (signed thinking, a response id), kept
    /// with the message so a later request can send it back. For the store; shells ignore it.
    ProviderState {
        /// 1-based loop iteration, as in `toolCall`.
        iteration: u32,
        /// The data, tagged with the API and endpoint that made it.
        state: crate::types::ProviderState,
    },
    /// What one request (model call) of the turn used and cost, right after it ended; or, with
    /// `agentCall`, what a sub-agent call spent (its own requests arrive nested in that call's
    /// `toolProgress`, each as a `usage` event of the child's turn).
    Usage {
        /// This request's usage (with `agentCall`: the sub-agent run's, its children included).
        usage: Usage,
        /// Sum over the turn so far, sub-agent runs included.
        total: Usage,
        /// 1-based number of the request within the turn: the `iteration` of the tool calls it
        /// decided (with `agentCall`: of the request that decided that call).
        #[serde(default)]
        request: u32,
        /// What it cost in US dollars at the model's prices; `null`: the price is unknown (never
        /// taken for free). A local server's requests cost 0.
        #[serde(default)]
        cost_usd: Option<f64>,
        /// The provider reported no usage (or numbers that cannot be true): these are estimated
        /// from what was sent and received.
        #[serde(default)]
        estimated: bool,
        /// Set when this is the total of a sub-agent call (its id) rather than a request of
        /// this turn; it counts in `total`, and its requests are stored from the nested events.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        agent_call: Option<String>,
    },
    /// What is sent from now on is compacted: older results as stubs and/or older messages as
    /// a summary. Nothing stored changed; the store keeps this as a compaction row.
    Compacted {
        /// The whole compaction now in force (it includes earlier ones).
        compaction: crate::compaction::Compaction,
        /// Estimated tokens of the next request before compacting.
        tokens_before: u64,
        /// And after.
        tokens_after: u64,
        /// The model that wrote the summary, when this compaction wrote one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        summariser: Option<String>,
        /// What writing the summary used.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        usage: Option<Usage>,
        /// Why the model picked to write summaries did not write this one (its profile is gone,
        /// its key is refused, …): `summariser` is the chat's own model instead.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        summariser_fallback: Option<String>,
        /// Why.
        reason: CompactionReason,
    },
    /// How much of the model's context the next request fills, sent before every request.
    Context {
        /// Tokens the request sends: the previous request's reported prompt tokens plus an
        /// estimate of what is new (an estimate of everything before the first report).
        used_tokens: u64,
        /// The model's context window, if known.
        window: Option<u64>,
        /// Where the tokens go (sums to `used_tokens`).
        breakdown: ContextBreakdown,
        /// No provider report is part of `used_tokens`: it is all the engine's own estimate.
        estimated: bool,
        /// The engine's own estimate of the whole request, without any report: stored with the
        /// provider's reported prompt tokens, so a later request counts from that report.
        estimate: u64,
    },
    /// Something the person should know that is not an error.
    Notice {
        /// What kind.
        kind: NoticeKind,
        /// The text to show.
        message: String,
    },
    /// The turn ended. Always the last event.
    Done {
        /// Why.
        finish_reason: FinishReason,
        /// Usage summed over iterations.
        usage: Usage,
        /// How many tool calls the model made in the turn.
        tool_calls_made: u32,
    },
    /// The turn failed; `done` follows.
    Error {
        /// Classification.
        kind: ErrorKind,
        /// A specific message for a person.
        message: String,
        /// Whether trying again may work.
        retryable: bool,
        /// The technical detail behind the message, for "Details".
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        detail: Option<String>,
    },
}

/// What one request's tokens are made of (see [`ChatEvent::Context`]).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextBreakdown {
    /// The system prompt with the tools' prompt snippets.
    pub instructions: u64,
    /// The tool definitions offered.
    pub tools: u64,
    /// The person's and the model's messages, tool calls included.
    pub history: u64,
    /// The text of tool results.
    pub tool_results: u64,
    /// Images (tool results' images).
    pub attachments: u64,
}

impl ContextBreakdown {
    /// The sum of the parts.
    pub fn total(&self) -> u64 {
        self.instructions + self.tools + self.history + self.tool_results + self.attachments
    }
}

/// Where a turn's events go: the store's recorder, the UI channel, the CLI's stdout.
pub trait EventSink: Send + Sync {
    /// Receives one event, in order.
    fn emit(&self, event: ChatEvent);

    /// Called about once a second while a turn runs, so durable sinks can checkpoint buffered text
    /// even when no event arrives.
    fn tick(&self) {}

    /// Called when the loop is about to wait (for the network, a tool, the person): sinks that
    /// batch output should write out what they hold now.
    fn flush(&self) {}
}

/// A sink that collects events in memory (tests, sub-agents).
#[derive(Default)]
pub struct VecSink(pub std::sync::Mutex<Vec<ChatEvent>>);

impl VecSink {
    /// The events so far.
    pub fn events(&self) -> Vec<ChatEvent> {
        self.0.lock().expect("sink lock").clone()
    }
}

impl EventSink for VecSink {
    fn emit(&self, event: ChatEvent) {
        self.0.lock().expect("sink lock").push(event);
    }
}

impl<F: Fn(ChatEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: ChatEvent) {
        self(event)
    }
}
