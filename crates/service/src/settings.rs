//! Settings stored in the database, typed. Read before every turn, so changes apply to the next
//! turn without a restart.

use crate::Error;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use switchboard_core::policy::ToolSettings;
use switchboard_core::{ApprovalPolicy, EngineConfig};
use switchboard_store::Store;

/// Key of the default provider profile's name.
pub const DEFAULT_PROVIDER: &str = "defaultProvider";
/// Key of [`ToolPrefs`].
pub const TOOLS: &str = "tools";
/// Key of [`Limits`].
pub const LIMITS: &str = "limits";
/// Key of [`Retry`].
pub const RETRY: &str = "retry";
/// Key of [`WebPrefs`].
pub const WEB: &str = "web";
/// Key of [`ChatPrefs`].
pub const CHATS: &str = "chats";
/// Every settings key.
pub const KEYS: &[&str] = &[DEFAULT_PROVIDER, TOOLS, LIMITS, RETRY, WEB, CHATS];

/// How a new chat gets its title.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum TitleMode {
    /// A short title written by the chat's own model after its first answer (one tiny request).
    #[default]
    Model,
    /// The first line of the first message; nothing is sent anywhere.
    FirstLine,
}

/// The longest instructions kept (custom ones, or a chat's own), in characters.
pub const MAX_INSTRUCTIONS_CHARS: usize = 20_000;

/// Chat preferences.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct ChatPrefs {
    /// How a new chat gets its title.
    pub titles: TitleMode,
    /// Custom instructions: given to the model in every chat, before a chat's own.
    pub instructions: String,
}

/// Which search API `web_search` uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum SearchBackend {
    /// Tavily (key `tavily`).
    #[default]
    Tavily,
    /// Exa (key `exa`).
    Exa,
    /// A SearXNG instance (no key; needs its URL).
    Searxng,
}

/// "Search & web tools" settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct WebPrefs {
    /// The search API.
    pub search_backend: SearchBackend,
    /// Base URL of the SearXNG instance.
    pub searxng_url: Option<String>,
    /// Let `web_fetch` reach loopback and private-network addresses (a local wiki, a NAS).
    pub allow_local_addresses: bool,
}

impl WebPrefs {
    /// The tools crate's configuration for these preferences.
    pub fn tools_config(&self) -> switchboard_tools::WebToolsConfig {
        switchboard_tools::WebToolsConfig {
            search_backend: match self.search_backend {
                SearchBackend::Tavily => switchboard_tools::SearchBackend::Tavily,
                SearchBackend::Exa => switchboard_tools::SearchBackend::Exa,
                SearchBackend::Searxng => switchboard_tools::SearchBackend::Searxng,
            },
            searxng_url: self.searxng_url.clone().filter(|u| !u.trim().is_empty()),
            allow_local_addresses: self.allow_local_addresses,
            ..switchboard_tools::WebToolsConfig::default()
        }
    }
}

/// Settings-wide tool preferences.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ToolPrefs {
    /// Tools never offered.
    pub disabled: BTreeSet<String>,
    /// Approval policy overrides.
    pub approval: BTreeMap<String, ApprovalPolicy>,
    /// Tools that may send data to a destination not used in the chat after it read untrusted
    /// content, without asking (the person's choice, confirmed like every widening).
    pub egress_exempt: BTreeSet<String>,
}

/// Loop limits; `None` keeps the engine's default.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Limits {
    /// Model calls with tools per turn before the last, tools-off call.
    pub max_iterations: Option<u32>,
    /// Unique tool calls run per round.
    pub max_tool_calls_per_round: Option<u32>,
    /// Per-call tool timeout, seconds.
    pub tool_timeout_secs: Option<u32>,
    /// A stream silent this long is abandoned, seconds.
    pub idle_timeout_secs: Option<u32>,
    /// Compact before a request that would fill more than this percent of the model's window.
    pub compact_at_percent: Option<u32>,
}

impl Limits {
    /// The compaction threshold as a fraction of the window (default 0.8).
    pub fn compact_at(&self) -> f32 {
        self.compact_at_percent.map_or(switchboard_core::ContextLimits::DEFAULT_COMPACT_AT, |p| p as f32 / 100.0)
    }
}

/// Retries of requests that failed before any output.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Retry {
    /// How many retries.
    pub max_retries: Option<u32>,
    /// First delay, milliseconds; doubles per attempt.
    pub base_delay_ms: Option<u32>,
}

