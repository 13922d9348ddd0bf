//! A person's attached files (content parts) as each API takes them: the strict checks that
//! refuse, in the API's own words, a part the real API refuses ([`chat_refusal`],
//! [`responses_refusal`], [`anthropic_refusal`], [`gemini_refusal`]), the refusal of an image
//! sent to a model configured without vision ([`vision_refusal`]), and the parts a recorded
//! request carried, API-neutral, for tests ([`SentPart`], [`user_parts`]).
//!
//! Invariant: only a person's messages are read here (OpenAI `user` messages, Responses items of
//! role `user`, Anthropic `user` blocks other than `tool_result`, Gemini `user` parts other than
//! `functionResponse`); tool results keep their own checks in each API's module.

use serde_json::{Value, json};

/// The image types every API takes.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// One attached file (or text) of a person's message as a request carried it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SentPart {
    /// A text part (the typed text, or a text file as the client framed it).
    Text(String),
    /// An image: its media type and base64 data.
    Image {
        /// `image/png`, ...
        media_type: String,
        /// Base64.
        data: String,
    },
    /// A PDF: its file name (Chat `filename`, Responses `filename`, Anthropic `title`; Gemini
    /// sends none) and base64 data.
    Pdf {
        /// The name it was sent under, if the API carries one.
        name: Option<String>,
        /// Base64.
        data: String,
    },
}

/// The four APIs, told apart by the request path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    Chat,
    Responses,
    Anthropic,
    Gemini,
}

fn api(path: &str) -> Option<Api> {
    match path {
        "/v1/chat/completions" => Some(Api::Chat),
        "/v1/responses" => Some(Api::Responses),
        "/v1/messages" => Some(Api::Anthropic),
        p if p.starts_with("/v1beta/models/") => Some(Api::Gemini),
        _ => None,
    }
}

/// Whether `data` is standard base64 with padding (what every API decodes).
pub(crate) fn is_base64(data: &str) -> bool {
    let bytes = data.as_bytes();
    if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
        return false;
    }
    let body = data.trim_end_matches('=');
    data.len() - body.len() <= 2 && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// The largest image the Messages API takes: 5 MB of base64 (about 3.75 MB of image).
const ANTHROPIC_MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// `data:<mime>;base64,<data>` split into its media type and data; `None` when it is not a
/// base64 data URL.
fn data_url(url: &str) -> Option<(&str, &str)> {
    let rest = url.strip_prefix("data:")?;
    let (mime, data) = rest.split_once(";base64,")?;
    Some((mime, data))
}

/// The person's parts of every user message of a request to `path`, one list per message, in
/// order; a Chat or Responses message whose content is a string is one text part.
pub(crate) fn user_parts(path: &str, body: &Value) -> Vec<Vec<SentPart>> {
    let Some(api) = api(path) else { return Vec::new() };
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    let string_or = |content: &Value, each: &dyn Fn(&Value) -> Option<SentPart>| match content {
        Value::String(text) => vec![SentPart::Text(text.clone())],
        other => list(other).iter().filter_map(each).collect(),
    };
    match api {
        Api::Chat => list(&body["messages"])
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| string_or(&m["content"], &chat_part))
            .collect(),
        Api::Responses => match &body["input"] {
            Value::String(text) => vec![vec![SentPart::Text(text.clone())]],
            input => list(input)
                .iter()
                .filter(|m| m["role"] == "user")
                .map(|m| string_or(&m["content"], &responses_part))
                .collect(),
        },
        Api::Anthropic => list(&body["messages"])
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| string_or(&m["content"], &anthropic_part))
            .filter(|parts| !parts.is_empty())
            .collect(),
        Api::Gemini => list(&body["contents"])
            .iter()
            .filter(|c| c["role"] == "user")
            .map(|c| list(&c["parts"]).iter().filter_map(gemini_part).collect::<Vec<_>>())
            .filter(|parts| !parts.is_empty())
            .collect(),
    }
}

fn text(v: &Value) -> Option<SentPart> {
    v.as_str().map(|t| SentPart::Text(t.to_owned()))
}

