//! One MCP server as a tool source: its process or connection, its lifecycle (start, restart
//! with backoff, stop), its tools, and the calls to them.
//!
//! A supervisor task owns the rmcp service. It connects (initialize under a timeout), lists the
//! tools (every page), offers the approved ones and then waits: for the person to stop it, for a
//! `tools/list_changed` (it lists again), or for the server to die (it reconnects after a delay
//! that doubles up to a minute, and gives up after [`Options::max_restarts`] failures in a row).
//! Calls go straight to the current connection's peer, so a slow call never blocks the
//! supervisor and a dead server fails its calls at once with a clear error.

use crate::config::{ServerConfig, Spec, secret_ref};
use crate::convert::{self, Listed};
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam, ClientCapabilities,
    ClientNotification, ClientRequest, Implementation, InitializeRequestParams, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerResult,
};
use rmcp::service::{NotificationContext, Peer, PeerRequestOptions, RoleClient, RunningService, ServiceExt as _};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use switchboard_core::{OnChange, Secrets, Source, SourceStatus, Tool, ToolContext, ToolDef, ToolError, ToolOutput};
use tokio::io::AsyncReadExt as _;
use tokio_util::sync::CancellationToken;

/// How many lines of a server's stderr are kept (Settings and `mcp logs` show them).
pub const STDERR_LINES: usize = 200;

/// The longest stderr line kept; the rest of a longer line is dropped.
pub const STDERR_LINE_MAX: usize = 2048;

/// The longest `instructions` text offered to the model.
pub const MAX_INSTRUCTIONS: usize = 8 * 1024;

/// The most `tools/list` pages read (a server that repeats its cursor ends here).
pub const MAX_LIST_PAGES: usize = 50;

/// The most tools taken from one server.
pub const MAX_TOOLS: usize = 500;

/// How long a connection must have lived for a crash to count as a new first failure (the
/// restart delay and count start over); a server that dies sooner keeps backing off.
const STABLE: Duration = Duration::from_secs(60);

/// Timings and limits of a server's lifecycle.
#[derive(Clone)]
pub struct Options {
    /// How long `initialize` may take.
    pub init_timeout: Duration,
    /// How long one `tools/list` page may take.
    pub list_timeout: Duration,
    /// The first delay before a restart; it doubles after each failure.
    pub restart_delay: Duration,
    /// The longest delay between restarts.
    pub restart_delay_max: Duration,
    /// Failures in a row after which the server is left failed until restarted by hand.
    pub max_restarts: u32,
    /// Where a stdio server runs when its entry names no `cwd`.
    pub default_cwd: Option<PathBuf>,
    /// Where a remote server's sign-in tokens are kept; without it no server can sign in.
    pub tokens: Option<Arc<dyn crate::oauth::TokenVault>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            init_timeout: Duration::from_secs(30),
            list_timeout: Duration::from_secs(30),
            restart_delay: Duration::from_secs(1),
            restart_delay_max: Duration::from_secs(60),
            max_restarts: 5,
            default_cwd: None,
            tokens: None,
        }
    }
}

/// Where a server's approved tool definitions are remembered (the service keeps them in its
/// database). A definition is approved by its fingerprint; a tool whose definition changed
/// since is held back until approved again.
pub trait Approvals: Send + Sync {
    /// The approved fingerprints by tool name (empty when the server's tools were never seen);
    /// `Err` when they cannot be read, and then no tool is offered.
    fn approved_tools(&self, server: &str) -> Result<BTreeMap<String, String>, String>;
    /// Records `fingerprints` as this server's approved definitions (replacing what was there).
    fn record_tools(&self, server: &str, fingerprints: &BTreeMap<String, String>) -> Result<(), String>;
}

/// A tool held back: its definition changed (or it is new) since the person approved the
/// server's tools.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldTool {
    /// The registry name (`server__tool`).
    pub name: String,
    /// Why it is held, in words.
    pub why: String,
    /// Its description now, for the person to read before approving.
    pub description: String,
    /// The fingerprint of the definition shown; approving it approves exactly that definition.
    pub fingerprint: String,
}

