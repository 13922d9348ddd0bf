//! A server's context beyond tools, in our terms: its prompts, resources and resource templates
//! as listed, a prompt's messages, a resource's contents and an argument's completions.
//!
//! Everything is read from the JSON the server sent (rmcp's types serialized back), entry by
//! entry: one malformed prompt or resource skips only itself, with its reason. Everything is
//! bounded here: how many entries a listing keeps and their bytes ([`MAX_LISTED`],
//! [`MAX_LISTING_BYTES`]), every text field's length, a prompt's messages and text, and a
//! resource's decoded size ([`MAX_RESOURCE_BYTES`]), checked before anything is decoded.

use crate::convert::cut;
use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

/// The most prompts, resources or templates kept from one server's listing.
pub const MAX_LISTED: usize = 1000;
/// The most bytes (as JSON) of one listing kept; the rest is left out with a count.
pub const MAX_LISTING_BYTES: usize = 2 * 1024 * 1024;
/// The largest single entry of a listing (as JSON); a larger one is skipped.
pub const MAX_ENTRY_BYTES: usize = 16 * 1024;
/// The longest name, URI or title kept.
pub const MAX_NAME: usize = 2048;
/// The longest description kept; longer ones are cut.
pub const MAX_DESCRIPTION: usize = 4096;
/// The most arguments one prompt may declare.
pub const MAX_ARGUMENTS: usize = 32;
/// The most messages one prompt may return.
pub const MAX_PROMPT_MESSAGES: usize = 100;
/// The most text (bytes) one prompt may return, over all its messages.
pub const MAX_PROMPT_TEXT: usize = 1024 * 1024;
/// The largest resource accepted, decoded (what one `resources/read` may return in all).
pub const MAX_RESOURCE_BYTES: usize = 8 * 1024 * 1024;
/// The most contents one `resources/read` may return.
pub const MAX_CONTENTS: usize = 64;
/// The most completion values kept (the protocol's own limit).
pub const MAX_COMPLETIONS: usize = 100;
/// The longest completion value kept; longer ones are dropped.
pub const MAX_COMPLETION_VALUE: usize = 1024;

/// A prompt a server offers.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptInfo {
    /// The server's name for it (what `prompts/get` sends).
    pub name: String,
    /// Its title for people, when it gave one.
    pub title: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Its arguments, in the server's order.
    pub arguments: Vec<PromptArgument>,
}

/// One argument of a prompt.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Its name (the key of `arguments` in `prompts/get`).
    pub name: String,
    /// Its title for people.
    pub title: Option<String>,
    /// What to give.
    pub description: Option<String>,
    /// Whether the prompt needs it.
    pub required: bool,
}

/// A resource a server lists.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    /// Its URI (what `resources/read` sends).
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its title for people.
    pub title: Option<String>,
    /// What it is.
    pub description: Option<String>,
    /// Its media type, when the server said.
    pub mime_type: Option<String>,
    /// Its size in bytes, when the server said (not checked: the read is).
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub size: Option<u64>,
}

/// A resource template: a URI with `{variables}` (RFC 6570 level 1) the person fills in.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateInfo {
    /// The template, `demo://resource/{id}`.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// Its title for people.
    pub title: Option<String>,
    /// What it gives.
    pub description: Option<String>,
    /// The media type of what it gives, when the server said.
    pub mime_type: Option<String>,
    /// Its variables in order (empty when the template uses expressions this app does not
    /// expand; then `problem` says so).
    pub variables: Vec<String>,
    /// Why it cannot be used, when it cannot.
    pub problem: Option<String>,
}

/// A listing, and what was left out of it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing<T> {
    /// The entries, in the server's order.
    pub items: Vec<T>,
    /// What was left out, one reason each (a bad entry, the cap).
    pub skipped: Vec<String>,
}

impl<T> Default for Listing<T> {
    fn default() -> Self {
        Self { items: Vec::new(), skipped: Vec::new() }
    }
}

