//! MCP servers through the CLI and the loop: `switchboard mcp ...` manages the config the app
//! shares, the person confirms each command line with `--yes`, and `chat` offers the servers'
//! tools to the model like built-ins. The servers are the reference ones from npm and PyPI that
//! `scripts/setup.sh` installs.

mod common;

use common::*;
use switchboard_mock_provider::{Reply, Script};

fn time_server() -> String {
    venv_bin("mcp-server-time")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_added_from_the_cli_run_only_when_confirmed_and_their_tools_work_in_the_loop() {
    let env = Env::new(Script::new([
        Reply::tool_call("c1", "every__echo", r#"{"message":"grüße ✓ 日本"}"#),
        Reply::text("Done."),
    ]))
    .await;

    // Without --yes nothing runs: the exact command line is shown and the server waits.
    let out = env.run(&["mcp", "add", "time", "--", &time_server(), "--local-timezone", "Europe/Berlin"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("Run this program for the MCP server 'time'?"), "{}", stderr(&out));
    assert!(stderr(&out).contains(&format!("{} --local-timezone Europe/Berlin", time_server())), "{}", stderr(&out));
    assert!(stdout(&out).contains("needs approval"), "{}", stdout(&out));

    let out = env.run(&["mcp", "add", "every", "--yes", "--", &everything(), "stdio"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("ready"), "{}", stdout(&out));
    assert!(stdout(&out).contains("tool every__echo"), "{}", stdout(&out));

    // The config is Claude Desktop's format, in the data dir the tests chose.
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.data_dir().join("mcp.json")).unwrap()).unwrap();
    assert_eq!(config["mcpServers"]["every"]["args"], serde_json::json!(["stdio"]));

    // `tools list` starts the servers: the approved one's tools are there, the other is named.
    let out = env.run(&["tools", "list"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("every__echo"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("time__get_current_time"), "not approved, not offered");
    assert!(stderr(&out).contains("mcp:time is not available"), "{}", stderr(&out));

    let out = env.run(&["mcp", "approve", "time", "--yes"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("tool time__get_current_time"), "{}", stdout(&out));

    // The loop calls the MCP tool with non-ASCII arguments and the model gets its result.
    // MCP tools ask first; without a terminal nothing can answer, so the call is denied...
    let (out, events) = env.chat_json(&["Echo something"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let denied = of_type(&events, "toolResult");
    assert_eq!(denied[0]["status"], "denied", "{events:?}");
    assert!(stderr(&out).contains("--approve-all"), "{}", stderr(&out));
    env.mock.push(Reply::tool_call("c1", "every__echo", r#"{"message":"grüße ✓ 日本"}"#));
    env.mock.push(Reply::text("Done."));
    // ... unless the person allows it.
    let (out, events) = env.chat_json(&["--approve-all", "Echo something"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result = of_type(&events, "toolResult");
    assert_eq!(result.len(), 1, "{events:?}");
    assert_eq!(result[0]["output"], "Echo: grüße ✓ 日本");
    let requests = env.mock.requests();
    let first = &requests[2].body;
    let tools: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"every__echo") && tools.contains(&"time__get_current_time"), "{tools:?}");
    let system = first["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.contains("Server instructions are working!"), "the server's instructions reach the model: {system}");
    assert_eq!(system.matches("Instructions from the MCP server 'every'").count(), 1, "once, not once per tool");

    // An edit of the file on disk changes the command: it must be approved again.
    let mut edited = config.clone();
    edited["mcpServers"]["time"] = serde_json::json!({"command": time_server(), "args": ["--local-timezone", "UTC"]});
    std::fs::write(env.data_dir().join("mcp.json"), edited.to_string()).unwrap();
    let out = env.run(&["mcp", "status"]).await;
    assert!(stdout(&out).contains("time") && stdout(&out).contains("needs approval"), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_config_a_missing_command_and_a_missing_key_each_get_a_clear_message() {
    let env = Env::new(Script::default()).await;
    let path = env.data_dir().join("mcp.json");

    std::fs::write(&path, r#"{"mcpServers": {"t": {"comand": "x"}}}"#).unwrap();
    let out = env.run(&["mcp", "list"]).await;
    assert!(stderr(&out).contains("unknown field `comand`"), "{}", stderr(&out));
    let out = env.run(&["tools", "list"]).await;
    assert!(out.status.success(), "a broken MCP config never stops the built-ins: {}", stderr(&out));
    assert!(stdout(&out).contains("get_time"), "{}", stdout(&out));

    std::fs::remove_file(&path).unwrap();
    let out = env.run(&["mcp", "add", "ghost", "--yes", "--", "/nonexistent/mcp-server"]).await;
    assert!(stdout(&out).contains("'/nonexistent/mcp-server' was not found"), "{}", stdout(&out));

    // A credential needs a writable key store; with the keychain off nothing is written.
    let out =
        env.run(&["mcp", "add", "gh", "--yes", "--env", "GITHUB_TOKEN=ghp_secret123", "--", &time_server()]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("keychain"), "{}", stderr(&out));
    let file = std::fs::read_to_string(&path).unwrap();
    assert!(!file.contains("ghp_secret123") && !file.contains("\"gh\""), "{file}");

    // A reference to a key that is not set says which key.
    let mut config: serde_json::Value = serde_json::from_str(&file).unwrap();
    config["mcpServers"]["gh"] =
        serde_json::json!({"command": time_server(), "env": {"GITHUB_TOKEN": "${secret:mcp-gh-GITHUB_TOKEN}"}});
    std::fs::write(&path, config.to_string()).unwrap();
    let out = env.run(&["mcp", "approve", "gh", "--yes"]).await;
    assert!(stdout(&out).contains("the key 'mcp-gh-GITHUB_TOKEN' it needs is not set"), "{}", stdout(&out));
    let out = env
        .command(&["mcp", "status"])
        .env("SWITCHBOARD_KEY_MCP_GH_GITHUB_TOKEN", "ghp_fromenv")
        .output()
        .await
        .unwrap();
    let status = stdout(&out);
    assert!(status.lines().any(|l| l.starts_with("gh ") && l.contains("ready")), "{status}");
    assert!(!status.contains("ghp_fromenv"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn importing_a_claude_desktop_config_shows_what_it_adds_and_asks_before_running() {
    let env = Env::new(Script::default()).await;
    let claude = env.data_dir().join("claude_desktop_config.json");
    let config = serde_json::json!({
        "mcpServers": {
            "time server": {"command": time_server(), "args": []},
            "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer sk-not-moved"}}
        },
        "globalShortcut": "Ctrl+Space"
    });
    std::fs::write(&claude, config.to_string()).unwrap();
    let out = env.run(&["mcp", "import", claude.to_str().unwrap()]).await;
    // The remote one has a credential and the keychain is off: nothing is imported, and why.
    assert!(!out.status.success());
    assert!(stderr(&out).contains("keychain"), "{}", stderr(&out));

    let config = serde_json::json!({"mcpServers": {"time server": {"command": time_server()}}});
    std::fs::write(&claude, config.to_string()).unwrap();
    let out = env.run(&["mcp", "import", claude.to_str().unwrap()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("time-server      added"), "{}", stdout(&out));
    assert!(stdout(&out).contains("'time server' is named 'time-server'"), "{}", stdout(&out));
    assert!(stderr(&out).contains("Nothing was run"), "{}", stderr(&out));
    let out = env.run(&["mcp", "list"]).await;
    assert!(stdout(&out).contains("needs approval"), "{}", stdout(&out));
    let out = env.run(&["mcp", "import", claude.to_str().unwrap(), "--yes"]).await;
    assert!(stdout(&out).contains("kept as it is"), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_whose_schema_is_not_json_schema_is_left_out_and_its_server_says_why() {
    let env = Env::new(Script::default()).await;
    let fixture_dir = tempfile::tempdir().unwrap();
    let script = repo().join("crates/mcp/tests/fixtures/fixture_server.py");
    let dir_env = format!("FIXTURE_DIR={}", fixture_dir.path().display());
    let out = env
        .run(&["mcp", "add", "fx", "--yes", "--env", &dir_env, "--", &venv_bin("python"), script.to_str().unwrap()])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["mcp", "status"]).await;
    let status = stdout(&out);
    assert!(status.contains("tool fx__hello"), "the other tools load: {status}");
    assert!(!status.contains("tool fx__broken_schema"), "{status}");
    assert!(
        status.contains("skipped tool 'fx__broken_schema' has an invalid parameter schema"),
        "the reason is listed under its server: {status}"
    );
    let out = env.run(&["tools", "list"]).await;
    assert!(stdout(&out).contains("fx__hello") && !stdout(&out).contains("fx__broken_schema"), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_edit_changes_what_was_given_asks_before_a_new_command_runs_and_refuses_a_taken_name() {
    let env = Env::new(Script::default()).await;
    let out = env.run(&["mcp", "add", "time", "--yes", "--", &time_server(), "--local-timezone", "UTC"]).await;
    assert!(stdout(&out).contains("ready"), "{}", stdout(&out));
    let out = env.run(&["mcp", "add", "remote", "--url", "http://127.0.0.1:9/mcp"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    // A new name another server has is refused, and nothing changes.
    let before = std::fs::read_to_string(env.data_dir().join("mcp.json")).unwrap();
    let out = env.run(&["mcp", "edit", "time", "--rename", "remote"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("already an MCP server named 'remote'"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(env.data_dir().join("mcp.json")).unwrap(), before);

    // New arguments: the new command line is shown and runs only with --yes.
    let out = env
        .run(&["mcp", "edit", "time", "--env", "TZ=UTC", "--", &time_server(), "--local-timezone", "Europe/Oslo"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("--local-timezone Europe/Oslo"), "{}", stderr(&out));
    assert!(stdout(&out).contains("needs approval"), "{}", stdout(&out));
    let out = env.run(&["mcp", "edit", "time", "--rename", "clock", "--yes"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("clock") && stdout(&out).contains("ready"), "{}", stdout(&out));
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.data_dir().join("mcp.json")).unwrap()).unwrap();
    assert_eq!(config["mcpServers"]["clock"]["args"], serde_json::json!(["--local-timezone", "Europe/Oslo"]));
    assert_eq!(config["mcpServers"]["clock"]["env"]["TZ"], "UTC");
    assert!(config["mcpServers"].get("time").is_none());

    let out = env.run(&["mcp", "edit", "ghost", "--url", "http://127.0.0.1:9/x"]).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no MCP server named 'ghost'"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_readme_snippet_pasted_on_stdin_adds_its_server_and_asks_before_running() {
    let env = Env::new(Script::default()).await;
    let paste = |text: String, yes: bool| {
        let mut cmd = env.command(if yes { &["mcp", "import", "-", "--yes"] } else { &["mcp", "import", "-"] });
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        async move {
            use tokio::io::AsyncWriteExt;
            let mut child = cmd.spawn().unwrap();
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(text.as_bytes()).await.unwrap();
            drop(stdin);
            child.wait_with_output().await.unwrap()
        }
    };
    // The entry alone, as READMEs show it (no braces around it), with a comment in it.
    let snippet = format!("\"time\": {{\n  // the time server\n  \"command\": {:?}\n}}", time_server());
    let out = paste(snippet.clone(), false).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("time             added"), "{}", stdout(&out));
    assert!(stderr(&out).contains("Nothing was run"), "{}", stderr(&out));
    let out = env.run(&["mcp", "list"]).await;
    assert!(stdout(&out).contains("needs approval"), "{}", stdout(&out));
    // Not a server: said, nothing added.
    let out = paste("{\"name\": \"x\"}".into(), true).await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("No MCP server in the pasted JSON"), "{}", stderr(&out));
}
