//! The system opener: the person's browser, mail program or file manager.
//!
//! Invariant: it is only ever handed a value the engine checked (a link through
//! `switchboard_service::links`, a sign-in address the MCP client checked, the service's own
//! exports folder), never a string straight from the page.

use std::sync::Arc;
use switchboard_core::ErrorKind;
use switchboard_service::ipc::IpcError;

/// Hands a checked link to the system opener (the person's browser or mail program). The app's
/// opens it for real; the command tests manage one that records what it was given.
#[derive(Clone)]
pub struct Opener(pub Arc<OpenFn>);

/// Opens a link, or says why it could not.
pub type OpenFn = dyn Fn(&str) -> std::result::Result<(), String> + Send + Sync;

impl Opener {
    /// The system's opener.
    pub fn system() -> Self {
        Opener(Arc::new(switchboard_process::open_external))
    }

    /// Opens `url` on a blocking thread (an opener may wait for the program it starts); a failure
    /// reads "`what` could not be opened: …".
    pub(crate) async fn open(&self, url: String, what: &str) -> Result<(), IpcError> {
        let open = self.clone();
        tokio::task::spawn_blocking(move || (open.0)(&url))
            .await
            .map_err(|e| IpcError { kind: ErrorKind::Internal, message: e.to_string(), retryable: false })?
            .map_err(|e| IpcError {
                kind: ErrorKind::Internal,
                message: format!("{what} could not be opened: {e}"),
                retryable: false,
            })
    }
}

/// Opens a remote server's sign-in address in the person's browser (the engine checked that it
/// is `https:` or loopback `http:` first).
pub(crate) struct SystemBrowser(pub(crate) Opener);

impl switchboard_service::mcp::Browser for SystemBrowser {
    fn open(&self, url: &str) -> std::result::Result<(), String> {
        (self.0.0)(url)
    }
}
