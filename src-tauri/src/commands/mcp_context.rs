//! An MCP server's context beyond tools, for the composer: prompts (got with arguments),
//! resources and templates, argument completion, subscriptions' updates and the log level.
//!
//! Invariant: each command is one service call; what a server sent comes back redacted by the
//! service, and a resource is read only from the server the page names.

use super::{Result, ipc, logged};
use std::collections::BTreeMap as Map;
use switchboard_service::Service;
use switchboard_service::mcp::{
    Completion, CompletionRef, LogLevel, McpPrompts, McpResourceUpdate, McpResources, McpServerInfo, PromptMessages,
    ResourceTemplateInfo,
};
use tauri::State;

#[tauri::command]
pub async fn mcp_prompts(service: State<'_, Service>, server: String) -> Result<McpPrompts> {
    logged("mcp_prompts", async move { service.mcp_prompts(&server).await.map_err(ipc) }).await
}

/// The prompt with its arguments, as the message to send; a refusal names the server and prompt.
#[tauri::command]
pub async fn mcp_get_prompt(
    service: State<'_, Service>,
    server: String,
    name: String,
    args: Map<String, String>,
) -> Result<PromptMessages> {
    logged("mcp_get_prompt", async move { service.mcp_get_prompt(&server, &name, &args).await.map_err(ipc) }).await
}

#[tauri::command]
pub async fn mcp_resources(service: State<'_, Service>, server: String) -> Result<McpResources> {
    logged("mcp_resources", async move { service.mcp_resources(&server).await.map_err(ipc) }).await
}

#[tauri::command]
pub async fn mcp_resource_templates(service: State<'_, Service>, server: String) -> Result<Vec<ResourceTemplateInfo>> {
    logged("mcp_resource_templates", async move { service.mcp_resource_templates(&server).await.map_err(ipc) }).await
}

/// The URI a template gives (RFC 6570 level 1); one of another scheme is refused.
#[tauri::command]
pub async fn mcp_expand_template(
    service: State<'_, Service>,
    uri_template: String,
    values: Map<String, String>,
) -> Result<String> {
    logged("mcp_expand_template", async move { service.mcp_expand_template(&uri_template, &values).map_err(ipc) }).await
}

#[tauri::command]
pub async fn mcp_complete(
    service: State<'_, Service>,
    server: String,
    reference: CompletionRef,
    argument: String,
    value: String,
    context: Map<String, String>,
) -> Result<Completion> {
    logged("mcp_complete", async move {
        service.mcp_complete(&server, &reference, &argument, &value, &context).await.map_err(ipc)
    })
    .await
}

/// Subscribed resources the servers updated since they were last read (attached).
#[tauri::command]
pub async fn mcp_resource_updates(service: State<'_, Service>) -> Result<Vec<McpResourceUpdate>> {
    logged("mcp_resource_updates", async move { Ok(service.mcp_resource_updates()) }).await
}

#[tauri::command]
pub async fn mcp_set_log_level(service: State<'_, Service>, server: String, level: LogLevel) -> Result<McpServerInfo> {
    logged("mcp_set_log_level", async move { service.mcp_set_log_level(&server, level).await.map_err(ipc) }).await
}
