//! How a server runs ([`Options`]: its timeouts, restart backoff and limits, where it runs, where
//! sign-in tokens are kept) and where the approved tool definitions are remembered
//! ([`Approvals`], which the service backs with its database).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
    /// How remote servers are reached (the resolver, and the policy for servers on the internet).
    pub network: crate::net::Network,
    /// Whether what a server asks of the person during a call (input, a completion, the roots)
    /// is answered — through the call's `ToolContext` — and so declared at initialize. Off: none
    /// is declared, and a server that asks anyway is refused (its log says so).
    pub asks: bool,
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
            network: crate::net::Network::default(),
            asks: false,
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
    /// Whether the server's tools were approved before (even none): then a tool it lists that
    /// has no approved fingerprint was added since, and is held. The default takes a server
    /// with no approved tool for one never seen; a store that remembers an empty approval says so.
    fn tools_approved_before(&self, server: &str) -> Result<bool, String> {
        Ok(!self.approved_tools(server)?.is_empty())
    }
}
