//! What a person writes to define an HTTP API tool, and the checks it passes before it becomes a
//! tool.
//!
//! Everything that can be wrong with a definition is found here, once, when the tool is saved
//! (an unknown method, a placeholder in the host, a key in the body, a parameter the schema does
//! not declare), so the model's first call never discovers it.

use crate::template::{self, Piece, Template, TemplateError};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use switchboard_core::ApprovalPolicy;
use url::Url;

/// Seconds a call may take when the definition does not say.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// The longest time limit a definition may set, in seconds.
pub const MAX_TIMEOUT_SECS: u64 = 300;
/// Bytes of response read when the definition does not say (1 MiB).
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 1024 * 1024;
/// The largest response limit a definition may set (32 MiB).
pub const MAX_RESPONSE_BYTES: u64 = 32 * 1024 * 1024;
/// Characters of output returned when the definition does not say.
pub const DEFAULT_MAX_CHARS: usize = 20_000;
/// The methods an HTTP tool may use.
pub const METHODS: [&str; 6] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"];
/// Headers a definition may not set: the client computes them, and `Host` would let a header
/// pick another virtual host than the URL names.
const RESERVED_HEADERS: [&str; 5] = ["host", "content-length", "transfer-encoding", "connection", "upgrade"];

/// An HTTP API tool as the person defined it (Settings → Tools, or the config file).
///
/// Example, in the JSON the settings keep:
///
/// ```json
/// {
///   "name": "weather",
///   "description": "Current weather for a city.",
///   "url": "https://api.weather.example/v1/current/{{city}}?units=metric",
///   "query": { "lang": "{{lang}}" },
///   "headers": { "Authorization": "Bearer {{secret:weather_key}}" },
///   "parameters": {
///     "type": "object",
///     "properties": { "city": { "type": "string" }, "lang": { "type": "string" } },
///     "required": ["city"]
///   },
///   "responsePointer": "/current"
/// }
/// ```
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpToolConfig {
    /// The tool's name as the model sees it (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// `GET` (the default), `POST`, `PUT`, `PATCH`, `DELETE` or `HEAD`; any case is accepted
    /// when read, and kept in upper case.
    #[serde(default = "default_method", deserialize_with = "upper_case")]
    pub method: String,
    /// The URL template: absolute `http(s)`, placeholders only in the path and the query string.
    pub url: String,
    /// Extra query parameters; values are templates (`{{secret:NAME}}` allowed), names literal.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query: BTreeMap<String, String>,
    /// Request headers; values are templates (`{{secret:NAME}}` allowed), names literal.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// A JSON template of the request body (POST, PUT, PATCH, DELETE): a string that is exactly
    /// one `{{param}}` becomes the argument's JSON value, type and all; other strings are
    /// rendered as text; object keys are literal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// JSON Schema of the arguments; every placeholder a required string when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// Time limit of one call, redirects included (default 30, at most 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// The most bytes of response read (default 1 MiB, at most 32 MiB); a larger response fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_response_bytes: Option<u64>,
    /// A JSON pointer (`/data/items`) to the part of a JSON response the model gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_pointer: Option<String>,
    /// The most characters of output (default 20 000); the rest is cut with a note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<usize>,
    /// Whether a call asks first; by default GET and HEAD run, every other method asks (it may
    /// change something).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalPolicy>,
    /// Lets the tool reach loopback, private and link-local addresses (a service on this
    /// computer or the local network). Off by default, as for `web_fetch`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_local_addresses: bool,
    /// What a dry run returns instead of calling the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example_output: Option<String>,
}

fn default_method() -> String {
    "GET".into()
}

fn upper_case<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(String::deserialize(d)?.trim().to_ascii_uppercase())
}

