//! The supervisor of a running server: it connects, lists, and then waits for the person to stop
//! it, for `tools/list_changed`, or for the server to die, when it reconnects after a delay that
//! doubles up to a limit and gives up after too many failures in a row. Invariant: one
//! supervisor at a time (start and stop hold the lifecycle lock and end the previous one first),
//! so there are never two connections to a server.

use super::connect::{ConnectError, SIGN_IN};
use super::handler::{Conn, Progress};
use super::shared::Shared;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{OnChange, SourceStatus};
use tokio_util::sync::CancellationToken;

/// How long a connection must have lived for a crash to count as a new first failure (the
/// restart delay and count start over); a server that dies sooner keeps backing off.
const STABLE: Duration = Duration::from_secs(60);

impl Shared {
    /// Starts the supervisor (after the previous one ended); returns once the first attempt is
    /// ready or has failed.
    pub(super) async fn start(&self, on_change: OnChange) {
        let _one_at_a_time = self.lifecycle.lock().await;
        self.halt().await;
        let stop = CancellationToken::new();
        {
            let mut state = self.lock();
            state.on_change = Some(on_change);
            state.ended = None;
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
    pub(super) async fn halt(&self) {
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

    pub(super) async fn stop(&self) {
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
            self.resume_context(&peer).await;
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
}
