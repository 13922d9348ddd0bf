//! Command tools running real local commands (`printf`, `sh -c` scripts without placeholders,
//! `env`, `pwd`) in temporary folders: argument boundaries, the environment a command gets,
//! output limits, failures, and the process group stopped at the time limit or on stop.
#![cfg(unix)]

use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_core::tool::{NoSecrets, SecretValue, Secrets};
use switchboard_core::{Tool, ToolContext, ToolError};
use switchboard_tools::{CommandTool, CommandToolConfig};

/// A key store with fixed entries.
struct Keys(Vec<(&'static str, &'static str)>);

impl Secrets for Keys {
    fn get(&self, name: &str) -> Result<Option<SecretValue>, String> {
        Ok(self.0.iter().find(|(k, _)| *k == name).map(|(_, v)| SecretValue::new(*v)))
    }
}

fn config(argv: &[&str], cwd: &Path) -> CommandToolConfig {
    let mut c = CommandToolConfig::new("cmd", "A test command.", argv.iter().map(|s| (*s).to_owned()).collect());
    c.cwd = Some(cwd.to_str().unwrap().to_owned());
    c
}

async fn run(config: CommandToolConfig, args: Value) -> Result<String, ToolError> {
    let tool = CommandTool::new(config).unwrap();
    tool.call(args, ToolContext::detached(Arc::new(NoSecrets))).await.map(|o| o.text)
}

/// Whether process `pid` is gone (a zombie waiting for init to reap it counts as gone).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
    }
}

/// Waits up to two seconds for `pid` to be gone.
async fn wait_gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if gone(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    gone(pid)
}

