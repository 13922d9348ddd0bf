//! PDFs: the page count and the text layer, read by `lopdf` on a watched thread.
//!
//! Invariant: a hostile PDF can neither crash nor hang the caller. The parser runs on its own
//! thread under `catch_unwind` and the caller waits at most [`TIME_LIMIT`]; text extraction
//! stops at the deadline and at [`MAX_PDF_TEXT`]; every stream decompresses to at most
//! [`MAX_STREAM`]. A parser thread that overran keeps its copy of the bytes until it ends,
//! and while [`MAX_OVERRUN`] of them still run no new PDF is read.

use crate::{Inspected, MAX_PDF_TEXT, MediaError, Result};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::AttachmentKind;

/// The longest the caller waits for a PDF to be read.
pub const TIME_LIMIT: Duration = Duration::from_secs(30);
/// Text extraction stops here and keeps what it found (the parser's own deadline).
const EXTRACT_LIMIT: Duration = Duration::from_secs(20);
/// The most one stream of the PDF may decompress to.
const MAX_STREAM: usize = 64 * 1024 * 1024;
/// Parser threads that overran and still run; while this many do, PDFs are refused.
const MAX_OVERRUN: usize = 2;

static OVERRUNNING: AtomicUsize = AtomicUsize::new(0);

/// What the parser found.
struct Read {
    pages: u32,
    text: Option<String>,
}

/// Why the parser gave up (mapped to a [`MediaError`] with the file's name).
enum Failure {
    Encrypted,
    Damaged(String),
}

/// A PDF's [`Inspected`]: pages and text layer.
pub(crate) fn inspect(name: &str, bytes: &[u8]) -> Result<Inspected> {
    if OVERRUNNING.load(Ordering::SeqCst) >= MAX_OVERRUN {
        return Err(MediaError::PdfTimeout { name: name.to_owned() });
    }
    let owned: Arc<[u8]> = Arc::from(bytes);
    let (tx, rx) = mpsc::sync_channel(1);
    // Whether the caller stopped waiting; the thread and the caller decide under this lock, so
    // an overrun is counted exactly when no one will take the thread's answer.
    let abandoned = Arc::new(Mutex::new(false));
    let gave_up = Arc::clone(&abandoned);
    let spawned = std::thread::Builder::new().name("pdf-read".into()).spawn(move || {
        let outcome = catch_unwind(AssertUnwindSafe(|| read(&owned)))
            .unwrap_or_else(|_| Err(Failure::Damaged("the PDF reader failed on it".into())));
        drop(owned);
        let gave_up = gave_up.lock().unwrap_or_else(|p| p.into_inner());
        if *gave_up {
            OVERRUNNING.fetch_sub(1, Ordering::SeqCst);
        } else {
            let _ = tx.send(outcome);
        }
    });
    if let Err(e) = spawned {
        return Err(MediaError::DamagedPdf { name: name.to_owned(), reason: format!("no thread to read it: {e}") });
    }
    let outcome = match rx.recv_timeout(TIME_LIMIT) {
        Ok(outcome) => outcome,
        Err(_) => {
            let mut abandoned = abandoned.lock().unwrap_or_else(|p| p.into_inner());
            match rx.try_recv() {
                Ok(outcome) => outcome,
                Err(_) => {
                    *abandoned = true;
                    OVERRUNNING.fetch_add(1, Ordering::SeqCst);
                    return Err(MediaError::PdfTimeout { name: name.to_owned() });
                }
            }
        }
    };
    match outcome {
        Ok(read) => Ok(Inspected {
            mime_type: "application/pdf".to_owned(),
            kind: AttachmentKind::Pdf,
            width: None,
            height: None,
            pages: Some(read.pages),
            text: read.text,
            thumbnail: None,
        }),
        Err(Failure::Encrypted) => Err(MediaError::EncryptedPdf { name: name.to_owned() }),
        Err(Failure::Damaged(reason)) => Err(MediaError::DamagedPdf { name: name.to_owned(), reason }),
    }
}

/// Parses `bytes` and extracts the text layer (on the parser thread).
fn read(bytes: &[u8]) -> std::result::Result<Read, Failure> {
    let options = lopdf::LoadOptions { max_decompressed_size: Some(MAX_STREAM), ..Default::default() };
    let doc = match lopdf::Document::load_mem_with_options(bytes, options) {
        Ok(doc) => doc,
        Err(lopdf::Error::InvalidPassword | lopdf::Error::Decryption(_)) => return Err(Failure::Encrypted),
        Err(e) => return Err(Failure::Damaged(e.to_string())),
    };
    // Loaded but still encrypted: no empty user password opened it.
    if doc.is_encrypted() && doc.encryption_state.is_none() {
        return Err(Failure::Encrypted);
    }
    let pages = doc.get_pages();
    if pages.is_empty() {
        return Err(Failure::Damaged("it has no pages".into()));
    }
    let deadline = Instant::now() + EXTRACT_LIMIT;
    let mut text = String::new();
    for &number in pages.keys() {
        if Instant::now() >= deadline || text.len() >= MAX_PDF_TEXT {
            break;
        }
        // A page whose fonts or content cannot be read (or make the reader panic) adds
        // nothing; the others still count.
        let chunks = catch_unwind(AssertUnwindSafe(|| doc.extract_text_chunks_with_limit(&[number], MAX_STREAM)));
        for chunk in chunks.unwrap_or_default().into_iter().flatten() {
            text.push_str(&chunk);
        }
    }
    if text.len() > MAX_PDF_TEXT {
        let mut end = MAX_PDF_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    let has_text = text.chars().any(|c| !c.is_whitespace());
    Ok(Read { pages: u32::try_from(pages.len()).unwrap_or(u32::MAX), text: has_text.then_some(text) })
}
