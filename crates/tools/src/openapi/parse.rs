//! Reading a document: JSON or YAML text, at most [`MAX_DOCUMENT_BYTES`], into a value whose
//! `openapi` field says 3.0 or 3.1 ([`OpenApiError`] says why not, and what to do).

use serde_json::Value;

/// The largest document read, in bytes (10 MiB).
pub const MAX_DOCUMENT_BYTES: usize = 10 * 1024 * 1024;

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
    /// More than [`MAX_OPERATIONS`](super::MAX_OPERATIONS) operations.
    #[error("The document has {0} operations; at most 2000 are supported.")]
    TooManyOperations(usize),
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

pub(super) fn check_version(doc: &Value) -> Result<(), OpenApiError> {
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
