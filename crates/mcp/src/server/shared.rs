//! [`Shared`]: one server's configuration and everything that changes while it runs ([`State`]:
//! status, connection, listed, offered and held tools, restarts), behind one lock, with the
//! status as the person reads it (a command never approved says what it will run and which keys
//! it receives). Every other part of the server works on it.

use super::detail::HeldTool;
use super::handler::Conn;
use super::options::{Approvals, Options};
use crate::config::ServerConfig;
use crate::convert::Listed;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use switchboard_core::{OnChange, Secrets, SourceStatus, Tool};
use tokio_util::sync::CancellationToken;

pub(super) struct Shared {
    pub(super) name: String,
    pub(super) id: String,
    pub(super) config: ServerConfig,
    pub(super) options: Options,
    pub(super) secrets: Arc<dyn Secrets>,
    pub(super) approvals: Arc<dyn Approvals>,
    pub(super) state: Mutex<State>,
    pub(super) stderr: Arc<Mutex<VecDeque<String>>>,
    /// What the server may ask of the person (and the roots it is told), kept across restarts.
    pub(super) asking: Arc<super::asking::Asking>,
    /// Held while starting or stopping, so a restart never overlaps another.
    pub(super) lifecycle: tokio::sync::Mutex<()>,
    pub(super) weak: Weak<Shared>,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) status: Option<SourceStatus>,
    /// Whether the person approved what it runs; a server that is not never starts.
    pub(super) approved: bool,
    pub(super) on_change: Option<OnChange>,
    /// Cancels the running supervisor.
    pub(super) stop: Option<CancellationToken>,
    /// The running supervisor, awaited before another starts: never two connections at once.
    pub(super) supervisor: Option<tokio::task::JoinHandle<()>>,
    pub(super) conn: Option<Arc<Conn>>,
    pub(super) listed: Vec<Listed>,
    pub(super) skipped: Vec<String>,
    pub(super) offered: Vec<Arc<dyn Tool>>,
    pub(super) held: Vec<HeldTool>,
    pub(super) server_info: Option<String>,
    /// The server's `instructions`, as the prompt snippet of each of its tools.
    pub(super) prompt: Option<String>,
    pub(super) restarts: u32,
    /// The process id of a running stdio server.
    pub(super) pid: Option<u32>,
    /// The `WWW-Authenticate` header of the last 401, for the next sign-in.
    pub(super) challenge: Option<String>,
    /// Tool calls waiting for their answer.
    pub(super) calls: usize,
    /// Why the person ended the connection (an edit of the server): a call it cut off says this.
    pub(super) ended: Option<String>,
    /// Prompts, resources and templates as listed, subscriptions and the log level.
    pub(super) context: super::context::ContextState,
}

impl Shared {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn status_of(&self, state: &State) -> SourceStatus {
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

    pub(super) fn set_status(&self, status: SourceStatus) {
        let on_change = {
            let mut state = self.lock();
            state.status = Some(status);
            state.on_change.clone()
        };
        if let Some(f) = on_change {
            f();
        }
    }

    pub(super) fn changed(&self) {
        let on_change = self.lock().on_change.clone();
        if let Some(f) = on_change {
            f();
        }
    }

    /// Marks the server failed, keeping `reason` in words.
    pub(super) fn fail(&self, reason: &str) {
        tracing::warn!(server = %self.name, "{reason}");
        {
            let mut state = self.lock();
            state.offered.clear();
            state.conn = None;
        }
        self.set_status(SourceStatus::Failed { reason: reason.to_owned() });
    }

    pub(super) fn stderr_tail(&self, lines: usize) -> String {
        let stderr = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        if stderr.is_empty() {
            return String::new();
        }
        let tail: Vec<&str> = stderr.iter().skip(stderr.len().saturating_sub(lines)).map(String::as_str).collect();
        format!("; its last output:\n{}", tail.join("\n"))
    }
}
