//! Spend: one answer's requests, a conversation's total, and reports over a period.

use super::{Result, ipc, logged};
use switchboard_service::Service;
use switchboard_service::ipc::{ConversationUsage, MessageUsage, UsageQuery, UsageReport};
use tauri::State;

#[tauri::command]
pub async fn message_usage(service: State<'_, Service>, message_id: String) -> Result<MessageUsage> {
    logged("message_usage", async move { service.message_usage(&message_id).map_err(ipc) }).await
}

#[tauri::command]
pub async fn conversation_usage(service: State<'_, Service>, conversation_id: String) -> Result<ConversationUsage> {
    logged("conversation_usage", async move { service.conversation_usage(&conversation_id).map_err(ipc) }).await
}

#[tauri::command]
pub async fn usage_report(service: State<'_, Service>, query: UsageQuery) -> Result<UsageReport> {
    logged("usage_report", async move { service.usage_report(&query).map_err(ipc) }).await
}
