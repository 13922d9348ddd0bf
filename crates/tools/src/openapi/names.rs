//! Every name a conversion makes: tool names (from the `operationId` or the method and path,
//! provider-safe, at most 64 characters, unique in the document), placeholder aliases for
//! parameter names that are no placeholder names, and key store names. A name that is cut ends in
//! a hash of the whole, so it stays deterministic and distinct.

use crate::template::is_param_name;
use serde_json::Value;
use std::collections::BTreeSet;

/// A key store name (`[A-Za-z0-9_.-]`, at most 64 characters) for `raw`.
pub(super) fn secret_name(raw: &str) -> String {
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
pub(super) fn tool_name(op: &Value, method: &str, path: &str) -> String {
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
pub(super) fn unique_name(name: String, taken: &mut BTreeSet<String>) -> String {
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
pub(super) fn alias(name: &str, taken: &mut BTreeSet<String>) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
