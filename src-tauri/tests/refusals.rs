//! A call a command refuses (its own checks: invalid input, a widening change not confirmed)
//! leaves one warn line in the app's log, naming the command and the reason and never an
//! argument. Runs the shell on Tauri's mock runtime with the log written to a buffer.

use serde_json::{Value, json};
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use switchboard_service::Service;
use switchboard_store::Store;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;
use tauri::{App, WebviewWindow, WebviewWindowBuilder};

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
    let service =
        Service::new(Store::open_in_memory().unwrap(), Arc::new(switchboard_secrets::MemoryStore::new())).unwrap();
    let app = switchboard_desktop::with_commands(mock_builder())
        .manage(service)
        .manage(switchboard_desktop::Confirmer(Arc::new(switchboard_service::Refuse)))
        .manage(switchboard_desktop::Opener(Arc::new(|_| Err("not in this test".into()))))
        .build(switchboard_desktop::context())
        .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    (app, webview)
}

fn invoke(webview: &WebviewWindow<MockRuntime>, cmd: &str, body: Value) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: "tauri://localhost".parse().unwrap(),
            body: InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
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
    let lines = log_lines();
    for command in ["set_key", "open_url"] {
        assert!(
            lines.iter().any(|l| l.contains("WARN") && l.contains(&format!("command={command}"))),
            "no refusal line for {command}: {lines:#?}"
        );
    }
    assert!(!lines.iter().any(|l| l.contains(SECRET)), "a refusal line quotes an argument: {lines:#?}");
}
