//! The turn configuration: what a turn starts from ([`TurnInput`] with the person's
//! [`TurnOptions`]), the limits it runs under ([`EngineConfig`]) and how it ended
//! ([`TurnOutcome`]).
//!
//! Invariant: plain values built before every turn (from settings, a profile, a chat), so the
//! loop below reads them and nothing here reaches back into the loop.

use crate::compaction::Compaction;
use crate::egress::Exposure;
use crate::error::ProviderError;
use crate::event::FinishReason;
use crate::policy::ToolSettings;
use crate::provider::GenerationOptions;
use crate::tokens::TokenCounter;
use crate::types::{Message, Usage};
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// Limits and behavior of the loop. Built from settings before every turn, so changes apply to
/// the next turn without a restart.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Model calls with tools before the last, tools-off call.
    pub max_iterations: u32,
    /// Unique calls run per round; the rest are answered as skipped.
    pub max_tool_calls_per_round: usize,
    /// Per-call timeout unless the tool sets its own.
    pub tool_timeout: Duration,
    /// A stream with no event for this long ends with a timeout error.
    pub idle_timeout: Duration,
    /// Retries of a request that failed before any output.
    pub max_retries: u32,
    /// First retry delay; doubles per attempt.
    pub retry_base_delay: Duration,
    /// Upper bound of any retry delay, `Retry-After` included.
    pub retry_max_delay: Duration,
    /// Settings-wide tool settings (disabled tools, approval overrides).
    pub tool_settings: ToolSettings,
    /// The longest tool result the model receives whole, in characters; a longer one is cut
    /// with a note ([`crate::paging`]).
    pub tool_result_limit: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            max_iterations: 10,
            max_tool_calls_per_round: 10,
            tool_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(120),
            max_retries: 3,
            retry_base_delay: Duration::from_millis(1000),
            retry_max_delay: Duration::from_secs(30),
            tool_settings: ToolSettings::default(),
            tool_result_limit: crate::paging::DEFAULT_LIMIT,
        }
    }
}

/// The provider a turn's summaries are written on when it is not the turn's own.
#[derive(Clone)]
pub struct SummariserProvider(pub Arc<dyn crate::provider::Provider>);

impl std::fmt::Debug for SummariserProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SummariserProvider").field(&self.0.kind()).finish()
    }
}

/// Runs the completions tool servers ask for during a turn ([`crate::tool::Sampler`]).
#[derive(Clone)]
pub struct TurnSampler(pub Arc<dyn crate::tool::Sampler>);

impl std::fmt::Debug for TurnSampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TurnSampler")
    }
}

/// The person's choices for one turn.
#[derive(Clone, Debug)]
pub struct TurnOptions {
    /// `false`: no tools this turn.
    pub use_tools: bool,
    /// Tools forced for the first iteration.
    pub forced: Vec<String>,
    /// Tools disabled for this chat.
    pub disabled_for_chat: BTreeSet<String>,
    /// Tools return their example output instead of running.
    pub dry_run: bool,
    /// Overrides [`EngineConfig::max_iterations`] for this turn.
    pub max_iterations: Option<u32>,
    /// `ask` tools already approved for this chat or always.
    pub approved_tools: HashSet<String>,
    /// Output limit and reasoning controls for every request of the turn.
    pub generation: GenerationOptions,
    /// Set when the model is known to take no tools: none are offered, and this is said once.
    pub tools_unsupported: Option<String>,
    /// Set when the model is known to see no images: the images tools return are shown to the
    /// person but not sent to the model, and this note is added to each such result's text.
    pub tool_images_left_out: Option<String>,
    /// What the turn says, right after `started`, about the question's attachments (a PDF sent
    /// as its text), each once ([`crate::NoticeKind::Attachment`]).
    pub attachment_notices: Vec<String>,
    /// Tools the turn was meant to have but does not (a toolset names one that no longer
    /// exists): each is said once, right after `started`, and the turn goes on without them.
    pub unavailable: Vec<String>,
    /// What the context already holds (untrusted results of earlier turns, or the calling
    /// turn's for a sub-agent) and the destinations the person has used.
    pub exposure: Exposure,
    /// The model's prices, for what each request cost: `None` when unknown (costs are then
    /// reported unknown, never 0), zero for a free local server.
    pub prices: Option<crate::spend::Prices>,
    /// The turn's budget (steps, time, cost); the loop pauses before a request that would pass it.
    pub budget: crate::budget::Budget,
    /// The chat's budget, a running total: its limits and what the chat spent before this turn
    /// (a person's turn only; a sub-agent counts toward its caller's meter).
    pub chat_budget: crate::budget::ChatBudget,
    /// The meter of the turn this one runs inside (a sub-agent counts toward its caller's
    /// budget, under the caller's limits); `None`: a meter of its own under `budget`.
    pub meter: Option<std::sync::Arc<crate::budget::BudgetMeter>>,
    /// The model's context window and output limit, and when to compact.
    pub context: ContextLimits,
    /// The compaction the history is sent with (the latest stored one on this path, not undone).
    pub compaction: Compaction,
    /// Indexes into the history of messages the person pinned: never summarised, always sent
    /// verbatim.
    pub pinned: Vec<usize>,
    /// The model that writes summaries (on `summariser_provider`, else the turn's provider);
    /// `None`: the turn's model.
    pub summariser: Option<String>,
    /// The provider `summariser` runs on when it is another profile's; `None`: the turn's.
    pub summariser_provider: Option<SummariserProvider>,
    /// The context limits of the model that writes summaries, when it is not the turn's own:
    /// what it is sent fits its window (`crate::summarising`). `None`: the turn's `context`.
    pub summariser_context: Option<ContextLimits>,
    /// Why the model picked to write summaries is not used (the turn's own writes them): said on
    /// each compaction that writes a summary ([`crate::ChatEvent::Compacted`]).
    pub summariser_fallback: Option<String>,
    /// Counts the tokens of what is sent (the model family's tokenizer or a calibrated
    /// estimate); `None`: [`crate::tokens::CharEstimate`].
    pub counter: Option<Arc<dyn TokenCounter>>,
    /// What the provider reported for the last request the conversation sent before this turn,
    /// with the engine's estimate of that same request: the first request's count starts from it.
    pub reported: Option<ReportedContext>,
    /// Runs the completions a tool's server asks for during the turn; `None`: they are declined.
    pub sampler: Option<TurnSampler>,
}

