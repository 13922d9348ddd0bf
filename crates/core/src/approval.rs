//! The approval contract: how the loop asks the person about a call whose policy is `ask`
//! ([`ApprovalRequest`]), what they can answer ([`ApprovalDecision`]), and who answers
//! ([`Approver`]: a dialog in the app, a prompt or a flag in the CLI), and how it answers a
//! budget pause ([`Approver::budget`]), and what a tool's server asks of the person during a call
//! ([`Approver::elicit`], [`Approver::sample`]; the requests are in [`crate::ask`]).
//!
//! Invariant: it knows the vocabulary and nothing of the loop, so a tool (a sub-agent that asks
//! the person about its own calls) can hold the turn's approver without importing the loop.

use crate::ask::{ElicitationAnswer, ElicitationRequest, SamplingDecision, SamplingRequest};
use crate::budget::{BudgetChoice, BudgetPause};
use crate::vocab::ToolSource;
use futures::FutureExt;
use futures::future::BoxFuture;

/// A request for the person to approve a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// Conversation id.
    pub conversation_id: String,
    /// Call id.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Tool source.
    pub source: ToolSource,
    /// Exact arguments.
    pub arguments: String,
    /// What the call will do, in the tool's words ([`crate::Tool::preview`]).
    pub preview: Option<String>,
    /// Set when the call is asked about because it would send data to a new destination after
    /// the turn read untrusted content; then "for this chat" allows that destination, not the
    /// tool.
    pub egress: Option<crate::egress::EgressReason>,
}

/// The person's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run this call.
    Once,
    /// Run it, and don't ask again in this chat (the approver persists that).
    ForChat,
    /// Run it, and never ask again (the approver persists that).
    Always,
    /// Don't run it; the model is told.
    Deny,
}

/// Asks the person about `ask` calls (a dialog in the app, a prompt or a flag in the CLI).
pub trait Approver: Send + Sync {
    /// Waits for a decision. Called before `ApprovalRequested` is emitted: an approver that is
    /// answered from elsewhere must be ready for that answer when this returns. The future is
    /// dropped when the turn is stopped.
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision>;

    /// Waits for the person's choice at a budget pause (called, like [`Approver::decide`],
    /// before `budgetPaused` is emitted). The default, for an approver nobody answers (a
    /// non-interactive run), answers "answer now": the turn still ends with an answer.
    fn budget(&self, pause: BudgetPause) -> BoxFuture<'_, BudgetChoice> {
        let _ = pause;
        async { BudgetChoice::AnswerNow }.boxed()
    }

    /// Waits for the person's answer to a server's request for input (called, like
    /// [`Approver::decide`], before `elicitationRequested` is emitted). The default, for an
    /// approver nobody answers, declines.
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationAnswer> {
        let _ = request;
        async { ElicitationAnswer::decline() }.boxed()
    }

    /// Waits for the person's decision about a server's request for a completion (called
    /// before `samplingRequested` is emitted). The default, for an approver nobody answers,
    /// denies.
    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, SamplingDecision> {
        let _ = request;
        async { SamplingDecision::Deny }.boxed()
    }
}

/// An approver that always answers the same.
#[derive(Clone, Copy, Debug)]
pub struct FixedApprover(pub ApprovalDecision);

impl Approver for FixedApprover {
    fn decide(&self, _request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        let d = self.0;
        async move { d }.boxed()
    }
}
