//! Tools people define without code (`tools.json`): HTTP and command tools, trying one, and
//! OpenAPI documents imported as tools.
//!
//! Invariant: a tool that sends a key or runs a program is offered only after the person agrees
//! in a native dialog.

use super::{Result, asking, blocking, ipc, logged};
use crate::platform::dialog::{Confirmer, FileDialog, FilePicker};
use serde_json::{Map, Value};
use switchboard_core::ErrorKind;
use switchboard_service::Service;
use switchboard_service::defined_tools::{
    CommandToolConfig, DefinedConfig, DefinedToolInfo, DefinedToolsOverview, HttpToolConfig, TryResult,
};
use switchboard_service::openapi_docs::{
    OpenApiImport, OpenApiSource, OpenApiWindowPreview, OpenApiWindowRequest, PickedFiles,
};
use tauri::State;

/// The tools people define without code (`tools.json`), each with where it stands.
#[tauri::command]
pub async fn defined_tools(service: State<'_, Service>) -> Result<DefinedToolsOverview> {
    logged("defined_tools", async move { service.defined_tools().map_err(ipc) }).await
}

/// One defined tool's whole definition, for editing it.
#[tauri::command]
pub async fn defined_tool_config(service: State<'_, Service>, name: String) -> Result<DefinedConfig> {
    logged("defined_tool_config", async move { service.defined_tool_config(&name).map_err(ipc) }).await
}

/// Adds or replaces an HTTP tool. One that sends a key is offered only after the person agrees,
/// in a native dialog, to the key going to its origin.
#[tauri::command]
pub async fn add_http_tool(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    config: HttpToolConfig,
) -> Result<DefinedToolInfo> {
    logged("add_http_tool", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        blocking(move || s.add_http_tool(config, confirm.0.as_ref())).await
    })
    .await
}

/// Adds or replaces a command tool. It is offered only after the person agrees to its exact
/// command line in a native dialog: adding it from the page is never enough to run a program.
#[tauri::command]
pub async fn add_command_tool(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    config: CommandToolConfig,
) -> Result<DefinedToolInfo> {
    logged("add_command_tool", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        blocking(move || s.add_command_tool(config, confirm.0.as_ref())).await
    })
    .await
}

/// Shows what a waiting tool would be allowed in a native dialog and offers it if the person agrees.
#[tauri::command]
pub async fn approve_defined_tool(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    name: String,
) -> Result<DefinedToolInfo> {
    logged("approve_defined_tool", async move {
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        blocking(move || s.approve_defined_tool(&name, confirm.0.as_ref())).await
    })
    .await
}

#[tauri::command]
pub async fn remove_defined_tool(service: State<'_, Service>, name: String) -> Result<DefinedToolsOverview> {
    logged("remove_defined_tool", async move {
        let s = service.inner().clone();
        blocking(move || s.remove_defined_tool(&name)).await?;
        service.defined_tools().map_err(ipc)
    })
    .await
}

/// Runs an HTTP tool once with `args` (the person's own act): the exact request, keys masked,
/// and what came back.
#[tauri::command]
pub async fn try_http_tool(service: State<'_, Service>, name: String, args: Map<String, Value>) -> Result<TryResult> {
    logged("try_http_tool", async move {
        service.try_http_tool(&name, Value::Object(args)).await.map(TryResult::from).map_err(ipc)
    })
    .await
}

/// Reads an OpenAPI document and converts it without keeping anything: its operations, servers,
/// security schemes and what would be left out. The document is an http(s) URL or a file the
/// person chooses in the native file dialog (the preview names it by a pick and its file name);
/// never a path from the page.
#[tauri::command]
pub async fn preview_openapi(
    service: State<'_, Service>,
    picker: State<'_, FilePicker>,
    picks: State<'_, PickedFiles>,
    request: OpenApiWindowRequest,
) -> Result<OpenApiWindowPreview> {
    logged("preview_openapi", async move {
        let request = choose_file(&picker, &picks, request).await?;
        service.preview_openapi_for_window(&picks, request).await.map_err(ipc)
    })
    .await
}

/// Imports an OpenAPI document (a URL or a file the person picked) as tools. Operations that
/// send a key are offered only after the person agrees, in a native dialog, to the keys going to
/// its server.
#[tauri::command]
pub async fn import_openapi(
    service: State<'_, Service>,
    confirmer: State<'_, Confirmer>,
    picker: State<'_, FilePicker>,
    picks: State<'_, PickedFiles>,
    request: OpenApiWindowRequest,
) -> Result<OpenApiImport> {
    logged("import_openapi", async move {
        let request = choose_file(&picker, &picks, request).await?;
        let (s, confirm) = (service.inner().clone(), confirmer.inner().clone());
        let (request, _) = picks.resolve(request).map_err(ipc)?;
        asking(move || async move { s.import_openapi(request, confirm.0.as_ref()).await }).await
    })
    .await
}

/// `request`, its [`OpenApiSource::ChooseFile`] answered by the person in the native file dialog
/// (a cancelled dialog is `Cancelled`).
async fn choose_file(
    picker: &FilePicker,
    picks: &PickedFiles,
    mut request: OpenApiWindowRequest,
) -> Result<OpenApiWindowRequest> {
    if request.source == OpenApiSource::ChooseFile {
        let pick = picker.clone();
        let chosen = blocking(move || Ok(pick.pick(&FileDialog::OpenApiDocument))).await?;
        let Some(path) = chosen else {
            return Err(ipc(switchboard_service::Error::new(ErrorKind::Cancelled, "No file was chosen.")));
        };
        request.source = OpenApiSource::Picked { pick: picks.remember(path).pick };
    }
    Ok(request)
}