/// Why a definition cannot become a tool. Each message is one sentence naming the tool and the
/// field to fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HttpToolError {
    /// The name is not a provider-safe tool name.
    #[error("The HTTP tool name '{0}' is not valid: use 1 to 64 letters, digits, _ or -, starting with a letter or _.")]
    Name(String),
    /// No description.
    #[error("The HTTP tool '{0}' needs a description, so that the model knows when to use it.")]
    Description(String),
    /// A method other than the six supported.
    #[error("The HTTP tool '{tool}' has method '{method}': use GET, POST, PUT, PATCH, DELETE or HEAD.")]
    Method {
        /// The tool.
        tool: String,
        /// The method as written.
        method: String,
    },
    /// The URL template is not an absolute http(s) URL with a fixed origin.
    #[error("The url of the HTTP tool '{tool}' {reason}.")]
    Url {
        /// The tool.
        tool: String,
        /// What is wrong; completes "The url … ".
        reason: String,
    },
    /// A template that does not parse.
    #[error("The {field} of the HTTP tool '{tool}' {error}.")]
    Template {
        /// The tool.
        tool: String,
        /// Where the template is (`url`, `header 'Authorization'`, `query 'q'`, `body`).
        field: String,
        /// What the parser said.
        error: TemplateError,
    },
    /// A placeholder that the parameter schema does not declare.
    #[error(
        "The {field} of the HTTP tool '{tool}' references {{{{{param}}}}}, which is not a parameter: add it to the parameters' properties."
    )]
    UndefinedParam {
        /// The tool.
        tool: String,
        /// Where the placeholder is.
        field: String,
        /// The placeholder's name.
        param: String,
    },
    /// A key where it could leak (the URL path, the body).
    #[error(
        "The {field} of the HTTP tool '{tool}' uses {{{{secret:{secret}}}}}, but keys may only go in headers and query values."
    )]
    SecretNotAllowed {
        /// The tool.
        tool: String,
        /// Where it is.
        field: String,
        /// The secret's name.
        secret: String,
    },
    /// A header name that is not one, or one the client sets itself.
    #[error("The HTTP tool '{tool}' has a header '{header}' that {reason}.")]
    Header {
        /// The tool.
        tool: String,
        /// The header name as written.
        header: String,
        /// What is wrong; completes "a header '…' that … ".
        reason: String,
    },
    /// A query parameter name that is empty or holds a placeholder.
    #[error("The HTTP tool '{tool}' has a query parameter name '{key}' that {reason}.")]
    QueryName {
        /// The tool.
        tool: String,
        /// The name as written.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A body on a method that takes none.
    #[error(
        "The HTTP tool '{tool}' has a body, but {method} requests send none: use POST, PUT, PATCH or DELETE, or remove the body."
    )]
    Body {
        /// The tool.
        tool: String,
        /// The method.
        method: String,
    },
    /// The parameter schema is not an object schema.
    #[error("The parameters of the HTTP tool '{tool}' {reason}.")]
    Parameters {
        /// The tool.
        tool: String,
        /// What is wrong.
        reason: String,
    },
    /// A limit out of its range.
    #[error("The {field} of the HTTP tool '{tool}' must be from {min} to {max}, not {value}.")]
    Limit {
        /// The tool.
        tool: String,
        /// `timeoutSecs`, `maxResponseBytes` or `maxChars`.
        field: &'static str,
        /// The smallest allowed.
        min: u64,
        /// The largest allowed.
        max: u64,
        /// What was written.
        value: u64,
    },
    /// A response pointer that is not a JSON pointer.
    #[error(
        "The responsePointer of the HTTP tool '{tool}' is '{pointer}', which is not a JSON pointer: start it with / (as in /data/items)."
    )]
    Pointer {
        /// The tool.
        tool: String,
        /// The pointer as written.
        pointer: String,
    },
}

/// Whether `name` is a provider-safe tool name: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
pub fn is_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.len() <= 64
}

/// One `&`-separated entry of a query string (in the URL or from [`HttpToolConfig::query`]).
#[derive(Clone, Debug)]
pub(crate) struct QueryEntry {
    /// The name (a template in the URL's query string, literal in `query`).
    pub(crate) key: Template,
    /// The value after `=`, or `None` for an entry without one.
    pub(crate) value: Option<Template>,
    /// The parameter whose absence leaves the entry out: set when the value (or the entry
    /// without `=`) is exactly one `{{param}}`.
    pub(crate) lone: Option<String>,
}

