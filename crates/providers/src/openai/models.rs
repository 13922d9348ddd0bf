//! OpenAI's model listing (`GET {base}/models`), shared by the Chat and the Responses provider,
//! and what an OpenRouter-style listing says each model can do.

use crate::endpoint::Endpoint;
use serde_json::Value;
use switchboard_core::ProviderError;
use switchboard_core::provider::{ModelCapabilities, ModelInfo};

/// `GET {base}/models` with the key, sorted ids.
pub(crate) async fn list_models(endpoint: &Endpoint) -> Result<Vec<String>, ProviderError> {
    Ok(list_model_infos(endpoint).await?.into_iter().map(|m| m.id).collect())
}

/// What one entry of an OpenAI-style listing says a model can do. OpenAI says nothing;
/// OpenRouter lists `supported_parameters` (`tools`, `reasoning`) and
/// `architecture.input_modalities` (`image`).
fn listed_capabilities(entry: &Value) -> ModelCapabilities {
    let params: Option<Vec<&str>> =
        entry["supported_parameters"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect());
    let inputs: Option<Vec<&str>> =
        entry["architecture"]["input_modalities"].as_array().map(|a| a.iter().filter_map(Value::as_str).collect());
    ModelCapabilities {
        tools: params.as_ref().map(|p| p.contains(&"tools")),
        images: inputs.as_ref().map(|i| i.contains(&"image")),
        reasoning: params.as_ref().map(|p| p.contains(&"reasoning") || p.contains(&"include_reasoning")),
        sampling: params.as_ref().map(|p| p.contains(&"temperature")),
    }
}

/// [`list_models`] with what the listing says about each model.
pub(crate) async fn list_model_infos(endpoint: &Endpoint) -> Result<Vec<ModelInfo>, ProviderError> {
    let v = endpoint.get_json(&endpoint.url("models"), &[]).await?;
    let mut models: Vec<ModelInfo> = v["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| Some(ModelInfo { id: m["id"].as_str()?.to_owned(), capabilities: listed_capabilities(m) }))
        .collect();
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
            ModelCapabilities { tools: Some(false), images: Some(false), reasoning: Some(false), sampling: Some(true) }
        );
        let tools = json!({"id": "x", "supported_parameters": ["tools", "reasoning"]});
        assert_eq!(listed_capabilities(&tools).tools, Some(true));
        assert_eq!(listed_capabilities(&tools).reasoning, Some(true));
        assert_eq!(listed_capabilities(&json!({"id": "gpt-4o", "owned_by": "openai"})), ModelCapabilities::default());
    }
}
