//! What a turn asks the UI ([`UiApprover`]): a tool call's approval (answered by
//! [`Service::resolve_approval`]), a budget pause (answered by [`Service::resolve_budget`], the
//! pause card's choice), and what a tool's server asks during a call: input (answered by
//! [`Service::answer_elicitation`]) and a completion (answered by [`Service::answer_sampling`]).
//! Each question is registered under its id before its event goes out, and forgotten when its
//! asker stops waiting (the call ended), so a late answer finds nothing.
//!
//! Invariant: an allowance the loop cannot take is refused and the pause keeps waiting; a pause
//! nobody can answer any more (the app closing) ends the turn as "stop", keeping what it has, as
//! an approval nobody answers is a denial.

use crate::{Error, Inner, Result, Service, lock};
use futures::FutureExt;
use futures::future::BoxFuture;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use switchboard_core::turn::{ApprovalDecision, ApprovalRequest, Approver};
use switchboard_core::{BudgetChoice, BudgetKind, BudgetPause, ErrorKind};
use switchboard_core::{ElicitationAction, ElicitationAnswer, ElicitationForm, ElicitationRequest};
use switchboard_core::{SamplingDecision, SamplingMessage, SamplingRequest};
use tokio::sync::oneshot;

/// A call waiting for the UI's answer.
pub(crate) struct PendingApproval {
    pub(crate) tool: String,
    /// The egress question: "always" then means this destination for the chat, not the tool.
    pub(crate) egress: bool,
    pub(crate) reply: oneshot::Sender<ApprovalDecision>,
}

/// Asks the UI; [`Service::resolve_approval`] and [`Service::resolve_budget`] answer.
pub(crate) struct UiApprover {
    pub(crate) inner: Arc<Inner>,
}

impl Approver for UiApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        let (tx, rx) = oneshot::channel();
        lock(&self.inner.turns.approvals).insert(
            request.call_id.clone(),
            PendingApproval { tool: request.name.clone(), egress: request.egress.is_some(), reply: tx },
        );
        let call_id = request.call_id;
        async move {
            let decision = rx.await.unwrap_or(ApprovalDecision::Deny);
            lock(&self.inner.turns.approvals).remove(&call_id);
            decision
        }
        .boxed()
    }

    fn budget(&self, pause: BudgetPause) -> BoxFuture<'_, BudgetChoice> {
        ask(&self.inner, pause)
    }

    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationAnswer> {
        let (tx, rx) = oneshot::channel();
        let id = request.request_id.clone();
        let question = Question::Elicit { form: request.form, url: request.url, reply: tx };
        lock(&self.inner.turns.questions).insert(id.clone(), question);
        let forget = Forget(&self.inner, id);
        async move {
            let _forget = forget;
            rx.await.unwrap_or_else(|_| ElicitationAnswer::cancel())
        }
        .boxed()
    }

    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, SamplingDecision> {
        let (tx, rx) = oneshot::channel();
        let id = request.request_id.clone();
        lock(&self.inner.turns.questions).insert(id.clone(), Question::Sample { reply: tx });
        let forget = Forget(&self.inner, id);
        async move {
            let _forget = forget;
            rx.await.unwrap_or(SamplingDecision::Deny)
        }
        .boxed()
    }
}

/// A server's question waiting for the UI.
pub(crate) enum Question {
    /// Input: the form the answer must fit, or the page to open.
    Elicit { form: ElicitationForm, url: Option<String>, reply: oneshot::Sender<ElicitationAnswer> },
    /// A completion to approve.
    Sample { reply: oneshot::Sender<SamplingDecision> },
}

/// The questions waiting, by request id.
pub(crate) type Questions = Mutex<HashMap<String, Question>>;

/// Forgets a question when its asker stops waiting, however it stops.
struct Forget<'a>(&'a Arc<Inner>, String);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(&self.0.turns.questions).remove(&self.1);
    }
}

/// The most messages an edited sampling request may carry, and text in all of them.
const MAX_EDITED_MESSAGES: usize = 100;
const MAX_EDITED_TEXT: usize = 512 * 1024;