fn from_data_url(url: &Value, name: Option<&Value>) -> Option<SentPart> {
    let (mime, data) = data_url(url.as_str()?)?;
    Some(if mime == "application/pdf" {
        SentPart::Pdf { name: name.and_then(Value::as_str).map(str::to_owned), data: data.to_owned() }
    } else {
        SentPart::Image { media_type: mime.to_owned(), data: data.to_owned() }
    })
}

fn chat_part(p: &Value) -> Option<SentPart> {
    match p["type"].as_str()? {
        "text" => text(&p["text"]),
        "image_url" => from_data_url(&p["image_url"]["url"], None),
        "file" => from_data_url(&p["file"]["file_data"], Some(&p["file"]["filename"])),
        _ => None,
    }
}

fn responses_part(p: &Value) -> Option<SentPart> {
    match p["type"].as_str()? {
        "input_text" => text(&p["text"]),
        "input_image" => from_data_url(&p["image_url"], None),
        "input_file" => from_data_url(&p["file_data"], Some(&p["filename"])),
        _ => None,
    }
}

fn anthropic_part(p: &Value) -> Option<SentPart> {
    let source = &p["source"];
    let data = || source["data"].as_str().map(str::to_owned);
    match p["type"].as_str()? {
        "text" => text(&p["text"]),
        "image" => Some(SentPart::Image { media_type: source["media_type"].as_str()?.to_owned(), data: data()? }),
        "document" if source["media_type"] == "application/pdf" => {
            Some(SentPart::Pdf { name: p["title"].as_str().map(str::to_owned), data: data()? })
        }
        _ => None,
    }
}

fn gemini_part(p: &Value) -> Option<SentPart> {
    if let Some(t) = p.get("text") {
        return text(t);
    }
    let inline = p.get("inlineData").or_else(|| p.get("inline_data"))?;
    let mime = inline.get("mimeType").or_else(|| inline.get("mime_type"))?.as_str()?;
    let data = inline["data"].as_str()?.to_owned();
    Some(if mime == "application/pdf" {
        SentPart::Pdf { name: None, data }
    } else {
        SentPart::Image { media_type: mime.to_owned(), data }
    })
}

