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

/// [`decode`] of an image whose `header` was read, but at no less than `want` (width × height as
/// shown) and as little more as the format allows: a JPEG is decoded at 1/2, 1/4 or 1/8 of each
/// side by its DCT, so a 12-megapixel photo's thumbnail holds 0.5 MB of pixels, not 36 MB. Any
/// other image, a JPEG no smaller scale serves, or one the scaling decoder cannot give as 8-bit
/// grey or RGB is decoded whole.
pub(crate) fn decode_at_least(
    name: &str,
    bytes: &[u8],
    format: ImageFormat,
    header: &Header,
    want: (u32, u32),
) -> Result<DynamicImage> {
    // `want` is as shown; the decoder scales the stored image.
    let (shown_w, _) = header.shown();
    let (want_w, want_h) = if shown_w == header.width { want } else { (want.1, want.0) };
    let smaller = want_w.saturating_mul(2) <= header.width && want_h.saturating_mul(2) <= header.height;
    match (format, smaller) {
        (ImageFormat::Jpeg, true) => match scaled_jpeg(bytes, want_w, want_h) {
            Some(mut image) => {
                image.apply_orientation(header.orientation);
                Ok(image)
            }
            None => Ok(decode(name, bytes, format)?.1),
        },
        _ => Ok(decode(name, bytes, format)?.1),
    }
}

/// A JPEG decoded at the smallest DCT scale that is at least `want_w` × `want_h` (the header was
/// checked by the caller); `None` when it cannot be, or the result is not 8-bit grey or RGB.
fn scaled_jpeg(bytes: &[u8], want_w: u32, want_h: u32) -> Option<DynamicImage> {
    let mut decoder = jpeg_decoder::Decoder::new(Cursor::new(bytes));
    decoder.set_max_decoding_buffer_size(usize::try_from(MAX_DECODE_ALLOC).unwrap_or(usize::MAX));
    let request = |v: u32| u16::try_from(v).unwrap_or(u16::MAX);
    let (w, h) = decoder.scale(request(want_w), request(want_h)).ok()?;
    let (w, h) = (u32::from(w), u32::from(h));
    // The decoder picks a scale when either side is large enough; both must be.
    if w < want_w || h < want_h {
        return None;
    }
    let pixels = decoder.decode().ok()?;
    match decoder.info()?.pixel_format {
        jpeg_decoder::PixelFormat::L8 => image::GrayImage::from_raw(w, h, pixels).map(DynamicImage::ImageLuma8),
        jpeg_decoder::PixelFormat::RGB24 => image::RgbImage::from_raw(w, h, pixels).map(DynamicImage::ImageRgb8),
        jpeg_decoder::PixelFormat::L16 | jpeg_decoder::PixelFormat::CMYK32 => None,
    }
}

/// The size `image.thumbnail(edge, edge)` gives an image `width` × `height`: within an `edge`
/// square, the aspect kept, rounded up (what a scaled decode must at least give).
pub(crate) fn within(width: u32, height: u32, edge: u32) -> (u32, u32) {
    let long = width.max(height);
    if long <= edge {
        return (width, height);
    }
    let side = |v: u32| ((u64::from(v) * u64::from(edge)).div_ceil(u64::from(long)) as u32).max(1);
    (side(width), side(height))
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
    let header = header(name, bytes, format)?;
    let (width, height) = header.shown();
    let image = decode_at_least(name, bytes, format, &header, within(width, height, THUMBNAIL_EDGE))?;
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
    let mut out = Vec::new();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
    match image {
        // Encoded as they are: a fitted photo's pixels (21 MB at Gemini's 3072 px) are not copied.
        DynamicImage::ImageRgb8(_) | DynamicImage::ImageLuma8(_) => image.write_with_encoder(encoder).ok()?,
        other => flatten(other).write_with_encoder(encoder).ok()?,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A `width` × `height` JPEG of smooth gradients.
    fn jpeg(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x * 255 / width) as u8, (y * 255 / height) as u8, ((x + y) % 256) as u8])
        });
        let mut out = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90).encode_image(&image).unwrap();
        out
    }

    /// The mean difference per channel of two images of one size.
    fn difference(a: &DynamicImage, b: &DynamicImage) -> f64 {
        let (a, b) = (a.to_rgb8(), b.to_rgb8());
        assert_eq!(a.dimensions(), b.dimensions());
        let sum: u64 = a.as_raw().iter().zip(b.as_raw()).map(|(x, y)| u64::from(x.abs_diff(*y))).sum();
        sum as f64 / a.as_raw().len() as f64
    }

    #[test]
    fn a_jpeg_is_decoded_at_the_smallest_scale_that_is_large_enough() {
        let bytes = jpeg(2000, 1500);
        let header = header("p.jpg", &bytes, ImageFormat::Jpeg).unwrap();
        assert_eq!((header.width, header.height), (2000, 1500));
        let decode = |want| decode_at_least("p.jpg", &bytes, ImageFormat::Jpeg, &header, want).unwrap();
        // 1/8 would be 250 × 188, under 256 wide: a quarter it is.
        let small = decode((256, 192));
        assert_eq!((small.width(), small.height()), (500, 375));
        let half = decode((900, 675));
        assert_eq!((half.width(), half.height()), (1000, 750));
        // No smaller scale serves 1024 wide (half is 1000): decoded whole.
        let whole = decode((1024, 768));
        assert_eq!((whole.width(), whole.height()), (2000, 1500));
        // The same picture as a whole decode scaled down.
        let reference = whole.thumbnail_exact(500, 375);
        assert!(difference(&small, &reference) < 4.0, "{}", difference(&small, &reference));
    }

    #[test]
    fn within_matches_the_thumbnail_it_stands_for() {
        assert_eq!(within(100, 50, THUMBNAIL_EDGE), (100, 50));
        for (w, h) in [(4000, 3000), (3000, 4000), (1200, 800), (257, 3), (300, 299)] {
            let image = DynamicImage::new_rgb8(w, h);
            let t = image.thumbnail(THUMBNAIL_EDGE, THUMBNAIL_EDGE);
            let (ww, wh) = within(w, h, THUMBNAIL_EDGE);
            assert!(ww >= t.width() && wh >= t.height() && ww <= t.width() + 1 && wh <= t.height() + 1, "{w}×{h}");
        }
    }
}
