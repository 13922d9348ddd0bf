//! PDFs: the page count and the text layer, read by `lopdf` on a watched thread.
//!
//! Invariant: a hostile PDF can neither crash nor hang the caller. The parser runs on its own
//! thread under `catch_unwind` and the caller waits at most [`TIME_LIMIT`]; text extraction
//! stops at its deadline and at its size limit ([`PdfLimits`]) and then says so
//! ([`TextCut`]: the pages read, of how many, and why it stopped); every stream decompresses to at most
//! [`MAX_STREAM`]. A parser thread that overran keeps its copy of the bytes until it ends,
//! and while [`MAX_OVERRUN`] of them still run no new PDF is read.

use crate::{Inspected, MAX_PDF_TEXT, MediaError, Result, size_text};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::AttachmentKind;

/// The longest the caller waits for a PDF to be read.
pub const TIME_LIMIT: Duration = Duration::from_secs(30);
/// Text extraction stops here and keeps what it found (the parser's own deadline).
pub const EXTRACT_LIMIT: Duration = Duration::from_secs(20);
/// The most one stream of the PDF may decompress to.
const MAX_STREAM: usize = 64 * 1024 * 1024;
/// The parser thread's stack: room for the nesting depth the parser allows.
const PARSER_STACK: usize = 32 * 1024 * 1024;
/// Parser threads that overran and still run; while this many do, PDFs are refused.
const MAX_OVERRUN: usize = 2;

static OVERRUNNING: AtomicUsize = AtomicUsize::new(0);

/// Where text extraction stops: it keeps what it found by then and says it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PdfLimits {
    /// How long extraction may run ([`EXTRACT_LIMIT`]); the first page is always read.
    pub extract_time: Duration,
    /// The most text kept, in bytes ([`MAX_PDF_TEXT`]).
    pub max_text: usize,
}

impl Default for PdfLimits {
    fn default() -> Self {
        PdfLimits { extract_time: EXTRACT_LIMIT, max_text: MAX_PDF_TEXT }
    }
}

/// Why a PDF's text stopped short of its last page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutReason {
    /// Extraction ran out of time (the duration it had).
    Time(Duration),
    /// The text reached the size limit (in bytes) inside the last page read.
    Size(usize),
}

/// A PDF's text that is not all of it: pages `1..=pages_read` of `pages` (the last of them only
/// in part when the size limit cut it). Its `Display` is the sentence the person and the model
/// read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextCut {
    /// Pages whose text was read (from the first).
    pub pages_read: u32,
    /// The PDF's pages.
    pub pages: u32,
    /// Why it stopped.
    pub reason: CutReason,
}

impl std::fmt::Display for TextCut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (read, of) = (self.pages_read, self.pages);
        let which = if read == 1 { "page 1".to_owned() } else { format!("pages 1–{read}") };
        match self.reason {
            CutReason::Time(limit) => {
                write!(f, "text of {which} of {of} only: extraction stopped after {} s", limit.as_secs_f64())
            }
            CutReason::Size(limit) => write!(
                f,
                "text of {which} of {of} only (page {read} cut short): extraction stopped at the size limit ({})",
                size_text(limit as u64)
            ),
        }
    }
}

/// What the parser found.
struct Read {
    pages: u32,
    text: Option<String>,
    cut: Option<TextCut>,
}

/// Why the parser gave up (mapped to a [`MediaError`] with the file's name).
enum Failure {
    Encrypted,
    Damaged(String),
}

/// A PDF's [`Inspected`]: pages and text layer.
pub(crate) fn inspect(name: &str, owned: Arc<Vec<u8>>, limits: PdfLimits) -> Result<Inspected> {
    if OVERRUNNING.load(Ordering::SeqCst) >= MAX_OVERRUN {
        return Err(MediaError::PdfTimeout { name: name.to_owned() });
    }
    let (tx, rx) = mpsc::sync_channel(1);
    // Whether the caller stopped waiting; the thread and the caller decide under this lock, so
    // an overrun is counted exactly when no one will take the thread's answer.
    let abandoned = Arc::new(Mutex::new(false));
    let gave_up = Arc::clone(&abandoned);
    let spawned = std::thread::Builder::new().name("pdf-read".into()).stack_size(PARSER_STACK).spawn(move || {
        let outcome = catch_unwind(AssertUnwindSafe(|| read(&owned, limits)))
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
            text_cut: read.cut,
            thumbnail: None,
        }),
        Err(Failure::Encrypted) => Err(MediaError::EncryptedPdf { name: name.to_owned() }),
        Err(Failure::Damaged(reason)) => Err(MediaError::DamagedPdf { name: name.to_owned(), reason }),
    }
}

