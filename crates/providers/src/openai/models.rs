//! OpenAI's model listing (`GET {base}/models`), shared by the Chat and the Responses provider,
//! and what an OpenRouter-style listing says each model can do, how much it holds and costs.
//! OpenAI itself says none of it; OpenRouter, Together, Groq, Mistral, vLLM and LM Studio say
//! some, each in its own field. A number that is not a positive count is treated as unsaid.

use crate::endpoint::Endpoint;
use serde_json::Value;
use switchboard_core::Prices;
use switchboard_core::ProviderError;
use switchboard_core::provider::{ModelCapabilities, ModelInfo};

/// `GET {base}/models` with the key, sorted ids.
pub(crate) async fn list_models(endpoint: &Endpoint) -> Result<Vec<String>, ProviderError> {
    Ok(list_model_infos(endpoint).await?.into_iter().map(|m| m.id).collect())
}

/// What one entry of an OpenAI-style listing says a model can do. OpenAI says nothing;
/// OpenRouter lists `supported_parameters` (`tools`, `reasoning`) and
/// `architecture.input_modalities` (`image`, `file`).
fn listed_capabilities(entry: &Value) -> ModelCapabilities {
    let params: Option<Vec<&str>> =
        entry["supported_parameters"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect());
    let inputs: Option<Vec<&str>> =
        entry["architecture"]["input_modalities"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect());
    ModelCapabilities {
        tools: params.as_ref().map(|p| p.contains(&"tools")),
        images: inputs.as_ref().map(|i| i.contains(&"image")),
        pdf: inputs.as_ref().map(|i| i.contains(&"file")),
        reasoning: params.as_ref().map(|p| p.contains(&"reasoning") || p.contains(&"include_reasoning")),
        sampling: params.as_ref().map(|p| p.contains(&"temperature")),
    }
}

/// Token counts above this are not a real model's (a listing's placeholder or a typo).
const MAX_TOKENS: u64 = 100_000_000;

/// A positive token count at `value`, else nothing.
fn count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| value.as_str()?.trim().parse().ok()).filter(|&n| n > 0 && n <= MAX_TOKENS)
}

/// The context window one entry states: the loaded context first (LM Studio runs a model with
/// less than it could take), then each API's own field.
fn listed_window(entry: &Value) -> Option<u64> {
    [
        &entry["loaded_context_length"], // LM Studio
        &entry["context_length"],        // OpenRouter, Together
        &entry["context_window"],        // Groq
        &entry["max_model_len"],         // vLLM
        &entry["max_context_length"],    // Mistral, LM Studio
        &entry["top_provider"]["context_length"],
    ]
    .into_iter()
    .find_map(count)
}

/// The output limit one entry states.
fn listed_max_output(entry: &Value) -> Option<u64> {
    [&entry["top_provider"]["max_completion_tokens"], &entry["max_completion_tokens"]].into_iter().find_map(count)
}

/// The prices one entry states, per million tokens. OpenRouter states them per token, as
/// strings (`"0.0000025"`); `"-1"` means "varies" (its router). Any price that is not a number
/// of zero or more makes the entry's price unstated: unknown, never free.
fn listed_prices(entry: &Value) -> Option<Prices> {
    let pricing = entry["pricing"].as_object()?;
    let per_million = |key: &str| -> Result<Option<f64>, ()> {
        let Some(v) = pricing.get(key).filter(|v| !v.is_null()) else { return Ok(None) };
        let per_token = v.as_f64().or_else(|| v.as_str()?.trim().parse().ok()).ok_or(())?;
        if per_token.is_finite() && per_token >= 0.0 { Ok(Some(per_token * 1_000_000.0)) } else { Err(()) }
    };
    let read = || -> Result<Option<Prices>, ()> {
        let (Some(input), Some(output)) = (per_million("prompt")?, per_million("completion")?) else { return Ok(None) };
        Ok(Some(Prices {
            input,
            output,
            cached_read: per_million("input_cache_read")?,
            cache_write: per_million("input_cache_write")?,
            reasoning: per_million("internal_reasoning")?.filter(|&p| p > 0.0),
        }))
    };
    read().unwrap_or_else(|()| {
        tracing::debug!(model = %entry["id"], "the listing's price is not a number of zero or more; price unknown");
        None
    })
}

