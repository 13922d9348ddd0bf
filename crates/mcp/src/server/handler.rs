//! The client side of one connection: the rmcp handler (progress to the calling tool card,
//! `tools/list_changed` to the supervisor; prompt and resource list changes, resource updates and
//! log notifications to the server's context) and [`Conn`], the live connection calls go through,
//! with the calls waiting for progress ([`Progress`]).

#[allow(deprecated)] // MCP's logging, which servers in the field use.
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::model::{
    ClientCapabilities, Implementation, InitializeRequestParams, ProgressNotificationParam, ProtocolVersion,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, Peer, RoleClient};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use switchboard_core::ToolContext;

/// One live connection.
pub(super) struct Conn {
    pub(super) peer: Peer<RoleClient>,
    pub(super) progress: Progress,
}

/// Calls waiting for progress, by progress token.
#[derive(Clone, Default)]
pub(super) struct Progress(pub(super) Arc<Mutex<HashMap<String, ToolContext>>>);

impl Progress {
    pub(super) fn key(token: &impl serde::Serialize) -> String {
        serde_json::to_string(token).unwrap_or_default()
    }
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ToolContext>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The client side's handler: progress to the calling tool card, list changes to the supervisor.
pub(super) struct Handler {
    pub(super) progress: Progress,
    pub(super) list_changed: Arc<tokio::sync::Notify>,
    pub(super) server: String,
    /// The server's state, for notifications about its context.
    pub(super) shared: Weak<super::shared::Shared>,
}

impl Handler {
    fn notice(&self, notice: super::context::Notice) {
        if let Some(shared) = self.shared.upgrade() {
            shared.context_notice(notice);
        }
    }
}

impl rmcp::ClientHandler for Handler {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        // 2025-11-25, the revision servers in the field speak (and the conformance suite
        // checks); a server on a newer one answers with it or with this.
        InitializeRequestParams::new(
            ClientCapabilities::default(),
            Implementation::new("switchboard", env!("CARGO_PKG_VERSION")).with_title("Switchboard"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _ctx: NotificationContext<RoleClient>) {
        let ctx = self.progress.lock().get(&Progress::key(&params.progress_token)).cloned();
        if let Some(ctx) = ctx {
            let amount = match params.total {
                Some(total) => format!("{}/{}", params.progress, total),
                None => params.progress.to_string(),
            };
            let text = match params.message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                Some(message) => format!("{} ({amount})", message.chars().take(500).collect::<String>()),
                None => amount,
            };
            ctx.progress(text);
        }
    }

    async fn on_tool_list_changed(&self, _ctx: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "tools/list_changed");
        self.list_changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _ctx: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "prompts/list_changed");
        self.notice(super::context::Notice::PromptsChanged);
    }

    async fn on_resource_list_changed(&self, _ctx: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "resources/list_changed");
        self.notice(super::context::Notice::ResourcesChanged);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _ctx: NotificationContext<RoleClient>,
    ) {
        self.notice(super::context::Notice::Updated(params.uri));
    }

    #[allow(deprecated)] // MCP's logging, which servers in the field use.
    async fn on_logging_message(&self, params: LoggingMessageNotificationParam, _ctx: NotificationContext<RoleClient>) {
        let level = serde_json::to_value(params.level).ok().and_then(|v| v.as_str().map(str::to_owned));
        self.notice(super::context::Notice::Log {
            level: level.unwrap_or_else(|| "info".into()),
            logger: params.logger,
            data: params.data,
        });
    }
}
