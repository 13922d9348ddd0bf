//! Images made to fit one API's documented limits before a request carries them; the stored
//! original is never touched.
//!
//! Invariant: an image that already fits (edges, pixels, bytes, an accepted type, no EXIF turn
//! to apply) is returned byte for byte; any other is decoded once (first frame of a GIF or
//! WebP animation; a JPEG at the smallest DCT scale not under the size sent), turned as EXIF
//! says, scaled down by area averaging (sharp for a downscale, and no floating-point copy of a
//! 12-megapixel image) and re-encoded as PNG (transparency, or a PNG that stays small) or JPEG.

use crate::picture::{self, encode_jpeg, encode_png, has_transparency};
use crate::sniff::{image_format, mime_of};
use crate::{MediaError, Result};
use image::metadata::Orientation;
use std::borrow::Cow;

/// What one API takes of an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageLimits {
    /// The longest edge, in pixels.
    pub max_edge: u32,
    /// The shortest edge, in pixels, when the API scales to one (OpenAI's high detail).
    pub max_short_edge: Option<u32>,
    /// The most pixels.
    pub max_pixels: u64,
    /// The most bytes of the encoded image (before base64).
    pub max_bytes: usize,
}

impl ImageLimits {
    /// OpenAI (Chat and Responses), "Images and vision" guide: a high-detail image is scaled
    /// to fit within 2048 × 2048, then so that its shortest side is 768 px; larger images cost
    /// latency and nothing else. Image inputs up to 20 MB (`max_bytes`). OpenAI-compatible
    /// servers (Ollama, vLLM, ...) get the same.
    pub const OPENAI: ImageLimits =
        ImageLimits { max_edge: 2048, max_short_edge: Some(768), max_pixels: 2048 * 768, max_bytes: 20_000_000 };

    /// Anthropic, "Vision" guide: an image whose long edge is over 1568 px or is over ~1,600
    /// tokens is scaled down ("resize images to no more than 1.15 megapixels (and within 1568
    /// pixels in both dimensions)"); over 8000 × 8000 px is rejected; 5 MB per image on the
    /// API, counted on the base64 text, hence 3.75 MB of image (5 MB × 3/4).
    pub const ANTHROPIC: ImageLimits =
        ImageLimits { max_edge: 1568, max_short_edge: None, max_pixels: 1_150_000, max_bytes: 3_750_000 };

    /// Gemini, "Image understanding": inline data is limited by the whole request's 20 MB;
    /// Vertex AI documents 7 MB per inline image file, kept here so several fit one request.
    /// Long edge 3072 px: Gemini reads large images as 768 px tiles, four a side.
    pub const GEMINI: ImageLimits =
        ImageLimits { max_edge: 3072, max_short_edge: None, max_pixels: 3072 * 3072, max_bytes: 7_000_000 };

    /// The limits of the API `kind` (a provider kind id: `openai`, `openai-responses`,
    /// `anthropic`, `gemini`); any other kind gets OpenAI's, which every OpenAI-compatible
    /// server follows.
    pub fn for_api(kind: &str) -> ImageLimits {
        match kind {
            "anthropic" => Self::ANTHROPIC,
            "gemini" => Self::GEMINI,
            _ => Self::OPENAI,
        }
    }

    /// `width` × `height` scaled by `scale`, rounded, and within these limits.
    fn scaled(&self, width: u32, height: u32, scale: f64) -> (u32, u32) {
        let round = |v: u32| ((f64::from(v) * scale).round() as u32).clamp(1, v);
        let (mut w, mut h) = (round(width), round(height));
        let over = |w: u32, h: u32| {
            w.max(h) > self.max_edge
                || self.max_short_edge.is_some_and(|s| w.min(h) > s)
                || u64::from(w) * u64::from(h) > self.max_pixels
        };
        while over(w, h) && w.min(h) > 1 {
            if w >= h {
                w -= 1;
                h = ((f64::from(w) * f64::from(height) / f64::from(width)).round() as u32).max(1);
            } else {
                h -= 1;
                w = ((f64::from(h) * f64::from(width) / f64::from(height)).round() as u32).max(1);
            }
        }
        (w, h)
    }

