//! An OpenAPI document of `tools.json` as tools: its kept copy read and converted, one HTTP tool
//! per selected operation (marked as coming from the document), its summary for Settings, and
//! what the person must allow (its keys going to its server). Import and preview, which fetch
//! and keep a document, are [`crate::openapi_docs`], above this.

use super::{DefinedKind, DefinedState, DefinedToolInfo, OpenApiEntry, ToolsFile};
use crate::Service;
use crate::confirm::Widening;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use switchboard_core::{Tool, ToolSource};
use switchboard_tools::HttpTool;
use switchboard_tools::openapi::{self, Converted};

/// One document, converted: what Settings lists and the tools it offers once allowed.
pub(crate) struct BuiltDocument {
    pub(crate) info: DefinedToolInfo,
    pub(crate) tools: Vec<Arc<dyn Tool>>,
    /// What the person must allow (keys to the server), with its fingerprint.
    pub(crate) widening: Option<(Widening, String)>,
}

/// Reads and converts the kept copy of `entry`.
fn load(config_dir: &Path, entry: &OpenApiEntry) -> std::result::Result<Converted, String> {
    let path = config_dir.join(&entry.file);
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("its copy {} could not be read: {e}", path.display()))?;
    let doc = openapi::parse(&text).map_err(|e| e.to_string())?;
    openapi::convert(&doc, &entry.options()).map_err(|e| e.to_string())
}

/// Converts `entry` into tools (each marked as coming from the document), with its summary.
pub(crate) fn build(config_dir: &Path, entry: &OpenApiEntry, fingerprint_of: impl Fn(&str) -> String) -> BuiltDocument {
    let mut info = DefinedToolInfo {
        name: entry.name.clone(),
        kind: DefinedKind::OpenApi,
        description: String::new(),
        target: entry.source.clone().unwrap_or_else(|| entry.file.clone()),
        keys: entry.keys.values().cloned().collect(),
        asks_first: false,
        state: DefinedState::Ready,
    };
    let converted = match load(config_dir, entry) {
        Ok(c) => c,
        Err(reason) => {
            info.state = DefinedState::Invalid { reason: format!("The OpenAPI document '{}': {reason}", entry.name) };
            return BuiltDocument { info, tools: Vec::new(), widening: None };
        }
    };
    let selected: Vec<_> = converted.operations.iter().filter(|o| o.selected).collect();
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut origin = None;
    let mut keys: BTreeSet<String> = BTreeSet::new();
    for op in &selected {
        let mut config = op.tool.clone();
        config.allow_local_addresses = entry.allow_local_addresses;
        keys.extend(config.secrets());
        match HttpTool::new(config) {
            Ok(tool) => {
                origin.get_or_insert_with(|| tool.origin());
                tools.push(Arc::new(tool.with_source(ToolSource::OpenApi { document: entry.name.clone() })));
            }
            Err(e) => tracing::warn!(document = %entry.name, "operation left out: {e}"),
        }
    }
    info.description = format!(
        "{}: {} of {} operations selected{}",
        converted.title,
        tools.len(),
        converted.operations.len(),
        if converted.notes.is_empty() { String::new() } else { format!(" ({} notes)", converted.notes.len()) }
    );
    info.target = format!("{} ({})", origin.clone().unwrap_or_else(|| "no server".into()), info.target);
    info.keys = keys.iter().cloned().collect();
    info.asks_first = tools.iter().any(|t| t.def().approval == switchboard_core::ApprovalPolicy::Ask);
    let widening = (!keys.is_empty()).then(|| {
        let origin = origin.unwrap_or_default();
        let keys: Vec<String> = keys.into_iter().collect();
        let fp = fingerprint_of(&format!("openapi\n{origin}\n{}", keys.join("\n")));
        (Widening::OpenApiKeys { document: entry.name.clone(), keys, origin }, fp)
    });
    BuiltDocument { info, tools, widening }
}

impl Service {
    /// Builds every document of `file` (for the defined tools' sync and listing).
    pub(crate) fn build_documents(&self, file: &ToolsFile) -> Vec<BuiltDocument> {
        let Ok(dir) = self.config_dir() else { return Vec::new() };
        file.open_api.iter().map(|entry| build(&dir, entry, crate::defined_tools::fingerprint)).collect()
    }
}
