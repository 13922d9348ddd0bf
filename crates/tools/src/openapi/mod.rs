//! OpenAPI 3.0 / 3.1 documents to HTTP tools: one [`HttpToolConfig`] per operation.
//!
//! Pure: [`parse`] reads the text (JSON or YAML), [`convert`] turns the document into tool
//! definitions with what it had to leave out as [`Converted::notes`]. Nothing is fetched (a
//! reference to another file is not followed) and nothing is registered; the caller shows the
//! operations, the person picks, and the picked definitions become [`HttpTool`](crate::HttpTool)s.
//!
//! Choices:
//! - Names: the `operationId`, else `method_path` (`get_pets_petId`), made provider-safe (other
//!   characters become `_`, a name over 64 characters is cut and ends in a hash of the whole),
//!   and unique in the document (`_2`, `_3`, … in document order).
//! - Parameters: path, query and header parameters become the tool's parameters under their
//!   own names, or an alias when the name is no placeholder name (`page[size]` → `page_size_`);
//!   the query or header keeps the real name. Cookie parameters are left out (with a note).
//!   Array parameters are asked for as one comma-separated string (what `style: simple` and
//!   `form` without `explode` mean); object-valued query parameters are left out.
//! - The JSON request body is **one parameter, `body`**, whose schema is the document's body
//!   schema, sent as it is (`"body": "{{body}}"`, typed). That keeps every body shape (arrays,
//!   `oneOf`, free-form objects) exact and never mixes body properties with path or query names.
//!   An optional body the model leaves out is sent as JSON `null`.
//! - Keys: `apiKey` in a header or the query → `{{secret:NAME}}` there; HTTP `bearer` →
//!   `Authorization: Bearer {{secret:NAME}}`; HTTP `basic` → `Authorization: Basic
//!   {{secret:NAME}}`, the secret holding the base64 of `user:password`. OAuth 2, OpenID
//!   Connect, mutual TLS and cookie keys are not supported: such operations are offered without
//!   them (with a note). `NAME` is [`OpenApiOptions::security`]'s entry for the scheme, else
//!   `<document name>-<scheme name>`.
//! - The base URL: an operation's or its path's own `servers` first, else
//!   [`OpenApiOptions::server`], else the document's first absolute http(s) server (server
//!   variables take their defaults).

mod schema;

use crate::HttpToolConfig;
use crate::template::is_param_name;
use schema::{Converter, deref};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// Above this many operations none is selected by default (the person picks), so that a large
/// API does not flood the model with tools; at or below, all are.
pub const DEFAULT_SELECTED_MAX: usize = 30;
/// The largest document read, in bytes (10 MiB).
pub const MAX_DOCUMENT_BYTES: usize = 10 * 1024 * 1024;
/// The most operations a document may have.
pub const MAX_OPERATIONS: usize = 2000;
/// The longest tool description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1000;

/// The HTTP methods OpenAPI names, in the order operations are listed.
const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Why a document cannot be read or converted. Each message says what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenApiError {
    /// Larger than [`MAX_DOCUMENT_BYTES`].
    #[error("The document is {0} bytes; OpenAPI documents of at most 10 MB are supported.")]
    TooLarge(usize),
    /// Neither JSON nor YAML.
    #[error("The document is not valid {format}: {reason}")]
    Syntax {
        /// `JSON` or `YAML`.
        format: &'static str,
        /// What the parser said.
        reason: String,
    },
    /// Not an object at the top.
    #[error("The document is not an OpenAPI document: it should be an object with an 'openapi' field.")]
    NotAnObject,
    /// A Swagger 2.0 document.
    #[error(
        "Swagger 2.0 documents are not supported; convert to OpenAPI 3 first (for example with swagger2openapi or https://converter.swagger.io) and import the result."
    )]
    Swagger2,
    /// No `openapi` field.
    #[error("The document is not an OpenAPI document: it has no 'openapi' field (as in \"openapi\": \"3.1.0\").")]
    MissingVersion,
    /// An `openapi` version other than 3.0 or 3.1.
    #[error("OpenAPI {0} is not supported: use an OpenAPI 3.0 or 3.1 document.")]
    UnsupportedVersion(String),
    /// More than [`MAX_OPERATIONS`] operations.
    #[error("The document has {0} operations; at most 2000 are supported.")]
    TooManyOperations(usize),
}

/// How to convert a document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpenApiOptions {
    /// The name the person gave the API; default key names derive from it (`petstore-api_key`).
    pub document_name: String,
    /// The base URL to call; `None`: the document's first absolute http(s) server.
    pub server: Option<String>,
    /// Security scheme name → the key store entry holding its key.
    pub security: BTreeMap<String, String>,
    /// The tool names to select; `None`: all when there are at most [`DEFAULT_SELECTED_MAX`]
    /// operations, else none.
    pub include: Option<BTreeSet<String>>,
}

