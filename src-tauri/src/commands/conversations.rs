//! Conversations: the list, search, one conversation's messages, and what the person changes
//! about a chat (title, instructions, pinned, archived, deleted).

use super::{Result, ipc, logged};
use switchboard_service::Service;
use switchboard_service::ipc::{ChatInstructions, ConversationSummary, ConversationView, MessagePage, SearchHit};
use tauri::State;

#[tauri::command]
pub async fn list_conversations(service: State<'_, Service>) -> Result<Vec<ConversationSummary>> {
    logged("list_conversations", async move { service.conversations().map_err(ipc) }).await
}

#[tauri::command]
pub async fn search_conversations(service: State<'_, Service>, query: String) -> Result<Vec<ConversationSummary>> {
    logged("search_conversations", async move { service.search(&query).map_err(ipc) }).await
}

#[tauri::command]
pub async fn search_messages(service: State<'_, Service>, query: String, limit: Option<u32>) -> Result<Vec<SearchHit>> {
    logged("search_messages", async move { service.search_messages(&query, limit).map_err(ipc) }).await
}

#[tauri::command]
pub async fn open_conversation(service: State<'_, Service>, id: String) -> Result<ConversationView> {
    logged("open_conversation", async move { service.open(&id).map_err(ipc) }).await
}

#[tauri::command]
pub async fn older_messages(
    service: State<'_, Service>,
    id: String,
    before: String,
    limit: u32,
) -> Result<MessagePage> {
    logged("older_messages", async move { service.older_messages(&id, &before, limit).map_err(ipc) }).await
}

#[tauri::command]
pub async fn rename_conversation(service: State<'_, Service>, id: String, title: String) -> Result<()> {
    logged("rename_conversation", async move { service.rename(&id, &title).map_err(ipc) }).await
}

#[tauri::command]
pub async fn generate_title(service: State<'_, Service>, id: String) -> Result<String> {
    logged("generate_title", async move { service.generate_title(&id).await.map_err(ipc) }).await
}

/// A chat's instructions: the custom ones, its own, and what its last question was sent with.
#[tauri::command]
pub async fn chat_instructions(service: State<'_, Service>, id: String) -> Result<ChatInstructions> {
    logged("chat_instructions", async move { service.chat_instructions(&id).map_err(ipc) }).await
}

#[tauri::command]
pub async fn set_chat_instructions(service: State<'_, Service>, id: String, text: String) -> Result<()> {
    logged("set_chat_instructions", async move { service.set_chat_instructions(&id, &text).map_err(ipc) }).await
}

#[tauri::command]
pub async fn set_conversation_pinned(service: State<'_, Service>, id: String, pinned: bool) -> Result<()> {
    logged("set_conversation_pinned", async move { service.set_pinned(&id, pinned).map_err(ipc) }).await
}

#[tauri::command]
pub async fn set_conversation_archived(service: State<'_, Service>, id: String, archived: bool) -> Result<()> {
    logged("set_conversation_archived", async move { service.set_archived(&id, archived).map_err(ipc) }).await
}

#[tauri::command]
pub async fn delete_conversation(service: State<'_, Service>, id: String) -> Result<()> {
    logged("delete_conversation", async move { service.delete(&id).map_err(ipc) }).await
}
