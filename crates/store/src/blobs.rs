//! Where attached files' bytes live: content-addressed files under the data directory,
//! `<dir>/attachments/<sha[0..2]>/<sha>` (the database keeps only references and metadata), or a
//! map in memory for a store without a file.
//!
//! Invariants: a blob's name is the SHA-256 of its bytes, so one copy serves every message and
//! branch that uses it; a blob appears under its name only complete (written to a temporary file
//! beside it, flushed, then renamed); every read is checked against its name, so a missing or
//! changed file is a typed error naming the attachment, never wrong bytes or a panic.

use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// The folder of the data directory (beside the database file) that holds the blobs.
pub const ATTACHMENTS_DIR: &str = "attachments";

/// Temporary files start with this; a leftover one (a crash mid-write) is removed by the sweep.
const TEMP_PREFIX: &str = ".part-";

/// A temporary file younger than this may still be being written: the sweep leaves it alone.
const TEMP_GRACE: Duration = Duration::from_secs(3600);

/// The SHA-256 of `bytes`, lower-case hex: an attachment's id.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    digest.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Whether `id` has the shape of an attachment id (64 lower-case hex digits): the only names a
/// blob path is ever built from.
pub fn is_sha256_hex(id: &str) -> bool {
    id.len() == 64 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The blob store of one database.
pub(crate) enum Blobs {
    /// Files under this folder.
    Dir(PathBuf),
    /// In memory (a store without a file).
    Memory(Mutex<HashMap<String, Arc<[u8]>>>),
}

/// A blob made ready to appear under its name: [`Blobs::publish`] makes it visible.
pub(crate) enum Staged {
    /// Already stored, and intact.
    Present,
    /// Written to this temporary file; removed on drop unless published.
    Temp { temp: PathBuf, target: PathBuf },
    /// To be put in the memory map.
    Memory { id: String, bytes: Arc<[u8]> },
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Staged::Temp { temp, .. } = self {
            let _ = std::fs::remove_file(temp);
        }
    }
}

impl Blobs {
    /// The blobs of the database at `db` (`None`: in memory).
    pub fn for_database(db: Option<&Path>) -> Blobs {
        match db {
            Some(path) => {
                let parent = path.parent().unwrap_or(Path::new(""));
                Blobs::Dir(parent.join(ATTACHMENTS_DIR))
            }
            None => Blobs::Memory(Mutex::new(HashMap::new())),
        }
    }

    /// Where the blob `id` lives (`None` in memory). `id` must be a SHA-256 hex name.
    pub fn path(&self, id: &str) -> Option<PathBuf> {
        match self {
            Blobs::Dir(dir) => Some(dir.join(&id[..2]).join(id)),
            Blobs::Memory(_) => None,
        }
    }

    fn memory(map: &Mutex<HashMap<String, Arc<[u8]>>>) -> std::sync::MutexGuard<'_, HashMap<String, Arc<[u8]>>> {
        map.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Gets the blob `id` (the SHA-256 of `bytes`) ready to publish: nothing to do when an intact
    /// copy is stored, else the bytes written and flushed to a temporary file beside its place.
    /// Slow (writes the file); call it without holding the database.
    pub fn stage(&self, id: &str, bytes: &[u8]) -> Result<Staged> {
        let target = match self {
            Blobs::Memory(_) => return Ok(Staged::Memory { id: id.to_owned(), bytes: Arc::from(bytes) }),
            Blobs::Dir(_) => self.path(id).expect("a folder store has paths"),
        };
        if let Ok(meta) = std::fs::metadata(&target)
            && meta.len() == bytes.len() as u64
            && std::fs::read(&target).is_ok_and(|stored| sha256_hex(&stored) == id)
        {
            return Ok(Staged::Present);
        }
        let folder = target.parent().expect("a blob path has a folder").to_owned();
        let io = |source: std::io::Error| Error::Io { path: folder.clone(), source };
        std::fs::create_dir_all(&folder).map_err(io)?;
        let temp = folder.join(format!("{TEMP_PREFIX}{}", uuid::Uuid::new_v4().simple()));
        let staged = Staged::Temp { temp: temp.clone(), target };
        let mut file = std::fs::File::create_new(&temp).map_err(io)?;
        file.write_all(bytes).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(staged)
    }

    /// Makes a staged blob visible under its name (a rename: atomic on one file system).
    pub fn publish(&self, staged: Staged) -> Result<()> {
        match (self, &staged) {
            (_, Staged::Present) => Ok(()),
            (_, Staged::Temp { temp, target }) => {
                std::fs::rename(temp, target).map_err(|source| Error::Io { path: target.clone(), source })
            }
            (Blobs::Memory(map), Staged::Memory { id, bytes }) => {
                Self::memory(map).insert(id.clone(), bytes.clone());
                Ok(())
            }
            (Blobs::Dir(_), Staged::Memory { .. }) => unreachable!("staged by the same store"),
        }
    }

