//! One way to build a turn, for a person's chat ([`crate::turns`]) and for an agent called as a
//! tool ([`crate::agents`]). Both get their engine and the rules of their [`TurnOptions`] from
//! [`Service::build_turn`], so the two cannot drift apart again:
//!
//! - **Tools and limits**: the turn's agent's and toolsets' ([`Service::agent_turn_setup`]), and
//!   an engine over them that reads tool keys through the turn's [`TurnKeys`] and masks every
//!   known secret with the turn's redactor (both shared with the agent calls inside the turn: a
//!   turn reads each key once).
//! - **Capability stripping**: what the model refuses is not sent — sampling settings
//!   (temperature, top-p) to OpenAI's reasoning models, reasoning controls to models without
//!   reasoning — whoever set them (the profile, or the chat over it).
//! - **Approvals**: the tools approved for the chat, and the destinations the person allowed
//!   in it through the egress question. A store that cannot say which is an error of the turn,
//!   never taken for "none approved".
//! - **Images**: a model known to see none is sent none of a tool's images; the result says
//!   they were left out (the history's parts are made in `turn_parts`, by the same rule).
//! - **No tools**: a model known to take none is offered none, and the turn says so once, in
//!   words for whoever reads it ([`Asker`]).
//!
//! **Instructions** ([`Instructions`]). A person's chat sends the custom instructions, then its
//! agent's, then the chat's own, then this turn's extra system prompt, blank parts left out. A
//! sub-agent sends its own agent's instructions only: it sees nothing of the chat that calls it
//! but the caller's message (its input schema says so), so it works the same from every chat
//! and anything it needs comes in that message. The engine adds, for both, the prompt notes of
//! the tools offered.

use crate::agents_file::{AgentConfig, AgentsFile};
use crate::keys::TurnKeys;
use crate::settings::Settings;
use crate::{Result, Service};
use std::collections::HashSet;
use std::sync::Arc;
use switchboard_core::egress::CHAT_DESTINATION_PREFIX;
use switchboard_core::{Engine, Exposure, GenerationOptions, Secrets, TurnOptions};
use switchboard_providers::ModelCapabilities;
use switchboard_store::ProviderProfile;

/// Who reads what the turn says about itself.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Asker<'a> {
    /// The person, in their chat.
    Person,
    /// The model that called the agent's instance `Name[i]`, and the person in its tool card.
    Agent {
        /// `Name[i]`.
        instance: &'a str,
    },
}

/// What a turn is built from.
pub(crate) struct TurnSpec<'a> {
    /// The turn's keys: the person's turn's, shared by every agent call inside it.
    pub(crate) keys: &'a Arc<TurnKeys>,
    /// The settings the turn runs under.
    pub(crate) settings: &'a Settings,
    /// The profile that answers.
    pub(crate) profile: &'a ProviderProfile,
    /// The model that answers.
    pub(crate) model: &'a str,
    /// The conversation the turn belongs to (an agent call: its parent's).
    pub(crate) conversation_id: &'a str,
    /// The agents file the agent and toolsets come from.
    pub(crate) file: &'a AgentsFile,
    /// The agent the turn runs, if any.
    pub(crate) agent: Option<&'a AgentConfig>,
    /// The agents running above it, outermost first (none for a person's chat).
    pub(crate) above: &'a [String],
    /// The chat's extra toolsets.
    pub(crate) toolsets: &'a [String],
    /// The chat's generation settings over the profile's (a person's chat only).
    pub(crate) generation: Option<&'a GenerationOptions>,
    /// Who reads what the turn says.
    pub(crate) asker: Asker<'a>,
}

/// A turn ready to run: its engine, and its options with every rule above applied (the rest
/// default, for the person's choices to fill).
pub(crate) struct BuiltTurn {
    pub(crate) engine: Engine,
    pub(crate) options: TurnOptions,
}

impl Service {
    /// Builds a turn from `spec`. Fails only when the store cannot say which tools the chat
    /// approved.
    pub(crate) fn build_turn(&self, spec: TurnSpec<'_>) -> Result<BuiltTurn> {
        let setup = self.agent_turn_setup(spec.file, spec.agent, spec.above, spec.toolsets, spec.settings, spec.keys);
        let secrets: Arc<dyn Secrets> = spec.keys.clone();
        let engine =
            Engine::new(setup.config, setup.registry, secrets).with_redactor(Arc::new(spec.keys.redactor().clone()));
        let caps = self.model_capabilities(spec.profile, spec.model);
        // Destinations the person allowed through the egress question are kept with the chat's
        // approved tools, under a prefix no tool name has.
        let (destinations, approved_tools): (HashSet<String>, HashSet<String>) = self
            .inner
            .store
            .approved_tools(spec.conversation_id)?
            .into_iter()
            .partition(|t| t.starts_with(CHAT_DESTINATION_PREFIX));
        let known = destinations.iter().map(|d| d[CHAT_DESTINATION_PREFIX.len()..].to_owned()).collect();
        // The chat's pick writes its summaries (a sub-agent's: its own model).
        let summariser = match spec.asker {
            Asker::Person => {
                self.chat_summariser(spec.conversation_id, spec.profile, spec.model, spec.keys, spec.settings)?
            }
            Asker::Agent { .. } => Default::default(),
        };
        let options = TurnOptions {
            approved_tools,
            exposure: Exposure { untrusted: None, known },
            generation: accepted_generation(&spec.profile.options.generation, spec.generation, caps),
            tools_unsupported: (caps.tools == Some(false)).then(|| no_tools(spec.model, spec.profile, spec.asker)),
            // Nothing is sent to a model that cannot take it: a tool's images, for one that
            // cannot see (the person's attachments are refused before sending, `turn_parts`).
            tool_images_left_out: (caps.images == Some(false))
                .then(|| crate::turn_parts::tool_images_left_out(spec.model)),
            // Why the chat's summariser pick is not used is said by the compaction that falls
            // back (its boundary and stored row), not at the start of every turn.
            unavailable: setup.unavailable,
            summariser: summariser.model,
            summariser_provider: summariser.provider.map(switchboard_core::SummariserProvider),
            summariser_context: summariser.limits,
            summariser_fallback: summariser.notice,
            // What each request costs (None: unknown; a local server is free).
            prices: self.model_spec(spec.profile, spec.model).spec.prices,
            context: self.context_limits(spec.profile, spec.model, spec.settings),
            // Over the conversation's stored counts: the first request tokenizes only what is new.
            counter: Some(crate::token_cache::turn_counter(
                &self.inner.store,
                spec.conversation_id,
                &spec.profile.kind,
                spec.model,
            )),
            reported: self.reported_context(spec.conversation_id, spec.model, spec.asker),
            // What its tools' MCP servers ask to have completed runs on the turn's model.
            sampler: Some(switchboard_core::TurnSampler(Arc::new(self.sampler(spec.keys, spec.profile, spec.model)))),
            ..TurnOptions::default()
        };
        Ok(BuiltTurn { engine, options })
    }
}