/// The pauses waiting, by pause id, with the limit reached.
pub(crate) type Pending = Mutex<HashMap<String, (BudgetKind, oneshot::Sender<BudgetChoice>)>>;

/// Registers `pause` and waits for the UI's choice.
fn ask(inner: &Arc<Inner>, pause: BudgetPause) -> BoxFuture<'_, BudgetChoice> {
    let (tx, rx) = oneshot::channel();
    lock(&inner.turns.budgets).insert(pause.id.clone(), (pause.kind, tx));
    async move {
        let choice = rx.await.unwrap_or(BudgetChoice::Stop);
        lock(&inner.turns.budgets).remove(&pause.id);
        choice
    }
    .boxed()
}

impl Service {
    /// Answers a server's request for input (the elicitation card). Accepting a form checks
    /// `content` against it first: content that does not fit is refused with the field named,
    /// and the card keeps waiting. Accepting a page returns its address, checked as a link, for
    /// the shell to open; a page that fails the check is refused (the card can still decline).
    pub fn answer_elicitation(
        &self,
        request_id: &str,
        action: ElicitationAction,
        content: Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<Option<String>> {
        let mut pending = lock(&self.inner.turns.questions);
        let Some(Question::Elicit { form, url, .. }) = pending.get(request_id) else {
            return Err(Error::config(format!("No request for input '{request_id}' is waiting for an answer.")));
        };
        let (content, open) = match (action, url) {
            (ElicitationAction::Accept, Some(url)) => (None, Some(crate::links::external_url(url)?)),
            (ElicitationAction::Accept, None) => {
                let done = form
                    .complete(&content.unwrap_or_default())
                    .map_err(|why| Error::new(ErrorKind::BadRequest, why))?;
                (Some(done), None)
            }
            _ => (None, None),
        };
        if let Some(Question::Elicit { reply, .. }) = pending.remove(request_id) {
            // The call may have ended meanwhile; then nobody waits and that is fine.
            let _ = reply.send(ElicitationAnswer { action, content });
        }
        Ok(open)
    }

    /// Answers a server's request for a completion (the sampling card): run it (with the
    /// person's `messages` when they edited them) or not.
    pub fn answer_sampling(
        &self,
        request_id: &str,
        approve: bool,
        messages: Option<Vec<SamplingMessage>>,
    ) -> Result<()> {
        if let Some(edited) = &messages {
            let text: usize = edited.iter().map(|m| m.text.len()).sum();
            if edited.is_empty() || edited.len() > MAX_EDITED_MESSAGES || text > MAX_EDITED_TEXT {
                return Err(Error::new(
                    ErrorKind::BadRequest,
                    format!(
                        "The edited request must have 1 to {MAX_EDITED_MESSAGES} messages and at most {} KB of text.",
                        MAX_EDITED_TEXT / 1024
                    ),
                ));
            }
        }
        let mut pending = lock(&self.inner.turns.questions);
        if !matches!(pending.get(request_id), Some(Question::Sample { .. })) {
            return Err(Error::config(format!("No request for a completion '{request_id}' is waiting for an answer.")));
        }
        if let Some(Question::Sample { reply }) = pending.remove(request_id) {
            let decision = if approve { SamplingDecision::Approve { messages } } else { SamplingDecision::Deny };
            let _ = reply.send(decision);
        }
        Ok(())
    }

    /// Answers a pending budget pause (the UI's card): continue with an allowance (in the unit of
    /// the limit reached; none: the same amount again), answer now, or stop.
    pub fn resolve_budget(&self, pause_id: &str, choice: BudgetChoice) -> Result<()> {
        let mut pending = lock(&self.inner.turns.budgets);
        let Some((kind, _)) = pending.get(pause_id) else {
            return Err(Error::config(format!("No budget pause '{pause_id}' is waiting for an answer.")));
        };
        choice.check(*kind).map_err(Error::config)?;
        if let Some((_, reply)) = pending.remove(pause_id) {
            // The turn may have been stopped meanwhile; then nobody waits and that is fine.
            let _ = reply.send(choice);
        }
        Ok(())
    }
}