/// The range a number in [`Limits`] or [`Retry`] may take. Declared here once: `validate` refuses
/// values outside it, and the UI's fields get it from the generated bindings.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bound {
    /// The settings key of the struct holding the field ([`LIMITS`] or [`RETRY`]).
    pub group: &'static str,
    /// The field's name as stored and sent (camelCase).
    pub field: &'static str,
    /// Smallest allowed value.
    pub min: u32,
    /// Largest allowed value.
    pub max: u32,
    #[serde(skip)]
    read: fn(&Settings) -> Option<u32>,
}

impl Bound {
    /// The value these settings give the field (`None`: the engine's default).
    pub fn value(&self, settings: &Settings) -> Option<u32> {
        (self.read)(settings)
    }
}

/// Every number of [`Limits`] and [`Retry`] with its range.
pub const LIMIT_BOUNDS: &[Bound] = &[
    Bound { group: LIMITS, field: "maxIterations", min: 1, max: 50, read: |s| s.limits.max_iterations },
    Bound {
        group: LIMITS,
        field: "maxToolCallsPerRound",
        min: 1,
        max: 50,
        read: |s| s.limits.max_tool_calls_per_round,
    },
    Bound { group: LIMITS, field: "toolTimeoutSecs", min: 1, max: 600, read: |s| s.limits.tool_timeout_secs },
    Bound { group: LIMITS, field: "idleTimeoutSecs", min: 5, max: 3600, read: |s| s.limits.idle_timeout_secs },
    Bound { group: LIMITS, field: "compactAtPercent", min: 50, max: 95, read: |s| s.limits.compact_at_percent },
    Bound { group: RETRY, field: "maxRetries", min: 0, max: 10, read: |s| s.retry.max_retries },
    Bound { group: RETRY, field: "baseDelayMs", min: 100, max: 60_000, read: |s| s.retry.base_delay_ms },
];

/// All settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// Default provider profile.
    pub default_provider: Option<String>,
    /// Tool preferences.
    pub tools: ToolPrefs,
    /// Loop limits.
    pub limits: Limits,
    /// Retry policy.
    pub retry: Retry,
    /// Search & web tools.
    pub web: WebPrefs,
    /// Chat preferences.
    #[serde(default)]
    pub chats: ChatPrefs,
}

impl Settings {
    /// Reads every setting.
    pub fn load(store: &Store) -> Result<Settings, Error> {
        Ok(Settings {
            default_provider: store.setting(DEFAULT_PROVIDER)?,
            tools: store.setting(TOOLS)?.unwrap_or_default(),
            limits: store.setting(LIMITS)?.unwrap_or_default(),
            retry: store.setting(RETRY)?.unwrap_or_default(),
            web: store.setting(WEB)?.unwrap_or_default(),
            chats: store.setting(CHATS)?.unwrap_or_default(),
        })
    }

    /// Writes every setting.
    pub fn save(&self, store: &Store) -> Result<(), Error> {
        match &self.default_provider {
            Some(p) => store.set_setting(DEFAULT_PROVIDER, p)?,
            None => {
                store.delete_setting(DEFAULT_PROVIDER)?;
            }
        }
        store.set_setting(TOOLS, &self.tools)?;
        store.set_setting(LIMITS, &self.limits)?;
        store.set_setting(RETRY, &self.retry)?;
        store.set_setting(WEB, &self.web)?;
        store.set_setting(CHATS, &self.chats)?;
        Ok(())
    }

    /// Checks a key and, when given, the shape of its value, so a typo fails when it is set and
    /// not at the next turn.
    pub fn check(key: &str, value: Option<&serde_json::Value>) -> Result<(), Error> {
        fn shape<T: serde::de::DeserializeOwned>(key: &str, v: &serde_json::Value) -> Result<(), Error> {
            serde_json::from_value::<T>(v.clone())
                .map(drop)
                .map_err(|e| Error::config(format!("Invalid value for '{key}': {e}.")))
        }
        match (key, value) {
            (k, None) if KEYS.contains(&k) => Ok(()),
            (DEFAULT_PROVIDER, Some(v)) => shape::<String>(key, v),
            (TOOLS, Some(v)) => shape::<ToolPrefs>(key, v),
            (LIMITS, Some(v)) => shape::<Limits>(key, v),
            (RETRY, Some(v)) => shape::<Retry>(key, v),
            (WEB, Some(v)) => shape::<WebPrefs>(key, v),
            (CHATS, Some(v)) => shape::<ChatPrefs>(key, v),
            _ => Err(Error::config(format!("Unknown setting '{key}'. Known: {}.", KEYS.join(", ")))),
        }
    }

