//! The budget check before every request: when the next request would pass a limit (the turn's
//! steps, time or cost, shared with every sub-agent turn through the [`BudgetMeter`], or this
//! loop's own step limit, `max_iterations`), the loop pauses before it with what was spent and
//! asks the approver ([`Effect::AskBudget`]): continue with a new allowance, answer now (one last
//! request with tools off) or stop (the turn ends cleanly, everything kept).
//!
//! Invariant: the check runs before a request is built, never during a stream or a tool call
//! (a limit reached there pauses before the next request); once someone chose "answer now" or
//! "stop", every turn sharing the meter wraps up that way without asking again. The machine reads
//! no clock: the driver feeds the elapsed time in ([`Machine::set_elapsed`]).
//!
//! [`BudgetMeter`]: crate::budget::BudgetMeter

use super::{Effect, Machine, Phase};
use crate::budget::{Budget, BudgetChoice, BudgetKind, BudgetPause, BudgetScope, BudgetSpent};
use crate::event::{ChatEvent, FinishReason, NoticeKind};
use crate::types::{Message, Usage};
use std::time::Duration;

/// Characters per token in the rough estimate of a request's input (replaced by the context
/// estimate once the loop has one).
const CHARS_PER_TOKEN: u64 = 4;

impl Machine<'_> {
    /// The time since the turn (the outermost turn sharing its meter) began; the driver sets it
    /// before every input.
    pub fn set_elapsed(&mut self, elapsed: Duration) {
        self.elapsed = elapsed;
    }

    /// The meter this turn counts toward (its caller's, for a sub-agent).
    pub fn meter(&self) -> &std::sync::Arc<crate::budget::BudgetMeter> {
        &self.meter
    }

    /// Before an iteration's request: `true` when the loop paused (or stopped) instead, and the
    /// iteration waits for [`super::Input::Budget`].
    pub(super) fn budget_pauses(&mut self, out: &mut Vec<Effect>) -> bool {
        if self.answering_now.is_some() {
            return false;
        }
        match self.meter.wrap_up() {
            Some(BudgetChoice::Stop) => {
                self.finish(FinishReason::Budget, None, out);
                return true;
            }
            Some(_) => {
                self.answering_now = Some(BudgetKind::Steps);
                return false;
            }
            None => {}
        }
        let Some((kind, scope, limit)) = self.reached(out) else {
            self.meter.add_step();
            return false;
        };
        self.pauses += 1;
        let id = format!("{}/budget-{}", self.pause_prefix, self.pauses);
        let pause = BudgetPause {
            id: id.clone(),
            conversation_id: self.conversation_id.clone(),
            kind,
            scope,
            spent: match scope {
                BudgetScope::Chat => self.meter.chat_spent(self.elapsed),
                BudgetScope::Turn => self.meter.spent(self.elapsed),
            },
            limit,
            next_cost_usd: self.next_cost(),
        };
        let notice = paused_notice(&pause);
        // Asked before the event goes out, so an answer sent the moment it arrives finds it.
        out.push(Effect::AskBudget(pause.clone()));
        out.push(Effect::Emit(ChatEvent::BudgetPaused {
            id,
            kind,
            scope,
            spent: pause.spent,
            limit,
            next_cost_usd: pause.next_cost_usd,
        }));
        Self::notice(NoticeKind::Budget, notice, out);
        out.push(Effect::Flush);
        self.pausing = Some(pause);
        self.phase = Phase::BudgetPaused;
        true
    }

    /// The limit the next request would pass, whose, and its amount: the loop's step limit,
    /// then this turn's budget, then the chat's (what the chat spent before plus this turn).
    fn reached(&mut self, out: &mut Vec<Effect>) -> Option<(BudgetKind, BudgetScope, f64)> {
        if self.iteration + 1 > self.max_iterations {
            return Some((BudgetKind::StepLimit, BudgetScope::Turn, f64::from(self.max_iterations)));
        }
        let next = self.next_cost();
        let turn = self.meter.spent(self.elapsed);
        if let Some((kind, limit)) = self.passes(self.meter.limits(), &turn, next, out) {
            return Some((kind, BudgetScope::Turn, limit));
        }
        let chat = self.meter.chat_spent(self.elapsed);
        let (kind, limit) = self.passes(self.meter.chat_limits(), &chat, next, out)?;
        Some((kind, BudgetScope::Chat, limit))
    }

    /// Which of `limits` the next request (estimated at `next` USD) would pass after `spent`.
    fn passes(
        &mut self,
        limits: Budget,
        spent: &BudgetSpent,
        next: Option<f64>,
        out: &mut Vec<Effect>,
    ) -> Option<(BudgetKind, f64)> {
        if let Some(steps) = limits.steps
            && spent.steps + 1 > steps
        {
            return Some((BudgetKind::Steps, f64::from(steps)));
        }
        if let Some(secs) = limits.time_secs
            && spent.elapsed_ms >= secs.saturating_mul(1000)
        {
            return Some((BudgetKind::Time, secs as f64));
        }
        let cost = limits.cost_usd?;
        match next {
            Some(next) if spent.cost_usd + next >= cost => Some((BudgetKind::Cost, cost)),
            Some(_) => None,
            None => {
                if !self.cost_unknown_noticed {
                    self.cost_unknown_noticed = true;
                    let model = &self.model;
                    Self::notice(
                        NoticeKind::Budget,
                        format!(
                            "The price of {model} is unknown, so the cost budget (${cost}) counts only the requests with a known price. Set the model's prices in its profile to keep it."
                        ),
                        out,
                    );
                }
                (spent.cost_usd >= cost).then_some((BudgetKind::Cost, cost))
            }
        }
    }

    /// The person's choice at the pause.
    pub(super) fn on_budget_choice(&mut self, choice: BudgetChoice, out: &mut Vec<Effect>) {
        let Some(pause) = self.pausing.take() else { return };
        let choice = match choice.check(pause.kind) {
            Ok(()) => choice,
            // An allowance the loop cannot take is the same amount again.
            Err(_) => BudgetChoice::Continue { allowance: None },
        };
        out.push(Effect::Emit(ChatEvent::BudgetResolved { id: pause.id.clone(), choice }));
        match choice {
            BudgetChoice::Continue { allowance } => {
                if pause.kind == BudgetKind::StepLimit {
                    let more = allowance.map_or(self.max_iterations, |a| a as u32).max(1);
                    self.max_iterations = self.iteration.saturating_add(more);
                } else {
                    self.meter.resolve(pause.kind, pause.scope, choice, self.elapsed);
                }
                Self::notice(NoticeKind::Budget, continued(&pause, allowance), out);
            }
            BudgetChoice::AnswerNow => {
                if pause.kind != BudgetKind::StepLimit {
                    self.meter.resolve(pause.kind, pause.scope, choice, self.elapsed);
                }
                self.answering_now = Some(pause.kind);
                Self::notice(
                    NoticeKind::Budget,
                    "You chose to answer now: one last request, with tools off.".into(),
                    out,
                );
            }
            BudgetChoice::Stop => {
                self.meter.resolve(pause.kind, pause.scope, choice, self.elapsed);
                Self::notice(
                    NoticeKind::Budget,
                    "You chose to stop at the budget; everything so far is kept.".into(),
                    out,
                );
                return self.finish(FinishReason::Budget, None, out);
            }
        }
        self.begin_iteration(out);
    }

    /// The turn was stopped while paused.
    pub(super) fn cancel_budget_pause(&mut self, out: &mut Vec<Effect>) {
        if let Some(pause) = self.pausing.take() {
            out.push(Effect::Emit(ChatEvent::BudgetResolved { id: pause.id, choice: BudgetChoice::Stop }));
        }
        self.finish(FinishReason::Cancelled, None, out);
    }

    /// Whether the next iteration is the last, tools-off request a budget asked for.
    pub(super) fn budget_last_call(&self) -> bool {
        self.answering_now.is_some()
    }

    /// Why a last, tools-off request ended the turn: the step limit, or another budget.
    pub(super) fn last_call_reason(&self) -> FinishReason {
        match self.answering_now {
            Some(BudgetKind::StepLimit) | None => FinishReason::MaxIterations,
            Some(_) => FinishReason::Budget,
        }
    }

    /// One request's usage counts toward the meter, at its cost when the price is known.
    pub(super) fn charge(&self, usage: &Usage) {
        // A request the provider reported nothing for has an unknown cost.
        self.meter.add_cost(if usage.is_empty() { None } else { self.request_cost(usage) });
    }

    /// What `usage` cost (`None`: no price known). The one place prices are applied here.
    fn request_cost(&self, usage: &Usage) -> Option<f64> {
        self.options.prices.map(|p| p.cost(usage))
    }

    /// The estimated cost of the next request's input.
    fn next_cost(&self) -> Option<f64> {
        let tokens = estimate_input_tokens(&self.history, self.system_prompt.as_deref());
        self.request_cost(&Usage { prompt_tokens: tokens, ..Usage::default() })
    }
}

