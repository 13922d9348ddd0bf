//! How Switchboard starts other programs: stdio MCP servers, command tools, the system's opener.
//!
//! Invariants:
//! - Every child starts from an empty environment plus [`minimal_env`]: what a program needs to
//!   run (PATH, HOME, the user, language and time zone, temporary folder, the display and
//!   desktop-session variables a GUI tool needs, proxy and certificate settings). Everything else
//!   the child gets, its caller names explicitly (an MCP server's `env`, a command tool's `env`).
//!   So no provider key (`OPENAI_API_KEY`, `SWITCHBOARD_KEY_*`, ...) the app was started with
//!   ever reaches a program a third party wrote.
//! - The list is an allow-list of names, never a deny-list: a variable nobody thought of is not
//!   inherited. No name on it looks like a credential (tested), and a proxy address that carries
//!   a user name or password is left out.
//! - A tool's child leads its own session and process group (a job object that kills on close
//!   on Windows), so stopping it stops what it started too ([`group`]); and nothing it started
//!   outlives the app or the CLI, however they end ([`tree`], [`signals`]).
//! - The system opener runs in a session of its own, untracked: what it starts (the person's
//!   browser) is never ended with the app.

pub mod login_env;
pub mod signals;
pub mod tree;

pub use tree::{end_all, install, spawn_on_keeper};

use std::ffi::{OsStr, OsString};

/// The variables a child inherits from the app, by exact name (and `LC_*`). Compared without
/// regard to case on Windows, where names are case-insensitive.
pub const INHERITED: &[&str] = &[
    // Finding programs, the person, their language, time zone and temporary folder.
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    // The display and desktop session a GUI program (or the system's opener) needs.
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_CONFIG_DIRS",
    "XDG_DATA_DIRS",
    "XDG_CURRENT_DESKTOP",
    "XDG_SESSION_TYPE",
    "XDG_SESSION_DESKTOP",
    "DESKTOP_SESSION",
    "BROWSER",
    // A network that needs a proxy or its own certificate authority (`npx` and `uvx` download).
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    // Windows programs need the system's own folders (`cmd.exe` fails without SYSTEMROOT).
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "WINDIR",
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "PROGRAMFILES(X86)",
    "COMMONPROGRAMFILES",
    "TEMP",
    "TMP",
    "PATHEXT",
    "COMSPEC",
    "OS",
    "PROCESSOR_ARCHITECTURE",
    "NUMBER_OF_PROCESSORS",
];

/// Whether a child inherits the variable `name` from the app.
pub fn inherits(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else { return false };
    if name.starts_with("LC_") {
        return true;
    }
    if cfg!(windows) { INHERITED.iter().any(|n| n.eq_ignore_ascii_case(name)) } else { INHERITED.contains(&name) }
}

/// Whether `name` is a proxy variable, whose value is an address that may carry a password.
fn is_proxy(name: &OsStr) -> bool {
    name.to_str().is_some_and(|n| n.to_ascii_lowercase().ends_with("_proxy") && !n.eq_ignore_ascii_case("no_proxy"))
}

/// Of the variables `vars`, the ones a child inherits ([`inherits`]); a proxy address with a
/// user name or password in it (`http://me:pw@proxy:3128`) is left out.
pub fn minimal_env_of(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(name, value)| inherits(name) && !(is_proxy(name) && value.to_string_lossy().contains('@')))
        .collect()
}

/// The variables of this process a child inherits ([`minimal_env_of`]), with the login shell's
/// PATH and tool homes put in when the app read them ([`login_env`]).
pub fn minimal_env() -> Vec<(OsString, OsString)> {
    let login = login_env::resolved();
    let mut env = minimal_env_of(login_env::merged(std::env::vars_os().collect(), login.as_ref()));
    env.extend(login_env::tool_homes(login.as_ref()));
    env
}

/// What to tell the person when `program` was not found: the PATH a child gets (which, for an
/// app started from the desktop, is the login shell's when it could be read, else why not) and
/// what to do about it.
pub fn not_found(program: &str) -> String {
    let path = minimal_env()
        .into_iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = format!("'{program}' was not found on the PATH programs get ({path}).");
    if let Some(login_env::LoginEnv::Failed(why)) = login_env::resolved() {
        text.push_str(&format!(" Your login shell's PATH was not used: {why}."));
    }
    text.push_str(&format!(
        " Install it, or give its full path instead (in a terminal, `command -v {program}` prints it)."
    ));
    text
}

/// A command for `program` with the minimal environment and nothing else: add what the entry
/// names with `.env(..)`.
pub fn command(program: impl AsRef<OsStr>) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.env_clear().envs(minimal_env());
    cmd
}

/// `cmd` wrapped to run as the root of a tool tree ([`tree::Tree`]: the leader of its own session
/// and process group; on Windows in a job object that kills its processes when closed), so
/// stopping the child also stops what it started. Spawn it inside [`spawn_on_keeper`], so that
/// on Linux it also dies with the app.
pub fn group(cmd: tokio::process::Command) -> process_wrap::tokio::CommandWrap {
    let mut wrapped = process_wrap::tokio::CommandWrap::from(cmd);
    #[cfg(unix)]
    wrapped.wrap(tree::Tree::default());
    #[cfg(windows)]
    {
        wrapped.wrap(process_wrap::tokio::JobObject);
        wrapped.wrap(process_wrap::tokio::KillOnDrop);
    }
    wrapped
}

