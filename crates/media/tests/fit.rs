//! `fit_image`: within each API's limits, an image that fits is sent unchanged, one that does
//! not is scaled and re-encoded.

use image::{DynamicImage, Rgb, RgbImage, Rgba, RgbaImage};
use switchboard_media::{ImageLimits, fit_image};

fn encoded(image: &DynamicImage, format: image::ImageFormat) -> Vec<u8> {
    let mut out = Vec::new();
    image.write_to(&mut std::io::Cursor::new(&mut out), format).unwrap();
    out
}

fn photo(width: u32, height: u32) -> DynamicImage {
    DynamicImage::ImageRgb8(RgbImage::from_fn(width, height, |x, y| {
        Rgb([(x * 13 % 256) as u8, (y * 5 % 256) as u8, ((x + y) * 3 % 256) as u8])
    }))
}

fn size_of(bytes: &[u8]) -> (u32, u32) {
    let image = image::load_from_memory(bytes).unwrap();
    (image.width(), image.height())
}

#[test]
fn each_api_has_its_documented_limits() {
    assert_eq!(ImageLimits::for_api("anthropic").max_edge, 1568);
    assert_eq!(ImageLimits::for_api("gemini").max_edge, 3072);
    assert_eq!(ImageLimits::for_api("openai").max_short_edge, Some(768));
    assert_eq!(ImageLimits::for_api("openai-responses"), ImageLimits::OPENAI);
    assert_eq!(ImageLimits::for_api("something-compatible"), ImageLimits::OPENAI);
}

#[test]
fn an_image_that_fits_is_returned_byte_for_byte() {
    let bytes = encoded(&photo(800, 600), image::ImageFormat::Jpeg);
    for api in ["openai", "anthropic", "gemini"] {
        let (mime, out) = fit_image(&bytes, "image/jpeg", ImageLimits::for_api(api)).unwrap();
        assert_eq!((mime.as_str(), &out), ("image/jpeg", &bytes), "{api}");
    }
}

#[test]
fn a_large_photo_is_scaled_to_each_api() {
    let bytes = encoded(&photo(3200, 2400), image::ImageFormat::Jpeg);
    let (mime, out) = fit_image(&bytes, "image/jpeg", ImageLimits::ANTHROPIC).unwrap();
    let (w, h) = size_of(&out);
    assert_eq!(mime, "image/jpeg");
    assert!(w <= 1568 && h <= 1568 && u64::from(w * h) <= 1_150_000, "{w} × {h}");
    assert!(w > 1200, "scaled no more than needed: {w}");
    let (_, out) = fit_image(&bytes, "image/jpeg", ImageLimits::OPENAI).unwrap();
    let (w, h) = size_of(&out);
    assert!(h <= 768 && (1000..=2048).contains(&w), "{w} × {h}");
    let (_, out) = fit_image(&bytes, "image/jpeg", ImageLimits::GEMINI).unwrap();
    assert_eq!(size_of(&out), (3072, 2304));
}

#[test]
fn the_byte_limit_shrinks_an_image_until_it_fits() {
    let bytes = encoded(&photo(1000, 1000), image::ImageFormat::Png);
    let limits = ImageLimits { max_edge: 4000, max_short_edge: None, max_pixels: 16_000_000, max_bytes: 60_000 };
    let (mime, out) = fit_image(&bytes, "image/png", limits).unwrap();
    assert!(out.len() <= 60_000, "{}", out.len());
    assert!(mime == "image/png" || mime == "image/jpeg");
}

#[test]
fn transparency_stays_png_and_a_gif_becomes_its_first_frame() {
    let clear = DynamicImage::ImageRgba8(RgbaImage::from_fn(3000, 100, |x, _| Rgba([0, 0, 0, (x % 256) as u8])));
    let (mime, out) =
        fit_image(&encoded(&clear, image::ImageFormat::Png), "image/png", ImageLimits::ANTHROPIC).unwrap();
    assert_eq!((mime.as_str(), size_of(&out)), ("image/png", (1568, 52)));
    let gif = encoded(
        &DynamicImage::ImageRgba8(RgbaImage::from_pixel(2500, 10, Rgba([9, 9, 9, 255]))),
        image::ImageFormat::Gif,
    );
    let (mime, out) = fit_image(&gif, "image/gif", ImageLimits::ANTHROPIC).unwrap();
    assert_eq!((mime.as_str(), size_of(&out).0), ("image/jpeg", 1568));
}

#[test]
fn what_is_not_an_image_is_refused() {
    assert!(fit_image(b"%PDF-1.7", "image/png", ImageLimits::OPENAI).is_err());
}

#[test]
fn the_shape_told_from_the_stored_facts_is_what_fitting_sends() {
    let cases = [
        (photo(3000, 1500), image::ImageFormat::Png, "image/png"),
        (photo(900, 700), image::ImageFormat::Png, "image/png"),
        (photo(3200, 2400), image::ImageFormat::Jpeg, "image/jpeg"),
        (photo(700, 300), image::ImageFormat::Jpeg, "image/jpeg"),
        (photo(300, 2500), image::ImageFormat::Png, "image/png"),
    ];
    for (image, format, mime) in cases {
        let bytes = encoded(&image, format);
        for api in ["openai", "anthropic", "gemini"] {
            let limits = ImageLimits::for_api(api);
            let shape = limits.fitted_shape(mime, image.width(), image.height(), bytes.len() as u64);
            let (sent_mime, sent) = fit_image(&bytes, mime, limits).unwrap();
            let (width, height) = size_of(&sent);
            let told = (shape.width, shape.height, shape.mime_type);
            assert_eq!(
                told,
                (width, height, Some(sent_mime.as_str())),
                "{api}: {} × {} {mime}",
                image.width(),
                image.height()
            );
        }
    }
    // A GIF that must be scaled: its type depends on its pixels; one that fits stays a GIF.
    let shape = ImageLimits::ANTHROPIC.fitted_shape("image/gif", 2500, 10, 5_000);
    assert_eq!((shape.width, shape.mime_type), (1568, None));
    assert_eq!(ImageLimits::ANTHROPIC.fitted_shape("image/gif", 500, 10, 5_000).mime_type, Some("image/gif"));
}
