//! Making one connection: a stdio server spawned from its argv (minimal environment plus its
//! entry's `env`, secrets resolved only now, the root of a tool tree forked from the process keeper
//! thread, stderr kept) or a remote
//! endpoint over streamable HTTP (its headers, a signed-in client when there are tokens,
//! redirects off, addresses as [`crate::net`] allows), then `initialize` under a timeout; and rmcp's errors put in words.

use super::handler::{Handler, Progress};
use super::shared::Shared;
use super::stderr::read_stderr;
use crate::config::{Spec, secret_ref};
use crate::net::Reach;
use rmcp::service::{RoleClient, RunningService, ServiceExt as _};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The longest `instructions` text offered to the model.
pub const MAX_INSTRUCTIONS: usize = 8 * 1024;

/// Why a connection could not be made.
pub(super) struct ConnectError(pub(super) String);

/// The marker of a connection refused for want of a sign-in.
pub(super) const SIGN_IN: &str = "the server requires signing in";

impl Shared {
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

    pub(super) async fn connect(
        &self,
        list_changed: &Arc<tokio::sync::Notify>,
        progress: &Progress,
    ) -> Result<RunningService<RoleClient, Handler>, ConnectError> {
        let handler = Handler {
            progress: progress.clone(),
            list_changed: Arc::clone(list_changed),
            server: self.name.clone(),
            asking: Arc::clone(&self.asking),
            shared: self.weak.clone(),
        };
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
                // Forked from the process keeper thread: on Linux the server then dies with the app.
                let wrapped = switchboard_process::group(cmd);
                let (transport, stderr) = switchboard_process::spawn_on_keeper(move || super::stdio::spawn(wrapped))
                    .await
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
                let reach = Reach::new(&url, &self.options.network);
                let parsed = reqwest::Url::parse(&url).map_err(|e| ConnectError(format!("{url}: {e}")))?;
                reach.check(&parsed).map_err(ConnectError)?;
                let client = reach.client().map_err(ConnectError)?;
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
                let signed_in = match &self.options.tokens {
                    Some(vault) => {
                        let key = crate::oauth::token_key(&self.name);
                        crate::oauth::authorized_client(&url, Arc::clone(vault), &key, &reach)
                            .await
                            .map_err(|e| ConnectError(reach.refusal().unwrap_or(e)))?
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
                    match reach.refusal() {
                        Some(refused) => ConnectError(format!("{url}: {refused}")),
                        None => ConnectError(format!("{url}: {}{}", plain(&e.to_string()), reach.proxy_note(&e))),
                    }
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
        state.context.forget_listings();
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

/// An rmcp error in words a person can act on (its transport errors name Rust types).
pub(super) fn plain(error: &str) -> String {
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
