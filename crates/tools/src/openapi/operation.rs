//! One operation to one [`HttpToolConfig`]: its description, its keys (the first security
//! alternative the tools can send), its path, query and header parameters behind placeholder
//! aliases, its JSON body as the one `body` parameter, and a schema the registry compiles; or
//! `None` with a note saying why it was left out. Invariant: a definition it returns passes
//! [`HttpToolConfig::check`].

use super::model::{SchemeInfo, SchemeKind};
use super::names::alias;
use super::schema::{Converter, MAX_SCHEMA_BYTES, deref};
use crate::HttpToolConfig;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use switchboard_core::catalogue::MAX_TOOL_DEFINITION_BYTES;

/// The longest tool description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 1000;

pub(super) fn text_of(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or("").trim().to_owned()
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
pub(super) struct OpContext<'a> {
    pub(super) doc: &'a Value,
    pub(super) label: &'a str,
    pub(super) notes: &'a mut Vec<String>,
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
    pub(super) fn build(
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

        if converter.too_large {
            self.note(format!(
                "left out: its parameters take more than {} KiB once their references are inlined, more than one tool may take",
                MAX_SCHEMA_BYTES / 1024
            ));
            return None;
        }
        for n in std::mem::take(&mut converter.notes) {
            self.note(n);
        }
        let mut parameters = json!({"type": "object", "properties": properties, "additionalProperties": false});
        if !required.is_empty() {
            parameters["required"] = json!(required);
        }
        let bytes = name.len() + config.description.len() + parameters.to_string().len();
        if bytes > MAX_TOOL_DEFINITION_BYTES {
            self.note(format!(
                "left out: its definition is {bytes} bytes, more than the {MAX_TOOL_DEFINITION_BYTES} one tool may take"
            ));
            return None;
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
    use crate::openapi::{OpenApiOptions, convert};
    use serde_json::{Value, json};

    fn doc(paths: Value) -> Value {
        json!({"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://api.example.com/v1/"}], "paths": paths})
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
}
