//! `inspect`: every kind accepted, and every bad input of issue 26 that is a file's content
//! refused with its own typed, person-facing error. Fixtures are generated here.

use image::{DynamicImage, ImageEncoder, Rgb, RgbImage, Rgba, RgbaImage};
use lopdf::{Document, Object, Stream, dictionary};
use std::time::Duration;
use switchboard_core::AttachmentKind;
use switchboard_media::{
    CutReason, MAX_THUMBNAIL_BYTES, MediaError, PdfLimits, THUMBNAIL_EDGE, TextCut, image_mime, inspect, inspect_with,
};

fn photo(width: u32, height: u32) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| Rgb([(x * 7 % 256) as u8, (y * 3 % 256) as u8, ((x ^ y) % 256) as u8]))
}

fn png(image: &DynamicImage) -> Vec<u8> {
    let mut out = Vec::new();
    image.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

fn jpeg_with_exif(image: &RgbImage, exif: Option<Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
    if let Some(exif) = exif {
        encoder.set_exif_metadata(exif).unwrap();
    }
    encoder.write_image(image.as_raw(), image.width(), image.height(), image::ExtendedColorType::Rgb8).unwrap();
    out
}

/// A big-endian TIFF block with one entry: Orientation = `value`.
fn exif_orientation(value: u16) -> Vec<u8> {
    let mut exif = b"MM\x00\x2a\x00\x00\x00\x08".to_vec();
    exif.extend_from_slice(&1u16.to_be_bytes());
    exif.extend_from_slice(&0x0112u16.to_be_bytes());
    exif.extend_from_slice(&3u16.to_be_bytes());
    exif.extend_from_slice(&1u32.to_be_bytes());
    exif.extend_from_slice(&value.to_be_bytes());
    exif.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    exif
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn chunk(kind: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc_input = kind.to_vec();
    crc_input.extend_from_slice(data);
    out.extend_from_slice(&crc32(&crc_input).to_be_bytes());
    out
}

/// A 100-byte PNG whose header claims `width` × `height` RGBA pixels.
fn bomb_png(width: u32, height: u32) -> Vec<u8> {
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    // A zlib stream of a few zero bytes: what a bomb's compressed rows start with.
    out.extend(chunk(b"IDAT", &[0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01]));
    out.extend(chunk(b"IEND", &[]));
    out
}

/// A PDF with one page per entry of `texts` (an empty entry: a page with no text).
fn pdf_document(texts: &[&str]) -> Document {
    let mut doc = Document::with_version("1.5");
    doc.trailer.set(
        "ID",
        Object::Array(vec![Object::string_literal(b"0123456789abcdef"), Object::string_literal(b"fedcba9876543210")]),
    );
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let kids: Vec<Object> = texts
        .iter()
        .map(|text| {
            let content = if text.is_empty() {
                "0 0 m 100 100 l S\n".to_owned()
            } else {
                format!("BT\n/F1 12 Tf\n100 700 Td\n({text}) Tj\nET\n")
            };
            let contents_id = doc.add_object(Stream::new(dictionary! {}, content.into_bytes()));
            Object::Reference(doc.add_object(dictionary! {
                "Type" => "Page",
                "Parent" => pages_id,
                "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
                "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id } },
                "Contents" => contents_id,
            }))
        })
        .collect();
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => texts.len() as i64 }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    doc
}

fn save(mut doc: Document) -> Vec<u8> {
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

fn encrypted_pdf(user_password: &str) -> Vec<u8> {
    let mut doc = pdf_document(&["Secret page"]);
    let state = lopdf::EncryptionState::try_from(lopdf::EncryptionVersion::V2 {
        document: &doc,
        owner_password: "owner",
        user_password,
        key_length: 128,
        permissions: lopdf::Permissions::all(),
    })
    .unwrap();
    doc.encrypt(&state).unwrap();
    save(doc)
}

#[test]
fn a_photo_is_an_image_with_its_size_and_a_small_jpeg_thumbnail() {
    let bytes = jpeg_with_exif(&photo(1200, 800), None);
    let got = inspect("photo.jpg", &bytes).unwrap();
    assert_eq!((got.kind, got.mime_type.as_str()), (AttachmentKind::Image, "image/jpeg"));
    assert_eq!((got.width, got.height), (Some(1200), Some(800)));
    let thumb = got.thumbnail.unwrap();
    assert!(thumb.len() <= MAX_THUMBNAIL_BYTES);
    assert_eq!(image_mime(&thumb), Some("image/jpeg"));
    let small = image::load_from_memory(&thumb).unwrap();
    assert_eq!((small.width(), small.height()), (THUMBNAIL_EDGE, 171));
}

#[test]
fn a_transparent_png_gets_a_png_thumbnail_and_the_type_comes_from_the_bytes() {
    let image = RgbaImage::from_fn(300, 300, |x, _| Rgba([200, 10, 10, (x % 256) as u8]));
    let bytes = png(&DynamicImage::ImageRgba8(image));
    let got = inspect("logo.jpg", &bytes).unwrap();
    assert_eq!(got.mime_type, "image/png");
    assert_eq!(image_mime(&got.thumbnail.unwrap()), Some("image/png"));
}

#[test]
fn exif_orientation_turns_the_dimensions_and_the_thumbnail() {
    // Orientation 6: shown turned a quarter clockwise, so 400 × 200 stored is 200 × 400 shown.
    let bytes = jpeg_with_exif(&photo(400, 200), Some(exif_orientation(6)));
    let got = inspect("phone.jpg", &bytes).unwrap();
    assert_eq!((got.width, got.height), (Some(200), Some(400)));
    let small = image::load_from_memory(&got.thumbnail.unwrap()).unwrap();
    assert!(small.height() > small.width());
}

#[test]
fn a_large_turned_photo_is_thumbnailed_from_a_scaled_decode_the_right_way_up() {
    // 2400 × 1200 stored, orientation 6: decoded at a quarter by its stored sides (600 × 300),
    // then turned, so the thumbnail is 128 × 256 and its top row is the stored left column.
    let stored = RgbImage::from_fn(2400, 1200, |x, _| if x < 1200 { Rgb([250, 250, 250]) } else { Rgb([5, 5, 5]) });
    let bytes = jpeg_with_exif(&stored, Some(exif_orientation(6)));
    let got = inspect("phone.jpg", &bytes).unwrap();
    assert_eq!((got.width, got.height), (Some(1200), Some(2400)));
    let small = image::load_from_memory(&got.thumbnail.unwrap()).unwrap().to_rgb8();
    assert_eq!(small.dimensions(), (128, 256));
    // Turned a quarter clockwise: the stored left half (light) is now the top half.
    assert!(small.get_pixel(64, 20).0[0] > 200 && small.get_pixel(64, 236).0[0] < 50);
}

#[test]
fn a_gif_is_read_by_its_first_frame() {
    let mut bytes = Vec::new();
    {
        let mut encoder = image::codecs::gif::GifEncoder::new(&mut bytes);
        for shade in [0u8, 255] {
            let frame = RgbaImage::from_pixel(20, 10, Rgba([shade, shade, shade, 255]));
            encoder.encode_frame(image::Frame::new(frame)).unwrap();
        }
    }
    let got = inspect("anim.gif", &bytes).unwrap();
    assert_eq!((got.mime_type.as_str(), got.width, got.height), ("image/gif", Some(20), Some(10)));
}

#[test]
fn a_decompression_bomb_is_refused_before_decoding() {
    let bytes = bomb_png(50_000, 50_000);
    assert!(bytes.len() < 100);
    let err = inspect("bomb.png", &bytes).unwrap_err();
    assert_eq!(err, MediaError::ImageTooBig { name: "bomb.png".into(), width: 50_000, height: 50_000 });
    assert!(err.to_string().contains("50000 × 50000 pixels"), "{err}");
    // Within the edge limit but over the pixel limit: refused too.
    let err = inspect("wide.png", &bomb_png(10_000, 10_000)).unwrap_err();
    assert!(matches!(err, MediaError::ImageTooBig { width: 10_000, .. }), "{err:?}");
}

#[test]
fn an_image_that_does_not_decode_says_so() {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend_from_slice(b"this is no PNG at all");
    let err = inspect("broken.png", &bytes).unwrap_err();
    assert!(matches!(err, MediaError::BadImage { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "broken.png doesn't decode as an image: its data is damaged or cut short. Open it in an image editor and save it again."
    );

    let mut truncated = jpeg_with_exif(&photo(64, 64), None);
    truncated.truncate(truncated.len() / 3);
    let err = inspect("cut.jpg", &truncated).unwrap_err();
    assert!(matches!(err, MediaError::BadImage { .. }), "{err:?}");
}

#[test]
fn a_pdf_gives_its_pages_and_its_text_layer() {
    let got = inspect("report.pdf", &save(pdf_document(&["Hello page one", "Second page"]))).unwrap();
    assert_eq!((got.kind, got.mime_type.as_str(), got.pages), (AttachmentKind::Pdf, "application/pdf", Some(2)));
    let text = got.text.unwrap();
    assert!(text.contains("Hello page one") && text.contains("Second page"), "{text}");
    assert_eq!(got.thumbnail, None);
    assert_eq!(got.text_cut, None, "all of the text was read");
}

#[test]
fn a_pdf_whose_extraction_runs_out_of_time_keeps_the_pages_read_and_says_so() {
    let pdf = save(pdf_document(&["Alpha page", "Beta page", "Gamma page"]));
    let limits = PdfLimits { extract_time: Duration::ZERO, ..PdfLimits::default() };
    let got = inspect_with("long.pdf", &pdf, limits).unwrap();
    let text = got.text.unwrap();
    assert!(text.contains("Alpha page") && !text.contains("Beta page"), "{text}");
    let cut = got.text_cut.unwrap();
    assert_eq!(cut, TextCut { pages_read: 1, pages: 3, reason: CutReason::Time(Duration::ZERO) });
    assert_eq!(
        TextCut { pages_read: 12, pages: 40, reason: CutReason::Time(Duration::from_secs(20)) }.to_string(),
        "text of pages 1–12 of 40 only: extraction stopped after 20 s"
    );
    assert_eq!(cut.to_string(), "text of page 1 of 3 only: extraction stopped after 0 s");
}

#[test]
fn a_pdf_whose_text_reaches_the_size_limit_is_cut_there_and_says_so() {
    let pdf = save(pdf_document(&["Alpha page", "Beta page", "Gamma page"]));
    let limits = PdfLimits { max_text: 14, ..PdfLimits::default() };
    let got = inspect_with("big.pdf", &pdf, limits).unwrap();
    let text = got.text.unwrap();
    assert!(text.len() <= 14 && text.contains("Alpha page") && !text.contains("Gamma"), "{text:?}");
    let cut = got.text_cut.unwrap();
    assert_eq!((cut.pages_read, cut.pages, cut.reason), (2, 3, CutReason::Size(14)));
    assert_eq!(
        cut.to_string(),
        "text of pages 1–2 of 3 only (page 2 cut short): extraction stopped at the size limit (14 bytes)"
    );
    // The whole text within the limit says nothing.
    let whole = inspect_with("big.pdf", &pdf, PdfLimits { max_text: 1000, ..PdfLimits::default() }).unwrap();
    assert_eq!(whole.text_cut, None);
}

#[test]
fn a_pdf_without_a_text_layer_is_accepted_without_text() {
    let got = inspect("scan.pdf", &save(pdf_document(&["", ""]))).unwrap();
    assert_eq!((got.pages, got.text), (Some(2), None));
}

#[test]
fn an_encrypted_pdf_is_refused_unless_it_opens_without_a_password() {
    let err = inspect("locked.pdf", &encrypted_pdf("user-secret")).unwrap_err();
    assert_eq!(err, MediaError::EncryptedPdf { name: "locked.pdf".into() });
    assert!(err.to_string().starts_with("encrypted PDF: locked.pdf needs a password"), "{err}");
    // Only an owner password (printing/editing restrictions): every reader opens it.
    let got = inspect("restricted.pdf", &encrypted_pdf("")).unwrap();
    assert!(got.text.unwrap().contains("Secret page"));
}

#[test]
fn a_damaged_pdf_is_refused_as_damaged() {
    let err = inspect("bad.pdf", b"%PDF-1.7\nthis is not a PDF body at all\n%%EOF").unwrap_err();
    assert!(matches!(err, MediaError::DamagedPdf { .. }), "{err:?}");
    assert!(err.to_string().starts_with("damaged PDF: bad.pdf can't be read"), "{err}");
    // A real PDF cut in half.
    let mut cut = save(pdf_document(&["Some text"]));
    cut.truncate(cut.len() / 2);
    match inspect("cut.pdf", &cut) {
        Err(MediaError::DamagedPdf { .. }) => {}
        // A lenient reader may recover the page it still has; it must not invent text.
        Ok(got) => assert!(got.pages.is_some()),
        Err(other) => panic!("{other:?}"),
    }
}

#[test]
fn files_over_their_kind_limit_are_refused_before_anything_is_read() {
    // 500 MB of zeroed memory (never touched): refused by its length alone.
    let huge = vec![0u8; 500 * 1024 * 1024];
    let err = inspect("movie.bin", &huge).unwrap_err();
    assert!(matches!(err, MediaError::TooLarge { what: "a file", .. }), "{err:?}");
    assert!(err.to_string().contains("(500.0 MB)") && err.to_string().contains("at most 50.0 MB"), "{err}");
    drop(huge);
    let mut image = bomb_png(10, 10);
    image.resize(31 * 1024 * 1024, 0);
    let err = inspect("huge.png", &image).unwrap_err();
    assert!(err.to_string().contains("an image can be at most 30.0 MB"), "{err}");
    let text = vec![b'a'; 11 * 1024 * 1024];
    let err = inspect("log.txt", &text).unwrap_err();
    assert!(err.to_string().contains("a text file can be at most 10.0 MB"), "{err}");
    assert_eq!(inspect("empty.txt", b"").unwrap_err(), MediaError::Empty { name: "empty.txt".into() });
}

#[test]
fn unknown_and_unsendable_binaries_are_refused_by_what_they_are() {
    let err = inspect("data.bin", &[0x00, 0x01, 0xFE, 0x80, 0x00, 0x42]).unwrap_err();
    assert_eq!(err, MediaError::Unsupported { name: "data.bin".into(), what: "an unknown binary file".into() });
    assert!(err.to_string().contains("can't be sent to a model"), "{err}");
    let zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00\x00\x00\xff\xfe";
    let err = inspect("notes.txt", zip).unwrap_err();
    assert!(err.to_string().contains("an archive (application/zip)"), "{err}");
}

#[test]
fn svg_is_refused_whatever_its_name() {
    for (name, body) in [
        ("icon.svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>"),
        ("icon.txt", "<?xml version=\"1.0\"?>\n<!-- made by hand -->\n<svg width=\"10\"/>"),
        ("icon.xml", "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"x\"><svg/>"),
    ] {
        let err = inspect(name, body.as_bytes()).unwrap_err();
        assert_eq!(err, MediaError::Svg { name: name.into() });
    }
    assert!(inspect("page.xml", b"<?xml version=\"1.0\"?><feed/>").is_ok());
}

#[test]
fn text_is_utf8_without_nul_and_the_extension_names_its_language() {
    let got = inspect("main.rs", "fn main() { println!(\"héllo\"); }\n".as_bytes()).unwrap();
    assert_eq!((got.kind, got.mime_type.as_str()), (AttachmentKind::Text, "text/x-rust"));
    assert_eq!(got.text.as_deref(), Some("fn main() { println!(\"héllo\"); }\n"));
    let got = inspect("README", b"\xEF\xBB\xBFplain").unwrap();
    assert_eq!((got.mime_type.as_str(), got.text.as_deref()), ("text/plain", Some("plain")));
    // A ".png" that is text is text.
    assert_eq!(inspect("fake.png", b"just words").unwrap().kind, AttachmentKind::Text);
    // Latin-1 and NUL-bearing files are not text.
    assert!(matches!(inspect("old.txt", b"caf\xe9 cr\xe8me").unwrap_err(), MediaError::Unsupported { .. }));
    assert!(matches!(inspect("nul.txt", b"a\0b").unwrap_err(), MediaError::Unsupported { .. }));
}

#[test]
fn hostile_pdfs_neither_crash_nor_hang_the_caller() {
    let valid = save(pdf_document(&["Hello page one", "Second page", "Third"]));
    // Bytes flipped at many places: each read ends in a result, never a panic or a hang.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..300 {
        let mut bytes = valid.clone();
        for _ in 0..4 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state as usize) % bytes.len();
            bytes[at] = (state >> 32) as u8;
        }
        let _ = inspect("fuzzed.pdf", &bytes);
    }
    // Nesting far deeper than any real file, in an object and in a page's content.
    let deep = format!("%PDF-1.4\n1 0 obj\n{}\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF", "[".repeat(200_000));
    assert!(matches!(inspect("deep.pdf", deep.as_bytes()), Err(MediaError::DamagedPdf { .. })));
    let mut doc = pdf_document(&["x"]);
    let page = *doc.get_pages().values().next().unwrap();
    let content = format!("BT /F1 12 Tf {} ET", "[".repeat(200_000)).into_bytes();
    let id = doc.add_object(Stream::new(dictionary! {}, content));
    doc.get_object_mut(page).unwrap().as_dict_mut().unwrap().set("Contents", id);
    let got = inspect("deep-content.pdf", &save(doc));
    assert!(matches!(got, Ok(_) | Err(MediaError::DamagedPdf { .. })), "{got:?}");
}
