//! An MCP server's prompts and resources through the service, against the reference
//! "everything" server: a prompt's embedded resource becomes an attachment, a resource is
//! attached (stored like a file, named by its URI) and subscribed, a template is completed and
//! expanded, and refusals are typed and name the server.

use std::path::PathBuf;
use std::sync::Arc;
use switchboard_core::{AttachmentKind, ErrorKind, SourceStatus};
use switchboard_secrets::MemoryStore;
use switchboard_service::mcp::{CompletionRef, LogLevel, ServerConfig};
use switchboard_service::{AlreadyConfirmed, Service};
use switchboard_store::Store;

fn everything() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../node_modules/.bin/mcp-server-everything");
    assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
    path.display().to_string()
}

async fn service(dir: &std::path::Path) -> Service {
    let store = Store::open(&dir.join("switchboard.db")).unwrap();
    let service = Service::new(store, Arc::new(MemoryStore::new())).unwrap();
    let config = ServerConfig { command: Some(everything()), args: vec!["stdio".into()], ..Default::default() };
    let added = service.mcp_add("every", config, &AlreadyConfirmed).await.unwrap();
    assert_eq!(added.detail.status, SourceStatus::Ready);
    assert!(added.detail.offers.prompts && added.detail.offers.resources, "{:?}", added.detail.offers);
    service
}

fn args(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompts_embedded_resource_becomes_an_attachment_and_a_refusal_names_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path()).await;
    let prompts = service.mcp_prompts("every").await.unwrap();
    assert!(prompts.prompts.iter().any(|p| p.name == "args-prompt"));

    let got = service.mcp_get_prompt("every", "args-prompt", &args(&[("city", "Oslo")])).await.unwrap();
    assert_eq!(got.text, "What's weather in Oslo?");
    assert!(got.attachments.is_empty());

    let got = service
        .mcp_get_prompt("every", "resource-prompt", &args(&[("resourceType", "Text"), ("resourceId", "4")]))
        .await
        .unwrap();
    assert_eq!(got.attachments.len(), 1, "{got:?}");
    let a = &got.attachments[0];
    assert_eq!((a.name.as_str(), a.kind), ("demo://resource/dynamic/text/4", AttachmentKind::Text));
    assert!(got.text.ends_with("[attached: demo://resource/dynamic/text/4]"), "{}", got.text);
    let stored = service.attachment_preview(&a.id).await.unwrap();
    assert!(stored.text.unwrap().starts_with("Resource 4: This is a plaintext resource"));

    let refused = service.mcp_get_prompt("every", "args-prompt", &args(&[])).await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::BadRequest);
    assert!(
        refused.message.starts_with("The MCP server 'every' refused the prompt 'args-prompt'"),
        "{}",
        refused.message
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_resource_is_stored_named_by_its_uri_and_followed() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path()).await;
    let listed = service.mcp_resources("every").await.unwrap();
    let template = listed.templates.iter().find(|t| t.uri_template.ends_with("/text/{resourceId}")).unwrap();
    let id = service
        .mcp_complete(
            "every",
            &CompletionRef::Resource { uri: template.uri_template.clone() },
            "resourceId",
            "9",
            &args(&[]),
        )
        .await
        .unwrap();
    assert_eq!(id.values, ["9"]);
    let uri = service.mcp_expand_template(&template.uri_template, &args(&[("resourceId", "9")])).unwrap();
    let attached = service.mcp_attach_resource("every", &uri).await.unwrap();
    assert_eq!(attached.name, uri);
    assert_eq!(attached.kind, AttachmentKind::Text);
    let bad = service.mcp_expand_template("{scheme}://x/{id}", &args(&[("scheme", "file"), ("id", "1")])).unwrap_err();
    assert_eq!(bad.kind, ErrorKind::BadRequest);

    // An attached resource is followed (the crate's tests show its updates arriving and cleared
    // by a read); attaching it again reads it again.
    let doc = listed.resources[0].resource.uri.clone();
    let first = service.mcp_attach_resource("every", &doc).await.unwrap();
    let resources = service.mcp_resources("every").await.unwrap();
    let followed = resources.resources.iter().find(|r| r.resource.uri == doc).unwrap();
    assert!(followed.subscribed && followed.updates == 0, "{followed:?}");
    let again = service.mcp_attach_resource("every", &doc).await.unwrap();
    assert_eq!(again.id, first.id, "the same bytes are one stored file");
    assert!(service.mcp_resource_updates().is_empty());
    let info = service.mcp_set_log_level("every", LogLevel::Info).await.unwrap();
    assert_eq!(info.detail.log_level, Some(LogLevel::Info));
    let missing = service.mcp_attach_resource("every", "demo://resource/nope").await.unwrap_err();
    assert_eq!(missing.kind, ErrorKind::BadRequest);
    assert!(missing.message.contains("could not read demo://resource/nope"), "{}", missing.message);
}
