//! Signing in to a remote server that asks for OAuth 2.1 (MCP's authorization): metadata
//! discovery, dynamic client registration, PKCE and the token exchange are rmcp's; this module
//! adds the parts that belong to a desktop app: the person's browser (given by the shell), a
//! loopback redirect listener, tokens kept in the key store, every request on a client that
//! checks the addresses it connects to ([`crate::net`]: metadata cannot point a remote server's
//! sign-in at this computer or a private network), and refusing an authorization URL that is
//! neither `https:` nor loopback `http:` before anything opens.

use crate::net::Reach;
use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, CredentialStore, OAuthState, StoredCredentials,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// How long the person has to finish signing in in the browser.
pub const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// Opens an authorization URL where the person can sign in (the desktop: the system browser;
/// the CLI: prints it and tries the opener). Given by the shell.
pub trait Browser: Send + Sync {
    /// Shows `url` to the person.
    fn open(&self, url: &str) -> Result<(), String>;
}

/// Where a server's tokens are kept: the person's key store, one entry per server.
pub trait TokenVault: Send + Sync {
    /// The stored JSON, if any.
    fn load(&self, key: &str) -> Option<String>;
    /// Stores (replaces) it.
    fn save(&self, key: &str, value: &str) -> Result<(), String>;
    /// Forgets it.
    fn clear(&self, key: &str);
}

/// The key store entry of a server's tokens.
pub fn token_key(server: &str) -> String {
    crate::config::secret_name(server, "oauth")
}

/// rmcp's credential store over a [`TokenVault`] entry.
struct VaultStore {
    vault: Arc<dyn TokenVault>,
    key: String,
}

#[async_trait]
impl CredentialStore for VaultStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        // Unreadable JSON is as good as none: the person signs in again.
        Ok(self.vault.load(&self.key).and_then(|json| serde_json::from_str(&json).ok()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let json = serde_json::to_string(&credentials).map_err(|e| AuthError::InternalError(e.to_string()))?;
        self.vault.save(&self.key, &json).map_err(AuthError::InternalError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.vault.clear(&self.key);
        Ok(())
    }
}

/// Whether an authorization URL may be opened: `https:`, or `http:` to this computer.
pub fn check_authorization_url(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("the sign-in address is not a URL: {e}"))?;
    let loopback = matches!(parsed.host(), Some(url::Host::Domain("localhost")))
        || matches!(parsed.host(), Some(url::Host::Ipv4(ip)) if ip.is_loopback())
        || matches!(parsed.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        other => Err(format!(
            "the server asked to open a sign-in address that is {other}: and not on this computer; refused ({})",
            parsed.origin().ascii_serialization()
        )),
    }
}

/// A client that adds the stored access token (refreshing it when needed), or `None` when no
/// token is stored for this server.
pub(crate) async fn authorized_client(
    server_url: &str,
    vault: Arc<dyn TokenVault>,
    key: &str,
    reach: &Reach,
) -> Result<Option<AuthClient<reqwest::Client>>, String> {
    if vault.load(key).is_none() {
        return Ok(None);
    }
    let http = reach.client()?;
    let mut manager = AuthorizationManager::new_with_oauth_http_client(server_url, reach.oauth_http()?)
        .await
        .map_err(|e| e.to_string())?;
    manager.set_credential_store(VaultStore { vault, key: key.to_owned() });
    if !manager.initialize_from_store().await.map_err(|e| format!("the stored sign-in could not be used: {e}"))? {
        return Ok(None);
    }
    Ok(Some(AuthClient::new(http, manager)))
}

