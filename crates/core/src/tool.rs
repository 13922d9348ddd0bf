//! The tool abstraction: the [`Tool`] trait, the [`ToolContext`] a call gets (with what its
//! server may ask of the person: [`ToolContext::elicit`], [`ToolContext::sample`] on the turn's
//! [`Sampler`]) and the person's [`Secrets`]. What a tool is as data ([`ToolDef`]) lives in [`crate::vocab`] and is re-exported here.

use crate::approval::{ApprovalDecision, Approver, FixedApprover};
use crate::ask::{ElicitationAction, ElicitationAnswer, ElicitationMode, ElicitationRequest, Sampled};
use crate::ask::{SamplingDecision, SamplingRequest};
use crate::egress::{Egress, Exposure};
use crate::event::{ChatEvent, EventSink};
use futures::future::BoxFuture;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub use crate::vocab::{ApprovalPolicy, ToolDef, ToolError, ToolImage, ToolOutput, ToolSource};

/// A secret value. Its `Debug` never shows it; only [`SecretValue::expose`] does, at the point
/// where it goes into an outgoing request.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for an outgoing request header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The last four characters, which settings may show.
    pub fn last4(&self) -> String {
        let n = self.0.chars().count();
        self.0.chars().skip(n.saturating_sub(4)).collect()
    }
}

impl std::fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretValue(<redacted>)")
    }
}

/// Read access to the person's secrets, for tools that need a key (web search).
pub trait Secrets: Send + Sync {
    /// The secret stored under `name`, `Ok(None)` when none is set, `Err` with an explanation when
    /// the store cannot be read (locked keychain).
    fn get(&self, name: &str) -> Result<Option<SecretValue>, String>;
}

/// A secrets accessor with nothing in it.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSecrets;

impl Secrets for NoSecrets {
    fn get(&self, _name: &str) -> Result<Option<SecretValue>, String> {
        Ok(None)
    }
}

/// Runs an approved sampling request on the turn's model, tools off (the service supplies it
/// per turn: [`crate::TurnOptions::sampler`]).
pub trait Sampler: Send + Sync {
    /// The most output tokens a completion for `server` may use on this turn's model.
    fn max_tokens(&self, server: &str) -> u32;
    /// Runs `request` (approved, possibly edited), its events nested into `ctx`'s card and its
    /// usage counted toward the calling turn (usage and budget meter). `Err` says why in words.
    fn run(&self, request: SamplingRequest, ctx: ToolContext) -> BoxFuture<'static, Result<Sampled, String>>;
}

/// What a tool call gets besides its arguments.
#[derive(Clone)]
pub struct ToolContext {
    /// The call id.
    pub call_id: String,
    /// The conversation the call belongs to.
    pub conversation_id: String,
    /// The person's secrets.
    pub secrets: Arc<dyn Secrets>,
    /// Fires when the turn is stopped or the call timed out; tools should stop promptly.
    pub cancel: CancellationToken,
    pub(crate) events: Arc<dyn EventSink>,
    /// The turn's approver: a tool that runs calls of its own (a sub-agent) asks the person
    /// through it, exactly as the turn does.
    pub(crate) approver: Arc<dyn Approver>,
    /// What the turn's context had read when the call was made, and the destinations the
    /// person has used: a sub-agent's turn starts from it.
    pub(crate) exposure: Arc<Exposure>,
    /// The turn's budget meter: a sub-agent's turn counts toward it.
    pub(crate) meter: Arc<crate::budget::BudgetMeter>,
    /// Runs the completions a tool's server asks for; `None`: none are run (declined).
    pub(crate) sampler: Option<Arc<dyn Sampler>>,
}

impl ToolContext {
    /// A context for calling a tool outside the loop (tests, the CLI's `tools call`).
    pub fn detached(secrets: Arc<dyn Secrets>) -> Self {
        Self {
            call_id: "detached".into(),
            conversation_id: String::new(),
            secrets,
            cancel: CancellationToken::new(),
            events: Arc::new(|_| {}),
            // Outside a turn nobody can be asked: what needs the person is refused.
            approver: Arc::new(FixedApprover(ApprovalDecision::Deny)),
            exposure: Arc::default(),
            meter: Arc::new(crate::budget::BudgetMeter::new(crate::budget::Budget::default())),
            sampler: None,
        }
    }

