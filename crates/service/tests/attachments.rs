//! Attaching through the service: files (size refused before reading), bytes, chunked uploads
//! (bounded), previews and thumbnails, and the parts a request carries per API.

use std::sync::Arc;
use switchboard_core::{AttachmentKind, ErrorKind, Part};
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::attachments::{MAX_UPLOADS, UPLOAD_BODY_MAX, UPLOAD_CHUNK_MAX, attachment_parts};
use switchboard_store::Store;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

fn service(dir: &std::path::Path) -> Service {
    Service::new(Store::open(&dir.join("switchboard.db")).unwrap(), Arc::new(MemoryStore::new())).unwrap()
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 90]));
    let mut out = Vec::new();
    image.write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// A one-page PDF showing `text` (none: a page without text).
fn pdf(text: Option<&str>) -> Vec<u8> {
    let content = match text {
        Some(t) => format!("BT /F1 12 Tf 100 700 Td ({t}) Tj ET"),
        None => "0 0 m 100 100 l S".to_owned(),
    };
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
            .to_owned(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_owned(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    out
}

#[tokio::test]
async fn a_picked_file_is_inspected_and_stored_and_its_preview_and_thumbnail_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let path = dir.path().join("shot.png");
    std::fs::write(&path, png(3000, 1000)).unwrap();
    let got = service.attach_file(&path).await.unwrap();
    assert_eq!((got.name.as_str(), got.kind, got.mime_type.as_str()), ("shot.png", AttachmentKind::Image, "image/png"));
    assert_eq!((got.width, got.height), (Some(3000), Some(1000)));
    let thumbnail = service.attachment_thumbnail(&got.id).unwrap().unwrap();
    assert!(thumbnail.starts_with("data:image/jpeg;base64,"), "{}", &thumbnail[..40]);
    let preview = service.attachment_preview(&got.id).await.unwrap();
    assert_eq!((preview.text, preview.truncated), (None, false));
    let url = preview.image.unwrap();
    let (head, data) = url.split_once(',').unwrap();
    assert!(head.starts_with("data:image/"), "{head}");
    let shown = image::load_from_memory(&BASE64.decode(data).unwrap()).unwrap();
    assert_eq!((shown.width(), shown.height()), (2048, 683));
}

#[tokio::test]
async fn a_file_over_every_limit_is_refused_before_it_is_read_and_a_missing_one_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let path = dir.path().join("movie.mov");
    // 500 MB, sparse: refused from its size alone (reading it would take seconds).
    std::fs::File::create(&path).unwrap().set_len(500 * 1024 * 1024).unwrap();
    let err = service.attach_file(&path).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
    assert!(err.message.contains("movie.mov is too large to attach (500.0 MB)"), "{}", err.message);
    let err = service.attach_file(&dir.path().join("gone.txt")).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::NotFound);
    assert!(err.message.contains("gone.txt is no longer there"), "{}", err.message);
    let err = service.attach_file(dir.path()).await.unwrap_err();
    assert!(err.message.contains("is not a file"), "{}", err.message);
}

#[tokio::test]
async fn refused_bytes_store_nothing_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let err = service.attach_bytes("logo.svg", b"<svg><script>x</script></svg>".to_vec()).await.unwrap_err();
    assert_eq!(err.kind, ErrorKind::BadRequest);
    assert!(err.message.starts_with("logo.svg is an SVG image"), "{}", err.message);
    let blobs = dir.path().join("attachments");
    let stored = std::fs::read_dir(&blobs).map(|d| d.count()).unwrap_or(0);
    assert_eq!(stored, 0);
}

