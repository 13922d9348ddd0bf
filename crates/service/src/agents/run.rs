//! One call of an agent: the child's turn, built by the same [`crate::Service::build_turn`] as a
//! person's (capabilities, approvals, redactor, keys: the parent turn's), with its own agent's
//! instructions only ([`Instructions::SubAgent`]), run on the same engine with its events nested
//! into the parent's call, its approvals asked through the parent's approver, and its outcome
//! turned into the tool's result. Whatever keeps it from starting (its profile gone, the store
//! unreadable) is the call's error, said to the calling model and in the tool card.

use super::no_agent;
use super::tool::{AgentTool, question};
use crate::Error;
use crate::ipc::TurnChoices;
use crate::turn_setup::{Asker, Instructions, TurnSpec};
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};
use switchboard_core::turn::{ApprovalDecision, ApprovalRequest, Approver};
use switchboard_core::{BudgetChoice, BudgetPause};
use switchboard_core::{ChatEvent, EventSink, FinishReason, Message, ToolContext, ToolError, ToolOutput, TurnInput};
use switchboard_core::{ElicitationAnswer, ElicitationRequest, SamplingDecision, SamplingRequest};

impl AgentTool {
    pub(super) async fn run(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> std::result::Result<ToolOutput, ToolError> {
        if let Some(why) = self.refused() {
            return Err(ToolError::Failed(why));
        }
        let instance = self.instance();
        let service = &self.service;
        let cannot = |e: Error| ToolError::Failed(format!("{instance} could not start: {}", e.message));
        let file = service.agents_file().map_err(cannot)?;
        let config = file.agent(&self.name).cloned().ok_or_else(|| cannot(no_agent(&self.name)))?;
        let choices =
            TurnChoices { provider: config.profile.clone(), model: config.model.clone(), ..TurnChoices::default() };
        let resolved = service.provider_factory().resolve_with(&choices, &self.keys).map_err(cannot)?;
        let settings = service.settings().map_err(cannot)?;
        let built = service
            .build_turn(TurnSpec {
                keys: &self.keys,
                settings: &settings,
                profile: &resolved.profile,
                model: &resolved.model,
                conversation_id: &ctx.conversation_id,
                file: &file,
                agent: Some(&config),
                above: &self.chain,
                toolsets: &[],
                generation: None,
                asker: Asker::Agent { instance: &instance },
            })
            .map_err(cannot)?;
        // The child starts where its caller's context is: tainted when the caller's is (its
        // question may carry what the caller read), knowing what the person has used.
        let mut options = built.options;
        let caller = ctx.exposure();
        options.exposure.untrusted.clone_from(&caller.untrusted);
        options.exposure.known.extend(caller.known.iter().cloned());
        // The child's spend counts toward its caller's budget, under the caller's limits.
        options.meter = Some(ctx.meter());
        let input = TurnInput {
            conversation_id: ctx.conversation_id.clone(),
            user_message_id: format!("{}/{instance}/question", ctx.call_id),
            message_id: format!("{}/{instance}", ctx.call_id),
            provider_name: resolved.profile.name.clone(),
            model: resolved.model.clone(),
            system_prompt: Instructions::SubAgent { agent: &config.instructions }.system_prompt(),
            history: vec![Message::user(question(&args))],
            options,
        };
        let sink = Arc::new(Nesting {
            ctx: ctx.clone(),
            instance: instance.clone(),
            prefix: format!("{}/{instance}/", ctx.call_id),
            takes_control: config.takes_control,
            answer: Mutex::default(),
        });
        let approver = Arc::new(Prefixed { inner: ctx.approver(), prefix: sink.prefix.clone() });
        let outcome = built
            .engine
            .run_turn(resolved.provider.as_ref(), input, sink.clone(), approver, ctx.cancel.child_token())
            .await;
        let answer = sink.answer.lock().unwrap_or_else(|p| p.into_inner()).text();
        // What the child read comes back with its answer: untrusted if any of it was.
        let read = outcome.read_untrusted.clone();
        let mark = |output: ToolOutput| match &read {
            Some(source) => output.untrusted(source.clone()),
            None => output,
        };
        let so_far = |what: String| {
            if answer.trim().is_empty() { what } else { format!("{what} What it wrote before that:\n\n{answer}") }
        };
        match outcome.finish_reason {
            FinishReason::Cancelled => Err(ToolError::Cancelled),
            FinishReason::Budget if answer.trim().is_empty() => {
                Err(ToolError::Failed(format!("{instance} stopped at the budget before it answered.")))
            }
            FinishReason::Budget => {
                Ok(mark(ToolOutput::text(format!("{answer}\n\n({instance} stopped at the budget.)"))))
            }
            FinishReason::Error => {
                let message = outcome.error.map(|e| e.message).unwrap_or_else(|| "it failed".into());
                Err(ToolError::Failed(so_far(format!("{instance} failed: {message}"))))
            }
            FinishReason::MaxIterations => {
                let steps = config.max_iterations.unwrap_or(settings.engine_config().max_iterations);
                let limit = format!("{instance} used all of its {steps} steps");
                let last = sink.answer.lock().unwrap_or_else(|p| p.into_inner()).last.clone();
                if last.trim().is_empty() {
                    Err(ToolError::Failed(so_far(format!("{limit} without a final answer."))))
                } else {
                    Ok(mark(ToolOutput::text(format!("{last}\n\n({limit}; this is what it had then.)"))))
                }
            }
            _ if answer.trim().is_empty() => Err(ToolError::Failed(format!("{instance} finished without an answer."))),
            _ => Ok(mark(ToolOutput::text(answer))),
        }
    }
}

/// The text of a child's answer: what it wrote after its last tool call (its final answer),
/// or everything when that is empty.
#[derive(Default)]
struct Answer {
    all: String,
    last: String,
}

impl Answer {
    fn text(&self) -> String {
        if self.last.trim().is_empty() { self.all.clone() } else { self.last.clone() }
    }
}

/// The child's events, nested into the parent's call as `Name[i]`; approval ids carry the
/// call's prefix at every depth, as [`Prefixed`] registers them.
struct Nesting {
    ctx: ToolContext,
    instance: String,
    prefix: String,
    takes_control: bool,
    answer: Mutex<Answer>,
}

impl EventSink for Nesting {
    fn emit(&self, mut event: ChatEvent) {
        match &event {
            // For the store of the child's own turn only; nothing keeps it.
            ChatEvent::ProviderState { .. } => return,
            ChatEvent::TextDelta { text } => {
                let mut answer = self.answer.lock().unwrap_or_else(|p| p.into_inner());
                answer.all.push_str(text);
                answer.last.push_str(text);
                if self.takes_control {
                    self.ctx.answer(text.clone());
                }
            }
            ChatEvent::ToolCall { .. } => self.answer.lock().unwrap_or_else(|p| p.into_inner()).last.clear(),
            _ => {}
        }
        prefix_approvals(&mut event, &self.prefix);
        self.ctx.nested(self.instance.clone(), event);
    }
}

/// Puts `prefix` before the id of approval and question events, at any depth.
fn prefix_approvals(event: &mut ChatEvent, prefix: &str) {
    match event {
        ChatEvent::ApprovalRequested { id, .. }
        | ChatEvent::ApprovalResolved { id, .. }
        | ChatEvent::BudgetPaused { id, .. }
        | ChatEvent::BudgetResolved { id, .. } => id.insert_str(0, prefix),
        ChatEvent::ElicitationRequested { request_id, .. }
        | ChatEvent::ElicitationResolved { request_id, .. }
        | ChatEvent::SamplingRequested { request_id, .. }
        | ChatEvent::SamplingResolved { request_id, .. } => request_id.insert_str(0, prefix),
        ChatEvent::ToolProgress { event: Some(inner), .. } => prefix_approvals(inner, prefix),
        _ => {}
    }
}

/// The parent's approver, with the child's call ids made unique (two children, or a child and
/// its parent, may use the same ids).
struct Prefixed {
    inner: Arc<dyn Approver>,
    prefix: String,
}

impl Approver for Prefixed {
    fn decide(&self, mut request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        request.call_id.insert_str(0, &self.prefix);
        self.inner.decide(request)
    }

    fn budget(&self, mut pause: BudgetPause) -> BoxFuture<'_, BudgetChoice> {
        pause.id.insert_str(0, &self.prefix);
        self.inner.budget(pause)
    }

    fn elicit(&self, mut request: ElicitationRequest) -> BoxFuture<'_, ElicitationAnswer> {
        request.request_id.insert_str(0, &self.prefix);
        self.inner.elicit(request)
    }

    fn sample(&self, mut request: SamplingRequest) -> BoxFuture<'_, SamplingDecision> {
        request.request_id.insert_str(0, &self.prefix);
        self.inner.sample(request)
    }
}