/// A rough count of the input tokens of a request with `history` and `system`: characters / 4
/// (tool definitions are left out; they are small next to a history that nears a budget).
fn estimate_input_tokens(history: &[Message], system: Option<&str>) -> u64 {
    let mut chars = system.map_or(0, str::len);
    for m in history {
        chars += match m {
            Message::User { text, .. } => text.len(),
            Message::Assistant { text, tool_calls, .. } => {
                text.len() + tool_calls.iter().map(|c| c.name.len() + c.arguments.len()).sum::<usize>()
            }
            Message::Tool { content, .. } => content.len(),
        };
    }
    chars as u64 / CHARS_PER_TOKEN
}

/// "3 steps", "90 s", "$0.50": a limit of `kind` as a person reads it.
fn amount(kind: BudgetKind, value: f64) -> String {
    match kind {
        BudgetKind::Steps | BudgetKind::StepLimit => {
            let n = value as u64;
            format!("{n} step{}", if n == 1 { "" } else { "s" })
        }
        BudgetKind::Time => format!("{} s", value as u64),
        BudgetKind::Cost => usd(value),
    }
}

fn usd(v: f64) -> String {
    if v >= 1.0 { format!("${v:.2}") } else { format!("${v:.4}") }
}

fn paused_notice(p: &BudgetPause) -> String {
    let whose = match p.scope {
        BudgetScope::Chat => "this chat's",
        BudgetScope::Turn => "this turn's",
    };
    let what = match p.kind {
        BudgetKind::StepLimit => "the step limit".to_owned(),
        BudgetKind::Steps => format!("{whose} step budget"),
        BudgetKind::Time => format!("{whose} time budget"),
        BudgetKind::Cost => format!("{whose} cost budget"),
    };
    let cost = if p.spent.cost_unknown && p.spent.cost_usd == 0.0 {
        "cost unknown".to_owned()
    } else if p.spent.cost_unknown {
        format!("at least {}", usd(p.spent.cost_usd))
    } else {
        usd(p.spent.cost_usd)
    };
    format!(
        "Paused before the next request: it would pass {what} of {}. Spent so far: {} with tools, {} s, {cost}.",
        amount(p.kind, p.limit),
        amount(BudgetKind::Steps, f64::from(p.spent.steps)),
        p.spent.elapsed_ms / 1000,
    )
}

fn continued(p: &BudgetPause, allowance: Option<f64>) -> String {
    let more = amount(p.kind, allowance.unwrap_or(p.limit));
    if p.scope == BudgetScope::Chat && p.kind != BudgetKind::StepLimit {
        let raised = Budget::default().raised(p.kind, &p.spent, Some(allowance.unwrap_or(p.limit)));
        let to =
            raised.steps.map(f64::from).or(raised.time_secs.map(|t| t as f64)).or(raised.cost_usd).unwrap_or(p.limit);
        return format!("You chose to continue, with {more} more: this chat's budget is now {}.", amount(p.kind, to));
    }
    format!("You chose to continue, with {more} more.")
}