    /// This context asking `approver` (outside the loop: a test, the conformance client).
    pub fn with_approver(self, approver: Arc<dyn Approver>) -> Self {
        Self { approver, ..self }
    }

    /// This context running completions on `sampler`.
    pub fn with_sampler(self, sampler: Arc<dyn Sampler>) -> Self {
        Self { sampler: Some(sampler), ..self }
    }

    /// Whether a server's request for a completion can be run here.
    pub fn can_sample(&self) -> bool {
        self.sampler.is_some()
    }

    /// Asks the person for what a tool's server needs (`elicitationRequested`, then
    /// `elicitationResolved`); a stopped call answers `cancel`, a request with `refused` set is
    /// declined without asking. An accepted form's content comes back checked and with its
    /// defaults filled in ([`crate::ElicitationForm::complete`]); content that does not fit the
    /// form is never sent: the request is cancelled.
    pub async fn elicit(&self, request: ElicitationRequest) -> ElicitationAnswer {
        let requested = ChatEvent::ElicitationRequested {
            call_id: request.call_id.clone(),
            request_id: request.request_id.clone(),
            server: request.server.clone(),
            tool: request.tool.clone(),
            message: request.message.clone(),
            mode: request.mode,
            fields: request.form.fields.clone(),
            url: request.url.clone(),
            refused: request.refused.clone(),
        };
        let (call_id, request_id) = (request.call_id.clone(), request.request_id.clone());
        let answer = if request.refused.is_some() {
            self.events.emit(requested);
            ElicitationAnswer::decline()
        } else {
            let form = request.form.clone();
            let mode = request.mode;
            let waiting = self.approver.elicit(request);
            self.events.emit(requested);
            self.events.flush();
            let answer = tokio::select! {
                a = waiting => a,
                () = self.cancel.cancelled() => ElicitationAnswer::cancel(),
            };
            match (answer.action, mode) {
                (ElicitationAction::Accept, ElicitationMode::Form) => {
                    match form.complete(&answer.content.unwrap_or_default()) {
                        Ok(content) => ElicitationAnswer { action: ElicitationAction::Accept, content: Some(content) },
                        Err(why) => {
                            tracing::warn!(%why, "an answer that does not fit the form is not sent");
                            ElicitationAnswer::cancel()
                        }
                    }
                }
                (ElicitationAction::Accept, ElicitationMode::Url) => {
                    ElicitationAnswer { action: ElicitationAction::Accept, content: None }
                }
                (action, _) => ElicitationAnswer { action, content: None },
            }
        };
        self.events.emit(ChatEvent::ElicitationResolved { call_id, request_id, action: answer.action });
        answer
    }

    /// Asks the person about a server's request for a completion (`samplingRequested`, then
    /// `samplingResolved`; `max_tokens` capped to what the turn's model may write first) and,
    /// approved, runs it on the turn's [`Sampler`]. `Err` says why nothing was made: no sampler
    /// here, the person denied it, the call stopped, or the completion failed.
    pub async fn sample(&self, mut request: SamplingRequest) -> Result<Sampled, String> {
        let Some(sampler) = self.sampler.clone() else {
            return Err("Switchboard runs completions for a server only during a chat's tool call.".into());
        };
        let cap = sampler.max_tokens(&request.server).max(1);
        if request.max_tokens > cap {
            request.requested_max_tokens = Some(request.max_tokens);
            request.max_tokens = cap;
        }
        request.max_tokens = request.max_tokens.max(1);
        let (call_id, request_id) = (request.call_id.clone(), request.request_id.clone());
        let requested = ChatEvent::SamplingRequested {
            call_id: call_id.clone(),
            request_id: request_id.clone(),
            server: request.server.clone(),
            tool: request.tool.clone(),
            messages: request.messages.clone(),
            system_prompt: request.system_prompt.clone(),
            max_tokens: request.max_tokens,
            requested_max_tokens: request.requested_max_tokens,
            model_preferences: request.model_preferences.clone(),
        };
        let waiting = self.approver.sample(request.clone());
        self.events.emit(requested);
        self.events.flush();
        let (decision, stopped) = tokio::select! {
            d = waiting => (d, false),
            () = self.cancel.cancelled() => (SamplingDecision::Deny, true),
        };
        let approved = matches!(decision, SamplingDecision::Approve { .. });
        self.events.emit(ChatEvent::SamplingResolved { call_id, request_id, approved });
        match decision {
            SamplingDecision::Deny if stopped => Err("The call was stopped before the person decided.".into()),
            SamplingDecision::Deny => Err("The person declined the request for a completion.".into()),
            SamplingDecision::Approve { messages } => {
                if let Some(edited) = messages {
                    // The person edits text; the images stay with the message they were in.
                    let images: Vec<_> = request.messages.iter().map(|m| m.images.clone()).collect();
                    request.messages = edited
                        .into_iter()
                        .enumerate()
                        .map(|(i, mut m)| {
                            m.images = images.get(i).cloned().unwrap_or_default();
                            m
                        })
                        .collect();
                }
                sampler.run(request, self.clone()).await
            }
        }
    }

