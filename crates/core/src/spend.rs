//! What tokens cost: a model's [`Prices`] and the cost of one request's [`Usage`].
//!
//! Prices are US dollars per million tokens, as providers publish them. Every provider here
//! normalises `prompt_tokens` to include the cached and cache-written tokens (Anthropic reports
//! them apart; its parser adds them), and `completion_tokens` to include reasoning, so a cost is
//! computed once, here, the same for every API.
//!
//! Invariant: an unknown price is `None` wherever a price travels, never zero; zero is a price
//! (a local server is free).

use crate::types::Usage;
use serde::{Deserialize, Serialize};

/// A model's prices in US dollars per million tokens.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prices {
    /// Input tokens not read from a cache.
    pub input: f64,
    /// Output tokens (reasoning too, unless [`Prices::reasoning`] prices it apart).
    pub output: f64,
    /// Input tokens read from the provider's prompt cache; `None`: billed as input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cached_read: Option<f64>,
    /// Input tokens written to the prompt cache; `None`: billed as input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub cache_write: Option<f64>,
    /// Reasoning tokens where billed apart from output; `None`: billed as output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reasoning: Option<f64>,
}

impl Prices {
    /// Free: what a local server costs.
    pub const FREE: Prices = Prices { input: 0.0, output: 0.0, cached_read: None, cache_write: None, reasoning: None };

    /// What `usage` costs, in US dollars.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_tokens.min(usage.prompt_tokens);
        let written = usage.cache_write_tokens.min(usage.prompt_tokens - cached);
        let fresh = usage.prompt_tokens - cached - written;
        let reasoning = usage.reasoning_tokens.min(usage.completion_tokens);
        let visible = usage.completion_tokens - reasoning;
        let per_token = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per_token(fresh, self.input)
            + per_token(cached, self.cached_read.unwrap_or(self.input))
            + per_token(written, self.cache_write.unwrap_or(self.input))
            + per_token(visible, self.output)
            + per_token(reasoning, self.reasoning.unwrap_or(self.output))
    }

    /// Whether every price is a finite number of zero or more (what a person may set).
    pub fn is_valid(&self) -> bool {
        let ok = |p: f64| p.is_finite() && p >= 0.0;
        ok(self.input)
            && ok(self.output)
            && [self.cached_read, self.cache_write, self.reasoning].into_iter().flatten().all(ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u64, completion: u64, reasoning: u64, cached: u64, written: u64) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            reasoning_tokens: reasoning,
            cached_tokens: cached,
            cache_write_tokens: written,
        }
    }

    #[test]
    fn each_kind_of_token_is_billed_at_its_own_price() {
        let prices =
            Prices { input: 3.0, output: 15.0, cached_read: Some(0.3), cache_write: Some(3.75), reasoning: None };
        // 1M prompt: 600K fresh, 300K cached, 100K written; 200K output of which 50K reasoning.
        let cost = prices.cost(&usage(1_000_000, 200_000, 50_000, 300_000, 100_000));
        let expected = 0.6 * 3.0 + 0.3 * 0.3 + 0.1 * 3.75 + 0.15 * 15.0 + 0.05 * 15.0;
        assert!((cost - expected).abs() < 1e-9, "{cost} != {expected}");
    }

    #[test]
    fn missing_prices_fall_back_to_input_and_output() {
        let prices = Prices { input: 2.0, output: 8.0, reasoning: Some(20.0), ..Prices::default() };
        let cost = prices.cost(&usage(1_000_000, 1_000_000, 500_000, 400_000, 0));
        let expected = 0.6 * 2.0 + 0.4 * 2.0 + 0.5 * 8.0 + 0.5 * 20.0;
        assert!((cost - expected).abs() < 1e-9, "{cost} != {expected}");
    }

    #[test]
    fn inconsistent_counts_never_bill_a_token_twice_or_underflow() {
        let prices = Prices { input: 1.0, output: 1.0, ..Prices::default() };
        let cost = prices.cost(&usage(100, 10, 50, 300, 300));
        assert!((cost - 110.0 / 1_000_000.0).abs() < 1e-12, "{cost}");
        assert_eq!(Prices::FREE.cost(&usage(5_000, 5_000, 0, 0, 0)), 0.0);
    }

    #[test]
    fn a_price_a_person_sets_is_a_finite_number_of_zero_or_more() {
        assert!(Prices::FREE.is_valid());
        assert!(!Prices { input: -1.0, ..Prices::default() }.is_valid());
        assert!(!Prices { output: f64::NAN, ..Prices::default() }.is_valid());
        assert!(!Prices { cached_read: Some(f64::INFINITY), ..Prices::default() }.is_valid());
    }
}
