//! What the command tests share: an app on Tauri's mock runtime and a call made the way the page
//! makes it, through the isolation hook (`src-tauri/isolation/hook.js`).

#![allow(dead_code)] // each test binary uses its own part

use serde_json::Value;
use std::sync::Arc;
use switchboard_service::Service;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder};
use tauri::webview::InvokeRequest;
use tauri::{App, WebviewWindow, WebviewWindowBuilder};

/// The app over `service` with a person who says no to every widening change, an opener that
/// opens nothing and a file dialog that is cancelled.
pub fn plain_app(service: Service) -> (App<MockRuntime>, WebviewWindow<MockRuntime>) {
    let app = switchboard_desktop::with_commands(mock_builder())
        .manage(service)
        .manage(switchboard_desktop::Confirmer(Arc::new(switchboard_service::Refuse)))
        .manage(switchboard_desktop::Opener(Arc::new(|_| Err("not in this test".into()))))
        .manage(switchboard_desktop::FilePicker(Arc::new(|_| Vec::new())))
        .build(switchboard_desktop::context())
        .unwrap();
    let webview = WebviewWindowBuilder::new(&app, "main", Default::default()).build().unwrap();
    (app, webview)
}

/// Calls `cmd` from a page at `url`, as the isolation hook sends a call it let through.
pub fn invoke_from(webview: &WebviewWindow<MockRuntime>, url: &str, cmd: &str, body: Value) -> Result<Value, Value> {
    invoke_raw(webview, url, cmd, checked(cmd, body))
}

/// Calls `cmd` with `body` exactly as given: a call that did not pass the isolation hook.
pub fn invoke_raw(webview: &WebviewWindow<MockRuntime>, url: &str, cmd: &str, body: Value) -> Result<Value, Value> {
    get_ipc_response(
        webview,
        InvokeRequest {
            cmd: cmd.into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: url.parse().unwrap(),
            body: InvokeBody::Json(body),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        },
    )
    .map(|b| b.deserialize::<Value>().unwrap())
}

/// Calls `cmd` from the app's own page.
pub fn invoke(webview: &WebviewWindow<MockRuntime>, cmd: &str, body: Value) -> Result<Value, Value> {
    invoke_from(webview, "tauri://localhost", cmd, body)
}

/// `body` with the mark the isolation hook adds to a call it let through.
pub fn checked(cmd: &str, mut body: Value) -> Value {
    if let Value::Object(args) = &mut body {
        args.insert(switchboard_desktop::CHECKED_KEY.to_owned(), Value::String(cmd.to_owned()));
    }
    body
}
