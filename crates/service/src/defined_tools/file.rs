//! `tools.json` and what Settings lists about it: the file's shape (HTTP tools, command tools,
//! OpenAPI documents), each defined tool's kind and state, and the fingerprint of what the
//! person allowed. Plain data: reading and writing the file is all it does.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
pub use switchboard_tools::command::CommandToolConfig;
pub use switchboard_tools::http_tool::HttpToolConfig;
use switchboard_tools::openapi::OpenApiOptions;

/// `tools.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsFile {
    /// HTTP API tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http_tools: Vec<HttpToolConfig>,
    /// Command tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_tools: Vec<CommandToolConfig>,
    /// OpenAPI documents whose operations are tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_api: Vec<OpenApiEntry>,
}

impl ToolsFile {
    /// Reads the file; a missing one is an empty file. The error names the file and the problem.
    pub fn load(path: &Path) -> std::result::Result<ToolsFile, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ToolsFile::default()),
            Err(e) => return Err(format!("{} could not be read: {e}", path.display())),
        };
        Self::parse(&text).map_err(|e| format!("{} is not a valid tools file: {e}", path.display()))
    }

    /// Parses the file's text (blank is empty).
    pub fn parse(text: &str) -> std::result::Result<ToolsFile, String> {
        if text.trim().is_empty() {
            return Ok(ToolsFile::default());
        }
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// Writes it atomically, readable by its owner only.
    pub fn save(&self, path: &Path) -> std::result::Result<(), String> {
        let mut text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        text.push('\n');
        switchboard_mcp::config::write_private(path, &text)
            .map_err(|e| format!("{} could not be written: {e}", path.display()))
    }

    /// Every tool's name, in file order.
    pub fn names(&self) -> Vec<&str> {
        self.http_tools
            .iter()
            .map(|t| t.name.as_str())
            .chain(self.command_tools.iter().map(|t| t.name.as_str()))
            .collect()
    }
}

/// The kind of a defined tool.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DefinedKind {
    /// An HTTP API tool.
    Http,
    /// A command tool.
    Command,
    /// An OpenAPI document (one tool per offered operation).
    OpenApi,
}

/// Where a defined tool stands.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum DefinedState {
    /// Offered to the model.
    Ready,
    /// Waiting until the person allows it as it is now; `reason` says what to allow.
    NeedsApproval {
        /// What the person is asked, in words.
        reason: String,
    },
    /// The definition cannot work; `reason` says why.
    Invalid {
        /// What is wrong, in words.
        reason: String,
    },
}

/// One defined tool as Settings and `switchboard tools defined` show it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinedToolInfo {
    /// Its name (as the model sees it).
    pub name: String,
    /// HTTP or command.
    pub kind: DefinedKind,
    /// What it does, for the model.
    pub description: String,
    /// What it reaches: the method and URL template, or the command line template.
    pub target: String,
    /// The keys it uses (by name).
    pub keys: Vec<String>,
    /// Whether each call asks the person first.
    pub asks_first: bool,
    /// Where it stands.
    pub state: DefinedState,
}

/// Every defined tool, and the file they come from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DefinedToolsOverview {
    /// The file's path.
    pub config_path: Option<String>,
    /// Why the file could not be used, in words; the tools are then the last good ones.
    pub problem: Option<String>,
    /// The tools in file order, HTTP tools first.
    pub tools: Vec<DefinedToolInfo>,
}

/// One defined tool's whole definition, as the file holds it (for editing it).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "config", rename_all = "camelCase")]
pub enum DefinedConfig {
    /// An HTTP API tool.
    Http(HttpToolConfig),
    /// A command tool.
    Command(CommandToolConfig),
}

/// What trying an HTTP tool did, for the page: the exact request (keys masked) and either the
/// response (`ok`) or what went wrong (`error`).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TryResult {
    /// The request as it was sent (keys as `[secret NAME]`), or why it could not be built.
    pub request: String,
    /// What the tool returned, when it worked.
    pub ok: Option<String>,
    /// What went wrong, in words, when it did not.
    pub error: Option<String>,
}

impl From<switchboard_tools::http_tool::TryReport> for TryResult {
    fn from(report: switchboard_tools::http_tool::TryReport) -> TryResult {
        let (ok, error) = match report.outcome {
            Ok(text) => (Some(text), None),
            Err(e) => (None, Some(e)),
        };
        TryResult { request: report.request, ok, error }
    }
}

/// An OpenAPI document whose operations are tools (an entry of `tools.json`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OpenApiEntry {
    /// The person's name for the API; tools show it as their source.
    pub name: String,
    /// The kept copy, relative to the config directory.
    pub file: String,
    /// Where it was imported from (a path or URL), for the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The base URL to call; default: the document's first absolute server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Security scheme -> the key store entry holding its key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, String>,
    /// The operations offered, by tool name; default: all of a small document, none of a large one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<BTreeSet<String>>,
    /// Let its tools reach this computer and the local network.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_local_addresses: bool,
}

impl OpenApiEntry {
    /// What the conversion is asked for: this entry's server, keys and operations.
    pub(crate) fn options(&self) -> OpenApiOptions {
        OpenApiOptions {
            document_name: self.name.clone(),
            server: self.server.clone(),
            security: self.keys.clone(),
            include: self.include.clone(),
        }
    }
}

/// FNV-1a, 64 bits, as hex: a stable fingerprint of what the person saw.
pub(crate) fn fingerprint(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}
