//! Provider profiles: the list, their models (and what each holds and costs), local servers
//! found, a connection test, adding or removing a profile (its key with it), and the model
//! catalogue (which one is in use, refreshing it).

use super::{Result, blocking, ipc, logged};
use crate::platform::dialog::Confirmer;
use switchboard_service::Service;
use switchboard_service::catalogue::CatalogueInfo;
use switchboard_service::connection::DetectedServer;
use switchboard_service::ipc::{ConnectionReport, ProviderInfo, ProviderProfile};
use switchboard_service::models::{ModelDetails, ModelSpec};
use tauri::State;

#[tauri::command]
pub async fn list_providers(service: State<'_, Service>) -> Result<Vec<ProviderInfo>> {
    logged("list_providers", async move { service.providers().map_err(ipc) }).await
}

#[tauri::command]
pub async fn list_models(service: State<'_, Service>, provider: Option<String>) -> Result<Vec<String>> {
    logged("list_models", async move { service.models(provider.as_deref()).await.map_err(ipc) }).await
}

#[tauri::command]
pub async fn describe_models(
    service: State<'_, Service>,
    provider: String,
    models: Vec<String>,
) -> Result<Vec<ModelDetails>> {
    logged("describe_models", async move { service.describe_models(&provider, &models).map_err(ipc) }).await
}

#[tauri::command]
pub async fn catalogue_spec(
    service: State<'_, Service>,
    kind: String,
    base_url: String,
    model: String,
) -> Result<Option<ModelSpec>> {
    logged("catalogue_spec", async move { Ok(service.catalogue_spec(&kind, &base_url, &model)) }).await
}

#[tauri::command]
pub async fn model_catalogue(service: State<'_, Service>) -> Result<CatalogueInfo> {
    logged("model_catalogue", async move { Ok(service.catalogue_info()) }).await
}

#[tauri::command]
pub async fn refresh_model_catalogue(service: State<'_, Service>) -> Result<CatalogueInfo> {
    logged("refresh_model_catalogue", async move { service.refresh_catalogue().await.map_err(ipc) }).await
}

#[tauri::command]
pub async fn detect_local_servers(service: State<'_, Service>) -> Result<Vec<DetectedServer>> {
    logged("detect_local_servers", async move { service.detect_local_servers().await.map_err(ipc) }).await
}

#[tauri::command]
pub async fn test_provider(service: State<'_, Service>, provider: Option<String>) -> Result<ConnectionReport> {
    logged("test_provider", async move { service.test_provider(provider.as_deref()).await.map_err(ipc) }).await
}

/// Saves a profile; moving one whose key is stored to another origin asks in a native dialog.
#[tauri::command]
pub async fn add_provider(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    profile: ProviderProfile,
    make_default: bool,
) -> Result<Vec<ProviderInfo>> {
    logged("add_provider", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        blocking(move || {
            s.add_provider_confirmed(&profile, make_default, confirm.0.as_ref())?;
            s.providers()
        })
        .await
    })
    .await
}

#[tauri::command]
pub async fn remove_provider(service: State<'_, Service>, name: String) -> Result<Vec<ProviderInfo>> {
    logged("remove_provider", async move {
        let s = service.inner().clone();
        blocking(move || s.remove_provider_and_key(&name)).await?;
        service.providers().map_err(ipc)
    })
    .await
}