/// What kind of key a security scheme asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemeKind {
    /// `apiKey` in a header (its name).
    ApiKeyHeader(String),
    /// `apiKey` in the query string (the parameter's name).
    ApiKeyQuery(String),
    /// `apiKey` in a cookie (not supported).
    ApiKeyCookie(String),
    /// `http` `bearer`.
    HttpBearer,
    /// `http` `basic`: the key is the base64 of `user:password`.
    HttpBasic,
    /// Another `http` scheme (not supported).
    HttpOther(String),
    /// `oauth2` (not supported).
    OAuth2,
    /// `openIdConnect` (not supported).
    OpenIdConnect,
    /// `mutualTLS` (not supported).
    MutualTls,
    /// Anything else (not supported).
    Other(String),
}

/// One of the document's security schemes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemeInfo {
    /// Its name in `components.securitySchemes`.
    pub name: String,
    /// What it is.
    pub kind: SchemeKind,
    /// Whether the tools can send it.
    pub supported: bool,
    /// The key store entry its tools use (supported schemes only).
    pub secret: Option<String>,
    /// The document's description of it.
    pub description: String,
}

/// One operation, as a tool definition.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// The definition; it passes [`HttpToolConfig::check`].
    pub tool: HttpToolConfig,
    /// The method, upper case.
    pub method: String,
    /// The path as the document writes it (`/pets/{petId}`).
    pub path: String,
    /// The operation's summary (may be empty).
    pub summary: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// Whether it is offered by default (see [`OpenApiOptions::include`]).
    pub selected: bool,
}

/// A converted document.
#[derive(Clone, Debug, PartialEq)]
pub struct Converted {
    /// `info.title`.
    pub title: String,
    /// The document's server URLs, variables replaced by their defaults.
    pub servers: Vec<String>,
    /// Its security schemes.
    pub security_schemes: Vec<SchemeInfo>,
    /// One per operation that could become a tool, in document order.
    pub operations: Vec<Operation>,
    /// What was not supported and left out, each naming the operation or feature.
    pub notes: Vec<String>,
}

/// Reads an OpenAPI 3.0 or 3.1 document, JSON or YAML.
pub fn parse(text: &str) -> Result<Value, OpenApiError> {
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(OpenApiError::TooLarge(text.len()));
    }
    let text = text.trim_start_matches('\u{feff}');
    let doc: Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| OpenApiError::Syntax { format: "JSON", reason: e.to_string() })?
    } else {
        serde_saphyr::from_str(text)
            .map_err(|e| OpenApiError::Syntax { format: "YAML", reason: one_line(&e.to_string()) })?
    };
    check_version(&doc)?;
    Ok(doc)
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn check_version(doc: &Value) -> Result<(), OpenApiError> {
    let Some(object) = doc.as_object() else { return Err(OpenApiError::NotAnObject) };
    if object.contains_key("swagger") {
        return Err(OpenApiError::Swagger2);
    }
    let version = match object.get("openapi") {
        None => return Err(OpenApiError::MissingVersion),
        Some(Value::String(v)) => v.trim().to_owned(),
        Some(other) => other.to_string(),
    };
    if version.starts_with("3.0") || version.starts_with("3.1") {
        Ok(())
    } else if version.starts_with('2') {
        Err(OpenApiError::Swagger2)
    } else {
        Err(OpenApiError::UnsupportedVersion(version))
    }
}