/// One entry as a [`ModelInfo`], when it has an id.
fn listed(entry: &Value) -> Option<ModelInfo> {
    Some(ModelInfo {
        capabilities: listed_capabilities(entry),
        context_window: listed_window(entry),
        max_output: listed_max_output(entry),
        prices: listed_prices(entry),
        ..ModelInfo::id(entry["id"].as_str()?)
    })
}

/// [`list_models`] with what the listing says about each model.
pub(crate) async fn list_model_infos(endpoint: &Endpoint) -> Result<Vec<ModelInfo>, ProviderError> {
    let v = endpoint.get_json(&endpoint.url("models"), &[]).await?;
    let mut models: Vec<ModelInfo> = v["data"].as_array().into_iter().flatten().filter_map(listed).collect();
    models.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(models)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listing_that_says_what_a_model_takes_is_read_and_one_that_does_not_is_unknown() {
        let openrouter = json!({
            "id": "google/gemma-2-9b-it",
            "supported_parameters": ["max_tokens", "temperature"],
            "architecture": {"input_modalities": ["text"]},
        });
        assert_eq!(
            listed_capabilities(&openrouter),
            ModelCapabilities {
                tools: Some(false),
                images: Some(false),
                pdf: Some(false),
                reasoning: Some(false),
                sampling: Some(true)
            }
        );
        let tools = json!({"id": "x", "supported_parameters": ["tools", "reasoning"]});
        assert_eq!(listed_capabilities(&tools).tools, Some(true));
        assert_eq!(listed_capabilities(&tools).reasoning, Some(true));
        assert_eq!(listed_capabilities(&json!({"id": "gpt-4o", "owned_by": "openai"})), ModelCapabilities::default());
    }

    #[test]
    fn a_listing_that_states_a_window_and_an_output_limit_is_read_in_each_apis_field() {
        let openrouter = json!({
            "id": "openai/gpt-4o",
            "context_length": 128_000,
            "top_provider": {"context_length": 128_000, "max_completion_tokens": 16_384},
        });
        let m = listed(&openrouter).unwrap();
        assert_eq!((m.context_window, m.max_output), (Some(128_000), Some(16_384)));
        let vllm = listed(&json!({"id": "qwen", "max_model_len": 32_768})).unwrap();
        assert_eq!(vllm.context_window, Some(32_768));
        let lmstudio =
            listed(&json!({"id": "q", "max_context_length": 131_072, "loaded_context_length": 4096})).unwrap();
        assert_eq!(lmstudio.context_window, Some(4096), "the loaded context is what fits now");
        let groq = listed(&json!({"id": "g", "context_window": "8192", "max_completion_tokens": 0})).unwrap();
        assert_eq!((groq.context_window, groq.max_output), (Some(8192), None), "0 is unsaid");
        let absurd = listed(&json!({"id": "x", "context_length": -1, "max_model_len": 1e12})).unwrap();
        assert_eq!(absurd.context_window, None);
        assert_eq!(listed(&json!({"id": "gpt-4o", "owned_by": "openai"})).unwrap(), ModelInfo::id("gpt-4o"));
        assert_eq!(listed(&json!({"object": "model"})), None);
    }

    #[test]
    fn openrouters_per_token_price_strings_become_prices_per_million_and_a_bad_one_unknown() {
        let entry = json!({
            "id": "anthropic/claude-sonnet-4.5",
            "pricing": {"prompt": "0.000003", "completion": "0.000015", "input_cache_read": "0.0000003",
                        "input_cache_write": "0.00000375", "internal_reasoning": "0", "request": "0"},
        });
        let p = listed(&entry).unwrap().prices.unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(p.input, 3.0) && close(p.output, 15.0), "{p:?}");
        assert!(close(p.cached_read.unwrap(), 0.3) && close(p.cache_write.unwrap(), 3.75), "{p:?}");
        assert_eq!(p.reasoning, None, "a zero reasoning price means billed as output");
        let free = listed(&json!({"id": "x:free", "pricing": {"prompt": "0", "completion": "0"}})).unwrap();
        assert_eq!(free.prices, Some(Prices::FREE), "a stated zero is free");
        for pricing in [
            json!({"prompt": "-1", "completion": "-1"}),
            json!({"prompt": "cheap", "completion": "0.1"}),
            json!({"prompt": "0.1"}),
        ] {
            assert_eq!(listed(&json!({"id": "r", "pricing": pricing})).unwrap().prices, None, "{pricing}");
        }
    }
}
