//! An agent offered as a tool (`agent__Name`): its definition for the calling model, the
//! instance numbers of its calls (`Name[i]`, per turn), and the refusals that keep agents from
//! calling themselves or nesting deeper than [`MAX_DEPTH`].

use super::toolsets::Chain;
use super::{AGENT_TIMEOUT, MAX_DEPTH};
use crate::Service;
use crate::agents_file::AgentConfig;
use crate::keys::TurnKeys;
use futures::FutureExt;
use futures::future::BoxFuture;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use switchboard_core::{Tool, ToolContext, ToolDef, ToolError, ToolOutput, ToolSource};

/// An agent as a tool: each call runs the agent's own turn.
pub(crate) struct AgentTool {
    pub(super) def: ToolDef,
    pub(super) service: Service,
    pub(super) name: String,
    /// Agents running above this one's calls.
    pub(super) chain: Chain,
    /// Calls per agent in this turn, for the instance numbers.
    pub(super) counters: Arc<Mutex<BTreeMap<String, usize>>>,
    /// The keys of the turn it is offered in, which its calls read too.
    pub(super) keys: Arc<TurnKeys>,
}

impl AgentTool {
    pub(super) fn new(
        service: Service,
        config: &AgentConfig,
        chain: Chain,
        counters: Arc<Mutex<BTreeMap<String, usize>>>,
        keys: Arc<TurnKeys>,
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
        AgentTool { def, service, name: config.name.clone(), chain, counters, keys }
    }

    pub(super) fn instance(&self) -> String {
        let mut counters = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        let n = counters.entry(self.name.clone()).or_default();
        *n += 1;
        format!("{}[{n}]", self.name)
    }

    /// Why this call may not run: a cycle, or too deep.
    pub(super) fn refused(&self) -> Option<String> {
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
pub(super) fn question(args: &serde_json::Value) -> String {
    let mut text = args.get("message").and_then(|m| m.as_str()).unwrap_or_default().to_owned();
    if let Some(fields) = args.as_object() {
        for (name, value) in fields.iter().filter(|(k, _)| *k != "message") {
            let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            text.push_str(&format!("\n\n{name}: {value}"));
        }
    }
    text
}
