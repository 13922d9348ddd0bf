//! Opening databases: migrations, and refusing files that are not ours without touching them.

use std::path::{Path, PathBuf};
use switchboard_core::ErrorKind;
use switchboard_store::{DB_FILE, Error, SCHEMA_VERSION, Store};

fn pragma_i64(path: &Path, name: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.pragma_query_value(None, name, |r| r.get(0)).unwrap()
}

fn lock_file(db: &Path) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(".lock");
    s.into()
}

#[test]
fn a_fresh_database_gets_the_current_schema_in_wal_mode_and_parent_dirs_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b").join(DB_FILE);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.path(), Some(path.as_path()));
    assert_eq!(store.recovered_on_open(), 0);
    drop(store);
    const { assert!(SCHEMA_VERSION >= 1) };
    assert_eq!(pragma_i64(&path, "user_version"), SCHEMA_VERSION);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mode: String = conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn reopening_is_idempotent_and_keeps_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let rows = Store::open(&path).unwrap().begin_turn(None, "hello", "p", "m").unwrap();
    for _ in 0..2 {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.conversations().unwrap().len(), 1);
        assert_eq!(store.conversation(&rows.conversation_id).unwrap().message_count, 2);
    }
    assert_eq!(pragma_i64(&path, "user_version"), SCHEMA_VERSION);
}

#[test]
fn a_database_from_a_newer_build_is_refused_and_left_byte_for_byte_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    Store::open(&path).unwrap().begin_turn(None, "keep me", "p", "m").unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
    }
    let before = std::fs::read(&path).unwrap();

    let err = Store::open(&path).err().expect("newer schema must be refused");
    match &err {
        Error::NewerSchema { path: p, found, supported } => {
            assert_eq!(p, &path);
            assert_eq!(*found, 999);
            assert_eq!(*supported, SCHEMA_VERSION);
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("newer version of Switchboard") && msg.contains("Nothing was changed."), "{msg}");
    assert_eq!(err.kind(), ErrorKind::Storage);

    assert_eq!(std::fs::read(&path).unwrap(), before, "file bytes changed");
    assert_eq!(pragma_i64(&path, "user_version"), 999);
}

#[test]
fn a_file_of_random_bytes_is_reported_corrupt_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    // xorshift: deterministic "random" bytes without a dependency.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let bytes: Vec<u8> = (0..8192)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    std::fs::write(&path, &bytes).unwrap();

    let err = Store::open(&path).err().expect("garbage must be refused");
    assert!(matches!(&err, Error::Corrupt { path: p, .. } if p == &path), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("is not a readable Switchboard database"), "{msg}");
    assert!(msg.contains("To start fresh, move it aside"), "{msg}");
    assert_eq!(err.kind(), ErrorKind::Storage);

    assert_eq!(std::fs::read(&path).unwrap(), bytes, "file bytes changed");
    assert!(!lock_file(&path).exists(), "nothing may be created beside a refused file");
}

#[test]
fn another_applications_database_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE photos (id INTEGER PRIMARY KEY); INSERT INTO photos VALUES (1);").unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).err().expect("foreign database must be refused");
    assert!(matches!(&err, Error::Corrupt { detail, .. } if detail.contains("another application")), "{err:?}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn an_empty_file_is_initialised() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    std::fs::write(&path, b"").unwrap();
    Store::open(&path).unwrap();
    assert_eq!(pragma_i64(&path, "user_version"), SCHEMA_VERSION);
}

#[test]
fn a_directory_in_the_way_is_a_clear_open_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    std::fs::create_dir(&path).unwrap();
    let err = Store::open(&path).err().expect("a directory is not a database");
    assert!(matches!(err, Error::CannotOpen { .. } | Error::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()), "{err}");
}

/// A database whose header is fine but whose later pages are overwritten with garbage, as a
/// failing disk or an interrupted copy leaves it. Returns the damaged file's bytes.
fn damage_pages_after_the_header(path: &Path) -> Vec<u8> {
    let store = Store::open(path).unwrap();
    for i in 0..200 {
        let rows = store.begin_turn(None, &format!("question {i} {}", "x".repeat(500)), "p", "m").unwrap();
        let _ = rows;
    }
    drop(store);
    let page = pragma_i64(path, "page_size") as usize;
    let mut bytes = std::fs::read(path).unwrap();
    assert!(bytes.len() > page * 8, "the database spans many pages");
    for b in &mut bytes[page * 3..page * 6] {
        *b = 0xA5;
    }
    std::fs::write(path, &bytes).unwrap();
    bytes
}

#[test]
fn damaged_pages_are_found_on_open_and_the_file_is_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let damaged = damage_pages_after_the_header(&path);
    let err = Store::open(&path).err().expect("a damaged database is refused");
    assert!(matches!(err, Error::Corrupt { .. }), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Storage);
    let message = err.to_string();
    assert!(message.contains(&path.display().to_string()), "says where it is: {message}");
    assert!(message.contains("left untouched") && message.contains("start fresh"), "{message}");
    assert!(message.contains("damaged pages"), "{message}");
    assert!(!message.trim_end().ends_with("malformed"), "{message}");
    assert_eq!(std::fs::read(&path).unwrap(), damaged, "not a byte changed");
}