    /// What the calling turn's context had read and where the person has sent things, for a
    /// tool that runs a turn of its own (a sub-agent's starts from it).
    pub fn exposure(&self) -> &Exposure {
        &self.exposure
    }

    /// The turn's approver, for a tool whose own calls need the person (a sub-agent's turn).
    pub fn approver(&self) -> Arc<dyn Approver> {
        Arc::clone(&self.approver)
    }

    /// The turn's budget meter: a sub-agent's turn counts toward it (`TurnOptions::meter`).
    pub fn meter(&self) -> Arc<crate::budget::BudgetMeter> {
        Arc::clone(&self.meter)
    }

    /// A context outside the loop whose events (progress) go to `events`.
    pub fn detached_with_events(secrets: Arc<dyn Secrets>, events: Arc<dyn EventSink>) -> Self {
        Self { events, ..Self::detached(secrets) }
    }

    /// Reports a line of progress.
    pub fn progress(&self, text: impl Into<String>) {
        self.events.emit(ChatEvent::ToolProgress {
            id: self.call_id.clone(),
            instance: None,
            text: Some(text.into()),
            event: None,
        });
    }

    /// Forwards an event of a sub-agent instance (`Name[i]`).
    pub fn nested(&self, instance: impl Into<String>, event: ChatEvent) {
        self.events.emit(ChatEvent::ToolProgress {
            id: self.call_id.clone(),
            instance: Some(instance.into()),
            text: None,
            event: Some(Box::new(event)),
        });
    }

    /// For control-taking tools: streams text as the turn's answer.
    pub fn answer(&self, text: impl Into<String>) {
        self.events.emit(ChatEvent::TextDelta { text: text.into() });
    }
}

/// Masks known secret values in text that came from outside (a tool's result or error that
/// quotes a key back), before the loop hands it to the model, the events and the store.
pub trait Redact: Send + Sync {
    /// `text` with every known secret masked; borrowed when there is nothing to mask.
    fn redact<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str>;
}

/// A tool the loop can offer and call.
pub trait Tool: Send + Sync {
    /// Its definition.
    fn def(&self) -> &ToolDef;

    /// Runs the tool. `args` has already been validated against `def().parameters`.
    fn call(&self, args: serde_json::Value, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>>;

    /// What exactly this call will do, for the person deciding whether to allow it (the command
    /// line a command tool runs, the request an HTTP tool sends), with secrets shown by name
    /// only. `None` when the arguments say it all. Pure: no I/O.
    fn preview(&self, args: &serde_json::Value) -> Option<String> {
        let _ = args;
        None
    }

    /// Whether what it returns is untrusted data (it comes from a server or the web): the
    /// model receives it framed as such, and once a turn has read it, calls that would send
    /// data to a new destination ask first. By default a tool of an MCP server, an HTTP tool
    /// and an OpenAPI operation are; built-ins that read the web say so themselves.
    fn untrusted_output(&self) -> bool {
        matches!(self.def().source, ToolSource::Mcp { .. } | ToolSource::Http | ToolSource::OpenApi { .. })
    }

    /// What this call would send out of the app, and where, for the egress check: `None` when
    /// it sends nothing anywhere new (a read of a fixed API, a local tool). Pure: no I/O.
    fn egress(&self, args: &serde_json::Value) -> Option<Egress> {
        let _ = args;
        None
    }
}
