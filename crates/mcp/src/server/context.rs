//! A server's context beyond tools, over the live connection: its prompts, resources and
//! resource templates (listed on demand, every page, kept until the server says its list
//! changed), a prompt got with arguments, a resource read, an argument completed, resource
//! subscriptions and the server's log level.
//!
//! Each request is JSON in and JSON out (rmcp's custom request: its typed helpers cache lists
//! by their own rules and parse a whole page or nothing) under the list timeout, converted and
//! bounded by [`crate::context`]. A server that did not declare a capability is not asked.
//!
//! Invariants: a listing is at most [`MAX_LIST_PAGES`] pages and stops reading once it holds
//! more than [`MAX_RAW_LISTING`] bytes; at most [`MAX_SUBSCRIPTIONS`] resources are subscribed,
//! and an update for a resource not subscribed is ignored; a log notification below the chosen
//! level is dropped; subscriptions and the level are sent again after a reconnect.

use super::connect::plain;
use super::shared::Shared;
use super::{MAX_LIST_PAGES, McpServer};
use crate::context::{
    self, Completion, CompletionRef, Listing, LogLevel, PromptInfo, PromptMessages, ResourceContents, ResourceInfo,
    ResourceTemplateInfo,
};
use rmcp::model::{ClientRequest, CustomRequest};
use rmcp::service::{Peer, RoleClient, ServiceError};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The most bytes of one listing read (as JSON, before conversion) before reading stops.
pub const MAX_RAW_LISTING: usize = 4 * 1024 * 1024;
/// The most resources subscribed at once on one server.
pub const MAX_SUBSCRIPTIONS: usize = 256;

/// Why a request about a server's context failed, in words that name the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// The server is not running (or was removed).
    #[error("{0}")]
    NotRunning(String),
    /// The server does not offer this (it did not declare the capability).
    #[error("{0}")]
    Unsupported(String),
    /// The server answered with an error (arguments refused, no such prompt or resource).
    #[error("{0}")]
    Refused(String),
    /// The server did not answer in time.
    #[error("{0}")]
    TimedOut(String),
    /// What the server sent, or what was asked, is not acceptable (too large, malformed, a
    /// template expanding to another scheme).
    #[error("{0}")]
    Invalid(String),
}

/// What a server declared it offers beyond tools.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Offers {
    /// Prompts (`prompts/list`, `prompts/get`).
    pub prompts: bool,
    /// Resources and templates.
    pub resources: bool,
    /// Resource subscriptions.
    pub subscribe: bool,
    /// Argument completion.
    pub completions: bool,
    /// Log notifications at a chosen level.
    pub logging: bool,
}

/// A subscribed resource the server said changed since it was last read.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUpdate {
    /// The resource.
    pub uri: String,
    /// How many updates the server announced since it was last read.
    pub updates: u32,
}

/// The context's part of a server's state.
#[derive(Default)]
pub(super) struct ContextState {
    prompts: Option<Listing<PromptInfo>>,
    resources: Option<Listing<ResourceInfo>>,
    templates: Option<Listing<ResourceTemplateInfo>>,
    subscribed: BTreeSet<String>,
    updated: BTreeMap<String, u32>,
    pub(super) log_level: Option<LogLevel>,
}

impl ContextState {
    /// A new connection: what the last one listed is forgotten (subscriptions and the log
    /// level stay, and are sent again).
    pub(super) fn forget_listings(&mut self) {
        self.prompts = None;
        self.resources = None;
        self.templates = None;
    }
}

/// What a notification from the server changes (called by the connection's handler).
pub(super) enum Notice {
    PromptsChanged,
    ResourcesChanged,
    Updated(String),
    Log { level: String, logger: Option<String>, data: Value },
}

impl Shared {
    /// Takes a notification about the context into the state.
    pub(super) fn context_notice(&self, notice: Notice) {
        match notice {
            Notice::PromptsChanged => self.lock().context.prompts = None,
            Notice::ResourcesChanged => {
                let mut state = self.lock();
                state.context.resources = None;
                state.context.templates = None;
            }
            Notice::Updated(uri) => {
                let mut state = self.lock();
                if state.context.subscribed.contains(&uri) {
                    let n = state.context.updated.entry(uri).or_default();
                    *n = n.saturating_add(1);
                }
            }
            Notice::Log { level, logger, data } => {
                let chosen = self.lock().context.log_level;
                let known = LogLevel::parse(&level);
                if let (Some(chosen), Some(level)) = (chosen, known)
                    && level < chosen
                {
                    return;
                }
                let line = context::log_line(&level, logger.as_deref(), &data, super::STDERR_LINE_MAX);
                super::stderr::push_line(&self.stderr, line);
            }
        }
    }

