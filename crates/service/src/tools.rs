//! Tools: the sources they come from (built-ins first; MCP servers, HTTP tools and agents plug
//! in as further sources), the registry composed from them, and each tool's state in Settings
//! and in a chat.

use crate::agents::AgentsFile;
use crate::ipc::ToolInfo;
use crate::settings::{Settings, WebPrefs};
use crate::{Result, Service};
use std::sync::Arc;
use switchboard_core::{Catalog, SourceState, ToolRegistry};
use switchboard_tools::BuiltinSource;

/// The tool sources of one service.
pub(crate) struct Tools {
    pub(crate) catalog: Arc<Catalog>,
    builtin: Arc<BuiltinSource>,
}

impl Tools {
    /// The catalog with the built-in source, configured from the stored web settings, and
    /// `read_tool_result`, which reads `store`.
    pub(crate) fn new(web: &WebPrefs, store: switchboard_store::Store) -> Result<Tools> {
        let catalog = Catalog::new();
        let builtin = Arc::new(BuiltinSource::new(&web.tools_config()));
        let paging = Arc::new(crate::paging::PagingSource::new(store, Arc::downgrade(&catalog)));
        for source in [builtin.clone() as Arc<dyn switchboard_core::Source>, paging] {
            catalog.add(source).map_err(|e| crate::Error::new(switchboard_core::ErrorKind::Internal, e.to_string()))?;
        }
        Ok(Tools { catalog, builtin })
    }
}

impl Service {
    /// Reconfigures the built-in tools when the web settings changed (here, or in another
    /// process sharing the database: settings are read before every turn).
    pub(crate) fn sync_builtin_tools(&self, web: &WebPrefs) {
        let tools = &self.inner.tools;
        if tools.builtin.configure(&web.tools_config()) {
            tools.catalog.rebuild();
        }
    }

    /// The registry a turn uses under `settings`: one consistent snapshot of every source's tools.
    pub(crate) fn registry(&self, settings: &Settings) -> Arc<ToolRegistry> {
        self.sync_builtin_tools(&settings.web);
        self.sync_defined_tools();
        self.inner.tools.catalog.registry()
    }

    /// Every tool source and its state.
    pub fn tool_sources(&self) -> Vec<SourceState> {
        self.sync_defined_tools();
        self.inner.tools.catalog.states()
    }

    /// Starts every tool source (in parallel; a slow or broken one delays nobody). Shells call
    /// it once after start-up, in the background.
    pub async fn start_tool_sources(&self) {
        self.inner.tools.catalog.start().await;
    }

    /// Stops every tool source (processes, connections). Shells call it when they exit.
    pub async fn shutdown(&self) {
        for message_id in self.running() {
            self.stop(&message_id);
        }
        self.inner.tools.catalog.stop().await;
    }

    /// Every tool, with its state in Settings and, when given, in a conversation. A conversation
    /// that runs an agent lists the agent's tools, with its approval defaults.
    pub fn tools(&self, conversation_id: Option<&str>) -> Result<Vec<ToolInfo>> {
        let (chat_disabled, agent) = match conversation_id {
            Some(id) => (self.inner.store.disabled_tools(id)?, self.inner.store.agent(id)?),
            None => Default::default(),
        };
        self.tool_list(&chat_disabled, agent.as_deref())
    }

    /// The tools a new chat with `agent` would have (its toolsets'), with their state in Settings
    /// and the agent's approval defaults; every tool for an agent that does not exist.
    pub fn agent_tools(&self, agent: &str) -> Result<Vec<ToolInfo>> {
        self.tool_list(&Default::default(), Some(agent))
    }

    fn tool_list(
        &self,
        chat_disabled: &std::collections::BTreeSet<String>,
        agent: Option<&str>,
    ) -> Result<Vec<ToolInfo>> {
        let settings = self.settings()?;
        // The agents file is read only for a chat with an agent.
        let file = match agent {
            Some(_) => self.agents_file().unwrap_or_default(),
            None => AgentsFile::default(),
        };
        // Listing runs nothing, so the keys are never read.
        let agent = agent.and_then(|name| file.agent(name));
        let setup = self.agent_turn_setup(&file, agent, &[], &[], &settings, &self.turn_keys());
        let tool_settings = setup.config.tool_settings;
        // Linted against every source's tools, so a mention of another source's tool is found.
        let all = self.inner.tools.catalog.registry();
        Ok(setup
            .registry
            .defs()
            .map(|d| ToolInfo {
                name: d.name.clone(),
                description: d.description.clone(),
                source: d.source.clone(),
                enabled: !tool_settings.disabled.contains(&d.name),
                disabled_for_chat: chat_disabled.contains(&d.name),
                approval: switchboard_core::policy::approval_for(d, &tool_settings),
                exclusive: d.exclusive,
                takes_control: d.takes_control,
                parameters: d.parameters.clone(),
                findings: all.lint(d),
            })
            .collect())
    }

    /// Disables (or re-enables) a tool for one conversation; remembered with the chat.
    pub fn set_chat_tool_disabled(&self, conversation_id: &str, name: &str, disabled: bool) -> Result<()> {
        self.set_chat_tools_disabled(conversation_id, &[name.to_owned()], disabled)
    }

    /// Switches several tools off (or back on) for one conversation at once (a whole MCP server
    /// or toolset): one write, so a failure leaves the chat's set as it was.
    pub fn set_chat_tools_disabled(&self, conversation_id: &str, names: &[String], disabled: bool) -> Result<()> {
        let mut set = self.inner.store.disabled_tools(conversation_id)?;
        for name in names {
            if disabled {
                set.insert(name.clone());
            } else {
                set.remove(name);
            }
        }
        Ok(self.inner.store.set_disabled_tools(conversation_id, &set)?)
    }

    /// Exempts a tool from the egress question (it may then send data to destinations not
    /// used in a chat after the chat read untrusted content, without asking), or ends the
    /// exemption. Exempting widens what the app may do, so it counts only when `confirm`
    /// agrees (a native dialog, a typed flag); ending it needs no confirmation.
    pub fn set_tool_egress_exempt(
        &self,
        tool: &str,
        exempt: bool,
        confirm: &dyn crate::confirm::Confirm,
    ) -> Result<()> {
        let mut settings = self.settings()?;
        if exempt {
            settings.tools.egress_exempt.insert(tool.to_owned());
        } else {
            settings.tools.egress_exempt.remove(tool);
        }
        self.update_settings_confirmed(&settings, confirm)
    }
}
