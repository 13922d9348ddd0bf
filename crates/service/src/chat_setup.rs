//! A chat keeps its setup: the toolsets switched on in it, its own generation parameters and the
//! profile and model it last used (`switchboard_store::ChatSetup`), beside its agent,
//! instructions and switched-off tools. And the grants made in it ("allow for this chat"), listed
//! and revocable.
//!
//! Invariants:
//! - A turn in an existing chat takes from its setup whatever the request leaves open (toolsets
//!   not given, no parameters, no profile), and every turn stores what it ran with: a later
//!   explicit choice (a flag, a switch) changes the setup, and the next turn — or a reopened
//!   chat, a restart, `chat --continue` — runs the same way.
//! - Regenerating takes the chat's toolsets and parameters as they are now (its profile and model
//!   stay the question's, as before).
//! - A grant revoked is gone before the call returns; the next turn asks again.

use crate::ipc::{ChatSetupChange, SummariserChange, TurnChoices};
use crate::{Error, Result, Service};
use switchboard_core::ErrorKind;
use switchboard_store::{ChatGrant, ChatSetup, SummariserChoice};

impl Service {
    /// A chat's setup.
    pub fn chat_setup(&self, conversation_id: &str) -> Result<ChatSetup> {
        Ok(self.inner.store.chat_setup(conversation_id)?)
    }

    /// Changes what `change` names in a chat's setup (the tray's toolsets, the parameters dialog,
    /// the model picker) and returns the setup now stored. A toolset or profile that does not
    /// exist, or a parameter out of range, is refused and nothing changes.
    pub fn set_chat_setup(&self, conversation_id: &str, change: ChatSetupChange) -> Result<ChatSetup> {
        if let Some(g) = &change.generation {
            g.check().map_err(Error::config)?;
        }
        if let Some(b) = &change.budget {
            b.check().map_err(Error::config)?;
        }
        if let Some(toolsets) = change.toolsets.as_ref().filter(|t| !t.is_empty()) {
            let file = self.agents_file()?;
            if let Some(missing) = toolsets.iter().find(|t| file.toolset(t).is_none()) {
                return Err(Error::new(
                    ErrorKind::NotFound,
                    format!("There is no toolset named '{missing}'. See Settings → Agents for the toolsets there are."),
                ));
            }
        }
        if let Some(p) = &change.provider
            && self.inner.store.provider(p)?.is_none()
        {
            return Err(Error::new(ErrorKind::NotFound, format!("There is no provider profile named '{p}'.")));
        }
        let summariser = match change.summariser {
            None => None,
            Some(SummariserChange::Chat) => Some(None),
            Some(SummariserChange::Pick { provider, model }) => {
                if self.inner.store.provider(&provider)?.is_none() {
                    return Err(Error::new(
                        ErrorKind::NotFound,
                        format!("There is no provider profile named '{provider}' to write summaries."),
                    ));
                }
                Some(Some(SummariserChoice { provider, model }))
            }
        };
        let ChatSetupChange { toolsets, generation, provider, model, budget, .. } = change;
        Ok(self.inner.store.update_chat_setup(conversation_id, |s| {
            if let Some(t) = toolsets {
                s.toolsets = t;
            }
            if let Some(g) = generation {
                s.generation = Some(g);
            }
            if let Some(b) = budget {
                s.budget = (!b.is_empty()).then_some(b);
            }
            if let Some(pick) = summariser {
                s.summariser = pick;
            }
            if provider.is_some() {
                s.provider = provider;
                s.model = model;
            } else if model.is_some() {
                s.model = model;
            }
        })?)
    }

    /// The grants made in a chat ("allow for this chat"): tools first, then destinations.
    pub fn chat_grants(&self, conversation_id: &str) -> Result<Vec<ChatGrant>> {
        Ok(self.inner.store.chat_grants(conversation_id)?)
    }

    /// Takes a grant back: the next call of that tool (or to that destination) in this chat asks
    /// again. Returns the grants left.
    pub fn revoke_chat_grant(&self, conversation_id: &str, grant: &ChatGrant) -> Result<Vec<ChatGrant>> {
        if !self.inner.store.revoke_chat_grant(conversation_id, grant)? {
            let what = match grant {
                ChatGrant::Tool(t) => format!("The tool '{t}' is not allowed in this chat"),
                ChatGrant::Host(h) => format!("The destination '{h}' is not allowed in this chat"),
            };
            return Err(Error::new(ErrorKind::NotFound, format!("{what}; there is nothing to revoke.")));
        }
        self.chat_grants(conversation_id)
    }

