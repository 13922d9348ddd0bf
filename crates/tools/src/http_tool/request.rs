//! Turning a call's arguments into the request: each placeholder encoded for where it sits, the
//! URL's origin checked against the definition's, and the preview the person approves.

use super::config::{Compiled, lone_param};
use crate::template::{Piece, Template, value_text};
use reqwest::header::HeaderName;
use serde_json::{Map, Value};
use switchboard_core::ToolError;
use url::Url;

/// A request ready to send.
#[derive(Clone, Debug)]
pub(crate) struct Built {
    pub(crate) method: reqwest::Method,
    pub(crate) url: Url,
    /// Name as shown, parsed name, value, and whether a secret is in it.
    pub(crate) headers: Vec<(String, HeaderName, String, bool)>,
    /// The JSON body, serialized.
    pub(crate) body: Option<String>,
}

impl Built {
    /// The request as text: the request line, one header a line, a blank line and the body.
    /// Secret values are in it; the caller masks them.
    pub(crate) fn text(&self) -> String {
        let mut out = format!("{} {}", self.method, self.url);
        for (name, _, value, _) in &self.headers {
            out.push_str(&format!("\n{name}: {value}"));
        }
        if let Some(body) = &self.body {
            out.push_str("\n\n");
            out.push_str(body);
        }
        out
    }
}

/// `s` percent-encoded so that it is one URL path segment or one query name or value: every
/// byte but the unreserved characters (`A-Z a-z 0-9 - . _ ~`) becomes `%XX`. So `/`, `?`, `#`,
/// `&`, `=`, `+`, `%`, spaces and non-ASCII characters can never change the URL's structure.
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The argument `name`, or `None` when it is missing or `null`.
fn arg<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    args.get(name).filter(|v| !v.is_null())
}

/// Builds the request for `args`. `secret` gives the value of each `{{secret:NAME}}` (the real
/// one for a call, a stand-in for a preview).
pub(crate) fn build(
    tool: &str,
    c: &Compiled,
    args: &Value,
    secret: &dyn Fn(&str) -> String,
) -> Result<Built, ToolError> {
    let empty = Map::new();
    let args = match args {
        Value::Object(map) => map,
        Value::Null => &empty,
        other => {
            return Err(ToolError::InvalidArguments(format!("the arguments must be a JSON object, not {other}")));
        }
    };

    // The path, segment by segment: a placeholder can never add a segment or a dot-segment.
    let mut segments = Vec::with_capacity(c.path.len());
    for t in &c.path {
        let rendered = t.render(
            |p| match arg(args, p) {
                Some(v) => Ok(encode_component(&value_text(v))),
                None => {
                    Err(ToolError::InvalidArguments(format!("'{p}' is required: it is part of the URL path of {tool}")))
                }
            },
            |_| Err(ToolError::Failed(format!("{tool} has a key in its URL path"))),
        )?;
        if let Some(p) = t.params().first() {
            if rendered == "." || rendered == ".." {
                return Err(ToolError::InvalidArguments(format!(
                    "'{p}' cannot be '{rendered}': it is a URL path segment, where . and .. would move to another path"
                )));
            }
            if rendered.is_empty() {
                return Err(ToolError::InvalidArguments(format!(
                    "'{p}' cannot be empty: it is a URL path segment of {tool}"
                )));
            }
        }
        segments.push(rendered);
    }

    // The query string: the URL's entries, then the configured ones.
    let mut query = Vec::new();
    for entry in &c.query {
        if let Some(p) = &entry.lone
            && arg(args, p).is_none()
        {
            continue;
        }
        let render = |t: &Template| -> String {
            let out: Result<String, std::convert::Infallible> = t.render(
                |p| Ok(arg(args, p).map(|v| encode_component(&value_text(v))).unwrap_or_default()),
                |s| Ok(encode_component(&secret(s))),
            );
            out.unwrap_or_default()
        };
        let key = render(&entry.key);
        match &entry.value {
            Some(v) => query.push(format!("{key}={}", render(v))),
            None => query.push(key),
        }
    }

    let mut text = format!("{}{}", c.base, segments.join("/"));
    if !query.is_empty() {
        text.push('?');
        text.push_str(&query.join("&"));
    }
    let url = Url::parse(&text)
        .map_err(|e| ToolError::Failed(format!("{tool} could not build a valid URL from the arguments ({e})")))?;
    if url.origin() != c.origin {
        return Err(ToolError::Failed(format!(
            "{tool} refused to send the request: the arguments changed its address to {}, but the tool may only call {}",
            url.origin().ascii_serialization(),
            c.origin.ascii_serialization()
        )));
    }

    // Headers: written ones first, then the defaults the person did not set.
    let mut headers = Vec::new();
    for (shown, name, t) in &c.headers {
        if let Some(p) = lone_param(t)
            && arg(args, &p).is_none()
        {
            continue;
        }
        let value: Result<String, std::convert::Infallible> =
            t.render(|p| Ok(arg(args, p).map(value_text).unwrap_or_default()), |s| Ok(secret(s)));
        let value = value.unwrap_or_default();
        if value.contains(['\r', '\n', '\0']) {
            let from = t.params().first().map(|p| format!("'{p}'")).unwrap_or_else(|| "a key".into());
            return Err(ToolError::InvalidArguments(format!(
                "{from} would put a line break or NUL into the header '{shown}', which is refused"
            )));
        }
        let has_secret = t.pieces().iter().any(|p| matches!(p, Piece::Secret(_)));
        headers.push((shown.clone(), name.clone(), value, has_secret));
    }
    let has = |h: &HeaderName| c.headers.iter().any(|(_, n, _)| n == h);
    if !has(&reqwest::header::ACCEPT) {
        headers.push((
            "Accept".into(),
            reqwest::header::ACCEPT,
            "application/json, text/plain;q=0.9, */*;q=0.1".into(),
            false,
        ));
    }
    let body = match &c.body {
        Some(template) => {
            if !has(&reqwest::header::CONTENT_TYPE) {
                headers.push(("Content-Type".into(), reqwest::header::CONTENT_TYPE, "application/json".into(), false));
            }
            let value = render_body(template, args).unwrap_or(Value::Null);
            Some(serde_json::to_string(&value).unwrap_or_default())
        }
        None => None,
    };
    Ok(Built { method: c.method.clone(), url, headers, body })
}

