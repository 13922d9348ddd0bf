//! Reading a document: JSON or YAML text, at most [`MAX_DOCUMENT_BYTES`], into a value whose
//! `openapi` field says 3.0 or 3.1 ([`OpenApiError`] says why not, and what to do).
//!
//! Invariant: what reading costs is bounded by the text's size and its number of values, not by
//! its shape: JSON text is counted before it is parsed (at most [`MAX_JSON_VALUES`]); YAML goes
//! through `serde_saphyr`'s budget (nodes, alias expansion), which refuses the billion laughs.

use serde_json::Value;

/// The largest document read, in bytes (10 MiB).
pub const MAX_DOCUMENT_BYTES: usize = 10 * 1024 * 1024;

/// The most values (objects, arrays, scalars) a JSON document may hold: 750,000. A parsed value
/// costs 40 to 100 bytes whatever its text's size, so this bounds a document's parsed form (well
/// under 100 MB) where 10 MB of `[],[],…` would take 130 MB; the largest real API descriptions
/// hold a few hundred thousand.
pub const MAX_JSON_VALUES: usize = 750_000;

/// Why a document cannot be read or converted. Each message says what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpenApiError {
    /// Larger than [`MAX_DOCUMENT_BYTES`].
    #[error("The document is {0} bytes; OpenAPI documents of at most 10 MB are supported.")]
    TooLarge(usize),
    /// More than [`MAX_JSON_VALUES`] values.
    #[error(
        "The document holds more than {0} values (objects, arrays, strings, numbers); documents this complex are not supported. Import a smaller document, or one with only the API's paths you need."
    )]
    TooComplex(usize),
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
        if json_values_over(text, MAX_JSON_VALUES) {
            return Err(OpenApiError::TooComplex(MAX_JSON_VALUES));
        }
        serde_json::from_str(text).map_err(|e| OpenApiError::Syntax { format: "JSON", reason: e.to_string() })?
    } else {
        serde_saphyr::from_str(text)
            .map_err(|e| OpenApiError::Syntax { format: "YAML", reason: one_line(&e.to_string()) })?
    };
    check_version(&doc)?;
    Ok(doc)
}

/// Whether JSON `text` holds more than `max` values, counted without parsing: each value but
/// the first follows a `,`, `:` or `[` outside a string (an upper bound; `[]` counts one).
fn json_values_over(text: &str, max: usize) -> bool {
    let (mut count, mut in_string, mut escaped) = (1usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' | b':' | b'[' => {
                count += 1;
                if count > max {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings_only() {
        let text = r#"{"a": [1, 2, "x,y:[\"]"]}"#;
        assert!(!json_values_over(text, 5));
        assert!(json_values_over(text, 4));
    }
}