    /// What the server declared at initialize.
    pub(super) fn offers(&self, peer: &Peer<RoleClient>) -> Offers {
        let info = peer.peer_info().and_then(|i| serde_json::to_value(&*i).ok()).unwrap_or_default();
        let caps = info.get("capabilities").cloned().unwrap_or_default();
        let has = |k: &str| caps.get(k).is_some_and(|v| !v.is_null());
        Offers {
            prompts: has("prompts"),
            resources: has("resources"),
            subscribe: caps.pointer("/resources/subscribe").and_then(Value::as_bool).unwrap_or(false),
            completions: has("completions"),
            logging: has("logging"),
        }
    }

    /// After a reconnect: the chosen log level and the subscriptions again.
    pub(super) async fn resume_context(&self, peer: &Peer<RoleClient>) {
        let (level, subscribed) = {
            let state = self.lock();
            (state.context.log_level, state.context.subscribed.clone())
        };
        let offers = self.offers(peer);
        if let Some(level) = level.filter(|_| offers.logging)
            && let Err(e) = self.request(peer, "logging/setLevel", json!({"level": level.as_str()})).await
        {
            tracing::warn!(server = %self.name, "the log level was not set again: {e}");
        }
        if offers.subscribe {
            for uri in subscribed {
                if let Err(e) = self.request(peer, "resources/subscribe", json!({"uri": uri})).await {
                    tracing::warn!(server = %self.name, "{uri} was not subscribed again: {e}");
                }
            }
        }
    }

    /// Sends one request and returns its result as JSON.
    async fn request(&self, peer: &Peer<RoleClient>, method: &str, params: Value) -> Result<Value, ContextError> {
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let timeout = self.options.list_timeout;
        match tokio::time::timeout(timeout, peer.send_request(request)).await {
            Ok(Ok(result)) => Ok(serde_json::to_value(&result).unwrap_or_default()),
            Ok(Err(ServiceError::McpError(e))) => Err(ContextError::Refused(crate::convert::cut(&e.message, 2000))),
            Ok(Err(e)) => Err(ContextError::NotRunning(plain(&e.to_string()))),
            Err(_) => Err(ContextError::TimedOut(format!(
                "the MCP server '{}' did not answer {method} within {} s",
                self.name,
                timeout.as_secs()
            ))),
        }
    }

    /// Every page of a listing (`method`, entries under `key`), bounded.
    async fn list_pages(
        &self,
        peer: &Peer<RoleClient>,
        method: &str,
        key: &str,
    ) -> Result<(Vec<Value>, Vec<String>), ContextError> {
        let mut values = Vec::new();
        let mut skipped = Vec::new();
        let mut cursor: Option<String> = None;
        let mut raw = 0usize;
        for page in 0.. {
            if page == MAX_LIST_PAGES {
                skipped.push(format!("the list went on past {MAX_LIST_PAGES} pages; the rest was not read"));
                break;
            }
            let params = match cursor.take() {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let result = self.request(peer, method, params).await.map_err(|e| match e {
                ContextError::Refused(why) => ContextError::Refused(format!("{method} failed: {why}")),
                other => other,
            })?;
            if let Some(entries) = result.get(key).and_then(Value::as_array) {
                raw += entries.iter().map(|e| e.to_string().len()).sum::<usize>();
                values.extend(entries.iter().cloned());
            }
            if raw > MAX_RAW_LISTING || values.len() > 2 * context::MAX_LISTED {
                skipped.push(format!("the list went on past {} MiB; the rest was not read", MAX_RAW_LISTING >> 20));
                break;
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => break,
            }
        }
        Ok((values, skipped))
    }
}

impl McpServer {
    /// The live connection's peer, or why there is none.
    fn peer(&self) -> Result<Peer<RoleClient>, ContextError> {
        let state = self.shared.lock();
        match &state.conn {
            Some(conn) => Ok(conn.peer.clone()),
            None => {
                let why = match self.shared.status_of(&state) {
                    switchboard_core::SourceStatus::Failed { reason } => format!(": {reason}"),
                    switchboard_core::SourceStatus::Starting => " (it is starting)".to_owned(),
                    _ => String::new(),
                };
                Err(ContextError::NotRunning(format!("the MCP server '{}' is not running{why}", self.shared.name)))
            }
        }
    }

