//! The model catalogue: each model's context window, output limit, prices and capabilities.
//!
//! The data is LiteLLM's `model_prices_and_context_window.json`, vendored as a dated snapshot in
//! `data/` (trimmed by `scripts/vendor-model-catalogue.py`, licence beside it) and parsed in its
//! own format, so a file refreshed from upstream reads with the same code ([`Catalogue::parse`]).
//! A model is found by the API that serves it, the server's address and the name the person
//! typed ([`Catalogue::lookup`]): `gpt-4o` at api.openai.com, `models/gemini-2.5-flash` at
//! Google, `anthropic/claude-sonnet-4-5` through OpenRouter.
//!
//! [`tokens`] counts a model's tokens (OpenAI's tokenizers, a calibrated estimate otherwise).
//!
//! What the person set on a profile, and what a server's own listing says, come before this
//! table; the service decides that order (`Service::model_spec`).
//!
//! Invariants: reading a catalogue is bounded ([`Catalogue::MAX_BYTES`]) and one malformed entry
//! skips only itself (a malformed price makes only that model's price unknown); an unknown price
//! is `None`, never zero; no I/O here.

mod catalogue;
mod names;
pub mod tokens;

pub use catalogue::{Catalogue, CatalogueError, ModelSpec};

/// The vendored snapshot's provenance (source, version, date), as shipped in `data/SNAPSHOT`.
pub const SNAPSHOT: &str = include_str!("../data/SNAPSHOT");

/// The date of the vendored snapshot.
pub const SNAPSHOT_DATE: &str = "2026-11-27";

/// The window assumed for a model nobody knows: small enough that a request built to fit it fits
/// nearly every chat model served today.
pub const UNKNOWN_WINDOW: u64 = 32_768;

#[cfg(test)]
mod tests {
    #[test]
    fn the_snapshot_note_names_its_date() {
        assert!(super::SNAPSHOT.contains(&format!("date: {}", super::SNAPSHOT_DATE)));
    }
}
