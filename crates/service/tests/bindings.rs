//! The UI's IPC types are generated from the Rust types, and the values the UI must not hand-copy
//! (defaults, ranges, kinds, choices) from the Rust values; this test fails when the committed
//! file is stale. Regenerate with `UPDATE_BINDINGS=1 cargo test -p switchboard-service --test bindings`.

use serde::Serialize;
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
    use switchboard_service::{defined_tools as defined, ipc, mcp, settings};
    use switchboard_store as store;
    decl!(
        core::ErrorKind,
        core::ToolStatus,
        core::FinishReason,
        core::NoticeKind,
        core::Usage,
        core::ContextBreakdown,
        core::Prices,
        core::Budget,
        core::BudgetKind,
        core::BudgetSpent,
        core::BudgetScope,
        core::BudgetChoice,
        core::ToolSource,
        core::ApprovalPolicy,
        core::ToolImage,
        core::AttachmentKind,
        core::Attachment,
        core::FindingKind,
        core::Finding,
        core::EgressReason,
        core::ProviderState,
        core::CompactionReason,
        core::compaction::Compaction,
        core::ChatEvent,
        core::ElicitationMode,
        core::ElicitationAction,
        core::FieldChoice,
        core::FieldKind,
        core::FormField,
        core::SamplingRole,
        core::SamplingMessage,
        core::ReasoningEffort,
        core::GenerationOptions,
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
        store::StoredCompaction,
        store::SearchHitKind,
        store::SearchHit,
        store::ChatSetup,
        store::SummariserChoice,
        store::ChatGrant,
        store::UsageTotals,
        store::RequestUsage,
        store::RunUsage,
        store::ResultResend,
        store::MessageUsage,
        store::MessageSpend,
        store::ConversationUsage,
        store::UsageGrouping,
        store::UsageQuery,
        store::UsageGroup,
        store::UsageReport,
        ipc::ChatSetupChange,
        ipc::SummariserChange,
        ipc::ConversationView,
        ipc::SendRequest,
        ipc::EditRequest,
        ipc::TurnChoices,
        ipc::ChatInstructions,
        switchboard_service::context::ConversationContext,
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
        switchboard_service::attachments::AttachmentPreview,
        ipc::PickedAttachments,
        ipc::AttachRefusal,
        store::ProfileOptions,
        switchboard_store::ProviderProfile,
        ipc::ConnectionReport,
        switchboard_service::export::ExportFormat,
        switchboard_service::export::import::ImportFormat,
        switchboard_service::export::import::ConversationImportPreview,
        switchboard_service::export::import::ConversationImportFile,
        switchboard_service::export::import::ConversationImportReport,
        switchboard_service::export::import::RefusedConversation,
        switchboard_service::connection::DetectedServer,
        core::provider::ModelCapabilities,
        switchboard_models::ModelSpec,
        switchboard_service::models::SpecSource,
        switchboard_service::models::ResolvedModel,
        switchboard_service::models::ModelDetails,
        switchboard_service::catalogue::CatalogueSource,
        switchboard_service::catalogue::CatalogueInfo,
        switchboard_providers::Preset,
        settings::TitleMode,
        settings::ChatPrefs,
        settings::ToolPrefs,
        settings::Limits,
        settings::Retry,
        settings::SearchBackend,
        settings::WebPrefs,
        settings::Settings,
        switchboard_providers::Capabilities,
        contract::ProviderKindInfo,
        core::SourceStatus,
        mcp::ServerConfig,
        mcp::SamplingModel,
        mcp::OfferedTool,
        mcp::HeldTool,
        mcp::ServerDetail,
        mcp::McpServerInfo,
        mcp::McpEdited,
        mcp::McpOverview,
        mcp::ImportedServer,
        mcp::ImportPreview,
        mcp::ImportSource,
        mcp::Offers,
        mcp::LogLevel,
        mcp::PromptArgument,
        mcp::PromptInfo,
        mcp::McpPrompts,
        mcp::PromptRole,
        mcp::PromptMessageText,
        mcp::PromptMessages,
        mcp::McpResource,
        mcp::ResourceTemplateInfo,
        mcp::McpResources,
        mcp::McpResourceUpdate,
        mcp::McpResourceText,
        mcp::CompletionRef,
        mcp::Completion,
        serde_json::Value,
        switchboard_tools::HttpToolConfig,
        switchboard_tools::CommandToolConfig,
        defined::DefinedKind,
        defined::DefinedState,
        defined::DefinedToolInfo,
        defined::DefinedToolsOverview,
        defined::DefinedConfig,
        defined::TryResult,
        switchboard_service::openapi_docs::OpenApiRequest,
        switchboard_service::openapi_docs::OpenApiPreview,
        switchboard_service::openapi_docs::OpenApiScheme,
        switchboard_service::openapi_docs::OpenApiOperation,
        switchboard_service::openapi_docs::OpenApiImport,
        switchboard_service::openapi_docs::OpenApiSource,
        switchboard_service::openapi_docs::OpenApiWindowRequest,
        switchboard_service::openapi_docs::OpenApiWindowPreview,
        switchboard_service::openapi_docs::PickedFile,
        store::NestedEvent,
        switchboard_service::agents::AgentsFile,
        switchboard_service::agents::Toolset,
        switchboard_service::agents::AgentConfig,
        switchboard_service::agents::AgentInput,
        switchboard_service::agents::InputKind,
        switchboard_service::agents::AgentInfo,
        switchboard_service::agents::ToolsetInfo,
        switchboard_service::agents::AgentsOverview,
    );
    // `as const` keeps the literal values as types; `satisfies` ties each to the generated type.
    let mut constant = |name: &str, doc: &str, value: &dyn erased::Json, ty: Option<&str>| {
        out.push_str(&format!("/** {doc} */\nexport const {name} = {} as const", value.json()));
        if let Some(ty) = ty {
            out.push_str(&format!(" satisfies {ty}"));
        }
        out.push_str(";\n\n");
    };
    use switchboard_service::contract;
    constant(
        "ENGINE_DEFAULTS",
        "What an unset limit means: the engine's defaults (`EngineConfig::default()`).",
        &contract::engine_defaults(),
        Some("{ limits: Limits; retry: Retry }"),
    );
    constant(
        "LIMIT_BOUNDS",
        "The range of every limit (`settings::LIMIT_BOUNDS`); `update_settings` refuses values outside it.",
        &contract::limit_bounds(),
        Some(
            "{ limits: Record<keyof Limits, { min: number; max: number }>; retry: Record<keyof Retry, { min: number; max: number }> }",
        ),
    );
    constant("ERROR_KINDS", "Every `ErrorKind`.", &contract::ERROR_KINDS, Some("readonly ErrorKind[]"));
    constant(
        "APPROVAL_CHOICES",
        "Every `ApprovalChoice`, in declaration order.",
        &contract::APPROVAL_CHOICES,
        Some("readonly ApprovalChoice[]"),
    );
    constant(
        "PROVIDER_KINDS",
        "Every provider kind, in the order pickers list them.",
        &contract::provider_kinds(),
        Some("readonly ProviderKindInfo[]"),
    );
    constant(
        "PROVIDER_PRESETS",
        "The services and local servers Add provider offers, with kind and address filled in.",
        &switchboard_providers::PRESETS,
        Some("readonly Preset[]"),
    );
    constant(
        "OPEN_PAGE",
        "How many of a conversation's last messages `open_conversation` returns.",
        &switchboard_service::OPEN_PAGE,
        None,
    );
    constant(
        "AGENT_NAME_MAX",
        "The longest name of an agent or a toolset (`agents::NAME_MAX_CHARS`).",
        &switchboard_service::agents::NAME_MAX_CHARS,
        None,
    );
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// JSON for any serializable value, behind a trait object so one closure takes them all.
mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: super::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string_pretty(self).expect("a contract value serializes")
        }
    }
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