    /// The scale (≤ 1) that brings `width` × `height` within these limits.
    fn scale(&self, width: u32, height: u32) -> f64 {
        let (w, h) = (f64::from(width), f64::from(height));
        let (long, short) = (w.max(h), w.min(h));
        let mut scale = (f64::from(self.max_edge) / long).min(1.0);
        if let Some(max_short) = self.max_short_edge {
            scale = scale.min(f64::from(max_short) / short);
        }
        scale.min((self.max_pixels as f64 / (w * h)).sqrt())
    }
}

/// What [`fit_image`] sends of a stored image, told from what is stored of it (its media type,
/// its dimensions as shown and its size in bytes) without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FittedShape {
    /// The width and height it is sent at.
    pub width: u32,
    /// See `width`.
    pub height: u32,
    /// The media type it is sent as, when the stored facts decide it (`None`: a GIF or WebP
    /// that must be scaled goes as PNG when it has transparency, else as JPEG).
    pub mime_type: Option<&'static str>,
}

impl ImageLimits {
    /// What [`fit_image`] makes of an image of type `mime`, `width` × `height` as shown and
    /// `bytes` long (see [`FittedShape`]): the same scaling, read off the stored facts. Exact but
    /// for an image whose re-encoding would still be over `max_bytes` at that size (taken to fit).
    pub fn fitted_shape(&self, mime: &str, width: u32, height: u32, bytes: u64) -> FittedShape {
        let scale = self.scale(width, height);
        let (width, height) = if scale >= 1.0 { (width, height) } else { self.scaled(width, height, scale) };
        let unchanged = scale >= 1.0 && bytes <= self.max_bytes as u64;
        let mime_type = match mime {
            // Re-encoded, a PNG stays a PNG and a JPEG (never transparent) a JPEG.
            "image/png" => Some("image/png"),
            "image/jpeg" => Some("image/jpeg"),
            "image/gif" if unchanged => Some("image/gif"),
            "image/webp" if unchanged => Some("image/webp"),
            _ => None,
        };
        FittedShape { width, height, mime_type }
    }
}

/// `bytes` (an image; `mime` is only a hint, the bytes decide) fitted to `limits`: its media
/// type and bytes. See the module doc. CPU-bound.
pub fn fit_image(bytes: &[u8], mime: &str, limits: ImageLimits) -> Result<(String, Vec<u8>)> {
    let name = format!("The {mime} image");
    let Some(format) = image_format(bytes) else {
        return Err(MediaError::Unsupported { name, what: "not a PNG, JPEG, GIF or WebP image".into() });
    };
    let header = picture::header(&name, bytes, format)?;
    let (header_w, header_h) = header.shown();
    let scale = limits.scale(header_w, header_h);
    if scale >= 1.0 && bytes.len() <= limits.max_bytes && header.orientation == Orientation::NoTransforms {
        return Ok((mime_of(format).to_owned(), bytes.to_vec()));
    }
    let mut scale = scale.min(1.0);
    // Decoded at no less than the first size tried (a JPEG at a fraction of its pixels).
    let image = picture::decode_at_least(&name, bytes, format, &header, limits.scaled(header_w, header_h, scale))?;
    let (width, height) = (image.width(), image.height());
    let transparent = has_transparency(&image);
    for _ in 0..8 {
        let (w, h) = limits.scaled(header_w, header_h, scale);
        let resized =
            if (w, h) == (width, height) { Cow::Borrowed(&image) } else { Cow::Owned(image.thumbnail_exact(w, h)) };
        // A screenshot keeps its sharp text as PNG while that is small; a photo is a JPEG.
        let png = (transparent || format == image::ImageFormat::Png).then(|| encode_png(&resized)).flatten();
        if let Some(png) = png.filter(|p| p.len() <= limits.max_bytes) {
            return Ok(("image/png".to_owned(), png));
        }
        if !transparent
            && let Some(jpeg) = encode_jpeg(&resized, 85)
            && jpeg.len() <= limits.max_bytes
        {
            return Ok(("image/jpeg".to_owned(), jpeg));
        }
        scale *= 0.75;
    }
    Err(MediaError::CannotFit { name, reason: format!("still over {} bytes when scaled down", limits.max_bytes) })
}
