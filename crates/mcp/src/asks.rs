//! What a server asks of the person, read from its JSON: an elicitation's form (only the field
//! types the MCP specification allows) or page (https only), a sampling request's messages and
//! limits, and the per-server rate limit ([`Bucket`]) that keeps a flood from reaching the person.
//!
//! Invariant: everything here is bounded — fields, choices, texts, messages, images — and a
//! request that cannot be shown faithfully is refused with a reason in words, never shown in part.

use crate::convert::cut;
use serde_json::Value;
use std::time::Duration;
use switchboard_core::{ElicitationForm, FieldChoice, FieldKind, FormField, SamplingMessage, SamplingRole, ToolImage};
use tokio::time::Instant;

/// The most fields one form may have.
pub const MAX_FIELDS: usize = 50;
/// The most choices one field may offer.
pub const MAX_CHOICES: usize = 500;
/// The longest message, title or description kept (longer ones are cut).
pub const MAX_TEXT: usize = 4 * 1024;
/// The most messages one sampling request may carry.
pub const MAX_MESSAGES: usize = 100;
/// The most text (all messages and the system prompt) one sampling request may carry.
pub const MAX_SAMPLING_TEXT: usize = 512 * 1024;
/// The most images one sampling request may carry.
pub const MAX_IMAGES: usize = 8;
/// The longest page address accepted.
pub const MAX_URL: usize = 4096;

fn text_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(|s| cut(s, MAX_TEXT))
}

fn u32_of(v: &Value, key: &str) -> Option<u32> {
    v.get(key).and_then(Value::as_u64).map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// The form a `requestedSchema` describes, its properties in `order` (the wire order, when
/// known) and then the rest; `Err` names the first thing the specification does not allow.
pub fn form(schema: &Value, order: Option<&[String]>) -> Result<ElicitationForm, String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("the requested schema is not an object of fields".into());
    }
    let empty = serde_json::Map::new();
    let properties = match schema.get("properties") {
        None => &empty,
        Some(Value::Object(p)) => p,
        Some(_) => return Err("the requested schema's properties are not an object".into()),
    };
    if properties.len() > MAX_FIELDS {
        return Err(format!("the form has {} fields; at most {MAX_FIELDS} are shown", properties.len()));
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<&String> = Vec::new();
    for name in order.unwrap_or_default() {
        if let Some((k, _)) = properties.get_key_value(name)
            && !names.contains(&k)
        {
            names.push(k);
        }
    }
    for k in properties.keys() {
        if !names.contains(&k) {
            names.push(k);
        }
    }
    let mut fields = Vec::new();
    for name in names {
        let property = &properties[name];
        let kind = field_kind(property).map_err(|why| format!("the field '{}' {why}", cut(name, 100)))?;
        fields.push(FormField {
            name: name.clone(),
            title: text_of(property, "title").unwrap_or_else(|| cut(name, MAX_TEXT)),
            description: text_of(property, "description"),
            required: required.contains(&name.as_str()),
            kind,
        });
    }
    if let Some(missing) = required.iter().find(|r| !fields.iter().any(|f| f.name == **r)) {
        return Err(format!("the field '{}' is required but not described", cut(missing, 100)));
    }
    Ok(ElicitationForm { fields })
}

/// The choices of an `enum` (with legacy `enumNames`) or a list of `{const, title}`.
fn choices(v: &Value) -> Result<Option<Vec<FieldChoice>>, String> {
    if let Some(values) = v.get("enum").and_then(Value::as_array) {
        if values.len() > MAX_CHOICES {
            return Err(format!("offers {} choices; at most {MAX_CHOICES} are shown", values.len()));
        }
        let names = v.get("enumNames").and_then(Value::as_array);
        let mut out = Vec::new();
        for (i, value) in values.iter().enumerate() {
            let Some(value) = value.as_str() else { return Err("has a choice that is not text".into()) };
            let title = names.and_then(|n| n.get(i)).and_then(Value::as_str).unwrap_or(value);
            out.push(FieldChoice { value: cut(value, MAX_TEXT), title: cut(title, MAX_TEXT) });
        }
        return Ok(Some(out));
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = v.get(key).and_then(Value::as_array) {
            if options.len() > MAX_CHOICES {
                return Err(format!("offers {} choices; at most {MAX_CHOICES} are shown", options.len()));
            }
            let mut out = Vec::new();
            for option in options {
                let Some(value) = option.get("const").and_then(Value::as_str) else {
                    return Err(format!("has a {key} entry that is not a titled choice (const and title)"));
                };
                let title = option.get("title").and_then(Value::as_str).unwrap_or(value);
                out.push(FieldChoice { value: cut(value, MAX_TEXT), title: cut(title, MAX_TEXT) });
            }
            return Ok(Some(out));
        }
    }
    Ok(None)
}

