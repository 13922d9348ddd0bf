//! A chat's setup (the toolsets switched on in it, its own generation parameters, the profile and
//! model it last used), kept as JSON in `conversations.setup`, and the grants made in it ("allow
//! for this chat": tools, and destinations under [`CHAT_DESTINATION_PREFIX`]), kept in
//! `conversations.approved_tools`.
//!
//! Invariant: what is stored passed [`ChatSetup::check`]; a chat without a stored setup reads as
//! the empty one (every tool, the profile's parameters, the default profile). A grant revoked is
//! gone from the row before the call returns, so the next turn built from it asks again.

use super::{Store, from_json, to_json};
use crate::error::{Error, Result};
use rusqlite::{OptionalExtension, TransactionBehavior};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use switchboard_core::egress::CHAT_DESTINATION_PREFIX;
use switchboard_core::{Budget, GenerationOptions};

/// The most toolsets one chat may switch on.
pub const MAX_CHAT_TOOLSETS: usize = 64;
/// The longest toolset, profile or model name a setup keeps.
pub const MAX_SETUP_NAME_CHARS: usize = 200;

/// What a chat keeps between turns and across restarts, besides its agent, instructions and
/// switched-off tools (their own columns).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct ChatSetup {
    /// Toolsets switched on: the chat's turns get only their tools (with its agent's). Empty:
    /// every tool (or the agent's).
    pub toolsets: Vec<String>,
    /// The chat's own generation parameters over its profile's (`None`: the profile's).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub generation: Option<GenerationOptions>,
    /// The provider profile the chat last used.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub provider: Option<String>,
    /// The model the chat last used.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub model: Option<String>,
    /// The chat's budget for each of its turns (steps, time, cost; `None`: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub budget: Option<Budget>,
    /// The profile and model that write the chat's summaries when it is compacted (`None`: the
    /// chat's own model).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub summariser: Option<SummariserChoice>,
}

/// A profile and model picked to write a chat's summaries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct SummariserChoice {
    /// The provider profile.
    pub provider: String,
    /// The model on it.
    pub model: String,
}

impl ChatSetup {
    /// Whether a value is one the store keeps: at most [`MAX_CHAT_TOOLSETS`] distinct, non-blank
    /// toolset names, names of at most [`MAX_SETUP_NAME_CHARS`], parameters in range. The
    /// message names what is wrong.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.toolsets.len() > MAX_CHAT_TOOLSETS {
            return Err(format!("A chat can switch on at most {MAX_CHAT_TOOLSETS} toolsets."));
        }
        let mut seen = BTreeSet::new();
        for t in &self.toolsets {
            if t.trim().is_empty() {
                return Err("A toolset name cannot be empty.".into());
            }
            if !seen.insert(t) {
                return Err(format!("The toolset '{t}' is listed twice."));
            }
        }
        if let Some(s) = &self.summariser
            && (s.provider.trim().is_empty() || s.model.trim().is_empty())
        {
            return Err("The model that writes summaries needs both a profile and a model.".into());
        }
        let picked = self.summariser.iter().flat_map(|s| [&s.provider, &s.model]);
        let names = self.toolsets.iter().chain(&self.provider).chain(&self.model).chain(picked);
        if let Some(long) = names.into_iter().find(|n| n.chars().count() > MAX_SETUP_NAME_CHARS) {
            let start: String = long.chars().take(40).collect();
            return Err(format!("The name '{start}…' is longer than {MAX_SETUP_NAME_CHARS} characters."));
        }
        if let Some(g) = &self.generation {
            g.check()?;
        }
        if let Some(b) = &self.budget {
            b.check()?;
        }
        Ok(())
    }

    /// The same setup with parameters that set nothing stored as none.
    #[must_use]
    pub fn normalized(mut self) -> Self {
        if self.generation == Some(GenerationOptions::default()) {
            self.generation = None;
        }
        if self.budget.is_some_and(|b| b.is_empty()) {
            self.budget = None;
        }
        self
    }
}

/// One "allow for this chat" grant.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", tag = "kind", content = "name")]
pub enum ChatGrant {
    /// A tool that runs without asking in this chat.
    Tool(String),
    /// A destination (host) tools may send data to in this chat after it read untrusted content.
    Host(String),
}

impl ChatGrant {
    /// How it is kept among the chat's approved tools.
    fn stored(&self) -> String {
        match self {
            ChatGrant::Tool(name) => name.clone(),
            ChatGrant::Host(host) => format!("{CHAT_DESTINATION_PREFIX}{host}"),
        }
    }

    fn from_stored(entry: String) -> Self {
        match entry.strip_prefix(CHAT_DESTINATION_PREFIX) {
            Some(host) => ChatGrant::Host(host.to_owned()),
            None => ChatGrant::Tool(entry),
        }
    }
}

impl Store {
    /// A chat's setup (the empty one when nothing was stored).
    pub fn chat_setup(&self, conversation_id: &str) -> Result<ChatSetup> {
        let conn = self.conn();
        let json: Option<Option<String>> = conn
            .prepare_cached("SELECT setup FROM conversations WHERE id = ?1")?
            .query_row([conversation_id], |r| r.get(0))
            .optional()?;
        match json.ok_or_else(|| Error::not_found("conversation", conversation_id))? {
            None => Ok(ChatSetup::default()),
            Some(json) => from_json(&json, || format!("setup of conversation '{conversation_id}'")),
        }
    }

