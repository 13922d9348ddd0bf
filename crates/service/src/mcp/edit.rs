//! Editing an MCP server after adding it: its command, arguments, environment, URL, headers or
//! name.
//!
//! Invariants: an edit never takes another server's name; what runs after an edit asks the same
//! confirmation as adding (a changed command line is not approved until the person agrees, a
//! rename alone keeps the approval); a call the old server was still running is stopped and
//! fails with a notice that says the server was edited, and the result counts such calls.

use super::{McpServerInfo, ServerConfig, update_trust};
use crate::confirm::Confirm;
use crate::{Error, Result, Service};
use serde::Serialize;
use switchboard_core::ErrorKind;
use switchboard_mcp::config::check_name;

/// What an edit did.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpEdited {
    /// The server after the edit (started, or waiting for approval of what it now runs).
    pub server: McpServerInfo,
    /// Calls the old server was running; each was stopped with a notice on its card.
    pub stopped_calls: u32,
}

/// What a call cut off by an edit says.
pub fn edited_notice(name: &str) -> String {
    format!(
        "The MCP server '{name}' was edited while this call was running, so the call was stopped. \
         Ask again to run it on the edited server."
    )
}

impl Service {
    /// Replaces the server `name` with `config` under `new_name` (the same name, or one no other
    /// server has). Plain secrets go to the keychain as when adding; it keeps its enabled state.
    pub async fn mcp_edit(
        &self,
        name: &str,
        new_name: &str,
        mut config: ServerConfig,
        confirm: &dyn Confirm,
    ) -> Result<McpEdited> {
        check_name(new_name).map_err(|e| Error::config(e.to_string()))?;
        config.spec(new_name).map_err(|e| Error::config(e.to_string()))?;
        let mut file = self.mcp_config()?;
        let Some(old) = file.mcp_servers.get(name) else {
            return Err(Error::new(ErrorKind::NotFound, format!("There is no MCP server named '{name}'.")));
        };
        config.disabled = old.disabled;
        if new_name != name && file.mcp_servers.contains_key(new_name) {
            return Err(Error::config(format!(
                "There is already an MCP server named '{new_name}'. Choose another name, or remove that server first."
            )));
        }
        self.move_secrets_to_keys(new_name, &mut config)?;
        file.mcp_servers.remove(name);
        file.mcp_servers.insert(new_name.to_owned(), config.clone());
        self.save_mcp_config(&file)?;
        if new_name != name {
            update_trust(&self.inner.store, |all| {
                if let Some(trust) = all.remove(name) {
                    all.insert(new_name.to_owned(), trust);
                }
            })?;
        }
        let running = self.inner.mcp.lock().get(name).cloned();
        let mut stopped_calls = 0;
        if let Some(server) = running {
            stopped_calls = u32::try_from(server.calls_running()).unwrap_or(u32::MAX);
            server.stop_because(edited_notice(name)).await;
        }
        self.remove_mcp_source(name).await;
        if !config.disabled {
            let server = self.add_mcp_source(new_name, config);
            self.start_mcp_server(&server, confirm).await;
        }
        Ok(McpEdited { server: self.mcp_info(new_name)?, stopped_calls })
    }
}
