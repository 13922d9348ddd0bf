//! Reading a real login shell's environment: a profile that extends PATH and prints noise, one
//! that hangs, a shell that is not there.
#![cfg(unix)]

use std::path::Path;
use std::time::{Duration, Instant};
use switchboard_process::login_env::{LoginEnvError, read};

fn bash() -> Option<&'static Path> {
    Path::new("/bin/bash").exists().then(|| Path::new("/bin/bash"))
}

/// `bash -l` reads `$HOME/.bash_profile`: a throwaway home with this profile.
fn home_with(profile: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".bash_profile"), profile).unwrap();
    home
}

fn read_in(home: &Path, timeout: Duration) -> Result<Vec<(String, String)>, LoginEnvError> {
    // `read` runs the shell with this process's environment: point HOME at the test's.
    let _guard = HOME_LOCK.lock().unwrap();
    let old = std::env::var_os("HOME");
    unsafe_set_home(home);
    let out = read(bash().unwrap(), timeout);
    if let Some(old) = old {
        unsafe_set_home(Path::new(&old));
    }
    out.map(|vars| {
        vars.into_iter().map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned())).collect()
    })
}

static HOME_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[allow(unsafe_code)]
fn unsafe_set_home(home: &Path) {
    // SAFETY: the tests that call this hold HOME_LOCK and start no other threads that read the
    // environment meanwhile.
    unsafe { std::env::set_var("HOME", home) };
}

#[test]
fn a_profile_that_extends_path_and_prints_noise_is_read() {
    if bash().is_none() {
        return;
    }
    let home = home_with(
        "echo 'Welcome back!'\nprintf '\\033[1mbold\\000 and a NUL\\n'\nexport PATH=\"$HOME/.local/node/bin:$PATH\"\nexport NVM_DIR=\"$HOME/.nvm\"\nexport SECRET_TOKEN=hunter2\nexport MULTI='a\nb'\n",
    );
    let vars = read_in(home.path(), Duration::from_secs(10)).unwrap();
    let get = |n: &str| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    let path = get("PATH").unwrap();
    assert!(path.starts_with(&format!("{}/.local/node/bin:", home.path().display())), "{path}");
    assert_eq!(get("NVM_DIR").unwrap(), format!("{}/.nvm", home.path().display()));
    assert_eq!(get("MULTI").unwrap(), "a\nb", "values with newlines survive");
    assert_eq!(get("SWITCHBOARD_RESOLVING_ENVIRONMENT").as_deref(), Some("1"));
}

#[test]
fn a_profile_that_hangs_is_given_up_on_in_time() {
    if bash().is_none() {
        return;
    }
    let home = home_with("sleep 30 &\nsleep 30\n");
    let began = Instant::now();
    let err = read_in(home.path(), Duration::from_millis(700)).unwrap_err();
    assert!(matches!(err, LoginEnvError::TimedOut { .. }), "{err}");
    assert!(began.elapsed() < Duration::from_secs(5), "{:?}", began.elapsed());
    assert!(err.to_string().contains("did not finish within"), "{err}");
}

#[test]
fn a_profile_that_exits_early_gives_no_environment() {
    if bash().is_none() {
        return;
    }
    let home = home_with("echo garbage; exit 3\n");
    let err = read_in(home.path(), Duration::from_secs(10)).unwrap_err();
    assert!(matches!(err, LoginEnvError::NoEnvironment { .. }), "{err}");
    assert!(err.to_string().contains("exit status: 3"), "{err}");
}

#[test]
fn a_shell_that_is_not_there_says_so() {
    let err = read(Path::new("/nonexistent/shell"), Duration::from_secs(1)).unwrap_err();
    assert!(matches!(err, LoginEnvError::Start { .. }), "{err}");
}
