//! What an attached file is and what a request may carry of it: ingestion for attachments.
//!
//! [`inspect`] takes a file's name and bytes and says what it is, by its content (never by its
//! extension): an image (PNG, JPEG, GIF, WebP; decoded under size and allocation limits, with a
//! small thumbnail), a PDF (its pages and its text layer, parsed on a watched thread) or UTF-8
//! text (the extension only names the code language). Everything else — SVG (it can carry
//! scripts), archives, executables, unknown binaries — is refused with a [`MediaError`] whose
//! message is meant for the person. [`fit_image`] makes an image fit one API's documented
//! limits ([`ImageLimits::for_api`]), leaving one that already fits byte for byte unchanged.
//!
//! Architecture invariant: no I/O, no clock but the PDF watchdog's, no async: the caller hands
//! in bytes and runs this off its async runtime. Every size is bounded before work is done on
//! it: the byte limits per kind ([`limit_for`]), the pixels and allocation of a decoded image,
//! the time, panics and decompressed size of the PDF parser.

mod fit;
mod pdf;
mod picture;
#[cfg(feature = "samples")]
pub mod samples;
mod sniff;

pub use fit::{FittedShape, ImageLimits, fit_image};
pub use pdf::{CutReason, EXTRACT_LIMIT, PdfLimits, TextCut};
pub use sniff::image_mime;

use std::sync::Arc;
use switchboard_core::AttachmentKind;

/// A file's bytes as [`inspect`] takes them: lent, or shared, so that a PDF's parser thread
/// (which may outlive the call, see the `pdf` module) holds them without a copy of its own. Lent
/// bytes of a PDF are copied once for that thread.
#[derive(Clone, Debug)]
pub enum FileBytes<'a> {
    /// Bytes the caller keeps.
    Lent(&'a [u8]),
    /// Bytes the caller shares.
    Shared(Arc<Vec<u8>>),
}

impl FileBytes<'_> {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            FileBytes::Lent(bytes) => bytes,
            FileBytes::Shared(bytes) => bytes,
        }
    }

    /// The bytes, owned by whoever holds the result (a copy only of lent bytes).
    fn to_shared(&self) -> Arc<Vec<u8>> {
        match self {
            FileBytes::Lent(bytes) => Arc::new(bytes.to_vec()),
            FileBytes::Shared(bytes) => Arc::clone(bytes),
        }
    }
}

impl<'a> From<&'a [u8]> for FileBytes<'a> {
    fn from(bytes: &'a [u8]) -> Self {
        FileBytes::Lent(bytes)
    }
}

impl<'a> From<&'a Vec<u8>> for FileBytes<'a> {
    fn from(bytes: &'a Vec<u8>) -> Self {
        FileBytes::Lent(bytes)
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for FileBytes<'a> {
    fn from(bytes: &'a [u8; N]) -> Self {
        FileBytes::Lent(bytes)
    }
}

impl From<Arc<Vec<u8>>> for FileBytes<'_> {
    fn from(bytes: Arc<Vec<u8>>) -> Self {
        FileBytes::Shared(bytes)
    }
}

/// The largest image file accepted.
pub const MAX_IMAGE_BYTES: u64 = 30 * MB;
/// The largest PDF accepted.
pub const MAX_PDF_BYTES: u64 = 50 * MB;
/// The largest text file accepted.
pub const MAX_TEXT_BYTES: u64 = 10 * MB;
/// The largest file of any kind: a caller refuses a bigger file before reading it.
pub const MAX_FILE_BYTES: u64 = MAX_PDF_BYTES;
/// The most pixels an image may have to be decoded (50 megapixels: a 12-megapixel photo fits
/// four times over; a 50,000 × 50,000 "decompression bomb" does not).
pub const MAX_PIXELS: u64 = 50_000_000;
/// The longest edge an image may have to be decoded.
pub const MAX_EDGE: u32 = 20_000;
/// The most bytes decoding one image may allocate.
pub const MAX_DECODE_ALLOC: u64 = 512 * MB;
/// The longest edge of a thumbnail.
pub const THUMBNAIL_EDGE: u32 = 256;
/// The largest thumbnail, encoded.
pub const MAX_THUMBNAIL_BYTES: usize = 64 * 1024;
/// The most text kept from a PDF's text layer (search and the fallback for models that read no
/// PDFs); extraction stops there.
pub const MAX_PDF_TEXT: usize = 8 * 1024 * 1024;

const MB: u64 = 1024 * 1024;

/// What a file turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspected {
    /// The media type, from the bytes (`image/png`, `application/pdf`, `text/x-rust`).
    pub mime_type: String,
    /// How it is sent.
    pub kind: AttachmentKind,
    /// An image's width in pixels, as shown (EXIF orientation applied).
    pub width: Option<u32>,
    /// An image's height in pixels, as shown.
    pub height: Option<u32>,
    /// A PDF's page count.
    pub pages: Option<u32>,
    /// A text file's text, or a PDF's text layer (`None`: the PDF has none). At most
    /// [`MAX_PDF_TEXT`] for a PDF.
    pub text: Option<String>,
    /// Whether a PDF's `text` stops short of its last page, and why (`None`: all of it, or no
    /// text).
    pub text_cut: Option<TextCut>,
    /// An image's thumbnail: PNG (transparency) or JPEG, at most [`THUMBNAIL_EDGE`] pixels a
    /// side and [`MAX_THUMBNAIL_BYTES`] (see [`image_mime`] for its type).
    pub thumbnail: Option<Vec<u8>>,
}

