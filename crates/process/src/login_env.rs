//! The person's login-shell environment, for an app started from the desktop.
//!
//! A launcher (a desktop menu, the Dock, Finder) starts the app with the session's bare PATH
//! (`/usr/bin:/bin`), not the one the person's shell profile builds. So a server configured as
//! `npx …` or `uvx …`, which works in their terminal, is "not found" in the app. The desktop app
//! calls [`start`] once when it starts: it runs `$SHELL -l -i -c` in the background, bounded in
//! time and output, and reads the environment the shell ends up with. [`merged`] then puts the
//! shell's PATH first (the app's own entries after it) and takes the few variables version
//! managers need (`NVM_DIR`, `PYENV_ROOT`, ...), only names on the allow-list, never a key a
//! profile exports.
//!
//! Invariants: the shell runs at most once per process, in its own process group, with stdin
//! from `/dev/null`, and is killed with its group after [`TIMEOUT`]; only the text between two
//! markers that the rc files cannot have printed is read, at most [`MAX_OUTPUT`] bytes; any
//! failure leaves the app's own environment in force, with the reason kept for the status of a
//! server whose command was not found. Nothing here runs unless [`start`] was called (the CLI,
//! run from a terminal, already has the PATH).

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long the login shell may take before the app goes on without it.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// The most output read from the shell (an environment is a few KiB).
pub const MAX_OUTPUT: usize = 1024 * 1024;

/// Variables version managers and package runners need to find their programs, taken from the
/// login shell when it sets them (paths only; none of them carries a credential).
pub const TOOL_HOMES: &[&str] = &[
    "NVM_DIR",
    "NVM_BIN",
    "VOLTA_HOME",
    "PNPM_HOME",
    "BUN_INSTALL",
    "DENO_INSTALL",
    "FNM_DIR",
    "PYENV_ROOT",
    "ASDF_DIR",
    "ASDF_DATA_DIR",
    "MISE_DATA_DIR",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GOPATH",
    "GOROOT",
    "JAVA_HOME",
    "HOMEBREW_PREFIX",
    "HOMEBREW_CELLAR",
    "HOMEBREW_REPOSITORY",
    "NPM_CONFIG_PREFIX",
];

/// Set for the login shell, so a profile can skip slow work when it is the app asking.
pub const RESOLVING_VAR: &str = "SWITCHBOARD_RESOLVING_ENVIRONMENT";

/// What reading the login shell's environment gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginEnv {
    /// The shell's environment, as read (every variable; [`merged`] picks from it).
    Read { shell: String, vars: Vec<(OsString, OsString)> },
    /// It could not be read: why, in words for a server's status.
    Failed(String),
}

/// Why a login shell gave no environment.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoginEnvError {
    /// `$SHELL` is not set (or empty).
    #[error("SHELL is not set")]
    NoShell,
    /// The shell could not be started.
    #[error("the login shell {shell} could not be started: {reason}")]
    Start { shell: String, reason: String },
    /// It did not finish in time.
    #[error("the login shell {shell} did not finish within {secs} s", secs = TIMEOUT.as_secs())]
    TimedOut { shell: String },
    /// Its output had no environment between the markers.
    #[error("the login shell {shell} printed no environment (exit status {status})")]
    NoEnvironment { shell: String, status: String },
}

struct State {
    started: bool,
    result: Option<LoginEnv>,
}

fn state() -> &'static (Mutex<State>, Condvar) {
    static STATE: OnceLock<(Mutex<State>, Condvar)> = OnceLock::new();
    STATE.get_or_init(|| (Mutex::new(State { started: false, result: None }), Condvar::new()))
}

