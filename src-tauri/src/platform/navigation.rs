//! Keeps every webview on the app's own content.
//!
//! Invariant: the window never navigates away from the embedded UI (or the dev server in a dev
//! build); links leave through the `open_url` command, which checks them.

/// Whether the main window may navigate to `url`: only to the app's own content (the embedded UI
/// under `tauri://localhost`, or `http(s)://tauri.localhost` on Windows; the Vite dev server in a
/// dev build). Anything else — a link in a message, `window.location` set by script — stays where
/// it is; links go to the browser through `open_url`, which checks them.
pub fn navigation_allowed(url: &tauri::Url) -> bool {
    let own = match url.scheme() {
        "tauri" => url.host_str() == Some("localhost"),
        "http" | "https" => url.host_str() == Some("tauri.localhost"),
        // The empty document a webview may start from; it shows nothing and runs nothing.
        "about" => url.as_str() == "about:blank",
        _ => false,
    };
    own || (cfg!(dev) && url.origin() == tauri::Url::parse("http://localhost:1420").expect("dev URL").origin())
}

/// Refuses every navigation [`navigation_allowed`] does not allow, for every webview.
pub(crate) fn navigation_guard<R: tauri::Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri::plugin::Builder::new("navigation-guard")
        .on_navigation(|_, url| {
            let allowed = navigation_allowed(url);
            if !allowed {
                tracing::warn!("refused to navigate the window away from the app (to a {} URL)", url.scheme());
            }
            allowed
        })
        .build()
}
