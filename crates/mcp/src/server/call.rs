//! One tool call: [`McpTool`] sends `tools/call` on the current connection (so a slow call never
//! blocks the supervisor, and a dead server fails it at once), forwards progress to the tool card,
//! and tells the server to stop when the caller goes away before the answer.

use super::handler::Progress;
use super::shared::Shared;
use crate::convert;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientNotification,
    ClientRequest, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use std::sync::Weak;
use std::time::Duration;
use switchboard_core::{Egress, SourceStatus, Tool, ToolContext, ToolDef, ToolError, ToolOutput, ToolSource};

/// One tool of a server.
pub(super) struct McpTool {
    pub(super) def: ToolDef,
    pub(super) remote: String,
    pub(super) server: Weak<Shared>,
    /// The server says the tool only reads and reaches nothing outside it (`readOnlyHint`
    /// true and `openWorldHint` false): then its calls declare no egress.
    pub(super) closed_read_only: bool,
}

impl Tool for McpTool {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    /// Its arguments go to the server, and from there wherever the tool reaches; only a tool
    /// that declares itself read-only and closed-world sends nothing out.
    fn egress(&self, args: &serde_json::Value) -> Option<Egress> {
        let ToolSource::Mcp { server } = &self.def.source else { return None };
        (!self.closed_read_only).then(|| Egress {
            destination: format!("the MCP server '{server}' (its tool '{}' may reach any site)", self.remote),
            sends: args.to_string(),
        })
    }

    fn call(&self, args: serde_json::Value, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let server = self.server.upgrade().ok_or_else(|| ToolError::Failed("the MCP server was removed".into()))?;
            let conn = server.lock().conn.clone();
            let Some(conn) = conn else {
                let status = server.status_of(&server.lock());
                let why = match status {
                    SourceStatus::Failed { reason } => format!(": {reason}"),
                    SourceStatus::Starting => " (it is restarting)".to_owned(),
                    _ => String::new(),
                };
                return Err(ToolError::Failed(format!("the MCP server '{}' is not running{why}", server.name)));
            };
            let _running = Running::new(&server);
            let arguments = match args {
                serde_json::Value::Object(map) => map,
                serde_json::Value::Null => serde_json::Map::new(),
                other => return Err(ToolError::InvalidArguments(format!("expected an object, got {other}"))),
            };
            let params = CallToolRequestParams::new(self.remote.clone()).with_arguments(arguments);
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
            let handle =
                conn.peer.send_cancellable_request(request, PeerRequestOptions::no_options()).await.map_err(|e| {
                    ToolError::Failed(format!("the MCP server '{}' could not be reached: {e}", server.name))
                })?;
            let key = Progress::key(&handle.progress_token);
            conn.progress.insert(key.clone(), ctx.clone(), self.remote.clone());
            let _forget = Forget(&conn.progress, key);
            // Until the answer arrives, ending this call any way (the stop button, the loop's
            // timeout dropping it) tells the server to stop working on it.
            let mut abandon = Abandon { peer: Some(handle.peer.clone()), id: handle.id.clone() };
            let response = tokio::select! {
                r = handle.await_response() => r,
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            };
            abandon.peer = None;
            if response.is_err()
                && let Some(why) = server.lock().ended.clone()
            {
                return Err(ToolError::Failed(why));
            }
            let result = match response {
                Ok(ServerResult::CallToolResult(result)) => serde_json::to_value(&result).unwrap_or_default(),
                Ok(other) => serde_json::to_value(&other).unwrap_or_default(),
                Err(e) => {
                    let tail = server.stderr_tail(3);
                    return Err(ToolError::Failed(format!(
                        "the MCP server '{}' failed during the call: {e}{tail}",
                        server.name
                    )));
                }
            };
            let converted = convert::result(&result);
            if converted.is_error {
                return Err(ToolError::Failed(converted.text));
            }
            Ok(ToolOutput::text(converted.text).with_images(converted.images))
        })
    }
}

/// Sends `notifications/cancelled` for a request whose caller went away before its answer.
struct Abandon {
    peer: Option<Peer<RoleClient>>,
    id: rmcp::model::RequestId,
}

impl Drop for Abandon {
    fn drop(&mut self) {
        let (Some(peer), Ok(runtime)) = (self.peer.take(), tokio::runtime::Handle::try_current()) else { return };
        let cancelled = ClientNotification::CancelledNotification(CancelledNotification::new(
            CancelledNotificationParam::new(Some(self.id.clone()), Some("cancelled by Switchboard".into())),
        ));
        // A dead server gets two seconds.
        runtime.spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(2), peer.send_notification(cancelled)).await;
        });
    }
}

/// Counts a call as running while it waits ([`McpServer::calls_running`](super::McpServer::calls_running)).
struct Running<'a>(&'a Shared);

impl<'a> Running<'a> {
    fn new(server: &'a Shared) -> Running<'a> {
        server.lock().calls += 1;
        Running(server)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.calls = state.calls.saturating_sub(1);
    }
}

/// Removes a call's progress registration when the call ends, however it ends.
struct Forget<'a>(&'a Progress, String);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.remove(&self.1);
    }
}
