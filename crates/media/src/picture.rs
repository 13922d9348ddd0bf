//! Images: the header read and checked before anything is decoded (a PNG claiming 50,000 ×
//! 50,000 pixels is refused having allocated nothing), decoding under `image::Limits`, EXIF
//! orientation, and the thumbnail.
//!
//! Invariant: no image is decoded unless its header's dimensions are within [`MAX_EDGE`] and
//! [`MAX_PIXELS`], and the decoder itself is held to [`MAX_DECODE_ALLOC`].

use crate::{
    Inspected, MAX_DECODE_ALLOC, MAX_EDGE, MAX_PIXELS, MAX_THUMBNAIL_BYTES, MediaError, Result, THUMBNAIL_EDGE,
    sniff::mime_of,
};
use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits};
use std::io::Cursor;
use switchboard_core::AttachmentKind;

/// An image's header: stored dimensions and its EXIF orientation.
pub(crate) struct Header {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) orientation: Orientation,
}

impl Header {
    /// The dimensions as shown (a quarter turn swaps them).
    pub(crate) fn shown(&self) -> (u32, u32) {
        match self.orientation {
            Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH => (self.height, self.width),
            _ => (self.width, self.height),
        }
    }
}

fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_EDGE);
    limits.max_image_height = Some(MAX_EDGE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    limits
}

fn decoder<'a>(name: &str, bytes: &'a [u8], format: ImageFormat) -> Result<impl ImageDecoder + 'a> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits());
    reader.into_decoder().map_err(|e| image_error(name, bytes, format, e))
}

/// Reads and checks the header only.
pub(crate) fn header(name: &str, bytes: &[u8], format: ImageFormat) -> Result<Header> {
    let mut decoder = decoder(name, bytes, format)?;
    checked_header(name, &mut decoder)
}

fn checked_header(name: &str, decoder: &mut impl ImageDecoder) -> Result<Header> {
    let (width, height) = decoder.dimensions();
    if width == 0 || height == 0 {
        return Err(MediaError::BadImage { name: name.to_owned(), reason: "it has no pixels".into() });
    }
    if width > MAX_EDGE || height > MAX_EDGE || u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(MediaError::ImageTooBig { name: name.to_owned(), width, height });
    }
    // An unreadable EXIF block is not worth refusing the image for.
    let orientation = decoder.orientation().unwrap_or(Orientation::NoTransforms);
    Ok(Header { width, height, orientation })
}

/// Decodes the image (its first frame, for an animated GIF or WebP), orientation applied.
pub(crate) fn decode(name: &str, bytes: &[u8], format: ImageFormat) -> Result<(Header, DynamicImage)> {
    let mut decoder = decoder(name, bytes, format)?;
    let header = checked_header(name, &mut decoder)?;
    let mut image = DynamicImage::from_decoder(decoder).map_err(|e| image_error(name, bytes, format, e))?;
    image.apply_orientation(header.orientation);
    Ok((header, image))
}

fn image_error(name: &str, bytes: &[u8], format: ImageFormat, e: image::ImageError) -> MediaError {
    match e {
        image::ImageError::Limits(_) => {
            // The decoder refused the header's claim; say what it claimed when it can be read.
            let (width, height) = claimed_size(bytes, format).unwrap_or((0, 0));
            MediaError::ImageTooBig { name: name.to_owned(), width, height }
        }
        other => MediaError::BadImage { name: name.to_owned(), reason: plain_reason(&other).to_owned() },
    }
}

/// What went wrong, for a person (the decoder's own words name its internals).
fn plain_reason(e: &image::ImageError) -> &'static str {
    match e {
        image::ImageError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => "it is cut short",
        image::ImageError::IoError(_) => "it could not be read",
        image::ImageError::Unsupported(_) => "it uses a variant of its format that isn't supported",
        _ => "its data is damaged or cut short",
    }
}

