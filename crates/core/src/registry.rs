//! The tool registry: every source's tools under unique names, with compiled argument schemas.
//!
//! Invariant: no definition over [`MAX_TOOL_DEFINITION_BYTES`] and no tool named
//! [`FIND_TOOLS`] is registered; a schema is compiled at most once per registry, when its tool
//! is first called, so a catalogue of thousands of tools costs nothing to compile up front.

use crate::catalogue::{Candidate, FIND_TOOLS, MAX_TOOL_DEFINITION_BYTES, definition_bytes};
use crate::lint::{self, Finding};
use crate::tool::Tool;
use crate::vocab::{ToolDef, ToolSource};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// Two sources offer the same name; never silently overridden.
    #[error("a tool named '{name}' is already registered (from {existing}); the one from {new} was not added")]
    Duplicate {
        /// The clashing name.
        name: String,
        /// Source of the tool already registered.
        existing: ToolSource,
        /// Source of the rejected tool.
        new: ToolSource,
    },
    /// The parameters are not a usable JSON Schema.
    #[error("tool '{name}' has an invalid parameter schema: {reason}")]
    InvalidSchema {
        /// Tool name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// The definition is larger than [`MAX_TOOL_DEFINITION_BYTES`].
    #[error(
        "tool '{name}' was left out: its definition is {bytes} bytes, more than the {max} bytes one tool may take (ask its author for a smaller schema)",
        max = MAX_TOOL_DEFINITION_BYTES
    )]
    TooLarge {
        /// Tool name.
        name: String,
        /// Its definition's size ([`definition_bytes`]).
        bytes: usize,
    },
    /// The name belongs to the app's own tool-search step.
    #[error("a tool cannot be named '{name}': the name is reserved for the app's own tool search")]
    Reserved {
        /// The name.
        name: String,
    },
    /// Empty names cannot be called.
    #[error("a tool name cannot be empty")]
    EmptyName,
}

struct Entry {
    tool: Arc<dyn Tool>,
    /// Its [`definition_bytes`], measured once at registration (every request's fitting reads it).
    bytes: usize,
    /// Compiled at the tool's first call (see [`ToolRegistry::register`]).
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

/// Compiles a schema from outside the app: JSON Schema 2020-12 unless it says otherwise, checked
/// against its meta-schema.
fn compile(parameters: &serde_json::Value) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(parameters).map_err(|e| e.to_string())
}

/// Compiles a built-in schema. They keep to Draft 7 (the subset every provider accepts, and whose
/// keywords mean the same in 2020-12); its meta-schema compiles in a quarter of the time of
/// 2020-12's vocabularies, which matters once per process. `builtin_schemas_are_valid` in the
/// tools crate checks every built-in against both.
fn compile_builtin(parameters: &serde_json::Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options().with_draft(jsonschema::Draft::Draft7).build(parameters).map_err(|e| e.to_string())
}

/// All tools known to the app. Cheap to share behind an `Arc`; rebuilt when a source changes.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Entry>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.tools.keys()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool. A duplicate or reserved name, a definition over
    /// [`MAX_TOOL_DEFINITION_BYTES`] or a schema its meta-schema refuses is an error, and the
    /// registry is unchanged.
    ///
    /// No schema is compiled here, only checked against its meta-schema (a tenth of the cost):
    /// most processes (a CLI run, a chat without tools) never call most tools, a catalogue may
    /// hold thousands, and the registry is rebuilt whenever a source changes. A schema is
    /// compiled once, at its tool's first call; one the meta-schema accepts but the compiler does
    /// not (a bad `$ref`, a bad pattern) makes that call an error naming the reason. Built-in
    /// schemas are fixed and tested, so they skip even the meta-schema check.
    pub fn register(&mut self, tool: Arc<dyn Tool>) -> Result<(), RegistryError> {
        let def = tool.def();
        if def.name.is_empty() {
            return Err(RegistryError::EmptyName);
        }
        if def.name == FIND_TOOLS {
            return Err(RegistryError::Reserved { name: def.name.clone() });
        }
        if let Some(existing) = self.tools.get(&def.name) {
            return Err(RegistryError::Duplicate {
                name: def.name.clone(),
                existing: existing.tool.def().source.clone(),
                new: def.source.clone(),
            });
        }
        let bytes = definition_bytes(def);
        if bytes > MAX_TOOL_DEFINITION_BYTES {
            return Err(RegistryError::TooLarge { name: def.name.clone(), bytes });
        }
        if def.source != ToolSource::Builtin {
            jsonschema::meta::validate(&def.parameters)
                .map_err(|e| RegistryError::InvalidSchema { name: def.name.clone(), reason: e.to_string() })?;
        }
        self.tools.insert(def.name.clone(), Entry { tool, bytes, validator: OnceLock::new() });
        Ok(())
    }

    /// Removes every tool of `source` (an MCP server that changed its list or went away).
    pub fn remove_source(&mut self, source: &ToolSource) {
        self.tools.retain(|_, e| &e.tool.def().source != source);
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name).map(|e| &e.tool)
    }

    /// What a request's fitting needs to know of the tool `name`: its definition's size and
    /// whether it is built in.
    pub fn candidate(&self, name: &str) -> Option<Candidate> {
        self.tools.get(name).map(|e| Candidate { bytes: e.bytes, builtin: e.tool.def().source == ToolSource::Builtin })
    }

    /// All definitions, sorted by name.
    pub fn defs(&self) -> impl Iterator<Item = &ToolDef> {
        self.tools.values().map(|e| e.tool.def())
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// What the lint finds in `def` ([`lint::check`]), a name of a tool here from another source
    /// counting as naming another source's tool.
    pub fn lint(&self, def: &ToolDef) -> Vec<Finding> {
        lint::check(def, &|word| self.tools.get(word).is_some_and(|e| e.tool.def().source != def.source))
    }

    /// The lint's findings of every tool here, by name (tools with none left out).
    pub fn findings(&self) -> BTreeMap<String, Vec<Finding>> {
        self.defs()
            .filter_map(|def| {
                let found = self.lint(def);
                (!found.is_empty()).then(|| (def.name.clone(), found))
            })
            .collect()
    }

    /// Checks `args` against the tool's schema; the error names the offending field.
    pub fn validate(&self, name: &str, args: &serde_json::Value) -> Result<(), String> {
        let Some(entry) = self.tools.get(name) else {
            return Err(format!("unknown tool '{name}'"));
        };
        let validator = entry
            .validator
            .get_or_init(|| {
                let def = entry.tool.def();
                if def.source == ToolSource::Builtin {
                    compile_builtin(&def.parameters)
                } else {
                    compile(&def.parameters)
                }
            })
            .as_ref()
            .map_err(|reason| format!("tool '{name}' has an invalid parameter schema: {reason}"))?;
        let problems: Vec<String> = validator
            .iter_errors(args)
            .take(5)
            .map(|e| {
                let path = e.instance_path().to_string();
                if path.is_empty() { e.to_string() } else { format!("field `{path}`: {e}") }
            })
            .collect();
        if problems.is_empty() { Ok(()) } else { Err(problems.join("; ")) }
    }
}
