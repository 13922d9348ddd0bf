//! The client side of one connection: the rmcp handler (progress to the calling tool card,
//! `tools/list_changed` to the supervisor; prompt and resource list changes, resource updates and
//! log notifications to the server's context; what the server asks — input, a completion, the
//! roots — to [`super::asking`]) and [`Conn`], the live connection calls go through, with the
//! calls in flight ([`Progress`]).

// rmcp marks sampling, roots and logging deprecated (SEP-2577, a later revision); the 2025-11-25
// revision this client speaks has them, and servers in the field use them.
#![allow(deprecated)]

use super::asking::Asking;
pub(super) use super::asking::Progress;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, CustomRequest, CustomResult, ElicitRequestParams, ElicitResult, Implementation,
    InitializeRequestParams, ListRootsResult, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProtocolVersion, ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RoleClient};
use std::sync::{Arc, Weak};

/// One live connection.
pub(super) struct Conn {
    pub(super) peer: Peer<RoleClient>,
    pub(super) progress: Progress,
}

/// The client side's handler.
pub(super) struct Handler {
    pub(super) progress: Progress,
    pub(super) list_changed: Arc<tokio::sync::Notify>,
    pub(super) server: String,
    /// What the server may ask of the person, and whether anything is declared.
    pub(super) asking: Arc<Asking>,
    /// The server's state, for notifications about its context.
    pub(super) shared: Weak<super::shared::Shared>,
}

impl Handler {
    async fn elicit(
        &self,
        params: &serde_json::Value,
        order: Option<&[String]>,
        context: RequestContext<RoleClient>,
    ) -> Result<serde_json::Value, McpError> {
        self.asking.elicit(&self.progress, params, order, context.ct).await
    }

    async fn sample(
        &self,
        params: &serde_json::Value,
        context: RequestContext<RoleClient>,
    ) -> Result<serde_json::Value, McpError> {
        self.asking.sample(&self.progress, params, context.ct).await
    }

    fn notice(&self, notice: super::context::Notice) {
        if let Some(shared) = self.shared.upgrade() {
            shared.context_notice(notice);
        }
    }
}

impl rmcp::ClientHandler for Handler {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        // Elicitation (form and page), sampling and roots are declared only when the service
        // answers them.
        let capabilities = match self.asking.declared {
            true => serde_json::from_value::<ClientCapabilities>(serde_json::json!({
                "elicitation": {"form": {}, "url": {}},
                "sampling": {},
                "roots": {"listChanged": true}
            }))
            .unwrap_or_default(),
            false => ClientCapabilities::default(),
        };
        // 2025-11-25, the revision servers in the field speak (and the conformance suite
        // checks); a server on a newer one answers with it or with this.
        InitializeRequestParams::new(
            capabilities,
            Implementation::new("switchboard", env!("CARGO_PKG_VERSION")).with_title("Switchboard"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _ctx: NotificationContext<RoleClient>) {
        let ctx = self.progress.get(&Progress::key(&params.progress_token));
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

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let order = match &request {
            ElicitRequestParams::FormElicitationParams { requested_schema, .. } => {
                requested_schema.property_order.clone()
            }
            _ => None,
        };
        let params = serde_json::to_value(&request).unwrap_or_default();
        let answer = self.elicit(&params, order.as_deref(), context).await?;
        serde_json::from_value(answer).map_err(|e| McpError::internal_error(e.to_string(), None))
    }

    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, McpError> {
        let params = serde_json::to_value(&params).unwrap_or_default();
        let result = self.sample(&params, context).await?;
        serde_json::from_value(result).map_err(|e| McpError::internal_error(e.to_string(), None))
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, McpError> {
        if !self.asking.declared {
            return Err(self.asking.undeclared("the roots (roots/list)"));
        }
        serde_json::from_value(self.asking.roots_json()).map_err(|e| McpError::internal_error(e.to_string(), None))
    }

    /// What rmcp could not read as a request it knows: an elicitation whose schema has a type
    /// the specification does not allow arrives here (declined, the card saying why).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, McpError> {
        let params = request.params.unwrap_or_default();
        match request.method.as_str() {
            "elicitation/create" => self.elicit(&params, None, context).await.map(CustomResult),
            "sampling/createMessage" => self.sample(&params, context).await.map(CustomResult),
            other => Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("Switchboard does not answer '{}'", other.chars().take(100).collect::<String>()),
                None,
            )),
        }
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