/// A definition, checked and parsed: what a call renders.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    /// `scheme://authority`, literal.
    pub(crate) base: String,
    /// The path's `/`-separated segments (the first is empty for a path starting with `/`).
    pub(crate) path: Vec<Template>,
    /// The URL's query entries, then those of `query`.
    pub(crate) query: Vec<QueryEntry>,
    /// Header names (as written, and parsed) and value templates.
    pub(crate) headers: Vec<(String, reqwest::header::HeaderName, Template)>,
    /// The body template.
    pub(crate) body: Option<Value>,
    /// The method.
    pub(crate) method: reqwest::Method,
    /// The configured origin, `scheme://host[:port]`.
    pub(crate) origin: url::Origin,
    /// The parameter schema (written or generated).
    pub(crate) parameters: Value,
}

impl HttpToolConfig {
    /// A definition with defaults for everything but the name, description and URL.
    pub fn new(name: impl Into<String>, description: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            method: default_method(),
            url: url.into(),
            query: BTreeMap::new(),
            headers: BTreeMap::new(),
            body: None,
            parameters: None,
            timeout_secs: None,
            max_response_bytes: None,
            response_pointer: None,
            max_chars: None,
            approval: None,
            allow_local_addresses: false,
            example_output: None,
        }
    }

    /// Checks the definition; the first problem found, as the editor shows it.
    pub fn check(&self) -> Result<(), HttpToolError> {
        self.compile().map(|_| ())
    }

    /// The method, upper case.
    pub fn method_upper(&self) -> String {
        self.method.trim().to_ascii_uppercase()
    }

    /// The approval policy a call gets: the one written, else `Auto` for GET and HEAD and `Ask`
    /// for every other method (those usually change something).
    pub fn effective_approval(&self) -> ApprovalPolicy {
        self.approval.unwrap_or(match self.method_upper().as_str() {
            "GET" | "HEAD" => ApprovalPolicy::Auto,
            _ => ApprovalPolicy::Ask,
        })
    }

    /// The time limit of one call, in seconds.
    pub fn effective_timeout_secs(&self) -> u64 {
        self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS)
    }

    /// The response size limit, in bytes.
    pub fn effective_max_response_bytes(&self) -> u64 {
        self.max_response_bytes.unwrap_or(DEFAULT_MAX_RESPONSE_BYTES)
    }

    /// The output limit, in characters.
    pub fn effective_max_chars(&self) -> usize {
        self.max_chars.unwrap_or(DEFAULT_MAX_CHARS)
    }

    /// The names of the secrets the tool uses (headers, query values), each once, in order of
    /// first use.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |t: &str| {
            if let Ok(t) = Template::parse(t) {
                for s in t.secrets() {
                    if !out.iter().any(|o| o == s) {
                        out.push(s.to_owned());
                    }
                }
            }
        };
        add(&self.url);
        self.query.values().for_each(|v| add(v));
        self.headers.values().for_each(|v| add(v));
        out
    }

    /// The origin every call goes to, `scheme://host[:port]` (the port only when it is not the
    /// scheme's default), as in `https://api.example.com`.
    pub fn origin(&self) -> Result<String, HttpToolError> {
        let (_, _, origin) = self.split_url()?;
        Ok(origin.ascii_serialization())
    }

    fn url_error(&self, reason: impl Into<String>) -> HttpToolError {
        HttpToolError::Url { tool: self.name.clone(), reason: reason.into() }
    }

    fn template(&self, field: &str, text: &str) -> Result<Template, HttpToolError> {
        Template::parse(text).map_err(|error| HttpToolError::Template {
            tool: self.name.clone(),
            field: field.to_owned(),
            error,
        })
    }

    /// Splits the URL template into its literal `scheme://authority`, the rest (path and query
    /// string), and the origin.
    fn split_url(&self) -> Result<(String, String, url::Origin), HttpToolError> {
        let raw = self.url.trim();
        self.template("url", raw)?;
        if raw.starts_with("//") || raw.starts_with("\\") {
            return Err(self.url_error(
                "starts with //, which leaves the scheme open: write the full address, as in https://api.example.com/…",
            ));
        }
        let Some((scheme, after)) = raw.split_once("://") else {
            return Err(self.url_error("is not an absolute URL: start it with https:// or http://"));
        };
        if scheme.contains("{{") {
            return Err(self.url_error(
                "has a placeholder in its scheme: placeholders may only be in the path and the query string",
            ));
        }
        if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
            return Err(self.url_error(format!("uses the scheme '{scheme}': only http and https are supported")));
        }
        let end = after.find(['/', '?', '#', '\\']).unwrap_or(after.len());
        let authority = &after[..end];
        if authority.contains("{{") {
            let part = if authority.contains('@') && authority.find("{{") < authority.rfind('@') {
                "its user name or password"
            } else {
                "its host or port"
            };
            return Err(self.url_error(format!(
                "has a placeholder in {part}: placeholders may only be in the path and the query string, so that an argument can never change where the request goes"
            )));
        }
        if authority.contains('@') {
            return Err(self.url_error(
                "holds a user name or password: send credentials in a header with {{secret:NAME}} instead",
            ));
        }
        if authority.is_empty() {
            return Err(self.url_error("has no host"));
        }
        let rest = &after[end..];
        if rest.contains('#') {
            return Err(self.url_error("has a #fragment, which is never sent to the server: remove it"));
        }
        if rest.starts_with('\\') {
            return Err(self.url_error("has a backslash after the host: separate the path with /"));
        }
        let base = format!("{}://{}", scheme.to_ascii_lowercase(), authority);
        let parsed =
            Url::parse(&format!("{base}/")).map_err(|e| self.url_error(format!("is not a valid URL ({e})")))?;
        if parsed.host().is_none() {
            return Err(self.url_error("has no host"));
        }
        Ok((base, rest.to_owned(), parsed.origin()))
    }

    /// Checks everything and parses the templates.
    pub(crate) fn compile(&self) -> Result<Compiled, HttpToolError> {
        let tool = || self.name.clone();
        if !is_tool_name(&self.name) {
            return Err(HttpToolError::Name(self.name.clone()));
        }
        if self.description.trim().is_empty() {
            return Err(HttpToolError::Description(tool()));
        }
        let method_name = self.method_upper();
        if !METHODS.contains(&method_name.as_str()) {
            return Err(HttpToolError::Method { tool: tool(), method: self.method.clone() });
        }
        let method = reqwest::Method::from_bytes(method_name.as_bytes())
            .map_err(|_| HttpToolError::Method { tool: tool(), method: self.method.clone() })?;

        // The URL: a literal origin, a templated path and query string.
        let (base, rest, origin) = self.split_url()?;
        let (path_text, query_text) = match rest.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (rest.as_str(), None),
        };
        let mut path = Vec::new();
        for segment in path_text.split('/') {
            let t = self.template("url path", segment)?;
            if let Some(secret) = t.secrets().first() {
                return Err(HttpToolError::SecretNotAllowed {
                    tool: tool(),
                    field: "url path".into(),
                    secret: (*secret).to_owned(),
                });
            }
            path.push(t);
        }
        let mut query = Vec::new();
        for entry in query_text.into_iter().flat_map(|q| q.split('&')).filter(|e| !e.is_empty()) {
            let (key, value) = match entry.split_once('=') {
                Some((k, v)) => (self.template("url query", k)?, Some(self.template("url query", v)?)),
                None => (self.template("url query", entry)?, None),
            };
            let lone = match &value {
                Some(v) => lone_param(v),
                None => lone_param(&key),
            };
            query.push(QueryEntry { key, value, lone });
        }
        for (key, value) in &self.query {
            let field = format!("query '{key}'");
            if key.trim().is_empty() {
                return Err(HttpToolError::QueryName { tool: tool(), key: key.clone(), reason: "is empty".into() });
            }
            if key.contains("{{") {
                return Err(HttpToolError::QueryName {
                    tool: tool(),
                    key: key.clone(),
                    reason: "holds a placeholder: names are literal, only values are templates".into(),
                });
            }
            let value = self.template(&field, value)?;
            let lone = lone_param(&value);
            query.push(QueryEntry { key: Template::parse(key).unwrap_or_default(), value: Some(value), lone });
        }

        let mut headers = Vec::new();
        for (name, value) in &self.headers {
            let header_error =
                |reason: &str| HttpToolError::Header { tool: tool(), header: name.clone(), reason: reason.to_owned() };
            if name.contains("{{") {
                return Err(header_error("holds a placeholder: header names are literal, only values are templates"));
            }
            let parsed = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|_| header_error("is not a valid header name"))?;
            if RESERVED_HEADERS.contains(&parsed.as_str()) {
                return Err(header_error("the HTTP client sets itself: remove it"));
            }
            if value.contains(['\r', '\n', '\0']) {
                return Err(header_error("has a line break or NUL in its value"));
            }
            headers.push((name.trim().to_owned(), parsed, self.template(&format!("header '{name}'"), value)?));
        }

        if let Some(body) = &self.body {
            if matches!(method_name.as_str(), "GET" | "HEAD") {
                return Err(HttpToolError::Body { tool: tool(), method: method_name });
            }
            self.check_body(body)?;
        }

        // Every placeholder must be a declared parameter.
        let mut used: Vec<(String, String)> = Vec::new(); // (param, field)
        let mut note = |t: &Template, field: &str| {
            for p in t.params() {
                if !used.iter().any(|(u, _)| u == p) {
                    used.push((p.to_owned(), field.to_owned()));
                }
            }
        };
        path.iter().for_each(|t| note(t, "url"));
        for entry in &query[..query.len() - self.query.len()] {
            note(&entry.key, "url");
            if let Some(v) = &entry.value {
                note(v, "url");
            }
        }
        for (key, entry) in self.query.keys().zip(&query[query.len() - self.query.len()..]) {
            if let Some(v) = &entry.value {
                note(v, &format!("query '{key}'"));
            }
        }
        for (name, _, t) in &headers {
            note(t, &format!("header '{name}'"));
        }
        if let Some(body) = &self.body {
            body_templates(body, &mut |t| note(t, "body"));
        }
        let parameters = match &self.parameters {
            None => {
                let names: Vec<&str> = used.iter().map(|(p, _)| p.as_str()).collect();
                template::schema_for(&names)
            }
            Some(schema) => {
                let Some(object) = schema.as_object() else {
                    return Err(HttpToolError::Parameters {
                        tool: tool(),
                        reason: "must be a JSON Schema object, as in {\"type\": \"object\", \"properties\": {…}}"
                            .into(),
                    });
                };
                if let Some(ty) = object.get("type")
                    && ty != "object"
                {
                    return Err(HttpToolError::Parameters {
                        tool: tool(),
                        reason: format!("must describe an object (\"type\": \"object\"), not {ty}"),
                    });
                }
                let properties = object.get("properties").and_then(Value::as_object);
                for (param, field) in &used {
                    if !properties.is_some_and(|p| p.contains_key(param)) {
                        return Err(HttpToolError::UndefinedParam {
                            tool: tool(),
                            field: field.clone(),
                            param: param.clone(),
                        });
                    }
                }
                schema.clone()
            }
        };

        for (field, value, min, max) in [
            ("timeoutSecs", self.timeout_secs, 1, MAX_TIMEOUT_SECS),
            ("maxResponseBytes", self.max_response_bytes, 1, MAX_RESPONSE_BYTES),
            ("maxChars", self.max_chars.map(|n| n as u64), 1, 10_000_000),
        ] {
            if let Some(value) = value
                && !(min..=max).contains(&value)
            {
                return Err(HttpToolError::Limit { tool: tool(), field, min, max, value });
            }
        }
        if let Some(pointer) = &self.response_pointer
            && !pointer.is_empty()
            && !pointer.starts_with('/')
        {
            return Err(HttpToolError::Pointer { tool: tool(), pointer: pointer.clone() });
        }

        Ok(Compiled { base, path, query, headers, body: self.body.clone(), method, origin, parameters })
    }

    fn check_body(&self, body: &Value) -> Result<(), HttpToolError> {
        match body {
            Value::String(s) => {
                let t = self.template("body", s)?;
                if let Some(secret) = t.secrets().first() {
                    return Err(HttpToolError::SecretNotAllowed {
                        tool: self.name.clone(),
                        field: "body".into(),
                        secret: (*secret).to_owned(),
                    });
                }
                Ok(())
            }
            Value::Array(items) => items.iter().try_for_each(|v| self.check_body(v)),
            Value::Object(map) => map.values().try_for_each(|v| self.check_body(v)),
            _ => Ok(()),
        }
    }
}

