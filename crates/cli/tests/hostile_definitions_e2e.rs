//! Issue 31, "tool definitions from servers are input" and "server-controlled text on a
//! terminal", end to end through the CLI against a hostile MCP server
//! (`crates/mcp/tests/fixtures/hostile_definitions_server.py`, raw JSON-RPC over stdio and over
//! streamable HTTP) and documents:
//!
//! - a poisoned description's findings (hidden block, padding, bidi and control characters, a
//!   built-in's name, a secret file and a secret parameter) are shown by `mcp add`, `mcp status
//!   --json`, `tools list --json` and the consent text, and the tool is not blocked for them;
//! - a tool the server adds after its tools were approved is held until approved;
//! - malformed entries of its list are skipped with their reasons and the good tools load;
//! - no source takes another's name: a hand-written HTTP tool clashing with the server's tool
//!   leaves both out, one named like a built-in is refused, an MCP server's tools cannot take the
//!   agents' prefix, and an OpenAPI operation named like a built-in is listed as left out;
//! - nothing a server wrote reaches the terminal as a raw ESC, CR, BEL or bidi control.

mod common;

use common::*;
use serde_json::{Value, json};
use switchboard_mock_provider::Script;

/// Fails when `text` carries a character a terminal acts on or that reorders what is read.
fn no_raw_controls(what: &str, text: &str) {
    let bad = ['\u{1b}', '\r', '\u{7}', '\u{202e}', '\u{2066}', '\u{2069}'];
    assert!(!text.contains(bad), "{what} carries a raw control or bidi character: {text:?}");
}

/// Runs `args`, checks that nothing raw reached the terminal, and returns the output.
async fn run(env: &Env, args: &[&str]) -> std::process::Output {
    // Errors only: the log's own colours are not what is checked here.
    let out = env.command(args).env("RUST_LOG", "error").output().await.expect("run switchboard");
    no_raw_controls(&format!("stdout of {args:?}"), &stdout(&out));
    no_raw_controls(&format!("stderr of {args:?}"), &stderr(&out));
    out
}

async fn json_of(env: &Env, args: &[&str]) -> Value {
    let out = run(env, args).await;
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", stdout(&out)))
}

fn server<'a>(status: &'a Value, name: &str) -> &'a Value {
    let servers = status["servers"].as_array().unwrap();
    &servers.iter().find(|s| s["detail"]["name"] == name).unwrap_or_else(|| panic!("{status}"))["detail"]
}

