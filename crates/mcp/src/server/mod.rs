//! One MCP server as a tool source: its process or connection, its lifecycle (start, restart
//! with backoff, stop), its tools, and the calls to them.
//!
//! A supervisor task owns the rmcp service. It connects (initialize under a timeout), lists the
//! tools (every page), offers the approved ones and then waits: for the person to stop it, for a
//! `tools/list_changed` (it lists again), or for the server to die (it reconnects after a delay
//! that doubles up to a minute, and gives up after [`Options::max_restarts`] failures in a row).
//! Calls go straight to the current connection's peer, so a slow call never blocks the
//! supervisor and a dead server fails its calls at once with a clear error.
//!
//! The folder, bottom up: `options` (timings, limits, where approvals are kept), `detail` (what
//! Settings shows), `stderr` (a server's bounded stderr tail), `stdio` (a stdio server's process
//! and its transport, whose messages are bounded), `asking` (what a server asks of the person
//! during a call, bounded, and the calls in flight), `handler` (the rmcp client
//! handler and a live connection), `shared` (the state every part reads, and its status),
//! `call` (one tool call), `connect` (starting a process or opening an endpoint), `context`
//! (prompts, resources, templates, completion, subscriptions, the log level), `list`
//! (listing, approving and offering tools), `lifecycle` (the supervisor: start, restart with
//! backoff, stop), and here [`McpServer`], the public face. Each uses only those before it.

mod asking;
mod call;
mod connect;
mod context;
mod detail;
mod handler;
mod lifecycle;
mod list;
mod options;
mod shared;
mod stderr;
mod stdio;

pub use asking::{ELICITATION_BURST, MAX_WAITING, SAMPLING_BURST};
pub use connect::MAX_INSTRUCTIONS;
pub use context::{ContextError, MAX_RAW_LISTING, MAX_SUBSCRIPTIONS, Offers, ResourceUpdate, expand};
pub use detail::{HeldTool, OfferedTool, ServerDetail};
pub use list::{MAX_LIST_PAGES, MAX_TOOLS};
pub use options::{Approvals, Options};
pub use stderr::{STDERR_LINE_MAX, STDERR_LINES};
pub use stdio::MAX_MESSAGE_BYTES;

use crate::config::ServerConfig;
use futures::future::BoxFuture;
use shared::{Shared, State};
use std::sync::{Arc, Mutex};
use switchboard_core::{OnChange, Secrets, Source, SourceStatus, Tool};

/// An MCP server as a [`Source`].
pub struct McpServer {
    shared: Arc<Shared>,
}