/// The body for `args`: a string that is exactly one `{{param}}` becomes the argument as it is
/// (a number stays a number); other strings are rendered as text; `None` when the whole value
/// is an absent parameter (its object key, then, is left out; in an array it becomes `null`).
pub(crate) fn render_body(template: &Value, args: &Map<String, Value>) -> Option<Value> {
    match template {
        Value::String(s) => {
            let Ok(t) = Template::parse(s) else { return Some(template.clone()) };
            if let Some(p) = lone_param(&t) {
                return args.get(&p).cloned();
            }
            let text: Result<String, std::convert::Infallible> =
                t.render(|p| Ok(args.get(p).map(value_text).unwrap_or_default()), |_| Ok(String::new()));
            Some(Value::String(text.unwrap_or_default()))
        }
        Value::Array(items) => {
            Some(Value::Array(items.iter().map(|v| render_body(v, args).unwrap_or(Value::Null)).collect()))
        }
        Value::Object(map) => {
            Some(Value::Object(map.iter().filter_map(|(k, v)| render_body(v, args).map(|v| (k.clone(), v))).collect()))
        }
        other => Some(other.clone()),
    }
}

/// Replaces secret values in text with `[secret NAME]`: as sent, percent-encoded, and as a JSON
/// string would escape them, so an API that echoes a key back cannot show it to the model.
#[derive(Clone, Debug, Default)]
pub(crate) struct Masker {
    /// (text to find, replacement), longest first.
    needles: Vec<(String, String)>,
}

impl Masker {
    /// Masks `value` as the secret `name`.
    pub(crate) fn add(&mut self, name: &str, value: &str) {
        if value.is_empty() {
            return;
        }
        let mask = format!("[secret {name}]");
        let json = serde_json::to_string(value).unwrap_or_default();
        let json = json.trim_matches('"').to_owned();
        for needle in [value.to_owned(), encode_component(value), json] {
            if !needle.is_empty() && !self.needles.iter().any(|(n, _)| *n == needle) {
                self.needles.push((needle, mask.clone()));
            }
        }
        self.needles.sort_by_key(|n| std::cmp::Reverse(n.0.len()));
    }

