//! Provider presets: the services and local servers people usually add, with their API kind and
//! address filled in. Settings' "Add provider" offers them; Ollama and LM Studio are also looked
//! for on their default ports ([`LOCAL`]).

use serde::Serialize;

/// One preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Preset {
    /// Stable id, also the suggested profile name.
    pub id: &'static str,
    /// What the picker shows.
    pub label: &'static str,
    /// The API kind (an id of `KINDS`).
    pub kind: &'static str,
    /// The base URL.
    pub base_url: &'static str,
    /// Whether it needs a key.
    pub needs_key: bool,
    /// A model to start with, when one is a safe default.
    pub model: Option<&'static str>,
    /// A local server: looked for on its default port.
    pub local: bool,
}

/// Every preset, in the order the picker lists them.
pub static PRESETS: &[Preset] = &[
    Preset {
        id: "openai",
        label: "OpenAI",
        kind: "openai",
        base_url: "https://api.openai.com/v1",
        needs_key: true,
        model: Some("gpt-4o-mini"),
        local: false,
    },
    Preset {
        id: "openai-responses",
        label: "OpenAI (Responses API)",
        kind: "openai-responses",
        base_url: "https://api.openai.com/v1",
        needs_key: true,
        model: Some("gpt-4.1-mini"),
        local: false,
    },
    Preset {
        id: "anthropic",
        label: "Anthropic (Claude)",
        kind: "anthropic",
        base_url: "https://api.anthropic.com/v1",
        needs_key: true,
        model: Some("claude-sonnet-4-5"),
        local: false,
    },
    Preset {
        id: "gemini",
        label: "Google Gemini",
        kind: "gemini",
        base_url: "https://generativelanguage.googleapis.com/v1beta",
        needs_key: true,
        model: Some("gemini-2.5-flash"),
        local: false,
    },
    Preset {
        id: "openrouter",
        label: "OpenRouter",
        kind: "openai",
        base_url: "https://openrouter.ai/api/v1",
        needs_key: true,
        model: None,
        local: false,
    },
    Preset {
        id: "ollama",
        label: "Ollama",
        kind: "openai",
        base_url: "http://localhost:11434/v1",
        needs_key: false,
        model: None,
        local: true,
    },
    Preset {
        id: "lmstudio",
        label: "LM Studio",
        kind: "openai",
        base_url: "http://localhost:1234/v1",
        needs_key: false,
        model: None,
        local: true,
    },
    Preset {
        id: "vllm",
        label: "vLLM",
        kind: "openai",
        base_url: "http://localhost:8000/v1",
        needs_key: false,
        model: None,
        local: false,
    },
    Preset {
        id: "llamacpp",
        label: "llama.cpp server",
        kind: "openai",
        base_url: "http://localhost:8080/v1",
        needs_key: false,
        model: None,
        local: false,
    },
];

/// The presets looked for on their default ports (Ollama, LM Studio).
pub fn local() -> impl Iterator<Item = &'static Preset> {
    PRESETS.iter().filter(|p| p.local)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_names_a_kind_and_a_valid_address() {
        let mut ids = std::collections::BTreeSet::new();
        for p in PRESETS {
            assert!(ids.insert(p.id), "{} twice", p.id);
            crate::ProviderKind::parse(p.kind).unwrap();
            assert!(p.base_url.starts_with("https://") || p.base_url.starts_with("http://localhost:"), "{}", p.id);
            assert_eq!(p.needs_key, !p.base_url.starts_with("http://localhost:"), "{}", p.id);
        }
        assert_eq!(local().map(|p| p.id).collect::<Vec<_>>(), ["ollama", "lmstudio"]);
    }
}