/// Who says a message of a prompt.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PromptRole {
    /// The person.
    User,
    /// The model.
    Assistant,
}

/// One content block of a prompt's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptContent {
    /// Text.
    Text(String),
    /// An image, decoded.
    Image { mime_type: String, bytes: Vec<u8> },
    /// A resource the server embedded.
    Resource(ResourceContents),
    /// A link to a resource (not read).
    Link { uri: String, name: String, mime_type: Option<String> },
    /// Something that cannot be carried (audio, an unknown block), described in words.
    Other(String),
}

/// One message of a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptMessage {
    /// Who says it.
    pub role: PromptRole,
    /// What it says.
    pub content: PromptContent,
}

/// What `prompts/get` returned.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PromptMessages {
    /// The prompt's description of this instance.
    pub description: Option<String>,
    /// Its messages, in order.
    pub messages: Vec<PromptMessage>,
}

/// One content of a resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceContents {
    /// Its URI.
    pub uri: String,
    /// Its media type, when the server said.
    pub mime_type: Option<String>,
    /// The content.
    pub body: ResourceBody,
}

/// A resource's content: text, or bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Bytes (decoded from the server's base64).
    Blob(Vec<u8>),
}

impl ResourceContents {
    /// Its text: text as it is, a blob that is UTF-8 (whatever its media type says) as text,
    /// `None` for a blob that is not.
    pub fn text(&self) -> Option<&str> {
        match &self.body {
            ResourceBody::Text(text) => Some(text),
            ResourceBody::Blob(bytes) => std::str::from_utf8(bytes).ok(),
        }
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        match &self.body {
            ResourceBody::Text(text) => text.len(),
            ResourceBody::Blob(bytes) => bytes.len(),
        }
    }

    /// Whether it is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a completion asks about: a prompt's argument or a resource template's variable.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum CompletionRef {
    /// An argument of the prompt `name`.
    Prompt { name: String },
    /// A variable of the resource template `uri` (the template, `demo://{id}`).
    Resource { uri: String },
}

/// The values a server suggests for an argument.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values, at most [`MAX_COMPLETIONS`].
    pub values: Vec<String>,
    /// How many there are in all, when the server said.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub total: Option<u64>,
    /// Whether there are more than shown.
    pub has_more: bool,
}

/// How much a server logs (`logging/setLevel`), least to most severe.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The protocol's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level a word names.
    pub fn parse(word: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str().eq_ignore_ascii_case(word.trim()))
    }
}

fn str_field<'a>(entry: &'a Value, key: &str) -> Option<&'a str> {
    entry.get(key).and_then(Value::as_str)
}

/// An optional text field, trimmed, cut to `max`, without control characters' effect.
fn text_field(entry: &Value, key: &str, max: usize) -> Option<String> {
    let text = str_field(entry, key)?.trim();
    (!text.is_empty()).then(|| cut(text, max))
}

/// A required short field (a name or URI): present, not empty, not over [`MAX_NAME`].
fn required(entry: &Value, key: &str, what: &str) -> Result<String, String> {
    match str_field(entry, key).map(str::trim) {
        None | Some("") => Err(format!("{what} without a {key}")),
        Some(value) if value.len() > MAX_NAME => Err(format!("{what} whose {key} is over {MAX_NAME} bytes")),
        Some(value) => Ok(value.to_owned()),
    }
}

