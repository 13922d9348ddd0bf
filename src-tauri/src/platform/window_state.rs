//! The window's size and place, saved soon after they change.
//!
//! Invariant: the last move or resize wins; an earlier pending save does nothing.

/// Saves the window's size and place half a second after it last moved or changed size. The
/// window-state plugin alone saves only on a clean exit; a session that ends with SIGTERM (a
/// logout, a crash, `kill`) would otherwise lose it.
pub(crate) fn save_window_state_soon(app: &tauri::AppHandle) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use tauri_plugin_window_state::{AppHandleExt, StateFlags};
    static LATEST: AtomicU64 = AtomicU64::new(0);
    let this = LATEST.fetch_add(1, Ordering::SeqCst) + 1;
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        if LATEST.load(Ordering::SeqCst) == this
            && let Err(e) = app.save_window_state(StateFlags::all())
        {
            tracing::warn!("the window's size and place could not be saved: {e}");
        }
    });
}
