//! What an MCP server asks the person during a tool call: the answer to its form or page
//! (elicitation) and the decision on its request for a model completion (sampling).
//!
//! Invariant: the page only answers; a page the server asked to open is opened by the shell, with
//! the address the service checked as a link, and only when the person accepted.

use super::{Result, ipc, logged};
use crate::platform::opener::Opener;
use switchboard_core::{ElicitationAction, SamplingMessage};
use switchboard_service::Service;
use tauri::State;

/// Answers a server's form or page. Accepting a page opens it (its address checked as a link).
#[tauri::command]
pub async fn answer_elicitation(
    service: State<'_, Service>,
    opener: State<'_, Opener>,
    request_id: String,
    action: ElicitationAction,
    content: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<()> {
    logged("answer_elicitation", async move {
        if let Some(url) = service.answer_elicitation(&request_id, action, content).map_err(ipc)? {
            opener.open(url, "The page").await?;
        }
        Ok(())
    })
    .await
}

/// Approves (with the messages as the person edited them, if they did) or denies a server's
/// request for a model completion.
#[tauri::command]
pub async fn answer_sampling(
    service: State<'_, Service>,
    request_id: String,
    approve: bool,
    messages: Option<Vec<SamplingMessage>>,
) -> Result<()> {
    logged("answer_sampling", async move { service.answer_sampling(&request_id, approve, messages).map_err(ipc) }).await
}