/// Why a file cannot be attached (or an image not fitted). Each message is for the person: it
/// names the file, says what is wrong and what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MediaError {
    /// Empty file.
    #[error("{name} is empty.")]
    Empty {
        /// The file's name.
        name: String,
    },
    /// Over the size limit of its kind.
    #[error("{name} is too large to attach ({}): {what} can be at most {}.", size_text(*size), size_text(*limit))]
    TooLarge {
        /// The file's name.
        name: String,
        /// "an image", "a PDF", "a text file", "a file".
        what: &'static str,
        /// Its size in bytes.
        size: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// SVG: refused, it can carry scripts.
    #[error("{name} is an SVG image, which can carry scripts and is not sent: export it as PNG and attach that.")]
    Svg {
        /// The file's name.
        name: String,
    },
    /// A type no API takes.
    #[error(
        "{name} is {what}, which can't be sent to a model: attach an image (PNG, JPEG, GIF, WebP), a PDF or a text file."
    )]
    Unsupported {
        /// The file's name.
        name: String,
        /// What it is ("a ZIP archive (application/zip)", "an unknown binary file").
        what: String,
    },
    /// Looks like an image but does not decode.
    #[error("{name} doesn't decode as an image: {reason}. Open it in an image editor and save it again.")]
    BadImage {
        /// The file's name.
        name: String,
        /// What is wrong, in plain words.
        reason: String,
    },
    /// More pixels than [`MAX_PIXELS`] or [`MAX_EDGE`] (a decompression bomb among them).
    #[error(
        "{name} says it is {width} × {height} pixels, more than Switchboard opens ({} megapixels, {MAX_EDGE} pixels a side): scale it down and attach it again.",
        MAX_PIXELS / 1_000_000
    )]
    ImageTooBig {
        /// The file's name.
        name: String,
        /// The width its header claims.
        width: u32,
        /// The height its header claims.
        height: u32,
    },
    /// A PDF that needs a password.
    #[error("encrypted PDF: {name} needs a password to open; save a copy without the password and attach that.")]
    EncryptedPdf {
        /// The file's name.
        name: String,
    },
    /// A PDF that cannot be parsed.
    #[error("damaged PDF: {name} can't be read ({reason}); open it in a PDF viewer and save or print it to a new PDF.")]
    DamagedPdf {
        /// The file's name.
        name: String,
        /// What went wrong.
        reason: String,
    },
    /// The PDF parser ran past its time limit (or too many earlier ones still run).
    #[error("{name}: reading the PDF took too long and was stopped; print it to a new PDF and attach that.")]
    PdfTimeout {
        /// The file's name.
        name: String,
    },
    /// An image could not be made to fit an API's limits.
    #[error("{name} can't be made small enough for this model ({reason}).")]
    CannotFit {
        /// The file's name (or its type when fitting has none).
        name: String,
        /// Why.
        reason: String,
    },
}

/// `Result` of this crate.
pub type Result<T> = std::result::Result<T, MediaError>;

/// The size limit of `kind`.
pub fn limit_for(kind: AttachmentKind) -> u64 {
    match kind {
        AttachmentKind::Image => MAX_IMAGE_BYTES,
        AttachmentKind::Pdf => MAX_PDF_BYTES,
        AttachmentKind::Text => MAX_TEXT_BYTES,
    }
}

/// A size for people: `512 bytes`, `12.5 KB`, `30.0 MB`.
pub fn size_text(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < MB as f64 {
        format!("{:.1} KB", b / 1024.0)
    } else if b < 1024.0 * MB as f64 {
        format!("{:.1} MB", b / MB as f64)
    } else {
        format!("{:.1} GB", b / (1024.0 * MB as f64))
    }
}

/// What `bytes`, attached under `name`, are: see the crate's doc. CPU-bound (an image is decoded
/// for its thumbnail, a PDF parsed for its text): call it off an async runtime.
pub fn inspect<'a>(name: &str, bytes: impl Into<FileBytes<'a>>) -> Result<Inspected> {
    inspect_with(name, bytes, PdfLimits::default())
}

/// [`inspect`] with a PDF's text extraction stopping at `pdf` instead of the defaults.
pub fn inspect_with<'a>(name: &str, bytes: impl Into<FileBytes<'a>>, pdf: PdfLimits) -> Result<Inspected> {
    let file = bytes.into();
    let bytes = file.as_slice();
    let size = bytes.len() as u64;
    if bytes.is_empty() {
        return Err(MediaError::Empty { name: name.to_owned() });
    }
    if size > MAX_FILE_BYTES {
        return Err(MediaError::TooLarge { name: name.to_owned(), what: "a file", size, limit: MAX_FILE_BYTES });
    }
    let sniffed = sniff::sniff(name, bytes)?;
    let (kind, what) = match &sniffed {
        sniff::Sniffed::Image(_) => (AttachmentKind::Image, "an image"),
        sniff::Sniffed::Pdf => (AttachmentKind::Pdf, "a PDF"),
        sniff::Sniffed::Text { .. } => (AttachmentKind::Text, "a text file"),
    };
    let limit = limit_for(kind);
    if size > limit {
        return Err(MediaError::TooLarge { name: name.to_owned(), what, size, limit });
    }
    match sniffed {
        sniff::Sniffed::Image(format) => picture::inspect(name, bytes, format),
        sniff::Sniffed::Pdf => pdf::inspect(name, file.to_shared(), pdf),
        sniff::Sniffed::Text { mime_type, text } => Ok(Inspected {
            mime_type: mime_type.to_owned(),
            kind,
            width: None,
            height: None,
            pages: None,
            text: Some(text),
            text_cut: None,
            thumbnail: None,
        }),
    }
}
