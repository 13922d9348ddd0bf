//! Values the UI must not write by hand: the loop's defaults, the limits' ranges, every error kind
//! and approval choice, the provider kinds. `tests/bindings.rs` serializes them into
//! `ui/src/lib/ipc/bindings.ts` as constants, next to the generated types.

use crate::ipc::ApprovalChoice;
use crate::settings::{LIMIT_BOUNDS, Limits, Retry};
use serde::Serialize;
use std::collections::BTreeMap;
use switchboard_core::{EngineConfig, ErrorKind};
use switchboard_providers::Capabilities;

/// A provider kind as the UI's kind picker shows it (no aliases: the UI offers ids only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ProviderKindInfo {
    /// The name stored in profiles.
    pub id: String,
    /// What the picker shows.
    pub label: String,
    /// The base URL a new profile of this kind starts with.
    pub default_base_url: String,
    /// The environment variable its key is usually in.
    pub key_env: String,
    /// What the API can do.
    pub capabilities: Capabilities,
}

/// Every provider kind, in the order pickers list them.
pub fn provider_kinds() -> Vec<ProviderKindInfo> {
    switchboard_providers::KINDS
        .iter()
        .map(|k| ProviderKindInfo {
            id: k.id.into(),
            label: k.label.into(),
            default_base_url: k.default_base_url.into(),
            key_env: k.key_env.into(),
            capabilities: k.capabilities,
        })
        .collect()
}

/// What an unset limit means: the engine's defaults, shaped like the settings that override them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EngineDefaults {
    /// Defaults of [`Limits`].
    pub limits: Limits,
    /// Defaults of [`Retry`].
    pub retry: Retry,
}

/// The defaults of [`EngineConfig::default`].
pub fn engine_defaults() -> EngineDefaults {
    let c = EngineConfig::default();
    let n = |v: u64| Some(u32::try_from(v).unwrap_or(u32::MAX));
    EngineDefaults {
        limits: Limits {
            max_iterations: Some(c.max_iterations),
            max_tool_calls_per_round: n(c.max_tool_calls_per_round as u64),
            tool_timeout_secs: n(c.tool_timeout.as_secs()),
            idle_timeout_secs: n(c.idle_timeout.as_secs()),
            compact_at_percent: Some((switchboard_core::ContextLimits::DEFAULT_COMPACT_AT * 100.0).round() as u32),
        },
        retry: Retry { max_retries: Some(c.max_retries), base_delay_ms: n(c.retry_base_delay.as_millis() as u64) },
    }
}

/// A range, as the UI reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Range {
    /// Smallest allowed value.
    pub min: u32,
    /// Largest allowed value.
    pub max: u32,
}

/// [`LIMIT_BOUNDS`] by settings key and field: `limits.maxIterations.min`.
pub fn limit_bounds() -> BTreeMap<&'static str, BTreeMap<&'static str, Range>> {
    let mut out: BTreeMap<_, BTreeMap<_, _>> = BTreeMap::new();
    for b in LIMIT_BOUNDS {
        out.entry(b.group).or_default().insert(b.field, Range { min: b.min, max: b.max });
    }
    out
}

/// Every approval choice, in declaration order.
pub const APPROVAL_CHOICES: &[ApprovalChoice] =
    &[ApprovalChoice::Once, ApprovalChoice::Chat, ApprovalChoice::Always, ApprovalChoice::Deny];

/// Every error kind.
pub const ERROR_KINDS: &[ErrorKind] = ErrorKind::ALL;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{LIMITS, RETRY, Settings};

    /// The variants serde's derive knows, in declaration order, from its error for an unknown one.
    fn variants<T: serde::de::DeserializeOwned + std::fmt::Debug>() -> Vec<String> {
        let e = serde_json::from_str::<T>("\"-\"").unwrap_err().to_string();
        let expected = e.split("expected one of ").nth(1).unwrap_or_else(|| panic!("{e}"));
        expected.split('`').skip(1).step_by(2).map(String::from).collect()
    }

    #[test]
    fn approval_choices_are_complete() {
        let listed: Vec<String> =
            APPROVAL_CHOICES.iter().map(|c| serde_json::to_value(c).unwrap().as_str().unwrap().to_owned()).collect();
        assert_eq!(listed, variants::<ApprovalChoice>());
    }

    #[test]
    fn defaults_lie_within_their_bounds_and_cover_every_limit() {
        let d = engine_defaults();
        let s = Settings { limits: d.limits, retry: d.retry, ..Settings::default() };
        for b in LIMIT_BOUNDS {
            let v = b.value(&s).unwrap_or_else(|| panic!("no default for {}.{}", b.group, b.field));
            assert!((b.min..=b.max).contains(&v), "default {v} of {}.{} is outside its bounds", b.group, b.field);
        }
        s.validate().unwrap();
        assert_eq!(limit_bounds().keys().copied().collect::<Vec<_>>(), [LIMITS, RETRY]);
    }

    #[test]
    fn every_provider_kind_is_listed_with_its_default_url() {
        let kinds = provider_kinds();
        assert_eq!(kinds.len(), switchboard_providers::KINDS.len());
        for k in &kinds {
            assert!(switchboard_providers::ProviderKind::parse(&k.id).is_ok());
            assert!(k.default_base_url.starts_with("http"), "{k:?}");
        }
    }
}
