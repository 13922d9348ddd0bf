//! What tools a turn has: the toolsets of its agent and of the chat resolved against the
//! catalog's registry (an `agent:` entry becomes an [`AgentTool`]), and the engine limits with
//! the agent's step limit and approval defaults applied. Never fails: what a toolset names that
//! is gone is listed, said once at the start of the turn, and left out. An agent's approval
//! defaults only make a tool stricter.

use super::AgentsFile;
use super::tool::AgentTool;
use crate::Service;
use crate::agents_file::AgentConfig;
use crate::keys::TurnKeys;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use switchboard_core::{ApprovalPolicy, EngineConfig, Tool, ToolRegistry, ToolSource};

/// How strict a policy is: an agent may only move a tool up this order.
pub(super) fn strictness(p: ApprovalPolicy) -> u8 {
    match p {
        ApprovalPolicy::Auto => 0,
        ApprovalPolicy::Ask => 1,
        ApprovalPolicy::Deny => 2,
    }
}

/// A tool's policy under `config`: the settings' override, else the tool's own (auto for a tool
/// that is not there).
pub(super) fn policy_of(tool: &str, config: &EngineConfig, registry: &ToolRegistry) -> ApprovalPolicy {
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
pub(super) type Chain = Arc<Vec<String>>;

impl Service {
    /// The tools `toolsets` give, from `base` (the catalog's registry) and the agents of `file`
    /// (called below `chain`, reading keys through the turn's `keys`). Never fails: what is
    /// missing is listed.
    pub(crate) fn select_tools(
        &self,
        file: &AgentsFile,
        toolsets: &[String],
        base: &ToolRegistry,
        chain: Chain,
        keys: &Arc<TurnKeys>,
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
                        let (chain, counters) = (Arc::clone(&chain), Arc::clone(&counters));
                        vec![Arc::new(AgentTool::new(self.clone(), config, chain, counters, Arc::clone(keys)))]
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
    /// engine limits with the agent's step limit and approval defaults applied. The agents among
    /// the tools read keys through `keys`, the turn's.
    pub(crate) fn agent_turn_setup(
        &self,
        file: &AgentsFile,
        agent: Option<&AgentConfig>,
        above: &[String],
        toolsets: &[String],
        settings: &crate::settings::Settings,
        keys: &Arc<TurnKeys>,
    ) -> TurnSetup {
        let base = self.registry(settings);
        let mut config = settings.engine_config();
        let (registry, unavailable) = if agent.is_none() && toolsets.is_empty() {
            (base, Vec::new())
        } else {
            let mut names: Vec<String> = agent.map(|a| a.toolsets.clone()).unwrap_or_default();
            names.extend(toolsets.iter().filter(|t| !names.contains(t)).cloned().collect::<Vec<_>>());
            let chain = Arc::new(above.iter().cloned().chain(agent.map(|a| a.name.clone())).collect());
            let selected = self.select_tools(file, &names, &base, chain, keys);
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

/// The tool names one toolset entry gives (not agents), or why it gives none.
pub(super) fn resolve_entry(
    file: &AgentsFile,
    base: &ToolRegistry,
    entry: &str,
) -> std::result::Result<Vec<String>, String> {
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
