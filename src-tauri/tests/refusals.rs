//! A call refused from the page leaves one warn line in the app's log, naming the command and
//! the reason and never an argument: refused by the isolation hook (which sends `refused_call`
//! instead, src-tauri/isolation/hook.js), or by the command's own checks (invalid input, a
//! widening change not confirmed). Runs the shell on Tauri's mock runtime, logging to a buffer.

mod common;

use common::invoke;
use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use switchboard_service::Service;
use switchboard_store::Store;
use tauri::test::MockRuntime;
use tauri::{App, WebviewWindow};

const SECRET: &str = "hunter2-SECRET-never-logged";

#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The process's log, as the app writes it (warn and above, no colours).
fn log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| {
        let log = Log::default();
        let writer = log.clone();
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("warn"))
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .init();
        log
    })
}

fn log_lines() -> Vec<String> {
    String::from_utf8_lossy(&log().0.lock().unwrap()).lines().map(str::to_owned).collect()
}

fn app() -> (App<MockRuntime>, WebviewWindow<MockRuntime>) {
    common::plain_app(
        Service::new(Store::open_in_memory().unwrap(), Arc::new(switchboard_secrets::MemoryStore::new())).unwrap(),
    )
}

#[test]
fn a_call_the_isolation_hook_refused_fails_and_is_logged_by_name_and_reason() {
    log();
    let (_app, webview) = app();
    let e = invoke(&webview, "refused_call", json!({ "command": "set_key", "reason": "unexpected argument `header`" }))
        .unwrap_err();
    assert_eq!(e["kind"], "badRequest", "{e}");
    assert!(e["message"].as_str().unwrap().contains("refused the call to `set_key`"), "{e}");
    let lines = log_lines();
    assert!(
        lines.iter().any(|l| l.contains("WARN")
            && l.contains("command=set_key")
            && l.contains("reason=unexpected argument `header`")),
        "no refusal line: {lines:#?}"
    );
}

#[test]
fn an_app_command_that_skipped_the_isolation_hook_is_refused_and_logged() {
    log();
    let (_app, webview) = app();
    // An empty body (Tauri does not decrypt one) or a body checked for another command.
    for (body, why) in [
        (json!(null), "it did not pass the isolation hook"),
        (json!({ "__switchboardChecked": "list_conversations" }), "checked for another command"),
    ] {
        let e = common::invoke_raw(&webview, "tauri://localhost", "export_all", body).unwrap_err();
        assert!(e.to_string().contains(why), "{e}");
        assert!(log_lines().iter().any(|l| l.contains("command=export_all") && l.contains(why)), "{:#?}", log_lines());
    }
}

#[test]
fn a_call_a_command_refuses_is_logged_without_its_arguments() {
    log();
    let (_app, webview) = app();
    // A key name the key store does not take, with a key: refused by the command's own checks.
    let e = invoke(&webview, "set_key", json!({ "name": "../../../etc/passwd", "value": SECRET })).unwrap_err();
    assert_eq!(e["kind"], "config", "{e}");
    // A link that is not http, https or mailto, carrying a secret.
    let e = invoke(&webview, "open_url", json!({ "url": format!("file:///home/me/{SECRET}") })).unwrap_err();
    assert_eq!(e["kind"], "badRequest", "{e}");
    // A title longer than a title can be.
    let e = invoke(
        &webview,
        "rename_conversation",
        json!({ "id": "any", "title": format!("{SECRET}{}", "t".repeat(400)) }),
    )
    .unwrap_err();
    assert_eq!(e["kind"], "config", "{e}");
    let lines = log_lines();
    for command in ["set_key", "open_url", "rename_conversation"] {
        assert!(
            lines.iter().any(|l| l.contains("WARN") && l.contains(&format!("command={command}"))),
            "no refusal line for {command}: {lines:#?}"
        );
    }
    assert!(!lines.iter().any(|l| l.contains(SECRET)), "a refusal line quotes an argument: {lines:#?}");
}
