//! Completions a tool's MCP server asks for (`sampling/createMessage`), run once the person
//! approved one: [`ChatSampler`] is a turn's [`Sampler`]. It runs on the chat's profile and model
//! (or the profile the server's entry names under `sampling`), with tools off, on an engine of
//! its own over an empty registry — one nested run of the same loop, its events nested into the
//! calling tool's card as instance `sampling[n]` (stored with the call like a sub-agent's run),
//! its usage counted toward the chat's turn and its budget meter.
//!
//! Invariants: a completion never writes more than the model's output limit (the request's
//! `maxTokens` is capped before the person is asked, and the card shows the cap); it offers no
//! tool; its text goes back to the server only, never into the chat's answer.

use crate::ipc::TurnChoices;
use crate::keys::TurnKeys;
use crate::{Result, Service};
use futures::FutureExt;
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use switchboard_core::approval::FixedApprover;
use switchboard_core::tool::Sampler;
use switchboard_core::{
    ApprovalDecision, ChatEvent, Engine, EventSink, FinishReason, Message, Sampled, SamplingRequest, SamplingRole,
    ToolContext, ToolRegistry, TurnInput, TurnOptions,
};
use switchboard_store::ProviderProfile;

/// The output limit used when the model's is not known at all.
const UNKNOWN_OUTPUT_LIMIT: u32 = 4096;

/// Runs a turn's approved sampling requests.
pub(crate) struct ChatSampler {
    pub(crate) service: Service,
    pub(crate) keys: Arc<TurnKeys>,
    /// The calling turn's profile and model.
    pub(crate) profile: ProviderProfile,
    pub(crate) model: String,
}

impl ChatSampler {
    /// The profile and model that answer `server`: its entry's choice, else the turn's.
    fn target(&self, server: &str) -> Result<(ProviderProfile, String)> {
        let chosen =
            self.service.mcp_config().ok().and_then(|c| c.mcp_servers.get(server).and_then(|s| s.sampling.clone()));
        match chosen {
            Some(choice) => {
                let profile = self.service.profile(Some(&choice.profile))?;
                let model = choice.model.or_else(|| profile.model.clone()).unwrap_or_else(|| self.model.clone());
                Ok((profile, model))
            }
            None => Ok((self.profile.clone(), self.model.clone())),
        }
    }
}

impl Sampler for ChatSampler {
    fn max_tokens(&self, server: &str) -> u32 {
        let Ok((profile, model)) = self.target(server) else { return UNKNOWN_OUTPUT_LIMIT };
        let spec = self.service.model_spec(&profile, &model).spec;
        let limit = spec.max_output.map_or(UNKNOWN_OUTPUT_LIMIT, |m| u32::try_from(m).unwrap_or(u32::MAX));
        // The profile's own cap, when it sets one, is lower still.
        match profile.options.generation.max_output_tokens {
            Some(set) => limit.min(set),
            None => limit,
        }
    }

    fn run(
        &self,
        request: SamplingRequest,
        ctx: ToolContext,
    ) -> BoxFuture<'static, std::result::Result<Sampled, String>> {
        let target = self.target(&request.server);
        let (service, keys) = (self.service.clone(), Arc::clone(&self.keys));
        async move {
            let (profile, model) = target.map_err(|e| e.message)?;
            let choices =
                TurnChoices { provider: Some(profile.name.clone()), model: Some(model), ..TurnChoices::default() };
            let resolved = service.provider_factory().resolve_with(&choices, &keys).map_err(|e| e.message)?;
            let settings = service.settings().map_err(|e| e.message)?;
            let engine = Engine::new(settings.engine_config(), Arc::new(ToolRegistry::new()), keys.clone())
                .with_redactor(Arc::new(keys.redactor().clone()));
            let mut generation = resolved.profile.options.generation;
            generation.max_output_tokens = Some(request.max_tokens);
            if request.temperature.is_some() {
                generation.temperature = request.temperature.map(f64::from);
            }
            let caps = service.model_capabilities(&resolved.profile, &resolved.model);
            let generation = crate::turn_setup::accepted_generation(&generation, None, caps);
            let options = TurnOptions {
                use_tools: false,
                generation,
                prices: service.model_spec(&resolved.profile, &resolved.model).spec.prices,
                context: service.context_limits(&resolved.profile, &resolved.model, &settings),
                meter: Some(ctx.meter()),
                ..TurnOptions::default()
            };
            let n = request.request_id.rsplit('-').next().unwrap_or("1").to_owned();
            let instance = format!("sampling[{n}]");
            let history = request
                .messages
                .iter()
                .map(|m| match m.role {
                    SamplingRole::User => Message::User {
                        text: m.text.clone(),
                        parts: m
                            .images
                            .iter()
                            .enumerate()
                            .map(|(i, image)| switchboard_core::types::Part::Image {
                                name: format!("image-{}", i + 1),
                                image: image.clone(),
                            })
                            .collect(),
                    },
                    SamplingRole::Assistant => {
                        Message::Assistant { text: m.text.clone(), tool_calls: Vec::new(), state: None }
                    }
                })
                .collect();
            let input = TurnInput {
                conversation_id: ctx.conversation_id.clone(),
                user_message_id: format!("{}/{instance}/question", ctx.call_id),
                message_id: format!("{}/{instance}", ctx.call_id),
                provider_name: resolved.profile.name.clone(),
                model: resolved.model.clone(),
                system_prompt: request.system_prompt.clone(),
                history,
                options,
            };
            let sink = Arc::new(Nested { ctx: ctx.clone(), instance, text: Mutex::default() });
            let outcome = engine
                .run_turn(
                    resolved.provider.as_ref(),
                    input,
                    sink.clone(),
                    Arc::new(FixedApprover(ApprovalDecision::Deny)),
                    ctx.cancel.child_token(),
                )
                .await;
            let text = sink.text.lock().unwrap_or_else(|p| p.into_inner()).clone();
            match outcome.finish_reason {
                FinishReason::Cancelled => Err("The completion was stopped.".into()),
                FinishReason::Error => Err(outcome
                    .error
                    .map(|e| format!("The completion failed: {}", e.message))
                    .unwrap_or_else(|| "The completion failed.".into())),
                FinishReason::Budget => Err("The completion stopped at the chat's budget.".into()),
                reason => Ok(Sampled { text, model: resolved.model, truncated: reason == FinishReason::Length }),
            }
        }
        .boxed()
    }
}

/// The completion's events, nested into the calling tool's card; its text kept for the server.
struct Nested {
    ctx: ToolContext,
    instance: String,
    text: Mutex<String>,
}

impl EventSink for Nested {
    fn emit(&self, event: ChatEvent) {
        match &event {
            ChatEvent::ProviderState { .. } => return,
            ChatEvent::TextDelta { text } => self.text.lock().unwrap_or_else(|p| p.into_inner()).push_str(text),
            _ => {}
        }
        self.ctx.nested(self.instance.clone(), event);
    }
}

impl Service {
    /// The sampler of a turn on `profile` and `model`.
    pub(crate) fn sampler(&self, keys: &Arc<TurnKeys>, profile: &ProviderProfile, model: &str) -> ChatSampler {
        ChatSampler { service: self.clone(), keys: Arc::clone(keys), profile: profile.clone(), model: model.to_owned() }
    }
}
