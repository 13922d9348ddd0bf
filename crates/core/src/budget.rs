//! Budgets that pause: the limits a turn runs under ([`Budget`]: steps, wall time, cost), the
//! meter that counts what a turn and every sub-agent turn inside it spent ([`BudgetMeter`],
//! shared through an `Arc`), the question the loop asks when the next request would pass a limit
//! ([`BudgetPause`]) and the person's answer ([`BudgetChoice`]). A chat's budget ([`ChatBudget`])
//! is a running total: the meter starts it from what the chat spent before the turn.
//!
//! Invariant: a limit stored or sent is positive (zero, negative, text and absurd values are
//! refused by [`Budget::check`] with a message saying what to enter); the meter only grows, so
//! nothing spent is forgotten by a pause, a continue or a stop. The meter reads no clock except
//! [`BudgetMeter::elapsed`], which only the driver calls (the machine is fed the time).

use serde::{Deserialize, Deserializer, Serialize};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The most steps a budget may allow.
pub const MAX_BUDGET_STEPS: u32 = 10_000;
/// The longest wall time a budget may allow (one week).
pub const MAX_BUDGET_SECS: u64 = 7 * 24 * 3600;
/// The largest cost a budget may allow, in USD.
pub const MAX_BUDGET_USD: f64 = 100_000.0;

/// Limits of a turn: each `None` is no limit. Steps are model calls with tools; time is wall
/// time since the turn began; cost is in USD.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Budget {
    /// Model calls with tools.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "whole")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub steps: Option<u32>,
    /// Wall time in seconds.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "whole")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub time_secs: Option<u64>,
    /// Cost in USD.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "amount")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cost_usd: Option<f64>,
}

impl Budget {
    /// No limit at all.
    pub fn is_empty(&self) -> bool {
        self.steps.is_none() && self.time_secs.is_none() && self.cost_usd.is_none()
    }

    /// Whether every limit is one a turn can run under; the message says what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if let Some(s) = self.steps
            && !(1..=MAX_BUDGET_STEPS).contains(&s)
        {
            return Err(format!("A step budget must be a whole number from 1 to {MAX_BUDGET_STEPS}, not {s}."));
        }
        if let Some(t) = self.time_secs
            && !(1..=MAX_BUDGET_SECS).contains(&t)
        {
            return Err(format!("A time budget must be from 1 second to 7 days, not {t} seconds."));
        }
        if let Some(c) = self.cost_usd
            && !(c.is_finite() && c > 0.0 && c <= MAX_BUDGET_USD)
        {
            return Err(format!("A cost budget must be more than $0 and at most ${MAX_BUDGET_USD}, not {c}."));
        }
        Ok(())
    }

    /// `self` where it sets a limit, else `other`'s (a turn's choice over its chat's).
    #[must_use]
    pub fn over(self, other: Budget) -> Budget {
        Budget {
            steps: self.steps.or(other.steps),
            time_secs: self.time_secs.or(other.time_secs),
            cost_usd: self.cost_usd.or(other.cost_usd),
        }
    }
}

/// A number, a numeric string or null, read as a whole number; anything else is refused with a
/// message naming it (a negative number or text in a stored setup must say so, not "expected u32").
fn whole<'de, D: Deserializer<'de>, T: TryFrom<u64>>(d: D) -> Result<Option<T>, D::Error> {
    let Some(n) = number(d)? else { return Ok(None) };
    if n.fract() != 0.0 || n < 1.0 {
        return Err(serde::de::Error::custom(format!("a budget must be a whole number of at least 1, not {n}")));
    }
    T::try_from(n as u64).map(Some).map_err(|_| serde::de::Error::custom(format!("the budget {n} is too large")))
}

fn amount<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let Some(n) = number(d)? else { return Ok(None) };
    if !(n.is_finite() && n > 0.0) {
        return Err(serde::de::Error::custom(format!("a cost budget must be more than $0, not {n}")));
    }
    Ok(Some(n))
}

fn number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Null => Ok(None),
        serde_json::Value::Number(n) => Ok(n.as_f64()),
        serde_json::Value::String(s) if s.trim().is_empty() => Ok(None),
        serde_json::Value::String(s) => s
            .trim()
            .parse::<f64>()
            .map(Some)
            .map_err(|_| serde::de::Error::custom(format!("a budget must be a number, not \"{s}\""))),
        other => Err(serde::de::Error::custom(format!("a budget must be a number, not {other}"))),
    }
}

