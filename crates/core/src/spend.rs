//! Prices (placeholder until the lead's foundation lands; replaced by main's on merge).

use crate::types::Usage;
use serde::{Deserialize, Serialize};

/// USD per million tokens.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prices {
    /// Input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Cached read.
    pub cached_read: Option<f64>,
    /// Cache write.
    pub cache_write: Option<f64>,
    /// Reasoning.
    pub reasoning: Option<f64>,
}

impl Prices {
    /// The cost of `usage` in USD.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let m = 1_000_000.0;
        let cached = usage.cached_tokens.min(usage.prompt_tokens);
        let written = usage.cache_write_tokens.min(usage.prompt_tokens - cached);
        let plain = usage.prompt_tokens - cached - written;
        let reasoning = usage.reasoning_tokens.min(usage.completion_tokens);
        let out = usage.completion_tokens - reasoning;
        (plain as f64 * self.input
            + cached as f64 * self.cached_read.unwrap_or(self.input)
            + written as f64 * self.cache_write.unwrap_or(self.input)
            + out as f64 * self.output
            + reasoning as f64 * self.reasoning.unwrap_or(self.output))
            / m
    }
}
