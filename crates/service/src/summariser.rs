//! Who writes a chat's summaries: its own model, or the profile and model picked for it in its
//! setup (`ChatSetup::summariser`). Resolved once per turn, from the turn's keys
//! ([`TurnKeys`]), for the person's turns ([`Service::build_turn`]) and "Compact now" alike.
//!
//! Invariant: a pick that can no longer be used (its profile deleted, its key refused) never
//! fails the turn: the chat's own model writes the summary and a notice says why.

use crate::keys::TurnKeys;
use crate::{Result, Service};
use std::sync::Arc;
use switchboard_core::Provider;
use switchboard_store::ProviderProfile;

/// The summariser a turn runs with.
#[derive(Default)]
pub(crate) struct ChatSummariser {
    /// The model that writes summaries; `None`: the turn's.
    pub(crate) model: Option<String>,
    /// The provider it runs on; `None`: the turn's.
    pub(crate) provider: Option<Arc<dyn Provider>>,
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
    ) -> Result<ChatSummariser> {
        let Some(pick) = self.inner.store.chat_setup(conversation_id)?.summariser else {
            return Ok(ChatSummariser::default());
        };
        if pick.provider == profile.name {
            let model = (pick.model != model).then_some(pick.model);
            return Ok(ChatSummariser { model, ..ChatSummariser::default() });
        }
        let fallback = |why: String| ChatSummariser {
            notice: Some(format!("{why}; this chat's own model ({model}) writes summaries instead.")),
            ..ChatSummariser::default()
        };
        let Some(other) = self.inner.store.provider(&pick.provider)? else {
            return Ok(fallback(format!(
                "The profile '{}' picked to write this chat's summaries no longer exists",
                pick.provider
            )));
        };
        match self.provider_factory().provider_with(&other, keys) {
            Ok(provider) => {
                Ok(ChatSummariser { model: Some(pick.model), provider: Some(Arc::from(provider)), notice: None })
            }
            Err(e) => Ok(fallback(format!(
                "The profile '{}' picked to write this chat's summaries cannot be used ({})",
                pick.provider,
                keys.redactor().redact(&e.message).trim_end_matches('.')
            ))),
        }
    }
}
