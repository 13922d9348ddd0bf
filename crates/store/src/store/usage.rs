//! Spend as data: the rows of `usage_requests` (migration 11, one per request, written by the
//! recorder) read back as one answer's details, a conversation's totals, and reports over a
//! period grouped by day, model, profile, agent or conversation.
//!
//! Attribution, all computed from the rows: each request names the tool calls it decided; each
//! tool result of an answer was re-sent by every later request that carried it (the answer's own
//! later requests, and every request of the answers after it on the conversation's current
//! path), about its size in tokens each time; a sub-agent run's total includes its children's.
//!
//! Invariants: a request of unknown price is counted apart (`unpricedRequests`) and never as $0;
//! a sub-agent's requests are rows of the answer that called it, so every total of that answer,
//! its conversation, day, model or profile includes them exactly once.

use super::Store;
use super::tree::PATH;
use crate::error::{Error, Result};
use rusqlite::{OptionalExtension, Row};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use switchboard_core::Usage;
use switchboard_core::machine::spend::estimate_tokens;

/// What a set of requests used and cost.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    /// How many requests (model calls).
    pub requests: u32,
    /// Input tokens (cached and cache-written ones included).
    pub prompt_tokens: u64,
    /// Output tokens (reasoning included).
    pub completion_tokens: u64,
    /// Of the output, reasoning.
    pub reasoning_tokens: u64,
    /// Of the input, read from the provider's cache.
    pub cached_tokens: u64,
    /// Of the input, written to the provider's cache.
    pub cache_write_tokens: u64,
    /// US dollars, over the requests whose price is known.
    pub cost_usd: f64,
    /// Requests whose price is unknown: their cost is not in `costUsd` ("price unknown for N
    /// requests").
    pub unpriced_requests: u32,
    /// Requests whose usage was estimated (the provider reported none, or impossible numbers).
    pub estimated_requests: u32,
}

impl UsageTotals {
    fn add(&mut self, r: &RequestUsage) {
        self.requests += 1;
        self.prompt_tokens += r.usage.prompt_tokens;
        self.completion_tokens += r.usage.completion_tokens;
        self.reasoning_tokens += r.usage.reasoning_tokens;
        self.cached_tokens += r.usage.cached_tokens;
        self.cache_write_tokens += r.usage.cache_write_tokens;
        match r.cost_usd {
            Some(c) => self.cost_usd += c,
            None => self.unpriced_requests += 1,
        }
        self.estimated_requests += u32::from(r.estimated);
    }

    /// The columns [`TOTALS`] selects, from `first` on.
    fn from_row(row: &Row<'_>, first: usize) -> rusqlite::Result<Self> {
        Ok(UsageTotals {
            requests: row.get(first)?,
            prompt_tokens: row.get(first + 1)?,
            completion_tokens: row.get(first + 2)?,
            reasoning_tokens: row.get(first + 3)?,
            cached_tokens: row.get(first + 4)?,
            cache_write_tokens: row.get(first + 5)?,
            cost_usd: row.get(first + 6)?,
            unpriced_requests: row.get(first + 7)?,
            estimated_requests: row.get(first + 8)?,
        })
    }
}

/// The aggregate columns of [`UsageTotals::from_row`], over `u` (usage_requests).
const TOTALS: &str = "count(*), coalesce(sum(u.prompt_tokens), 0), coalesce(sum(u.completion_tokens), 0),
    coalesce(sum(u.reasoning_tokens), 0), coalesce(sum(u.cached_tokens), 0), coalesce(sum(u.cache_write_tokens), 0),
    total(u.cost_usd), coalesce(sum(u.cost_usd IS NULL), 0), coalesce(sum(u.estimated), 0)";

