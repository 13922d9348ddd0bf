//! The operating-system side of a run: finding the program on the command's own `PATH`, the
//! home folder, the process group that is killed when a call ends early, and a failed spawn or a
//! signal in words.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A running command's process group, killed when dropped before it exited (a call whose
/// future the loop dropped leaves nothing running).
pub(super) struct Group {
    pub(super) child: Box<dyn process_wrap::tokio::ChildWrapper>,
    pub(super) exited: bool,
}

impl Group {
    /// Kills the whole group and reaps the command.
    pub(super) async fn stop(&mut self) {
        let _ = self.child.start_kill();
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await.is_ok() {
            self.exited = true;
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.exited {
            let _ = self.child.start_kill();
        }
    }
}

#[cfg(unix)]
pub(super) fn signal_text(name: &str, status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(sig) => format!("'{name}' was ended by signal {sig}."),
        None => format!("'{name}' failed ({status})."),
    }
}

#[cfg(not(unix))]
pub(super) fn signal_text(name: &str, status: &std::process::ExitStatus) -> String {
    format!("'{name}' failed ({status}).")
}

/// Why a spawn failed, in words: the program is missing, not executable, or something else.
pub(super) fn spawn_error(tool: &str, program: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("'{tool}' cannot run '{program}': it was not found. Check the tool's settings.")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("'{tool}' cannot run '{program}': it is not executable. Check the tool's settings.")
        }
        _ => format!("'{tool}' could not start '{program}': {e}. Check the tool's settings."),
    }
}

/// The person's home folder.
pub(super) fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var).filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The program to run for `program`: a bare name is looked up on `path` (the command's own
/// PATH, not the app's), a relative path with a folder is taken from `cwd`.
pub(super) fn find_program(program: &str, path: Option<&OsStr>, cwd: &Path) -> Result<PathBuf, String> {
    let given = Path::new(program);
    if given.components().count() > 1 || given.is_absolute() {
        let full = if given.is_absolute() { given.to_path_buf() } else { cwd.join(given) };
        return if full.is_file() { Ok(full) } else { Err(format!("{} does not exist", full.display())) };
    }
    let path = path.unwrap_or_default();
    for dir in std::env::split_paths(path).filter(|d| !d.as_os_str().is_empty()) {
        for candidate in candidates(&dir.join(program)) {
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    let mut text =
        format!("it was not found on the PATH commands get ({}), so give its full path", path.to_string_lossy());
    if let Some(switchboard_process::login_env::LoginEnv::Failed(why)) = switchboard_process::login_env::resolved() {
        text.push_str(&format!(" (your login shell's PATH was not used: {why})"));
    }
    Err(text)
}

#[cfg(unix)]
fn candidates(base: &Path) -> Vec<PathBuf> {
    vec![base.to_path_buf()]
}

#[cfg(windows)]
fn candidates(base: &Path) -> Vec<PathBuf> {
    let mut out = vec![base.to_path_buf()];
    if base.extension().is_none() {
        let exts = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
        out.extend(exts.split(';').filter(|e| !e.is_empty()).map(|e| base.with_extension(e.trim_start_matches('.'))));
    }
    out
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(windows)]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_on_the_given_path_only() {
        let dir = std::env::temp_dir();
        assert!(
            find_program("sh", Some(OsStr::new("/nonexistent-dir")), &dir).unwrap_err().contains("/nonexistent-dir")
        );
        #[cfg(unix)]
        {
            let sh = find_program("sh", Some(OsStr::new("/nonexistent-dir:/bin:/usr/bin")), &dir).unwrap();
            assert!(sh.ends_with("sh"), "{sh:?}");
            assert!(find_program("/definitely/not/here", None, &dir).unwrap_err().contains("does not exist"));
        }
    }
}