/// Starts reading the login shell's environment on a thread of its own (once; later calls do
/// nothing). Unix only: on Windows a program's PATH comes from the registry, not a shell.
pub fn start() {
    if cfg!(windows) {
        return;
    }
    let (lock, cvar) = state();
    {
        let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
        if s.started {
            return;
        }
        s.started = true;
    }
    let spawned = std::thread::Builder::new().name("login-env".into()).spawn(|| {
        let began = Instant::now();
        let result = match std::env::var_os("SHELL").filter(|s| !s.is_empty()) {
            None => LoginEnv::Failed(LoginEnvError::NoShell.to_string()),
            Some(shell) => match read(Path::new(&shell), TIMEOUT) {
                Ok(vars) => LoginEnv::Read { shell: shell.to_string_lossy().into_owned(), vars },
                Err(e) => LoginEnv::Failed(e.to_string()),
            },
        };
        match &result {
            LoginEnv::Read { shell, .. } => {
                tracing::info!(%shell, ms = began.elapsed().as_millis() as u64, "read the login shell's environment")
            }
            LoginEnv::Failed(why) => tracing::warn!(%why, "the login shell's environment was not read"),
        }
        let (lock, cvar) = state();
        lock.lock().unwrap_or_else(|p| p.into_inner()).result = Some(result);
        cvar.notify_all();
    });
    if let Err(e) = spawned {
        lock.lock().unwrap_or_else(|p| p.into_inner()).result =
            Some(LoginEnv::Failed(format!("no thread to read the login shell: {e}")));
        cvar.notify_all();
    }
}

/// The login shell's environment once read: `None` if [`start`] was never called. Waits for a
/// read in progress (never longer than [`TIMEOUT`] and a second, since the read is bounded).
pub fn resolved() -> Option<LoginEnv> {
    let (lock, cvar) = state();
    let mut s = lock.lock().unwrap_or_else(|p| p.into_inner());
    if !s.started {
        return None;
    }
    let deadline = Instant::now() + TIMEOUT + Duration::from_secs(1);
    while s.result.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Some(LoginEnv::Failed("the login shell is still starting".into()));
        }
        s = cvar.wait_timeout(s, left).unwrap_or_else(|p| p.into_inner()).0;
    }
    s.result.clone()
}

/// `app` (this process's variables) with the login shell's PATH put in: its entries first,
/// then the app's it lacks, and the [`TOOL_HOMES`] the shell sets (only from the shell: an
/// app started from a terminal has its PATH already). Every other variable stays the app's (the
/// display and session ones are the app's own to give).
pub fn merged(app: Vec<(OsString, OsString)>, login: Option<&LoginEnv>) -> Vec<(OsString, OsString)> {
    let Some(LoginEnv::Read { vars, .. }) = login else { return app };
    let get = |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let mut out: Vec<(OsString, OsString)> =
        app.into_iter().filter(|(k, _)| !TOOL_HOMES.iter().any(|t| k == t)).collect();
    if let Some(shell_path) = get("PATH").filter(|p| !p.is_empty()) {
        match out.iter_mut().find(|(k, _)| k == "PATH") {
            Some((_, app_path)) => *app_path = join_paths(&shell_path, app_path),
            None => out.push(("PATH".into(), shell_path)),
        }
    }
    out
}

/// The [`TOOL_HOMES`] the login shell sets.
pub fn tool_homes(login: Option<&LoginEnv>) -> Vec<(OsString, OsString)> {
    let Some(LoginEnv::Read { vars, .. }) = login else { return Vec::new() };
    TOOL_HOMES
        .iter()
        .filter_map(|name| vars.iter().find(|(k, _)| k == name).map(|(k, v)| (k.clone(), v.clone())))
        .collect()
}

/// `first`'s entries, then `then`'s that `first` lacks.
fn join_paths(first: &OsStr, then: &OsStr) -> OsString {
    let mut entries: Vec<PathBuf> = std::env::split_paths(first).collect();
    for p in std::env::split_paths(then) {
        if !entries.contains(&p) {
            entries.push(p);
        }
    }
    std::env::join_paths(entries).unwrap_or_else(|_| first.to_owned())
}

/// Runs `shell -l -i -c` printing its environment between two markers, and parses it.
pub fn read(shell: &Path, timeout: Duration) -> Result<Vec<(OsString, OsString)>, LoginEnvError> {
    let name = shell.display().to_string();
    let marker = marker();
    // `command env -0` is the environment program, whatever a profile aliased `env` to; NUL
    // separated, so values with newlines survive. Works in sh, bash, zsh and fish.
    let script = format!("printf '%s' '{marker}'; command env -0; printf '%s' '{marker}'");
    let mut cmd = std::process::Command::new(shell);
    cmd.args(["-l", "-i", "-c", &script])
        .env(RESOLVING_VAR, "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn().map_err(|e| LoginEnvError::Start { shell: name.clone(), reason: e.to_string() })?;
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = (&mut stdout).take(MAX_OUTPUT as u64).read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                kill_group(&mut child);
                return Err(LoginEnvError::TimedOut { shell: name });
            }
        }
    };
    // The shell is gone; a background job its profile started may still hold the pipe open.
    kill_group(&mut child);
    let out = reader.join().unwrap_or_default();
    parse(&out, marker.as_bytes())
        .ok_or_else(|| LoginEnvError::NoEnvironment { shell: name, status: status.to_string() })
}