/// One request (model call) of an answer, or of a sub-agent run inside it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestUsage {
    /// 1-based number of the request within its turn (the answer's, or the sub-agent run's).
    pub request: u32,
    /// The answer's tool call whose sub-agent run made it; `null`: the answer's own request.
    pub call_id: Option<String>,
    /// The run that made it: `""` for the answer itself, `"call_1/Scout[0]"` for a sub-agent
    /// run (a deeper run appends its own call and instance).
    pub run_path: String,
    /// The agent that made it (the sub-agent's, or the chat's own agent), if any.
    pub agent: Option<String>,
    /// Ids of the tool calls this request decided (in its own run's ids).
    pub decided: Vec<String>,
    /// The provider profile.
    pub profile: String,
    /// The profile's API kind (empty when the profile is gone).
    pub api: String,
    /// The model.
    pub model: String,
    /// What it used.
    pub usage: Usage,
    /// What it cost; `null`: the price is unknown.
    pub cost_usd: Option<f64>,
    /// The usage was estimated.
    pub estimated: bool,
    /// When it ended (ms since the Unix epoch).
    pub created_at: i64,
}

/// A sub-agent run inside an answer, with its total (its own children included).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunUsage {
    /// The answer's tool call it ran under.
    pub call_id: String,
    /// The run (see [`RequestUsage::run_path`]).
    pub run_path: String,
    /// The agent's name.
    pub agent: String,
    /// Its requests and its children's.
    pub total: UsageTotals,
}

/// What re-sending one tool result cost: "this result was sent N more times, ≈ X tokens".
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultResend {
    /// The tool call whose result it is.
    pub call_id: String,
    /// The tool.
    pub name: String,
    /// How many later requests sent it again.
    pub resent_times: u32,
    /// About how many tokens that was in all (its size estimated, times `resentTimes`).
    pub approx_tokens: u64,
}

/// One answer's spend in detail.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageUsage {
    /// The answer.
    pub message_id: String,
    /// Every request, sub-agent runs' included.
    pub total: UsageTotals,
    /// In the order they ended.
    pub requests: Vec<RequestUsage>,
    /// Each sub-agent run, outermost first.
    pub runs: Vec<RunUsage>,
    /// Each tool result of the answer that later requests sent again, in call order.
    pub resends: Vec<ResultResend>,
}

/// One answer's total, for its cost line.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageSpend {
    /// The answer.
    pub message_id: String,
    /// Its requests, sub-agent runs' included.
    pub total: UsageTotals,
}

/// A conversation's spend: its total (every branch included: what was spent stays spent) and
/// each answer's.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationUsage {
    /// Every request of the conversation.
    pub total: UsageTotals,
    /// Per answer that made requests.
    pub messages: Vec<MessageSpend>,
}

/// How a report groups requests.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum UsageGrouping {
    /// The day it ended, in the caller's time zone (`YYYY-MM-DD`).
    Day,
    /// The model.
    Model,
    /// The provider profile.
    Profile,
    /// The agent (the sub-agent's, or the chat's own); key `""`: none.
    Agent,
    /// The conversation (key: its id; label: its title).
    Conversation,
}

impl UsageGrouping {
    /// The SQL of the group's key, and of its label, over `u` and `c` (its conversation).
    fn sql(self) -> (&'static str, &'static str) {
        match self {
            UsageGrouping::Day => {
                let day = "strftime('%Y-%m-%d', u.created_at / 1000 + ?3 * 60, 'unixepoch')";
                (day, day)
            }
            UsageGrouping::Model => ("u.model", "u.model"),
            UsageGrouping::Profile => ("u.profile", "u.profile"),
            UsageGrouping::Agent => ("coalesce(u.agent, '')", "coalesce(u.agent, '')"),
            UsageGrouping::Conversation => ("u.conversation_id", "coalesce(c.title, '')"),
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            UsageGrouping::Day => "day",
            UsageGrouping::Model => "model",
            UsageGrouping::Profile => "profile",
            UsageGrouping::Agent => "agent",
            UsageGrouping::Conversation => "conversation",
        }
    }

    /// Parses the wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "day" => UsageGrouping::Day,
            "model" => UsageGrouping::Model,
            "profile" => UsageGrouping::Profile,
            "agent" => UsageGrouping::Agent,
            "conversation" => UsageGrouping::Conversation,
            _ => return None,
        })
    }
}

