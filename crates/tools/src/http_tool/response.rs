//! Reading an API's answer: under a byte limit, refused when binary, a JSON part picked by a
//! pointer, and cut to the output limit. Error answers become one short line.

use serde_json::Value;

/// Characters of an error answer quoted in the message.
const EXCERPT_CHARS: usize = 300;

/// Why reading a body stopped.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// More than the limit.
    TooLarge,
    /// The connection failed while reading.
    Network(String),
}

/// Reads at most `max` bytes of `response`; a longer body (declared or found while reading)
/// stops at once, and dropping the response closes the connection, so the rest is never
/// downloaded.
pub(crate) async fn read_limited(mut response: reqwest::Response, max: u64) -> Result<Vec<u8>, ReadError> {
    if response.content_length().is_some_and(|n| n > max) {
        return Err(ReadError::TooLarge);
    }
    let mut body = Vec::with_capacity((max as usize).min(64 * 1024));
    while let Some(chunk) = response.chunk().await.map_err(|e| ReadError::Network(describe(&e)))? {
        if (body.len() + chunk.len()) as u64 > max {
            return Err(ReadError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A byte count as people say it: `1 MiB`, `64 KiB`, `1500 bytes`.
pub(crate) fn size_text(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// How a response body is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Json,
    Html,
    Text,
}

/// The essence of a content type (`application/json` of `application/json; charset=utf-8`).
pub(crate) fn essence(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase()
}

/// How a declared content type is read; `None` for binary types.
pub(crate) fn kind_of(content_type: &str) -> Option<Kind> {
    let e = essence(content_type);
    match e.as_str() {
        "application/json" | "text/json" => Some(Kind::Json),
        e if e.ends_with("+json") => Some(Kind::Json),
        "text/html" | "application/xhtml+xml" => Some(Kind::Html),
        "application/xml"
        | "application/javascript"
        | "application/ecmascript"
        | "application/x-www-form-urlencoded"
        | "application/yaml"
        | "application/x-yaml"
        | "application/graphql" => Some(Kind::Text),
        e if e.ends_with("+xml") || e.starts_with("text/") => Some(Kind::Text),
        _ => None,
    }
}

/// The kind of an undeclared body: JSON when it parses, text when it is UTF-8 without NULs.
pub(crate) fn sniff(body: &[u8]) -> Option<Kind> {
    if body.contains(&0) {
        return None;
    }
    let text = std::str::from_utf8(body).ok()?;
    if serde_json::from_str::<Value>(text).is_ok() { Some(Kind::Json) } else { Some(Kind::Text) }
}

/// The body as text, by its declared charset (UTF-8 otherwise); undecodable bytes become U+FFFD.
pub(crate) fn decode(body: &[u8], content_type: &str) -> String {
    let label = content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches('"').to_owned())
    });
    let encoding = label.and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes())).unwrap_or(encoding_rs::UTF_8);
    encoding.decode(body).0.into_owned()
}

/// A short excerpt of an error answer: an HTML page's `<title>`, JSON compacted, text with its
/// whitespace folded; at most [`EXCERPT_CHARS`] characters.
pub(crate) fn excerpt(body: &[u8], content_type: &str) -> String {
    let text = decode(body, content_type);
    let kind = kind_of(content_type).or_else(|| sniff(body));
    let picked = match kind {
        Some(Kind::Html) => html_title(&text).unwrap_or_else(|| strip_tags(&text)),
        Some(Kind::Json) => match serde_json::from_str::<Value>(&text) {
            Ok(v) => v.to_string(),
            Err(_) => text.clone(),
        },
        _ if text.trim_start().starts_with('<') => html_title(&text).unwrap_or_else(|| strip_tags(&text)),
        _ => text.clone(),
    };
    let folded = picked.split_whitespace().collect::<Vec<_>>().join(" ");
    let (head, cut) = cut_chars(&folded, EXCERPT_CHARS);
    if cut { format!("{head}…") } else { head.to_owned() }
}

