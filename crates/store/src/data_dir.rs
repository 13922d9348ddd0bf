//! Where the database lives.

use crate::error::{Error, Result};
use std::path::PathBuf;

/// The database's file name inside the data directory.
pub const DB_FILE: &str = "switchboard.db";

/// The environment variable that overrides the data directory (below an explicit `--data-dir`).
pub const DATA_DIR_ENV: &str = "SWITCHBOARD_DATA_DIR";

/// The platform's data directory for Switchboard (e.g. `~/.local/share/switchboard` on Linux),
/// or `None` when the system reports no home directory.
pub fn default_data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("dev", "Switchboard", "Switchboard").map(|d| d.data_dir().to_owned())
}

/// The data directory to use: `flag` (`--data-dir`), else `$SWITCHBOARD_DATA_DIR` if set and
/// non-empty, else [`default_data_dir`]. The directory is not created here; [`Store::open`]
/// creates it.
///
/// [`Store::open`]: crate::Store::open
pub fn resolve_data_dir(flag: Option<PathBuf>) -> Result<PathBuf> {
    resolve_with(flag, std::env::var_os(DATA_DIR_ENV).map(PathBuf::from), default_data_dir())
}

fn resolve_with(flag: Option<PathBuf>, env: Option<PathBuf>, default: Option<PathBuf>) -> Result<PathBuf> {
    flag.into_iter().chain(env.filter(|p| !p.as_os_str().is_empty())).chain(default).next().ok_or(Error::NoDataDir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_beats_env_beats_default_and_empty_env_is_ignored() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(resolve_with(p("/flag"), p("/env"), p("/def")).unwrap(), PathBuf::from("/flag"));
        assert_eq!(resolve_with(None, p("/env"), p("/def")).unwrap(), PathBuf::from("/env"));
        assert_eq!(resolve_with(None, p(""), p("/def")).unwrap(), PathBuf::from("/def"));
        assert!(matches!(resolve_with(None, None, None), Err(Error::NoDataDir)));
    }
}