/// What Settings shows of a server beyond the catalog's state.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerDetail {
    /// The server's name.
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The command line (stdio) or the URL (http), secrets as references.
    pub target: String,
    /// Where it is in its life.
    pub status: SourceStatus,
    /// Tools offered, by registry name, with the server's annotations when it gave any.
    pub tools: Vec<OfferedTool>,
    /// Tools the server listed that could not be offered, with the reason.
    pub skipped: Vec<String>,
    /// Tools held back until approved again.
    pub held: Vec<HeldTool>,
    /// The last lines of its stderr.
    pub stderr: Vec<String>,
    /// The server's name and version as it introduced itself.
    pub server_info: Option<String>,
    /// Restarts after failures since it was last started by hand.
    pub restarts: u32,
}

impl ServerDetail {
    /// A server that is not running (disabled, or not started yet).
    pub fn idle(name: &str, config: &ServerConfig) -> ServerDetail {
        let (transport, target) = match (config.command_line(), &config.url) {
            (Some(line), _) => ("stdio", line),
            (None, Some(url)) => ("http", url.clone()),
            (None, None) => ("stdio", String::new()),
        };
        ServerDetail {
            name: name.to_owned(),
            transport: transport.to_owned(),
            target,
            status: SourceStatus::Stopped,
            tools: Vec::new(),
            skipped: Vec::new(),
            held: Vec::new(),
            stderr: Vec::new(),
            server_info: None,
            restarts: 0,
        }
    }
}

/// A tool a server offers, as Settings lists it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferedTool {
    /// The registry name.
    pub name: String,
    /// The server's own name for it.
    pub remote: String,
    /// The server's hints (`readOnlyHint`, `destructiveHint`, ...); shown, never trusted.
    #[cfg_attr(feature = "ts", ts(type = "Record<string, unknown> | null"))]
    pub annotations: Option<serde_json::Value>,
}

/// An MCP server as a [`Source`].
pub struct McpServer {
    shared: Arc<Shared>,
}

struct Shared {
    name: String,
    id: String,
    config: ServerConfig,
    options: Options,
    secrets: Arc<dyn Secrets>,
    approvals: Arc<dyn Approvals>,
    state: Mutex<State>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Held while starting or stopping, so a restart never overlaps another.
    lifecycle: tokio::sync::Mutex<()>,
    weak: Weak<Shared>,
}

#[derive(Default)]
struct State {
    status: Option<SourceStatus>,
    /// Whether the person approved what it runs; a server that is not never starts.
    approved: bool,
    on_change: Option<OnChange>,
    /// Cancels the running supervisor.
    stop: Option<CancellationToken>,
    /// The running supervisor, awaited before another starts: never two connections at once.
    supervisor: Option<tokio::task::JoinHandle<()>>,
    conn: Option<Arc<Conn>>,
    listed: Vec<Listed>,
    skipped: Vec<String>,
    offered: Vec<Arc<dyn Tool>>,
    held: Vec<HeldTool>,
    server_info: Option<String>,
    /// The server's `instructions`, as the prompt snippet of each of its tools.
    prompt: Option<String>,
    restarts: u32,
    /// The process id of a running stdio server.
    pid: Option<u32>,
    /// The `WWW-Authenticate` header of the last 401, for the next sign-in.
    challenge: Option<String>,
}

/// One live connection.
struct Conn {
    peer: Peer<RoleClient>,
    progress: Progress,
}

/// Calls waiting for progress, by progress token.
#[derive(Clone, Default)]
struct Progress(Arc<Mutex<HashMap<String, ToolContext>>>);

