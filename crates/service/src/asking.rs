//! What a turn asks the UI ([`UiApprover`]): a tool call's approval (answered by
//! [`Service::resolve_approval`]) and a budget pause (answered by [`Service::resolve_budget`], the
//! pause card's choice). Each question is registered under its id before its event goes out.
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
use switchboard_core::{BudgetChoice, BudgetKind, BudgetPause};
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
}

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