/// Signs in: discovery, registration, the browser, the redirect back to a loopback listener,
/// the token exchange; the tokens end up in `vault` under `key`.
pub(crate) async fn sign_in(
    server_url: &str,
    vault: Arc<dyn TokenVault>,
    key: &str,
    browser: &dyn Browser,
    reach: &Reach,
    challenge: Option<String>,
    wait: Duration,
) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("could not listen for the sign-in's answer: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let redirect = format!("http://127.0.0.1:{port}/callback");

    let mut state =
        OAuthState::new_with_oauth_http_client(server_url, reach.oauth_http()?).await.map_err(|e| e.to_string())?;
    if let OAuthState::Unauthorized(manager) = &mut state {
        manager.set_credential_store(VaultStore { vault: Arc::clone(&vault), key: key.to_owned() });
    }
    let mut request = AuthorizationRequest::new(redirect).with_client_name("Switchboard");
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    state.start_authorization(request).await.map_err(|e| format!("sign-in could not start: {e}"))?;
    let url = state.get_authorization_url().await.map_err(|e| e.to_string())?;
    check_authorization_url(&url)?;
    browser.open(&url)?;
    let answer = tokio::time::timeout(wait, callback(&listener, port))
        .await
        .map_err(|_| format!("no answer from the sign-in within {} s", wait.as_secs()))??;
    // The whole redirect, so its `iss` (RFC 9207) is checked against the server's metadata.
    state.handle_callback_url(&answer).await.map_err(|e| format!("the sign-in was not accepted: {e}"))?;
    Ok(())
}

/// The full redirect URL of the first request to the redirect URI with a code and a state.
async fn callback(listener: &tokio::net::TcpListener, port: u16) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let mut buf = vec![0u8; 8192];
        let mut read = 0;
        // The request line is all that is needed; bounded, like everything a server sends.
        while read < buf.len() && !buf[..read].windows(2).any(|w| w == b"\r\n") {
            match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf[read..])).await {
                Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
                Ok(Ok(n)) => read += n,
            }
        }
        let head = String::from_utf8_lossy(&buf[..read]);
        let target = head.lines().next().and_then(|l| l.split_whitespace().nth(1)).unwrap_or_default().to_owned();
        let full = format!("http://127.0.0.1:{port}{target}");
        let parsed = reqwest::Url::parse(&full).ok();
        let param = |name: &str| {
            parsed.as_ref().and_then(|u| u.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned()))
        };
        let (body, found) = match (param("code"), param("state"), param("error")) {
            (Some(_), Some(_), _) => {
                ("You are signed in. You can close this tab and go back to Switchboard.", Some(Ok(full.clone())))
            }
            (_, _, Some(error)) => (
                "Signing in did not work. You can close this tab.",
                Some(Err(format!("the sign-in was refused: {error}"))),
            ),
            _ => ("Waiting for the sign-in.", None),
        };
        let page = format!("<!doctype html><meta charset=utf-8><title>Switchboard</title><p>{body}</p>");
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        if let Some(result) = found {
            return result;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_loopback_http_sign_in_addresses_are_opened() {
        assert!(check_authorization_url("https://auth.example/authorize?x=1").is_ok());
        assert!(check_authorization_url("http://127.0.0.1:8080/authorize").is_ok());
        assert!(check_authorization_url("http://localhost/authorize").is_ok());
        assert!(check_authorization_url("http://[::1]:9/authorize").is_ok());
        assert!(check_authorization_url("http://auth.example/authorize").unwrap_err().contains("refused"));
        assert!(check_authorization_url("javascript:alert(1)").is_err());
        assert!(check_authorization_url("file:///etc/passwd").is_err());
    }

    #[tokio::test]
    async fn the_callback_takes_code_and_state_and_says_so_in_the_page() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = tokio::spawn(async move { callback(&listener, port).await });
        let mut probe = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        probe.write_all(b"GET /favicon.ico HTTP/1.1\r\n\r\n").await.unwrap();
        let mut page = String::new();
        probe.read_to_string(&mut page).await.unwrap();
        assert!(page.contains("Waiting"));
        let mut answer = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        answer.write_all(b"GET /callback?code=abc%20d&state=xyz HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
        let mut page = String::new();
        answer.read_to_string(&mut page).await.unwrap();
        assert!(page.contains("You are signed in"));
        assert_eq!(waiting.await.unwrap().unwrap(), format!("http://127.0.0.1:{port}/callback?code=abc%20d&state=xyz"));
    }
}