/// Converts a document [`parse`] read into one tool definition per operation.
pub fn convert(doc: &Value, options: &OpenApiOptions) -> Result<Converted, OpenApiError> {
    check_version(doc)?;
    let paths = doc.get("paths").and_then(Value::as_object);
    let count = paths
        .map(|p| {
            p.values()
                .filter_map(|item| deref(doc, item))
                .map(|item| METHODS.iter().filter(|m| item.get(**m).is_some()).count())
                .sum()
        })
        .unwrap_or(0);
    if count > MAX_OPERATIONS {
        return Err(OpenApiError::TooManyOperations(count));
    }

    let mut notes: Vec<String> = Vec::new();
    let title = doc.pointer("/info/title").and_then(Value::as_str).unwrap_or("").trim().to_owned();
    let servers = server_urls(doc.get("servers"));
    let default_server = options
        .server
        .as_ref()
        .map(|s| s.trim().trim_end_matches('/').to_owned())
        .or_else(|| servers.iter().find(|s| is_absolute(s)).cloned());
    if default_server.is_none() && count > 0 {
        let listed = if servers.is_empty() { "none".to_owned() } else { servers.join(", ") };
        notes.push(format!(
            "The document names no absolute http(s) server (servers: {listed}): choose the API's base URL, as in https://api.example.com/v1."
        ));
    }
    let document_name = if options.document_name.trim().is_empty() { &title } else { &options.document_name };
    let security_schemes = schemes(doc, document_name, options);
    for scheme in &security_schemes {
        if let (SchemeKind::HttpBasic, Some(secret)) = (&scheme.kind, &scheme.secret) {
            notes.push(format!(
                "The security scheme '{}' is HTTP basic authentication: the key '{secret}' must hold the base64 of user:password.",
                scheme.name
            ));
        }
    }
    if doc.get("webhooks").is_some_and(|w| w.as_object().is_some_and(|w| !w.is_empty())) {
        notes.push("Webhooks describe requests the API sends, not operations to call: they are not tools.".into());
    }

    let mut operations = Vec::new();
    let mut names = BTreeSet::new();
    for (path, item) in paths.into_iter().flatten() {
        let Some(item) = deref(doc, item) else {
            notes.push(format!("The path {path} is a reference that could not be resolved: left out."));
            continue;
        };
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let upper = method.to_ascii_uppercase();
            let label = match op.get("operationId").and_then(Value::as_str) {
                Some(id) => format!("{upper} {path} ({id})"),
                None => format!("{upper} {path}"),
            };
            if matches!(method, "options" | "trace") {
                notes.push(format!("{label}: {upper} requests are not supported by HTTP tools; left out."));
                continue;
            }
            let base = first_absolute(op.get("servers"))
                .or_else(|| first_absolute(item.get("servers")))
                .or_else(|| default_server.clone());
            let Some(base) = base else { continue };
            let name = unique_name(tool_name(op, method, path), &mut names);
            let mut ctx = OpContext { doc, label: &label, notes: &mut notes };
            if let Some(config) = ctx.build(&name, method, path, item, op, &base, &security_schemes) {
                operations.push(Operation {
                    tool: config,
                    method: upper,
                    path: path.clone(),
                    summary: text_of(op, "summary"),
                    tags: op
                        .get("tags")
                        .and_then(Value::as_array)
                        .map(|t| t.iter().filter_map(Value::as_str).map(str::to_owned).collect())
                        .unwrap_or_default(),
                    selected: false,
                });
            } else {
                names.remove(&name);
            }
        }
    }
    let all = operations.len() <= DEFAULT_SELECTED_MAX;
    for op in &mut operations {
        op.selected = match &options.include {
            Some(include) => include.contains(&op.tool.name),
            None => all,
        };
    }
    Ok(Converted { title, servers, security_schemes, operations, notes })
}

fn text_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").trim().to_owned()
}

fn is_absolute(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")) && !url.contains('{')
}

/// `servers[].url`, variables replaced by their defaults, without a trailing `/`.
fn server_urls(servers: Option<&Value>) -> Vec<String> {
    let mut out = Vec::new();
    for server in servers.and_then(Value::as_array).into_iter().flatten() {
        let Some(url) = server.get("url").and_then(Value::as_str) else { continue };
        let mut url = url.trim().to_owned();
        if let Some(vars) = server.get("variables").and_then(Value::as_object) {
            for (name, var) in vars {
                let default = match var.get("default") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Number(n)) => n.to_string(),
                    _ => continue,
                };
                url = url.replace(&format!("{{{name}}}"), &default);
            }
        }
        let url = url.trim_end_matches('/').to_owned();
        if !out.contains(&url) {
            out.push(url);
        }
    }
    out
}

fn first_absolute(servers: Option<&Value>) -> Option<String> {
    server_urls(servers).into_iter().find(|s| is_absolute(s))
}

/// The document's security schemes and the key names their tools use.
fn schemes(doc: &Value, document_name: &str, options: &OpenApiOptions) -> Vec<SchemeInfo> {
    let mut out = Vec::new();
    let Some(map) = doc.pointer("/components/securitySchemes").and_then(Value::as_object) else { return out };
    for (name, scheme) in map {
        let Some(scheme) = deref(doc, scheme) else { continue };
        let field = |k: &str| scheme.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        let kind = match field("type").as_str() {
            "apiKey" => match field("in").as_str() {
                "header" => SchemeKind::ApiKeyHeader(field("name")),
                "query" => SchemeKind::ApiKeyQuery(field("name")),
                _ => SchemeKind::ApiKeyCookie(field("name")),
            },
            "http" => match field("scheme").to_ascii_lowercase().as_str() {
                "bearer" => SchemeKind::HttpBearer,
                "basic" => SchemeKind::HttpBasic,
                other => SchemeKind::HttpOther(other.to_owned()),
            },
            "oauth2" => SchemeKind::OAuth2,
            "openIdConnect" => SchemeKind::OpenIdConnect,
            "mutualTLS" => SchemeKind::MutualTls,
            other => SchemeKind::Other(other.to_owned()),
        };
        let supported = match &kind {
            SchemeKind::ApiKeyHeader(h) => reqwest::header::HeaderName::from_bytes(h.as_bytes()).is_ok_and(|h| {
                !matches!(h.as_str(), "host" | "content-length" | "transfer-encoding" | "connection" | "upgrade")
            }),
            SchemeKind::ApiKeyQuery(q) => !q.trim().is_empty() && !q.contains("{{"),
            SchemeKind::HttpBearer | SchemeKind::HttpBasic => true,
            _ => false,
        };
        let secret = supported.then(|| {
            options.security.get(name).cloned().unwrap_or_else(|| secret_name(&format!("{document_name}-{name}")))
        });
        out.push(SchemeInfo { name: name.clone(), kind, supported, secret, description: field("description") });
    }
    out
}