/// Keeps every object but image streams: the text layer never refers to their pixels, and they
/// are most of a large PDF's bytes (scans, photos, figures), which the parser would otherwise hold
/// in memory beside the file (a 20 MB illustrated PDF: a peak of 45 MB, 2.2x the file).
fn without_images(id: (u32, u16), object: &mut lopdf::Object) -> Option<((u32, u16), lopdf::Object)> {
    if let lopdf::Object::Stream(stream) = object
        && stream.dict.get(b"Subtype").and_then(lopdf::Object::as_name).is_ok_and(|n| n == b"Image")
    {
        return None;
    }
    // The parser keeps the object it lent for most objects and the one returned for those inside
    // object streams, so both must be the object (a copy of a text-sized one).
    Some((id, object.clone()))
}

/// Parses `bytes` and extracts the text layer (on the parser thread).
fn read(bytes: &[u8], limits: PdfLimits) -> std::result::Result<Read, Failure> {
    let load = |filter: Option<lopdf::FilterFunc>| {
        let options = lopdf::LoadOptions { max_decompressed_size: Some(MAX_STREAM), filter, ..Default::default() };
        lopdf::Document::load_mem_with_options(bytes, options)
    };
    // Without its images first; a damaged file whose page tree only a full reading rebuilds (the
    // parser skips that repair when a filter is set) is read again whole.
    let doc = match load(Some(without_images)) {
        Ok(doc) if !doc.get_pages().is_empty() => Ok(doc),
        Ok(_) => load(None),
        Err(e) => Err(e),
    };
    let doc = match doc {
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
    let total = u32::try_from(pages.len()).unwrap_or(u32::MAX);
    let deadline = Instant::now() + limits.extract_time;
    let mut text = String::new();
    let (mut read, mut stopped) = (0u32, None);
    for &number in pages.keys() {
        if read > 0 {
            if text.len() >= limits.max_text {
                stopped = Some(CutReason::Size(limits.max_text));
                break;
            }
            if Instant::now() >= deadline {
                stopped = Some(CutReason::Time(limits.extract_time));
                break;
            }
        }
        // A page whose fonts or content cannot be read (or make the reader panic) adds
        // nothing; the others still count.
        let chunks = catch_unwind(AssertUnwindSafe(|| doc.extract_text_chunks_with_limit(&[number], MAX_STREAM)));
        for chunk in chunks.unwrap_or_default().into_iter().flatten() {
            text.push_str(&chunk);
        }
        read += 1;
    }
    if text.len() > limits.max_text {
        let mut end = limits.max_text;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        stopped = Some(CutReason::Size(limits.max_text));
    }
    let has_text = text.chars().any(|c| !c.is_whitespace());
    let cut = stopped.filter(|_| has_text).map(|reason| TextCut { pages_read: read, pages: total, reason });
    Ok(Read { pages: total, text: has_text.then_some(text), cut })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_left_out_of_the_parse_and_the_text_is_whole() {
        // 400 pages, each with a line of text and a 48 KB image: almost all of it image bytes.
        let pdf = crate::samples::pdf();
        let options = lopdf::LoadOptions { filter: Some(without_images), ..Default::default() };
        let doc = lopdf::Document::load_mem_with_options(&pdf, options).unwrap();
        let held: usize = doc.objects.values().filter_map(|o| o.as_stream().ok()).map(|s| s.content.len()).sum();
        assert_eq!(doc.get_pages().len(), 400);
        assert!(held < pdf.len() / 10, "{held} of {} bytes held", pdf.len());
        let Ok(read) = read(&pdf, PdfLimits::default()) else { panic!("the sample did not read") };
        assert_eq!((read.pages, read.cut.is_none()), (400, true));
        let text = read.text.unwrap();
        assert!(text.starts_with("0.0 ") && text.contains("399.0 "), "{}", &text[..200.min(text.len())]);
    }
}
