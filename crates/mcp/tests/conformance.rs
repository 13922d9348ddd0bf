//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, installed by
//! `scripts/setup.sh`) against the client, scenario by scenario. The suite starts its own
//! servers on localhost and runs `mcp-conformance-client URL`; a scenario passes only with no
//! failed check and no warning.
//!
//! The sign-in scenarios (`auth/*`) run the real OAuth flow: discovery, registration, PKCE, the
//! "browser" (the driver follows the authorization server's redirect to the client's loopback
//! listener), the token exchange, then a tool call with the token.
//!
//! `elicitation-sep1034-client-defaults`: a form accepted as it is goes back with the defaults of
//! the fields left out (string, integer, number, enum, boolean).
//!
//! Left out, and why: `auth/metadata-var2` and `-var3`, `auth/scope-step-up`, `auth/scope-retry-limit`
//! and `auth/scope-from-www-authenticate` (discovery from the 401's `WWW-Authenticate` header
//! and scope step-up are not wired through rmcp's transport error yet), `auth/basic-cimd` (a
//! warning: no client ID metadata document URL), `auth/pre-registration` and
//! `auth/client-credentials-*` (a client ID given out of band, machine-to-machine grants: not a
//! desktop sign-in).

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn run(scenario: &str) {
    let suite = repo().join("node_modules/.bin/conformance");
    assert!(suite.exists(), "{} is missing: run scripts/setup.sh", suite.display());
    let client = env!("CARGO_BIN_EXE_mcp-conformance-client");
    assert!(!client.contains(' '), "the suite splits its --command on spaces: {client}");
    let out = Command::new(&suite)
        .args(["client", "--command", client, "--scenario", scenario, "--timeout", "20000"])
        .output()
        .expect("run the conformance suite");
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scenario {scenario} failed:\n{report}");
    assert!(report.contains("OVERALL: PASSED"), "{report}");
}

#[test]
fn initialize() {
    run("initialize");
}

#[test]
fn tools_call() {
    run("tools_call");
}

#[test]
fn elicitation_client_defaults() {
    run("elicitation-sep1034-client-defaults");
}

#[test]
fn sse_retry() {
    run("sse-retry");
}

macro_rules! sign_in {
    ($($test:ident => $scenario:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            run($scenario);
        }
    )*};
}

sign_in! {
    auth_metadata_default => "auth/metadata-default",
    auth_metadata_var1 => "auth/metadata-var1",
    auth_scope_from_scopes_supported => "auth/scope-from-scopes-supported",
    auth_scope_omitted_when_undefined => "auth/scope-omitted-when-undefined",
    auth_token_endpoint_auth_basic => "auth/token-endpoint-auth-basic",
    auth_token_endpoint_auth_post => "auth/token-endpoint-auth-post",
    auth_token_endpoint_auth_none => "auth/token-endpoint-auth-none",
    auth_resource_mismatch => "auth/resource-mismatch",
    auth_backcompat_metadata => "auth/2025-03-26-oauth-metadata-backcompat",
    auth_backcompat_endpoint_fallback => "auth/2025-03-26-oauth-endpoint-fallback",
}