/// An OpenAI refusal: (message, param, code).
pub(crate) type OpenAiRefusal = (String, String, Option<&'static str>);

fn missing(param: String) -> OpenAiRefusal {
    (format!("Missing required parameter: '{param}'."), param, Some("missing_required_parameter"))
}

/// An OpenAI data URL check: an image (`want_pdf` false) or a PDF data URL with valid base64.
fn openai_data_url(url: &str, param: String, want_pdf: bool) -> Option<OpenAiRefusal> {
    let Some((mime, data)) = data_url(url) else {
        if want_pdf {
            let message = format!(
                "Invalid file data: '{param}'. Expected a base64-encoded data URL with an application/pdf MIME type (e.g. 'data:application/pdf;base64,SGVsbG8sIFdvcmxkIQ=='), but got a value that is not a data URL."
            );
            return Some((message, param, Some("invalid_value")));
        }
        // A plain URL the mock cannot fetch: OpenAI would download it; the mock takes it.
        return (!url.starts_with("https://") && !url.starts_with("http://")).then(|| {
            let message = format!("Invalid '{param}'. Expected a valid URL, but got a value with an invalid format.");
            (message, param, Some("invalid_value"))
        });
    };
    if want_pdf && mime != "application/pdf" {
        let message = format!(
            "Invalid file data: '{param}'. Expected a base64-encoded data URL with an application/pdf MIME type (e.g. 'data:application/pdf;base64,SGVsbG8sIFdvcmxkIQ=='), but got unsupported MIME type '{mime}'."
        );
        return Some((message, param, Some("invalid_value")));
    }
    if !want_pdf && !IMAGE_TYPES.contains(&mime) {
        return Some((
            "Invalid MIME type. Only image types are supported.".into(),
            param,
            Some("invalid_image_format"),
        ));
    }
    if !is_base64(data) {
        let kind = if want_pdf { "application/pdf" } else { "an image" };
        let message = format!(
            "Invalid '{param}'. Expected a base64-encoded data URL with {kind} MIME type, but got an invalid base64 string."
        );
        return Some((message, param, Some("invalid_value")));
    }
    None
}

fn detail(part: &Value, param: String) -> Option<OpenAiRefusal> {
    let detail = part.get("detail")?;
    (!detail.as_str().is_some_and(|d| ["auto", "low", "high"].contains(&d))).then(|| {
        let message = format!("Invalid value: {detail}. Supported values are: 'auto', 'low', and 'high'.");
        (message, param, Some("invalid_value"))
    })
}

/// What OpenAI Chat refuses in a user message's content parts.
pub(crate) fn chat_refusal(body: &Value) -> Option<OpenAiRefusal> {
    let messages = body["messages"].as_array()?;
    for (i, m) in messages.iter().enumerate().filter(|(_, m)| m["role"] == "user") {
        let Some(parts) = m["content"].as_array() else { continue };
        for (j, p) in parts.iter().enumerate() {
            let at = format!("messages.[{i}].content.[{j}]");
            match p["type"].as_str() {
                Some("text") if !p["text"].is_string() => return Some(missing(format!("{at}.text"))),
                Some("text" | "input_audio") => {}
                Some("image_url") => {
                    let Some(url) = p["image_url"]["url"].as_str() else {
                        return Some(missing(format!("{at}.image_url.url")));
                    };
                    if let Some(r) = openai_data_url(url, format!("{at}.image_url.url"), false)
                        .or_else(|| detail(&p["image_url"], format!("{at}.image_url.detail")))
                    {
                        return Some(r);
                    }
                }
                Some("file") => {
                    let file = &p["file"];
                    if file["file_id"].is_string() {
                        continue;
                    }
                    let Some(data) = file["file_data"].as_str() else {
                        return Some(missing(format!("{at}.file.file_data")));
                    };
                    if file["filename"].as_str().is_none_or(str::is_empty) {
                        return Some(missing(format!("{at}.file.filename")));
                    }
                    if let Some(r) = openai_data_url(data, format!("{at}.file.file_data"), true) {
                        return Some(r);
                    }
                }
                other => {
                    let shown = other.map_or_else(|| p["type"].to_string(), |t| format!("'{t}'"));
                    let message = format!(
                        "Invalid value: {shown}. Supported values are: 'text', 'image_url', 'input_audio', 'refusal', 'audio', and 'file'."
                    );
                    return Some((message, format!("{at}.type"), Some("invalid_value")));
                }
            }
        }
    }
    None
}

/// What the Responses API refuses in the content parts of an input item of role `user`.
pub(crate) fn responses_refusal(body: &Value) -> Option<OpenAiRefusal> {
    let items = body["input"].as_array()?;
    for (i, m) in items.iter().enumerate().filter(|(_, m)| m["role"] == "user") {
        let Some(parts) = m["content"].as_array() else { continue };
        for (j, p) in parts.iter().enumerate() {
            let at = format!("input[{i}].content[{j}]");
            match p["type"].as_str() {
                Some("input_text" | "input_audio") => {}
                Some("input_image") => {
                    if p["file_id"].is_string() {
                        continue;
                    }
                    let Some(url) = p["image_url"].as_str() else {
                        return Some(missing(format!("{at}.image_url")));
                    };
                    if let Some(r) = openai_data_url(url, format!("{at}.image_url"), false)
                        .or_else(|| detail(p, format!("{at}.detail")))
                    {
                        return Some(r);
                    }
                }
                Some("input_file") => {
                    if p["file_id"].is_string() || p["file_url"].is_string() {
                        continue;
                    }
                    let Some(data) = p["file_data"].as_str() else {
                        return Some(missing(format!("{at}.file_data")));
                    };
                    if p["filename"].as_str().is_none_or(str::is_empty) {
                        return Some(missing(format!("{at}.filename")));
                    }
                    if let Some(r) = openai_data_url(data, format!("{at}.file_data"), true) {
                        return Some(r);
                    }
                }
                other => {
                    let shown = other.map_or_else(|| p["type"].to_string(), |t| format!("'{t}'"));
                    let message = format!(
                        "Invalid value: {shown}. Supported values are: 'input_text', 'input_image', 'output_text', 'refusal', 'input_file', 'computer_screenshot', and 'summary_text'."
                    );
                    return Some((message, format!("{at}.type"), Some("invalid_value")));
                }
            }
        }
    }
    None
}

/// The block types the Messages API takes in a user message.
const ANTHROPIC_USER_BLOCKS: [&str; 5] = ["text", "image", "document", "tool_result", "search_result"];

/// What the Messages API refuses in a user message's blocks, in its words.
pub(crate) fn anthropic_refusal(body: &Value) -> Option<String> {
    let messages = body["messages"].as_array()?;
    for (i, m) in messages.iter().enumerate().filter(|(_, m)| m["role"] == "user") {
        let Some(blocks) = m["content"].as_array() else { continue };
        for (j, b) in blocks.iter().enumerate() {
            let at = format!("messages.{i}.content.{j}");
            let kind = b["type"].as_str().unwrap_or("");
            if !ANTHROPIC_USER_BLOCKS.contains(&kind) {
                let tags = ANTHROPIC_USER_BLOCKS.map(|t| format!("'{t}'")).join(", ");
                return Some(format!(
                    "{at}: Input tag '{kind}' found using 'type' does not match any of the expected tags: {tags}"
                ));
            }
            let source = &b["source"];
            let base64 = source["type"] == "base64";
            let media = source["media_type"].as_str();
            let at = format!("{at}.{kind}.source");
            match kind {
                "image" if base64 => match media {
                    None => return Some(format!("{at}.base64.media_type: Field required")),
                    Some(m) if !IMAGE_TYPES.contains(&m) => {
                        return Some(format!(
                            "{at}.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"
                        ));
                    }
                    _ => {}
                },
                "document" if base64 => match media {
                    None => return Some(format!("{at}.base64.media_type: Field required")),
                    Some("application/pdf") => {}
                    Some(_) => return Some(format!("{at}.base64.media_type: Input should be 'application/pdf'")),
                },
                "image" | "document" => {
                    let ok = match source["type"].as_str() {
                        Some("url") => source["url"].is_string(),
                        Some("file") => source["file_id"].is_string(),
                        Some("text" | "content") => kind == "document",
                        _ => false,
                    };
                    if !ok {
                        return Some(format!("{at}: Field required"));
                    }
                    continue;
                }
                _ => continue,
            }
            match source["data"].as_str() {
                None => return Some(format!("{at}.base64.data: Field required")),
                Some(d) if !is_base64(d) => return Some(format!("{at}.base64: invalid base64 data")),
                Some(d) if kind == "image" && d.len() > ANTHROPIC_MAX_IMAGE_BYTES => {
                    let n = d.len();
                    return Some(format!(
                        "{at}.base64: image exceeds 5 MB maximum: {n} bytes > {ANTHROPIC_MAX_IMAGE_BYTES} bytes"
                    ));
                }
                Some(_) => {}
            }
        }
    }
    None
}

/// The media types Gemini takes inline in a person's message that this mock knows.
fn gemini_takes(mime: &str) -> bool {
    IMAGE_TYPES.contains(&mime)
        || ["image/heic", "image/heif", "application/pdf", "text/plain"].contains(&mime)
        || mime.starts_with("audio/")
        || mime.starts_with("video/")
}

/// The fields a Gemini part may have (one data field and its metadata).
const GEMINI_PART_FIELDS: [&str; 16] = [
    "text",
    "inlineData",
    "inline_data",
    "fileData",
    "file_data",
    "functionCall",
    "function_call",
    "functionResponse",
    "function_response",
    "executableCode",
    "codeExecutionResult",
    "thought",
    "thoughtSignature",
    "thought_signature",
    "videoMetadata",
    "partMetadata",
];

/// What Gemini refuses in a user content's parts, in its words.
pub(crate) fn gemini_refusal(body: &Value) -> Option<String> {
    let contents = body["contents"].as_array()?;
    for (i, c) in contents.iter().enumerate().filter(|(_, c)| c["role"] == "user") {
        for (j, p) in c["parts"].as_array().into_iter().flatten().enumerate() {
            let at = format!("contents[{i}].parts[{j}]");
            if let Some(unknown) =
                p.as_object().into_iter().flatten().map(|(k, _)| k).find(|k| !GEMINI_PART_FIELDS.contains(&k.as_str()))
            {
                return Some(format!(
                    "Invalid JSON payload received. Unknown name \"{unknown}\" at '{at}': Cannot find field."
                ));
            }
            let Some(inline) = p.get("inlineData").or_else(|| p.get("inline_data")) else { continue };
            let mime = inline.get("mimeType").or_else(|| inline.get("mime_type")).and_then(Value::as_str);
            match mime {
                None | Some("") => {
                    return Some(format!(
                        "* GenerateContentRequest.{at}.inline_data.mime_type: mime_type is not specified"
                    ));
                }
                Some(m) if !gemini_takes(m) => return Some(format!("Unsupported MIME type: {m}")),
                Some(_) => {}
            }
            let data = inline["data"].as_str().unwrap_or("");
            if !is_base64(data) {
                let shown: String = data.chars().take(20).collect();
                return Some(format!(
                    "Invalid value at '{at}.inline_data.data' (TYPE_BYTES), Base64 decoding failed for \"{shown}\""
                ));
            }
        }
    }
    None
}

/// The first image in a person's message of a request to `path`: (message index, part index).
fn first_image(path: &str, body: &Value) -> Option<(usize, usize)> {
    user_message_indices(path, body)
        .into_iter()
        .find_map(|(i, parts)| parts.iter().position(|p| matches!(p, SentPart::Image { .. })).map(|j| (i, j)))
}

/// Each user message's index in its list (`messages`, `input`, `contents`) and its parts, with
/// the part indices of the wire (every part counted, known or not).
fn user_message_indices(path: &str, body: &Value) -> Vec<(usize, Vec<SentPart>)> {
    let Some(api) = api(path) else { return Vec::new() };
    let (list, read): (&Value, fn(&Value) -> Option<SentPart>) = match api {
        Api::Chat => (&body["messages"], chat_part),
        Api::Responses => (&body["input"], responses_part),
        Api::Anthropic => (&body["messages"], anthropic_part),
        Api::Gemini => (&body["contents"], gemini_part),
    };
    let field = if api == Api::Gemini { "parts" } else { "content" };
    list.as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, m)| m["role"] == "user")
        .map(|(i, m)| {
            let parts = m[field].as_array().into_iter().flatten();
            // An unreadable part stays in place as empty text, so indices match the wire.
            (i, parts.map(|p| read(p).unwrap_or(SentPart::Text(String::new()))).collect())
        })
        .collect()
}

