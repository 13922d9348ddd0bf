//! The provider-kind table: every model API Switchboard speaks, declared once, as data.
//!
//! A kind says what it is called, where its API usually lives, which environment variable
//! usually holds its key, which header carries it ([`KeyHeader`]) and what it can do. Everything
//! else (the CLI's `--kind`, Settings' kind picker, key fallbacks, model listing, the service's
//! provider factory) reads this table. The API folders sit above it (their endpoint reads the key
//! rule here) and `build.rs` above them turns a kind into its provider, so adding an API is
//! one folder, one entry in [`KINDS`] and one arm in `build.rs`.

use serde::Serialize;
use switchboard_core::tool::SecretValue;
use switchboard_core::{ErrorKind, ProviderError, ToolLimits};

/// What an API can do, as far as the service and the UI need to know. (What a model can do is
/// [`crate::models`]' business; how a kind forces "one of these tools" is its provider's.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Lists its models over the API.
    pub lists_models: bool,
}

/// How a kind's key travels: declared per kind in [`KINDS`] and applied by
/// [`crate::endpoint::Endpoint`], the only place a key becomes a header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer <key>` (OpenAI and the servers that copy its API).
    Bearer,
    /// `x-api-key: <key>` (Anthropic).
    XApiKey,
    /// `x-goog-api-key: <key>` (Gemini; never `?key=` in the URL, which errors, logs and
    /// redirects would quote).
    XGoogApiKey,
}

impl KeyHeader {
    /// The header's name.
    pub fn name(self) -> &'static str {
        match self {
            KeyHeader::Bearer => "authorization",
            KeyHeader::XApiKey => "x-api-key",
            KeyHeader::XGoogApiKey => "x-goog-api-key",
        }
    }

    /// The header's value for `key`.
    pub fn value(self, key: &SecretValue) -> String {
        match self {
            KeyHeader::Bearer => format!("Bearer {}", key.expose()),
            KeyHeader::XApiKey | KeyHeader::XGoogApiKey => key.expose().to_owned(),
        }
    }
}

/// Everything needed to build a provider for one profile.
#[derive(Clone, Debug)]
pub struct ProviderSettings {
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// The key, if the profile has one (local servers often need none).
    pub api_key: Option<SecretValue>,
    /// Responses API: whether the provider keeps responses (`store`); `None` is the API's
    /// default (kept). Other kinds ignore it.
    pub store: Option<bool>,
}

/// One model API.
#[derive(Debug)]
pub struct ProviderKind {
    /// The name stored in profiles and typed after `--kind`.
    pub id: &'static str,
    /// Other names accepted when parsing (never stored).
    pub aliases: &'static [&'static str],
    /// What pickers show.
    pub label: &'static str,
    /// The base URL a new profile of this kind starts with.
    pub default_base_url: &'static str,
    /// The environment variable this kind's key is usually in (a fallback after the keychain
    /// and `SWITCHBOARD_KEY_<PROFILE>`).
    pub key_env: &'static str,
    /// How the key travels in a request: the only place this rule is written
    /// ([`crate::endpoint::Endpoint`] applies it).
    pub key_header: KeyHeader,
    /// What the API can do.
    pub capabilities: Capabilities,
    /// The most tools one request may carry: the API's documented maximum, or where it documents
    /// none a stated conservative number (each entry says which). The loop learns it through
    /// `Provider::tool_limits` and never sends more; the rest is reached through `find_tools`.
    pub max_tools: usize,
}