    /// Fills what a turn in an existing chat leaves open from the chat's setup: its toolsets
    /// (unless `toolsets_given`), its parameters, and — for a chat without an agent, which runs
    /// on the agent's — its profile and model. Returns what the turn should say when the
    /// profile the chat used is gone.
    pub(crate) fn fill_from_setup(
        &self,
        conversation_id: &str,
        choices: &mut TurnChoices,
        toolsets_given: bool,
    ) -> Result<Option<String>> {
        let store = &self.inner.store;
        let setup = store.chat_setup(conversation_id)?;
        if !toolsets_given {
            choices.toolsets.clone_from(&setup.toolsets);
        }
        if choices.generation.is_none() {
            choices.generation = setup.generation;
        }
        let Some(provider) = setup.provider else { return Ok(None) };
        if choices.provider.is_some() || choices.agent.is_some() || store.agent(conversation_id)?.is_some() {
            return Ok(None);
        }
        if store.provider(&provider)?.is_none() {
            return Ok(Some(format!(
                "The profile '{provider}' this chat used no longer exists; the default profile answers."
            )));
        }
        choices.provider = Some(provider);
        if choices.model.is_none() {
            choices.model = setup.model;
        }
        Ok(None)
    }

    /// Regenerating: the chat's toolsets and parameters as they are now, unless `given` choices
    /// name their own.
    pub(crate) fn regenerate_with_setup(
        &self,
        conversation_id: &str,
        choices: &mut TurnChoices,
        given: bool,
    ) -> Result<()> {
        let setup = self.inner.store.chat_setup(conversation_id)?;
        if !given || choices.toolsets.is_empty() {
            choices.toolsets = setup.toolsets;
        }
        if !given || choices.generation.is_none() {
            choices.generation = setup.generation;
        }
        Ok(())
    }

    /// The budgets a turn runs under: its own (this turn alone) and its chat's, a running total
    /// started from what the chat spent before (every request of every branch, from the usage
    /// rows: steps are its requests, cost their priced total; wall time is counted per turn). A
    /// new chat starts with the default of Settings, kept as its own.
    pub(crate) fn turn_budget(
        &self,
        conversation_id: &str,
        new_chat: bool,
        settings: &crate::settings::Settings,
        turn: Option<switchboard_core::Budget>,
    ) -> Result<(switchboard_core::Budget, switchboard_core::ChatBudget)> {
        let limits = if new_chat {
            let default = settings.chats.budget;
            if !default.is_empty() {
                self.inner.store.update_chat_setup(conversation_id, |s| s.budget = Some(default))?;
            }
            default
        } else {
            self.inner.store.chat_setup(conversation_id)?.budget.unwrap_or_default()
        };
        let mut chat = switchboard_core::ChatBudget { limits, ..Default::default() };
        if !limits.is_empty() && !new_chat {
            let total = self.inner.store.conversation_usage(conversation_id)?.total;
            chat.before = switchboard_core::BudgetSpent {
                steps: total.requests,
                elapsed_ms: 0,
                cost_usd: total.cost_usd,
                cost_unknown: total.unpriced_requests > 0,
            };
        }
        Ok((turn.unwrap_or_default(), chat))
    }

    /// A continue at a chat's budget raises the chat's limit for the rest of the chat: kept in
    /// its setup, so the next turn does not pause at once.
    pub(crate) fn raise_chat_budget(
        &self,
        pause: &switchboard_core::BudgetPause,
        choice: switchboard_core::BudgetChoice,
    ) -> Result<()> {
        let switchboard_core::BudgetChoice::Continue { allowance } = choice else { return Ok(()) };
        if pause.scope != switchboard_core::BudgetScope::Chat || choice.check(pause.kind).is_err() {
            return Ok(());
        }
        self.inner.store.update_chat_setup(&pause.conversation_id, |s| {
            let limits = s.budget.unwrap_or_default();
            let raised = limits.raised(pause.kind, &pause.spent, allowance);
            s.budget = (!raised.is_empty() && raised.check().is_ok()).then_some(raised).or(s.budget);
        })?;
        Ok(())
    }

    /// Keeps what a turn runs with as the chat's setup.
    pub(crate) fn remember_setup(
        &self,
        conversation_id: &str,
        choices: &TurnChoices,
        profile: &str,
        model: &str,
    ) -> Result<()> {
        self.inner.store.update_chat_setup(conversation_id, |s| {
            s.toolsets.clone_from(&choices.toolsets);
            s.generation = choices.generation;
            s.provider = Some(profile.to_owned());
            s.model = Some(model.to_owned());
        })?;
        Ok(())
    }
}

/// A turn's toolsets (each once) and parameters are ones a chat's setup can keep: checked before
/// any row is written.
pub(crate) fn check_setup_choices(choices: &mut TurnChoices) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    choices.toolsets.retain(|t| seen.insert(t.clone()));
    let setup = switchboard_store::ChatSetup {
        toolsets: choices.toolsets.clone(),
        generation: choices.generation,
        budget: choices.budget,
        ..Default::default()
    };
    setup.check().map_err(Error::config)
}