    /// The bytes of blob `id` (`size` bytes, shown as `name` in errors), checked against its name.
    pub fn read(&self, id: &str, size: u64, name: &str) -> Result<Vec<u8>> {
        let missing = |path: Option<PathBuf>| Error::AttachmentMissing {
            id: id.to_owned(),
            name: name.to_owned(),
            path: path.unwrap_or_default(),
        };
        let damaged = |detail: String| Error::AttachmentDamaged { id: id.to_owned(), name: name.to_owned(), detail };
        let bytes = match self {
            Blobs::Memory(map) => Self::memory(map).get(id).map(|b| b.to_vec()).ok_or_else(|| missing(None))?,
            Blobs::Dir(_) => {
                let path = self.path(id).expect("a folder store has paths");
                let meta = match std::fs::metadata(&path) {
                    Ok(meta) => meta,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(missing(Some(path))),
                    Err(source) => return Err(Error::Io { path, source }),
                };
                // Checked before reading: a file grown huge is never read into memory.
                if meta.len() != size {
                    return Err(damaged(format!("it holds {} bytes instead of {size}", meta.len())));
                }
                std::fs::read(&path).map_err(|source| Error::Io { path, source })?
            }
        };
        if bytes.len() as u64 != size {
            return Err(damaged(format!("it holds {} bytes instead of {size}", bytes.len())));
        }
        if sha256_hex(&bytes) != id {
            return Err(damaged("its contents no longer match its SHA-256".to_owned()));
        }
        Ok(bytes)
    }

    /// Removes the blob `id`; one already gone is fine.
    pub fn remove(&self, id: &str) -> Result<()> {
        match self {
            Blobs::Memory(map) => {
                Self::memory(map).remove(id);
                Ok(())
            }
            Blobs::Dir(_) => {
                let path = self.path(id).expect("a folder store has paths");
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::Io { path, source: e }),
                    _ => Ok(()),
                }
            }
        }
    }

    /// Removes files no row names (`known` are the rows' ids) and last written before `cutoff`:
    /// an import or an attach that failed after writing its file, or a temporary file left by a
    /// crash. Anything that is not a blob or a temporary file of ours is left alone. Returns how
    /// many were removed.
    pub fn sweep(&self, known: &HashSet<String>, cutoff: SystemTime) -> usize {
        let dir = match self {
            Blobs::Memory(map) => {
                let mut map = Self::memory(map);
                let before = map.len();
                map.retain(|id, _| known.contains(id));
                return before - map.len();
            }
            Blobs::Dir(dir) => dir,
        };
        let Ok(folders) = std::fs::read_dir(dir) else { return 0 };
        let temp_cutoff = cutoff.min(SystemTime::now().checked_sub(TEMP_GRACE).unwrap_or(SystemTime::UNIX_EPOCH));
        let mut removed = 0;
        for folder in folders.flatten() {
            let prefix = folder.file_name().to_string_lossy().into_owned();
            if prefix.len() != 2 || !folder.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let Ok(files) = std::fs::read_dir(folder.path()) else { continue };
            for file in files.flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                let older_than =
                    |when: SystemTime| file.metadata().and_then(|m| m.modified()).is_ok_and(|modified| modified < when);
                let stray = if name.starts_with(TEMP_PREFIX) {
                    older_than(temp_cutoff)
                } else {
                    is_sha256_hex(&name) && name.starts_with(&prefix) && !known.contains(&name) && older_than(cutoff)
                };
                if stray && std::fs::remove_file(file.path()).is_ok() {
                    removed += 1;
                }
            }
        }
        removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_the_sha256_in_lower_case_hex() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert!(is_sha256_hex(&sha256_hex(b"")));
        assert!(!is_sha256_hex("../../etc/passwd"));
        assert!(!is_sha256_hex(&sha256_hex(b"x").to_uppercase()));
    }

    #[test]
    fn a_blob_appears_only_when_published_and_a_dropped_stage_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = Blobs::Dir(dir.path().join(ATTACHMENTS_DIR));
        let id = sha256_hex(b"hello");
        let staged = blobs.stage(&id, b"hello").unwrap();
        assert!(!blobs.path(&id).unwrap().exists());
        drop(staged);
        let folder = blobs.path(&id).unwrap().parent().unwrap().to_owned();
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0, "the temporary file is gone");
        blobs.publish(blobs.stage(&id, b"hello").unwrap()).unwrap();
        assert_eq!(blobs.read(&id, 5, "hello.txt").unwrap(), b"hello");
        assert!(matches!(blobs.stage(&id, b"hello").unwrap(), Staged::Present));
        // A damaged copy is written again by the next stage.
        std::fs::write(blobs.path(&id).unwrap(), b"jello").unwrap();
        assert!(matches!(blobs.read(&id, 5, "hello.txt"), Err(Error::AttachmentDamaged { .. })));
        blobs.publish(blobs.stage(&id, b"hello").unwrap()).unwrap();
        assert_eq!(blobs.read(&id, 5, "hello.txt").unwrap(), b"hello");
    }
}
