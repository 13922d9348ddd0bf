//! The UI's IPC types are generated from the Rust types; this test fails when the committed file
//! is stale. Regenerate with `UPDATE_BINDINGS=1 cargo test -p switchboard-service --test bindings`.

use ts_rs::{Config, TS};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ui/src/lib/ipc/bindings.ts");

fn render() -> String {
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(
        "// Generated from the Rust types by crates/service/tests/bindings.rs. Do not edit.\n\
         // Regenerate: UPDATE_BINDINGS=1 cargo test -p switchboard-service --test bindings\n\n",
    );
    macro_rules! decl {
        ($($t:ty),* $(,)?) => {$(
            out.push_str("export ");
            out.push_str(&<$t as TS>::decl(&cfg));
            out.push_str("\n\n");
        )*};
    }
    use switchboard_core as core;
    use switchboard_service::{ipc, settings};
    use switchboard_store as store;
    decl!(
        core::ErrorKind,
        core::ToolStatus,
        core::FinishReason,
        core::NoticeKind,
        core::Usage,
        core::ToolSource,
        core::ApprovalPolicy,
        core::ChatEvent,
        store::ConversationSummary,
        store::Role,
        store::MessageStatus,
        store::ToolCallStatus,
        store::StoredToolResult,
        store::StoredToolCall,
        store::StoredError,
        store::StoredNotice,
        store::StoredMessage,
        store::MessagePage,
        ipc::ConversationView,
        ipc::SendRequest,
        ipc::TurnStarted,
        ipc::ToolInfo,
        ipc::ProviderInfo,
        ipc::ApprovalChoice,
        ipc::IpcError,
        ipc::KeyMode,
        ipc::KeychainStatus,
        ipc::KeyPurpose,
        ipc::KeyInfo,
        ipc::DataInfo,
        switchboard_store::ProviderProfile,
        settings::ToolPrefs,
        settings::Limits,
        settings::Retry,
        settings::SearchBackend,
        settings::WebPrefs,
        settings::Settings,
    );
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

#[test]
fn ui_bindings_are_fresh() {
    let fresh = render();
    if std::env::var_os("UPDATE_BINDINGS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(PATH).parent().unwrap()).unwrap();
        std::fs::write(PATH, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(PATH).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/src/lib/ipc/bindings.ts is stale: run `UPDATE_BINDINGS=1 cargo test -p switchboard-service --test bindings` and commit it"
    );
}