/// The dimensions a PNG's or GIF's header claims, read without a decoder.
fn claimed_size(bytes: &[u8], format: ImageFormat) -> Option<(u32, u32)> {
    let be = |i: usize| Some(u32::from_be_bytes(bytes.get(i..i + 4)?.try_into().ok()?));
    let le16 = |i: usize| Some(u32::from(u16::from_le_bytes(bytes.get(i..i + 2)?.try_into().ok()?)));
    match format {
        ImageFormat::Png => Some((be(16)?, be(20)?)),
        ImageFormat::Gif => Some((le16(6)?, le16(8)?)),
        _ => None,
    }
}

/// An image's [`Inspected`]: dimensions as shown and a thumbnail.
pub(crate) fn inspect(name: &str, bytes: &[u8], format: ImageFormat) -> Result<Inspected> {
    let (header, image) = decode(name, bytes, format)?;
    let (width, height) = header.shown();
    let thumbnail = thumbnail(&image);
    Ok(Inspected {
        mime_type: mime_of(format).to_owned(),
        kind: AttachmentKind::Image,
        width: Some(width),
        height: Some(height),
        pages: None,
        text: None,
        text_cut: None,
        thumbnail,
    })
}

/// A thumbnail at most [`THUMBNAIL_EDGE`] pixels a side and [`MAX_THUMBNAIL_BYTES`]: PNG when the
/// image has transparency, else JPEG; smaller and plainer until it fits (`None` if nothing
/// does, which a real image never reaches).
pub(crate) fn thumbnail(image: &DynamicImage) -> Option<Vec<u8>> {
    let transparent = has_transparency(image);
    for edge in [THUMBNAIL_EDGE, 192, 128, 64] {
        let small = image.thumbnail(edge, edge);
        if transparent
            && let Some(png) = encode_png(&small)
            && png.len() <= MAX_THUMBNAIL_BYTES
        {
            return Some(png);
        }
        for quality in [80, 60] {
            if let Some(jpeg) = encode_jpeg(&small, quality)
                && jpeg.len() <= MAX_THUMBNAIL_BYTES
            {
                return Some(jpeg);
            }
        }
    }
    None
}

/// Whether any pixel is not fully opaque.
pub(crate) fn has_transparency(image: &DynamicImage) -> bool {
    if !image.color().has_alpha() {
        return false;
    }
    match image {
        DynamicImage::ImageLumaA8(i) => i.pixels().any(|p| p.0[1] < u8::MAX),
        DynamicImage::ImageRgba8(i) => i.pixels().any(|p| p.0[3] < u8::MAX),
        other => other.to_rgba8().pixels().any(|p| p.0[3] < u8::MAX),
    }
}

/// PNG of `image` (8 bits a channel).
pub(crate) fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let image = match image {
        DynamicImage::ImageLuma8(_)
        | DynamicImage::ImageLumaA8(_)
        | DynamicImage::ImageRgb8(_)
        | DynamicImage::ImageRgba8(_) => std::borrow::Cow::Borrowed(image),
        other if other.color().has_alpha() => std::borrow::Cow::Owned(DynamicImage::ImageRgba8(other.to_rgba8())),
        other => std::borrow::Cow::Owned(DynamicImage::ImageRgb8(other.to_rgb8())),
    };
    let mut out = Vec::new();
    image.write_to(&mut Cursor::new(&mut out), ImageFormat::Png).ok()?;
    Some(out)
}

/// JPEG of `image` at `quality`, transparency flattened onto white.
pub(crate) fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let rgb = flatten(image);
    let mut out = Vec::new();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
    rgb.write_with_encoder(encoder).ok()?;
    Some(out)
}

/// RGB on a white background.
fn flatten(image: &DynamicImage) -> image::RgbImage {
    if !image.color().has_alpha() {
        return image.to_rgb8();
    }
    let rgba = image.to_rgba8();
    image::RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
        let [r, g, b, a] = rgba.get_pixel(x, y).0;
        let over = |c: u8| ((u16::from(c) * u16::from(a) + 255 * (255 - u16::from(a))) / 255) as u8;
        image::Rgb([over(r), over(g), over(b)])
    })
}