/// The system's openers for a link or a folder, in the order tried.
#[cfg(all(unix, not(target_os = "macos")))]
const OPENERS: &[&[&str]] = &[&["xdg-open"], &["gio", "open"]];
#[cfg(target_os = "macos")]
const OPENERS: &[&[&str]] = &[&["open"]];
#[cfg(windows)]
const OPENERS: &[&[&str]] = &[&["explorer.exe"]];

/// Hands `target` (a link or a `file://` folder, checked by the caller) to the system's opener,
/// with the minimal environment; it is one argument, never seen by a shell. Returns once the
/// opener started; a thread waits for it so it leaves no zombie. On Unix it leads a session of
/// its own (on Linux also marked as this run's opener), which no sweep of tool trees touches:
/// the browser it starts outlives the app.
pub fn open_external(target: &str) -> Result<(), String> {
    let mut last = String::from("no program to open it with was found");
    for opener in OPENERS {
        let mut cmd = std::process::Command::new(opener[0]);
        cmd.args(&opener[1..])
            .arg(target)
            .env_clear()
            .envs(minimal_env())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        #[cfg(unix)]
        tree::detach_opener(&mut cmd);
        #[cfg(unix)]
        let spawning = tree::Spawning::begin();
        match cmd.spawn() {
            Ok(mut child) => {
                let pid = child.id();
                #[cfg(unix)]
                {
                    tree::opener_started(pid);
                    drop(spawning);
                }
                std::thread::spawn(move || {
                    let _ = child.wait();
                    #[cfg(unix)]
                    tree::opener_ended(pid);
                    let _ = pid;
                });
                return Ok(());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                last = format!("'{}' was not found", opener[0]);
            }
            Err(e) => return Err(format!("'{}' could not be started: {e}", opener[0])),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (OsString::from(k), OsString::from(v))).collect()
    }

    fn names(env: &[(OsString, OsString)]) -> Vec<&str> {
        env.iter().map(|(k, _)| k.to_str().unwrap()).collect()
    }

    #[test]
    fn keys_and_everything_not_named_stay_behind() {
        let env = minimal_env_of(vars(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/home/me"),
            ("LC_TIME", "de_DE.UTF-8"),
            ("DISPLAY", ":0"),
            ("OPENAI_API_KEY", "sk-test"),
            ("ANTHROPIC_API_KEY", "sk-ant-test"),
            ("GEMINI_API_KEY", "g-test"),
            ("SWITCHBOARD_KEY_MOCK", "k"),
            ("SWITCHBOARD_DATA_DIR", "/tmp/x"),
            ("GITHUB_TOKEN", "ghp_x"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("RUST_LOG", "trace"),
            ("LD_PRELOAD", "/tmp/evil.so"),
            ("NODE_OPTIONS", "--require /tmp/evil.js"),
            ("path", "/lowercase/is/another/variable/on/unix"),
        ]));
        let expected: &[&str] = if cfg!(windows) {
            &["PATH", "HOME", "LC_TIME", "DISPLAY", "path"]
        } else {
            &["PATH", "HOME", "LC_TIME", "DISPLAY"]
        };
        assert_eq!(names(&env), expected);
    }

    #[test]
    fn a_proxy_address_with_a_password_is_left_out() {
        let env = minimal_env_of(vars(&[
            ("HTTPS_PROXY", "http://proxy.corp:3128"),
            ("http_proxy", "http://me:hunter2@proxy.corp:3128"),
            ("NO_PROXY", "localhost,.corp"),
        ]));
        assert_eq!(names(&env), ["HTTPS_PROXY", "NO_PROXY"]);
    }

    #[test]
    fn no_inherited_name_looks_like_a_credential() {
        // XAUTHORITY names the file of the X server's cookie, which a GUI program needs to draw;
        // it holds a path, not the cookie.
        let words = ["KEY", "TOKEN", "SECRET", "PASS", "PWD", "AUTH", "CREDENTIAL", "COOKIE", "SESSION_ID"];
        for name in INHERITED.iter().filter(|n| **n != "XAUTHORITY") {
            let upper = name.to_ascii_uppercase();
            assert!(!words.iter().any(|w| upper.contains(w)), "{name} looks like a credential");
        }
    }

    #[tokio::test]
    async fn a_child_sees_only_the_minimal_environment_and_what_its_caller_adds() {
        if cfg!(windows) {
            return;
        }
        let out = command("env").env("MODE", "fast").output().await.unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        for line in text.lines() {
            let name = line.split('=').next().unwrap();
            assert!(name == "MODE" || inherits(OsStr::new(name)), "the child inherited {name}: {text}");
        }
        assert!(text.lines().any(|l| l == "MODE=fast"), "{text}");
        // cargo runs tests with CARGO_* set: none of them reach the child.
        assert!(std::env::var_os("CARGO_PKG_NAME").is_some());
        assert!(!text.contains("CARGO"), "{text}");
    }
}