/// Reads a listing's entries with `convert`, keeping at most [`MAX_LISTED`] entries and
/// [`MAX_LISTING_BYTES`]; `what` names one entry in reasons ("a prompt").
fn listing<T>(values: &[Value], what: &str, convert: impl Fn(&Value) -> Result<T, String>) -> Listing<T> {
    let mut out = Listing::default();
    let mut bytes = 0usize;
    let mut over_budget = 0usize;
    for entry in values {
        let size = entry.to_string().len();
        if size > MAX_ENTRY_BYTES {
            let name = str_field(entry, "name").or(str_field(entry, "uri")).unwrap_or("?");
            out.skipped.push(format!(
                "{what} '{}': its entry is {size} bytes, more than {MAX_ENTRY_BYTES}; left out",
                switchboard_core::visible(&cut(name, 80))
            ));
            continue;
        }
        if out.items.len() >= MAX_LISTED || bytes + size > MAX_LISTING_BYTES {
            over_budget += 1;
            continue;
        }
        match convert(entry) {
            Ok(item) => {
                bytes += size;
                out.items.push(item);
            }
            Err(why) => out.skipped.push(switchboard_core::visible(&why).into_owned()),
        }
    }
    if over_budget > 0 {
        out.skipped.push(format!(
            "{over_budget} more past {MAX_LISTED} entries or {} MiB were left out",
            MAX_LISTING_BYTES / (1024 * 1024)
        ));
    }
    out
}

/// Converts `prompts/list` entries; a name listed twice keeps its first entry.
pub fn prompts(values: &[Value]) -> Listing<PromptInfo> {
    let mut listed = listing(values, "a prompt", |entry| {
        let name = required(entry, "name", "a prompt")?;
        let arguments = match entry.get("arguments") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(args)) if args.len() > MAX_ARGUMENTS => {
                return Err(format!(
                    "the prompt '{name}' declares {} arguments, more than {MAX_ARGUMENTS}",
                    args.len()
                ));
            }
            Some(Value::Array(args)) => args
                .iter()
                .map(|a| {
                    Ok(PromptArgument {
                        name: required(a, "name", &format!("the prompt '{name}' has an argument"))?,
                        title: text_field(a, "title", MAX_NAME),
                        description: text_field(a, "description", MAX_DESCRIPTION),
                        required: a.get("required").and_then(Value::as_bool).unwrap_or(false),
                    })
                })
                .collect::<Result<_, String>>()?,
            Some(_) => return Err(format!("the prompt '{name}': its arguments are not a list")),
        };
        Ok(PromptInfo {
            title: text_field(entry, "title", MAX_NAME),
            description: text_field(entry, "description", MAX_DESCRIPTION),
            arguments,
            name,
        })
    });
    dedup(&mut listed, |p| p.name.clone(), "the prompt");
    listed
}

/// Converts `resources/list` entries; a URI listed twice keeps its first entry.
pub fn resources(values: &[Value]) -> Listing<ResourceInfo> {
    let mut listed = listing(values, "a resource", |entry| {
        let uri = required(entry, "uri", "a resource")?;
        Ok(ResourceInfo {
            name: text_field(entry, "name", MAX_NAME).unwrap_or_else(|| uri.clone()),
            title: text_field(entry, "title", MAX_NAME),
            description: text_field(entry, "description", MAX_DESCRIPTION),
            mime_type: text_field(entry, "mimeType", 255),
            size: entry.get("size").and_then(Value::as_u64),
            uri,
        })
    });
    dedup(&mut listed, |r| r.uri.clone(), "the resource");
    listed
}

