//! Turns: sending a message, editing one, asking again, stopping, and answering a tool's approval
//! request or a budget pause.
//!
//! Invariant: a turn's events travel over one `Channel<ChatEvent>` per turn; a closed window drops
//! the channel while the turn goes on and is recorded.

use super::{Result, blocking, ipc, logged};
use crate::platform::dialog::Confirmer;
use std::sync::Arc;
use switchboard_core::{BudgetChoice, ChatEvent, Coalescing, EventSink, coalesce};
use switchboard_service::Service;
use switchboard_service::ipc::{ApprovalChoice, SendRequest, TurnChoices, TurnStarted};
use tauri::State;
use tauri::ipc::Channel;

/// Forwards a turn's events to the webview. A closed window drops the channel; the turn goes on
/// and is recorded, so reopening the conversation shows it.
struct ChannelSink(Channel<ChatEvent>);

impl EventSink for ChannelSink {
    fn emit(&self, event: ChatEvent) {
        if let Err(e) = self.0.send(event) {
            tracing::debug!("event not delivered to the window: {e}");
        }
    }
}

/// The sink of one turn: text deltas are merged to at most about one message per frame, since
/// the webview pays for each message on its main thread.
fn turn_sink(on_event: Channel<ChatEvent>) -> Arc<dyn EventSink> {
    Arc::new(Coalescing::new(ChannelSink(on_event), coalesce::FRAME))
}

#[tauri::command]
pub async fn send_message(
    service: State<'_, Service>,
    request: SendRequest,
    on_event: Channel<ChatEvent>,
) -> Result<TurnStarted> {
    logged("send_message", async move { service.send(request, turn_sink(on_event)).map_err(ipc) }).await
}

#[tauri::command]
pub async fn stop_turn(service: State<'_, Service>, message_id: String) -> Result<bool> {
    logged("stop_turn", async move { Ok(service.stop(&message_id)) }).await
}

/// Answers a question again (`message_id`: the answer or its question; none: the last one),
/// keeping the earlier answer as a version: with `choices` when the person picked new ones, else
/// exactly as it was asked (the service remembers).
#[tauri::command]
pub async fn regenerate(
    service: State<'_, Service>,
    conversation_id: String,
    message_id: Option<String>,
    choices: Option<TurnChoices>,
    on_event: Channel<ChatEvent>,
) -> Result<TurnStarted> {
    logged("regenerate", async move {
        service.regenerate(&conversation_id, message_id.as_deref(), choices, turn_sink(on_event)).map_err(ipc)
    })
    .await
}

/// Sends an edited question: a new version of the person's message on a new branch (the old one
/// is kept), answered with `choices` or the ones it was asked with.
#[tauri::command]
pub async fn edit_message(
    service: State<'_, Service>,
    conversation_id: String,
    message_id: String,
    text: String,
    choices: Option<TurnChoices>,
    on_event: Channel<ChatEvent>,
) -> Result<TurnStarted> {
    logged("edit_message", async move {
        service.edit_message(&conversation_id, &message_id, &text, choices, turn_sink(on_event)).map_err(ipc)
    })
    .await
}

/// Answers a budget pause (the pause card): continue with an allowance, answer now, or stop.
#[tauri::command]
pub async fn resolve_budget(service: State<'_, Service>, pause_id: String, choice: BudgetChoice) -> Result<()> {
    logged("resolve_budget", async move { service.resolve_budget(&pause_id, choice).map_err(ipc) }).await
}

#[tauri::command]
pub async fn resolve_approval(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    call_id: String,
    choice: ApprovalChoice,
) -> Result<()> {
    logged("resolve_approval", async move {
        // "Always" stops the tool asking: the person confirms that natively (a blocking dialog).
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        blocking(move || s.resolve_approval_confirmed(&call_id, choice, confirm.0.as_ref())).await
    })
    .await
}
