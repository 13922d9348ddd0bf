//! [`Catalogue`]: LiteLLM's model file read entry by entry into [`ModelSpec`]s.
//!
//! Invariant: a file over [`Catalogue::MAX_BYTES`], one that is not a JSON object, or one with no
//! usable model is refused whole; otherwise a malformed entry skips itself and a malformed price
//! leaves only that model's price unknown (both logged).

use crate::names::candidates;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::LazyLock;
use switchboard_core::Prices;

/// What the catalogue knows about one model. `None` everywhere means "not known".
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSpec {
    /// Input tokens one request may hold.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub context_window: Option<u64>,
    /// Output tokens one response may hold.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_output: Option<u64>,
    /// What its tokens cost; `None`: unknown (never shown as free).
    #[cfg_attr(feature = "ts", ts(optional))]
    pub prices: Option<Prices>,
    /// Whether it takes tools.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub tools: Option<bool>,
    /// Whether it takes images.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub images: Option<bool>,
    /// Whether it takes PDF documents.
    #[cfg_attr(feature = "ts", ts(optional))]
    pub pdf: Option<bool>,
    /// Whether it reasons (takes reasoning controls).
    #[cfg_attr(feature = "ts", ts(optional))]
    pub reasoning: Option<bool>,
}

/// Why a catalogue file could not be read at all.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CatalogueError {
    /// Larger than [`Catalogue::MAX_BYTES`].
    #[error("The model catalogue is {0} bytes, more than the {max} allowed.", max = Catalogue::MAX_BYTES)]
    TooLarge(usize),
    /// Not JSON.
    #[error("The model catalogue is not valid JSON: {0}.")]
    NotJson(String),
    /// JSON, but not an object of models.
    #[error("The model catalogue is not a JSON object of models (LiteLLM's format).")]
    NotAnObject,
    /// An object without one usable model.
    #[error("The model catalogue lists no usable model.")]
    Empty,
}

/// Models by their lower-case LiteLLM key.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    models: HashMap<String, ModelSpec>,
}

static BUNDLED: LazyLock<Catalogue> = LazyLock::new(|| {
    Catalogue::parse(include_bytes!("../data/model_prices_and_context_window.json"))
        .expect("the vendored model catalogue parses (tested)")
});

impl Catalogue {
    /// The largest file read (LiteLLM's whole file is about 3.5 MB).
    pub const MAX_BYTES: usize = 32 << 20;

    /// The vendored snapshot, parsed on first use.
    pub fn bundled() -> &'static Catalogue {
        &BUNDLED
    }

    /// Reads LiteLLM's format: an object whose keys are model names and values their facts.
    pub fn parse(bytes: &[u8]) -> Result<Catalogue, CatalogueError> {
        if bytes.len() > Self::MAX_BYTES {
            return Err(CatalogueError::TooLarge(bytes.len()));
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| CatalogueError::NotJson(e.to_string()))?;
        let Value::Object(entries) = value else { return Err(CatalogueError::NotAnObject) };
        let mut models = HashMap::with_capacity(entries.len());
        for (name, entry) in &entries {
            if name == "sample_spec" {
                continue;
            }
            match entry {
                Value::Object(fields) => {
                    if let Some(spec) = spec(name, fields) {
                        models.insert(name.to_ascii_lowercase(), spec);
                    }
                }
                _ => tracing::warn!(model = %name, "model catalogue entry is not an object; skipped"),
            }
        }
        if models.is_empty() {
            return Err(CatalogueError::Empty);
        }
        Ok(Catalogue { models })
    }

    /// How many models it knows.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// Whether it knows no model.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// What it knows about `model` served by the API `kind` at `base_url`.
    pub fn lookup(&self, kind: &str, base_url: &str, model: &str) -> Option<ModelSpec> {
        candidates(kind, base_url, model).iter().find_map(|key| self.models.get(key)).copied()
    }
}

/// One entry, or `None` when it is not a chat model.
fn spec(name: &str, fields: &Map<String, Value>) -> Option<ModelSpec> {
    if let Some(mode) = fields.get("mode").and_then(Value::as_str)
        && !matches!(mode, "chat" | "responses")
    {
        return None;
    }
    let count = |key: &str| fields.get(key).and_then(Value::as_u64).filter(|&n| n > 0);
    let flag = |key: &str| fields.get(key).and_then(Value::as_bool);
    Some(ModelSpec {
        context_window: count("max_input_tokens"),
        max_output: count("max_output_tokens").or_else(|| count("max_tokens")),
        prices: prices(name, fields),
        tools: flag("supports_function_calling"),
        images: flag("supports_vision"),
        pdf: flag("supports_pdf_input"),
        reasoning: flag("supports_reasoning"),
    })
}