impl Progress {
    fn key(token: &impl serde::Serialize) -> String {
        serde_json::to_string(token).unwrap_or_default()
    }
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ToolContext>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The client side's handler: progress to the calling tool card, list changes to the supervisor.
struct Handler {
    progress: Progress,
    list_changed: Arc<tokio::sync::Notify>,
    server: String,
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
        let shared = Arc::new_cyclic(|weak| Shared {
            name: name.to_owned(),
            id: format!("mcp:{name}"),
            config,
            options,
            secrets,
            approvals,
            state: Mutex::new(State { approved, ..State::default() }),
            stderr: Arc::default(),
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
        crate::oauth::sign_in(&url, vault, &key, browser, http_client()?, challenge, crate::oauth::SIGN_IN_WAIT)
            .await?;
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
        let state = self.shared.lock();
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
                })
                .collect(),
            skipped: state.skipped.clone(),
            held: state.held.clone(),
            stderr: self.stderr(),
            server_info: state.server_info.clone(),
            restarts: state.restarts,
            ..ServerDetail::idle(&self.shared.name, &self.shared.config)
        }
    }

    /// The process id of a running stdio server (it leads its own process group).
    pub fn pid(&self) -> Option<u32> {
        let state = self.shared.lock();
        state.conn.as_ref().and(state.pid)
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

/// Why a connection could not be made.
struct ConnectError(String);

/// The marker of a connection refused for want of a sign-in.
const SIGN_IN: &str = "the server requires signing in";

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn status_of(&self, state: &State) -> SourceStatus {
        if !state.approved && self.config.command.is_some() {
            let keys = self.config.secret_refs();
            let keys = match keys.as_slice() {
                [] => String::new(),
                [key] => format!("\nIt will receive the key '{key}' from your key store."),
                keys => format!(
                    "\nIt will receive the keys {} from your key store.",
                    keys.iter().map(|k| format!("'{k}'")).collect::<Vec<_>>().join(", ")
                ),
            };
            return SourceStatus::NeedsApproval {
                reason: format!(
                    "Switchboard has not run this command before. Review it and allow it to run:\n{}{keys}",
                    self.config.command_line().unwrap_or_default()
                ),
            };
        }
        state.status.clone().unwrap_or(SourceStatus::Stopped)
    }

    fn set_status(&self, status: SourceStatus) {
        let on_change = {
            let mut state = self.lock();
            state.status = Some(status);
            state.on_change.clone()
        };
        if let Some(f) = on_change {
            f();
        }
    }

    fn changed(&self) {
        let on_change = self.lock().on_change.clone();
        if let Some(f) = on_change {
            f();
        }
    }

    /// Starts the supervisor (after the previous one ended); returns once the first attempt is
    /// ready or has failed.
    async fn start(&self, on_change: OnChange) {
        let _one_at_a_time = self.lifecycle.lock().await;
        self.halt().await;
        let stop = CancellationToken::new();
        {
            let mut state = self.lock();
            state.on_change = Some(on_change);
            if !state.approved && self.config.command.is_some() {
                return;
            }
            state.stop = Some(stop.clone());
            state.status = Some(SourceStatus::Starting);
        }
        self.changed();
        let (first_tx, first_rx) = tokio::sync::oneshot::channel();
        let Some(me) = self.weak.upgrade() else { return };
        let handle = tokio::spawn(async move { me.supervise(stop, first_tx).await });
        self.lock().supervisor = Some(handle);
        let _ = first_rx.await;
    }

    /// Ends the supervisor, if one runs, and waits for it: it closes the connection (stdin,
    /// then SIGTERM, then kill, within the transport's grace periods); one that takes longer
    /// than ten seconds is aborted, which kills the process.
    async fn halt(&self) {
        let (stop, handle) = {
            let mut state = self.lock();
            (state.stop.take(), state.supervisor.take())
        };
        if let Some(stop) = stop {
            stop.cancel();
        }
        if let Some(mut handle) = handle
            && tokio::time::timeout(Duration::from_secs(10), &mut handle).await.is_err()
        {
            handle.abort();
        }
        let mut state = self.lock();
        state.conn = None;
        state.offered.clear();
    }

    async fn stop(&self) {
        {
            let _one_at_a_time = self.lifecycle.lock().await;
            self.halt().await;
            self.lock().status = Some(SourceStatus::Stopped);
        }
        self.changed();
    }

    async fn supervise(self: Arc<Self>, stop: CancellationToken, first: tokio::sync::oneshot::Sender<()>) {
        let mut first = Some(first);
        let mut delay = self.options.restart_delay;
        loop {
            let list_changed = Arc::new(tokio::sync::Notify::new());
            let progress = Progress::default();
            let connected = tokio::select! {
                c = self.connect(&list_changed, &progress) => c,
                () = stop.cancelled() => break,
            };
            let running = match connected {
                Ok(running) => running,
                Err(ConnectError(reason)) if reason.contains(SIGN_IN) => {
                    self.set_status(SourceStatus::NeedsSignIn { reason });
                    if let Some(tx) = first.take() {
                        let _ = tx.send(());
                    }
                    break;
                }
                Err(ConnectError(reason)) => {
                    self.fail(&reason);
                    if let Some(tx) = first.take() {
                        let _ = tx.send(());
                    }
                    if !self.wait_to_restart(&stop, &mut delay).await {
                        break;
                    }
                    continue;
                }
            };
            let connected_at = tokio::time::Instant::now();
            let peer = running.peer().clone();
            self.lock().conn = Some(Arc::new(Conn { peer: peer.clone(), progress }));
            let mut listed = self.list(&peer).await;
            if let Some(tx) = first.take() {
                let _ = tx.send(());
            }
            let ct = running.cancellation_token();
            let mut waiting = std::pin::pin!(running.waiting());
            // A server whose tools cannot be listed is of no use: it is ended and restarted.
            let crashed = loop {
                if !listed {
                    ct.cancel();
                    let _ = waiting.as_mut().await;
                    break true;
                }
                tokio::select! {
                    _ = &mut waiting => break true,
                    () = list_changed.notified() => listed = self.list(&peer).await,
                    () = stop.cancelled() => {
                        ct.cancel();
                        let _ = waiting.as_mut().await;
                        break false;
                    }
                }
            };
            {
                let mut state = self.lock();
                state.conn = None;
                state.offered.clear();
            }
            if !crashed {
                break;
            }
            if connected_at.elapsed() >= STABLE {
                delay = self.options.restart_delay;
                self.lock().restarts = 0;
            }
            if listed {
                let tail = self.stderr_tail(5);
                self.fail(&format!("the server stopped unexpectedly{tail}"));
            }
            if !self.wait_to_restart(&stop, &mut delay).await {
                break;
            }
        }
        self.lock().conn = None;
        if let Some(tx) = first.take() {
            let _ = tx.send(());
        }
    }

    /// Marks the server failed, keeping `reason` in words.
    fn fail(&self, reason: &str) {
        tracing::warn!(server = %self.name, "{reason}");
        {
            let mut state = self.lock();
            state.offered.clear();
            state.conn = None;
        }
        self.set_status(SourceStatus::Failed { reason: reason.to_owned() });
    }

    /// Waits before the next attempt (doubling the delay); `false` when it should not restart
    /// (stopped, or too many failures in a row).
    async fn wait_to_restart(&self, stop: &CancellationToken, delay: &mut Duration) -> bool {
        let restarts = {
            let mut state = self.lock();
            state.restarts += 1;
            state.restarts
        };
        if restarts > self.options.max_restarts {
            let reason = match self.lock().status.clone() {
                Some(SourceStatus::Failed { reason }) => reason,
                _ => String::new(),
            };
            self.set_status(SourceStatus::Failed {
                reason: format!("{reason}\nGave up after {} attempts; restart it when it is fixed.", restarts),
            });
            return false;
        }
        tokio::select! {
            () = tokio::time::sleep(*delay) => {}
            () = stop.cancelled() => return false,
        }
        *delay = (*delay * 2).min(self.options.restart_delay_max);
        self.set_status(SourceStatus::Starting);
        true
    }

    fn stderr_tail(&self, lines: usize) -> String {
        let stderr = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        if stderr.is_empty() {
            return String::new();
        }
        let tail: Vec<&str> = stderr.iter().skip(stderr.len().saturating_sub(lines)).map(String::as_str).collect();
        format!("; its last output:\n{}", tail.join("\n"))
    }

    /// A value with its secret reference resolved.
    fn resolve(&self, value: &str) -> Result<String, ConnectError> {
        let Some(name) = secret_ref(value) else { return Ok(value.to_owned()) };
        match self.secrets.get(name) {
            Ok(Some(secret)) => Ok(secret.expose().to_owned()),
            Ok(None) => Err(ConnectError(format!(
                "the key '{name}' it needs is not set (Settings → Keys, or `switchboard keys set {name}`)"
            ))),
            Err(e) => Err(ConnectError(format!("the key '{name}' could not be read: {e}"))),
        }
    }

    async fn connect(
        &self,
        list_changed: &Arc<tokio::sync::Notify>,
        progress: &Progress,
    ) -> Result<RunningService<RoleClient, Handler>, ConnectError> {
        let handler =
            Handler { progress: progress.clone(), list_changed: Arc::clone(list_changed), server: self.name.clone() };
        let spec = self.config.spec(&self.name).map_err(|e| ConnectError(e.to_string()))?;
        let timeout = self.options.init_timeout;
        let timed_out = || {
            ConnectError(format!("it did not answer initialize within {} s{}", timeout.as_secs(), self.stderr_tail(5)))
        };
        match spec {
            Spec::Stdio { command, args, env, cwd } => {
                // The minimal environment, plus exactly the variables the entry names: never
                // the app's own (its provider keys among them).
                let mut cmd = switchboard_process::command(&command);
                cmd.args(&args);
                for (k, v) in &env {
                    cmd.env(k, self.resolve(v)?);
                }
                if let Some(dir) = cwd.or_else(|| self.options.default_cwd.clone()) {
                    cmd.current_dir(dir);
                }
                let (transport, stderr) = TokioChildProcess::builder(switchboard_process::group(cmd))
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .map_err(|e| ConnectError(spawn_error(&command, &e)))?;
                self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clear();
                self.lock().pid = transport.id();
                let reader = stderr.map(|e| tokio::spawn(read_stderr(e, Arc::clone(&self.stderr), self.name.clone())));
                let served = tokio::time::timeout(timeout, handler.serve(transport)).await.map_err(|_| timed_out())?;
                let running = match served {
                    Ok(running) => running,
                    Err(e) => {
                        // A server that exits at once usually says why on stderr: read it to the end.
                        if let Some(reader) = reader {
                            let _ = tokio::time::timeout(Duration::from_millis(500), reader).await;
                        }
                        return Err(ConnectError(format!(
                            "it did not complete initialize: {e}{}",
                            self.stderr_tail(5)
                        )));
                    }
                };
                self.introduced(&running);
                Ok(running)
            }
            Spec::Http { url, headers } => {
                let mut custom = HashMap::new();
                for (k, v) in &headers {
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|_| ConnectError(format!("the header name '{k}' is not valid")))?;
                    let mut value = http::HeaderValue::from_str(&self.resolve(v)?)
                        .map_err(|_| ConnectError(format!("the value of header '{k}' is not valid in a header")))?;
                    value.set_sensitive(secret_ref(v).is_some());
                    custom.insert(name, value);
                }
                let client = http_client().map_err(ConnectError)?;
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
                let signed_in = match &self.options.tokens {
                    Some(vault) => {
                        let key = crate::oauth::token_key(&self.name);
                        crate::oauth::authorized_client(&url, Arc::clone(vault), &key, client.clone())
                            .await
                            .map_err(ConnectError)?
                    }
                    None => None,
                };
                let served = match signed_in {
                    Some(auth) => {
                        let transport = StreamableHttpClientTransport::with_client(auth, config);
                        tokio::time::timeout(timeout, handler.serve(transport)).await
                    }
                    None => {
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        tokio::time::timeout(timeout, handler.serve(transport)).await
                    }
                };
                let running = served.map_err(|_| timed_out())?.map_err(|e| {
                    // A 401's WWW-Authenticate header seeds the sign-in's discovery and scopes.
                    self.lock().challenge = auth_challenge(&e);
                    ConnectError(format!("{url}: {}", plain(&e.to_string())))
                })?;
                self.introduced(&running);
                Ok(running)
            }
        }
    }

    /// Keeps what the server said about itself at initialize.
    fn introduced(&self, running: &RunningService<RoleClient, Handler>) {
        let info = running.peer_info().and_then(|i| serde_json::to_value(&*i).ok()).unwrap_or_default();
        let server_info = info.get("serverInfo").map(|s| {
            let name = s.get("name").and_then(|v| v.as_str()).unwrap_or("?");
            match s.get("version").and_then(|v| v.as_str()) {
                Some(version) => format!("{name} {version}"),
                None => name.to_owned(),
            }
        });
        let instructions = info.get("instructions").and_then(|v| v.as_str()).map(str::trim).filter(|s| !s.is_empty());
        let prompt = instructions.map(|text| {
            let text: String = text.chars().take(MAX_INSTRUCTIONS).collect();
            format!("Instructions from the MCP server '{}' (its tools are named {}__*):\n{text}", self.name, self.name)
        });
        let mut state = self.lock();
        state.server_info = server_info;
        state.listed.clear();
        state.skipped.clear();
        state.prompt = prompt;
    }

    /// Lists every page of tools (at most [`MAX_LIST_PAGES`] pages and [`MAX_TOOLS`] tools) and
    /// offers the approved ones; `false` (after marking the server failed) when it could not.
    async fn list(&self, peer: &Peer<RoleClient>) -> bool {
        let mut values: Vec<serde_json::Value> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut skipped = Vec::new();
        for page in 0.. {
            if page == MAX_LIST_PAGES {
                skipped.push(format!("the list went on past {MAX_LIST_PAGES} pages; the rest was not read"));
                break;
            }
            let params = cursor.take().map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let result = match tokio::time::timeout(self.options.list_timeout, peer.list_tools(params)).await {
                Ok(Ok(result)) => serde_json::to_value(&result).unwrap_or_default(),
                Ok(Err(e)) => {
                    self.fail(&format!("tools/list failed: {}", plain(&e.to_string())));
                    return false;
                }
                Err(_) => {
                    self.fail("tools/list did not answer in time");
                    return false;
                }
            };
            if let Some(tools) = result.get("tools").and_then(serde_json::Value::as_array) {
                values.extend(tools.iter().cloned());
            }
            if values.len() > MAX_TOOLS {
                skipped.push(format!("more than {MAX_TOOLS} tools; the rest were left out"));
                values.truncate(MAX_TOOLS);
                break;
            }
            match result.get("nextCursor").and_then(serde_json::Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => break,
            }
        }
        let (listed, mut left_out) = convert::tools(&self.name, &values);
        left_out.append(&mut skipped);
        for reason in &left_out {
            tracing::warn!(server = %self.name, "tool skipped: {reason}");
        }
        {
            let mut state = self.lock();
            state.listed = listed;
            state.skipped = left_out;
        }
        self.offer();
        true
    }

    /// Offers the listed tools whose definitions are approved; holds back the rest.
    fn offer(&self) {
        let listed = self.lock().listed.clone();
        // Approving a server approves its tools as it lists them; a tool it adds later is
        // approved as first seen. What is held back is a tool whose definition changed after it
        // was approved (a description rewritten to steer the model, a schema that now asks for
        // more): the person looks at the change first.
        let mut approved = match self.approvals.approved_tools(&self.name) {
            Ok(approved) => approved,
            Err(e) => {
                // Without the approvals nothing can be told apart from a changed tool.
                self.fail(&format!("the approvals of its tools could not be read: {e}"));
                return;
            }
        };
        let new: Vec<&Listed> = listed.iter().filter(|l| !approved.contains_key(&l.remote)).collect();
        if !new.is_empty() {
            for l in &new {
                tracing::info!(server = %self.name, tool = %l.remote, "tool approved as first seen");
                approved.insert(l.remote.clone(), l.fingerprint.clone());
            }
            if let Err(e) = self.approvals.record_tools(&self.name, &approved) {
                tracing::warn!(server = %self.name, "approvals not saved: {e}");
            }
        }
        let prompt = self.lock().prompt.clone();
        let mut offered: Vec<Arc<dyn Tool>> = Vec::new();
        let mut held = Vec::new();
        for l in &listed {
            match approved.get(&l.remote) {
                Some(fp) if *fp == l.fingerprint => {
                    let mut def = l.def.clone();
                    def.prompt.clone_from(&prompt);
                    def.timeout = self.config.timeout.map(Duration::from_secs);
                    offered.push(Arc::new(McpTool { def, remote: l.remote.clone(), server: self.weak.clone() }));
                }
                _ => held.push(HeldTool {
                    name: l.def.name.clone(),
                    why: "its definition changed since you approved it".to_owned(),
                    description: l.def.description.clone(),
                    fingerprint: l.fingerprint.clone(),
                }),
            }
        }
        for h in &held {
            tracing::warn!(server = %self.name, tool = %h.name, "held back until approved again: {}", h.why);
        }
        {
            let mut state = self.lock();
            state.offered = offered;
            state.held = held;
            state.status = Some(SourceStatus::Ready);
        }
        self.changed();
    }
}