/// What a usage report covers and how it is grouped.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageQuery {
    /// The grouping.
    pub by: UsageGrouping,
    /// A second grouping inside each group (e.g. by day, then by model, for a stacked chart).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub split: Option<UsageGrouping>,
    /// From this time on (ms since the Unix epoch, inclusive).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub since: Option<i64>,
    /// Before this time (ms since the Unix epoch, exclusive).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub until: Option<i64>,
    /// The caller's offset from UTC in minutes (east positive), so days are the person's days.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub utc_offset_minutes: Option<i32>,
}

/// One group of a report.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageGroup {
    /// What identifies it (a day, a model, a profile, an agent, a conversation id).
    pub key: String,
    /// What to show for it (a conversation's title; otherwise the key).
    pub label: String,
    /// The key of the split inside the group, when the query has one.
    pub sub: Option<String>,
    /// Its requests.
    pub total: UsageTotals,
}

/// A usage report.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    /// The query's grouping.
    pub by: UsageGrouping,
    /// The query's split.
    pub split: Option<UsageGrouping>,
    /// Days in order; other groups the costliest first.
    pub groups: Vec<UsageGroup>,
    /// Everything in the period.
    pub total: UsageTotals,
}

/// Agent name of a sub-agent instance `Name[i]`.
pub(crate) fn agent_name(instance: &str) -> &str {
    match instance.rfind('[') {
        Some(i) if instance.ends_with(']') => &instance[..i],
        _ => instance,
    }
}

fn request_row(row: &Row<'_>) -> rusqlite::Result<RequestUsage> {
    let decided: String = row.get(4)?;
    Ok(RequestUsage {
        request: row.get(0)?,
        call_id: row.get(1)?,
        run_path: row.get(2)?,
        agent: row.get(3)?,
        decided: serde_json::from_str(&decided).unwrap_or_default(),
        profile: row.get(5)?,
        api: row.get(6)?,
        model: row.get(7)?,
        usage: Usage {
            prompt_tokens: row.get(8)?,
            completion_tokens: row.get(9)?,
            reasoning_tokens: row.get(10)?,
            cached_tokens: row.get(11)?,
            cache_write_tokens: row.get(12)?,
        },
        cost_usd: row.get(13)?,
        estimated: row.get(14)?,
        created_at: row.get(15)?,
    })
}