/// The generation settings a turn sends: the profile's, overridden by the chat's, without what
/// the model refuses.
pub(crate) fn accepted_generation(
    profile: &GenerationOptions,
    chat: Option<&GenerationOptions>,
    caps: ModelCapabilities,
) -> GenerationOptions {
    let mut generation = match chat {
        Some(chat) => profile.overridden_by(chat),
        None => *profile,
    };
    if caps.sampling == Some(false) {
        // OpenAI's reasoning models refuse sampling settings.
        generation.temperature = None;
        generation.top_p = None;
    }
    if caps.reasoning == Some(false) {
        // Models without reasoning refuse its controls.
        generation.reasoning_effort = None;
        generation.thinking_budget = None;
    }
    generation
}

/// What a turn on a model without tools says, once.
fn no_tools(model: &str, profile: &ProviderProfile, asker: Asker<'_>) -> String {
    match asker {
        Asker::Person => format!(
            "{model} does not take tools, so none are offered. If it does, set Tools to on in the profile '{}'.",
            profile.name
        ),
        Asker::Agent { instance } => format!("{model} does not take tools, so {instance} has none."),
    }
}

/// Which instructions a turn sends as its system prompt (see the module's rule).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Instructions<'a> {
    /// A person's chat.
    Chat {
        /// The custom instructions of Settings, for every chat.
        custom: &'a str,
        /// The instructions of the agent the chat runs.
        agent: Option<&'a str>,
        /// The chat's own, kept from its first turn.
        chat: Option<&'a str>,
        /// This turn's extra system prompt.
        turn: Option<&'a str>,
    },
    /// An agent called as a tool: its own instructions only.
    SubAgent {
        /// The agent's instructions.
        agent: &'a str,
    },
}

impl Instructions<'_> {
    /// The system prompt, blank parts left out; `None` when nothing is left.
    pub(crate) fn system_prompt(self) -> Option<String> {
        let parts: Vec<&str> = match self {
            Instructions::Chat { custom, agent, chat, turn } => {
                [Some(custom), agent, chat, turn].into_iter().flatten().collect()
            }
            Instructions::SubAgent { agent } => vec![agent],
        };
        let parts: Vec<&str> = parts.into_iter().map(str::trim).filter(|p| !p.is_empty()).collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_sends_every_part_in_order_and_a_sub_agent_only_its_own() {
        let chat =
            Instructions::Chat { custom: "Custom.", agent: Some(" Agent. "), chat: Some(""), turn: Some("Turn.") };
        assert_eq!(chat.system_prompt().as_deref(), Some("Custom.\n\nAgent.\n\nTurn."));
        let blank = Instructions::Chat { custom: " ", agent: None, chat: None, turn: None };
        assert_eq!(blank.system_prompt(), None);
        assert_eq!(Instructions::SubAgent { agent: " Scout. " }.system_prompt().as_deref(), Some("Scout."));
        assert_eq!(Instructions::SubAgent { agent: "" }.system_prompt(), None);
    }

    #[test]
    fn what_a_model_refuses_is_not_sent_whoever_set_it() {
        let profile = GenerationOptions {
            temperature: Some(0.7),
            top_p: Some(0.9),
            reasoning_effort: Some(switchboard_core::ReasoningEffort::High),
            thinking_budget: Some(2048),
            max_output_tokens: Some(100),
        };
        let chat = GenerationOptions { temperature: Some(0.2), ..Default::default() };
        let refuses_sampling = ModelCapabilities { sampling: Some(false), ..Default::default() };
        let sent = accepted_generation(&profile, Some(&chat), refuses_sampling);
        assert_eq!((sent.temperature, sent.top_p), (None, None));
        assert_eq!((sent.reasoning_effort, sent.max_output_tokens), (profile.reasoning_effort, Some(100)));
        let no_reasoning = ModelCapabilities { reasoning: Some(false), ..Default::default() };
        let sent = accepted_generation(&profile, Some(&chat), no_reasoning);
        assert_eq!((sent.reasoning_effort, sent.thinking_budget), (None, None));
        assert_eq!((sent.temperature, sent.top_p), (Some(0.2), Some(0.9)), "the chat's over the profile's");
        assert_eq!(accepted_generation(&profile, None, ModelCapabilities::default()), profile, "unknown: all of it");
    }
}