#[tokio::test]
async fn an_upload_in_chunks_becomes_an_attachment() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let text = "fn main() {}\n".repeat(200_000); // 2.6 MB: three chunks
    let id = service.upload_begin("main.rs", text.len() as u64).unwrap();
    let mut received = 0;
    for chunk in text.as_bytes().chunks(UPLOAD_CHUNK_MAX) {
        received = service.upload_chunk(&id, &BASE64.encode(chunk)).unwrap();
    }
    assert_eq!(received, text.len() as u64);
    let got = service.upload_finish(&id).await.unwrap();
    assert_eq!((got.kind, got.mime_type.as_str(), got.size), (AttachmentKind::Text, "text/x-rust", text.len() as u64));
    let preview = service.attachment_preview(&got.id).await.unwrap();
    // The preview carries the first MiB.
    let shown = preview.text.unwrap();
    assert!(preview.truncated && shown.len() == 1024 * 1024 && text.starts_with(&shown), "{}", shown.len());
    // Finished: the id is gone.
    assert_eq!(service.upload_chunk(&id, "AAAA").unwrap_err().kind, ErrorKind::NotFound);
}

#[tokio::test]
async fn uploads_are_bounded_in_size_count_and_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let err = service.upload_begin("huge.iso", 500 * 1024 * 1024).unwrap_err();
    assert!(err.message.contains("too large"), "{}", err.message);
    assert!(service.upload_begin("empty.txt", 0).is_err());

    let id = service.upload_begin("a.txt", 4).unwrap();
    let big = BASE64.encode(vec![b'a'; UPLOAD_CHUNK_MAX + 3]);
    assert!(service.upload_chunk(&id, &big).unwrap_err().message.contains("larger than"));
    // The over-sized chunk ended that upload.
    assert_eq!(service.upload_chunk(&id, "YQ==").unwrap_err().kind, ErrorKind::NotFound);

    let id = service.upload_begin("a.txt", 4).unwrap();
    assert!(service.upload_chunk(&id, "not base64!").unwrap_err().message.contains("not base64"));
    let id = service.upload_begin("a.txt", 4).unwrap();
    assert!(service.upload_chunk(&id, &BASE64.encode("abcdef")).unwrap_err().message.contains("more bytes"));
    let id = service.upload_begin("a.txt", 4).unwrap();
    service.upload_chunk(&id, &BASE64.encode("ab")).unwrap();
    assert!(service.upload_finish(&id).await.unwrap_err().message.contains("arrived incomplete"));

    let ids: Vec<String> = (0..MAX_UPLOADS).map(|i| service.upload_begin(&format!("{i}.txt"), 10).unwrap()).collect();
    assert!(service.upload_begin("one-more.txt", 10).unwrap_err().message.contains("already being attached"));
    service.upload_cancel(&ids[0]);
    service.upload_begin("one-more.txt", 10).unwrap();
}

#[tokio::test]
async fn an_upload_in_raw_requests_becomes_an_attachment_and_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    // Bytes as they came (the desktop's upload scheme), mixed with a base64 chunk: one file.
    let text = "fn main() {}\n".repeat(700_000); // 9.1 MB: two raw requests and a chunk
    let id = service.upload_begin("main.rs", text.len() as u64).unwrap();
    let (head, rest) = text.as_bytes().split_at(UPLOAD_BODY_MAX);
    let (middle, tail) = rest.split_at(rest.len() - 1000);
    assert_eq!(service.upload_bytes(&id, head).unwrap(), UPLOAD_BODY_MAX as u64);
    service.upload_bytes(&id, middle).unwrap();
    assert_eq!(service.upload_chunk(&id, &BASE64.encode(tail)).unwrap(), text.len() as u64);
    let got = service.upload_finish(&id).await.unwrap();
    assert_eq!((got.kind, got.size), (AttachmentKind::Text, text.len() as u64));

    // A request over the bound ends its upload; so do bytes past the declared size.
    let id = service.upload_begin("big.txt", 20 * 1024 * 1024).unwrap();
    let err = service.upload_bytes(&id, &vec![b'a'; UPLOAD_BODY_MAX + 1]).unwrap_err();
    assert!(err.message.contains("larger than"), "{}", err.message);
    assert_eq!(service.upload_bytes(&id, b"a").unwrap_err().kind, ErrorKind::NotFound);
    let id = service.upload_begin("a.txt", 4).unwrap();
    assert!(service.upload_bytes(&id, b"abcdef").unwrap_err().message.contains("more bytes"));
    assert_eq!(service.upload_bytes("upload-nope", b"a").unwrap_err().kind, ErrorKind::NotFound);
}

