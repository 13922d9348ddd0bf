//! The document's security schemes ([`SchemeInfo`]): what kind of key each asks for, whether
//! an HTTP tool can send it, and the key store entry its tools use (the person's choice, else
//! `<document name>-<scheme name>`).

use super::model::{OpenApiOptions, SchemeInfo, SchemeKind};
use super::names::secret_name;
use super::schema::deref;
use serde_json::Value;

/// The document's security schemes and the key names their tools use.
pub(super) fn schemes(doc: &Value, document_name: &str, options: &OpenApiOptions) -> Vec<SchemeInfo> {
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
