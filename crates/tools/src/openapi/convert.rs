//! A whole document to tool definitions: the operation count checked, the base URL chosen (the
//! operation's or its path's own servers, else the person's, else the document's first absolute
//! one), each operation built in document order under a unique name, and which are selected.
//! Invariant: the definitions of one document take at most [`MAX_DOCUMENT_TOOL_BYTES`].

use super::model::{Converted, OpenApiOptions, Operation, SchemeKind};
use super::names::{tool_name, unique_name};
use super::operation::{OpContext, text_of};
use super::parse::{OpenApiError, check_version};
use super::schema::deref;
use super::security::schemes;
use serde_json::Value;
use std::collections::BTreeSet;

/// Above this many operations none is selected by default (the person picks), so that a large
/// API does not flood the model with tools; at or below, all are.
pub const DEFAULT_SELECTED_MAX: usize = 30;
/// The most operations a document may have.
pub const MAX_OPERATIONS: usize = 2000;
/// The most bytes of tool definitions one document may give (names, descriptions, parameter
/// schemas): 4 MiB, [`MAX_OPERATIONS`] operations of 2 KiB. Each operation is capped too (the
/// core's per-tool cap); past this total the remaining operations are left out, with one note,
/// so what a document can cost is bounded whatever its references inline to.
pub const MAX_DOCUMENT_TOOL_BYTES: usize = 4 * 1024 * 1024;

/// The HTTP methods OpenAPI names, in the order operations are listed.
const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// Converts a document [`parse`](fn@super::parse) read into one tool definition per operation.
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
    let mut total_bytes = 0usize;
    let mut over_budget = 0usize;
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
            if total_bytes >= MAX_DOCUMENT_TOOL_BYTES {
                over_budget += 1;
                continue;
            }
            let name = unique_name(tool_name(op, method, path), &mut names);
            let mut ctx = OpContext { doc, label: &label, notes: &mut notes };
            if let Some(config) = ctx.build(&name, method, path, item, op, &base, &security_schemes) {
                let bytes = definition_bytes(&config);
                if total_bytes + bytes > MAX_DOCUMENT_TOOL_BYTES {
                    total_bytes = MAX_DOCUMENT_TOOL_BYTES;
                    over_budget += 1;
                    names.remove(&name);
                    continue;
                }
                total_bytes += bytes;
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
    if over_budget > 0 {
        notes.push(format!(
            "{over_budget} operations were left out: the document's tools would take more than {} MiB of definitions. Import the operations you need (fewer, or smaller ones).",
            MAX_DOCUMENT_TOOL_BYTES / (1024 * 1024)
        ));
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

/// What a definition takes in a request: name, description, serialized parameters.
fn definition_bytes(config: &crate::HttpToolConfig) -> usize {
    config.name.len() + config.description.len() + config.parameters.as_ref().map_or(0, |p| p.to_string().len())
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(paths: Value) -> Value {
        json!({"openapi": "3.0.3", "info": {"title": "T", "version": "1"}, "servers": [{"url": "https://api.example.com/v1/"}], "paths": paths})
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
