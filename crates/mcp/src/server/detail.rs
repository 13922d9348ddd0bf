//! What Settings shows of a server beyond the catalog's state: [`ServerDetail`], the tools it
//! offers ([`OfferedTool`]) and the ones held back until approved again ([`HeldTool`]).

use crate::config::ServerConfig;
use switchboard_core::{Finding, SourceStatus};

/// A tool held back: its definition changed, or the server added it, since the person approved
/// the server's tools.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldTool {
    /// The registry name (`server__tool`).
    pub name: String,
    /// Why it is held, in words.
    pub why: String,
    /// Its description now, for the person to read before approving.
    pub description: String,
    /// The fingerprint of the definition shown; approving it approves exactly that definition.
    pub fingerprint: String,
    /// What the tool-definition lint found in it, shown before it is approved.
    pub findings: Vec<Finding>,
}

/// What Settings shows of a server beyond the catalog's state.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerDetail {
    /// The server's name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The command line (stdio) or the URL (http), secrets as references.
    pub target: String,
    /// Where it is in its life.
    pub status: SourceStatus,
    /// Tools offered, by registry name, with the server's annotations when it gave any.
    pub tools: Vec<OfferedTool>,
    /// Tools the server listed that could not be offered, with the reason.
    pub skipped: Vec<String>,
    /// Tools held back until approved again.
    pub held: Vec<HeldTool>,
    /// The last lines of its stderr.
    pub stderr: Vec<String>,
    /// The server's name and version as it introduced itself.
    pub server_info: Option<String>,
    /// Restarts after failures since it was last started by hand.
    pub restarts: u32,
    /// What it declared it offers beyond tools (prompts, resources, ...), while it runs.
    pub offers: super::Offers,
    /// The log level chosen for its log notifications, if one was.
    pub log_level: Option<crate::context::LogLevel>,
}

impl ServerDetail {
    /// A server that is not running (disabled, or not started yet).
    pub fn idle(name: &str, config: &ServerConfig) -> ServerDetail {
        let (transport, target) = match (config.command_line(), &config.url) {
            (Some(line), _) => ("stdio", line),
            (None, Some(url)) => ("http", url.clone()),
            (None, None) => ("stdio", String::new()),
        };
        ServerDetail {
            name: name.to_owned(),
            transport: transport.to_owned(),
            target,
            status: SourceStatus::Stopped,
            tools: Vec::new(),
            skipped: Vec::new(),
            held: Vec::new(),
            stderr: Vec::new(),
            server_info: None,
            restarts: 0,
            offers: super::Offers::default(),
            log_level: None,
        }
    }
}

/// A tool a server offers, as Settings lists it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferedTool {
    /// The registry name.
    pub name: String,
    /// The server's own name for it.
    pub remote: String,
    /// The server's hints (`readOnlyHint`, `destructiveHint`, ...); shown, never trusted.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown> | null"))]
    pub annotations: Option<serde_json::Value>,
    /// What the tool-definition lint found in its description and schema (shown, not blocking).
    pub findings: Vec<Finding>,
}