/// Every API, in the order pickers list them.
pub static KINDS: &[ProviderKind] = &[
    ProviderKind {
        id: "openai",
        aliases: &["openai-compatible", "openai_compatible"],
        label: "OpenAI / OpenAI-compatible (Ollama, LM Studio, vLLM, llama.cpp, OpenRouter)",
        default_base_url: "https://api.openai.com/v1",
        key_env: "OPENAI_API_KEY",
        key_header: KeyHeader::Bearer,
        capabilities: Capabilities { lists_models: true },
        // Chat Completions: "A max of 128 functions are supported" (API reference, `tools`).
        // Servers that copy the API (Ollama, vLLM, ...) get the same bound.
        max_tools: 128,
    },
    ProviderKind {
        id: "openai-responses",
        aliases: &[],
        label: "OpenAI (Responses API)",
        default_base_url: "https://api.openai.com/v1",
        key_env: "OPENAI_API_KEY",
        key_header: KeyHeader::Bearer,
        capabilities: Capabilities { lists_models: true },
        // Responses: 128 function tools, as Chat Completions documents.
        max_tools: 128,
    },
    ProviderKind {
        id: "anthropic",
        aliases: &["claude"],
        label: "Anthropic (Claude)",
        default_base_url: "https://api.anthropic.com/v1",
        key_env: "ANTHROPIC_API_KEY",
        key_header: KeyHeader::XApiKey,
        capabilities: Capabilities { lists_models: true },
        // The Messages API documents no maximum for `tools` (its tool-search guide says
        // selection degrades past 30-50 tools and defers large catalogues instead): 128, the
        // bound OpenAI documents, chosen as a conservative number.
        max_tools: 128,
    },
    ProviderKind {
        id: "gemini",
        aliases: &[],
        label: "Google Gemini",
        default_base_url: "https://generativelanguage.googleapis.com/v1beta",
        key_env: "GEMINI_API_KEY",
        key_header: KeyHeader::XGoogApiKey,
        capabilities: Capabilities { lists_models: true },
        // Google's SDK references (Vertex AI `Tool.function_declarations`, Firebase AI Logic's
        // `FunctionDeclarationsTool`) say "Maximum 64 function declarations can be provided";
        // Vertex AI's function-calling reference says 128. The lower, 64, is kept.
        max_tools: 64,
    },
];

impl ProviderKind {
    /// The catalogue bounds of a request to the kind `id` (an id from [`KINDS`]; another gets
    /// the core's defaults): its `max_tools` and the core's request schema budget.
    pub fn tool_limits(id: &str) -> ToolLimits {
        KINDS
            .iter()
            .find(|k| k.id == id)
            .map_or_else(ToolLimits::default, |k| ToolLimits { max_tools: k.max_tools, ..ToolLimits::default() })
    }

    /// The kind called `name` (its id or an alias), or an error listing the kinds there are.
    pub fn parse(name: &str) -> Result<&'static ProviderKind, ProviderError> {
        KINDS.iter().find(|k| k.id == name || k.aliases.contains(&name)).ok_or_else(|| {
            let known: Vec<&str> = KINDS.iter().map(|k| k.id).collect();
            ProviderError::new(
                ErrorKind::Config,
                format!("Unknown provider kind '{name}'. Supported: {}.", known.join(", ")),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_aliases_are_unique_across_kinds() {
        let mut seen = std::collections::BTreeSet::new();
        for k in KINDS {
            for name in std::iter::once(&k.id).chain(k.aliases) {
                assert!(seen.insert(*name), "'{name}' names two kinds");
            }
        }
    }

    #[test]
    fn a_kind_parses_by_id_and_alias_and_an_unknown_one_lists_the_known() {
        assert_eq!(ProviderKind::parse("openai").unwrap().id, "openai");
        assert_eq!(ProviderKind::parse("openai-compatible").unwrap().id, "openai");
        assert_eq!(ProviderKind::parse("openai-responses").unwrap().id, "openai-responses");
        let e = ProviderKind::parse("anthropics").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Config);
        assert!(e.message.contains("'anthropics'") && e.message.contains("Supported: openai"), "{}", e.message);
    }

    #[test]
    fn every_kind_builds_a_provider_for_its_default_base_url() {
        for k in KINDS {
            let p = k
                .provider(ProviderSettings { base_url: k.default_base_url.into(), api_key: None, store: None })
                .unwrap();
            assert_eq!(p.kind(), k.id);
            assert_eq!(p.tool_limits().max_tools, k.max_tools, "{}: the provider reports its kind's maximum", k.id);
            assert!(k.default_base_url.starts_with("https://"), "{}", k.id);
        }
    }
}
