//! The [`Store`]: one SQLite connection shared by the app, and every query but the recorder's,
//! split by concern: this file opens the database and owns the connection, the process lock and
//! the row ids; `turns.rs` stores a turn's rows and reads messages and history back;
//! `tree.rs` keeps the message tree (the current path, versions, branches);
//! `conversations.rs` lists, searches and changes conversations and their per-chat tool choices;
//! `compactions.rs` keeps compactions and pins and builds the history a turn starts from;
//! `search.rs` runs full-text searches on the search index;
//! `settings.rs` keeps settings and provider profiles; `setup.rs` keeps a chat's setup and its
//! grants; `transfer.rs` reads and writes whole conversations as records (export and import);
//! `usage.rs` reads what each request used and cost (details, totals, reports);
//! `attachments.rs` keeps attached files (their blobs, their links to messages, collection).
//! The recorder (`crate::recorder`) writes a
//! turn's events through the same connection.
//!
//! Invariant: every method holds the connection for one statement or one transaction, never
//! across a call out of the store.

mod attachments;
mod compactions;
mod context;
mod conversations;
mod search;
mod settings;
mod setup;
mod token_counts;
mod transfer;
mod tree;
mod turns;
mod usage;

pub use attachments::{
    ATTACHMENT_GRACE, MAX_ATTACHMENTS_PER_MESSAGE, NAME_MAX_BYTES, NewAttachment, THUMBNAIL_MAX_BYTES,
};
pub use compactions::{NewCompaction, StoredCompaction, TurnHistory};
pub use setup::{ChatGrant, ChatSetup, MAX_CHAT_TOOLSETS, MAX_SETUP_NAME_CHARS, SummariserChoice};
pub use transfer::{
    AttachmentRecord, ConversationRecord, ErrorRecord, ImportOutcome, MessageAttachmentRecord, MessageRecord,
    RefusedRecord, ToolCallRecord, ToolResultRecord, check_record,
};

use crate::blobs::Blobs;
use crate::error::{Error, Result};
use crate::schema;
use rusqlite::Connection;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

pub use context::StoredContext;
pub use search::{SEARCH_LIMIT_DEFAULT, SEARCH_LIMIT_MAX, SearchHit, SearchHitKind};
pub(crate) use usage::agent_name;
pub use usage::{
    ConversationUsage, MessageSpend, MessageUsage, RequestUsage, ResultResend, RunUsage, UsageGroup, UsageGrouping,
    UsageQuery, UsageReport, UsageTotals,
};

/// Switchboard's database. Cheap to clone: clones share one connection.
///
/// Methods are synchronous and hold the connection for the length of one statement or
/// transaction; call them from a blocking-friendly context when a turn is streaming.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    conn: Mutex<Connection>,
    path: Option<PathBuf>,
    /// Attached files' bytes: `attachments/` beside the database file, or in memory.
    blobs: Blobs,
    recovered: usize,
    /// Held (shared) for the store's lifetime so another process opening the same database can
    /// tell a live writer's `streaming` rows from a dead one's. Released when the last clone drops.
    _lock: Option<File>,
}