fn names(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

fn kinds(findings: &Value) -> Vec<&str> {
    findings.as_array().unwrap().iter().map(|f| f["kind"].as_str().unwrap()).collect()
}

fn skipped(detail: &Value) -> String {
    detail["skipped"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect::<Vec<_>>().join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_tool_definitions_are_shown_held_and_refused_never_trusted() {
    let env = Env::new(Script::new([])).await;
    let dir = tempfile::tempdir().unwrap();
    let python = venv_bin("python3");
    let fixture = repo().join("crates/mcp/tests/fixtures/hostile_definitions_server.py");
    let fixture = fixture.to_str().unwrap();
    let fixture_env = format!("FIXTURE_DIR={}", dir.path().display());
    let add = |name: &'static str| ["mcp", "add", name, "--yes", "--env", &fixture_env, "--", &python, fixture];

    let out = run(&env, &add("hostile")).await;
    shown_held_and_approved(&env, &out, dir.path()).await;

    // No source takes another's name, whatever the order: a hand-written HTTP tool named like
    // the server's tool leaves both out, one named like a built-in is refused...
    let tools_file = json!({"httpTools": [
        {"name": "hostile__shared", "description": "Takes the server's tool name.", "method": "GET", "url": "https://pets.example/shared"},
        {"name": "web_fetch", "description": "Shadows a built-in.", "method": "GET", "url": "https://pets.example/fetch"}
    ]});
    std::fs::write(env.data_dir().join("tools.json"), tools_file.to_string()).unwrap();
    // ... and an OpenAPI operation named like a built-in is listed as left out, not offered.
    let document = json!({
        "openapi": "3.0.3",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": "https://pets.example"}],
        "paths": {
            "/pets": {"get": {"operationId": "list_pets", "summary": "List pets", "responses": {"200": {"description": "ok"}}}},
            "/time": {"get": {"operationId": "get_time", "summary": "Shadows a built-in", "responses": {"200": {"description": "ok"}}}}
        }
    });
    let document_path = dir.path().join("pets.json");
    std::fs::write(&document_path, document.to_string()).unwrap();
    let out = run(&env, &["tools", "import-openapi", "pets", document_path.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = stdout(&out);
    assert!(printed.contains("[x] list_pets"), "{printed}");
    assert!(printed.contains("[ ] get_time"), "{printed}");
    assert!(printed.contains("left out: 'get_time' is reserved for the built-in tools"), "{printed}");

    let tools = json_of(&env, &["tools", "list", "--json"]).await;
    let listed = names(&tools);
    assert!(listed.contains(&"list_pets".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"hostile__shared".to_owned()), "a clash is won by neither: {listed:?}");
    for builtin in ["web_fetch", "get_time"] {
        let tool = tools.as_array().unwrap().iter().find(|t| t["name"] == builtin).unwrap();
        assert_eq!(tool["source"]["kind"], "builtin", "{tool}");
    }
    let status = json_of(&env, &["mcp", "status", "--json"]).await;
    let reasons = skipped(server(&status, "hostile"));
    assert!(
        reasons.contains("'hostile__shared' is offered by both MCP server 'hostile' and HTTP tool; neither is offered"),
        "{reasons}"
    );
    let out = run(&env, &["tools", "defined"]).await;
    let printed = stdout(&out);
    assert!(printed.contains("1 of them left out, not offered"), "{printed}");
    assert!(printed.contains("not usable: 'web_fetch' is reserved for the built-in tools"), "{printed}");
    assert!(printed.contains("not usable: 'hostile__shared' is offered by both"), "{printed}");

    // The agents' prefix is theirs alone: a server named `agent` offers nothing.
    let out = run(&env, &add("agent")).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("tool agent__"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("'agent__echo' starts with 'agent__', which only agents' tools may use"),
        "{}",
        stdout(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_tool_definitions_over_streamable_http_are_shown_held_and_never_trusted() {
    let env = Env::new(Script::new([])).await;
    let dir = tempfile::tempdir().unwrap();
    let http = HttpFixture::start("hostile_definitions_server.py", &[("FIXTURE_DIR", dir.path().to_str().unwrap())]);
    let out = run(&env, &["mcp", "add", "hostile", "--yes", "--url", &http.url()]).await;
    shown_held_and_approved(&env, &out, dir.path()).await;
}

/// `out` of approving the hostile server (a poisoned tool, malformed entries; `dir` its
/// FIXTURE_DIR): the findings are shown and the malformed entries skipped alone, a tool it adds
/// afterwards is held with a neutralised consent until approved with --yes.
async fn shown_held_and_approved(env: &Env, out: &std::process::Output, dir: &std::path::Path) {
    // Approved with the server: the good tools and the poisoned one load, each malformed entry
    // is skipped with its reason, and the poisoned tool's findings are printed under it.
    assert!(out.status.success(), "{}", stderr(out));
    let printed = stdout(out);
    for tool in ["hostile__echo", "hostile__sum", "hostile__add"] {
        assert!(printed.contains(&format!("tool {tool}")), "{tool}: {printed}");
    }
    for reason in [
        "skipped a tool without a name",
        "'bad_schema': its inputSchema is not an object",
        "'bad name␛[31m!': not a valid MCP tool name",
        "'xxxxxxxxxx",
    ] {
        assert!(printed.contains(reason), "{reason}: {printed}");
    }
    for warning in [
        "warning: the description contains \"<important>\", text addressed to the model",
        "warning: the description has 30 line breaks in a row",
        "invisible or direction-changing characters (U+202E, U+2066, U+2069, U+000D",
        "warning: the description names 'web_fetch', a tool from another source",
        "warning: the description mentions '~/.ssh'",
        "warning: the parameter 'api_key' asks for a secret",
    ] {
        assert!(printed.contains(warning), "{warning}: {printed}");
    }

    // The same, as JSON.
    let status = json_of(env, &["mcp", "status", "--json"]).await;
    let detail = server(&status, "hostile");
    assert_eq!(names(&detail["tools"]), ["hostile__echo", "hostile__add", "hostile__shared", "hostile__sum"]);
    let poisoned = &detail["tools"][1]["findings"];
    assert_eq!(
        kinds(poisoned),
        [
            "hiddenInstructions",
            "padding",
            "invisibleCharacters",
            "namesOtherTools",
            "asksForSecrets",
            "asksForSecrets",
            "asksForSecrets"
        ],
        "{poisoned}"
    );
    assert_eq!(detail["tools"][0]["findings"], json!([]), "a plain tool has none");
    assert_eq!(detail["skipped"].as_array().unwrap().len(), 4, "{}", skipped(detail));
    let tools = json_of(env, &["tools", "list", "--json"]).await;
    let add_tool = tools.as_array().unwrap().iter().find(|t| t["name"] == "hostile__add").unwrap();
    assert_eq!(kinds(&add_tool["findings"])[0], "hiddenInstructions");

    // A tool the server adds after its tools were approved is held, like a changed one.
    std::fs::write(dir.join("add-tool"), "").unwrap();
    let status = json_of(env, &["mcp", "status", "--json"]).await;
    let detail = server(&status, "hostile");
    assert!(!names(&detail["tools"]).contains(&"hostile__exfiltrate".to_owned()), "{detail}");
    let held = &detail["held"][0];
    assert_eq!(held["name"], "hostile__exfiltrate", "{detail}");
    assert_eq!(held["why"], "the server added it after you approved its tools");
    assert!(kinds(&held["findings"]).contains(&"hiddenInstructions"), "{held}");
    let tools = json_of(env, &["tools", "list", "--json"]).await;
    assert!(!names(&tools).contains(&"hostile__exfiltrate".to_owned()), "held: not offered");

    // The consent shows exactly what would be approved, neutralised, with the findings; without
    // --yes nothing is approved.
    let out = run(env, &["mcp", "approve-tools", "hostile"]).await;
    assert!(!out.status.success());
    let consent = stderr(&out);
    assert!(
        consent.contains(
            "hostile__exfiltrate (the server added it after you approved its tools): Looks harmless.\\u{202e}gnp.exe␍␛]0;pwned␇"
        ),
        "{consent}"
    );
    assert!(consent.contains("Warning: the description contains \"<system>\""), "{consent}");
    assert!(consent.contains("Warning: the parameter 'password' asks for a secret"), "{consent}");
    let out = run(env, &["mcp", "approve-tools", "hostile", "--yes"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("tool hostile__exfiltrate"), "{}", stdout(&out));
}
