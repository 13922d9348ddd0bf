//! Conversations: the list, search, one conversation's messages, and what the person changes
//! about a chat (title, instructions, pinned, archived, deleted, its versions and branches).

use super::{Result, ipc, logged};
use switchboard_service::Service;
use switchboard_service::context::ConversationContext;
use switchboard_service::ipc::{
    ChatGrant, ChatInstructions, ChatSetup, ChatSetupChange, ConversationSummary, ConversationView, MessagePage,
    SearchHit,
};
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

/// The meter's figure for a chat's next request, with `provider`/`model` if the person picked
/// another (default: the chat's).
#[tauri::command]
pub async fn conversation_context(
    service: State<'_, Service>,
    id: String,
    provider: Option<String>,
    model: Option<String>,
) -> Result<ConversationContext> {
    logged("conversation_context", async move {
        service.conversation_context(&id, provider.as_deref(), model.as_deref()).map_err(ipc)
    })
    .await
}

#[tauri::command]
pub async fn set_chat_instructions(service: State<'_, Service>, id: String, text: String) -> Result<()> {
    logged("set_chat_instructions", async move { service.set_chat_instructions(&id, &text).map_err(ipc) }).await
}

/// Changes a chat's setup (the tray's toolsets, the parameters dialog, the model picker).
#[tauri::command]
pub async fn set_chat_setup(service: State<'_, Service>, id: String, change: ChatSetupChange) -> Result<ChatSetup> {
    logged("set_chat_setup", async move { service.set_chat_setup(&id, change).map_err(ipc) }).await
}

/// The grants made in a chat ("allow for this chat").
#[tauri::command]
pub async fn chat_grants(service: State<'_, Service>, id: String) -> Result<Vec<ChatGrant>> {
    logged("chat_grants", async move { service.chat_grants(&id).map_err(ipc) }).await
}

/// Takes a grant back; answers with the grants left.
#[tauri::command]
pub async fn revoke_chat_grant(service: State<'_, Service>, id: String, grant: ChatGrant) -> Result<Vec<ChatGrant>> {
    logged("revoke_chat_grant", async move { service.revoke_chat_grant(&id, &grant).map_err(ipc) }).await
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

/// Shows a version of a message (and the branch chosen last below it).
#[tauri::command]
pub async fn switch_version(
    service: State<'_, Service>,
    conversation_id: String,
    message_id: String,
) -> Result<ConversationView> {
    logged("switch_version", async move { service.switch_version(&conversation_id, &message_id).map_err(ipc) }).await
}

/// Deletes a version with everything after it.
#[tauri::command]
pub async fn delete_version(
    service: State<'_, Service>,
    conversation_id: String,
    message_id: String,
) -> Result<ConversationView> {
    logged("delete_version", async move { service.delete_version(&conversation_id, &message_id).map_err(ipc) }).await
}

/// Copies the branch up to a message into a new conversation; its id.
#[tauri::command]
pub async fn branch_conversation(
    service: State<'_, Service>,
    conversation_id: String,
    message_id: String,
) -> Result<String> {
    logged(
        "branch_conversation",
        async move { service.branch_conversation(&conversation_id, &message_id).map_err(ipc) },
    )
    .await
}

/// One message as Markdown (Copy as Markdown).
#[tauri::command]
pub async fn message_markdown(
    service: State<'_, Service>,
    conversation_id: String,
    message_id: String,
) -> Result<String> {
    logged("message_markdown", async move { service.message_markdown(&conversation_id, &message_id).map_err(ipc) })
        .await
}