/// Per-token prices turned into per-million ones; any malformed one makes them all unknown.
fn prices(name: &str, fields: &Map<String, Value>) -> Option<Prices> {
    let per_million = |key: &str| -> Result<Option<f64>, ()> {
        match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_f64() {
                Some(p) if p.is_finite() && p >= 0.0 => Ok(Some(p * 1_000_000.0)),
                _ => Err(()),
            },
        }
    };
    let read = || -> Result<Option<Prices>, ()> {
        let (Some(input), Some(output)) = (per_million("input_cost_per_token")?, per_million("output_cost_per_token")?)
        else {
            return Ok(None);
        };
        Ok(Some(Prices {
            input,
            output,
            cached_read: per_million("cache_read_input_token_cost")?,
            cache_write: per_million("cache_creation_input_token_cost")?,
            reasoning: per_million("output_cost_per_reasoning_token")?,
        }))
    };
    read().unwrap_or_else(|()| {
        tracing::warn!(model = %name, "model catalogue entry has a malformed price; its price is unknown");
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn the_vendored_snapshot_knows_each_apis_flagship_models() {
        let c = Catalogue::bundled();
        assert!(c.len() > 300, "{}", c.len());
        let gpt = c.lookup("openai", "https://api.openai.com/v1", "gpt-4o").unwrap();
        assert_eq!(gpt.context_window, Some(128_000));
        let p = gpt.prices.unwrap();
        assert!(close(p.input, 2.5) && close(p.output, 10.0) && close(p.cached_read.unwrap(), 1.25), "{p:?}");
        let claude = c.lookup("anthropic", "https://api.anthropic.com/v1", "claude-sonnet-4-5-20250929").unwrap();
        assert_eq!(claude.context_window, Some(200_000));
        assert!(close(claude.prices.unwrap().cache_write.unwrap(), 3.75));
        let gemini =
            c.lookup("gemini", "https://generativelanguage.googleapis.com/v1beta", "models/gemini-2.5-flash").unwrap();
        assert_eq!(gemini.context_window, Some(1_048_576));
        assert_eq!(gemini.images, Some(true));
        assert!(c.lookup("openai-responses", "https://api.openai.com/v1", "o3").is_some());
        assert!(c.lookup("openai", "https://api.deepseek.com", "deepseek-chat").is_some());
        assert!(c.lookup("openai", "https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4-5").is_some());
        assert_eq!(c.lookup("openai", "https://api.openai.com/v1", "my-finetune"), None);
    }

    #[test]
    fn a_malformed_entry_or_price_costs_only_itself() {
        let c = Catalogue::parse(
            br#"{
                "sample_spec": {"max_input_tokens": "max input tokens"},
                "good": {"mode": "chat", "max_input_tokens": 1000, "input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
                "bad-price": {"mode": "chat", "max_input_tokens": 2000, "input_cost_per_token": "cheap", "output_cost_per_token": 2e-6},
                "negative": {"max_input_tokens": 3000, "input_cost_per_token": -1e-6, "output_cost_per_token": 2e-6},
                "half-priced": {"max_input_tokens": 4000, "input_cost_per_token": 1e-6},
                "not-an-object": 7,
                "an-embedding": {"mode": "embedding", "max_input_tokens": 8000}
            }"#,
        )
        .unwrap();
        let at = |m: &str| c.lookup("openai", "https://api.openai.com/v1", m);
        let good = at("good").unwrap();
        assert!(close(good.prices.unwrap().input, 1.0) && close(good.prices.unwrap().output, 2.0));
        assert_eq!(at("bad-price").unwrap().context_window, Some(2000));
        assert_eq!(at("bad-price").unwrap().prices, None);
        assert_eq!(at("negative").unwrap().prices, None);
        assert_eq!(at("half-priced").unwrap().prices, None, "an input price alone is not a price");
        assert_eq!(at("not-an-object"), None);
        assert_eq!(at("an-embedding"), None);
        assert_eq!(c.len(), 4);
    }

    #[test]
    fn a_file_that_is_not_a_catalogue_is_refused_whole() {
        assert!(matches!(Catalogue::parse(b"{not json"), Err(CatalogueError::NotJson(_))));
        assert_eq!(Catalogue::parse(b"[1, 2]").unwrap_err(), CatalogueError::NotAnObject);
        assert_eq!(Catalogue::parse(br#"{"sample_spec": {}}"#).unwrap_err(), CatalogueError::Empty);
        let huge = vec![b' '; Catalogue::MAX_BYTES + 1];
        assert_eq!(Catalogue::parse(&huge).unwrap_err(), CatalogueError::TooLarge(Catalogue::MAX_BYTES + 1));
    }
}
