//! `agents.json`: agents and toolsets as the file holds them, and the checks a definition must
//! pass before it is saved (names, limits, input fields). No I/O beyond reading and writing the
//! file itself. Plain data below both the turn builder (`turn_setup`) and the agents that run
//! (`agents`), which re-exports it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use switchboard_core::ApprovalPolicy;

/// Most steps (model calls) an agent may set for itself.
pub const MAX_AGENT_ITERATIONS: u32 = 50;

/// The prefix of an agent's tool name.
pub const AGENT_TOOL_PREFIX: &str = switchboard_core::names::AGENT_PREFIX;

/// `agents.json`.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentsFile {
    /// Named groups of tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub toolsets: Vec<Toolset>,
    /// Agents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentConfig>,
}

/// A named group of tools.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Toolset {
    /// Its name (letters, digits, '-', '_').
    pub name: String,
    /// What it is for, for the person.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Tool names, `mcp:<server>`, `openapi:<document>`, `builtin`, `agent:<Name>`.
    pub tools: Vec<String>,
}

/// One agent.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentConfig {
    /// Its name; as a tool, `agent__Name`.
    pub name: String,
    /// What it does: for the person, and for a parent model choosing to call it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its instructions (system prompt).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub instructions: String,
    /// A note for a caller's system prompt while it is offered as a tool (when to hand it work).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<String>"))]
    pub prompt: String,
    /// Provider profile (default: the default profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub profile: Option<String>,
    /// Model (default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub model: Option<String>,
    /// The toolsets it has, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub toolsets: Vec<String>,
    /// Most model calls with tools before its final answer (default: the settings').
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub max_iterations: Option<u32>,
    /// Approval defaults by tool name: `ask` or `deny` where the tool would otherwise run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<BTreeMap<String, ApprovalPolicy>>"))]
    pub approval: BTreeMap<String, ApprovalPolicy>,
    /// Called as a tool, its answer streams as the parent's answer and ends the parent's turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<bool>"))]
    pub takes_control: bool,
    /// Called as a tool, it runs alone: only when forced, never beside other tools.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<bool>"))]
    pub exclusive: bool,
    /// Structured fields a caller may fill besides its message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<Vec<AgentInput>>"))]
    pub inputs: Vec<AgentInput>,
}

/// A structured field of an agent's input.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentInput {
    /// The field's name.
    pub name: String,
    /// What to put in it, for the calling model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Its JSON type.
    #[serde(default, rename = "type")]
    pub kind: InputKind,
    /// Whether a call must fill it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[cfg_attr(feature = "ts", ts(optional, as = "Option<bool>"))]
    pub required: bool,
}

/// The JSON type of an agent's input field.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum InputKind {
    /// Text.
    #[default]
    String,
    /// A number.
    Number,
    /// A whole number.
    Integer,
    /// True or false.
    Boolean,
}

impl InputKind {
    fn json_type(self) -> &'static str {
        match self {
            InputKind::String => "string",
            InputKind::Number => "number",
            InputKind::Integer => "integer",
            InputKind::Boolean => "boolean",
        }
    }
}

/// An agent as Settings and `switchboard agents` list it: its definition and what is wrong.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    /// The definition.
    pub config: AgentConfig,
    /// Its name as a tool.
    pub tool_name: String,
    /// What keeps it from running as set up (a deleted profile, an unknown toolset, a tool that
    /// no longer exists); it still runs without what is missing.
    pub problems: Vec<String>,
}

/// A toolset as listed: its definition and the entries that name nothing now.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsetInfo {
    /// The definition.
    pub toolset: Toolset,
    /// The tools it gives now.
    pub tools: Vec<String>,
    /// Entries that name nothing now, each with why.
    pub missing: Vec<String>,
}

/// Every agent and toolset, and the file's problem if it has one.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentsOverview {
    /// Where the file is.
    pub config_path: Option<String>,
    /// Why the file cannot be used, if it cannot.
    pub problem: Option<String>,
    /// Agents, in file order.
    pub agents: Vec<AgentInfo>,
    /// Toolsets, in file order.
    pub toolsets: Vec<ToolsetInfo>,
}

