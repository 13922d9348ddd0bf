//! Agents and toolsets, from `agents.json` in the config directory (next to `tools.json`).
//!
//! A **toolset** is a named group of tools: tool names, whole sources (`mcp:<server>`,
//! `openapi:<document>`, `builtin`) and other agents (`agent:<Name>`). An **agent** is a named
//! setup — instructions, a provider profile and model, toolsets, limits and approval defaults —
//! that a person chats with, and that another agent whose toolset lists it calls as the tool
//! `agent__Name` (seed 004). Each such call runs the child's own turn on the same engine and loop
//! ([`AgentTool`]): one instance `Name[i]` per call, numbered per turn, its events nested into
//! the parent's call as `toolProgress` (stored with the call by the recorder), its calls asking
//! the person through the parent turn's approver, its usage added to the parent turn's, stopped
//! with the parent. Depth is limited ([`MAX_DEPTH`]) and an agent never calls one that is already
//! running above it.
//!
//! Nothing here can widen what a tool may do: an agent's approval defaults only make a tool ask
//! (or refuse) where it would otherwise run; looser ones are listed as problems and not applied.
//! A toolset naming something that no longer exists is said once at the start of the turn and
//! left out; it never fails a turn.

use crate::ipc::TurnChoices;
use crate::{Error, Result, Service};
use futures::FutureExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::turn::{ApprovalDecision, ApprovalRequest, Approver};
use switchboard_core::{
    ApprovalPolicy, ChatEvent, Engine, EngineConfig, ErrorKind, EventSink, FinishReason, Message, Tool, ToolContext,
    ToolDef, ToolError, ToolOutput, ToolRegistry, ToolSource, TurnInput, TurnOptions,
};

/// The file's name in the config directory.
pub const AGENTS_FILE: &str = "agents.json";

/// How deep agents may call agents: the agent a person chats with is 1.
pub const MAX_DEPTH: usize = 3;

/// How long one agent call may run before the parent gets a timeout.
pub const AGENT_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// Most steps (model calls) an agent may set for itself.
pub const MAX_AGENT_ITERATIONS: u32 = 50;

