//! The Switchboard desktop shell: Tauri commands that each call one method of
//! [`switchboard_service::Service`]. Nothing else lives here: no product logic, no SQL, no HTTP.
//!
//! Architecture invariant: this is the only crate that knows Tauri. The commands live in
//! [`commands`], one file per concern; what the shell asks of the operating system (native
//! dialogs, the system opener, the navigation guard, the window's state, the GL environment) lives
//! in [`platform`]. Every command returns [`IpcError`] on failure (a `kind` the UI can act on), and
//! a turn's events travel over one `Channel<ChatEvent>` per turn.

use std::sync::Arc;
use switchboard_service::ipc::IpcError;
use switchboard_service::{KeychainAccess, Service};
use tauri::Manager;

mod commands;
mod platform;

pub use commands::with_commands;
pub use platform::dialog::{Confirmer, FileDialog, FilePicker, NativeDialog, PickFn};
pub use platform::navigation::navigation_allowed;
pub use platform::opener::{OpenFn, Opener};
pub use platform::refusals::CHECKED_KEY;

/// Opens the data directory's database and builds the service the commands share. Keys come
/// from the environment until the keychain is probed, after start-up.
pub fn open_service() -> std::result::Result<Service, IpcError> {
    Service::load(None, KeychainAccess::Deferred).map_err(IpcError::from)
}

/// The app's context (config, embedded UI, icons, capabilities), for any runtime: the app uses
/// Wry, the command tests the mock runtime, both under the same capabilities.
pub fn context<R: tauri::Runtime>() -> tauri::Context<R> {
    tauri::generate_context!()
}

/// Runs the desktop app.
pub fn run() {
    // Before any other thread exists: large buffers go back to the system when freed.
    platform::memory::return_large_frees();
    // Before anything starts a process: what the app starts ends with it (see
    // `switchboard_process::tree`).
    switchboard_process::install();
    // Started from a desktop menu, the app has the session's bare PATH: read the person's login
    // shell's (bounded) while the window comes up, so `npx` and `uvx` servers are found.
    switchboard_process::login_env::start();
    platform::gl::spare_software_gl_without_gpu();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        // Log lines may quote a server's error text, which may quote a key: masked like every output.
        .with_writer(|| switchboard_service::redact::RedactingWriter(std::io::stderr()))
        .try_init();
    let service = match open_service() {
        Ok(s) => s,
        Err(e) => {
            // Without a database there is nothing to show; say why instead of a blank window.
            eprintln!("Switchboard cannot start: {}", e.message);
            std::process::exit(1);
        }
    };
    let app = with_commands(
        tauri::Builder::default()
            .plugin(tauri_plugin_dialog::init())
            .plugin(tauri_plugin_window_state::Builder::default().build()),
    )
    // Pasted and dropped files reach the engine as request bodies, not through the IPC bridge.
    .register_asynchronous_uri_scheme_protocol(platform::upload_scheme::SCHEME, |ctx, request, responder| {
        let service = ctx.app_handle().state::<Service>().inner().clone();
        tauri::async_runtime::spawn_blocking(move || {
            responder.respond(platform::upload_scheme::respond(&service, &request));
        });
    })
    .on_window_event(|window, event| {
        if matches!(event, tauri::WindowEvent::Moved(_) | tauri::WindowEvent::Resized(_)) {
            platform::window_state::save_window_state_soon(window.app_handle());
        }
    })
    .manage(service.clone())
    .manage(Opener::system())
    .setup({
        let service = service.clone();
        move |app| {
            app.manage(Confirmer(Arc::new(NativeDialog(app.handle().clone()))));
            app.manage(FilePicker::native(app.handle().clone()));
            if let Some(window) = app.get_webview_window("main") {
                window.set_title("Switchboard")?;
            }
            // Both may take seconds; the window and the composer never wait for them.
            let keychain = service.clone();
            std::thread::spawn(move || keychain.connect_keychain());
            let sources = service.clone();
            tauri::async_runtime::spawn(async move { sources.start_tool_sources().await });
            Ok(())
        }
    });
    let app = match app.build(context()) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("Switchboard stopped: {e}");
            std::process::exit(1);
        }
    };
    // SIGINT, SIGTERM and SIGHUP close the app the ordinary way, through `RunEvent::Exit`.
    let handle = app.handle().clone();
    switchboard_process::signals::on_exit_signals(
        move |signal| {
            handle.exit(signal.exit_code);
            true
        },
        std::time::Duration::from_secs(10),
    );
    app.run(move |_, event| {
        if let tauri::RunEvent::Exit = event {
            // Tool sources own processes and connections: end them before the process does,
            // then whatever they started (servers' children, command tools' leftovers).
            tauri::async_runtime::block_on(service.shutdown());
            switchboard_process::end_all();
        }
    });
}