impl AgentsFile {
    /// Reads the file; a missing one is an empty file.
    pub fn load(path: &Path) -> std::result::Result<AgentsFile, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => Self::parse(&text).map_err(|e| format!("{} is not a valid agents file: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(AgentsFile::default()),
            Err(e) => Err(format!("{} could not be read: {e}", path.display())),
        }
    }

    /// Parses and checks the file's text.
    pub fn parse(text: &str) -> std::result::Result<AgentsFile, String> {
        let file: AgentsFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for t in &file.toolsets {
            t.check()?;
        }
        for a in &file.agents {
            a.check()?;
        }
        Ok(file)
    }

    pub(super) fn save(&self, path: &Path) -> std::result::Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        switchboard_mcp::config::write_private(path, &text)
            .map_err(|e| format!("{} could not be saved: {e}", path.display()))
    }

    /// The agent named `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentConfig> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// The toolset named `name`.
    pub fn toolset(&self, name: &str) -> Option<&Toolset> {
        self.toolsets.iter().find(|t| t.name == name)
    }
}

/// The longest name of an agent or a toolset, so that `agent__Name` is a name every provider takes.
pub const NAME_MAX_CHARS: usize = 48;

/// A name for an agent or a toolset: a letter, then letters, digits, '-' or '_' (at most
/// [`NAME_MAX_CHARS`]).
fn check_name(name: &str, what: &str) -> std::result::Result<(), String> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && name.len() <= NAME_MAX_CHARS;
    if ok {
        Ok(())
    } else {
        Err(format!(
            "'{name}' cannot name {what}: start with a letter, then letters, digits, '-' or '_' (at most {NAME_MAX_CHARS})."
        ))
    }
}

impl Toolset {
    pub(super) fn check(&self) -> std::result::Result<(), String> {
        check_name(&self.name, "a toolset")?;
        if self.tools.iter().any(|t| t.trim().is_empty()) {
            return Err(format!("The toolset '{}' has an empty entry.", self.name));
        }
        Ok(())
    }
}

impl AgentConfig {
    /// Checks what can be checked without the rest of the app.
    pub fn check(&self) -> std::result::Result<(), String> {
        check_name(&self.name, "an agent")?;
        let who = &self.name;
        if self.description.chars().count() > 1000 {
            return Err(format!("The description of '{who}' is longer than 1,000 characters."));
        }
        if self.prompt.chars().count() > 2000 {
            return Err(format!("The note for callers of '{who}' is longer than 2,000 characters."));
        }
        crate::settings::check_instructions(&self.instructions, &format!("The instructions of '{who}'"))
            .map_err(|e| e.message)?;
        if let Some(n) = self.max_iterations
            && !(1..=MAX_AGENT_ITERATIONS).contains(&n)
        {
            return Err(format!("'{who}' may take 1 to {MAX_AGENT_ITERATIONS} steps, not {n}."));
        }
        if self.takes_control && self.exclusive {
            return Err(format!("'{who}' cannot both take control and be exclusive; choose one."));
        }
        let mut seen = Vec::new();
        for input in &self.inputs {
            check_name(&input.name, "an input field").map_err(|e| format!("{who}: {e}"))?;
            if input.name == "message" || seen.contains(&&input.name) {
                return Err(format!("'{who}' has the input field '{}' twice (or names one 'message').", input.name));
            }
            seen.push(&input.name);
        }
        Ok(())
    }

    /// Its name as a tool.
    pub fn tool_name(&self) -> String {
        format!("{AGENT_TOOL_PREFIX}{}", self.name)
    }

    /// The input schema a calling model fills.
    pub(super) fn parameters(&self) -> serde_json::Value {
        let mut properties = serde_json::Map::new();
        properties.insert(
            "message".into(),
            serde_json::json!({
                "type": "string",
                "description": format!("What to ask {}: the task, with everything it needs to know; it sees nothing else of this chat.", self.name),
            }),
        );
        let mut required = vec![serde_json::Value::from("message")];
        for input in &self.inputs {
            let mut field = serde_json::json!({ "type": input.kind.json_type() });
            if !input.description.is_empty() {
                field["description"] = input.description.clone().into();
            }
            properties.insert(input.name.clone(), field);
            if input.required {
                required.push(input.name.clone().into());
            }
        }
        serde_json::json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        })
    }
}
