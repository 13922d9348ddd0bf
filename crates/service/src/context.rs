//! How full a conversation's context is: the limits a turn runs under (window, output limit,
//! compaction threshold, from [`Service::model_spec`] and Settings), where its first request
//! counts from (the conversation's last report), and the meter's figure before any new request
//! ([`Service::conversation_context`]).
//!
//! Invariant: the figure shown when a chat opens is the one its last request was counted as,
//! plus what came after it (the answer), counted the way the next turn will count it; with
//! another model than the one that answered, it is an estimate of the whole history.

use crate::settings::Settings;
use crate::turn_setup::Asker;
use crate::{Result, Service};
use serde::Serialize;
use switchboard_core::machine::Estimator;
use switchboard_core::{ContextBreakdown, ContextLimits, Message, ReportedContext};
use switchboard_store::ProviderProfile;

/// The meter's figure for a conversation's next request.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationContext {
    /// Tokens the next request sends before the person's new message.
    pub used_tokens: u64,
    /// The model's window (`None`: unknown).
    pub window: Option<u64>,
    /// Where the tokens go.
    pub breakdown: ContextBreakdown,
    /// No provider report is part of `used_tokens`.
    pub estimated: bool,
    /// The fraction of the window past which the loop compacts.
    pub compact_at: f32,
}

impl Service {
    /// The limits a turn of `model` on `profile` runs under.
    pub(crate) fn context_limits(&self, profile: &ProviderProfile, model: &str, settings: &Settings) -> ContextLimits {
        let resolved = self.model_spec(profile, model);
        let mut limits = ContextLimits::bounded(
            resolved.spec.context_window,
            resolved.spec.max_output,
            settings.limits.compact_at(),
        );
        limits.window_assumed = resolved.source == crate::models::SpecSource::Default;
        limits
    }

    /// Where a person's turn counts from: the conversation's last request, when `model` sent it
    /// and the provider reported it.
    pub(crate) fn reported_context(
        &self,
        conversation_id: &str,
        model: &str,
        asker: Asker<'_>,
    ) -> Option<ReportedContext> {
        if !matches!(asker, Asker::Person) {
            return None;
        }
        let last = self.inner.store.last_context(conversation_id).ok()??;
        let prompt_tokens = last.reported_prompt.filter(|_| last.model.as_deref() == Some(model))?;
        Some(ReportedContext { prompt_tokens, estimate: last.estimate })
    }

    /// The meter's figure for `conversation_id`'s next request with `provider`/`model` (default:
    /// the chat's, else the default profile's).
    pub fn conversation_context(
        &self,
        conversation_id: &str,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> Result<ConversationContext> {
        let setup = self.inner.store.chat_setup(conversation_id)?;
        let profile = self.profile(provider.or(setup.provider.as_deref()))?;
        let model = model.or(setup.model.as_deref()).or(profile.model.as_deref()).unwrap_or_default().to_owned();
        let limits = self.context_limits(&profile, &model, &self.settings()?);
        let history = self.inner.store.history(conversation_id)?;
        let estimator = Estimator::new(switchboard_models::tokens::counter_now(&profile.kind, &model));
        let last = self.inner.store.last_context(conversation_id)?;
        let window = limits.window.filter(|_| !limits.window_assumed);
        let compact_at = limits.compact_at;
        let figure = match last {
            // The same model answered last: its count, plus the answer written after it.
            Some(last) if last.model.as_deref() == Some(model.as_str()) => {
                let answer = match history.last() {
                    Some(m @ Message::Assistant { .. }) => estimator.messages(std::slice::from_ref(m)),
                    _ => 0,
                };
                let mut breakdown = last.breakdown;
                breakdown.history += answer;
                let used_tokens = last.reported_prompt.unwrap_or(last.used_tokens) + answer;
                let rest = used_tokens.saturating_sub(breakdown.total());
                breakdown.history += rest;
                let estimated = last.reported_prompt.is_none();
                ConversationContext { used_tokens: breakdown.total(), window, breakdown, estimated, compact_at }
            }
            // Another model, or none yet: the history by this model's count, with the
            // instructions and tools the last request had.
            last => {
                let mut breakdown = ContextBreakdown::default();
                if let Some(last) = last {
                    breakdown.instructions = last.breakdown.instructions;
                    breakdown.tools = last.breakdown.tools;
                }
                for m in &history {
                    let n = estimator.messages(std::slice::from_ref(m));
                    match m {
                        Message::Tool { .. } => breakdown.tool_results += n,
                        _ => breakdown.history += n,
                    }
                }
                ConversationContext { used_tokens: breakdown.total(), window, breakdown, estimated: true, compact_at }
            }
        };
        Ok(figure)
    }
}