    /// A peer whose server declared what `has` checks, or why not.
    fn peer_offering(&self, what: &str, has: impl Fn(&Offers) -> bool) -> Result<Peer<RoleClient>, ContextError> {
        let peer = self.peer()?;
        if !has(&self.shared.offers(&peer)) {
            return Err(ContextError::Unsupported(format!("the MCP server '{}' offers no {what}", self.shared.name)));
        }
        Ok(peer)
    }

    /// What the server declared it offers (nothing while it is not running).
    pub fn offers(&self) -> Offers {
        self.peer().map(|p| self.shared.offers(&p)).unwrap_or_default()
    }

    /// Its prompts (listed when first asked and after the server said they changed). A server
    /// that offers none has none.
    pub async fn prompts(&self) -> Result<Listing<PromptInfo>, ContextError> {
        if let Some(cached) = self.shared.lock().context.prompts.clone() {
            return Ok(cached);
        }
        let peer = self.peer()?;
        if !self.shared.offers(&peer).prompts {
            return Ok(Listing::default());
        }
        let (values, mut skipped) = self.shared.list_pages(&peer, "prompts/list", "prompts").await?;
        let mut listed = context::prompts(&values);
        listed.skipped.append(&mut skipped);
        self.shared.lock().context.prompts = Some(listed.clone());
        Ok(listed)
    }

    /// Its resources (listed when first asked and after the server said they changed).
    pub async fn resources(&self) -> Result<Listing<ResourceInfo>, ContextError> {
        if let Some(cached) = self.shared.lock().context.resources.clone() {
            return Ok(cached);
        }
        let peer = self.peer()?;
        if !self.shared.offers(&peer).resources {
            return Ok(Listing::default());
        }
        let (values, mut skipped) = self.shared.list_pages(&peer, "resources/list", "resources").await?;
        let mut listed = context::resources(&values);
        listed.skipped.append(&mut skipped);
        self.shared.lock().context.resources = Some(listed.clone());
        Ok(listed)
    }

    /// Its resource templates (listed when first asked and after its resources changed).
    pub async fn resource_templates(&self) -> Result<Listing<ResourceTemplateInfo>, ContextError> {
        if let Some(cached) = self.shared.lock().context.templates.clone() {
            return Ok(cached);
        }
        let peer = self.peer()?;
        if !self.shared.offers(&peer).resources {
            return Ok(Listing::default());
        }
        let (values, mut skipped) =
            self.shared.list_pages(&peer, "resources/templates/list", "resourceTemplates").await?;
        let mut listed = context::templates(&values);
        listed.skipped.append(&mut skipped);
        self.shared.lock().context.templates = Some(listed.clone());
        Ok(listed)
    }

    /// The prompt `name` with `arguments`. A server that refuses them (a missing or invalid
    /// argument, no such prompt) gives an error naming the server and the prompt.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<PromptMessages, ContextError> {
        let peer = self.peer_offering("prompts", |o| o.prompts)?;
        let server = &self.shared.name;
        let result =
            self.shared.request(&peer, "prompts/get", json!({"name": name, "arguments": arguments})).await.map_err(
                |e| match e {
                    ContextError::Refused(why) => ContextError::Refused(format!(
                        "the MCP server '{server}' refused the prompt '{name}' with these arguments: {why}"
                    )),
                    other => other,
                },
            )?;
        context::prompt_messages(&result)
            .map_err(|why| ContextError::Invalid(format!("the prompt '{name}' of the MCP server '{server}': {why}")))
    }

    /// Reads the resource `uri`: its contents, at most [`context::MAX_RESOURCE_BYTES`] in all
    /// (a larger one is refused; a line over the stdio limit never reaches memory whole). Reading
    /// a subscribed resource clears its updates.
    pub async fn read_resource(&self, uri: &str) -> Result<Vec<ResourceContents>, ContextError> {
        let peer = self.peer_offering("resources", |o| o.resources)?;
        let server = &self.shared.name;
        let result = self.shared.request(&peer, "resources/read", json!({"uri": uri})).await.map_err(|e| match e {
            ContextError::Refused(why) => {
                ContextError::Refused(format!("the MCP server '{server}' could not read {uri}: {why}"))
            }
            other => other,
        })?;
        let read = context::contents(&result)
            .map_err(|why| ContextError::Invalid(format!("the MCP server '{server}': {why}")))?;
        self.shared.lock().context.updated.remove(uri);
        Ok(read)
    }