/// Converts `resources/templates/list` entries; a template listed twice keeps its first entry.
pub fn templates(values: &[Value]) -> Listing<ResourceTemplateInfo> {
    let mut listed = listing(values, "a resource template", |entry| {
        let uri_template = required(entry, "uriTemplate", "a resource template")?;
        let (variables, problem) = match crate::template::Template::parse(&uri_template) {
            Ok(t) => (t.variables().map(str::to_owned).collect(), None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        Ok(ResourceTemplateInfo {
            name: text_field(entry, "name", MAX_NAME).unwrap_or_else(|| uri_template.clone()),
            title: text_field(entry, "title", MAX_NAME),
            description: text_field(entry, "description", MAX_DESCRIPTION),
            mime_type: text_field(entry, "mimeType", 255),
            variables,
            problem,
            uri_template,
        })
    });
    dedup(&mut listed, |t| t.uri_template.clone(), "the template");
    listed
}

fn dedup<T>(listed: &mut Listing<T>, key: impl Fn(&T) -> String, what: &str) {
    let mut seen = std::collections::HashSet::new();
    let mut twice = Vec::new();
    listed.items.retain(|item| {
        let k = key(item);
        let first = seen.insert(k.clone());
        if !first {
            twice.push(format!("{what} '{}' was listed twice; the first is kept", cut(&k, 200)));
        }
        first
    });
    listed.skipped.extend(twice);
}

/// The decoded size of base64 `data` (an upper bound for padded or odd input).
fn decoded_len(data: &str) -> usize {
    data.len().div_ceil(4) * 3
}

fn decode(data: &str) -> Result<Vec<u8>, String> {
    let data = data.trim();
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(data))
        .map_err(|e| format!("its data is not base64 ({e})"))
}

fn megabytes(bytes: usize) -> String {
    format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
}

/// Converts one embedded or read resource content, counting its decoded size against `budget`.
fn resource_contents(entry: &Value, budget: &mut usize) -> Result<ResourceContents, String> {
    let uri = required(entry, "uri", "a resource content")?;
    let mime_type = text_field(entry, "mimeType", 255);
    let body = match (str_field(entry, "text"), str_field(entry, "blob")) {
        (Some(text), _) => {
            if text.len() > *budget {
                return Err(too_large(&uri, text.len()));
            }
            *budget -= text.len();
            ResourceBody::Text(text.to_owned())
        }
        (None, Some(blob)) => {
            // The size is checked before decoding: nothing over the bound is ever decoded.
            let size = decoded_len(blob);
            if size > *budget + 3 {
                return Err(too_large(&uri, size));
            }
            let bytes = decode(blob).map_err(|e| format!("the resource {uri}: {e}"))?;
            *budget = budget.saturating_sub(bytes.len());
            ResourceBody::Blob(bytes)
        }
        (None, None) => return Err(format!("the resource {uri} has neither text nor data")),
    };
    Ok(ResourceContents { uri, mime_type, body })
}

fn too_large(uri: &str, size: usize) -> String {
    format!(
        "the resource {uri} is {}, more than the {} a resource may be; it was not read",
        megabytes(size),
        megabytes(MAX_RESOURCE_BYTES)
    )
}

/// Converts a `resources/read` result: every content, at most [`MAX_CONTENTS`] and
/// [`MAX_RESOURCE_BYTES`] decoded in all; over either, the read is refused.
pub fn contents(value: &Value) -> Result<Vec<ResourceContents>, String> {
    let Some(entries) = value.get("contents").and_then(Value::as_array) else {
        return Err("the server's answer has no contents".into());
    };
    if entries.len() > MAX_CONTENTS {
        return Err(format!("the server sent {} contents, more than {MAX_CONTENTS}", entries.len()));
    }
    let mut budget = MAX_RESOURCE_BYTES;
    entries.iter().map(|e| resource_contents(e, &mut budget)).collect()
}

/// Converts a `prompts/get` result: at most [`MAX_PROMPT_MESSAGES`] messages and
/// [`MAX_PROMPT_TEXT`] of text; embedded resources and images within [`MAX_RESOURCE_BYTES`].
pub fn prompt_messages(value: &Value) -> Result<PromptMessages, String> {
    let Some(entries) = value.get("messages").and_then(Value::as_array) else {
        return Err("the server's answer has no messages".into());
    };
    if entries.len() > MAX_PROMPT_MESSAGES {
        return Err(format!("the prompt has {} messages, more than {MAX_PROMPT_MESSAGES}", entries.len()));
    }
    let mut budget = MAX_RESOURCE_BYTES;
    let mut text_bytes = 0usize;
    let mut messages = Vec::with_capacity(entries.len());
    for entry in entries {
        let role = match str_field(entry, "role") {
            Some("assistant") => PromptRole::Assistant,
            _ => PromptRole::User,
        };
        let block = entry.get("content").cloned().unwrap_or_default();
        let content = match str_field(&block, "type").unwrap_or("") {
            "text" => {
                let text = str_field(&block, "text").unwrap_or("");
                text_bytes += text.len();
                if text_bytes > MAX_PROMPT_TEXT {
                    return Err(format!("the prompt's text is over {}", megabytes(MAX_PROMPT_TEXT)));
                }
                PromptContent::Text(text.to_owned())
            }
            "image" => {
                let mime_type = text_field(&block, "mimeType", 255).unwrap_or_else(|| "image".into());
                let data = str_field(&block, "data").unwrap_or("");
                let size = decoded_len(data);
                if size > budget {
                    return Err(format!("an image of the prompt is {}, more than allowed", megabytes(size)));
                }
                let bytes = decode(data).map_err(|e| format!("an image of the prompt: {e}"))?;
                budget -= bytes.len();
                PromptContent::Image { mime_type, bytes }
            }
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or_default();
                PromptContent::Resource(resource_contents(&resource, &mut budget)?)
            }
            "resource_link" => PromptContent::Link {
                uri: required(&block, "uri", "a resource link")?,
                name: text_field(&block, "name", MAX_NAME).unwrap_or_default(),
                mime_type: text_field(&block, "mimeType", 255),
            },
            "audio" => PromptContent::Other(format!(
                "[audio: {}, {} — audio cannot be sent]",
                text_field(&block, "mimeType", 255).unwrap_or_else(|| "audio".into()),
                megabytes(decoded_len(str_field(&block, "data").unwrap_or("")))
            )),
            other => PromptContent::Other(format!("[{} content]", if other.is_empty() { "unknown" } else { other })),
        };
        messages.push(PromptMessage { role, content });
    }
    Ok(PromptMessages { description: text_field(value, "description", MAX_DESCRIPTION), messages })
}