/// Reads a duration as a person writes it: `90`, `90s`, `5m`, `1h30m`, `2h`. Refuses zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("'{text}' is not a duration: write it like 90s, 5m or 1h30m.");
    let t = text.trim();
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = t.parse::<u64>() {
        return positive(Duration::from_secs(secs), text);
    }
    let mut total = 0u64;
    let mut digits = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: u64 = digits.parse().map_err(|_| bad())?;
        digits.clear();
        let unit = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => return Err(bad()),
        };
        total = n.checked_mul(unit).and_then(|v| total.checked_add(v)).ok_or_else(bad)?;
    }
    if !digits.is_empty() {
        return Err(bad());
    }
    positive(Duration::from_secs(total), text)
}

fn positive(d: Duration, text: &str) -> Result<Duration, String> {
    if d.is_zero() { Err(format!("A time budget of '{text}' allows nothing: give at least 1s.")) } else { Ok(d) }
}

/// Which limit the next request would pass.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BudgetKind {
    /// The turn's step budget.
    Steps,
    /// The turn's wall time budget.
    Time,
    /// The turn's cost budget.
    Cost,
    /// The step limit of this loop (`max_iterations`; a sub-agent's own).
    StepLimit,
}

/// Whose limit the next request would pass: the chat's (a running total over all its turns) or
/// this turn's (this turn and its sub-agents alone).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BudgetScope {
    /// The chat's budget: what the chat spent before this turn counts.
    Chat,
    /// This turn's budget (and the loop's step limit).
    #[default]
    Turn,
}

/// A chat's budget for a turn: its limits and what the chat spent before the turn began (steps
/// and cost; `elapsed_ms` is 0: a chat's wall time is counted per turn).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChatBudget {
    /// The chat's limits (none: no chat budget).
    pub limits: Budget,
    /// What earlier turns of the chat spent.
    pub before: BudgetSpent,
}

/// What a turn (and the sub-agent turns inside it) spent so far.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BudgetSpent {
    /// Model calls with tools.
    pub steps: u32,
    /// Wall time since the turn began, in milliseconds.
    pub elapsed_ms: u64,
    /// Cost in USD of the requests with a known price.
    pub cost_usd: f64,
    /// Some request had no known price: the cost is at least `cost_usd`.
    pub cost_unknown: bool,
}

/// The question: the next request would pass `kind`'s limit.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetPause {
    /// Unique among the turn's pauses (a sub-agent's carry its call's prefix).
    pub id: String,
    /// Conversation id.
    pub conversation_id: String,
    /// The limit reached.
    pub kind: BudgetKind,
    /// Whose limit: the chat's or this turn's.
    pub scope: BudgetScope,
    /// What was spent (for the chat's limit, the chat's total).
    pub spent: BudgetSpent,
    /// The limit of `kind` (steps, seconds or USD).
    pub limit: f64,
    /// The estimated cost of the next request's input, when the price is known.
    pub next_cost_usd: Option<f64>,
}

/// The person's answer to a [`BudgetPause`].
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "choice", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum BudgetChoice {
    /// Go on with this much more from what is spent now (steps, seconds or USD, in the unit of
    /// the limit reached); `None`: the same amount as the limit again.
    Continue {
        /// The new allowance.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        allowance: Option<f64>,
    },
    /// One last request with tools off.
    AnswerNow,
    /// End the turn here; everything so far is kept.
    Stop,
}

impl BudgetChoice {
    /// Whether a continue's allowance is one the loop can take; the message says what to enter.
    pub fn check(&self, kind: BudgetKind) -> Result<(), String> {
        if let BudgetChoice::Continue { allowance: Some(a) } = *self {
            let whole = !matches!(kind, BudgetKind::Cost);
            if !(a.is_finite() && a > 0.0) || (whole && a.fract() != 0.0) {
                return Err(match kind {
                    BudgetKind::Cost => format!("An allowance must be more than $0, not {a}."),
                    BudgetKind::Time => format!("An allowance must be a whole number of seconds, at least 1, not {a}."),
                    _ => format!("An allowance must be a whole number of steps, at least 1, not {a}."),
                });
            }
        }
        Ok(())
    }
}

/// What every turn sharing the meter spent, and the limits they share.
#[derive(Debug)]
pub struct BudgetMeter {
    origin: Instant,
    state: Mutex<MeterState>,
}