    /// Checks what a person typed before it is saved (a SearXNG URL that is not a URL, a limit
    /// out of its range).
    pub fn validate(&self) -> Result<(), Error> {
        for b in LIMIT_BOUNDS {
            if let Some(v) = b.value(self)
                && !(b.min..=b.max).contains(&v)
            {
                return Err(Error::config(format!(
                    "'{}.{}' must be from {} to {}; it is {v}.",
                    b.group, b.field, b.min, b.max
                )));
            }
        }
        check_instructions(&self.chats.instructions, "The custom instructions")?;
        self.web.tools_config().validate().map_err(|e| Error::config(e.to_string()))
    }

    /// The changes from `self` to `new` that widen what the app may do: a tool whose effective
    /// approval loosens (deny -> ask or auto, ask -> auto; `default_approval` gives a tool's own
    /// policy when Settings does not override it), and local addresses allowed for `web_fetch`.
    /// Tightening, and changes that widen nothing, are not listed.
    pub fn widenings(
        &self,
        new: &Settings,
        default_approval: &dyn Fn(&str) -> ApprovalPolicy,
    ) -> Vec<crate::confirm::Widening> {
        use crate::confirm::{Widening, openness};
        let mut out = Vec::new();
        let tools: BTreeSet<&String> = self.tools.approval.keys().chain(new.tools.approval.keys()).collect();
        for tool in tools {
            let before = self.tools.approval.get(tool).copied().unwrap_or_else(|| default_approval(tool));
            let after = new.tools.approval.get(tool).copied().unwrap_or_else(|| default_approval(tool));
            if openness(after) > openness(before) {
                out.push(Widening::ToolApproval { tool: tool.clone(), from: before, to: after });
            }
        }
        if new.web.allow_local_addresses && !self.web.allow_local_addresses {
            out.push(Widening::LocalAddresses);
        }
        for tool in new.tools.egress_exempt.difference(&self.tools.egress_exempt) {
            out.push(Widening::EgressExempt { tool: tool.clone() });
        }
        out
    }

    /// The engine configuration these settings ask for.
    pub fn engine_config(&self) -> EngineConfig {
        let mut c = EngineConfig {
            tool_settings: ToolSettings {
                disabled: self.tools.disabled.clone(),
                approval: self.tools.approval.iter().map(|(k, v)| (k.clone(), *v)).collect(),
                egress_exempt: self.tools.egress_exempt.clone(),
            },
            ..EngineConfig::default()
        };
        let l = &self.limits;
        if let Some(n) = l.max_iterations {
            c.max_iterations = n.max(1);
        }
        if let Some(n) = l.max_tool_calls_per_round {
            c.max_tool_calls_per_round = n.max(1) as usize;
        }
        if let Some(s) = l.tool_timeout_secs {
            c.tool_timeout = Duration::from_secs(u64::from(s.max(1)));
        }
        if let Some(s) = l.idle_timeout_secs {
            c.idle_timeout = Duration::from_secs(u64::from(s.max(1)));
        }
        if let Some(n) = self.retry.max_retries {
            c.max_retries = n;
        }
        if let Some(ms) = self.retry.base_delay_ms {
            c.retry_base_delay = Duration::from_millis(u64::from(ms));
        }
        c
    }
}

