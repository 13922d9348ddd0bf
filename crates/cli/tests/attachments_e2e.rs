//! `chat --attach` end to end through the mock, for each API: an image and a PDF go in the API's
//! own form, the CLI says what it attached, `conversations show` lists them, and a file that
//! cannot go (too big, a decompression bomb, standard input over the limit) ends the command
//! with a clear message and exit code 1 before anything is sent.

mod common;

use common::*;
use serde_json::Value;
use std::path::PathBuf;
use switchboard_mock_provider::{Reply, Script};

const KEY: &str = "sk-test-attachments-0123456789";

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/attachments").join(name).display().to_string()
}

/// Whether any object in `value` has `"type": ty`.
fn typed(value: &Value, ty: &str) -> bool {
    match value {
        Value::Object(o) => o.get("type").and_then(Value::as_str) == Some(ty) || o.values().any(|v| typed(v, ty)),
        Value::Array(a) => a.iter().any(|v| typed(v, ty)),
        _ => false,
    }
}

fn has_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(o) => o.contains_key(key) || o.values().any(|v| has_key(v, key)),
        Value::Array(a) => a.iter().any(|v| has_key(v, key)),
        _ => false,
    }
}

/// `chat --attach photo.png --attach figures.pdf` on a profile of `kind` with `model`; the
/// request the mock got, after checking the turn went well and was said and stored.
async fn attach_both(kind: &str, model: &str) -> Value {
    let env = Env::with_profile(Script::new([Reply::text("Seen.")]), "p", kind).await;
    if kind == "gemini" {
        let base = format!("http://{}/v1beta", env.mock.addr());
        let out = env.run(&["providers", "add", "p", "--kind", kind, "--base-url", &base, "--model", model]).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let (photo, pdf) = (fixture("photo.png"), fixture("figures.pdf"));
    let args = ["chat", "--json", "--model", model, "--attach", &photo, "--attach", &pdf, "What are these?"];
    let (out, events) = env.json_with_key(&args, "p", KEY).await;
    assert!(out.status.success(), "{kind}: {}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("attached: photo.png (image, 64×48"), "{kind}: {said}");
    assert!(said.contains("attached: figures.pdf (PDF, 1 page"), "{kind}: {said}");
    let id = conversation_id(&events);
    let shown = env.run(&["conversations", "show", &id]).await;
    let shown = stdout(&shown);
    assert!(shown.contains("> attached: photo.png") && shown.contains("> attached: figures.pdf"), "{shown}");
    let stored = env.show_json(&id).await;
    assert_eq!(stored[0]["attachments"].as_array().map(Vec::len), Some(2), "{stored}");
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 1);
    requests[0].body.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_chat_gets_an_image_url_and_a_file_part() {
    let body = attach_both("openai", "gpt-4o").await;
    assert!(typed(&body, "image_url") && typed(&body, "file"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_gets_an_input_image_and_an_input_file() {
    let body = attach_both("openai-responses", "gpt-4o").await;
    assert!(typed(&body, "input_image") && typed(&body, "input_file"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_gets_an_image_block_and_a_document_block() {
    let body = attach_both("anthropic", "claude-sonnet-4-5").await;
    assert!(typed(&body, "image") && typed(&body, "document"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_gets_inline_data_for_both() {
    let body = attach_both("gemini", "gemini-2.5-flash").await;
    assert!(has_key(&body, "inline_data") || has_key(&body, "inlineData"), "{body}");
    let text = body.to_string();
    assert!(text.contains("image/png") && text.contains("application/pdf"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_input_is_attached_with_a_dash() {
    let env = Env::new(Script::new([Reply::text("A gradient.")])).await;
    let mut cmd = env.command(&["chat", "--json", "--model", "gpt-4o", "--attach", "-", "What is it?"]);
    cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut stdin, &std::fs::read(fixture("photo.png")).unwrap()).await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("attached: stdin (image, 64×48"), "{}", stderr(&out));
    assert!(typed(&env.mock.requests()[0].body, "image_url"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_that_cannot_go_ends_the_command_before_anything_is_sent() {
    let env = Env::new(Script::new([Reply::text("never")])).await;
    // A PNG whose header claims 50,000 × 50,000 pixels.
    let bomb = env.data_dir().join("bomb.png");
    std::fs::write(&bomb, bomb_png()).unwrap();
    let bomb = bomb.display().to_string();
    // A file over every size limit (sparse: it costs no disk).
    let huge = env.data_dir().join("huge.pdf");
    std::fs::File::create(&huge).unwrap().set_len(600 * 1024 * 1024).unwrap();
    let huge = huge.display().to_string();
    let missing = env.data_dir().join("gone.png").display().to_string();
    for (file, what) in [(&bomb, "bomb.png"), (&huge, "huge.pdf"), (&missing, "gone.png")] {
        let out = env.run(&["chat", "--attach", file, "Look"]).await;
        assert_eq!(out.status.code(), Some(1), "{what}: {}", stderr(&out));
        let said = stderr(&out);
        assert!(said.contains("Could not attach") && said.contains(what), "{what}: {said}");
    }
    let ok = fixture("photo.png");
    let out = env.run(&["chat", "--attach", &ok, "--attach", &bomb, "Look"]).await;
    assert_eq!(out.status.code(), Some(1), "one bad file stops the message: {}", stderr(&out));
    assert!(env.mock.requests().is_empty(), "nothing was sent");
    let list = env.run(&["conversations", "list"]).await;
    assert!(!stdout(&list).contains("Look"), "no chat was stored: {}", stdout(&list));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_cannot_see_is_refused_before_sending() {
    let env = Env::new(Script::new([Reply::text("never")])).await;
    let photo = fixture("photo.png");
    let out = env.run(&["chat", "--model", "gpt-3.5-turbo", "--attach", &photo, "What is this?"]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("gpt-3.5-turbo can't see images — remove them or pick another model"),
        "{}",
        stderr(&out)
    );
    assert!(env.mock.requests().is_empty());
}

/// A tiny PNG whose header says 50,000 × 50,000 pixels (a decompression bomb).
fn bomb_png() -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let start = out.len();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&50_000u32.to_be_bytes());
    ihdr.extend_from_slice(&50_000u32.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    // A stored (uncompressed) zlib stream of a few zero bytes: far too little for the size.
    chunk(&mut out, b"IDAT", &[0x78, 0x01, 0x01, 0x04, 0x00, 0xfb, 0xff, 0, 0, 0, 0, 0x00, 0x04, 0x00, 0x01]);
    chunk(&mut out, b"IEND", &[]);
    out
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}
