//! Keys: set, replaced and deleted, never read back; the keychain's state and the person's
//! fallback when it cannot be used.
//!
//! Invariant: every key-store call runs on a blocking thread (a keychain may wait on D-Bus).

use super::{Result, blocking, logged};
use switchboard_service::Service;
use switchboard_service::ipc::{KeyInfo, KeyMode, KeychainStatus};
use tauri::State;

#[tauri::command]
pub async fn list_keys(service: State<'_, Service>) -> Result<Vec<KeyInfo>> {
    logged("list_keys", async move {
        let s = service.inner().clone();
        blocking(move || s.keys_overview()).await
    })
    .await
}

#[tauri::command]
pub async fn set_key(service: State<'_, Service>, name: String, value: String) -> Result<KeyInfo> {
    logged("set_key", async move {
        let s = service.inner().clone();
        blocking(move || s.set_key(&name, &value)).await
    })
    .await
}

#[tauri::command]
pub async fn delete_key(service: State<'_, Service>, name: String) -> Result<KeyInfo> {
    logged("delete_key", async move {
        let s = service.inner().clone();
        blocking(move || s.delete_key(&name)).await
    })
    .await
}

#[tauri::command]
pub async fn keychain_status(service: State<'_, Service>) -> Result<KeychainStatus> {
    logged("keychain_status", async move { Ok(service.keychain_status()) }).await
}

/// The person's choice when the keychain cannot be used: environment variables only, or keys
/// kept in memory for this session. Never a file.
#[tauri::command]
pub async fn use_key_fallback(service: State<'_, Service>, mode: KeyMode) -> Result<KeychainStatus> {
    logged("use_key_fallback", async move {
        let s = service.inner().clone();
        blocking(move || s.use_key_fallback(mode)).await
    })
    .await
}
