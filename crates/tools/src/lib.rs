//! Built-in tools. Each is a [`Tool`](switchboard_core::Tool) with a JSON Schema, an example
//! output for dry runs, and a typed error the model can act on.
//!
//! - `get_time` ([`GetTime`]): the current time in a time zone.
//! - `web_search` ([`WebSearch`]): Tavily, Exa or SearXNG, with the person's own key.
//! - `web_fetch` ([`WebFetch`]): one page as Markdown, refusing local and private addresses.
//!
//! Architecture invariant: tools get keys only through [`ToolContext::secrets`](switchboard_core::ToolContext)
//! and never log arguments or results at info level.

mod time;
pub mod web;

pub use time::GetTime;
pub use web::{SearchBackend, WebFetch, WebSearch, WebToolsConfig};

use std::sync::Arc;
use switchboard_core::{RegistryError, ToolRegistry};

/// A registry with `get_time` only.
///
/// Kept as it was so existing callers (and their tests, which count the offered tools) see the
/// same tool list; a shell that offers the web tools calls [`builtin_registry_with`].
pub fn builtin_registry() -> Result<ToolRegistry, RegistryError> {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(GetTime::new()))?;
    Ok(registry)
}

/// A registry with every built-in tool: `get_time`, `web_search` and `web_fetch`, the web tools
/// configured by `config` (backend, SearXNG URL, local addresses, limits).
///
/// The web tools are registered even when `config` cannot work (SearXNG without a URL): each call
/// then tells the person what to fix in Settings, which is more useful than a tool that silently
/// disappears. [`WebToolsConfig::validate`] checks a configuration up front for the settings screen.
pub fn builtin_registry_with(config: &WebToolsConfig) -> Result<ToolRegistry, RegistryError> {
    let mut registry = builtin_registry()?;
    registry.register(Arc::new(WebSearch::new(config)))?;
    registry.register(Arc::new(WebFetch::new(config)))?;
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::ToolSource;

    /// The registry compiles built-in schemas lazily and as Draft 7 (see
    /// `ToolRegistry::register`), so a broken one would only show at its first call: catch it
    /// here, for every backend, against both Draft 7 and the 2020-12 meta-schema MCP uses.
    #[test]
    fn builtin_schemas_are_valid() {
        for backend in [SearchBackend::Tavily, SearchBackend::Exa, SearchBackend::Searxng] {
            let config = WebToolsConfig { search_backend: backend, ..WebToolsConfig::default() };
            let registry = builtin_registry_with(&config).unwrap();
            assert_eq!(registry.len(), 3);
            for def in registry.defs() {
                assert_eq!(def.source, ToolSource::Builtin);
                let draft7 = jsonschema::options().with_draft(jsonschema::Draft::Draft7);
                if let Err(e) = draft7.build(&def.parameters) {
                    panic!("{} ({backend:?}): not a Draft 7 schema: {e}", def.name);
                }
                if let Err(e) = jsonschema::meta::validate(&def.parameters) {
                    panic!("{} ({backend:?}): not a valid 2020-12 schema: {e}", def.name);
                }
                // Validating compiles it in the registry; a schema error would say so.
                if let Err(problem) = registry.validate(&def.name, &serde_json::json!({})) {
                    assert!(!problem.contains("invalid parameter schema"), "{}: {problem}", def.name);
                }
            }
        }
    }
}