/// The text of an HTML page's `<title>`, with the common entities decoded.
fn html_title(html: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find("<title")?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find("</title")?;
    let title = unescape(html[start..end].trim());
    (!title.is_empty()).then_some(title)
}

/// Text without tags, for an HTML error page without a title.
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    unescape(&out)
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// The first `max` characters of `text`, and whether anything was cut.
pub(crate) fn cut_chars(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

/// `text` cut to `max` characters with a note saying so.
pub(crate) fn limit_output(text: &str, max: usize) -> String {
    let (head, cut) = cut_chars(text, max);
    if !cut {
        return text.to_owned();
    }
    let total = text.chars().count();
    format!("{head}\n\n[Cut at {max} of {total} characters.]")
}

/// The part of a JSON answer at `pointer`, or an error listing what the answer has instead.
pub(crate) fn pick<'a>(value: &'a Value, pointer: &str) -> Result<&'a Value, String> {
    if pointer.is_empty() {
        return Ok(value);
    }
    value.pointer(pointer).ok_or_else(|| {
        let has = match value {
            Value::Object(map) if map.is_empty() => "it is an empty object".to_owned(),
            Value::Object(map) => {
                let keys: Vec<&str> = map.keys().take(30).map(String::as_str).collect();
                format!("its top-level keys are: {}", keys.join(", "))
            }
            Value::Array(items) => format!("it is an array of {} items", items.len()),
            other => format!("it is {}", short_kind(other)),
        };
        format!("The response has nothing at {pointer} (the responsePointer); {has}.")
    })
}

fn short_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) use crate::web::fetch::describe;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_answers_become_short_excerpts() {
        let html =
            "<!doctype html><html><head><title>  Service &amp; Co Unavailable </title></head><body>…</body></html>";
        assert_eq!(excerpt(html.as_bytes(), "text/html; charset=utf-8"), "Service & Co Unavailable");
        assert_eq!(excerpt(b"<html><body><h1>Oops</h1><p>bad</p></body></html>", "text/html"), "Oops bad");
        assert_eq!(excerpt(b"{\n  \"error\": {\"code\": 7}\n}", "application/json"), r#"{"error":{"code":7}}"#);
        assert_eq!(excerpt(b"plain\n\n  text", ""), "plain text");
        let long = "x".repeat(1000);
        let e = excerpt(long.as_bytes(), "text/plain");
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
        assert!(e.ends_with('…'));
    }

    #[test]
    fn pointers_pick_a_part_or_list_what_is_there() {
        let v = json!({"data": {"items": [1, 2]}, "meta": {}});
        assert_eq!(pick(&v, "/data/items").unwrap(), &json!([1, 2]));
        assert_eq!(pick(&v, "").unwrap(), &v);
        assert_eq!(
            pick(&v, "/results").unwrap_err(),
            "The response has nothing at /results (the responsePointer); its top-level keys are: data, meta."
        );
        assert!(pick(&json!([1]), "/x").unwrap_err().contains("it is an array of 1 items"));
    }

    #[test]
    fn kinds_sizes_and_cuts() {
        assert_eq!(kind_of("application/vnd.api+json"), Some(Kind::Json));
        assert_eq!(kind_of("text/csv"), Some(Kind::Text));
        assert_eq!(kind_of("application/atom+xml"), Some(Kind::Text));
        assert_eq!(kind_of("image/png"), None);
        assert_eq!(kind_of("application/octet-stream"), None);
        assert_eq!(sniff(b"{\"a\":1}"), Some(Kind::Json));
        assert_eq!(sniff(b"\x89PNG\0"), None);
        assert_eq!(size_text(1024 * 1024), "1 MiB");
        assert_eq!(size_text(64 * 1024), "64 KiB");
        assert_eq!(size_text(1500), "1500 bytes");
        assert_eq!(limit_output("abcdef", 10), "abcdef");
        assert_eq!(limit_output("ééééé", 3), "ééé\n\n[Cut at 3 of 5 characters.]");
        assert_eq!(decode(b"caf\xe9", "text/plain; charset=ISO-8859-1"), "café");
    }
}
