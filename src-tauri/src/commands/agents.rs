//! Agents and toolsets (`agents.json`); each change answers with the whole overview.

use super::{Result, ipc, logged};
use switchboard_service::Service;
use switchboard_service::agents::{AgentConfig, AgentsOverview, Toolset};
use tauri::State;

/// Every agent and toolset, with what is wrong with each now.
#[tauri::command]
pub async fn agents(service: State<'_, Service>) -> Result<AgentsOverview> {
    logged("agents", async move { service.agents().map_err(ipc) }).await
}

/// Adds an agent, or replaces the one of the same name.
#[tauri::command]
pub async fn put_agent(service: State<'_, Service>, agent: AgentConfig) -> Result<AgentsOverview> {
    logged("put_agent", async move {
        service.put_agent(agent).map_err(ipc)?;
        service.agents().map_err(ipc)
    })
    .await
}

#[tauri::command]
pub async fn duplicate_agent(service: State<'_, Service>, name: String, new_name: String) -> Result<AgentsOverview> {
    logged("duplicate_agent", async move {
        service.duplicate_agent(&name, &new_name).map_err(ipc)?;
        service.agents().map_err(ipc)
    })
    .await
}

#[tauri::command]
pub async fn remove_agent(service: State<'_, Service>, name: String) -> Result<AgentsOverview> {
    logged("remove_agent", async move {
        service.remove_agent(&name).map_err(ipc)?;
        service.agents().map_err(ipc)
    })
    .await
}

/// Adds a toolset, or replaces the one of the same name.
#[tauri::command]
pub async fn put_toolset(service: State<'_, Service>, toolset: Toolset) -> Result<AgentsOverview> {
    logged("put_toolset", async move {
        service.put_toolset(toolset).map_err(ipc)?;
        service.agents().map_err(ipc)
    })
    .await
}

#[tauri::command]
pub async fn remove_toolset(service: State<'_, Service>, name: String) -> Result<AgentsOverview> {
    logged("remove_toolset", async move {
        service.remove_toolset(&name).map_err(ipc)?;
        service.agents().map_err(ipc)
    })
    .await
}
