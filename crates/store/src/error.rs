//! The store's errors. Every message names the file or the row involved and, where the person can
//! do something about it, says what. Which SQLite failures mean a damaged file is decided here
//! ([`is_corruption`]), below the schema checks that use it.

use rusqlite::ErrorCode;
use std::path::PathBuf;
use switchboard_core::ErrorKind;

/// A store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database was migrated by a newer build; writing to it could corrupt what that build
    /// relies on, so it is refused untouched.
    #[error(
        "The database at {} was written by a newer version of Switchboard (schema {found}; this build understands up to {supported}). Update Switchboard, or point --data-dir at another folder. Nothing was changed.",
        path.display()
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// The schema version found in the file.
        found: i64,
        /// The newest schema version this build knows.
        supported: i64,
    },

    /// The file is not a database, is damaged, or belongs to another application.
    #[error(
        "The file at {} is not a readable Switchboard database ({detail}). It was left untouched. To start fresh, move it aside (or point --data-dir at another folder) and Switchboard creates a new one; to get your conversations back, put back a copy of the file you saved earlier.",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What SQLite (or the schema check) said.
        detail: String,
    },

    /// The database could not be opened or prepared for use (permissions, read-only disk, a
    /// folder in the way).
    #[error(
        "Could not open the database at {}: {detail}. Check that the file and its folder are writable, or point --data-dir at another folder.",
        path.display()
    )]
    CannotOpen {
        /// The database file.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },

    /// A row the caller named does not exist.
    #[error("{what} '{id}' not found")]
    NotFound {
        /// What kind of row: "conversation", "message", "provider".
        what: &'static str,
        /// The id or name asked for.
        id: String,
    },

    /// A JSON value (setting, tool list) could not be converted: a stored one does not have the
    /// shape the caller asked for, or a value to store cannot be written as JSON.
    #[error("Could not convert {what} to or from JSON: {source}")]
    Json {
        /// Which value, e.g. "setting 'theme'".
        what: String,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },

    /// No data directory was given and the platform has none (no home directory).
    #[error(
        "Could not determine where to keep Switchboard's data (the system reports no home directory). Pass --data-dir or set SWITCHBOARD_DATA_DIR."
    )]
    NoDataDir,

    /// A value to store is not one the store keeps (a chat's setup out of its bounds); the
    /// message says which part and why.
    #[error("{0}")]
    Invalid(String),

    /// The operation conflicts with work in progress (a turn still streaming).
    #[error("Not now: {0}.")]
    Busy(String),

    /// The operation would leave the data without meaning (deleting a conversation's only first
    /// message); the message says what to do instead.
    #[error("{0}")]
    Refused(String),

    /// A search that cannot be run (too long, nothing but excluded words); says what to change.
    #[error(transparent)]
    Search(#[from] crate::fts::QueryError),

    /// A file-system operation failed.
    #[error("Could not access {}: {source}", path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },

    /// An attached file's stored copy is gone from the data directory (deleted outside
    /// Switchboard, or a copied database without its `attachments` folder).
    #[error(
        "The file attached as '{name}' is missing from the data folder ({}). Remove it from the message and attach it again.",
        path.display()
    )]
    AttachmentMissing {
        /// The attachment's id (its SHA-256).
        id: String,
        /// Its name as attached.
        name: String,
        /// Where it should be (empty in memory).
        path: PathBuf,
    },

    /// An attached file's stored copy is not the file that was attached (changed or damaged on
    /// disk).
    #[error("The stored copy of '{name}' is damaged ({detail}). Remove it from the message and attach the file again.")]
    AttachmentDamaged {
        /// The attachment's id (its SHA-256).
        id: String,
        /// Its name as attached.
        name: String,
        /// What is wrong with it.
        detail: String,
    },

    /// SQLite failed on an open database (disk full, locked for longer than the busy timeout,
    /// a damaged page found after opening).
    #[error("{}", sqlite_message(.0))]
    Sqlite(#[from] rusqlite::Error),
}

impl Error {
    /// The classification shells show and act on: a missing row or data directory is something
    /// the person configured or typed wrong; everything else is local storage failing.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::NotFound { .. }
            | Error::NoDataDir
            | Error::Busy(_)
            | Error::Refused(_)
            | Error::Search(_)
            | Error::Invalid(_) => ErrorKind::Config,
            _ => ErrorKind::Storage,
        }
    }

    pub(crate) fn not_found(what: &'static str, id: &str) -> Self {
        Error::NotFound { what, id: id.to_owned() }
    }
}

/// SQLite's own text ("database disk image is malformed") says nothing a person can act on:
/// damage found after opening gets the same guidance as damage found when opening.
fn sqlite_message(e: &rusqlite::Error) -> String {
    if is_corruption(e) {
        format!(
            "The database file is damaged ({e}). Nothing more was written to it. Copy what you can with an export, then move the file aside (or point --data-dir at another folder) to start fresh."
        )
    } else {
        format!("Database error: {e}")
    }
}

/// Whether SQLite's error means the file itself is unreadable, as opposed to the disk or a lock.
pub(crate) fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt))
}

/// The store's result type.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_actionable_and_kinds_match() {
        let e = Error::NewerSchema { path: "/d/switchboard.db".into(), found: 9, supported: 1 };
        assert_eq!(
            e.to_string(),
            "The database at /d/switchboard.db was written by a newer version of Switchboard (schema 9; this build understands up to 1). Update Switchboard, or point --data-dir at another folder. Nothing was changed."
        );
        assert_eq!(e.kind(), ErrorKind::Storage);
        let e = Error::not_found("conversation", "x");
        assert_eq!(e.to_string(), "conversation 'x' not found");
        assert_eq!(e.kind(), ErrorKind::Config);
        let e = Error::Corrupt { path: "/f".into(), detail: "file is not a database".into() };
        assert!(e.to_string().contains("It was left untouched. To start fresh, move it aside"), "{e}");
        let damaged = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            Some("database disk image is malformed".into()),
        );
        let e = Error::from(damaged);
        assert!(e.to_string().starts_with("The database file is damaged"), "{e}");
        assert!(!e.to_string().ends_with("malformed"), "{e}");
    }
}