    /// `text` with every known value masked.
    pub(crate) fn mask(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (needle, mask) in &self.needles {
            if out.contains(needle.as_str()) {
                out = out.replace(needle.as_str(), mask);
            }
        }
        out
    }

    /// `e` with every known value masked in its message.
    pub(crate) fn mask_error(&self, e: ToolError) -> ToolError {
        match e {
            ToolError::InvalidArguments(m) => ToolError::InvalidArguments(self.mask(&m)),
            ToolError::MissingSecret(m) => ToolError::MissingSecret(self.mask(&m)),
            ToolError::Failed(m) => ToolError::Failed(self.mask(&m)),
            ToolError::Cancelled => ToolError::Cancelled,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http_tool::HttpToolConfig;
    use serde_json::json;

    fn compiled(c: &HttpToolConfig) -> Compiled {
        c.compile().unwrap()
    }

    fn no_secret(_: &str) -> String {
        String::new()
    }

    fn url_for(url: &str, args: Value) -> Result<String, ToolError> {
        let c = HttpToolConfig::new("t", "d", url);
        build("t", &compiled(&c), &args, &no_secret).map(|b| b.url.to_string())
    }

    #[test]
    fn components_keep_only_unreserved_characters() {
        for (raw, want) in [
            ("a b", "a%20b"),
            ("a/b", "a%2Fb"),
            ("a?b", "a%3Fb"),
            ("a#b", "a%23b"),
            ("a&b=c", "a%26b%3Dc"),
            ("1+1", "1%2B1"),
            ("100%", "100%25"),
            ("%2e%2e", "%252e%252e"),
            ("é", "%C3%A9"),
            ("🚀", "%F0%9F%9A%80"),
            ("..", ".."),
            ("A-z_0.9~", "A-z_0.9~"),
            ("\\", "%5C"),
        ] {
            assert_eq!(encode_component(raw), want, "{raw}");
        }
    }

    #[test]
    fn path_and_query_values_are_encoded_for_their_position() {
        let url = "https://api.example.com/users/{{user}}/items?q={{q}}&fixed=1";
        for (value, path, query) in [
            ("a b", "a%20b", "a%20b"),
            ("../admin", "..%2Fadmin", "..%2Fadmin"),
            ("x?y#z", "x%3Fy%23z", "x%3Fy%23z"),
            ("a&b=c+d", "a%26b%3Dc%2Bd", "a%26b%3Dc%2Bd"),
            ("50%", "50%25", "50%25"),
            ("café 🚀", "caf%C3%A9%20%F0%9F%9A%80", "caf%C3%A9%20%F0%9F%9A%80"),
        ] {
            let got = url_for(url, json!({"user": value, "q": value})).unwrap();
            assert_eq!(got, format!("https://api.example.com/users/{path}/items?q={query}&fixed=1"), "{value}");
        }
        // Numbers and booleans as JSON writes them.
        assert_eq!(
            url_for(url, json!({"user": 7, "q": true})).unwrap(),
            "https://api.example.com/users/7/items?q=true&fixed=1"
        );
    }

    #[test]
    fn dot_segments_and_empty_segments_are_refused_in_the_path() {
        for value in [".", ".."] {
            let e = url_for("https://api.example.com/a/{{p}}/b", json!({"p": value})).unwrap_err();
            assert!(matches!(&e, ToolError::InvalidArguments(m) if m.contains("'p' cannot be")), "{e:?}");
        }
        // Two placeholders that together make "..".
        let e = url_for("https://api.example.com/a/{{x}}{{y}}", json!({"x": ".", "y": "."})).unwrap_err();
        assert!(matches!(e, ToolError::InvalidArguments(_)));
        let e = url_for("https://api.example.com/a/{{p}}/b", json!({"p": ""})).unwrap_err();
        assert!(matches!(e, ToolError::InvalidArguments(_)));
        // Dots within a value are ordinary characters; in a query they are fine.
        assert_eq!(
            url_for("https://api.example.com/{{p}}", json!({"p": "...x"})).unwrap(),
            "https://api.example.com/...x"
        );
        assert_eq!(
            url_for("https://api.example.com/?p={{p}}", json!({"p": ".."})).unwrap(),
            "https://api.example.com/?p=.."
        );
    }

    #[test]
    fn absent_optional_parameters() {
        let mut c = HttpToolConfig::new("t", "d", "https://api.example.com/{{id}}?a={{a}}&b=x{{b}}&{{flag}}");
        c.query.insert("lang".into(), "{{lang}}".into());
        c.query.insert("v".into(), "2".into());
        c.headers.insert("X-Trace".into(), "{{trace}}".into());
        c.headers.insert("X-Mixed".into(), "id-{{trace}}".into());
        c.parameters = Some(json!({"type": "object", "properties": {
            "id": {}, "a": {}, "b": {}, "flag": {}, "lang": {}, "trace": {}
        }, "required": ["id"]}));
        let cc = compiled(&c);
        let b = build("t", &cc, &json!({"id": "1", "unused": "ignored"}), &no_secret).unwrap();
        assert_eq!(b.url.as_str(), "https://api.example.com/1?b=x&v=2");
        let names: Vec<&str> = b.headers.iter().map(|h| h.0.as_str()).collect();
        assert_eq!(names, ["X-Mixed", "Accept"]);
        assert_eq!(b.headers[0].2, "id-");
        let b = build("t", &cc, &json!({"id": "1", "a": "A", "lang": "fr", "flag": "on", "trace": "t1"}), &no_secret)
            .unwrap();
        assert_eq!(b.url.as_str(), "https://api.example.com/1?a=A&b=x&on&lang=fr&v=2");
        let e = build("t", &cc, &json!({"a": "A"}), &no_secret).unwrap_err();
        assert_eq!(e, ToolError::InvalidArguments("'id' is required: it is part of the URL path of t".into()));
        let e = build("t", &cc, &json!({"id": null}), &no_secret).unwrap_err();
        assert!(matches!(e, ToolError::InvalidArguments(_)));
    }

    #[test]
    fn body_placeholders_keep_their_json_type() {
        let mut c = HttpToolConfig::new("t", "d", "https://api.example.com/items");
        c.method = "POST".into();
        c.body = Some(json!({
            "title": "{{title}}",
            "count": "{{count}}",
            "tags": "{{tags}}",
            "meta": {"draft": "{{draft}}", "note": "n={{count}}, {{title}}"},
            "list": ["{{count}}", "{{missing}}", 3],
            "gone": "{{missing}}",
            "fixed": true
        }));
        c.parameters = Some(json!({"type": "object", "properties": {
            "title": {}, "count": {}, "tags": {}, "draft": {}, "missing": {}
        }}));
        let args = json!({"title": "Hi \"there\"", "count": 3, "tags": ["a", "b"], "draft": false});
        let b = build("t", &compiled(&c), &args, &no_secret).unwrap();
        let body: Value = serde_json::from_str(b.body.as_deref().unwrap()).unwrap();
        assert_eq!(
            body,
            json!({
                "title": "Hi \"there\"",
                "count": 3,
                "tags": ["a", "b"],
                "meta": {"draft": false, "note": "n=3, Hi \"there\""},
                "list": [3, null, 3],
                "fixed": true
            })
        );
        assert!(b.headers.iter().any(|h| h.0 == "Content-Type" && h.2 == "application/json"));
    }

    #[test]
    fn header_values_with_line_breaks_are_refused() {
        let mut c = HttpToolConfig::new("t", "d", "https://api.example.com/");
        c.headers.insert("X-Name".into(), "n={{name}}".into());
        let cc = compiled(&c);
        for bad in ["a\r\nX-Evil: 1", "a\nb", "a\0b", "a\rb"] {
            let e = build("t", &cc, &json!({"name": bad}), &no_secret).unwrap_err();
            assert!(
                matches!(&e, ToolError::InvalidArguments(m) if m.contains("'name' would put a line break")),
                "{e:?}"
            );
        }
        assert!(build("t", &cc, &json!({"name": "fine: ok"}), &no_secret).is_ok());
    }

    #[test]
    fn the_masker_hides_every_spelling_of_a_secret() {
        let mut m = Masker::default();
        m.add("k", "s3cr3t/\"x y");
        m.add("empty", "");
        let text = "raw s3cr3t/\"x y, encoded s3cr3t%2F%22x%20y, json s3cr3t/\\\"x y";
        assert_eq!(m.mask(text), "raw [secret k], encoded [secret k], json [secret k]");
        assert_eq!(m.mask_error(ToolError::Failed("s3cr3t/\"x y".into())), ToolError::Failed("[secret k]".into()));
    }
}
