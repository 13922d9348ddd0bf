//! Keys: set from stdin, status without the value, an unusable keychain explained, and a known
//! key that never leaks into the data dir, the events or the logs.

mod common;

use common::*;
use std::process::Stdio;
use switchboard_mock_provider::{Reply, Script};
use tokio::io::AsyncWriteExt;

const KEY: &str = "sk-test-leakcheck-0123456789wxyz";

async fn run_with_stdin(mut cmd: tokio::process::Command, input: &str) -> std::process::Output {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).await.unwrap();
    child.wait_with_output().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unusable_keychain_is_explained_with_the_choices() {
    let env = Env::new(Script::default()).await;
    let mut cmd = env.command(&["keys", "set", "mock"]);
    cmd.env_remove("SWITCHBOARD_KEYCHAIN")
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/switchboard-test-bus");
    let out = run_with_stdin(cmd, "sk-test-whatever-123456\n").await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("error[auth]: The system keychain cannot be used"), "{err}");
    assert!(err.contains("environment variables"), "{err}");
    assert!(!err.contains("sk-test-whatever"), "the key is never echoed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_from_the_environment_show_status_without_the_value() {
    let env = Env::new(Script::default()).await;
    let out = env.command(&["keys", "status", "--json"]).env("SWITCHBOARD_KEY_MOCK", KEY).output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let keys: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mock = keys.as_array().unwrap().iter().find(|k| k["name"] == "mock").unwrap();
    assert_eq!(mock["isSet"], true);
    assert_eq!(mock["last4"], "wxyz");
    assert_eq!(mock["envVar"], "SWITCHBOARD_KEY_MOCK");
    assert!(!stdout(&out).contains(KEY));
    let tavily = keys.as_array().unwrap().iter().find(|k| k["name"] == "tavily").unwrap();
    assert_eq!(tavily["isSet"], false);
}

/// The real Secret Service round trip, and the leak check, run under `scripts/with-keyring.sh`
/// (a throwaway D-Bus session and keyring), which CI uses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_the_keychain_is_used_and_never_leaks() {
    if std::env::var_os("SWITCHBOARD_TEST_KEYRING").is_none() {
        eprintln!("skipped: run under scripts/with-keyring.sh to use a throwaway Secret Service");
        return;
    }
    let env = Env::new(Script::new([Reply::tool_call("c1", "get_time", "{}"), Reply::text("Done.")])).await;
    let keychain = |args: &[&str]| {
        let mut cmd = env.command(args);
        cmd.env_remove("SWITCHBOARD_KEYCHAIN");
        cmd
    };
    let out = run_with_stdin(keychain(&["keys", "set", "mock"]), &format!("{KEY}\n")).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("ends in wxyz"), "{}", stdout(&out));
    assert!(!stdout(&out).contains(KEY));

    let out = keychain(&["--log", "trace", "chat", "--json", "what time is it?"]).output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(env.mock.requests()[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert!(!stdout(&out).contains(KEY), "the key is in an event");
    assert!(!stderr(&out).contains(KEY), "the key is in a log line");
    for entry in walk(env.data_dir()) {
        let bytes = std::fs::read(&entry).unwrap();
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()), "the key is in {}", entry.display());
    }
    let status = keychain(&["keys", "status", "--json"]).output().await.unwrap();
    assert!(!stdout(&status).contains(KEY));
    assert!(stdout(&status).contains("the system keychain"), "{}", stdout(&status));

    let out = keychain(&["keys", "delete", "mock"]).output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let status = keychain(&["keys", "status", "--json"]).output().await.unwrap();
    let keys: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(keys[0]["isSet"], false);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