/// A key store name (`[A-Za-z0-9_.-]`, at most 64 characters) for `raw`.
fn secret_name(raw: &str) -> String {
    let mut s: String = raw
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' })
        .collect();
    s = s.trim_matches('-').to_owned();
    if s.is_empty() {
        s = "openapi".into();
    }
    shorten(&s, 64)
}

/// `s` cut to `max` characters (ASCII), ending in a hash of the whole when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let hash = format!("{:08x}", fnv1a(s));
    format!("{}_{hash}", &s[..max - hash.len() - 1])
}

fn fnv1a(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5_u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$` from the operationId, else from the method and path.
fn tool_name(op: &Value, method: &str, path: &str) -> String {
    let raw = match op.get("operationId").and_then(Value::as_str).map(str::trim) {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => format!("{method}_{}", path.replace(['{', '}'], "")),
    };
    let mut name = String::new();
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' };
        if !(c == '_' && name.ends_with('_')) {
            name.push(c);
        }
    }
    let mut name = name.trim_end_matches('_').to_owned();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    shorten(&name, 64)
}

/// `name`, or `name_2`, `name_3`, … when taken; recorded as taken.
fn unique_name(name: String, taken: &mut BTreeSet<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        let suffix = format!("_{n}");
        candidate = format!("{}{suffix}", &name[..name.len().min(64 - suffix.len())]);
        n += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

/// A placeholder name for a parameter named `name`, unique among `taken`.
fn alias(name: &str, taken: &mut BTreeSet<String>) -> String {
    let base = if is_param_name(name) {
        name.to_owned()
    } else {
        let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
        if !s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            s.insert(0, '_');
        }
        s.truncate(60);
        s
    };
    unique_name_param(base, taken)
}

fn unique_name_param(base: String, taken: &mut BTreeSet<String>) -> String {
    let mut candidate = base.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        let suffix = format!("_{n}");
        candidate = format!("{}{suffix}", &base[..base.len().min(64 - suffix.len())]);
        n += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

/// `summary` and `description`, at most [`MAX_DESCRIPTION_CHARS`] characters.
fn description(op: &Value, method: &str, path: &str) -> String {
    let summary = text_of(op, "summary");
    let details = text_of(op, "description");
    let mut text = match (summary.is_empty(), details.is_empty()) {
        (false, false) if details.starts_with(&summary) => details,
        (false, false) => format!("{summary}\n\n{details}"),
        (false, true) => summary,
        (true, false) => details,
        (true, true) => format!("{} {path}", method.to_ascii_uppercase()),
    };
    if op.get("deprecated") == Some(&Value::Bool(true)) {
        text = format!("Deprecated. {text}");
    }
    bound(&text, MAX_DESCRIPTION_CHARS)
}

fn bound(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

/// What building one operation needs.
struct OpContext<'a> {
    doc: &'a Value,
    label: &'a str,
    notes: &'a mut Vec<String>,
}

impl OpContext<'_> {
    fn note(&mut self, what: impl std::fmt::Display) {
        let note = format!("{}: {what}", self.label);
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// The definition for one operation, or `None` (with a note) when it cannot be one.
    #[allow(clippy::too_many_arguments)]
    fn build(
        &mut self,
        name: &str,
        method: &str,
        path: &str,
        item: &Value,
        op: &Value,
        base: &str,
        schemes: &[SchemeInfo],
    ) -> Option<HttpToolConfig> {
        let doc = self.doc;
        let mut config = HttpToolConfig::new(name, description(op, method, path), String::new());
        config.method = method.to_ascii_uppercase();
        let mut properties = Map::new();
        let mut required: Vec<String> = Vec::new();
        let mut taken = BTreeSet::new();
        let mut converter = Converter::new(doc, true);

        // Authentication first: its headers and query entries win over parameters of the same name.
        let auth_headers = self.security(op, schemes, &mut config);

        // Parameters: the path item's, overridden by the operation's (same name and location).
        let mut params: Vec<&Value> = Vec::new();
        for list in [item.get("parameters"), op.get("parameters")] {
            for p in list.and_then(Value::as_array).into_iter().flatten() {
                let Some(p) = deref(doc, p) else {
                    self.note("a parameter reference could not be resolved; it is left out");
                    continue;
                };
                let key = (p.get("name"), p.get("in"));
                params.retain(|q| (q.get("name"), q.get("in")) != key);
                params.push(p);
            }
        }
        let mut path_aliases: BTreeMap<String, String> = BTreeMap::new();
        for p in params {
            let (Some(pname), Some(location)) =
                (p.get("name").and_then(Value::as_str), p.get("in").and_then(Value::as_str))
            else {
                continue;
            };
            let is_required = location == "path" || p.get("required") == Some(&Value::Bool(true));
            let raw_schema = p
                .get("schema")
                .or_else(|| p.get("content").and_then(Value::as_object).and_then(|c| c.values().next()?.get("schema")));
            let mut param_schema = match raw_schema {
                Some(s) => converter.convert(s),
                None => json!({"type": "string"}),
            };
            let kind = schema_kind(doc, raw_schema);
            match location {
                "path" | "query" | "header" => {}
                "cookie" => {
                    self.note(format!("the cookie parameter '{pname}' is not supported and is left out"));
                    continue;
                }
                other => {
                    self.note(format!("the parameter '{pname}' in '{other}' is not supported and is left out"));
                    continue;
                }
            }
            if location == "header" {
                let lower = pname.to_ascii_lowercase();
                // OpenAPI: these header parameters are ignored (the body and the security say them).
                if matches!(lower.as_str(), "accept" | "content-type" | "authorization") {
                    continue;
                }
                if auth_headers.contains(&lower) {
                    continue;
                }
                let valid = reqwest::header::HeaderName::from_bytes(pname.as_bytes()).is_ok_and(|h| {
                    !matches!(h.as_str(), "host" | "content-length" | "transfer-encoding" | "connection" | "upgrade")
                });
                if !valid {
                    self.note(format!("the header parameter '{pname}' cannot be sent by an HTTP tool and is left out"));
                    if is_required {
                        self.note("it is required, so the operation is left out");
                        return None;
                    }
                    continue;
                }
            }
            if location == "query" && config.query.contains_key(pname) {
                continue; // an API key goes there
            }
            if kind == Kind::Object && location == "query" {
                if is_required {
                    self.note(format!(
                        "the query parameter '{pname}' is an object, which HTTP tools cannot encode; it is required, so the operation is left out"
                    ));
                    return None;
                }
                self.note(format!(
                    "the query parameter '{pname}' is an object, which HTTP tools cannot encode; it is left out"
                ));
                continue;
            }
            if kind == Kind::Object && location != "query" {
                self.note(format!("the {location} parameter '{pname}' is an object; it is sent as JSON text"));
            }
            if kind == Kind::Array {
                let explode =
                    p.get("explode").and_then(Value::as_bool).unwrap_or(p.get("style").is_none_or(|s| s == "form"));
                param_schema = comma_separated(&param_schema);
                if location == "query" && explode {
                    self.note(format!(
                        "the array parameter '{pname}' is sent as one comma-separated value, not as repeated '{pname}=' entries"
                    ));
                }
            }
            let placeholder = alias(pname, &mut taken);
            if let Some(d) = p.get("description").and_then(Value::as_str)
                && let Value::Object(s) = &mut param_schema
                && !s.contains_key("description")
            {
                s.insert("description".into(), json!(bound(d.trim(), 500)));
            }
            if p.get("deprecated") == Some(&Value::Bool(true))
                && let Value::Object(s) = &mut param_schema
            {
                s.insert("deprecated".into(), json!(true));
            }
            let template = format!("{{{{{placeholder}}}}}");
            match location {
                "path" => {
                    path_aliases.insert(pname.to_owned(), placeholder.clone());
                }
                "query" => {
                    config.query.insert(pname.to_owned(), template);
                }
                _ => {
                    config.headers.insert(pname.to_owned(), template);
                }
            }
            properties.insert(placeholder.clone(), param_schema);
            if is_required {
                required.push(placeholder);
            }
        }

        // The path: `{name}` → `{{alias}}`; a placeholder the parameters do not declare becomes a
        // required string.
        let mut url_path = String::new();
        // A `#…` in a path key only tells documents' operations apart: it is never sent.
        let mut rest = path.split('#').next().unwrap_or(path);
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|c| open + c) else { break };
            url_path.push_str(&rest[..open]);
            let pname = &rest[open + 1..close];
            let placeholder = match path_aliases.get(pname) {
                Some(a) => a.clone(),
                None => {
                    let a = alias(pname, &mut taken);
                    self.note(format!("the path parameter '{pname}' is not declared; it is asked for as a string"));
                    properties.insert(a.clone(), json!({"type": "string"}));
                    required.push(a.clone());
                    path_aliases.insert(pname.to_owned(), a.clone());
                    a
                }
            };
            url_path.push_str(&format!("{{{{{placeholder}}}}}"));
            rest = &rest[close + 1..];
        }
        url_path.push_str(rest);
        if !url_path.starts_with('/') {
            url_path.insert(0, '/');
        }
        config.url = format!("{base}{url_path}");

        // The JSON request body: one parameter, `body`.
        if let Some(body) = op.get("requestBody") {
            let Some(body) = deref(doc, body) else {
                self.note("its request body reference could not be resolved; the operation is left out");
                return None;
            };
            let body_required = body.get("required") == Some(&Value::Bool(true));
            let content = body.get("content").and_then(Value::as_object);
            let json_type = content.and_then(|c| c.keys().find(|k| is_json_media_type(k)));
            if matches!(method, "get" | "head") {
                self.note(format!(
                    "{} requests send no body; its request body is left out",
                    method.to_ascii_uppercase()
                ));
            } else if let Some(media) = json_type {
                let schema = content.and_then(|c| c.get(media)).and_then(|m| m.get("schema"));
                let mut body_schema = schema.map(|s| converter.convert(s)).unwrap_or_else(|| json!({}));
                if let Value::Object(s) = &mut body_schema
                    && !s.contains_key("description")
                    && let Some(d) = body.get("description").and_then(Value::as_str)
                {
                    s.insert("description".into(), json!(bound(d.trim(), 500)));
                }
                let placeholder = alias("body", &mut taken);
                properties.insert(placeholder.clone(), body_schema);
                if body_required {
                    required.push(placeholder.clone());
                }
                config.body = Some(json!(format!("{{{{{placeholder}}}}}")));
                let media = media.split(';').next().unwrap_or(media).trim();
                if !media.eq_ignore_ascii_case("application/json") {
                    config.headers.insert("Content-Type".into(), media.to_owned());
                }
            } else {
                let types = content.map(|c| c.keys().cloned().collect::<Vec<_>>().join(", ")).unwrap_or_default();
                if body_required {
                    self.note(format!(
                        "its request body is {types}, but HTTP tools send JSON only; the body is required, so the operation is left out"
                    ));
                    return None;
                }
                self.note(format!(
                    "its request body is {types}, but HTTP tools send JSON only; offered without a body"
                ));
            }
        }

        for n in std::mem::take(&mut converter.notes) {
            self.note(n);
        }
        let mut parameters = json!({"type": "object", "properties": properties, "additionalProperties": false});
        if !required.is_empty() {
            parameters["required"] = json!(required);
        }
        config.parameters = Some(parameters);
        if let Err(e) = config.check() {
            self.note(format!("left out: {e}"));
            return None;
        }
        if let Err(e) = jsonschema::validator_for(config.parameters.as_ref().unwrap_or(&Value::Null)) {
            // Mostly a `pattern` in a regex dialect the validator does not know: drop them all.
            if let Some(p) = config.parameters.as_mut() {
                drop_patterns(p);
            }
            if jsonschema::validator_for(config.parameters.as_ref().unwrap_or(&Value::Null)).is_err() {
                self.note(format!("left out: its parameter schema is not valid JSON Schema ({e})"));
                return None;
            }
            self.note(format!(
                "its schema's patterns were dropped, as one is not a valid regular expression here ({e})"
            ));
        }
        Some(config)
    }

    /// Adds the operation's keys (the first alternative the tools can send) to `config`; the
    /// header names used, lower case.
    fn security(&mut self, op: &Value, schemes: &[SchemeInfo], config: &mut HttpToolConfig) -> Vec<String> {
        let requirement = op.get("security").or_else(|| self.doc.get("security"));
        let Some(alternatives) = requirement.and_then(Value::as_array) else { return Vec::new() };
        if alternatives.is_empty() {
            return Vec::new();
        }
        let find = |name: &str| schemes.iter().find(|s| s.name == name);
        let usable =
            |alt: &Value| alt.as_object().is_some_and(|a| a.keys().all(|k| find(k).is_some_and(|s| s.supported)));
        let Some(chosen) = alternatives.iter().find(|a| usable(a)) else {
            let names: BTreeSet<&str> =
                alternatives.iter().filter_map(Value::as_object).flat_map(|a| a.keys().map(String::as_str)).collect();
            let names: Vec<&str> = names.into_iter().collect();
            self.note(format!(
                "its security ({}) is not supported (only API keys in headers or the query, and HTTP bearer or basic, are); it is offered without authentication",
                names.join(", ")
            ));
            return Vec::new();
        };
        let mut headers = Vec::new();
        for name in chosen.as_object().into_iter().flat_map(|a| a.keys()) {
            let Some(scheme) = find(name) else { continue };
            let Some(secret) = &scheme.secret else { continue };
            let key = format!("{{{{secret:{secret}}}}}");
            match &scheme.kind {
                SchemeKind::ApiKeyHeader(h) => {
                    headers.push(h.to_ascii_lowercase());
                    config.headers.insert(h.clone(), key);
                }
                SchemeKind::ApiKeyQuery(q) => {
                    config.query.insert(q.clone(), key);
                }
                SchemeKind::HttpBearer => {
                    headers.push("authorization".into());
                    config.headers.insert("Authorization".into(), format!("Bearer {key}"));
                }
                SchemeKind::HttpBasic => {
                    headers.push("authorization".into());
                    config.headers.insert("Authorization".into(), format!("Basic {key}"));
                }
                _ => {}
            }
        }
        headers
    }
}