/// The `WWW-Authenticate` header of the 401 somewhere in `error`'s chain, if there is one.
fn auth_challenge(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut next = Some(error);
    while let Some(e) = next {
        if let Some(auth) = e.downcast_ref::<rmcp::transport::streamable_http_client::AuthRequiredError>() {
            return Some(auth.www_authenticate_header.clone()).filter(|h| !h.trim().is_empty());
        }
        next = e.source();
    }
    None
}

/// The HTTP client of remote servers. Redirects off: a header (a key, a token) must never
/// follow a request to another origin.
fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("Switchboard/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("could not set up HTTP: {e}"))
}

/// An rmcp error in words a person can act on (its transport errors name Rust types).
fn plain(error: &str) -> String {
    if error.contains("Auth required") {
        return format!("{SIGN_IN} (OAuth): sign in from Settings or with `switchboard mcp login`");
    }
    match error.rsplit_once("] error: ") {
        Some((_, inner)) => inner.to_owned(),
        None => error.to_owned(),
    }
}

fn spawn_error(command: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("the command '{command}' was not found (is it installed and on PATH?)")
        }
        std::io::ErrorKind::PermissionDenied => format!("the command '{command}' may not be run (permission denied)"),
        _ => format!("the command '{command}' could not be started: {e}"),
    }
}