/// Converts a `completion/complete` result: at most [`MAX_COMPLETIONS`] values, each at most
/// [`MAX_COMPLETION_VALUE`] bytes (longer ones dropped).
pub fn completion(value: &Value) -> Completion {
    let c = value.get("completion").cloned().unwrap_or_default();
    let all = c.get("values").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let values: Vec<String> = all
        .iter()
        .filter_map(Value::as_str)
        .filter(|v| v.len() <= MAX_COMPLETION_VALUE)
        .take(MAX_COMPLETIONS)
        .map(str::to_owned)
        .collect();
    let has_more = c.get("hasMore").and_then(Value::as_bool).unwrap_or(false) || all.len() > values.len();
    Completion { values, total: c.get("total").and_then(Value::as_u64), has_more }
}

/// A log notification (`notifications/message`) as one line of the server's log: level,
/// logger and data (a string as it is, anything else as JSON), cut to `max` bytes.
pub fn log_line(level: &str, logger: Option<&str>, data: &Value, max: usize) -> String {
    let data = match data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let logger = logger.map(|l| format!(" {}:", cut(l, 100))).unwrap_or_default();
    let line = format!("[log {}]{logger} {}", cut(level, 16), data.replace(['\n', '\r'], " "));
    cut(&switchboard_core::visible(&line), max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bad_prompt_skips_itself_and_the_rest_load() {
        let listed = prompts(&[
            json!({"name": "simple", "description": "d"}),
            json!({"description": "nameless"}),
            json!({"name": "args", "arguments": [{"name": "city", "required": true}, {"name": "state"}]}),
            json!({"name": "bad_args", "arguments": 5}),
            json!({"name": "simple", "description": "again"}),
            json!({"name": "huge", "description": "x".repeat(MAX_ENTRY_BYTES)}),
        ]);
        let names: Vec<_> = listed.items.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["simple", "args"]);
        assert!(listed.items[1].arguments[0].required && !listed.items[1].arguments[1].required);
        assert_eq!(listed.skipped.len(), 4, "{:?}", listed.skipped);
        assert!(listed.skipped.iter().any(|s| s.contains("listed twice")));
        assert!(listed.skipped.iter().any(|s| s.contains("'huge'") && s.contains("left out")));
    }

    #[test]
    fn a_listing_flood_is_capped_with_a_count() {
        let values: Vec<Value> = (0..MAX_LISTED + 250).map(|i| json!({"uri": format!("x://r/{i}")})).collect();
        let listed = resources(&values);
        assert_eq!(listed.items.len(), MAX_LISTED);
        assert_eq!(listed.items[0].name, "x://r/0", "a nameless resource is named by its URI");
        assert!(listed.skipped.last().unwrap().starts_with("250 more past"), "{:?}", listed.skipped);
    }

    #[test]
    fn resource_contents_are_text_or_decoded_bytes_and_oversized_ones_are_refused_before_decoding() {
        let read = contents(&json!({"contents": [
            {"uri": "a://t", "mimeType": "text/plain", "text": "héllo"},
            {"uri": "a://b", "mimeType": "application/x-unknown", "blob": "aGk="},
            {"uri": "a://z", "blob": "/w=="},
        ]}))
        .unwrap();
        assert_eq!(read[0].text(), Some("héllo"));
        assert_eq!(read[1].body, ResourceBody::Blob(b"hi".to_vec()));
        assert_eq!(read[1].text(), Some("hi"), "an unknown type that is UTF-8 reads as text");
        assert_eq!(read[2].text(), None, "bytes that are not UTF-8 are no text");
        let big = "A".repeat((MAX_RESOURCE_BYTES / 3 + 10) * 4);
        let e = contents(&json!({"contents": [{"uri": "a://big", "blob": big}]})).unwrap_err();
        assert!(e.contains("more than the 8.0 MB a resource may be"), "{e}");
        assert!(contents(&json!({"contents": [{"uri": "a://n"}]})).unwrap_err().contains("neither text nor data"));
    }

    #[test]
    fn prompt_messages_keep_roles_text_images_and_embedded_resources() {
        let got = prompt_messages(&json!({"description": "d", "messages": [
            {"role": "user", "content": {"type": "text", "text": "Look:"}},
            {"role": "assistant", "content": {"type": "image", "mimeType": "image/png", "data": "iVBORw=="}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "x://1", "text": "inside"}}},
            {"role": "user", "content": {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"}},
        ]}))
        .unwrap();
        assert_eq!(got.description.as_deref(), Some("d"));
        assert_eq!(got.messages[0].content, PromptContent::Text("Look:".into()));
        assert_eq!(got.messages[1].role, PromptRole::Assistant);
        assert!(matches!(&got.messages[1].content, PromptContent::Image { mime_type, .. } if mime_type == "image/png"));
        assert!(matches!(&got.messages[2].content, PromptContent::Resource(r) if r.text() == Some("inside")));
        assert!(matches!(&got.messages[3].content, PromptContent::Other(t) if t.contains("audio cannot be sent")));
        let many: Vec<Value> = (0..=MAX_PROMPT_MESSAGES).map(|_| json!({"role": "user"})).collect();
        assert!(prompt_messages(&json!({"messages": many})).unwrap_err().contains("more than 100"));
    }

    #[test]
    fn completions_are_bounded() {
        let values: Vec<Value> = (0..150).map(|i| json!(format!("v{i}"))).collect();
        let c = completion(&json!({"completion": {"values": values, "total": 150}}));
        assert_eq!(c.values.len(), MAX_COMPLETIONS);
        assert!(c.has_more && c.total == Some(150));
        let long = completion(&json!({"completion": {"values": ["x".repeat(5000), "ok"]}}));
        assert_eq!(long.values, ["ok"]);
    }

    #[test]
    fn a_log_line_names_level_and_logger_on_one_line() {
        assert_eq!(log_line("info", Some("db"), &json!("a\nb"), 100), "[log info] db: a b");
        assert_eq!(log_line("error", None, &json!({"x": 1}), 100), "[log error] {\"x\":1}");
        assert!(log_line("info", None, &json!("y".repeat(500)), 50).len() <= 53);
        assert_eq!(LogLevel::parse("Warning"), Some(LogLevel::Warning));
        assert!(LogLevel::Debug < LogLevel::Emergency);
    }
}
