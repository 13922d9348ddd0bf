//! `switchboard usage`: what requests used and cost over a period, grouped by day, model,
//! profile, agent or conversation; and the cost line `conversations show` prints under each
//! answer. Days and dates are the local time zone's (its offset now).
//!
//! Invariant: a request of unknown price is said to be unknown ("price unknown for N
//! requests"), never shown as $0.

use chrono::{Local, NaiveDate, TimeZone};
use clap::{Args, ValueEnum};
use std::io::Write;
use std::process::ExitCode;
use switchboard_service::Service;
use switchboard_service::ipc::{UsageGrouping, UsageQuery, UsageTotals};

/// How `switchboard usage` groups requests.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum By {
    /// The local day a request ended.
    Day,
    /// The model.
    Model,
    /// The provider profile.
    Profile,
    /// The agent (a sub-agent's, or the chat's own).
    Agent,
    /// The conversation.
    Conversation,
}

impl From<By> for UsageGrouping {
    fn from(by: By) -> Self {
        match by {
            By::Day => UsageGrouping::Day,
            By::Model => UsageGrouping::Model,
            By::Profile => UsageGrouping::Profile,
            By::Agent => UsageGrouping::Agent,
            By::Conversation => UsageGrouping::Conversation,
        }
    }
}

#[derive(Args, Debug)]
pub(crate) struct UsageArgs {
    /// How to group the requests.
    #[arg(long, value_enum, default_value_t = By::Day)]
    by: By,
    /// From this day on (YYYY-MM-DD, local time).
    #[arg(long, value_name = "DATE")]
    since: Option<String>,
    /// Up to and including this day (YYYY-MM-DD, local time).
    #[arg(long, value_name = "DATE")]
    until: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Local midnight starting `date` (+ `days`), in ms since the Unix epoch.
fn local_midnight(flag: &str, date: &str, days: i64) -> anyhow::Result<i64> {
    let day = NaiveDate::parse_from_str(date.trim(), "%Y-%m-%d")
        .map_err(|_| anyhow::anyhow!("{flag} takes a date as YYYY-MM-DD, e.g. 2026-11-27; got '{date}'."))?
        + chrono::Duration::days(days);
    let midnight = day.and_hms_opt(0, 0, 0).expect("midnight exists");
    let at = Local
        .from_local_datetime(&midnight)
        .earliest()
        .ok_or_else(|| anyhow::anyhow!("{date} has no midnight in the local time zone."))?;
    Ok(at.timestamp_millis())
}

pub(crate) fn run(service: &Service, args: UsageArgs) -> anyhow::Result<ExitCode> {
    let since = args.since.as_deref().map(|d| local_midnight("--since", d, 0)).transpose()?;
    let until = args.until.as_deref().map(|d| local_midnight("--until", d, 1)).transpose()?;
    let offset = Local::now().offset().local_minus_utc() / 60;
    let by: UsageGrouping = args.by.into();
    let report =
        service.usage_report(&UsageQuery { by, split: None, since, until, utc_offset_minutes: Some(offset) })?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if report.groups.is_empty() {
        writeln!(out, "No requests in this period.")?;
        return Ok(ExitCode::SUCCESS);
    }
    let head = match by {
        UsageGrouping::Day => "Day",
        UsageGrouping::Model => "Model",
        UsageGrouping::Profile => "Profile",
        UsageGrouping::Agent => "Agent",
        UsageGrouping::Conversation => "Conversation",
    };
    let rows: Vec<(String, &UsageTotals)> = report
        .groups
        .iter()
        .map(|g| {
            let name = match (by, g.label.as_str()) {
                (UsageGrouping::Agent, "") => "(no agent)".to_owned(),
                (UsageGrouping::Conversation, label) => format!("{label} ({})", g.key),
                (_, label) => label.to_owned(),
            };
            (crate::render::safe(&name).into_owned(), &g.total)
        })
        .chain(std::iter::once(("Total".to_owned(), &report.total)))
        .collect();
    let width = rows.iter().map(|(n, _)| n.chars().count()).max().unwrap_or(0).max(head.len());
    writeln!(
        out,
        "{head:<width$}  {:>8}  {:>12}  {:>12}  {:>12}  {:>12}  {:>10}",
        "Requests", "Input", "Cached", "Output", "Reasoning", "Cost"
    )?;
    for (name, t) in rows {
        write!(
            out,
            "{name:<width$}  {:>8}  {:>12}  {:>12}  {:>12}  {:>12}  {:>10}",
            t.requests,
            t.prompt_tokens,
            t.cached_tokens,
            t.completion_tokens,
            t.reasoning_tokens,
            dollars(t.cost_usd)
        )?;
        writeln!(out, "{}", caveats(t).map(|c| format!("  ({c})")).unwrap_or_default())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// "$0.0123", "$12.40".
pub(crate) fn dollars(usd: f64) -> String {
    if usd != 0.0 && usd.abs() < 1.0 { format!("${usd:.4}") } else { format!("${usd:.2}") }
}

/// "price unknown for 2 requests; 1 estimated", when either applies.
fn caveats(t: &UsageTotals) -> Option<String> {
    let plural = |n: u32| if n == 1 { "request" } else { "requests" };
    let mut parts = Vec::new();
    if t.unpriced_requests > 0 {
        parts.push(format!("price unknown for {} {}", t.unpriced_requests, plural(t.unpriced_requests)));
    }
    if t.estimated_requests > 0 {
        parts.push(format!("{} estimated", t.estimated_requests));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// An answer's cost line: "cost: $0.0123 · 3 requests · 1200 cached tokens (price unknown for
/// 1 request)".
pub(crate) fn cost_line(t: &UsageTotals) -> String {
    let cost = if t.unpriced_requests == t.requests { "price unknown".to_owned() } else { dollars(t.cost_usd) };
    let mut line = format!("cost: {cost} · {} request{}", t.requests, if t.requests == 1 { "" } else { "s" });
    if t.cached_tokens > 0 {
        line.push_str(&format!(" · {} cached tokens", t.cached_tokens));
    }
    if let Some(c) = caveats(t).filter(|_| t.unpriced_requests < t.requests || t.estimated_requests > 0) {
        line.push_str(&format!(" ({c})"));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_prices_are_said_never_zero() {
        let t = UsageTotals { requests: 2, cost_usd: 0.0, unpriced_requests: 2, ..Default::default() };
        assert_eq!(cost_line(&t), "cost: price unknown · 2 requests");
        let t = UsageTotals {
            requests: 3,
            cost_usd: 0.0123,
            unpriced_requests: 1,
            estimated_requests: 1,
            ..Default::default()
        };
        assert_eq!(cost_line(&t), "cost: $0.0123 · 3 requests (price unknown for 1 request; 1 estimated)");
        assert_eq!(dollars(0.0), "$0.00");
        assert_eq!(dollars(12.4), "$12.40");
        assert!(local_midnight("--since", "27/11/2026", 0).unwrap_err().to_string().contains("YYYY-MM-DD"));
    }
}