/// Keeps the last [`STDERR_LINES`] lines of a server's stderr, each cut to
/// [`STDERR_LINE_MAX`] bytes: a server that floods stderr costs a bounded amount of memory.
async fn read_stderr(mut stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>, server: String) {
    let mut buf = vec![0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    let mut dropping = false;
    let push = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line).trim_end().to_owned();
        line.clear();
        tracing::debug!(server = %server, "stderr: {text}");
        let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
        if tail.len() == STDERR_LINES {
            tail.pop_front();
        }
        tail.push_back(text);
    };
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b == b'\n' {
                if !dropping || !line.is_empty() {
                    push(&mut line);
                }
                dropping = false;
            } else if line.len() < STDERR_LINE_MAX {
                line.push(b);
            } else if !dropping {
                line.extend_from_slice("…".as_bytes());
                push(&mut line);
                dropping = true;
            }
        }
    }
    if !line.is_empty() {
        push(&mut line);
    }
}

/// One tool of a server.
struct McpTool {
    def: ToolDef,
    remote: String,
    server: Weak<Shared>,
}

impl Tool for McpTool {
    fn def(&self) -> &ToolDef {
        &self.def
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
            conn.progress.lock().insert(key.clone(), ctx.clone());
            let _forget = Forget(&conn.progress, key);
            // Until the answer arrives, ending this call any way (the stop button, the loop's
            // timeout dropping it) tells the server to stop working on it.
            let mut abandon = Abandon { peer: Some(handle.peer.clone()), id: handle.id.clone() };
            let response = tokio::select! {
                r = handle.await_response() => r,
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            };
            abandon.peer = None;
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

/// Removes a call's progress registration when the call ends, however it ends.
struct Forget<'a>(&'a Progress, String);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.lock().remove(&self.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_errors_are_put_in_words() {
        let auth = "Transport send error: Transport [rmcp::transport::worker::WorkerTransport<X>] error: Auth required";
        assert!(plain(auth).starts_with("the server requires signing in (OAuth)"));
        assert!(plain(auth).contains(SIGN_IN));
        let other =
            "Transport send error: Transport [rmcp::transport::worker::WorkerTransport<X>] error: connection refused";
        assert_eq!(plain(other), "connection refused");
        assert_eq!(plain("timed out"), "timed out");
        assert!(
            spawn_error("nope", &std::io::Error::from(std::io::ErrorKind::NotFound)).contains("'nope' was not found")
        );
    }
}
