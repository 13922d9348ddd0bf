//! At the terminal the person confirms a widening change with a flag they type: a profile moved
//! to another origin while its key is set needs `--allow-key-to-new-origin`, a loosened approval
//! or local addresses need `--yes`. Without the flag nothing changes and the error says why.

mod common;

use common::*;
use switchboard_mock_provider::{MockServer, Script};

const KEY: &str = "sk-test-confirm-0123456789wxyz";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moving_a_profile_with_a_key_to_another_origin_needs_the_flag() {
    let env = Env::new(Script::default()).await;
    // Another port on the same host is another origin.
    let other = MockServer::start(Script::default()).await;
    let add = |flag: Option<&str>| {
        let url = other.base_url();
        let mut args = vec!["providers", "add", "mock", "--base-url", &url];
        args.extend(flag);
        let mut cmd = env.command(&args);
        cmd.env("SWITCHBOARD_KEY_MOCK", KEY);
        cmd
    };
    let out = add(None).output().await.unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("error[config]: Not changed"), "{err}");
    assert!(
        err.contains(&format!("Send the key of 'mock' to {} instead of {}?", origin(&other), origin(&env.mock))),
        "{err}"
    );
    assert!(err.contains("--allow-key-to-new-origin"), "{err}");
    assert!(!err.contains(KEY));
    let listed = env.run(&["providers", "list", "--json"]).await;
    assert!(stdout(&listed).contains(&env.mock.base_url()), "the profile was not changed");

    let out = add(Some("--allow-key-to-new-origin")).output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = env.run(&["providers", "list", "--json"]).await;
    assert!(stdout(&listed).contains(&other.base_url()), "{}", stdout(&listed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_key_or_with_a_path_change_no_flag_is_needed() {
    let env = Env::new(Script::default()).await;
    let other = MockServer::start(Script::default()).await;
    // No key anywhere: the profile moves freely.
    let out = env.run(&["providers", "add", "mock", "--base-url", &other.base_url()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // With a key, a new path on the same origin asks nothing.
    let out = env
        .command(&["providers", "add", "mock", "--base-url", &format!("{}/v2", other.base_url())])
        .env("SWITCHBOARD_KEY_MOCK", KEY)
        .output()
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn widening_settings_need_yes() {
    let env = Env::new(Script::default()).await;
    let out = env.run(&["settings", "set", "tools", r#"{"approval": {"get_time": "deny"}}"#]).await;
    assert!(out.status.success(), "tightening needs no flag: {}", stderr(&out));

    for (key, value) in
        [("tools", r#"{"approval": {"get_time": "auto"}}"#), ("web", r#"{"allowLocalAddresses": true}"#)]
    {
        let out = env.run(&["settings", "set", key, value]).await;
        assert_eq!(out.status.code(), Some(1), "{key}");
        assert!(stderr(&out).contains("Run it again with --yes to confirm."), "{}", stderr(&out));
    }
    let out = env.run(&["settings", "unset", "tools"]).await;
    assert!(stderr(&out).contains("'get_time'"), "removing the deny loosens it too: {}", stderr(&out));
    let out = env.run(&["settings", "get", "tools"]).await;
    assert!(stdout(&out).contains("deny"), "{}", stdout(&out));

    let out = env.run(&["settings", "set", "web", r#"{"allowLocalAddresses": true}"#, "--yes"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["settings", "unset", "tools", "--yes"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["settings", "get", "web"]).await;
    assert!(stdout(&out).contains("\"allowLocalAddresses\": true"), "{}", stdout(&out));
}

/// `http://127.0.0.1:PORT` of a mock.
fn origin(mock: &MockServer) -> String {
    let url = mock.base_url();
    let rest = url.strip_prefix("http://").unwrap();
    format!("http://{}", rest.split('/').next().unwrap())
}
