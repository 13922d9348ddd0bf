//! Agents and toolsets, from `agents.json` in the config directory (next to `tools.json`).
//!
//! A **toolset** is a named group of tools: tool names, whole sources (`mcp:<server>`,
//! `openapi:<document>`, `builtin`) and other agents (`agent:<Name>`). An **agent** is a named
//! setup — instructions, a provider profile and model, toolsets, limits and approval defaults —
//! that a person chats with, and that another agent whose toolset lists it calls as the tool
//! `agent__Name` (seed 004). Each such call runs the child's own turn on the same engine and loop
//! (`AgentTool`, in `tool`): one instance `Name[i]` per call, numbered per turn, its events nested into
//! the parent's call as `toolProgress` (stored with the call by the recorder), its calls asking
//! the person through the parent turn's approver, its usage added to the parent turn's, stopped
//! with the parent. Depth is limited ([`MAX_DEPTH`]) and an agent never calls one that is already
//! running above it.
//!
//! Nothing here can widen what a tool may do: an agent's approval defaults only make a tool ask
//! (or refuse) where it would otherwise run; looser ones are listed as problems and not applied.
//! A toolset naming something that no longer exists is said once at the start of the turn and
//! left out; it never fails a turn.
//!
//! By concern: the file's types and checks are `crate::agents_file` (below the turn builder,
//! re-exported here), `toolsets` what tools (and limits) a turn
//! with an agent or toolsets has, `tool` an agent offered as a tool, `run` one call of it: the
//! child's turn, built by the same `turn_setup` as a person's chat. This module keeps the file
//! as Settings edits it.

mod chat_agent;
mod run;
mod tool;
mod toolsets;

pub use crate::agents_file::{
    AGENT_TOOL_PREFIX, AgentConfig, AgentInfo, AgentInput, AgentsFile, AgentsOverview, InputKind, MAX_AGENT_ITERATIONS,
    NAME_MAX_CHARS, Toolset, ToolsetInfo,
};

use crate::{Error, Result, Service};
pub(crate) use chat_agent::TurnAgent;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{ErrorKind, ToolRegistry};
use toolsets::{policy_of, resolve_entry, strictness};

/// The file's name in the config directory.
pub const AGENTS_FILE: &str = "agents.json";

/// How deep agents may call agents: the agent a person chats with is 1.
pub const MAX_DEPTH: usize = 3;

/// How long one agent call may run before the parent gets a timeout.
pub const AGENT_TIMEOUT: Duration = Duration::from_secs(15 * 60);

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
        let chain = Arc::new(vec![agent.name.clone()]);
        let selected = self.select_tools(file, &agent.toolsets, base, chain, &self.turn_keys());
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
}

pub(crate) fn no_agent(name: &str) -> Error {
    Error::new(ErrorKind::NotFound, format!("There is no agent named '{name}'."))
}
