//! The programs Switchboard starts for third parties (a stdio MCP server, a command tool) get a
//! minimal environment plus exactly what their entry names: none of the provider keys the CLI
//! was started with or holds in its key store, under any variable. A referenced key does arrive,
//! in the variable the entry gives it, and the consent text names it before anything runs.
//!
//! Each program writes the environment it was given to a file (not to its output, which the
//! redactor would mask): the check reads what the program really saw.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use switchboard_mock_provider::{Reply, Script};
use tokio::io::AsyncWriteExt;

/// The keys around the CLI: each kind's usual variable, the profile's own and another key's.
const IN_ENVIRONMENT: &[(&str, &str)] = &[
    ("OPENAI_API_KEY", "sk-test-envleak-openai-0001"),
    ("ANTHROPIC_API_KEY", "sk-ant-test-envleak-anthropic-0002"),
    ("GEMINI_API_KEY", "test-envleak-gemini-0003"),
    ("SWITCHBOARD_KEY_ENVCHECK", "sk-test-envleak-profile-0004"),
    ("SWITCHBOARD_KEY_TAVILY", "tvly-test-envleak-tavily-0005"),
];
/// The profile's key in the key store (the real Secret Service, under `scripts/with-keyring.sh`).
const IN_KEY_STORE: &str = "sk-test-envleak-keystore-0006";
/// The key the entry references, given to the CLI as `SWITCHBOARD_KEY_<NAME>`.
const REFERENCED: &str = "test-envleak-referenced-0007";

fn keyring() -> bool {
    std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_some()
}

/// A data dir whose provider profile is `envcheck`, with its key in the key store when the
/// tests have a throwaway Secret Service.
async fn setup(script: Script) -> Env {
    let env = Env::with_profile(script, "envcheck", "openai").await;
    if keyring() {
        let mut cmd = env.command(&["keys", "set", "envcheck"]);
        cmd.env_remove("SWITCHBOARD_KEYCHAIN").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child.stdin.take().unwrap().write_all(format!("{IN_KEY_STORE}\n").as_bytes()).await.unwrap();
        let out = child.wait_with_output().await.unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    } else {
        eprintln!("the key store part needs scripts/with-keyring.sh; the environment part runs");
    }
    env
}

/// `ARGS` run with every key of [`IN_ENVIRONMENT`] in the CLI's environment, the referenced
/// key as `variable`, and the keychain when there is one.
async fn with_keys(env: &Env, args: &[&str], variable: &str) -> std::process::Output {
    let mut cmd = env.command(args);
    cmd.envs(IN_ENVIRONMENT.iter().copied()).env(variable, REFERENCED);
    if keyring() {
        cmd.env_remove("SWITCHBOARD_KEYCHAIN");
    }
    cmd.output().await.unwrap()
}

/// Checks what a program was given: the variables its entry names with their values, every
/// other one from the minimal set, and no key of the CLI's anywhere, under any name.
fn assert_minimal(seen: &BTreeMap<String, String>, named: &[(&str, &str)]) {
    for (name, value) in named {
        assert_eq!(seen.get(*name).map(String::as_str), Some(*value), "{name} is missing: {seen:?}");
    }
    for (name, value) in seen {
        assert!(
            named.iter().any(|(n, _)| n == name) || switchboard_process::inherits(OsStr::new(name)),
            "the program inherited {name}={value}"
        );
        assert!(!name.starts_with("SWITCHBOARD_"), "the program inherited {name}");
        for (_, key) in IN_ENVIRONMENT {
            assert!(!value.contains(key), "a key of the CLI's environment arrived in {name}");
        }
        assert!(!value.contains(IN_KEY_STORE), "the key store's key arrived in {name}");
        if *name != "API_TOKEN" {
            assert!(!value.contains(REFERENCED), "the referenced key arrived in {name}, not only where it was named");
        }
    }
    // The program got what it needs to run.
    assert!(seen.contains_key("PATH") && seen.contains_key("HOME"), "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_gets_the_minimal_environment_and_only_the_key_its_entry_names() {
    let env = setup(Script::default()).await;
    let fixture = tempfile::tempdir().unwrap();
    let script = repo().join("crates/mcp/tests/fixtures/fixture_server.py");
    let config = serde_json::json!({"mcpServers": {"fx": {
        "command": venv_bin("python"),
        "args": [script],
        "env": {"FIXTURE_DIR": fixture.path(), "API_TOKEN": "${secret:envcheck-server-token}"}
    }}});
    std::fs::write(env.data_dir().join("mcp.json"), config.to_string()).unwrap();
    let variable = "SWITCHBOARD_KEY_ENVCHECK_SERVER_TOKEN";

    // Before it runs, the consent text names the key it will receive.
    let out = with_keys(&env, &["mcp", "approve", "fx"], variable).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("Run this program for the MCP server 'fx'?"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Keys it receives from your key store: 'envcheck-server-token'."),
        "{}",
        stderr(&out)
    );
    let report = fixture.path().join("environment.json");
    assert!(!report.exists(), "nothing runs before the person agrees");
    // The server's status, which Settings shows beside its button, says so too.
    let out = with_keys(&env, &["mcp", "list", "--json"], variable).await;
    assert!(stdout(&out).contains("It will receive the key 'envcheck-server-token'"), "{}", stdout(&out));

    let out = with_keys(&env, &["mcp", "approve", "fx", "--yes"], variable).await;
    assert!(stdout(&out).contains("tool fx__hello"), "{}\n{}", stdout(&out), stderr(&out));
    let seen = read_report(&report);
    let dir = fixture.path().display().to_string();
    assert_minimal(&seen, &[("API_TOKEN", REFERENCED), ("FIXTURE_DIR", &dir)]);
}

/// A program that writes the environment it was given to the file named by its argument (no
/// shell: a shell would add variables of its own, such as PWD).
const WRITE_ENVIRONMENT: &str = "import json, os, sys; open(sys.argv[1], 'w').write(json.dumps(dict(os.environ)))";

fn read_report(path: &Path) -> BTreeMap<String, String> {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_tool_gets_the_minimal_environment_and_only_the_key_its_entry_names() {
    let env = setup(Script::new([Reply::tool_call("c1", "envdump", "{}"), Reply::text("Done.")])).await;
    let out_dir = tempfile::tempdir().unwrap();
    let report = out_dir.path().join("env.txt");
    let report_arg = report.display().to_string();
    let python = venv_bin("python");
    let add = [
        "tools",
        "add-command",
        "envdump",
        "--description",
        "Writes its environment to a file.",
        "--env",
        "API_TOKEN={{secret:envcheck-cmd-token}}",
        "--env",
        "MODE=check",
        "--",
        &python,
        "-c",
        WRITE_ENVIRONMENT,
        &report_arg,
    ];
    let variable = "SWITCHBOARD_KEY_ENVCHECK_CMD_TOKEN";

    // Before it may run, the consent text names the key it will receive.
    let out = with_keys(&env, &add, variable).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("as the tool 'envdump'"), "{}", stderr(&out));
    assert!(stderr(&out).contains("Keys it receives from your key store: 'envcheck-cmd-token'."), "{}", stderr(&out));
    let mut confirmed = add.to_vec();
    confirmed.insert(3, "--yes");
    let out = with_keys(&env, &confirmed, variable).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let out = with_keys(&env, &["chat", "--json", "--approve-all", "Dump it"], variable).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(r#""status":"ok""#), "the tool ran: {}", stdout(&out));
    assert_minimal(&read_report(&report), &[("API_TOKEN", REFERENCED), ("MODE", "check")]);
}