#[derive(Debug, Default)]
struct MeterState {
    limits: Budget,
    chat: ChatBudget,
    steps: u32,
    cost_usd: f64,
    cost_unknown: bool,
    /// Set once a pause was answered "answer now" or "stop": every turn sharing the meter wraps
    /// up that way at its next request, without asking again.
    wrap_up: Option<BudgetChoice>,
}

impl BudgetMeter {
    /// A meter under `limits`, its clock starting now.
    pub fn new(limits: Budget) -> Self {
        Self { origin: Instant::now(), state: Mutex::new(MeterState { limits, ..MeterState::default() }) }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MeterState> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The same meter, also under a chat's budget (its limits and what the chat spent before).
    #[must_use]
    pub fn with_chat(self, chat: ChatBudget) -> Self {
        self.state().chat = chat;
        self
    }

    /// The chat's limits now (a continue at the chat's budget raises them).
    pub fn chat_limits(&self) -> Budget {
        self.state().chat.limits
    }

    /// What the chat spent: before this turn plus this turn, with `elapsed` as the time.
    pub fn chat_spent(&self, elapsed: Duration) -> BudgetSpent {
        let before = self.state().chat.before;
        let now = self.spent(elapsed);
        BudgetSpent {
            steps: before.steps.saturating_add(now.steps),
            elapsed_ms: before.elapsed_ms.saturating_add(now.elapsed_ms),
            cost_usd: before.cost_usd + now.cost_usd,
            cost_unknown: before.cost_unknown || now.cost_unknown,
        }
    }

    /// Time since the meter was made (the root turn began). For the driver only.
    pub fn elapsed(&self) -> Duration {
        self.origin.elapsed()
    }

    /// The limits now (continues raise them).
    pub fn limits(&self) -> Budget {
        self.state().limits
    }

    /// What was spent, with `elapsed` as the time.
    pub fn spent(&self, elapsed: Duration) -> BudgetSpent {
        let s = self.state();
        BudgetSpent {
            steps: s.steps,
            elapsed_ms: elapsed.as_millis() as u64,
            cost_usd: s.cost_usd,
            cost_unknown: s.cost_unknown,
        }
    }

    /// One more model call with tools.
    pub fn add_step(&self) {
        let mut s = self.state();
        s.steps = s.steps.saturating_add(1);
    }

    /// A request's cost (`None`: its price is unknown).
    pub fn add_cost(&self, cost: Option<f64>) {
        let mut s = self.state();
        match cost {
            Some(c) if c.is_finite() && c >= 0.0 => s.cost_usd += c,
            _ => s.cost_unknown = true,
        }
    }

    /// How the turns sharing the meter wrap up, once someone chose so.
    pub fn wrap_up(&self) -> Option<BudgetChoice> {
        self.state().wrap_up
    }

    /// Applies the person's choice: a continue raises the limit of `kind` (in `scope`) to what
    /// is spent now plus the allowance (`None`: the limit's own amount again); "answer now" and
    /// "stop" are kept for every turn sharing the meter.
    pub fn resolve(&self, kind: BudgetKind, scope: BudgetScope, choice: BudgetChoice, elapsed: Duration) {
        let BudgetChoice::Continue { allowance } = choice else {
            self.state().wrap_up = Some(choice);
            return;
        };
        match scope {
            BudgetScope::Turn => {
                let spent = self.spent(elapsed);
                let mut s = self.state();
                s.limits = s.limits.raised(kind, &spent, allowance);
            }
            BudgetScope::Chat => {
                let spent = self.chat_spent(elapsed);
                let mut s = self.state();
                s.chat.limits = s.chat.limits.raised(kind, &spent, allowance);
            }
        }
    }
}

impl Budget {
    /// These limits with `kind`'s raised to what is `spent` plus `allowance` (`None`: the
    /// limit's own amount again), as a continue at a pause does.
    #[must_use]
    pub fn raised(mut self, kind: BudgetKind, spent: &BudgetSpent, allowance: Option<f64>) -> Budget {
        match kind {
            BudgetKind::Steps => {
                let more = allowance.map_or(self.steps.unwrap_or(1), |a| a as u32).max(1);
                self.steps = Some(spent.steps.saturating_add(more));
            }
            BudgetKind::Time => {
                let more = allowance.map_or(self.time_secs.unwrap_or(1), |a| a as u64).max(1);
                self.time_secs = Some((spent.elapsed_ms / 1000).saturating_add(more));
            }
            BudgetKind::Cost => {
                let more = allowance.or(self.cost_usd).unwrap_or(0.0);
                self.cost_usd = Some(spent.cost_usd + more);
            }
            BudgetKind::StepLimit => {}
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert!(parse_duration("0s").unwrap_err().contains("allows nothing"));
        assert!(parse_duration("soon").unwrap_err().contains("not a duration"));
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn zero_negative_and_text_budgets_are_refused_with_a_message() {
        let read = |json: &str| serde_json::from_str::<Budget>(json).map_err(|e| e.to_string());
        assert_eq!(read(r#"{"steps": 3, "timeSecs": "90", "costUsd": 0.5}"#).unwrap().time_secs, Some(90));
        assert_eq!(read(r#"{"steps": null, "costUsd": ""}"#).unwrap(), Budget::default());
        assert!(read(r#"{"steps": 0}"#).unwrap_err().contains("at least 1"));
        assert!(read(r#"{"steps": -2}"#).unwrap_err().contains("at least 1"));
        assert!(read(r#"{"costUsd": "cheap"}"#).unwrap_err().contains("must be a number"));
        assert!(read(r#"{"costUsd": -1}"#).unwrap_err().contains("more than $0"));
        assert!(Budget { steps: Some(0), ..Budget::default() }.check().is_err());
        assert!(Budget { cost_usd: Some(f64::NAN), ..Budget::default() }.check().is_err());
        assert!(Budget { time_secs: Some(60), ..Budget::default() }.check().is_ok());
        assert!(BudgetChoice::Continue { allowance: Some(1.5) }.check(BudgetKind::Steps).is_err());
        assert!(BudgetChoice::Continue { allowance: Some(0.25) }.check(BudgetKind::Cost).is_ok());
        assert!(BudgetChoice::Continue { allowance: Some(-1.0) }.check(BudgetKind::Cost).is_err());
    }

    #[test]
    fn a_continue_allows_more_from_what_is_spent_and_a_wrap_up_is_shared() {
        let meter = BudgetMeter::new(Budget { steps: Some(2), cost_usd: Some(1.0), ..Budget::default() });
        meter.add_step();
        meter.add_step();
        meter.add_cost(Some(0.75));
        meter.add_cost(None);
        meter.resolve(BudgetKind::Steps, BudgetScope::Turn, BudgetChoice::Continue { allowance: None }, Duration::ZERO);
        assert_eq!(meter.limits().steps, Some(4));
        meter.resolve(
            BudgetKind::Cost,
            BudgetScope::Turn,
            BudgetChoice::Continue { allowance: Some(0.5) },
            Duration::ZERO,
        );
        assert_eq!(meter.limits().cost_usd, Some(1.25));
        let spent = meter.spent(Duration::from_secs(3));
        assert_eq!((spent.steps, spent.cost_usd, spent.cost_unknown, spent.elapsed_ms), (2, 0.75, true, 3000));
        assert_eq!(meter.wrap_up(), None);
        meter.resolve(BudgetKind::Cost, BudgetScope::Turn, BudgetChoice::Stop, Duration::ZERO);
        assert_eq!(meter.wrap_up(), Some(BudgetChoice::Stop));
    }

    #[test]
    fn a_chat_budget_counts_what_the_chat_spent_before_and_a_continue_raises_it() {
        let before = BudgetSpent { steps: 3, cost_usd: 1.5, ..BudgetSpent::default() };
        let chat = ChatBudget { limits: Budget { cost_usd: Some(2.0), ..Budget::default() }, before };
        let meter = BudgetMeter::new(Budget { cost_usd: Some(1.0), ..Budget::default() }).with_chat(chat);
        meter.add_step();
        meter.add_cost(Some(0.25));
        let total = meter.chat_spent(Duration::ZERO);
        assert_eq!((total.steps, total.cost_usd), (4, 1.75));
        meter.resolve(
            BudgetKind::Cost,
            BudgetScope::Chat,
            BudgetChoice::Continue { allowance: Some(1.0) },
            Duration::ZERO,
        );
        assert_eq!(meter.chat_limits().cost_usd, Some(2.75));
        assert_eq!(meter.limits().cost_usd, Some(1.0), "the turn's limit is its own");
    }
}