/// The parameter a template is made of, when it is exactly one `{{param}}`.
pub(crate) fn lone_param(t: &Template) -> Option<String> {
    match t.pieces() {
        [Piece::Param(p)] => Some(p.clone()),
        _ => None,
    }
}

/// Calls `f` with every string template in a body (strings that do not parse are skipped:
/// [`HttpToolConfig::check_body`] has refused them already).
fn body_templates(body: &Value, f: &mut dyn FnMut(&Template)) {
    match body {
        Value::String(s) => {
            if let Ok(t) = Template::parse(s) {
                f(&t);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| body_templates(v, f)),
        Value::Object(map) => map.values().for_each(|v| body_templates(v, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cfg(url: &str) -> HttpToolConfig {
        HttpToolConfig::new("t", "A test tool.", url)
    }

    fn url_error(url: &str) -> String {
        match cfg(url).check() {
            Err(e @ HttpToolError::Url { .. }) => e.to_string(),
            other => panic!("{url}: {other:?}"),
        }
    }

    #[test]
    fn placeholders_outside_the_path_and_query_are_refused() {
        for (url, part) in [
            ("https://{{host}}/x", "its host or port"),
            ("https://api.example.com:{{port}}/x", "its host or port"),
            ("https://{{sub}}.example.com/x", "its host or port"),
            ("https://api.example.com{{path}}", "its host or port"),
            ("https://{{user}}@api.example.com/x", "its user name or password"),
            ("https://{{secret:k}}@api.example.com/x", "its user name or password"),
        ] {
            let m = url_error(url);
            assert!(
                m.contains(part) && m.contains("placeholders may only be in the path and the query string"),
                "{url}: {m}"
            );
        }
        assert!(url_error("{{scheme}}://api.example.com/").contains("placeholder in its scheme"));
        assert!(url_error("https://user:pw@api.example.com/").contains("user name or password"));
    }

    #[test]
    fn urls_without_a_fixed_scheme_and_host_are_refused() {
        for (url, want) in [
            ("//evil.host/{{p}}", "starts with //"),
            ("  //evil.host/x", "starts with //"),
            ("\\\\evil.host/x", "starts with //"),
            ("api.example.com/{{p}}", "not an absolute URL"),
            ("/v1/{{p}}", "not an absolute URL"),
            ("ftp://example.com/{{p}}", "scheme 'ftp'"),
            ("https:///x", "has no host"),
            ("https://api.example.com/x#{{p}}", "#fragment"),
            ("https://api.example.com\\{{p}}", "backslash"),
            ("https://api.example.com:99999/", "not a valid URL"),
        ] {
            let m = url_error(url);
            assert!(m.contains(want), "{url}: {m}");
            assert!(m.starts_with("The url of the HTTP tool 't' "), "{m}");
        }
    }

    #[test]
    fn the_origin_is_the_literal_scheme_host_and_port() {
        assert_eq!(cfg("https://API.example.com/v1/{{x}}?a={{y}}").origin().unwrap(), "https://api.example.com");
        assert_eq!(cfg("http://example.com:8080/{{x}}").origin().unwrap(), "http://example.com:8080");
        assert_eq!(cfg("HTTPS://example.com:443").origin().unwrap(), "https://example.com");
    }

    #[test]
    fn every_placeholder_must_be_a_parameter() {
        let mut c = cfg("https://api.example.com/weather/{{city}}");
        c.parameters = Some(json!({"type": "object", "properties": {"town": {"type": "string"}}}));
        let e = c.check().unwrap_err();
        assert!(matches!(&e, HttpToolError::UndefinedParam { param, .. } if param == "city"));
        assert_eq!(
            e.to_string(),
            "The url of the HTTP tool 't' references {{city}}, which is not a parameter: add it to the parameters' properties."
        );
        c.parameters = Some(json!({"type": "object", "properties": {"city": {"type": "string"}}}));
        c.headers.insert("X-Units".into(), "{{units}}".into());
        let m = c.check().unwrap_err().to_string();
        assert!(m.starts_with("The header 'X-Units' of the HTTP tool 't' references {{units}}"), "{m}");
        c.headers.clear();
        c.method = "POST".into();
        c.body = Some(json!({"a": ["{{deep}}"]}));
        assert!(matches!(c.check(), Err(HttpToolError::UndefinedParam { param, .. }) if param == "deep"));
        c.parameters = Some(json!([1]));
        assert!(matches!(c.check(), Err(HttpToolError::Parameters { .. })));
    }

    #[test]
    fn keys_are_refused_in_the_path_and_the_body() {
        let e = cfg("https://api.example.com/{{secret:token}}/x").check().unwrap_err();
        assert_eq!(
            e.to_string(),
            "The url path of the HTTP tool 't' uses {{secret:token}}, but keys may only go in headers and query values."
        );
        let mut c = cfg("https://api.example.com/x");
        c.method = "post".into();
        c.body = Some(json!({"auth": "Bearer {{secret:token}}"}));
        assert!(matches!(c.check(), Err(HttpToolError::SecretNotAllowed { field, .. }) if field == "body"));
        // Headers, query values and the URL's query string may carry one.
        let mut c = cfg("https://api.example.com/x?key={{secret:a}}");
        c.headers.insert("Authorization".into(), "Bearer {{secret:b}}".into());
        c.query.insert("sig".into(), "{{secret:c}}".into());
        c.check().unwrap();
        assert_eq!(c.secrets(), ["a", "c", "b"]);
    }

    #[test]
    fn the_generated_schema_has_every_placeholder_required_in_order_of_use() {
        let mut c = cfg("https://api.example.com/{{owner}}/{{repo}}?page={{page}}");
        c.query.insert("q".into(), "{{query}} in:title".into());
        c.headers.insert("X-Owner".into(), "{{owner}}".into());
        let compiled = c.compile().unwrap();
        assert_eq!(
            compiled.parameters,
            json!({
                "type": "object",
                "properties": {
                    "owner": {"type": "string"}, "repo": {"type": "string"},
                    "page": {"type": "string"}, "query": {"type": "string"}
                },
                "required": ["owner", "repo", "page", "query"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn methods_bodies_headers_and_limits_are_checked() {
        let mut c = cfg("https://api.example.com/x");
        c.method = "TRACE".into();
        assert!(matches!(c.check(), Err(HttpToolError::Method { .. })));
        c.method = "GET".into();
        c.body = Some(json!({"a": 1}));
        assert_eq!(
            c.check().unwrap_err().to_string(),
            "The HTTP tool 't' has a body, but GET requests send none: use POST, PUT, PATCH or DELETE, or remove the body."
        );
        c.body = None;
        for bad in ["Host", "Content-Length", "bad header", "X-{{p}}"] {
            let mut h = c.clone();
            h.headers.insert(bad.into(), "v".into());
            assert!(matches!(h.check(), Err(HttpToolError::Header { .. })), "{bad}");
        }
        let mut h = c.clone();
        h.headers.insert("X-A".into(), "a\r\nX-Injected: 1".into());
        assert!(matches!(h.check(), Err(HttpToolError::Header { .. })));
        let mut h = c.clone();
        h.query.insert("{{k}}".into(), "v".into());
        assert!(matches!(h.check(), Err(HttpToolError::QueryName { .. })));
        let mut l = c.clone();
        l.timeout_secs = Some(301);
        assert_eq!(
            l.check().unwrap_err().to_string(),
            "The timeoutSecs of the HTTP tool 't' must be from 1 to 300, not 301."
        );
        let mut l = c.clone();
        l.max_response_bytes = Some(MAX_RESPONSE_BYTES + 1);
        assert!(matches!(l.check(), Err(HttpToolError::Limit { field: "maxResponseBytes", .. })));
        let mut p = c.clone();
        p.response_pointer = Some("data".into());
        assert!(matches!(p.check(), Err(HttpToolError::Pointer { .. })));
        for bad in ["", "1tool", "has space", "é", &"x".repeat(65)] {
            let mut n = c.clone();
            n.name = bad.into();
            assert!(matches!(n.check(), Err(HttpToolError::Name(_))), "{bad}");
        }
        assert!(is_tool_name("get-weather_2") && is_tool_name("_x") && is_tool_name(&"x".repeat(64)));
        let mut d = c.clone();
        d.description = " ".into();
        assert!(matches!(d.check(), Err(HttpToolError::Description(_))));
        let m = cfg("https://x.test/{{a").check().unwrap_err().to_string();
        assert!(m.starts_with("The url of the HTTP tool 't' 'https://x.test/{{a' opens a placeholder"), "{m}");
    }

    #[test]
    fn approval_defaults_follow_the_method() {
        for (method, want) in [
            ("GET", ApprovalPolicy::Auto),
            ("head", ApprovalPolicy::Auto),
            ("POST", ApprovalPolicy::Ask),
            ("PUT", ApprovalPolicy::Ask),
            ("patch", ApprovalPolicy::Ask),
            ("DELETE", ApprovalPolicy::Ask),
        ] {
            let mut c = cfg("https://api.example.com/x");
            c.method = method.into();
            assert_eq!(c.effective_approval(), want, "{method}");
            c.approval = Some(ApprovalPolicy::Deny);
            assert_eq!(c.effective_approval(), ApprovalPolicy::Deny);
        }
    }

    #[test]
    fn the_json_shape_is_camel_case_strict_and_upper_cases_the_method() {
        let c: HttpToolConfig = serde_json::from_value(json!({
            "name": "create_issue",
            "description": "Create an issue.",
            "method": "post",
            "url": "https://api.example.com/repos/{{repo}}/issues",
            "headers": {"Authorization": "Bearer {{secret:gh}}"},
            "body": {"title": "{{title}}", "labels": ["bot"]},
            "timeoutSecs": 10,
            "maxResponseBytes": 2048,
            "responsePointer": "/id",
            "maxChars": 500,
            "approval": "ask",
            "allowLocalAddresses": true,
            "exampleOutput": "42"
        }))
        .unwrap();
        assert_eq!(c.method, "POST");
        assert_eq!(c.timeout_secs, Some(10));
        c.check().unwrap();
        let back: HttpToolConfig = serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        let minimal: HttpToolConfig =
            serde_json::from_value(json!({"name": "a", "description": "b", "url": "https://x.test/"})).unwrap();
        assert_eq!(minimal.method, "GET");
        assert_eq!(
            serde_json::to_value(&minimal).unwrap(),
            json!({"name": "a", "description": "b", "method": "GET", "url": "https://x.test/"})
        );
        let unknown = serde_json::from_value::<HttpToolConfig>(
            json!({"name": "a", "description": "b", "url": "https://x.test/", "proxy": "x"}),
        );
        assert!(unknown.unwrap_err().to_string().contains("unknown field `proxy`"));
    }
}
