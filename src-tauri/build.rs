//! Declares the app's commands so capabilities can grant them one by one (least privilege).

fn main() {
    let attributes = tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(&[
        "list_conversations",
        "search_conversations",
        "open_conversation",
        "older_messages",
        "rename_conversation",
        "delete_conversation",
        "send_message",
        "stop_turn",
        "regenerate",
        "list_tools",
        "set_chat_tool_disabled",
        "list_providers",
        "list_models",
        "resolve_approval",
        "get_settings",
        "update_settings",
        "add_provider",
        "remove_provider",
        "list_keys",
        "set_key",
        "delete_key",
        "keychain_status",
        "use_key_fallback",
        "data_info",
        "export_all",
    ]));
    tauri_build::try_build(attributes).expect("tauri build script");
}
