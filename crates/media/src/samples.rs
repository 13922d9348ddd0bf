//! The two big files, generated (deterministic, no fixtures on disk): a 12-megapixel
//! JPEG photo and a 20 MB, 400-page PDF with a text layer. For benchmarks (this crate's
//! `inspect`, the desktop app's `attach`); behind the `samples` feature, never in the app.

use lopdf::{Document, Object, Stream, dictionary};

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// The pages of [`pdf`].
pub const PDF_PAGES: u32 = 400;

/// A 4000 × 3000 photo-like JPEG (smooth gradients with noise), quality 90: about 5.6 MB.
pub fn photo() -> Vec<u8> {
    let mut rng = Rng(7);
    let image = image::RgbImage::from_fn(4000, 3000, |x, y| {
        let noise = (rng.next() % 24) as u32;
        image::Rgb([
            ((x / 16 + noise) % 256) as u8,
            ((y / 12 + noise) % 256) as u8,
            (((x + y) / 28 + noise) % 256) as u8,
        ])
    });
    let mut out = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(&image)
        .expect("encoding an image in memory into a Vec cannot fail");
    out
}

/// About 20 MB of PDF: [`PDF_PAGES`] pages, each with 40 lines of text (Helvetica; a line starts
/// with `page.line`) and a 48 KB incompressible image stream.
pub fn pdf() -> Vec<u8> {
    let mut rng = Rng(11);
    let words = ["invoice", "total", "switchboard", "attachment", "page", "figure", "results", "method"];
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let mut kids = Vec::new();
    for page in 0..PDF_PAGES {
        let mut content = String::from("BT\n/F1 10 Tf\n50 750 Td\n");
        for line in 0..40 {
            let text: Vec<&str> = (0..10).map(|_| words[(rng.next() % words.len() as u64) as usize]).collect();
            content.push_str(&format!("({page}.{line} {}) Tj\n0 -14 Td\n", text.join(" ")));
        }
        content.push_str("ET\n/Im1 Do\n");
        let pixels: Vec<u8> = (0..48 * 1024).map(|_| rng.next() as u8).collect();
        let image_id = doc.add_object(Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Image", "Width" => 128, "Height" => 128,
            "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8 },
            pixels,
        ));
        let contents_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
        kids.push(Object::Reference(doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id }, "XObject" => dictionary! { "Im1" => image_id } },
            "Contents" => contents_id,
        })));
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => i64::from(PDF_PAGES) }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("writing into a Vec cannot fail");
    out
}