#[tokio::test]
async fn parts_follow_the_api_and_whether_the_model_reads_pdfs() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let image = service.attach_bytes("wide.png", png(4000, 1000)).await.unwrap();
    let report = service.attach_bytes("report.pdf", pdf(Some("Quarterly numbers"))).await.unwrap();
    let scan = service.attach_bytes("scan.pdf", pdf(None)).await.unwrap();
    let code = service.attach_bytes("lib.rs", b"pub fn f() {}\n".to_vec()).await.unwrap();
    let all = [image, report, scan, code];

    let parts = attachment_parts(&store, &all, "anthropic", true).unwrap();
    let Part::Image { name, image } = &parts[0] else { panic!("{:?}", parts[0]) };
    let fitted = image::load_from_memory(&BASE64.decode(&image.data).unwrap()).unwrap();
    assert_eq!((name.as_str(), fitted.width()), ("wide.png", 1568));
    assert!(
        matches!(&parts[1], Part::Pdf { name, data } if name == "report.pdf" && BASE64.decode(data.as_bytes()).unwrap().starts_with(b"%PDF"))
    );
    assert_eq!(
        parts[3],
        Part::Text {
            name: "lib.rs".into(),
            mime_type: "text/x-rust".into(),
            text: "pub fn f() {}\n".into(),
            note: None
        }
    );

    let parts = attachment_parts(&store, &all, "openai", false).unwrap();
    let Part::Image { image, .. } = &parts[0] else { panic!() };
    let fitted = image::load_from_memory(&BASE64.decode(&image.data).unwrap()).unwrap();
    assert_eq!((fitted.width(), fitted.height()), (2048, 512));
    let Part::Text { text, note, mime_type, .. } = &parts[1] else { panic!("{:?}", parts[1]) };
    assert!(text.contains("Quarterly numbers"), "{text}");
    assert_eq!(mime_type, "application/pdf");
    assert_eq!(note.as_deref(), Some("text extracted locally from a 1-page PDF; the model cannot read PDFs"));
    let Part::Text { text, note, .. } = &parts[2] else { panic!() };
    assert!(text.is_empty());
    assert!(note.as_deref().unwrap().contains("has no text layer"), "{note:?}");
}

#[tokio::test]
async fn a_pdf_whose_text_was_cut_says_so_to_the_model_and_in_its_preview() {
    let dir = tempfile::tempdir().unwrap();
    let service = service(dir.path());
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let bytes = pdf(Some("First page"));
    let cut = "text of page 1 of 40 only: extraction stopped after 20 s";
    // As ingestion stores a PDF whose extraction stopped at its deadline.
    let stored = store
        .put_attachment(switchboard_store::NewAttachment {
            bytes: &bytes,
            name: "long.pdf",
            mime_type: "application/pdf",
            kind: AttachmentKind::Pdf,
            width: None,
            height: None,
            pages: Some(40),
            text: Some("First page".into()),
            text_note: Some(cut.into()),
            thumbnail: None,
        })
        .unwrap();
    assert_eq!(stored.text_note.as_deref(), Some(cut));

    let parts = attachment_parts(&store, std::slice::from_ref(&stored), "openai", false).unwrap();
    let Part::Text { note, .. } = &parts[0] else { panic!("{:?}", parts[0]) };
    assert_eq!(
        note.as_deref(),
        Some(format!("text extracted locally from a 40-page PDF; the model cannot read PDFs; {cut}").as_str())
    );
    let preview = service.attachment_preview(&stored.id).await.unwrap();
    assert_eq!(preview.attachment.text_note.as_deref(), Some(cut));
    assert_eq!(preview.text.as_deref(), Some("First page"));

    // A PDF read whole carries no such note.
    let whole = service.attach_bytes("short.pdf", pdf(Some("All of it"))).await.unwrap();
    assert_eq!(whole.text_note, None);
    assert_eq!(service.attachment_preview(&whole.id).await.unwrap().attachment.text_note, None);
}