/// Waits up to five seconds for the script to write the background process's pid.
async fn read_pid(file: &Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "the script never wrote {}", file.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Starts a background `sleep` (the grandchild) that holds the output pipes, writes its pid,
/// then sleeps itself.
const GRANDCHILD_SCRIPT: &str = "sleep 100 & echo $! > grandchild.pid; echo started; sleep 100";

#[tokio::test]
async fn each_value_stays_one_argument() {
    let dir = tempfile::tempdir().unwrap();
    let nasty = "x;$(echo hi) `id` 'q' \"d\" *\nnew line ünï";
    let out = run(
        config(&["printf", "<%s>\\n", "{{a}}", "{{b}}", "--{{a}}"], dir.path()),
        json!({ "a": "one two", "b": nasty }),
    )
    .await
    .unwrap();
    assert_eq!(out, format!("<one two>\n<{nasty}>\n<--one two>\n"));
}

#[tokio::test]
async fn a_secret_reaches_the_command_in_its_environment_and_never_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let mut c =
        config(&["sh", "-c", "printf '%s|' \"$TOKEN\"; tr '\\0' ' ' < /proc/$$/cmdline", "sh", "{{q}}"], dir.path());
    c.env.insert("TOKEN".into(), "Bearer {{secret:api}}".into());
    let tool = CommandTool::new(c).unwrap();
    let args = json!({ "q": "query" });
    let line = tool.command_line(&args).unwrap();
    assert!(line.starts_with("TOKEN='Bearer '[secret api] sh -c "), "{line}");
    assert!(!line.contains("s3cret"), "{line}");
    let ctx = ToolContext::detached(Arc::new(Keys(vec![("api", "s3cret-value")])));
    let out = tool.call(args.clone(), ctx).await.unwrap().text;
    let (env_value, cmdline) = out.split_once('|').unwrap();
    assert_eq!(env_value, "Bearer s3cret-value");
    assert!(cmdline.contains("query") && !cmdline.contains("s3cret"), "{cmdline}");

    let missing = tool.call(args, ToolContext::detached(Arc::new(NoSecrets))).await.unwrap_err();
    match missing {
        ToolError::MissingSecret(m) => {
            assert!(m.contains("'cmd' needs the key 'api'") && m.contains("SWITCHBOARD_KEY_API"), "{m}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_command_gets_a_minimal_environment_and_its_own_variables() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&["env"], dir.path());
    c.env.insert("MODE".into(), "{{mode}}".into());
    let out = run(c, json!({ "mode": "fast" })).await.unwrap();
    for line in out.lines() {
        let name = line.split('=').next().unwrap();
        assert!(
            name == "MODE" || switchboard_process::inherits(std::ffi::OsStr::new(name)),
            "the command inherited {name}: {out}"
        );
    }
    assert!(out.lines().any(|l| l == "MODE=fast"), "{out}");
    // cargo runs tests with CARGO_* variables set: none of them reach the command.
    assert!(std::env::var("CARGO_PKG_NAME").is_ok());
    assert!(!out.contains("CARGO"), "{out}");
}

/// Runs in a copy of this test binary started with `OPENAI_API_KEY` set (setting a variable in
/// this process would need `unsafe`).
#[tokio::test]
async fn the_apps_keys_are_not_inherited() {
    const CHILD: &str = "SWITCHBOARD_COMMAND_TOOL_TEST_CHILD";
    if std::env::var_os(CHILD).is_some() {
        assert_eq!(std::env::var("OPENAI_API_KEY").as_deref(), Ok("sk-test-must-not-leak"));
        let dir = tempfile::tempdir().unwrap();
        let out = run(config(&["sh", "-c", "printf '[%s]' \"${OPENAI_API_KEY-unset}\"; env"], dir.path()), json!({}))
            .await
            .unwrap();
        assert!(out.starts_with("[unset]"), "{out}");
        assert!(!out.contains("sk-test-must-not-leak"), "{out}");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "the_apps_keys_are_not_inherited", "--test-threads=1"])
        .env(CHILD, "1")
        .env("OPENAI_API_KEY", "sk-test-must-not-leak")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("1 passed"), "the child ran no test: {stdout}");
}

#[tokio::test]
async fn the_working_folder_is_honored_and_defaults_to_home() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(config(&["pwd", "-P"], dir.path()), json!({})).await.unwrap();
    assert_eq!(Path::new(out.trim()), dir.path().canonicalize().unwrap());

    let mut c = config(&["pwd", "-P"], dir.path());
    c.cwd = None;
    let out = run(c, json!({})).await.unwrap();
    let home = Path::new(&std::env::var("HOME").unwrap()).canonicalize().unwrap();
    assert_eq!(Path::new(out.trim()), home);

    let missing = dir.path().join("nope");
    let e = run(config(&["pwd"], &missing), json!({})).await.unwrap_err().to_string();
    assert!(e.contains("working folder") && e.contains("does not exist"), "{e}");
}

#[tokio::test]
async fn a_large_output_is_cut_and_the_command_still_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&["sh", "-c", "yes abcdefghi | head -c 10000000; yes err | head -c 3000000 >&2"], dir.path());
    c.max_output_bytes = Some(1000);
    c.timeout_secs = Some(30);
    let started = Instant::now();
    let out = run(c, json!({})).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(out.starts_with("abcdefghi\nabcdefghi\n"), "{}", &out[..50]);
    assert!(out.contains("[output cut: kept the first 1000 of 10000000 bytes]"), "{out}");
    assert!(out.contains("\n\nstderr:\nerr\n"), "{out}");
    assert!(out.contains("[stderr cut: kept the first 1000 of 3000000 bytes]"), "{out}");
    assert!(out.len() < 2200, "{}", out.len());
}

#[tokio::test]
async fn a_successful_command_shows_stderr_after_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(config(&["sh", "-c", "echo out; echo warn >&2"], dir.path()), json!({})).await.unwrap();
    assert_eq!(out, "out\n\nstderr:\nwarn\n");
    let out = run(config(&["true"], dir.path()), json!({})).await.unwrap();
    assert_eq!(out, "(the command finished with no output)");
}

