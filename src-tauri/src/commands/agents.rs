//! Agents and toolsets (`agents.json`); each change answers with the whole overview.

use super::{Result, ipc};
use switchboard_service::Service;
use switchboard_service::agents::{AgentConfig, AgentsOverview, Toolset};
use tauri::State;

/// Every agent and toolset, with what is wrong with each now.
#[tauri::command]
pub async fn agents(service: State<'_, Service>) -> Result<AgentsOverview> {
    service.agents().map_err(ipc)
}

/// Adds an agent, or replaces the one of the same name.
#[tauri::command]
pub async fn put_agent(service: State<'_, Service>, agent: AgentConfig) -> Result<AgentsOverview> {
    service.put_agent(agent).map_err(ipc)?;
    service.agents().map_err(ipc)
}

#[tauri::command]
pub async fn duplicate_agent(service: State<'_, Service>, name: String, new_name: String) -> Result<AgentsOverview> {
    service.duplicate_agent(&name, &new_name).map_err(ipc)?;
    service.agents().map_err(ipc)
}

#[tauri::command]
pub async fn remove_agent(service: State<'_, Service>, name: String) -> Result<AgentsOverview> {
    service.remove_agent(&name).map_err(ipc)?;
    service.agents().map_err(ipc)
}

/// Adds a toolset, or replaces the one of the same name.
#[tauri::command]
pub async fn put_toolset(service: State<'_, Service>, toolset: Toolset) -> Result<AgentsOverview> {
    service.put_toolset(toolset).map_err(ipc)?;
    service.agents().map_err(ipc)
}

#[tauri::command]
pub async fn remove_toolset(service: State<'_, Service>, name: String) -> Result<AgentsOverview> {
    service.remove_toolset(&name).map_err(ipc)?;
    service.agents().map_err(ipc)
}
