//! A request's large base64 payloads (a PDF's bytes, an attached image's) kept out of the JSON
//! tree a body is built as, and written into the serialized body once.
//!
//! Each API builds its body as a `serde_json::Value`, which owns its strings: a 20 MB PDF would
//! be copied into the tree (27 MB of base64) and again into the text sent. [`Payloads::take`]
//! swaps each large payload of the request for a short placeholder before the tree is built;
//! [`Payloads::render`] serializes the tree and writes each payload where its placeholder stands,
//! verbatim (base64 needs no JSON escaping), also inside a larger string such as a data URL.
//!
//! Invariant: the body sent is exactly the body the request would serialize to with its payloads
//! in place. A placeholder is `sbpayload<nonce>n<index>z` with a nonce drawn per request (no text a
//! model or a server wrote can name it), and only payloads made of the base64 alphabet are taken.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::Arc;
use switchboard_core::{Message, Part, ProviderRequest};

/// Payloads under this many bytes stay in the tree: copying them costs nothing worth a swap.
const MIN_PAYLOAD: usize = 64 * 1024;

/// The payloads taken from one request, by index.
#[derive(Debug)]
pub(crate) struct Payloads {
    /// Starts every placeholder of this request (`sbpayload<nonce>n`).
    prefix: String,
    taken: Vec<Payload>,
}

/// One payload taken: a PDF's, shared with the history; an image's, moved out of the request.
#[derive(Debug)]
enum Payload {
    Shared(Arc<str>),
    Moved(String),
}

impl Payload {
    fn as_str(&self) -> &str {
        match self {
            Payload::Shared(text) => text,
            Payload::Moved(text) => text,
        }
    }
}

impl Payloads {
    /// Swaps each large payload of the persons' messages in `request` (a PDF's data, an image's
    /// data) for a placeholder, keeping the payload (shared, or moved out of the request).
    pub(crate) fn take(request: &mut ProviderRequest) -> Payloads {
        let nonce = RandomState::new().hash_one(std::time::SystemTime::now());
        let mut payloads = Payloads { prefix: format!("sbpayload{nonce:016x}n"), taken: Vec::new() };
        for message in &mut request.messages {
            let Message::User { parts, .. } = message else { continue };
            for part in parts {
                match part {
                    Part::Pdf { data, .. } if takes(data) => {
                        let placeholder = payloads.placeholder();
                        payloads.taken.push(Payload::Shared(std::mem::replace(data, placeholder.into())));
                    }
                    Part::Image { image, .. } if takes(&image.data) => {
                        let placeholder = payloads.placeholder();
                        payloads.taken.push(Payload::Moved(std::mem::replace(&mut image.data, placeholder)));
                    }
                    _ => {}
                }
            }
        }
        payloads
    }

    /// The placeholder of the next payload taken.
    fn placeholder(&self) -> String {
        format!("{}{}z", self.prefix, self.taken.len())
    }

    /// `body` serialized, each placeholder replaced by its payload.
    pub(crate) fn render(&self, body: &serde_json::Value) -> String {
        let json = body.to_string();
        if self.taken.is_empty() {
            return json;
        }
        let mut out = String::with_capacity(json.len() + self.taken.iter().map(|p| p.as_str().len()).sum::<usize>());
        let mut rest = json.as_str();
        while let Some(at) = rest.find(&self.prefix) {
            out.push_str(&rest[..at]);
            let after = &rest[at + self.prefix.len()..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let payload = after[..digits]
                .parse::<usize>()
                .ok()
                .filter(|_| after.as_bytes().get(digits) == Some(&b'z'))
                .and_then(|i| self.taken.get(i));
            match payload {
                Some(payload) => {
                    out.push_str(payload.as_str());
                    rest = &after[digits + 1..];
                }
                // Not one of ours after all: kept as written.
                None => {
                    out.push_str(&self.prefix);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// Whether `data` is large enough to take and safe to write unescaped (the base64 alphabet).
fn takes(data: &str) -> bool {
    data.len() >= MIN_PAYLOAD && data.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::ToolImage;

    fn base64_of(len: usize, seed: u8) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        (0..len).map(|i| ALPHABET[(i * 7 + usize::from(seed)) % 64] as char).collect()
    }

    fn request(pdf: &str, image: &str, text: &str) -> ProviderRequest {
        let parts = vec![
            Part::Pdf { name: "report.pdf".into(), data: pdf.into() },
            Part::Image {
                name: "photo.jpg".into(),
                image: ToolImage { mime_type: "image/jpeg".into(), data: image.into() },
            },
        ];
        ProviderRequest {
            model: "m".into(),
            messages: vec![Message::User { text: text.into(), parts }],
            ..ProviderRequest::default()
        }
    }

    #[test]
    fn the_body_is_the_one_the_tree_would_give_with_its_payloads_in_place_data_urls_too() {
        let (pdf, image) = (base64_of(300_000, 1), base64_of(100_000, 2));
        // The person's text names a placeholder of the right shape: it is not one of this request's.
        let text = "sbpayload0000000000000000n0z and \"quotes\"";
        let whole = request(&pdf, &image, text);
        // A tree as an API builds one: the PDF's data as a string, the image in a data URL.
        let tree = |r: &ProviderRequest| {
            let Message::User { text, parts } = &r.messages[0] else { unreachable!() };
            let (Part::Pdf { data, .. }, Part::Image { image, .. }) = (&parts[0], &parts[1]) else { unreachable!() };
            serde_json::json!({"text": text, "document": {"data": data}, "image_url": format!("data:image/jpeg;base64,{}", image.data)})
        };
        let mut swapped = whole.clone();
        let payloads = Payloads::take(&mut swapped);
        assert_eq!(payloads.taken.len(), 2);
        let small = tree(&swapped).to_string();
        assert!(small.len() < 1000, "the tree holds no payload: {small}");
        let sent = payloads.render(&tree(&swapped));
        assert_eq!(sent, tree(&whole).to_string());
    }

    #[test]
    fn small_payloads_and_anything_but_base64_stay_in_the_tree() {
        let mut small = request("JVBERi0x", "aGVsbG8=", "hi");
        assert!(Payloads::take(&mut small).taken.is_empty());
        // Not base64: it would need escaping, so it is serialized as the tree has it.
        let odd = format!("{}\"", base64_of(MIN_PAYLOAD, 3));
        let mut request = request(&odd, "aGVsbG8=", "hi");
        let payloads = Payloads::take(&mut request);
        assert!(payloads.taken.is_empty());
        assert_eq!(payloads.render(&serde_json::json!({"data": odd})), serde_json::json!({"data": odd}).to_string());
    }

    #[test]
    fn each_request_has_its_own_placeholders() {
        let pdf = base64_of(MIN_PAYLOAD, 4);
        let (mut a, mut b) = (request(&pdf, "x", "a"), request(&pdf, "x", "b"));
        let (pa, pb) = (Payloads::take(&mut a), Payloads::take(&mut b));
        assert_ne!(pa.prefix, pb.prefix);
        // The other request's placeholder is left as written.
        let Message::User { parts, .. } = &b.messages[0] else { unreachable!() };
        let Part::Pdf { data, .. } = &parts[0] else { unreachable!() };
        assert_eq!(pa.render(&serde_json::json!(data.to_string())), serde_json::json!(data.to_string()).to_string());
    }
}