#[tokio::test]
async fn a_failing_command_says_its_exit_code_and_how_its_output_ended() {
    let dir = tempfile::tempdir().unwrap();
    let e = run(config(&["sh", "-c", "echo partial; echo 'no such file' >&2; exit 3"], dir.path()), json!({}))
        .await
        .unwrap_err();
    assert_eq!(e, ToolError::Failed("'cmd' exited with code 3.\nstderr:\nno such file\nstdout:\npartial".into()));
    let e = run(config(&["sh", "-c", "kill -9 $$"], dir.path()), json!({})).await.unwrap_err();
    assert_eq!(e, ToolError::Failed("'cmd' was ended by signal 9.".into()));
}

#[tokio::test]
async fn a_missing_or_unrunnable_program_is_named_with_where_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let e =
        run(config(&["no-such-program-for-switchboard", "x"], dir.path()), json!({})).await.unwrap_err().to_string();
    assert!(e.contains("'cmd' cannot run 'no-such-program-for-switchboard'"), "{e}");
    assert!(e.contains("PATH") && e.contains("full path") && e.contains("Check the tool's settings."), "{e}");

    let e = run(config(&["/no/such/program"], dir.path()), json!({})).await.unwrap_err().to_string();
    assert!(e.contains("'/no/such/program'") && e.contains("does not exist"), "{e}");

    let script = dir.path().join("script.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let e = run(config(&["./script.sh"], dir.path()), json!({})).await.unwrap_err().to_string();
    assert!(e.contains("'./script.sh'") && e.contains("not executable") && e.contains("settings"), "{e}");
}

#[tokio::test]
async fn the_time_limit_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = config(&["sh", "-c", GRANDCHILD_SCRIPT], dir.path());
    c.timeout_secs = Some(1);
    let started = Instant::now();
    let e = run(c, json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    let ToolError::Failed(message) = e else { panic!("{e:?}") };
    assert!(message.starts_with("'cmd' was stopped after 1 s (its time limit); output so far: \n"), "{message}");
    assert!(message.contains("started"), "{message}");
    let pid = read_pid(&dir.path().join("grandchild.pid")).await;
    assert!(wait_gone(pid).await, "the background process {pid} outlived the time limit");
}

#[tokio::test]
async fn a_stop_kills_the_whole_process_group_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let tool = Arc::new(CommandTool::new(config(&["sh", "-c", GRANDCHILD_SCRIPT], dir.path())).unwrap());
    let ctx = ToolContext::detached(Arc::new(NoSecrets));
    let cancel = ctx.cancel.clone();
    let call = tokio::spawn({
        let tool = Arc::clone(&tool);
        async move { tool.call(json!({}), ctx).await }
    });
    let pid = read_pid(&dir.path().join("grandchild.pid")).await;
    assert!(!gone(pid), "the background process should be running");
    let stopped = Instant::now();
    cancel.cancel();
    let result =
        tokio::time::timeout(Duration::from_secs(2), call).await.expect("the call did not end promptly").unwrap();
    assert_eq!(result, Err(ToolError::Cancelled));
    assert!(stopped.elapsed() < Duration::from_secs(2));
    assert!(wait_gone(pid).await, "the background process {pid} outlived the stop");
}

#[tokio::test]
async fn a_dropped_call_leaves_nothing_running() {
    let dir = tempfile::tempdir().unwrap();
    let tool = CommandTool::new(config(&["sh", "-c", GRANDCHILD_SCRIPT], dir.path())).unwrap();
    let call = tool.call(json!({}), ToolContext::detached(Arc::new(NoSecrets)));
    let pid_file = dir.path().join("grandchild.pid");
    let pid = tokio::select! {
        _ = call => panic!("the command ended on its own"),
        pid = read_pid(&pid_file) => pid,
    };
    assert!(wait_gone(pid).await, "the background process {pid} outlived the dropped call");
}
