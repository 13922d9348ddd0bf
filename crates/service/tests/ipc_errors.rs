//! The errors the UI's fake backend throws, produced by the real service. Each case below runs one
//! bad input the fake handles (`ui/src/lib/ipc/fake/`) through a real [`Service`] (the store in a
//! temporary folder, keys in memory) and keeps the `{kind, message, retryable}` the shell would
//! send for it, with the parts that come from the input written as `{placeholders}` the fake fills
//! in. So a UI test of an error path meets the error the app really shows. This test fails when the
//! committed `ui/src/lib/ipc/errors.generated.json` is stale; regenerate it with
//! `UPDATE_IPC_ERRORS=1 cargo test -p switchboard-service --test ipc_errors`.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use switchboard_core::{ChatEvent, EventSink};
use switchboard_service::ipc::{IpcError, SendRequest};
use switchboard_service::{Refuse, Service};
use switchboard_store::Store;

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ui/src/lib/ipc/errors.generated.json");

struct Discard;

/// A browser that is never reached (every sign-in below fails before it).
struct NoBrowser;

impl switchboard_service::mcp::Browser for NoBrowser {
    fn open(&self, _: &str) -> Result<(), String> {
        Err("no browser in this test".into())
    }
}

impl EventSink for Discard {
    fn emit(&self, _: ChatEvent) {}
}