/// Refuses instructions longer than [`MAX_INSTRUCTIONS_CHARS`]; `what` names them.
pub(crate) fn check_instructions(text: &str, what: &str) -> Result<(), Error> {
    let n = text.chars().count();
    if n > MAX_INSTRUCTIONS_CHARS {
        return Err(Error::config(format!(
            "{what} are {n} characters long; at most {MAX_INSTRUCTIONS_CHARS} are kept. Shorten them."
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_shape_engine_config() {
        let store = Store::open_in_memory().unwrap();
        assert_eq!(Settings::load(&store).unwrap(), Settings::default());
        let mut s = Settings::default();
        s.tools.disabled.insert("get_time".into());
        s.tools.approval.insert("web_fetch".into(), ApprovalPolicy::Ask);
        s.limits.max_iterations = Some(3);
        s.retry.max_retries = Some(0);
        s.save(&store).unwrap();
        let loaded = Settings::load(&store).unwrap();
        assert_eq!(loaded, s);
        let c = loaded.engine_config();
        assert_eq!(c.max_iterations, 3);
        assert_eq!(c.max_retries, 0);
        assert!(c.tool_settings.disabled.contains("get_time"));
        assert_eq!(c.tool_settings.approval["web_fetch"], ApprovalPolicy::Ask);
    }

    #[test]
    fn every_limit_has_a_bound_that_reads_its_own_field() {
        // Distinct values in every field, so a bound reading the wrong field is caught.
        let s = Settings {
            limits: Limits {
                max_iterations: Some(11),
                max_tool_calls_per_round: Some(12),
                tool_timeout_secs: Some(13),
                idle_timeout_secs: Some(14),
                compact_at_percent: Some(17),
            },
            retry: Retry { max_retries: Some(15), base_delay_ms: Some(16) },
            ..Settings::default()
        };
        let json = serde_json::to_value(&s).unwrap();
        let mut fields = Vec::new();
        for group in [LIMITS, RETRY] {
            for (field, v) in json[group].as_object().unwrap() {
                fields.push((group, field.as_str(), v.as_u64().map(|n| n as u32)));
            }
        }
        let bounds: Vec<_> = LIMIT_BOUNDS.iter().map(|b| (b.group, b.field, b.value(&s))).collect();
        fields.sort();
        let mut sorted = bounds.clone();
        sorted.sort();
        assert_eq!(sorted, fields);
        for b in LIMIT_BOUNDS {
            assert!(b.min <= b.max, "{b:?}");
        }
    }

    #[test]
    fn limits_out_of_range_are_refused_naming_the_field_and_range() {
        let ok = |f: &dyn Fn(&mut Settings)| {
            let mut s = Settings::default();
            f(&mut s);
            s.validate()
        };
        assert!(ok(&|s| s.limits.idle_timeout_secs = Some(5)).is_ok());
        assert!(ok(&|s| s.retry.max_retries = Some(0)).is_ok());
        let e = ok(&|s| s.limits.idle_timeout_secs = Some(4)).unwrap_err();
        assert_eq!(e.kind, switchboard_core::ErrorKind::Config);
        assert_eq!(e.message, "'limits.idleTimeoutSecs' must be from 5 to 3600; it is 4.");
        let e = ok(&|s| s.retry.base_delay_ms = Some(60_001)).unwrap_err();
        assert!(e.message.contains("retry.baseDelayMs") && e.message.contains("100 to 60000"), "{}", e.message);
        let e = ok(&|s| s.limits.max_iterations = Some(0)).unwrap_err();
        assert!(e.message.contains("limits.maxIterations"), "{}", e.message);
    }

    #[test]
    fn loosening_an_approval_or_allowing_local_addresses_widens_and_tightening_does_not() {
        use crate::confirm::Widening;
        // get_time runs without asking by default; web_fetch asks.
        let default = |t: &str| if t == "web_fetch" { ApprovalPolicy::Ask } else { ApprovalPolicy::Auto };
        let with = |pairs: &[(&str, ApprovalPolicy)], local: bool| {
            let mut s = Settings::default();
            s.tools.approval = pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
            s.web.allow_local_addresses = local;
            s
        };
        let none = with(&[], false);
        assert_eq!(
            none.widenings(&with(&[("web_fetch", ApprovalPolicy::Auto)], false), &default),
            [Widening::ToolApproval { tool: "web_fetch".into(), from: ApprovalPolicy::Ask, to: ApprovalPolicy::Auto }]
        );
        let denied = with(&[("get_time", ApprovalPolicy::Deny)], false);
        assert_eq!(
            denied.widenings(&with(&[("get_time", ApprovalPolicy::Ask)], false), &default),
            [Widening::ToolApproval { tool: "get_time".into(), from: ApprovalPolicy::Deny, to: ApprovalPolicy::Ask }]
        );
        // Removing a deny falls back to the tool's own default (auto): loosening too.
        assert_eq!(denied.widenings(&none, &default).len(), 1);
        assert_eq!(none.widenings(&with(&[], true), &default), [Widening::LocalAddresses]);
        // Tightening, or saving the same, asks nothing.
        assert!(none.widenings(&with(&[("get_time", ApprovalPolicy::Ask)], false), &default).is_empty());
        assert!(none.widenings(&with(&[("get_time", ApprovalPolicy::Auto)], false), &default).is_empty());
        assert!(with(&[], true).widenings(&none, &default).is_empty());
        assert!(denied.widenings(&denied, &default).is_empty());
    }

    #[test]
    fn typos_are_refused_when_set() {
        let ok = serde_json::json!({"maxIterations": 4});
        assert!(Settings::check(LIMITS, Some(&ok)).is_ok());
        let typo = serde_json::json!({"maxIteration": 4});
        let e = Settings::check(LIMITS, Some(&typo)).unwrap_err();
        assert!(e.message.contains("maxIteration"), "{}", e.message);
        assert!(Settings::check("nope", None).is_err());
    }
}