impl McpServer {
    /// A server from its config entry. `approved` says whether the person approved what it runs
    /// (its command line); a server that is not approved waits in
    /// [`SourceStatus::NeedsApproval`] until [`McpServer::approve`].
    pub fn new(
        name: &str,
        config: ServerConfig,
        options: Options,
        secrets: Arc<dyn Secrets>,
        approvals: Arc<dyn Approvals>,
        approved: bool,
    ) -> McpServer {
        let stderr: Arc<std::sync::Mutex<std::collections::VecDeque<String>>> = Arc::default();
        let asking = Arc::new(asking::Asking::new(name, options.asks, Arc::clone(&stderr)));
        *asking.roots.lock().unwrap_or_else(|p| p.into_inner()) = config.roots.clone();
        let shared = Arc::new_cyclic(|weak| Shared {
            name: name.to_owned(),
            id: format!("mcp:{name}"),
            config,
            options,
            secrets,
            approvals,
            state: Mutex::new(State { approved, ..State::default() }),
            stderr,
            asking,
            lifecycle: tokio::sync::Mutex::new(()),
            weak: weak.clone(),
        });
        McpServer { shared }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// Its config entry.
    pub fn config(&self) -> &ServerConfig {
        &self.shared.config
    }

    /// The person approved what it runs: it may start now ([`Source::start`]).
    pub fn approve(&self) {
        self.shared.lock().approved = true;
    }

    /// Stops it (if running) and starts it again, resetting the restart count.
    pub async fn restart(&self) {
        let on_change = self.shared.lock().on_change.clone();
        let on_change = on_change.unwrap_or_else(|| Arc::new(|| {}));
        self.shared.lock().restarts = 0;
        self.shared.start(on_change).await;
    }

    /// Signs in to a remote server that asks for it (the person finishes in `browser`), keeps
    /// the tokens and connects again.
    pub async fn sign_in(&self, browser: &dyn crate::oauth::Browser) -> Result<(), String> {
        let url = self.shared.config.url.clone().ok_or("only a remote server can sign in")?;
        let vault = self.shared.options.tokens.clone().ok_or("there is no key store for sign-in tokens")?;
        let key = crate::oauth::token_key(&self.shared.name);
        let challenge = self.shared.lock().challenge.clone();
        let reach = crate::net::Reach::new(&url, &self.shared.options.network);
        crate::oauth::sign_in(&url, vault, &key, browser, &reach, challenge, crate::oauth::SIGN_IN_WAIT)
            .await
            .map_err(|e| reach.refusal().map(|r| format!("sign-in could not start: {r}")).unwrap_or(e))?;
        self.restart().await;
        Ok(())
    }

    /// Forgets the server's sign-in tokens and connects again (it will ask to sign in).
    pub async fn sign_out(&self) {
        if let Some(vault) = &self.shared.options.tokens {
            vault.clear(&crate::oauth::token_key(&self.shared.name));
        }
        self.restart().await;
    }

    /// Approves the held-back definitions the person was shown (`shown`, as [`McpServer::detail`]
    /// gave them) and offers those tools. A definition that changed again since is not approved.
    pub fn approve_tools(&self, shown: &[HeldTool]) -> Result<(), String> {
        let mut approved = self.shared.approvals.approved_tools(&self.shared.name)?;
        {
            let state = self.shared.lock();
            for l in &state.listed {
                if shown.iter().any(|h| h.name == l.def.name && h.fingerprint == l.fingerprint) {
                    approved.insert(l.remote.clone(), l.fingerprint.clone());
                }
            }
        }
        self.shared.approvals.record_tools(&self.shared.name, &approved)?;
        self.shared.offer();
        Ok(())
    }

    /// What Settings shows.
    pub fn detail(&self) -> ServerDetail {
        self.detail_linted(&|_| false)
    }

    /// What Settings shows, each tool's lint findings counting a mention of a name for which
    /// `other_tool` is true as naming another source's tool.
    pub fn detail_linted(&self, other_tool: &dyn Fn(&str) -> bool) -> ServerDetail {
        let state = self.shared.lock();
        let lint = |name: &str| {
            let listed = state.listed.iter().find(|l| l.def.name == name);
            listed.map(|l| switchboard_core::lint::check(&l.def, other_tool)).unwrap_or_default()
        };
        ServerDetail {
            status: self.shared.status_of(&state),
            tools: state
                .listed
                .iter()
                .filter(|l| state.offered.iter().any(|t| t.def().name == l.def.name))
                .map(|l| OfferedTool {
                    name: l.def.name.clone(),
                    remote: l.remote.clone(),
                    annotations: l.annotations.clone(),
                    findings: lint(&l.def.name),
                })
                .collect(),
            skipped: state.skipped.clone(),
            held: state.held.iter().map(|h| HeldTool { findings: lint(&h.name), ..h.clone() }).collect(),
            stderr: self.stderr(),
            server_info: state.server_info.clone(),
            restarts: state.restarts,
            offers: state.conn.as_ref().map(|c| self.shared.offers(&c.peer)).unwrap_or_default(),
            log_level: state.context.log_level,
            ..ServerDetail::idle(&self.shared.name, &self.shared.config)
        }
    }

    /// The process id of a running stdio server (it leads its own process group).
    pub fn pid(&self) -> Option<u32> {
        let state = self.shared.lock();
        state.conn.as_ref().and(state.pid)
    }

    /// Sets the folders the server is told of (`roots/list`), telling a connected server that
    /// declared interest (`notifications/roots/list_changed`) when they changed.
    pub fn set_roots(&self, roots: Vec<std::path::PathBuf>) {
        {
            let mut now = self.shared.asking.roots.lock().unwrap_or_else(|p| p.into_inner());
            if *now == roots {
                return;
            }
            *now = roots;
        }
        let conn = self.shared.lock().conn.clone();
        if let (Some(conn), true, Ok(runtime)) =
            (conn, self.shared.asking.declared, tokio::runtime::Handle::try_current())
        {
            runtime.spawn(async move {
                let sent =
                    tokio::time::timeout(std::time::Duration::from_secs(5), conn.peer.notify_roots_list_changed())
                        .await;
                if !matches!(sent, Ok(Ok(()))) {
                    tracing::debug!("roots/list_changed was not delivered");
                }
            });
        }
    }

    /// The folders the server is told of.
    pub fn roots(&self) -> Vec<std::path::PathBuf> {
        self.shared.asking.roots.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many tool calls are waiting for the server's answer.
    pub fn calls_running(&self) -> usize {
        self.shared.lock().calls
    }

    /// Stops it (see [`Source::stop`]); a call it cuts off fails with `why` (what the person
    /// did, and what to do), not with a transport error.
    pub async fn stop_because(&self, why: String) {
        self.shared.lock().ended = Some(why);
        self.shared.stop().await;
    }

    /// The last lines of its stderr, oldest first.
    pub fn stderr(&self) -> Vec<String> {
        self.shared.stderr.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect()
    }
}

impl Source for McpServer {
    fn id(&self) -> &str {
        &self.shared.id
    }

    fn status(&self) -> SourceStatus {
        let state = self.shared.lock();
        self.shared.status_of(&state)
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.shared.lock().offered.clone()
    }

    fn start(&self, on_change: OnChange) -> BoxFuture<'_, ()> {
        Box::pin(self.shared.start(on_change))
    }

    fn refresh(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let conn = self.shared.lock().conn.clone();
            if let Some(conn) = conn {
                self.shared.list(&conn.peer).await;
            }
        })
    }

    fn stop(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shared.stop())
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        if let Some(stop) = self.shared.lock().stop.take() {
            stop.cancel();
        }
    }
}