/// The refusal of a request to `path` that sends an image to `model`, a model the server was
/// told sees no images ([`crate::Script::text_only_models`]): (status, body) in the API's words.
pub(crate) fn vision_refusal(path: &str, body: &Value, model: &str) -> Option<(u16, Value)> {
    let (i, j) = first_image(path, body)?;
    let refusal = match api(path)? {
        Api::Chat => json!({"error": {
            "message": "Invalid content type. image_url is only supported by certain models.",
            "type": "invalid_request_error", "param": format!("messages.[{i}].content.[{j}].type"), "code": null}}),
        Api::Responses => json!({"error": {
            "message": format!("Invalid 'input[{i}].content[{j}]': the model {model} does not support image inputs."),
            "type": "invalid_request_error", "param": format!("input[{i}].content[{j}]"), "code": "unsupported_value"}}),
        Api::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": format!("messages.{i}.content.{j}.image: the model {model} does not support image input.")}}),
        Api::Gemini => json!({"error": {"code": 400,
            "message": format!("Image input modality is not enabled for models/{model}"), "status": "INVALID_ARGUMENT"}}),
    };
    Some((400, refusal))
}

/// The model a request to `path` names (Gemini's is in the path).
pub(crate) fn model_of<'a>(path: &'a str, body: &'a Value) -> Option<&'a str> {
    match api(path)? {
        Api::Gemini => path.strip_prefix("/v1beta/models/")?.split(':').next(),
        _ => body["model"].as_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_checked_like_a_decoder() {
        for ok in ["iVBORw0KGgo=", "JVBERi0xLjQK", "/9j/4AAQ", "ab=="] {
            assert!(is_base64(ok), "{ok}");
        }
        for bad in ["", "abc", "ab c", "a===", "%%%%", "ab=c"] {
            assert!(!is_base64(bad), "{bad}");
        }
    }
}