#[allow(unsafe_code)] // killpg: see the SAFETY note
fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pgid) = i32::try_from(child.id()) {
        // SAFETY: killpg only sends a signal, to the shell's own group (pgid = its pid).
        unsafe { libc::killpg(pgid, libc::SIGKILL) };
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// A marker no profile prints by chance: the process id and the time, in hex.
fn marker() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("_SWITCHBOARD_ENV_{:x}_{nanos:x}_", std::process::id())
}

/// The `NAME=value` pairs between the first two markers of `out` (NUL separated); `None` when
/// there is no such block or nothing in it parses.
fn parse(out: &[u8], marker: &[u8]) -> Option<Vec<(OsString, OsString)>> {
    let start = find(out, marker)? + marker.len();
    let end = start + find(&out[start..], marker)?;
    let vars: Vec<(OsString, OsString)> = out[start..end]
        .split(|&b| b == 0)
        .filter_map(|entry| {
            let eq = entry.iter().position(|&b| b == b'=').filter(|&i| i > 0)?;
            Some((os(&entry[..eq]), os(&entry[eq + 1..])))
        })
        .collect();
    (!vars.is_empty()).then_some(vars)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(unix)]
fn os(bytes: &[u8]) -> OsString {
    <OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes).to_owned()
}

#[cfg(not(unix))]
fn os(bytes: &[u8]) -> OsString {
    String::from_utf8_lossy(bytes).into_owned().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    #[test]
    fn only_the_block_between_the_markers_is_read() {
        let out = b"Welcome!\x1b[31m fortune \0PATH=/evil\0M\0A=1\0PATH=/a:/b\0MULTI=x\ny\0M\0B=2\0M";
        let parsed = parse(out, b"M\0").unwrap();
        assert_eq!(parsed, vars(&[("A", "1"), ("PATH", "/a:/b"), ("MULTI", "x\ny")]));
        assert_eq!(parse(b"no markers at all", b"M\0"), None);
        assert_eq!(parse(b"M\0M\0", b"M\0"), None, "an empty block is no environment");
    }

    #[test]
    fn the_shell_path_comes_first_and_only_tool_homes_are_taken() {
        let app = vars(&[("PATH", "/usr/bin:/bin"), ("HOME", "/home/me"), ("DISPLAY", ":0")]);
        let login = LoginEnv::Read {
            shell: "/bin/bash".into(),
            vars: vars(&[
                ("PATH", "/home/me/.nvm/bin:/usr/bin"),
                ("NVM_DIR", "/home/me/.nvm"),
                ("OPENAI_API_KEY", "sk-from-bashrc"),
                ("DISPLAY", ":9"),
            ]),
        };
        let env = merged(app.clone(), Some(&login));
        assert_eq!(env, vars(&[("PATH", "/home/me/.nvm/bin:/usr/bin:/bin"), ("HOME", "/home/me"), ("DISPLAY", ":0")]));
        assert_eq!(tool_homes(Some(&login)), vars(&[("NVM_DIR", "/home/me/.nvm")]));
        assert!(tool_homes(None).is_empty());
        assert_eq!(merged(app.clone(), Some(&LoginEnv::Failed("x".into()))), app);
        assert_eq!(merged(app.clone(), None), app);
    }

    #[test]
    fn no_tool_home_looks_like_a_credential() {
        let words = ["KEY", "TOKEN", "SECRET", "PASS", "PWD", "AUTH", "CREDENTIAL", "COOKIE"];
        for name in TOOL_HOMES {
            assert!(!words.iter().any(|w| name.contains(w)), "{name} looks like a credential");
        }
    }
}