    /// Changes a chat's setup with `change` in one transaction and returns what is stored now.
    /// A result that fails [`ChatSetup::check`] is [`Error::Invalid`] and nothing changes.
    pub fn update_chat_setup(&self, conversation_id: &str, change: impl FnOnce(&mut ChatSetup)) -> Result<ChatSetup> {
        let mut conn = self.conn();
        // Read-modify-write: IMMEDIATE so another process cannot slip a write in between.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let json: Option<Option<String>> = tx
            .prepare_cached("SELECT setup FROM conversations WHERE id = ?1")?
            .query_row([conversation_id], |r| r.get(0))
            .optional()?;
        let mut setup = match json.ok_or_else(|| Error::not_found("conversation", conversation_id))? {
            None => ChatSetup::default(),
            Some(json) => from_json(&json, || format!("setup of conversation '{conversation_id}'"))?,
        };
        change(&mut setup);
        let setup = setup.normalized();
        setup.check().map_err(Error::Invalid)?;
        tx.execute(
            "UPDATE conversations SET setup = ?2 WHERE id = ?1",
            (conversation_id, to_json(&setup, "chat setup")?),
        )?;
        tx.commit()?;
        Ok(setup)
    }

    /// The grants made in a chat: tools first, then destinations, each by name.
    pub fn chat_grants(&self, conversation_id: &str) -> Result<Vec<ChatGrant>> {
        let mut grants: Vec<ChatGrant> =
            self.approved_tools(conversation_id)?.into_iter().map(ChatGrant::from_stored).collect();
        grants.sort();
        Ok(grants)
    }

    /// Takes a grant back; the next call of that tool (to that destination) asks again. `false`
    /// when the chat had no such grant (nothing changes).
    pub fn revoke_chat_grant(&self, conversation_id: &str, grant: &ChatGrant) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let json: String = tx
            .prepare_cached("SELECT approved_tools FROM conversations WHERE id = ?1")?
            .query_row([conversation_id], |r| r.get(0))
            .optional()?
            .ok_or_else(|| Error::not_found("conversation", conversation_id))?;
        let mut tools: BTreeSet<String> =
            from_json(&json, || format!("approved tools of conversation '{conversation_id}'"))?;
        if !tools.remove(&grant.stored()) {
            return Ok(false);
        }
        tx.execute(
            "UPDATE conversations SET approved_tools = ?2 WHERE id = ?1",
            (conversation_id, to_json(&tools, "approved tools")?),
        )?;
        tx.commit()?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setup_out_of_bounds_is_refused_with_what_is_wrong() {
        let ok = ChatSetup { toolsets: vec!["research".into()], ..ChatSetup::default() };
        assert_eq!(ok.check(), Ok(()));
        let twice = ChatSetup { toolsets: vec!["a".into(), "a".into()], ..ChatSetup::default() };
        assert!(twice.check().unwrap_err().contains("twice"));
        let blank = ChatSetup { toolsets: vec![" ".into()], ..ChatSetup::default() };
        assert!(blank.check().unwrap_err().contains("empty"));
        let many =
            ChatSetup { toolsets: (0..=MAX_CHAT_TOOLSETS).map(|i| i.to_string()).collect(), ..ChatSetup::default() };
        assert!(many.check().unwrap_err().contains("at most"));
        let long = ChatSetup { model: Some("m".repeat(MAX_SETUP_NAME_CHARS + 1)), ..ChatSetup::default() };
        assert!(long.check().unwrap_err().contains("longer"));
        let hot = ChatSetup {
            generation: Some(GenerationOptions { temperature: Some(3.0), ..GenerationOptions::default() }),
            ..ChatSetup::default()
        };
        assert!(hot.check().unwrap_err().contains("temperature"));
    }

    #[test]
    fn a_summariser_needs_a_profile_and_a_model_of_bounded_length() {
        let pick = |provider: &str, model: &str| ChatSetup {
            summariser: Some(SummariserChoice { provider: provider.into(), model: model.into() }),
            ..ChatSetup::default()
        };
        assert_eq!(pick("cheap", "small-model").check(), Ok(()));
        assert!(pick(" ", "small-model").check().unwrap_err().contains("both a profile and a model"));
        assert!(pick("cheap", "").check().unwrap_err().contains("both a profile and a model"));
        let long = "m".repeat(MAX_SETUP_NAME_CHARS + 1);
        assert!(pick("cheap", &long).check().unwrap_err().contains("longer"));
        assert!(pick(&long, "small").check().unwrap_err().contains("longer"));
        let json = serde_json::to_string(&pick("cheap", "small")).unwrap();
        assert!(json.contains(r#""summariser":{"provider":"cheap","model":"small"}"#), "{json}");
        assert!(!serde_json::to_string(&ChatSetup::default()).unwrap().contains("summariser"));
    }

    #[test]
    fn grants_keep_their_stored_form() {
        for g in [ChatGrant::Tool("shell".into()), ChatGrant::Host("example.net".into())] {
            assert_eq!(ChatGrant::from_stored(g.stored()), g);
        }
        assert_eq!(ChatGrant::Host("example.net".into()).stored(), "egress:example.net");
    }
}
