//! Built-in tools. Each is a [`Tool`](switchboard_core::Tool) with a JSON Schema, an example
//! output for dry runs, and a typed error the model can act on.
//!
//! - `get_time` ([`GetTime`]): the current time in a time zone.
//! - `web_search` ([`WebSearch`]): Tavily, Exa or SearXNG, with the person's own key.
//! - `web_fetch` ([`WebFetch`]): one page as Markdown, refusing local and private addresses.
//!
//! And the tools people define without code, from the service's `tools.json`:
//!
//! - HTTP API tools ([`HttpTool`]): a URL template with `{{param}}` placeholders, keys only to
//!   the tool's own origin, the same address policy as `web_fetch`.
//! - Command tools ([`CommandTool`]): a program and its argv template, no shell, its process group
//!   killed on timeout or stop.
//!
//! Architecture invariant: tools get keys only through [`ToolContext::secrets`](switchboard_core::ToolContext)
//! and never log arguments or results at info level.

pub mod command;
pub mod http_tool;
pub mod openapi;
pub mod template;
mod time;
pub mod web;

pub use command::{CommandTool, CommandToolConfig, CommandToolError};
pub use http_tool::{HttpTool, HttpToolConfig, HttpToolError, TryReport};
pub use openapi::{Converted, OpenApiError, OpenApiOptions};
pub use time::GetTime;
pub use web::{SearchBackend, WebFetch, WebSearch, WebToolsConfig};

use std::sync::{Arc, Mutex};
use switchboard_core::source::{Source, SourceStatus};
use switchboard_core::{RegistryError, Tool, ToolRegistry};

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
    let mut registry = ToolRegistry::new();
    for tool in builtin_tools(config) {
        registry.register(tool)?;
    }
    Ok(registry)
}

/// Every built-in tool, the web tools configured by `config`.
pub fn builtin_tools(config: &WebToolsConfig) -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(GetTime::new()), Arc::new(WebSearch::new(config)), Arc::new(WebFetch::new(config))]
}

/// The built-in tools as a tool source (the catalog's first): always ready, and rebuilt when
/// the web settings change.
pub struct BuiltinSource {
    state: Mutex<(WebToolsConfig, Vec<Arc<dyn Tool>>)>,
    /// Every built-in name, reserved: no other source may take one.
    names: Vec<String>,
}

impl std::fmt::Debug for BuiltinSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuiltinSource").finish_non_exhaustive()
    }
}

impl BuiltinSource {
    /// The built-in tools configured by `config`.
    pub fn new(config: &WebToolsConfig) -> Self {
        let tools = builtin_tools(config);
        let names = tools.iter().map(|t| t.def().name.clone()).collect();
        Self { state: Mutex::new((config.clone(), tools)), names }
    }

    /// Rebuilds the tools for `config`; `false` (and nothing rebuilt) when it is unchanged.
    /// The caller recomposes the registry when this returns `true`.
    pub fn configure(&self, config: &WebToolsConfig) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if &state.0 == config {
            return false;
        }
        *state = (config.clone(), builtin_tools(config));
        true
    }
}

impl Source for BuiltinSource {
    fn id(&self) -> &str {
        "builtin"
    }

    fn status(&self) -> SourceStatus {
        SourceStatus::Ready
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1.clone()
    }

    fn reserved_names(&self) -> Vec<String> {
        self.names.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::ToolSource;

    #[test]
    fn the_builtin_source_rebuilds_only_when_its_configuration_changes() {
        let source = BuiltinSource::new(&WebToolsConfig::default());
        let names: Vec<String> = source.tools().iter().map(|t| t.def().name.clone()).collect();
        assert_eq!(names, ["get_time", "web_search", "web_fetch"]);
        let before = source.tools();
        assert!(!source.configure(&WebToolsConfig::default()));
        assert!(Arc::ptr_eq(&before[1], &source.tools()[1]), "unchanged settings keep the same tools");
        let searxng = WebToolsConfig { search_backend: SearchBackend::Searxng, ..WebToolsConfig::default() };
        assert!(source.configure(&searxng));
        assert!(!Arc::ptr_eq(&before[1], &source.tools()[1]));
        assert_eq!(source.status(), SourceStatus::Ready);
        assert_eq!(source.reserved_names(), ["get_time", "web_search", "web_fetch"], "every built-in name is reserved");
    }

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