impl Store {
    /// Opens (creating if needed, with its parent folders) the database at `path`, migrates it,
    /// and turns messages a dead process left `streaming` into `interrupted`.
    ///
    /// A file that is damaged, not a database, another application's database or from a newer
    /// Switchboard is refused with [`Error::Corrupt`] or [`Error::NewerSchema`] and left unchanged.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io { path: parent.to_owned(), source })?;
        }
        let mut conn = Connection::open(path).map_err(|e| schema::open_error(path, e))?;
        // Before the first read: a writer in another process must make us wait, not fail the check.
        conn.busy_timeout(std::time::Duration::from_millis(5000)).map_err(|e| schema::open_error(path, e))?;
        schema::check_file(&conn, path)?;
        schema::configure(&conn).map_err(|e| schema::open_error(path, e))?;
        schema::migrate(&mut conn).map_err(|e| schema::open_error(path, e))?;
        let lock = ProcessLock::acquire(path);
        let recovered = if lock.sole {
            schema::recover_streaming(&mut conn, now_millis()).map_err(|e| schema::open_error(path, e))?
        } else {
            tracing::info!(path = %path.display(), "database is open in another process; leaving its streaming messages alone");
            0
        };
        let store = Self::from_parts(conn, Some(path.to_owned()), recovered, lock.into_shared());
        // Files nobody uses any more (a deleted chat's, one attached and never sent) go after the
        // grace period; failing to remove them costs only disk space.
        if let Err(e) = store.collect_attachments(ATTACHMENT_GRACE) {
            tracing::warn!("could not remove attachments no message uses: {e}");
        }
        Ok(store)
    }

    /// A fresh database in memory (tests, `--ephemeral` runs).
    pub fn open_in_memory() -> Result<Store> {
        let memory = Path::new(":memory:");
        let mut conn = Connection::open_in_memory().map_err(|e| schema::open_error(memory, e))?;
        schema::configure(&conn).map_err(|e| schema::open_error(memory, e))?;
        schema::migrate(&mut conn).map_err(|e| schema::open_error(memory, e))?;
        Ok(Self::from_parts(conn, None, 0, None))
    }

    fn from_parts(conn: Connection, path: Option<PathBuf>, recovered: usize, lock: Option<File>) -> Store {
        if recovered > 0 {
            tracing::warn!(count = recovered, "marked messages left streaming by an earlier run as interrupted");
        }
        let blobs = Blobs::for_database(path.as_deref());
        Store { inner: Arc::new(Inner { conn: Mutex::new(conn), path, blobs, recovered, _lock: lock }) }
    }

    /// The database file, or `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// How many `streaming` messages opening turned into `interrupted` (0 when another process
    /// had the database open, since its turns may still be running).
    pub fn recovered_on_open(&self) -> usize {
        self.inner.recovered
    }

    /// Rows changed through this store since it opened. For diagnostics and for tests that prove
    /// streaming does not write per delta.
    pub fn total_changes(&self) -> u64 {
        self.conn().total_changes()
    }

    /// The connection. A panic while it was held leaves SQLite consistent (an open transaction
    /// rolls back on drop), so a poisoned lock is safe to reuse.
    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.inner.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Advisory lock on `<db>.lock`: exclusive while deciding whether we are the only process with
/// the database open (only then are `streaming` rows provably orphaned), shared afterwards.
struct ProcessLock {
    file: Option<File>,
    sole: bool,
}

impl ProcessLock {
    fn acquire(db: &Path) -> Self {
        let mut name = db.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let file = match File::options().read(true).write(true).create(true).truncate(false).open(&path) {
            Ok(f) => f,
            Err(e) => {
                // Without a lock we cannot tell; recovering is right in the common single-process case.
                tracing::warn!(path = %path.display(), "cannot create lock file ({e}); assuming no other process uses the database");
                return ProcessLock { file: None, sole: true };
            }
        };
        match file.try_lock() {
            Ok(()) => ProcessLock { file: Some(file), sole: true },
            Err(std::fs::TryLockError::WouldBlock) => ProcessLock { file: Some(file), sole: false },
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::warn!(path = %path.display(), "file locking unavailable ({e}); assuming no other process uses the database");
                ProcessLock { file: None, sole: true }
            }
        }
    }

    /// Downgrades to a shared lock. Unlocking first is safe: in the gap there are no rows of ours
    /// `streaming` yet for another opener to misjudge.
    fn into_shared(self) -> Option<File> {
        let file = self.file?;
        if self.sole {
            let _ = file.unlock();
        }
        match file.lock_shared() {
            Ok(()) => Some(file),
            Err(e) => {
                tracing::warn!("could not hold a shared lock on the database's lock file: {e}");
                None
            }
        }
    }
}

fn to_json<T: Serialize + ?Sized>(value: &T, what: &str) -> Result<String> {
    serde_json::to_string(value).map_err(|source| Error::Json { what: what.to_owned(), source })
}

fn from_json<T: DeserializeOwned>(json: &str, what: impl FnOnce() -> String) -> Result<T> {
    serde_json::from_str(json).map_err(|source| Error::Json { what: what(), source })
}

/// A new conversation's title: its first non-blank line, at most 60 chars with an ellipsis if cut.
pub fn title_from(text: &str) -> String {
    const MAX_CHARS: usize = 60;
    let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return "New conversation".to_owned();
    };
    if line.chars().count() <= MAX_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(MAX_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// A new row id: UUID v7, so ids sort by creation time.
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Unix time in milliseconds; a clock before 1970 counts as 0 rather than failing a write.
pub(crate) fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_use_the_first_non_blank_line_and_cut_on_a_char_boundary() {
        assert_eq!(title_from("  \n  Hello there \nsecond"), "Hello there");
        assert_eq!(title_from(" \n\t"), "New conversation");
        let long = "é".repeat(70);
        let t = title_from(&long);
        assert_eq!(t.chars().count(), 60);
        assert!(t.ends_with('…'));
        assert_eq!(title_from(&"x".repeat(60)), "x".repeat(60));
    }
}