/// The cases, by the name the fake asks for.
#[derive(Default)]
struct Errors(BTreeMap<&'static str, Value>);

impl Errors {
    /// Keeps the error of `result` as case `name` (see [`template`]).
    fn add<T: std::fmt::Debug>(
        &mut self,
        name: &'static str,
        result: switchboard_service::Result<T>,
        vars: &[(&str, &str)],
    ) {
        let previous = self.0.insert(name, template(name, result, vars));
        assert!(previous.is_none(), "case `{name}` twice");
    }

    /// Another bad input the fake answers with case `name`: the service must answer it the same.
    fn same_as<T: std::fmt::Debug>(
        &self,
        name: &'static str,
        result: switchboard_service::Result<T>,
        vars: &[(&str, &str)],
    ) {
        assert_eq!(template(name, result, vars), self.0[name], "the fake answers this input with `{name}`");
    }

    /// An input the fake once refused that the service accepts: the fake accepts it too.
    fn accepts<T: std::fmt::Debug>(name: &str, result: switchboard_service::Result<T>) {
        if let Err(e) = result {
            panic!("`{name}`: the service now refuses it ({e}); add it as a case and make the fake throw it");
        }
    }
}

/// The error of `result` as `{kind, message, retryable}`, each `(placeholder, value)` written as
/// `{placeholder}` wherever `value` appears in the message (at least once, or the case fails).
fn template<T: std::fmt::Debug>(name: &str, result: switchboard_service::Result<T>, vars: &[(&str, &str)]) -> Value {
    let e = IpcError::from(result.expect_err(&format!("case `{name}`: the service accepted the bad input")));
    let mut message = e.message.clone();
    for (placeholder, value) in vars {
        assert!(message.contains(value), "case `{name}`: `{value}` is not in the message: {}", e.message);
        message = message.replace(value, &format!("{{{placeholder}}}"));
    }
    json!({ "kind": e.kind, "message": message, "retryable": e.retryable })
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

/// A fresh service over a temporary folder, and its store.
fn service() -> (tempfile::TempDir, Store, Service) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let service = Service::new(store.clone(), Arc::new(switchboard_secrets::MemoryStore::new())).unwrap();
    (dir, store, service)
}

fn profile(name: &str) -> Value {
    json!({ "name": name, "kind": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "gpt-test" })
}

fn generate() -> Value {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut out = Errors::default();

    // ---- without any provider profile ------------------------------------------------------------
    let (dir, store, s) = service();
    let ghost = "ghost-chat";
    out.add("conversationNotFound", s.open(ghost), &[("id", ghost)]);
    out.add("sendEmpty", s.send(SendRequest::text(None, "   "), Arc::new(Discard)), &[]);
    out.add("noProviderChosen", s.send(SendRequest::text(None, "Hello"), Arc::new(Discard)), &[]);
    out.add("noProfiles", rt.block_on(s.models(Some("ghost-profile"))), &[("name", "ghost-profile")]);

    // ---- attachments ------------------------------------------------------------------------------
    let name = ("name", "thing.bin");
    out.add("attachUnsupported", rt.block_on(s.attach_bytes("thing.bin", vec![0, 1, 0xFE, 0x80])), &[name]);
    out.add("attachSvg", rt.block_on(s.attach_bytes("thing.bin", b"<svg/>".to_vec())), &[name]);
    let broken = b"\x89PNG\r\n\x1a\nnot an image".to_vec();
    out.add("attachBadImage", rt.block_on(s.attach_bytes("thing.bin", broken)), &[name]);
    out.add("attachTooLarge", s.upload_begin("thing.bin", 500 * 1024 * 1024), &[name, ("size", "500.0 MB")]);
    out.add("attachEmpty", s.upload_begin("thing.bin", 0), &[name]);
    out.add("uploadNotFound", s.upload_chunk("upload-ghost", "AAAA"), &[("id", "upload-ghost")]);
    let upload = s.upload_begin("thing.bin", 4).unwrap();
    out.add("uploadChunkTooLarge", s.upload_chunk(&upload, &"A".repeat(2 * 1024 * 1024)), &[]);
    let upload = s.upload_begin("thing.bin", 4).unwrap();
    out.add("uploadOverSize", s.upload_chunk(&upload, "AAAAAAAA"), &[name]);
    let upload = s.upload_begin("thing.bin", 4).unwrap();
    out.add("uploadIncomplete", rt.block_on(s.upload_finish(&upload)), &[name]);
    out.add("attachmentNotFound", rt.block_on(s.attachment_preview("ghost-file")), &[("id", "ghost-file")]);
    out.same_as("attachmentNotFound", s.attachment_thumbnail("ghost-file"), &[("id", "ghost-file")]);

    // ---- conversations ------------------------------------------------------------------------
    let chat = store.begin_turn(None, "Hello", "alpha", "gpt-test").unwrap().conversation_id;
    out.add("titleEmpty", s.rename(&chat, "   "), &[]);
    out.add("deleteNotFound", s.delete(ghost), &[("id", ghost)]);
    out.add("regenerateNotFound", s.regenerate(ghost, None, None, Arc::new(Discard)), &[("id", ghost)]);
    out.add("chatToolConversationNotFound", s.set_chat_tool_disabled(ghost, "get_time", true), &[("id", ghost)]);
    Errors::accepts("disabling a tool the chat does not know", s.set_chat_tool_disabled(&chat, "ghost-tool", true));
    let source = ["get_time".to_owned(), "web_fetch".to_owned()];
    out.add("chatToolsConversationNotFound", s.set_chat_tools_disabled(ghost, &source, true), &[("id", ghost)]);
    out.same_as("conversationNotFound", s.set_chat_tools_disabled(ghost, &source, false), &[("id", ghost)]);
    Errors::accepts(
        "switching off tools the chat does not know",
        s.set_chat_tools_disabled(&chat, &["ghost-tool".to_owned()], true),
    );
    Errors::accepts("switching off no tools", s.set_chat_tools_disabled(&chat, &[], true));
    out.add("messageNotFound", s.older_messages(&chat, "ghost-message", 10), &[("id", "ghost-message")]);
    // ---- spend ----------------------------------------------------------------------------------
    out.same_as("messageNotFound", s.message_usage("ghost-message"), &[("id", "ghost-message")]);
    out.same_as("conversationNotFound", s.conversation_usage(ghost), &[("id", ghost)]);
    let reversed = switchboard_service::ipc::UsageQuery {
        by: switchboard_service::ipc::UsageGrouping::Day,
        split: None,
        since: Some(2),
        until: Some(1),
        utc_offset_minutes: None,
    };
    out.add("usagePeriodReversed", s.usage_report(&reversed), &[]);
    out.same_as("messageNotFound", s.set_message_pinned(&chat, "ghost-message", true), &[("id", "ghost-message")]);
    out.add("compactionNotFound", s.compaction(&chat, "ghost-compaction"), &[("id", "ghost-compaction")]);
    out.same_as(
        "compactionNotFound",
        s.set_compaction_undone(&chat, "ghost-compaction", true),
        &[("id", "ghost-compaction")],
    );
    out.add("compactStreaming", rt.block_on(s.compact_conversation(&chat)), &[]);
    // The tree: a chat whose answer is still streaming, then one whose answer is done.
    let first = s.open(&chat).unwrap().messages[0].id.clone();
    out.add("editStreaming", s.edit_message(&chat, &first, "Hi", None, Arc::new(Discard)), &[]);
    out.add("versionStreaming", s.delete_version(&chat, &first), &[]);
    let answered = store.begin_turn(None, "Hello", "alpha", "gpt-test").unwrap();
    store.recorder(&answered.message_id).emit(ChatEvent::Done {
        finish_reason: switchboard_core::FinishReason::Stop,
        usage: switchboard_core::Usage::default(),
        tool_calls_made: 0,
    });
    out.add("versionOnlyFirst", s.delete_version(&answered.conversation_id, &answered.user_message_id), &[]);
    out.add("versionNotFound", s.switch_version(&chat, "ghost-message"), &[("id", "ghost-message")]);
    out.add("instructionsTooLong", s.set_chat_instructions(&chat, &"x".repeat(20_001)), &[("length", "20001")]);
    out.add("approvalNotPending", s.resolve_approval("ghost-call", from(json!("once"))), &[("callId", "ghost-call")]);
    out.add(
        "setupBudgetInvalid",
        s.set_chat_setup(&chat, from(json!({ "budget": { "steps": 20000 } }))),
        &[("steps", "20000")],
    );
    out.add(
        "budgetNotPending",
        s.resolve_budget("ghost-pause", from(json!({ "choice": "stop" }))),
        &[("pauseId", "ghost-pause")],
    );
    out.add(
        "setupToolsetNotFound",
        s.set_chat_setup(&chat, from(json!({ "toolsets": ["ghost-set"] }))),
        &[("name", "ghost-set")],
    );
    out.add(
        "setupSummariserNotFound",
        s.set_chat_setup(&chat, from(json!({ "summariser": { "kind": "pick", "provider": "ghost-p", "model": "m" } }))),
        &[("name", "ghost-p")],
    );
    out.add(
        "grantNotFound",
        s.revoke_chat_grant(&chat, &from(json!({ "kind": "tool", "name": "ghost-tool" }))),
        &[("name", "ghost-tool")],
    );
    let host = from(json!({ "kind": "host", "name": "ghost.example" }));
    out.add("grantHostNotFound", s.revoke_chat_grant(&chat, &host), &[("name", "ghost.example")]);

    // ---- provider profiles ----------------------------------------------------------------------
    s.add_provider(&from(profile("alpha")), true).unwrap();
    out.add(
        "profileNotFound",
        rt.block_on(s.models(Some("ghost-profile"))),
        &[("name", "ghost-profile"), ("names", "alpha")],
    );
    out.add(
        "profileKind",
        s.add_provider(
            &from(json!({ "name": "beta", "kind": "ghost-kind", "baseUrl": "http://x.test", "model": null })),
            false,
        ),
        &[("kind", "ghost-kind")],
    );
    out.add("profileName", s.add_provider(&from(profile("bad name!")), false), &[("name", "bad name!")]);
    out.add(
        "profileBaseUrl",
        s.add_provider(
            &from(json!({ "name": "beta", "kind": "openai", "baseUrl": "ftp://x.test", "model": null })),
            false,
        ),
        &[("url", "ftp://x.test")],
    );
    let with_options = |options: Value| {
        from(
            json!({ "name": "beta", "kind": "openai", "baseUrl": "https://x.test/v1", "model": null, "options": options }),
        )
    };
    out.add("profileContextWindow", s.add_provider(&with_options(json!({ "contextWindow": 0 })), false), &[]);
    out.add("profileMaxOutput", s.add_provider(&with_options(json!({ "maxOutputTokens": 0 })), false), &[]);
    out.add(
        "profilePrices",
        s.add_provider(&with_options(json!({ "prices": { "input": -1.0, "output": 2.0 } })), false),
        &[],
    );
    out.same_as(
        "profileNotFound",
        s.remove_provider("ghost-profile"),
        &[("name", "ghost-profile"), ("names", "alpha")],
    );
    out.add(
        "sendConversationNotFound",
        s.send(SendRequest::text(Some(ghost.into()), "Hello"), Arc::new(Discard)),
        &[("id", ghost)],
    );
    let mut to_agent = SendRequest::text(None, "Hello");
    to_agent.agent = Some("ghost-agent".into());
    out.add("sendAgentNotFound", s.send(to_agent, Arc::new(Discard)), &[("name", "ghost-agent")]);
    let gone = SendRequest { attachments: vec!["0".repeat(64)], ..SendRequest::text(None, "Look") };
    out.add("sendAttachmentGone", s.send(gone, Arc::new(Discard)), &[]);
    let photo = include_bytes!("fixtures/attachments/photo.png").to_vec();
    let photo = rt.block_on(s.attach_bytes("photo.png", photo)).unwrap();
    let blind = SendRequest {
        model: Some("gpt-3.5-turbo".into()),
        attachments: vec![photo.id],
        ..SendRequest::text(None, "What is this?")
    };
    out.add("sendModelCannotSee", s.send(blind, Arc::new(Discard)), &[("model", "gpt-3.5-turbo")]);

    // ---- settings ----------------------------------------------------------------------------
    let mut settings = s.settings().unwrap();
    settings.default_provider = Some("ghost-profile".into());
    out.same_as("profileNotFound", s.update_settings(&settings), &[("name", "ghost-profile"), ("names", "alpha")]);
    let mut settings = s.settings().unwrap();
    settings.limits.max_iterations = Some(777);
    out.add(
        "settingsLimit",
        s.update_settings(&settings),
        &[("field", "limits.maxIterations"), ("min", "1"), ("max", "50"), ("value", "777")],
    );
    let mut settings: Value = serde_json::to_value(s.settings().unwrap()).unwrap();
    settings["web"]["searxngUrl"] = json!("ftp://searx.test");
    out.add("settingsSearxngUrl", s.update_settings(&from(settings.clone())), &[("url", "ftp://searx.test")]);
    settings["web"]["searxngUrl"] = Value::Null;
    settings["web"]["searchBackend"] = json!("searxng");
    out.add("settingsSearxngMissing", s.update_settings(&from(settings)), &[]);

    // ---- keys ------------------------------------------------------------------------------------
    out.add("keyName", s.set_key("bad name!", "value"), &[("name", "bad name!")]);
    out.add("keyEmpty", s.set_key("tracker", "  "), &[]);
    s.use_key_fallback(from(json!("environment"))).unwrap();
    out.add("keyEnvironment", s.set_key("tracker", "value"), &[]);
    s.use_key_fallback(from(json!("memory"))).unwrap();

    // ---- agents and toolsets -----------------------------------------------------------------------
    out.add("agentNotFound", s.remove_agent("ghost-agent"), &[("name", "ghost-agent")]);
    out.add("duplicateAgentNotFound", s.duplicate_agent("ghost-agent", "copy"), &[("name", "ghost-agent")]);
    out.add("toolsetNotFound", s.remove_toolset("ghost-set"), &[("name", "ghost-set")]);
    let agent = |v: Value| s.put_agent(from(v));
    out.add("agentName", agent(json!({ "name": "9 lives" })), &[("name", "9 lives")]);
    out.add(
        "agentSteps",
        agent(json!({ "name": "scout", "maxIterations": 777 })),
        &[("name", "scout"), ("steps", "777")],
    );
    out.add(
        "agentControlAndExclusive",
        agent(json!({ "name": "scout", "takesControl": true, "exclusive": true })),
        &[("name", "scout")],
    );
    out.add("agentToolset", agent(json!({ "name": "scout", "toolsets": ["ghost-set"] })), &[("toolset", "ghost-set")]);
    out.same_as(
        "profileNotFound",
        agent(json!({ "name": "scout", "profile": "ghost-profile" })),
        &[("name", "ghost-profile"), ("names", "alpha")],
    );
    let toolset = |v: Value| s.put_toolset(from(v));
    out.add("toolsetName", toolset(json!({ "name": "9 lives", "tools": [] })), &[("name", "9 lives")]);
    out.add("toolsetEmptyEntry", toolset(json!({ "name": "research", "tools": [" "] })), &[("name", "research")]);
    toolset(json!({ "name": "research", "tools": ["get_time"] })).unwrap();
    agent(json!({ "name": "scout", "toolsets": ["research"] })).unwrap();
    out.add("duplicateAgentExists", s.duplicate_agent("scout", "scout"), &[("name", "scout")]);
    out.add("toolsetInUse", s.remove_toolset("research"), &[("agent", "scout"), ("name", "research")]);

    // ---- defined tools -----------------------------------------------------------------------------
    out.add("definedToolNotFound", s.defined_tool_config("ghost-tool"), &[("name", "ghost-tool")]);
    out.add("definedToolRemoveNotFound", s.remove_defined_tool("ghost-tool"), &[("name", "ghost-tool")]);
    out.add("approveDefinedToolNotFound", s.approve_defined_tool("ghost-tool", &Refuse), &[("name", "ghost-tool")]);
    out.add("httpToolNotFound", rt.block_on(s.try_http_tool("ghost-tool", json!({}))), &[("name", "ghost-tool")]);
    let http = |v: Value| {
        let mut c =
            json!({ "name": "status", "description": "An API.", "method": "GET", "url": "https://api.example.com/" });
        c.as_object_mut().unwrap().extend(v.as_object().unwrap().clone());
        s.add_http_tool(from(c), &Refuse)
    };
    out.add("httpToolName", http(json!({ "name": "9 lives" })), &[("name", "9 lives")]);
    out.add("httpToolDescription", http(json!({ "description": " " })), &[("name", "status")]);
    out.add("httpToolUrl", http(json!({ "url": "api.example.com/x" })), &[("name", "status")]);
    out.add("httpToolHostPlaceholder", http(json!({ "url": "https://{{host}}.example.com/" })), &[("name", "status")]);
    out.add(
        "httpToolUrlKey",
        http(json!({ "url": "https://api.example.com/{{secret:tracker}}" })),
        &[("name", "status"), ("key", "tracker")],
    );
    out.add("httpToolBody", http(json!({ "body": { "a": 1 } })), &[("name", "status"), ("method", "GET")]);
    out.add("definedToolBuiltin", http(json!({ "name": "get_time" })), &[("name", "get_time")]);
    let command = |v: Value| {
        let mut c = json!({ "name": "say", "description": "Prints its text.", "argv": ["printf", "%s"] });
        c.as_object_mut().unwrap().extend(v.as_object().unwrap().clone());
        s.add_command_tool(from(c), &Refuse)
    };
    out.add("commandToolName", command(json!({ "name": "9 lives" })), &[("name", "9 lives")]);
    out.add("commandToolDescription", command(json!({ "description": " " })), &[("name", "say")]);
    out.add("commandToolProgram", command(json!({ "argv": [" "] })), &[("name", "say")]);
    out.add(
        "commandToolProgramPlaceholder",
        command(json!({ "argv": ["{{program}}"] })),
        &[("name", "say"), ("program", "{{program}}")],
    );
    out.add(
        "commandToolSecret",
        command(json!({ "argv": ["curl", "{{secret:tracker}}"] })),
        &[("name", "say"), ("secret", "tracker")],
    );
    http(json!({})).unwrap();
    out.add("definedToolOtherKind", command(json!({ "name": "status" })), &[("name", "status")]);
    out.add("httpToolNotHttp", rt.block_on(s.try_http_tool("say", json!({}))), &[("name", "say")]);

    // ---- OpenAPI documents --------------------------------------------------------------------------
    let request = |source: &str| from(json!({ "name": "petstore", "source": source }));
    // The reason is the operating system's words; the fake fills in this system's.
    let reason = std::fs::read("/nowhere/missing.json").unwrap_err().to_string();
    out.add(
        "openApiUnreadable",
        rt.block_on(s.preview_openapi(&request("/nowhere/missing.json"))),
        &[("source", "/nowhere/missing.json"), ("reason", &reason)],
    );
    // The window names a document by a URL or a file the person picked, never by a path.
    let picks = switchboard_service::openapi_docs::PickedFiles::default();
    let window = |source: Value| from(json!({ "name": "petstore", "source": source }));
    out.add(
        "openApiNotUrl",
        rt.block_on(s.preview_openapi_for_window(&picks, window(json!({ "kind": "url", "url": "/etc/hosts" })))),
        &[("url", "/etc/hosts")],
    );
    out.add(
        "openApiPickUnknown",
        rt.block_on(s.preview_openapi_for_window(&picks, window(json!({ "kind": "picked", "pick": "pick-9" })))),
        &[("pick", "pick-9")],
    );
    out.add(
        "openApiName",
        rt.block_on(s.import_openapi(from(json!({ "name": "9 lives!", "source": "/nowhere/missing.json" })), &Refuse)),
        &[("name", "9 lives!")],
    );

    let document = dir.path().join("petstore.json");
    std::fs::write(
        &document,
        json!({
            "openapi": "3.0.0",
            "info": { "title": "Petstore", "version": "1" },
            "servers": [{ "url": "https://petstore.example.com/v2" }],
            "paths": { "/pets": { "get": { "operationId": "listPets", "responses": { "200": { "description": "ok" } } } } }
        })
        .to_string(),
    )
    .unwrap();
    let source = document.to_str().unwrap();
    out.add(
        "openApiOperation",
        rt.block_on(s.import_openapi(
            from(json!({ "name": "petstore", "source": source, "include": ["ghost_operation"] })),
            &Refuse,
        )),
        &[("tool", "ghost_operation")],
    );

    // ---- MCP servers -------------------------------------------------------------------------------
    let ghost = "ghost-server";
    out.add("mcpRestartNotFound", rt.block_on(s.mcp_restart(ghost)), &[("name", ghost)]);
    out.add("mcpRemoveNotFound", rt.block_on(s.mcp_remove(ghost)), &[("name", ghost)]);
    out.add("mcpSetEnabledNotFound", rt.block_on(s.mcp_set_enabled(ghost, true, &Refuse)), &[("name", ghost)]);
    out.add("mcpApproveNotFound", rt.block_on(s.mcp_approve(ghost, &Refuse)), &[("name", ghost)]);
    out.add("mcpApproveToolsNotFound", s.mcp_approve_tools(ghost, &Refuse), &[("name", ghost)]);
    out.add("mcpSignOutNotFound", rt.block_on(s.mcp_sign_out(ghost)), &[("name", ghost)]);
    out.add("mcpSignInNotFound", rt.block_on(s.mcp_sign_in(ghost, &NoBrowser)), &[("name", ghost)]);
    let server = |v: Value| from(v);
    let stdio = || server(json!({ "type": "stdio", "command": "npx" }));
    out.add("mcpName", rt.block_on(s.mcp_add("bad name!", stdio(), &Refuse)), &[("name", "bad name!")]);
    out.add(
        "mcpUrl",
        rt.block_on(s.mcp_add("remote", server(json!({ "type": "http", "url": "ftp://mcp.test" })), &Refuse)),
        &[("name", "remote"), ("scheme", "ftp")],
    );
    out.add("mcpNothingToRun", rt.block_on(s.mcp_add("empty", server(json!({})), &Refuse)), &[("name", "empty")]);
    Errors::accepts("adding a server", rt.block_on(s.mcp_add("files", stdio(), &Refuse)));
    Errors::accepts(
        "adding a server of a name that exists (it is replaced)",
        rt.block_on(s.mcp_add("files", stdio(), &Refuse)),
    );
    Errors::accepts("adding a second server", rt.block_on(s.mcp_add("notes", stdio(), &Refuse)));
    out.add("mcpEditNameTaken", rt.block_on(s.mcp_edit("files", "notes", stdio(), &Refuse)), &[("name", "notes")]);
    out.add("mcpEditNotFound", rt.block_on(s.mcp_edit(ghost, ghost, stdio(), &Refuse)), &[("name", ghost)]);
    Errors::accepts("restarting a server not yet approved", rt.block_on(s.mcp_restart("files")));
    Errors::accepts("approving the tools of a server none of whose tools wait", s.mcp_approve_tools("files", &Refuse));

    serde_json::to_value(&out.0).unwrap()
}

#[test]
fn ipc_errors_are_fresh() {
    let fresh = serde_json::to_string_pretty(&generate()).unwrap() + "\n";
    if std::env::var_os("UPDATE_IPC_ERRORS").is_some() {
        std::fs::write(PATH, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(PATH).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/src/lib/ipc/errors.generated.json is stale: run `UPDATE_IPC_ERRORS=1 cargo test -p switchboard-service --test ipc_errors` and commit it"
    );
}
