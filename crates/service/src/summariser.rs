//! Who writes a chat's summaries: its own model, or the profile and model picked for it in its
//! setup (`ChatSetup::summariser`). Resolved once per turn, from the turn's keys
//! ([`TurnKeys`]), for the person's turns ([`Service::build_turn`]) and "Compact now" alike.
//!
//! The pick's context limits are resolved as the chat's are (`Service::context_limits`: the
//! profile's override, the catalogue, the server's listing), so what it is sent fits its own
//! window (`switchboard_core::summarising`), not the chat's.
//!
//! Invariant: a pick that can no longer be used (its profile deleted, its key refused, a window
//! too small to write a summary in) never fails the turn: the chat's own model writes the summary
//! and the compaction says why (`summariser_fallback` on its event and stored row).

use crate::keys::TurnKeys;
use crate::settings::Settings;
use crate::{Result, Service};
use std::sync::Arc;
use switchboard_core::summarising::SummaryBudget;
use switchboard_core::{ContextLimits, Provider};
use switchboard_store::ProviderProfile;

/// The summariser a turn runs with.
#[derive(Default)]
pub(crate) struct ChatSummariser {
    /// The model that writes summaries; `None`: the turn's.
    pub(crate) model: Option<String>,
    /// The provider it runs on; `None`: the turn's.
    pub(crate) provider: Option<Arc<dyn Provider>>,
    /// Its context limits when it is not the turn's model; `None`: the turn's.
    pub(crate) limits: Option<ContextLimits>,
    /// Why the pick is not used (the chat's own model writes summaries instead).
    pub(crate) notice: Option<String>,
}

impl Service {
    /// The summariser the chat picked, for a turn answered by `model` on `profile`. Fails only
    /// when the store cannot read the chat's setup.
    pub(crate) fn chat_summariser(
        &self,
        conversation_id: &str,
        profile: &ProviderProfile,
        model: &str,
        keys: &TurnKeys,
        settings: &Settings,
    ) -> Result<ChatSummariser> {
        let Some(pick) = self.inner.store.chat_setup(conversation_id)?.summariser else {
            return Ok(ChatSummariser::default());
        };
        let fallback = |why: String| ChatSummariser {
            notice: Some(format!("{why}; this chat's own model ({model}) writes summaries instead.")),
            ..ChatSummariser::default()
        };
        let same = pick.provider == profile.name;
        if same && pick.model == model {
            return Ok(ChatSummariser::default());
        }
        let other = if same { Some(profile.clone()) } else { self.inner.store.provider(&pick.provider)? };
        let Some(other) = other else {
            return Ok(fallback(format!(
                "The profile '{}' picked to write this chat's summaries no longer exists",
                pick.provider
            )));
        };
        let limits = self.context_limits(&other, &pick.model, settings);
        if SummaryBudget::new(&limits, &Default::default()).is_none() {
            let window = limits.window.map_or_else(|| "unknown".to_owned(), switchboard_core::tokens::thousands);
            return Ok(fallback(format!(
                "The context window of {} ({window} tokens) is too small to write this chat's summaries in",
                pick.model
            )));
        }
        if same {
            return Ok(ChatSummariser { model: Some(pick.model), limits: Some(limits), ..ChatSummariser::default() });
        }
        match self.provider_factory().provider_with(&other, keys) {
            Ok(provider) => Ok(ChatSummariser {
                model: Some(pick.model),
                provider: Some(Arc::from(provider)),
                limits: Some(limits),
                notice: None,
            }),
            Err(e) => Ok(fallback(format!(
                "The profile '{}' picked to write this chat's summaries cannot be used ({})",
                pick.provider,
                keys.redactor().redact(&e.message).trim_end_matches('.')
            ))),
        }
    }
}
