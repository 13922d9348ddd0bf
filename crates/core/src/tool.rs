//! The tool abstraction: the [`Tool`] trait, the [`ToolContext`] a call gets and the person's
//! [`Secrets`]. What a tool is as data ([`ToolDef`]) lives in [`crate::vocab`] and is re-exported here.

use crate::approval::{ApprovalDecision, Approver, FixedApprover};
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