/// The model's context limits for a turn (from `Service::model_spec`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContextLimits {
    /// Tokens the model takes in one request (prompt and output), if known.
    pub window: Option<u64>,
    /// Tokens it writes at most in one response, if known.
    pub max_output: Option<u64>,
    /// The fraction of the window past which the loop compacts before a request (0.5 to 0.95).
    pub compact_at: f32,
    /// Nobody knows the model's window: `window` is a safe default (the `context` event then
    /// says the window is unknown).
    pub window_assumed: bool,
}

impl ContextLimits {
    /// The default threshold: 80% of the window.
    pub const DEFAULT_COMPACT_AT: f32 = 0.8;

    /// `compact_at` bounded to 0.5..=0.95 (a non-number is the default).
    pub fn bounded(window: Option<u64>, max_output: Option<u64>, compact_at: f32) -> Self {
        let compact_at = if compact_at.is_nan() { Self::DEFAULT_COMPACT_AT } else { compact_at.clamp(0.5, 0.95) };
        Self { window, max_output, compact_at, window_assumed: false }
    }
}

impl Default for ContextLimits {
    fn default() -> Self {
        Self { window: None, max_output: None, compact_at: Self::DEFAULT_COMPACT_AT, window_assumed: false }
    }
}

/// One earlier request of the conversation: the prompt tokens the provider reported for it and
/// the engine's own estimate of that request, so what was added since is the difference of two
/// estimates on top of a real count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportedContext {
    /// The provider's prompt tokens for that request.
    pub prompt_tokens: u64,
    /// The engine's estimate of the same request, by the same counter.
    pub estimate: u64,
}

impl Default for TurnOptions {
    fn default() -> Self {
        Self {
            use_tools: true,
            forced: Vec::new(),
            disabled_for_chat: BTreeSet::new(),
            dry_run: false,
            max_iterations: None,
            approved_tools: HashSet::new(),
            generation: GenerationOptions::default(),
            tools_unsupported: None,
            tool_images_left_out: None,
            attachment_notices: Vec::new(),
            unavailable: Vec::new(),
            exposure: Exposure::default(),
            prices: None,
            budget: crate::budget::Budget::default(),
            chat_budget: crate::budget::ChatBudget::default(),
            meter: None,
            context: ContextLimits::default(),
            counter: None,
            reported: None,
            compaction: Compaction::default(),
            pinned: Vec::new(),
            summariser: None,
            summariser_provider: None,
            summariser_context: None,
            summariser_fallback: None,
            sampler: None,
        }
    }
}

/// Everything one turn starts from. The ids come from the store, which created the rows already.
#[derive(Clone, Debug)]
pub struct TurnInput {
    /// Conversation id.
    pub conversation_id: String,
    /// The person's message id.
    pub user_message_id: String,
    /// The assistant message id.
    pub message_id: String,
    /// Provider profile name (for the `started` event).
    pub provider_name: String,
    /// Model id.
    pub model: String,
    /// System prompt before tool snippets.
    pub system_prompt: Option<String>,
    /// History, ending with the person's new message.
    pub history: Vec<Message>,
    /// Per-turn choices.
    pub options: TurnOptions,
}

/// How a turn ended (the same facts as the final `done` event).
#[derive(Clone, Debug, PartialEq)]
pub struct TurnOutcome {
    /// Why it ended.
    pub finish_reason: FinishReason,
    /// Usage summed over iterations.
    pub usage: Usage,
    /// Tool calls the model made.
    pub tool_calls_made: u32,
    /// The error, if it failed.
    pub error: Option<ProviderError>,
    /// The untrusted source the turn's context held by its end, if any (a sub-agent's answer
    /// is then untrusted too).
    pub read_untrusted: Option<String>,
}
