//! The tools a chat may call: every tool with its state, and a chat's own switches.

use super::{Result, ipc, logged};
use switchboard_service::Service;
use switchboard_service::ipc::ToolInfo;
use tauri::State;

/// Every tool with its state in Settings and in a chat; a new chat with `agent` gets the agent's.
#[tauri::command]
pub async fn list_tools(
    service: State<'_, Service>,
    conversation_id: Option<String>,
    agent: Option<String>,
) -> Result<Vec<ToolInfo>> {
    logged("list_tools", async move {
        match (conversation_id, agent) {
            (None, Some(agent)) => service.agent_tools(&agent),
            (id, _) => service.tools(id.as_deref()),
        }
        .map_err(ipc)
    })
    .await
}

#[tauri::command]
pub async fn set_chat_tool_disabled(
    service: State<'_, Service>,
    conversation_id: String,
    name: String,
    disabled: bool,
) -> Result<()> {
    logged("set_chat_tool_disabled", async move {
        service.set_chat_tool_disabled(&conversation_id, &name, disabled).map_err(ipc)
    })
    .await
}

/// Switches several tools off (or back on) for one chat at once: a whole MCP server or toolset.
#[tauri::command]
pub async fn set_chat_tools_disabled(
    service: State<'_, Service>,
    conversation_id: String,
    names: Vec<String>,
    disabled: bool,
) -> Result<()> {
    logged("set_chat_tools_disabled", async move {
        service.set_chat_tools_disabled(&conversation_id, &names, disabled).map_err(ipc)
    })
    .await
}
