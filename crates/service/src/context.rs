//! How full a conversation's context is: the limits a turn runs under (window, output limit,
//! compaction threshold, from [`Service::model_spec`] and Settings), where its first request
//! counts from (the conversation's last report), and the meter's figure before any new request
//! ([`Service::conversation_context`]).
//!
//! Invariant: the figure shown when a chat opens is the one the next turn's first request will
//! count before the person's new message: the same history (compaction, cut results and each
//! attached file in the form this model is sent it: an image fitted to its API or left out for
//! a model that cannot see, a PDF as a document or as its text), counted with the same counter
//! over the conversation's stored token counts, from the same report (the last request's, when
//! this model sent it and the history has not shrunk since) and with the last request's
//! instructions and tools. Opening a chat reads no attached file (sizes, dimensions and
//! extracted text are in the database) and, for OpenAI's models, tokenizes only what no turn or
//! earlier opening has (`crate::token_cache`).

use crate::ipc::TurnChoices;
use crate::settings::Settings;
use crate::turn_parts::{Target, leave_out_tool_images};
use crate::turn_setup::Asker;
use crate::{Result, Service};
use serde::Serialize;
use switchboard_core::machine::{Estimator, combine_handed_in};
use switchboard_core::{ContextBreakdown, ContextLimits, ReportedContext};
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
    /// what the next turn runs on: the chat's agent's, else the chat's; a provider named alone:
    /// its default model): what the next turn's first request counts before the person's new
    /// message (see the module's invariant).
    pub fn conversation_context(
        &self,
        conversation_id: &str,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> Result<ConversationContext> {
        // Picked as a turn picks (`prepare`): the choices given, then the chat's setup, then its
        // agent's; a profile named without a model answers with its own default.
        let mut choices = TurnChoices {
            provider: provider.map(str::to_owned),
            model: model.map(str::to_owned),
            ..Default::default()
        };
        self.fill_from_setup(conversation_id, &mut choices, true)?;
        self.turn_agent(Some(conversation_id), &mut choices)?;
        let profile = self.profile(choices.provider.as_deref())?;
        let model = choices.model.or_else(|| profile.model.clone()).unwrap_or_default();
        let settings = self.settings()?;
        let limits = self.context_limits(&profile, &model, &settings);
        let counter = crate::token_cache::meter_counter(&self.inner.store, conversation_id, &profile.kind, &model);
        let estimator = Estimator::new(counter);
        let mut raw = self.sent_history(conversation_id, &profile, &model, &settings, &estimator)?;
        // The instructions and tools as the last request counted them (the next one sends the
        // same unless the person changed them), its estimate unscaled from its report.
        if let Some(last) = self.inner.store.last_context(conversation_id)? {
            let unscaled = |n: u64| match last.used_tokens {
                0 => n,
                used => (u128::from(n) * u128::from(last.estimate) / u128::from(used)) as u64,
            };
            raw.instructions = unscaled(last.breakdown.instructions);
            raw.tools = unscaled(last.breakdown.tools);
        }
        let e = combine_handed_in(raw, self.reported_context(conversation_id, &model, Asker::Person));
        Ok(ConversationContext {
            used_tokens: e.total,
            window: limits.window.filter(|_| !limits.window_assumed),
            breakdown: e.breakdown,
            estimated: e.estimated,
            compact_at: limits.compact_at,
        })
    }

    /// The estimate of the history `model` on `profile` is sent next, as a turn builds it: results
    /// framed and cut as they were sent, the compaction in force applied, and each of the person's
    /// files as the part this model is sent ([`Service::part_tokens`], counted from what the store
    /// keeps of it, no file read).
    fn sent_history(
        &self,
        conversation_id: &str,
        profile: &ProviderProfile,
        model: &str,
        settings: &Settings,
        estimator: &Estimator,
    ) -> Result<ContextBreakdown> {
        let registry = self.inner.tools.catalog.registry();
        let marker = crate::untrusted::Marker::new(&registry);
        let limit = settings.engine_config().tool_result_limit;
        let turn = self.inner.store.turn_history(conversation_id, &|call| marker.mark(call), limit)?;
        let caps = self.model_capabilities(profile, model);
        let target = Target { kind: profile.kind.clone(), model: model.to_owned(), caps };
        let mut messages = turn.messages;
        if caps.images == Some(false) {
            leave_out_tool_images(&mut messages, model);
        }
        let files: u64 = turn
            .attachments
            .iter()
            .filter(|(index, _)| turn.compaction.sends_parts_of(&messages, *index))
            .flat_map(|(_, files)| files)
            .map(|a| self.part_tokens(a, &target, estimator))
            .sum();
        let mut breakdown = estimator.history(&turn.compaction.apply(&messages, &turn.pinned));
        breakdown.attachments += files;
        Ok(breakdown)
    }
}
