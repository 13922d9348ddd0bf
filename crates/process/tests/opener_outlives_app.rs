//! The person's browser is not a tool: what the system opener starts outlives the app, while a
//! tool's tree started by the same app does not (issue 31, "nothing left running", and its
//! exemption). Linux, where the app is a subreaper and so also receives the opener's orphans.
//!
//! The test runs this test binary again as a stand-in app (`fake_app`): it starts a tool tree
//! whose grandchild escapes into a new session, then opens a link with a fake `xdg-open` that
//! leaves two long-lived "browser" processes behind (one in the opener's session, one that
//! escaped into a session of its own), and exits through `end_all` as the shells do. The check
//! reads the process table.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const APP: &str = "SWITCHBOARD_TEST_FAKE_APP_DIR";

fn pid_in(dir: &Path, name: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join(name))
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "{name} was never written");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim_start().to_owned()))
        .is_some_and(|state| !state.starts_with('Z') && !state.starts_with('X'))
}

fn kill(pid: i32) {
    // SAFETY: sends SIGKILL to a process this test started (checked to be running just before).
    #[allow(unsafe_code)]
    unsafe {
        libc::kill(pid, libc::SIGKILL)
    };
}

/// The stand-in app: does nothing unless run by the test below.
#[test]
fn fake_app() {
    let Some(dir) = std::env::var_os(APP).map(PathBuf::from) else { return };
    switchboard_process::install();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let tool = runtime.block_on(async {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg(r#"(setsid sh -c 'echo $$ >"$1/tool.tmp" && mv "$1/tool.tmp" "$1/tool.pid"; exec sleep 1000' sh "$1" </dev/null >/dev/null 2>&1 &); exec sleep 1000"#)
            .arg("sh")
            .arg(&dir);
        switchboard_process::spawn_on_keeper(move || switchboard_process::group(cmd).spawn()).await.unwrap()
    });
    switchboard_process::open_external("https://example.invalid/").unwrap();
    for name in ["tool.pid", "browser.pid", "escaped-browser.pid"] {
        pid_in(&dir, name);
    }
    // The opener itself has exited, so both of its programs are orphans and our children now.
    std::thread::sleep(Duration::from_millis(300));
    switchboard_process::end_all();
    drop(tool);
}

#[test]
fn the_browser_an_opener_starts_outlives_the_app_and_a_tools_tree_does_not() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let d = dir.path().display();
    // A fake opener that starts a "browser" in its own session, one that escapes into another
    // session, and exits at once (as xdg-open does).
    let opener = format!(
        "#!/bin/sh\n\
         sleep 1000 </dev/null >/dev/null 2>&1 &\n\
         echo $! >'{d}/browser.tmp' && mv '{d}/browser.tmp' '{d}/browser.pid'\n\
         (setsid sh -c 'echo $$ >\"{d}/escaped.tmp\" && mv \"{d}/escaped.tmp\" \"{d}/escaped-browser.pid\"; exec sleep 1000' </dev/null >/dev/null 2>&1 &)\n\
         exit 0\n"
    );
    let path = bin.join("xdg-open");
    std::fs::write(&path, opener).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();

    let system_path = std::env::var("PATH").unwrap_or_default();
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "fake_app", "--nocapture"])
        .env(APP, dir.path())
        .env("PATH", format!("{}:{system_path}", bin.display()))
        .status()
        .unwrap();
    assert!(status.success(), "the stand-in app failed: {status}");

    let tool = pid_in(dir.path(), "tool.pid");
    let browsers = [pid_in(dir.path(), "browser.pid"), pid_in(dir.path(), "escaped-browser.pid")];
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(tool) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let tool_left = running(tool);
    let browsers_alive: Vec<bool> = browsers.iter().map(|p| running(*p)).collect();
    for pid in browsers.into_iter().chain([tool]) {
        if running(pid) {
            kill(pid);
        }
    }
    assert!(!tool_left, "the tool's escaped grandchild outlived the app");
    assert_eq!(browsers_alive, [true, true], "the opener's programs must outlive the app (in session, escaped)");
}