    /// Reads a resource of a template: `values` fill its variables (RFC 6570 level 1); an
    /// expansion whose scheme is not the template's is refused before anything is sent.
    pub async fn read_template(
        &self,
        uri_template: &str,
        values: &BTreeMap<String, String>,
    ) -> Result<(String, Vec<ResourceContents>), ContextError> {
        let uri = expand(uri_template, values)?;
        let read = self.read_resource(&uri).await?;
        Ok((uri, read))
    }

    /// The server's suggestions for `argument` (its value so far `value`, the other arguments
    /// filled in `context`). A server that offers no completion suggests nothing.
    pub async fn complete(
        &self,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<Completion, ContextError> {
        let peer = self.peer()?;
        if !self.shared.offers(&peer).completions {
            return Ok(Completion::default());
        }
        let reference = match reference {
            CompletionRef::Prompt { name } => json!({"type": "ref/prompt", "name": name}),
            CompletionRef::Resource { uri } => json!({"type": "ref/resource", "uri": uri}),
        };
        let mut params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
        if !arguments.is_empty() {
            params["context"] = json!({"arguments": arguments});
        }
        let result = self.shared.request(&peer, "completion/complete", params).await?;
        Ok(context::completion(&result))
    }

    /// Subscribes to `uri`: the server's `notifications/resources/updated` for it are counted
    /// ([`McpServer::resource_updates`]) until it is read again.
    pub async fn subscribe(&self, uri: &str) -> Result<(), ContextError> {
        let peer = self.peer_offering("resource subscriptions", |o| o.subscribe)?;
        {
            let state = self.shared.lock();
            if state.context.subscribed.contains(uri) {
                return Ok(());
            }
            if state.context.subscribed.len() >= MAX_SUBSCRIPTIONS {
                return Err(ContextError::Invalid(format!(
                    "the MCP server '{}' has {MAX_SUBSCRIPTIONS} subscribed resources already",
                    self.shared.name
                )));
            }
        }
        // Subscribed before asking: an update the server sends right after its answer counts.
        self.shared.lock().context.subscribed.insert(uri.to_owned());
        let asked = self.shared.request(&peer, "resources/subscribe", json!({"uri": uri})).await;
        if asked.is_err() {
            let mut state = self.shared.lock();
            state.context.subscribed.remove(uri);
            state.context.updated.remove(uri);
        }
        asked.map(drop)
    }

    /// Ends the subscription to `uri` (and forgets its updates).
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ContextError> {
        let was = {
            let mut state = self.shared.lock();
            state.context.updated.remove(uri);
            state.context.subscribed.remove(uri)
        };
        if was && let Ok(peer) = self.peer() {
            self.shared.request(&peer, "resources/unsubscribe", json!({"uri": uri})).await?;
        }
        Ok(())
    }

    /// The subscribed resources.
    pub fn subscriptions(&self) -> Vec<String> {
        self.shared.lock().context.subscribed.iter().cloned().collect()
    }

    /// The subscribed resources the server said changed since they were last read.
    pub fn resource_updates(&self) -> Vec<ResourceUpdate> {
        let state = self.shared.lock();
        state.context.updated.iter().map(|(uri, n)| ResourceUpdate { uri: uri.clone(), updates: *n }).collect()
    }

    /// Asks the server to send log notifications at `level` and above (they go to its log,
    /// beside its stderr); kept and sent again after a reconnect.
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), ContextError> {
        let peer = self.peer_offering("log notifications", |o| o.logging)?;
        self.shared.request(&peer, "logging/setLevel", json!({"level": level.as_str()})).await?;
        self.shared.lock().context.log_level = Some(level);
        Ok(())
    }

    /// The log level chosen, if one was.
    pub fn log_level(&self) -> Option<LogLevel> {
        self.shared.lock().context.log_level
    }
}

/// `uri_template` expanded with `values`, or why not.
pub fn expand(uri_template: &str, values: &BTreeMap<String, String>) -> Result<String, ContextError> {
    crate::template::Template::parse(uri_template)
        .and_then(|t| t.expand(values))
        .map_err(|e| ContextError::Invalid(e.to_string()))
}
