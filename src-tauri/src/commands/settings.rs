//! The settings file, read and replaced whole.

use super::{Result, blocking, ipc, logged};
use crate::platform::dialog::Confirmer;
use switchboard_service::Service;
use switchboard_service::settings::Settings;
use tauri::State;

#[tauri::command]
pub async fn get_settings(service: State<'_, Service>) -> Result<Settings> {
    logged("get_settings", async move { service.settings().map_err(ipc) }).await
}

/// Saves settings; a change that widens what the app may do is applied only after the person
/// agrees in a native dialog (on a blocking thread, as it waits for them).
#[tauri::command]
pub async fn update_settings(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    settings: Settings,
) -> Result<Settings> {
    logged("update_settings", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        blocking(move || {
            s.update_settings_confirmed(&settings, confirm.0.as_ref())?;
            s.settings()
        })
        .await
    })
    .await
}