fn field_kind(v: &Value) -> Result<FieldKind, String> {
    let ty = v.get("type").and_then(Value::as_str);
    match ty {
        Some("string") => {
            if let Some(choices) = choices(v)? {
                let default =
                    v.get("default").and_then(Value::as_str).filter(|d| choices.iter().any(|c| c.value == *d));
                return Ok(FieldKind::Choice {
                    choices,
                    multiple: false,
                    min_items: None,
                    max_items: None,
                    default: default.map(str::to_owned).into_iter().collect(),
                });
            }
            let format = v.get("format").and_then(Value::as_str);
            let format = match format {
                None => None,
                Some(f @ ("email" | "uri" | "date" | "date-time")) => Some(f.to_owned()),
                Some(other) => {
                    return Err(format!("asks for the text format '{}', which MCP forms do not allow", cut(other, 40)));
                }
            };
            Ok(FieldKind::Text {
                format,
                min_length: u32_of(v, "minLength"),
                max_length: u32_of(v, "maxLength"),
                default: v.get("default").and_then(Value::as_str).map(|d| cut(d, MAX_TEXT)),
            })
        }
        Some(t @ ("number" | "integer")) => {
            let integer = t == "integer";
            let default = v.get("default").and_then(Value::as_f64).filter(|d| !integer || d.fract() == 0.0);
            Ok(FieldKind::Number {
                integer,
                minimum: v.get("minimum").and_then(Value::as_f64),
                maximum: v.get("maximum").and_then(Value::as_f64),
                default,
            })
        }
        Some("boolean") => Ok(FieldKind::Boolean { default: v.get("default").and_then(Value::as_bool) }),
        Some("array") => {
            let items = v.get("items").unwrap_or(&Value::Null);
            let item_type = items.get("type").and_then(Value::as_str);
            let Some(choices) = choices(items)?.filter(|_| item_type.is_none_or(|t| t == "string")) else {
                return Err("is a list of something other than choices, which MCP forms do not allow".into());
            };
            let default = v
                .get("default")
                .and_then(Value::as_array)
                .map(|d| {
                    d.iter()
                        .filter_map(Value::as_str)
                        .filter(|s| choices.iter().any(|c| c.value == *s))
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            Ok(FieldKind::Choice {
                choices,
                multiple: true,
                min_items: u32_of(v, "minItems"),
                max_items: u32_of(v, "maxItems"),
                default,
            })
        }
        Some("object") => Err("is a nested object, which MCP forms do not allow".into()),
        Some(other) => Err(format!("has the type '{}', which MCP forms do not allow", cut(other, 40))),
        None => Err("has no type".into()),
    }
}

/// Why a page a server asks the person to open is refused, if it is: only https pages are opened
/// (and http on this computer, where nothing crosses the network).
pub fn url_refusal(url: &str) -> Option<String> {
    if url.len() > MAX_URL {
        return Some(format!("the page's address is longer than {MAX_URL} characters"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("the page's address contains spaces or control characters".into());
    }
    let Ok(parsed) = url::Url::parse(url) else { return Some("the page's address is not a valid URL".into()) };
    let local = matches!(parsed.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    match parsed.scheme() {
        "https" if parsed.host_str().is_some_and(|h| !h.is_empty()) => None,
        "http" if local => None,
        scheme => Some(format!("the page is not https ({scheme}:); Switchboard opens only secure pages for a server")),
    }
}

/// A sampling request's messages as the person reads them (images named, their data kept for
/// the model; audio named only), checked against the bounds.
pub fn sampling_messages(params: &Value) -> Result<Vec<SamplingMessage>, String> {
    let Some(messages) = params.get("messages").and_then(Value::as_array) else {
        return Err("the request has no messages".into());
    };
    if messages.is_empty() {
        return Err("the request has no messages".into());
    }
    if messages.len() > MAX_MESSAGES {
        return Err(format!("the request has {} messages; at most {MAX_MESSAGES} are accepted", messages.len()));
    }
    let mut total = params.get("systemPrompt").and_then(Value::as_str).map_or(0, str::len);
    let mut images = 0;
    let mut out = Vec::new();
    for m in messages {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("assistant") => SamplingRole::Assistant,
            Some("user") => SamplingRole::User,
            _ => return Err("a message has no role (user or assistant)".into()),
        };
        let content = match m.get("content") {
            Some(Value::Array(parts)) => parts.clone(),
            Some(part) => vec![part.clone()],
            None => Vec::new(),
        };
        let mut texts = Vec::new();
        let mut kept = Vec::new();
        for part in &content {
            match part.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = part.get("text").and_then(Value::as_str).unwrap_or_default();
                    total += text.len();
                    texts.push(text.to_owned());
                }
                Some("image") => {
                    let mime = part.get("mimeType").and_then(Value::as_str).unwrap_or("image");
                    let data = part.get("data").and_then(Value::as_str).unwrap_or_default();
                    let size = data.len() / 4 * 3;
                    texts.push(format!("[image: {}, {} KB]", cut(mime, 60), size.div_ceil(1024)));
                    images += 1;
                    if images > MAX_IMAGES {
                        return Err(format!("the request has more than {MAX_IMAGES} images"));
                    }
                    if !ToolImage::TYPES.contains(&mime) || data.len() > ToolImage::MAX_DATA {
                        return Err(format!(
                            "an image is {mime} of {} KB; accepted are PNG, JPEG, GIF or WebP up to {} KB",
                            size / 1024,
                            ToolImage::MAX_DATA / 4 * 3 / 1024
                        ));
                    }
                    kept.push(ToolImage { mime_type: mime.to_owned(), data: data.to_owned() });
                }
                Some("audio") => {
                    let mime = part.get("mimeType").and_then(Value::as_str).unwrap_or("audio");
                    texts.push(format!("[audio: {} — not sent to the model]", cut(mime, 60)));
                }
                Some(other) => {
                    return Err(format!("a message has content of type '{}', which cannot be sent", cut(other, 40)));
                }
                None => return Err("a message has content without a type".into()),
            }
        }
        if total > MAX_SAMPLING_TEXT {
            return Err(format!("the request carries more than {} KB of text", MAX_SAMPLING_TEXT / 1024));
        }
        out.push(SamplingMessage { role, text: texts.join("\n"), images: kept });
    }
    Ok(out)
}

/// A sampling request's model preferences in words (hints and priorities), for the card.
pub fn preferences(params: &Value) -> Option<String> {
    let p = params.get("modelPreferences")?;
    let mut parts = Vec::new();
    if let Some(hints) = p.get("hints").and_then(Value::as_array) {
        let names: Vec<String> =
            hints.iter().take(5).filter_map(|h| h.get("name").and_then(Value::as_str)).map(|n| cut(n, 60)).collect();
        if !names.is_empty() {
            parts.push(format!("models like {}", names.join(", ")));
        }
    }
    for (key, word) in [("costPriority", "cost"), ("speedPriority", "speed"), ("intelligencePriority", "intelligence")]
    {
        if let Some(n) = p.get(key).and_then(Value::as_f64) {
            parts.push(format!("{word} {n:.1}"));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A token bucket: `burst` requests at once, then one per `every`.
#[derive(Debug)]
pub struct Bucket {
    tokens: f64,
    burst: f64,
    every: Duration,
    last: Instant,
}

impl Bucket {
    /// A full bucket.
    pub fn new(burst: u32, every: Duration) -> Bucket {
        Bucket { tokens: f64::from(burst), burst: f64::from(burst), every, last: Instant::now() }
    }

    /// Takes one token if there is one.
    pub fn take(&mut self) -> bool {
        let now = Instant::now();
        let earned = now.duration_since(self.last).as_secs_f64() / self.every.as_secs_f64().max(1e-6);
        self.tokens = (self.tokens + earned).min(self.burst);
        self.last = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_specs_types_make_a_form_with_defaults_and_others_are_refused_by_name() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Name", "default": "John Doe", "maxLength": 20},
            "age": {"type": "integer", "default": 30, "minimum": 0},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"], "maxItems": 2},
            "ok": {"type": "boolean", "default": true}
        }, "required": ["name"]});
        let order: Vec<String> = ["score", "name"].map(String::from).to_vec();
        let form = form(&schema, Some(&order)).unwrap();
        assert_eq!(form.fields[0].name, "score", "the wire order first");
        assert_eq!(form.fields.len(), 7);
        let done = form.complete(&serde_json::Map::new()).unwrap();
        assert_eq!(done["name"], "John Doe");
        assert_eq!(done["age"], 30);
        assert_eq!(done["score"], 95.5);
        assert_eq!(done["status"], "active");
        assert_eq!(done["tags"], json!(["a"]));
        assert_eq!(done["ok"], true);
        let size = form.fields.iter().find(|f| f.name == "size").unwrap();
        assert!(matches!(&size.kind, FieldKind::Choice { choices, .. } if choices[1].title == "Large"));

        let nested = json!({"type": "object", "properties": {"address": {"type": "object", "properties": {}}}});
        assert!(super::form(&nested, None).unwrap_err().contains("'address' is a nested object"));
        let list = json!({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "number"}}}});
        assert!(super::form(&list, None).unwrap_err().contains("'xs' is a list"));
        let many: serde_json::Map<String, Value> =
            (0..60).map(|i| (format!("f{i}"), json!({"type": "boolean"}))).collect();
        assert!(super::form(&json!({"type": "object", "properties": many}), None).unwrap_err().contains("60 fields"));
    }

    #[test]
    fn only_https_pages_and_this_computers_are_opened() {
        assert_eq!(url_refusal("https://example.com/auth?x=1"), None);
        assert_eq!(url_refusal("http://localhost:8080/cb"), None);
        assert!(url_refusal("http://example.com/").unwrap().contains("not https"));
        assert!(url_refusal("file:///etc/passwd").unwrap().contains("not https"));
        assert!(url_refusal("javascript:alert(1)").unwrap().contains("not https"));
        assert!(url_refusal("https://a.example/\nx").is_some());
    }

    #[test]
    fn sampling_messages_are_bounded_and_images_named() {
        let params = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Hi"}},
            {"role": "user", "content": [{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}]}
        ], "maxTokens": 10, "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5}});
        let m = sampling_messages(&params).unwrap();
        assert_eq!(m[0].text, "Hi");
        assert!(m[1].text.starts_with("[image: image/png"));
        assert_eq!(m[1].images.len(), 1);
        assert_eq!(preferences(&params).unwrap(), "models like claude; speed 0.5");
        let big = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "x".repeat(600_000)}}]});
        assert!(sampling_messages(&big).unwrap_err().contains("KB of text"));
        let many: Vec<Value> =
            (0..101).map(|_| json!({"role": "user", "content": {"type": "text", "text": "x"}})).collect();
        assert!(sampling_messages(&json!({"messages": many})).unwrap_err().contains("101 messages"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_bucket_lets_a_burst_through_then_one_a_second() {
        let mut b = Bucket::new(3, Duration::from_secs(1));
        assert!((0..3).all(|_| b.take()));
        assert!(!b.take());
        tokio::time::advance(Duration::from_millis(1100)).await;
        assert!(b.take());
        assert!(!b.take());
    }
}