impl Store {
    /// One answer's requests, sub-agent runs and re-sent tool results. An answer without
    /// requests (stopped before any, or older than this table) has an empty one.
    pub fn message_usage(&self, message_id: &str) -> Result<MessageUsage> {
        let conn = self.conn();
        let conversation: Option<String> = conn
            .prepare_cached("SELECT conversation_id FROM messages WHERE id = ?1")?
            .query_row([message_id], |r| r.get(0))
            .optional()?;
        let conversation = conversation.ok_or_else(|| Error::not_found("message", message_id))?;
        let requests = conn
            .prepare_cached(
                "SELECT request, call_id, run_path, agent, decided, profile, api, model, prompt_tokens,
                        completion_tokens, reasoning_tokens, cached_tokens, cache_write_tokens, cost_usd,
                        estimated, created_at
                 FROM usage_requests WHERE message_id = ?1 ORDER BY id",
            )?
            .query_map([message_id], request_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut total = UsageTotals::default();
        // Each run and every run above it, by path (outermost first: a prefix sorts first).
        let mut runs: BTreeMap<String, RunUsage> = BTreeMap::new();
        for r in &requests {
            total.add(r);
            let parts: Vec<&str> = r.run_path.split('/').collect();
            for depth in (2..=parts.len()).step_by(2) {
                let path = parts[..depth].join("/");
                let run = runs.entry(path.clone()).or_insert_with(|| RunUsage {
                    call_id: parts[0].to_owned(),
                    run_path: path,
                    agent: agent_name(parts[depth - 1]).to_owned(),
                    total: UsageTotals::default(),
                });
                run.total.add(r);
            }
        }
        // Requests after this answer on the current path (none when it is off the path).
        let later_on_path: u32 = conn
            .prepare_cached(&format!(
                "{PATH}, me AS (SELECT depth FROM path WHERE id = ?2)
                 SELECT count(*) FROM usage_requests u JOIN path p ON p.id = u.message_id
                 WHERE u.run_path = '' AND p.depth < (SELECT depth FROM me)"
            ))?
            .query_row((&conversation, message_id), |r| r.get(0))?;
        let own: Vec<u32> = requests.iter().filter(|r| r.run_path.is_empty()).map(|r| r.request).collect();
        let resends = conn
            .prepare_cached(
                "SELECT t.call_id, t.name, t.iteration, length(r.output) FROM tool_calls t
                 JOIN tool_results r ON r.tool_call_id = t.id
                 WHERE t.message_id = ?1 ORDER BY t.iteration, t.idx",
            )?
            .query_map([message_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, u32>(2)?, r.get::<_, usize>(3)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?
            .into_iter()
            .filter_map(|(call_id, name, iteration, chars)| {
                let times = own.iter().filter(|&&n| n > iteration).count() as u32 + later_on_path;
                (times > 0).then(|| ResultResend {
                    call_id,
                    name,
                    resent_times: times,
                    approx_tokens: estimate_tokens(chars) * u64::from(times),
                })
            })
            .collect();
        Ok(MessageUsage {
            message_id: message_id.to_owned(),
            total,
            requests,
            runs: runs.into_values().collect(),
            resends,
        })
    }

    /// A conversation's total and each answer's, every branch included.
    pub fn conversation_usage(&self, conversation_id: &str) -> Result<ConversationUsage> {
        let conn = self.conn();
        let exists: bool = conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1)")?
            .query_row([conversation_id], |r| r.get(0))?;
        if !exists {
            return Err(Error::not_found("conversation", conversation_id));
        }
        let messages = conn
            .prepare_cached(&format!(
                "SELECT u.message_id, {TOTALS} FROM usage_requests u WHERE u.conversation_id = ?1
                 GROUP BY u.message_id ORDER BY min(u.id)"
            ))?
            .query_map([conversation_id], |r| {
                Ok(MessageSpend { message_id: r.get(0)?, total: UsageTotals::from_row(r, 1)? })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut total = UsageTotals::default();
        for m in &messages {
            let t = &m.total;
            total.requests += t.requests;
            total.prompt_tokens += t.prompt_tokens;
            total.completion_tokens += t.completion_tokens;
            total.reasoning_tokens += t.reasoning_tokens;
            total.cached_tokens += t.cached_tokens;
            total.cache_write_tokens += t.cache_write_tokens;
            total.cost_usd += t.cost_usd;
            total.unpriced_requests += t.unpriced_requests;
            total.estimated_requests += t.estimated_requests;
        }
        Ok(ConversationUsage { total, messages })
    }

    /// Every request in `query`'s period, grouped as it asks.
    pub fn usage_report(&self, query: &UsageQuery) -> Result<UsageReport> {
        let conn = self.conn();
        let (key, label) = query.by.sql();
        let sub = query.split.map_or("NULL", |s| s.sql().0);
        let order = if query.by == UsageGrouping::Day { "1, 3" } else { "total(u.cost_usd) DESC, 1, 3" };
        let range = "(?1 IS NULL OR u.created_at >= ?1) AND (?2 IS NULL OR u.created_at < ?2)";
        let offset = i64::from(query.utc_offset_minutes.unwrap_or(0));
        let params = (query.since, query.until, offset);
        let groups = conn
            .prepare(&format!(
                "SELECT {key}, {label}, {sub}, {TOTALS} FROM usage_requests u
                 LEFT JOIN conversations c ON c.id = u.conversation_id
                 WHERE {range} AND ?3 IS NOT NULL
                 GROUP BY 1, 3 ORDER BY {order}"
            ))?
            .query_map(params, |r| {
                Ok(UsageGroup { key: r.get(0)?, label: r.get(1)?, sub: r.get(2)?, total: UsageTotals::from_row(r, 3)? })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let total = conn
            .prepare(&format!("SELECT {TOTALS} FROM usage_requests u WHERE {range} AND ?3 IS NOT NULL"))?
            .query_row(params, |r| UsageTotals::from_row(r, 0))?;
        Ok(UsageReport { by: query.by, split: query.split, groups, total })
    }
}