/// The prefix of an agent's tool name.
pub const AGENT_TOOL_PREFIX: &str = "agent__";

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

    fn save(&self, path: &Path) -> std::result::Result<(), String> {
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
    fn check(&self) -> std::result::Result<(), String> {
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
    fn parameters(&self) -> serde_json::Value {
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

/// How strict a policy is: an agent may only move a tool up this order.
fn strictness(p: ApprovalPolicy) -> u8 {
    match p {
        ApprovalPolicy::Auto => 0,
        ApprovalPolicy::Ask => 1,
        ApprovalPolicy::Deny => 2,
    }
}

/// A tool's policy under `config`: the settings' override, else the tool's own (auto for a tool
/// that is not there).
fn policy_of(tool: &str, config: &EngineConfig, registry: &ToolRegistry) -> ApprovalPolicy {
    match registry.get(tool) {
        Some(t) => switchboard_core::policy::approval_for(t.def(), &config.tool_settings),
        None => config.tool_settings.approval.get(tool).copied().unwrap_or_default(),
    }
}

/// The tools a set of toolsets gives, and what they name that is not there.
pub(crate) struct Selected {
    pub(crate) registry: Arc<ToolRegistry>,
    pub(crate) unavailable: Vec<String>,
}

/// What a turn runs with: the engine's limits, its tools, and what its toolsets name that is gone.
pub(crate) struct TurnSetup {
    pub(crate) config: EngineConfig,
    pub(crate) registry: Arc<ToolRegistry>,
    pub(crate) unavailable: Vec<String>,
}

/// Agents running above a call, outermost first (the agent a person chats with, if any).
type Chain = Arc<Vec<String>>;

impl Service {
    fn agents_path(&self) -> Result<std::path::PathBuf> {
        Ok(self.config_dir()?.join(AGENTS_FILE))
    }

    /// The agents file (empty when there is none).
    pub fn agents_file(&self) -> Result<AgentsFile> {
        match self.agents_path() {
            Ok(path) => AgentsFile::load(&path).map_err(Error::config),
            Err(_) => Ok(AgentsFile::default()),
        }
    }

    fn save_agents_file(&self, file: &AgentsFile) -> Result<()> {
        file.save(&self.agents_path()?).map_err(Error::config)
    }

    /// Every agent and toolset with what is wrong with them now.
    pub fn agents(&self) -> Result<AgentsOverview> {
        let config_path = self.agents_path().ok().map(|p| p.display().to_string());
        let file = match self.agents_file() {
            Ok(file) => file,
            Err(e) => {
                return Ok(AgentsOverview {
                    config_path,
                    problem: Some(e.message),
                    agents: Vec::new(),
                    toolsets: Vec::new(),
                });
            }
        };
        let settings = self.settings()?;
        let base = self.registry(&settings);
        let toolsets = file
            .toolsets
            .iter()
            .map(|t| {
                let mut tools = Vec::new();
                let mut missing = Vec::new();
                for entry in &t.tools {
                    match resolve_entry(&file, &base, entry) {
                        Ok(names) => tools.extend(names),
                        Err(why) => missing.push(format!("'{entry}' names nothing now: {why}")),
                    }
                }
                ToolsetInfo { toolset: t.clone(), tools, missing }
            })
            .collect();
        let agents = file
            .agents
            .iter()
            .map(|a| AgentInfo {
                config: a.clone(),
                tool_name: a.tool_name(),
                problems: self.agent_problems(&file, a, &base, &settings),
            })
            .collect();
        Ok(AgentsOverview { config_path, problem: None, agents, toolsets })
    }

    /// What keeps `agent` from running as set up.
    fn agent_problems(
        &self,
        file: &AgentsFile,
        agent: &AgentConfig,
        base: &ToolRegistry,
        settings: &crate::settings::Settings,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        match self.profile(agent.profile.as_deref()) {
            Err(e) => problems.push(e.message),
            Ok(profile) => {
                if agent.model.is_none() && profile.model.is_none() {
                    problems.push(format!(
                        "No model: choose one for '{}', or set the default model of the profile '{}'.",
                        agent.name, profile.name
                    ));
                }
            }
        }
        let selected = self.select_tools(file, &agent.toolsets, base, Arc::new(vec![agent.name.clone()]));
        problems.extend(selected.unavailable);
        if !agent.toolsets.is_empty() && selected.registry.is_empty() {
            problems.push(format!("'{}' has toolsets but no tools in them now.", agent.name));
        }
        let config = settings.engine_config();
        for (tool, wanted) in &agent.approval {
            let current = policy_of(tool, &config, base);
            if strictness(*wanted) < strictness(current) {
                problems.push(format!(
                    "'{tool}' is set to {} in Settings; an agent can only make a tool stricter, so {} is not applied.",
                    current.as_str(),
                    wanted.as_str()
                ));
            }
        }
        problems
    }

    /// Adds an agent, or replaces the one of the same name.
    pub fn put_agent(&self, agent: AgentConfig) -> Result<AgentInfo> {
        agent.check().map_err(Error::config)?;
        let mut file = self.agents_file()?;
        if let Some(unknown) = agent.toolsets.iter().find(|t| file.toolset(t).is_none()) {
            return Err(Error::config(format!("There is no toolset named '{unknown}'.")));
        }
        if let Some(p) = &agent.profile {
            self.profile(Some(p))?;
        }
        let name = agent.name.clone();
        match file.agents.iter_mut().find(|a| a.name == agent.name) {
            Some(existing) => *existing = agent,
            None => file.agents.push(agent),
        }
        self.save_agents_file(&file)?;
        self.agent_info(&name)
    }

    /// One agent as listed.
    pub fn agent_info(&self, name: &str) -> Result<AgentInfo> {
        self.agents()?.agents.into_iter().find(|a| a.config.name == name).ok_or_else(|| no_agent(name))
    }

    /// A copy of an agent under a new name.
    pub fn duplicate_agent(&self, name: &str, new_name: &str) -> Result<AgentInfo> {
        let file = self.agents_file()?;
        let mut copy = file.agent(name).cloned().ok_or_else(|| no_agent(name))?;
        if file.agent(new_name).is_some() {
            return Err(Error::config(format!("An agent named '{new_name}' already exists.")));
        }
        copy.name = new_name.to_owned();
        self.put_agent(copy)
    }

    /// Removes an agent. Toolsets that list it say so until they are edited; chats with it keep
    /// their history and go on as plain chats.
    pub fn remove_agent(&self, name: &str) -> Result<()> {
        let mut file = self.agents_file()?;
        let before = file.agents.len();
        file.agents.retain(|a| a.name != name);
        if file.agents.len() == before {
            return Err(no_agent(name));
        }
        self.save_agents_file(&file)
    }

    /// Adds a toolset, or replaces the one of the same name.
    pub fn put_toolset(&self, toolset: Toolset) -> Result<ToolsetInfo> {
        toolset.check().map_err(Error::config)?;
        let mut file = self.agents_file()?;
        let name = toolset.name.clone();
        match file.toolsets.iter_mut().find(|t| t.name == toolset.name) {
            Some(existing) => *existing = toolset,
            None => file.toolsets.push(toolset),
        }
        self.save_agents_file(&file)?;
        self.agents()?
            .toolsets
            .into_iter()
            .find(|t| t.toolset.name == name)
            .ok_or_else(|| Error::new(ErrorKind::Internal, "The saved toolset is not listed."))
    }

    /// Removes a toolset; agents that have it are told.
    pub fn remove_toolset(&self, name: &str) -> Result<()> {
        let mut file = self.agents_file()?;
        let before = file.toolsets.len();
        file.toolsets.retain(|t| t.name != name);
        if file.toolsets.len() == before {
            return Err(Error::new(ErrorKind::NotFound, format!("There is no toolset named '{name}'.")));
        }
        if let Some(user) = file.agents.iter().find(|a| a.toolsets.iter().any(|t| t == name)) {
            return Err(Error::config(format!(
                "The agent '{}' has the toolset '{name}'; take it out of the agent first.",
                user.name
            )));
        }
        self.save_agents_file(&file)
    }

    /// The tools `toolsets` give, from `base` (the catalog's registry) and the agents of `file`
    /// (called below `chain`). Never fails: what is missing is listed.
    pub(crate) fn select_tools(
        &self,
        file: &AgentsFile,
        toolsets: &[String],
        base: &ToolRegistry,
        chain: Chain,
    ) -> Selected {
        let mut registry = ToolRegistry::new();
        let mut unavailable = Vec::new();
        let counters: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
        for name in toolsets {
            let Some(toolset) = file.toolset(name) else {
                unavailable.push(format!("The toolset '{name}' no longer exists; its tools are left out."));
                continue;
            };
            for entry in &toolset.tools {
                let agent = entry.strip_prefix("agent:").and_then(|a| file.agent(a));
                let tools: Vec<Arc<dyn Tool>> = match (agent, resolve_entry(file, base, entry)) {
                    (Some(config), _) => {
                        vec![Arc::new(AgentTool::new(self.clone(), config, Arc::clone(&chain), Arc::clone(&counters)))]
                    }
                    (None, Ok(names)) => names.iter().filter_map(|n| base.get(n).cloned()).collect(),
                    (None, Err(why)) => {
                        unavailable.push(format!("The toolset '{name}' names '{entry}': {why} It is left out."));
                        continue;
                    }
                };
                for tool in tools {
                    if registry.get(&tool.def().name).is_none()
                        && let Err(e) = registry.register(tool)
                    {
                        unavailable.push(format!("The toolset '{name}': {e}"));
                    }
                }
            }
        }
        Selected { registry: Arc::new(registry), unavailable }
    }

    /// What a turn with `agent` (called below the agents `above`, outermost first) and the chat's
    /// extra `toolsets` runs with: the tools of those (every tool when there are neither), and the
    /// engine limits with the agent's step limit and approval defaults applied.
    pub(crate) fn agent_turn_setup(
        &self,
        file: &AgentsFile,
        agent: Option<&AgentConfig>,
        above: &[String],
        toolsets: &[String],
        settings: &crate::settings::Settings,
    ) -> TurnSetup {
        let base = self.registry(settings);
        let mut config = settings.engine_config();
        let (registry, unavailable) = if agent.is_none() && toolsets.is_empty() {
            (base, Vec::new())
        } else {
            let mut names: Vec<String> = agent.map(|a| a.toolsets.clone()).unwrap_or_default();
            names.extend(toolsets.iter().filter(|t| !names.contains(t)).cloned().collect::<Vec<_>>());
            let chain = Arc::new(above.iter().cloned().chain(agent.map(|a| a.name.clone())).collect());
            let selected = self.select_tools(file, &names, &base, chain);
            (selected.registry, selected.unavailable)
        };
        if let Some(agent) = agent {
            if let Some(n) = agent.max_iterations {
                config.max_iterations = n;
            }
            for (tool, wanted) in &agent.approval {
                if strictness(*wanted) > strictness(policy_of(tool, &config, &registry)) {
                    config.tool_settings.approval.insert(tool.clone(), *wanted);
                }
            }
        }
        TurnSetup { config, registry, unavailable }
    }
}

fn no_agent(name: &str) -> Error {
    Error::new(ErrorKind::NotFound, format!("There is no agent named '{name}'."))
}

/// The tool names one toolset entry gives (not agents), or why it gives none.
fn resolve_entry(file: &AgentsFile, base: &ToolRegistry, entry: &str) -> std::result::Result<Vec<String>, String> {
    let of_source = |wanted: &dyn Fn(&ToolSource) -> bool| -> Vec<String> {
        base.defs().filter(|d| wanted(&d.source)).map(|d| d.name.clone()).collect()
    };
    let (names, why) = if let Some(agent) = entry.strip_prefix("agent:") {
        return match file.agent(agent) {
            Some(a) => Ok(vec![a.tool_name()]),
            None => Err(format!("there is no agent named '{agent}'.")),
        };
    } else if let Some(server) = entry.strip_prefix("mcp:") {
        (
            of_source(&|s| matches!(s, ToolSource::Mcp { server: s } if s == server)),
            format!("the MCP server '{server}' has no tools now (not added, not approved, or not running)."),
        )
    } else if let Some(doc) = entry.strip_prefix("openapi:") {
        (
            of_source(&|s| matches!(s, ToolSource::OpenApi { document } if document == doc)),
            format!("the OpenAPI document '{doc}' has no tools now."),
        )
    } else if entry == "builtin" {
        (of_source(&|s| *s == ToolSource::Builtin), "there are no built-in tools on.".to_owned())
    } else {
        let names = base.get(entry).map(|t| vec![t.def().name.clone()]).unwrap_or_default();
        (names, "no tool has this name now.".to_owned())
    };
    if names.is_empty() { Err(why) } else { Ok(names) }
}

/// An agent as a tool: each call runs the agent's own turn.
pub(crate) struct AgentTool {
    def: ToolDef,
    service: Service,
    name: String,
    /// Agents running above this one's calls.
    chain: Chain,
    /// Calls per agent in this turn, for the instance numbers.
    counters: Arc<Mutex<BTreeMap<String, usize>>>,
}

impl AgentTool {
    fn new(
        service: Service,
        config: &AgentConfig,
        chain: Chain,
        counters: Arc<Mutex<BTreeMap<String, usize>>>,
    ) -> AgentTool {
        let description = if config.description.trim().is_empty() {
            format!("Asks the agent {} to do a task; it answers with its result.", config.name)
        } else {
            config.description.clone()
        };
        let mut def = ToolDef::new(config.tool_name(), description, config.parameters());
        def.source = ToolSource::Agent;
        def.takes_control = config.takes_control;
        def.prompt = Some(config.prompt.trim().to_owned()).filter(|p| !p.is_empty());
        def.exclusive = config.exclusive;
        def.timeout = Some(AGENT_TIMEOUT);
        AgentTool { def, service, name: config.name.clone(), chain, counters }
    }

    fn instance(&self) -> String {
        let mut counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        let n = counters.entry(self.name.clone()).or_default();
        *n += 1;
        format!("{}[{n}]", self.name)
    }

    /// Why this call may not run: a cycle, or too deep.
    fn refused(&self) -> Option<String> {
        let path = |last: &str| {
            let mut names: Vec<&str> = self.chain.iter().map(String::as_str).collect();
            names.push(last);
            names.join(" → ")
        };
        if self.chain.contains(&self.name) {
            return Some(format!(
                "'{}' is already running above this call ({}); an agent cannot call itself or one that called it.",
                self.name,
                path(&self.name)
            ));
        }
        if self.chain.len() >= MAX_DEPTH {
            return Some(format!(
                "Agents nest at most {MAX_DEPTH} deep; '{}' would be deeper ({}).",
                self.name,
                path(&self.name)
            ));
        }
        None
    }

    async fn run(&self, args: serde_json::Value, ctx: ToolContext) -> std::result::Result<ToolOutput, ToolError> {
        if let Some(why) = self.refused() {
            return Err(ToolError::Failed(why));
        }
        let instance = self.instance();
        let service = &self.service;
        let cannot = |e: Error| ToolError::Failed(format!("{instance} could not start: {}", e.message));
        let file = service.agents_file().map_err(cannot)?;
        let config = file.agent(&self.name).cloned().ok_or_else(|| cannot(no_agent(&self.name)))?;
        let choices =
            TurnChoices { provider: config.profile.clone(), model: config.model.clone(), ..TurnChoices::default() };
        let resolved = service.provider_factory().resolve(&choices).map_err(cannot)?;
        let settings = service.settings().map_err(cannot)?;
        let setup = service.agent_turn_setup(&file, Some(&config), &self.chain, &[], &settings);
        let engine = Engine::new(setup.config, setup.registry, Arc::clone(&ctx.secrets))
            .with_redactor(Arc::new(service.redactor()));
        let caps = service.model_capabilities(&resolved.profile, &resolved.model);
        let input = TurnInput {
            conversation_id: ctx.conversation_id.clone(),
            user_message_id: format!("{}/{instance}/question", ctx.call_id),
            message_id: format!("{}/{instance}", ctx.call_id),
            provider_name: resolved.profile.name.clone(),
            model: resolved.model.clone(),
            system_prompt: Some(config.instructions.trim().to_owned()).filter(|s| !s.is_empty()),
            history: vec![Message::User { text: question(&args) }],
            options: TurnOptions {
                approved_tools: service.inner.store.approved_tools(&ctx.conversation_id).unwrap_or_default(),
                generation: resolved.profile.options.generation,
                tools_unsupported: (caps.tools == Some(false))
                    .then(|| format!("{} does not take tools, so {instance} has none.", resolved.model)),
                unavailable: setup.unavailable,
                ..TurnOptions::default()
            },
        };
        let sink = Arc::new(Nesting {
            ctx: ctx.clone(),
            instance: instance.clone(),
            prefix: format!("{}/{instance}/", ctx.call_id),
            takes_control: config.takes_control,
            answer: Mutex::default(),
        });
        let approver = Arc::new(Prefixed { inner: ctx.approver(), prefix: sink.prefix.clone() });
        let outcome =
            engine.run_turn(resolved.provider.as_ref(), input, sink.clone(), approver, ctx.cancel.child_token()).await;
        let answer = sink.answer.lock().unwrap_or_else(|p| p.into_inner()).text();
        let so_far = |what: String| {
            if answer.trim().is_empty() { what } else { format!("{what} What it wrote before that:\n\n{answer}") }
        };
        match outcome.finish_reason {
            FinishReason::Cancelled => Err(ToolError::Cancelled),
            FinishReason::Error => {
                let message = outcome.error.map(|e| e.message).unwrap_or_else(|| "it failed".into());
                Err(ToolError::Failed(so_far(format!("{instance} failed: {message}"))))
            }
            FinishReason::MaxIterations => {
                let steps = config.max_iterations.unwrap_or(settings.engine_config().max_iterations);
                let limit = format!("{instance} used all of its {steps} steps");
                let last = sink.answer.lock().unwrap_or_else(|p| p.into_inner()).last.clone();
                if last.trim().is_empty() {
                    Err(ToolError::Failed(so_far(format!("{limit} without a final answer."))))
                } else {
                    Ok(ToolOutput::text(format!("{last}\n\n({limit}; this is what it had then.)")))
                }
            }
            _ if answer.trim().is_empty() => Err(ToolError::Failed(format!("{instance} finished without an answer."))),
            _ => Ok(ToolOutput::text(answer)),
        }
    }
}

impl Tool for AgentTool {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn call(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, std::result::Result<ToolOutput, ToolError>> {
        self.run(args, ctx).boxed()
    }

    fn preview(&self, args: &serde_json::Value) -> Option<String> {
        Some(format!("Ask {}: {}", self.name, question(args)))
    }
}

/// The child's question: the message, then each structured field on its own line.
fn question(args: &serde_json::Value) -> String {
    let mut text = args.get("message").and_then(|m| m.as_str()).unwrap_or_default().to_owned();
    if let Some(fields) = args.as_object() {
        for (name, value) in fields.iter().filter(|(k, _)| *k != "message") {
            let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            text.push_str(&format!("\n\n{name}: {value}"));
        }
    }
    text
}

/// The text of a child's answer: what it wrote after its last tool call (its final answer),
/// or everything when that is empty.
#[derive(Default)]
struct Answer {
    all: String,
    last: String,
}

impl Answer {
    fn text(&self) -> String {
        if self.last.trim().is_empty() { self.all.clone() } else { self.last.clone() }
    }
}

/// The child's events, nested into the parent's call as `Name[i]`; approval ids carry the
/// call's prefix at every depth, as [`Prefixed`] registers them.
struct Nesting {
    ctx: ToolContext,
    instance: String,
    prefix: String,
    takes_control: bool,
    answer: Mutex<Answer>,
}

impl EventSink for Nesting {
    fn emit(&self, mut event: ChatEvent) {
        match &event {
            // For the store of the child's own turn only; nothing keeps it.
            ChatEvent::ProviderState { .. } => return,
            ChatEvent::TextDelta { text } => {
                let mut answer = self.answer.lock().unwrap_or_else(|p| p.into_inner());
                answer.all.push_str(text);
                answer.last.push_str(text);
                if self.takes_control {
                    self.ctx.answer(text.clone());
                }
            }
            ChatEvent::ToolCall { .. } => self.answer.lock().unwrap_or_else(|p| p.into_inner()).last.clear(),
            _ => {}
        }
        prefix_approvals(&mut event, &self.prefix);
        self.ctx.nested(self.instance.clone(), event);
    }
}

/// Puts `prefix` before the call id of approval events, at any depth.
fn prefix_approvals(event: &mut ChatEvent, prefix: &str) {
    match event {
        ChatEvent::ApprovalRequested { id, .. } | ChatEvent::ApprovalResolved { id, .. } => id.insert_str(0, prefix),
        ChatEvent::ToolProgress { event: Some(inner), .. } => prefix_approvals(inner, prefix),
        _ => {}
    }
}

/// The parent's approver, with the child's call ids made unique (two children, or a child and
/// its parent, may use the same ids).
struct Prefixed {
    inner: Arc<dyn Approver>,
    prefix: String,
}

impl Approver for Prefixed {
    fn decide(&self, mut request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        request.call_id.insert_str(0, &self.prefix);
        self.inner.decide(request)
    }
}