/// Removes every `pattern` and `patternProperties` keyword from a converted schema.
fn drop_patterns(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            // A property may be called `pattern`: its value is then a schema, not a string.
            if map.get("pattern").is_some_and(Value::is_string) {
                map.remove("pattern");
            }
            if map.get("patternProperties").is_some_and(|p| p.get("type").is_none_or(|t| !t.is_string())) {
                map.remove("patternProperties");
            }
            map.values_mut().for_each(drop_patterns);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_patterns),
        _ => {}
    }
}

fn is_json_media_type(media: &str) -> bool {
    let m = media.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
}

#[derive(PartialEq, Eq)]
enum Kind {
    Array,
    Object,
    Other,
}

/// Whether a parameter's schema (through its `$ref`s) is an array, an object or else.
fn schema_kind(doc: &Value, schema: Option<&Value>) -> Kind {
    let Some(s) = schema.and_then(|s| deref(doc, s)) else { return Kind::Other };
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or(""),
        _ => "",
    };
    match ty {
        "array" => Kind::Array,
        "object" => Kind::Object,
        _ if s.get("properties").is_some() => Kind::Object,
        _ => Kind::Other,
    }
}

/// An array parameter asked for as one comma-separated string.
fn comma_separated(schema: &Value) -> Value {
    let mut out = json!({"type": "string"});
    let items = schema.get("items");
    let mut hint = "Several values, separated by commas".to_owned();
    if let Some(Value::Array(values)) = items.and_then(|i| i.get("enum")) {
        let values: Vec<String> = values.iter().map(crate::template::value_text).collect();
        hint.push_str(&format!(", from: {}", values.join(", ")));
    }
    hint.push('.');
    let description = match schema.get("description").and_then(Value::as_str) {
        Some(d) => format!("{d} ({hint})"),
        None => hint,
    };
    out["description"] = json!(description);
    if let Some(d) = schema.get("default").filter(|d| d.is_array()) {
        let parts: Vec<String> = d.as_array().into_iter().flatten().map(crate::template::value_text).collect();
        out["default"] = json!(parts.join(","));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(paths: Value) -> Value {
        json!({"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://api.example.com/v1/"}], "paths": paths})
    }

    #[test]
    fn names_are_provider_safe_short_and_unique() {
        assert_eq!(tool_name(&json!({}), "get", "/pets/{petId}"), "get_pets_petId");
        assert_eq!(tool_name(&json!({"operationId": "pets.list v2"}), "get", "/"), "pets_list_v2");
        assert_eq!(tool_name(&json!({"operationId": "1st"}), "get", "/"), "_1st");
        let long = tool_name(&json!({"operationId": "x".repeat(100)}), "get", "/");
        assert_eq!(long.len(), 64);
        assert!(crate::http_tool::is_tool_name(&long));
        assert_eq!(long, tool_name(&json!({"operationId": "x".repeat(100)}), "get", "/"), "deterministic");
        assert_ne!(long, tool_name(&json!({"operationId": "x".repeat(101)}), "get", "/"));
        let mut taken = BTreeSet::new();
        assert_eq!(unique_name("a".into(), &mut taken), "a");
        assert_eq!(unique_name("a".into(), &mut taken), "a_2");
        assert_eq!(unique_name("a".into(), &mut taken), "a_3");
        let mut taken = BTreeSet::new();
        assert_eq!(alias("page[size]", &mut taken), "page_size_");
        assert_eq!(alias("X-Request-Id", &mut taken), "X_Request_Id");
        assert_eq!(alias("2fa", &mut taken), "_2fa");
        assert_eq!(secret_name("My API-api_key"), "My_API-api_key");
    }

    #[test]
    fn parameters_keep_their_real_names_behind_aliases() {
        let d = doc(json!({"/items/{item-id}": {"get": {
            "parameters": [
                {"name": "item-id", "in": "path", "required": true, "schema": {"type": "integer"}},
                {"name": "page[size]", "in": "query", "schema": {"type": "integer"}, "description": "Page size."},
                {"name": "ids", "in": "query", "style": "form", "explode": false, "schema": {"type": "array", "items": {"type": "string"}}},
                {"name": "X-Trace", "in": "header", "required": true, "schema": {"type": "string"}},
                {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                {"name": "filter", "in": "query", "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}
            ]
        }}}));
        let c = convert(&d, &OpenApiOptions::default()).unwrap();
        let t = &c.operations[0].tool;
        assert_eq!(t.name, "get_items_item-id");
        assert_eq!(t.url, "https://api.example.com/v1/items/{{item_id}}");
        assert_eq!(t.query["page[size]"], "{{page_size_}}");
        assert_eq!(t.query["ids"], "{{ids}}");
        assert_eq!(t.headers["X-Trace"], "{{X_Trace}}");
        let p = t.parameters.as_ref().unwrap();
        assert_eq!(p["required"], json!(["item_id", "X_Trace"]));
        assert_eq!(p["properties"]["page_size_"], json!({"type": "integer", "description": "Page size."}));
        assert_eq!(p["properties"]["ids"]["type"], "string");
        assert!(c.notes.iter().any(|n| n.contains("cookie parameter 'session'")), "{:?}", c.notes);
        assert!(c.notes.iter().any(|n| n.contains("'filter' is an object")), "{:?}", c.notes);
        t.check().unwrap();
    }

    #[test]
    fn bodies_security_and_methods() {
        let mut d = doc(json!({
            "/a": {
                "post": {"operationId": "make", "requestBody": {"required": true, "content": {"application/merge-patch+json": {"schema": {"type": "object", "properties": {"x": {"type": "string"}}}}}}},
                "put": {"operationId": "upload", "requestBody": {"required": true, "content": {"multipart/form-data": {}}}},
                "patch": {"operationId": "form", "requestBody": {"content": {"application/x-www-form-urlencoded": {}}}},
                "options": {"operationId": "opts"},
                "get": {"operationId": "open", "security": []}
            }
        }));
        d["components"] = json!({"securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer"},
            "oauth": {"type": "oauth2", "flows": {}}
        }});
        d["security"] = json!([{"oauth": []}, {"bearer": []}]);
        let options = OpenApiOptions { document_name: "acme".into(), ..OpenApiOptions::default() };
        let c = convert(&d, &options).unwrap();
        let names: Vec<&str> = c.operations.iter().map(|o| o.tool.name.as_str()).collect();
        assert_eq!(names, ["open", "make", "form"]);
        assert!(c.operations[0].tool.headers.is_empty(), "security: [] means none");
        let make = &c.operations[1].tool;
        assert_eq!(make.body, Some(json!("{{body}}")));
        assert_eq!(make.headers["Authorization"], "Bearer {{secret:acme-bearer}}");
        assert_eq!(make.headers["Content-Type"], "application/merge-patch+json");
        assert_eq!(make.parameters.as_ref().unwrap()["required"], json!(["body"]));
        assert_eq!(c.operations[2].tool.body, None);
        assert!(c.notes.iter().any(|n| n.starts_with("PUT /a (upload)") && n.contains("left out")), "{:?}", c.notes);
        assert!(c.notes.iter().any(|n| n.starts_with("OPTIONS /a (opts)")), "{:?}", c.notes);
        assert_eq!(c.security_schemes.len(), 2);
        assert!(c.operations.iter().all(|o| o.selected));
    }

    #[test]
    fn server_variables_take_their_defaults() {
        let mut d = doc(json!({"/x": {"get": {}}}));
        d["servers"] = json!([{"url": "/relative"}, {"url": "https://{region}.example.com:{port}/", "variables": {"region": {"default": "eu"}, "port": {"default": "8443"}}}]);
        let c = convert(&d, &OpenApiOptions::default()).unwrap();
        assert_eq!(c.servers, ["/relative", "https://eu.example.com:8443"]);
        assert_eq!(c.operations[0].tool.url, "https://eu.example.com:8443/x");
        d["servers"] = json!([{"url": "/relative"}]);
        let c = convert(&d, &OpenApiOptions::default()).unwrap();
        assert!(c.operations.is_empty());
        assert!(c.notes[0].contains("names no absolute http(s) server"), "{:?}", c.notes);
        let options = OpenApiOptions { server: Some("https://self.hosted/api/".into()), ..OpenApiOptions::default() };
        assert_eq!(convert(&d, &options).unwrap().operations[0].tool.url, "https://self.hosted/api/x");
    }
}
