//! OpenAPI schemas (3.0's dialect, 3.1's JSON Schema 2020-12) to the plain JSON Schema a tool's
//! parameters are: local `$ref`s inlined (a cycle or a too deep nesting becomes `{}`, with a
//! note), 3.0's `nullable` and boolean `exclusiveMinimum`/`exclusiveMaximum` rewritten, and every
//! keyword that is not JSON Schema (`discriminator`, `xml`, `externalDocs`, `x-…`) dropped, so
//! that every provider and the registry's validator accept the result.
//!
//! Invariant: what one conversion builds is bounded by [`MAX_SCHEMA_BYTES`] (counted as it is
//! built, before anything large is copied), so a document whose references fan out or whose
//! enums are huge costs at most that much per operation; past it the converter stops and says
//! so ([`Converter::too_large`]), and the operation is left out.

use serde_json::{Map, Value, json};

/// How deep schemas may nest (refs included) before the rest becomes `{}`.
const MAX_DEPTH: usize = 32;
/// How many schema nodes one operation's parameters may hold (refs are inlined, so a document
/// that references the same large schema from everywhere could otherwise grow without bound).
const MAX_NODES: usize = 20_000;
/// The most bytes (serialized) one operation's parameters schema may take: the core's cap on one
/// tool's definition, which the registry enforces anyway.
pub(crate) const MAX_SCHEMA_BYTES: usize = switchboard_core::catalogue::MAX_TOOL_DEFINITION_BYTES;

/// Keywords kept as they are (their values are not schemas).
const PLAIN_KEYWORDS: [&str; 28] = [
    "title",
    "description",
    "default",
    "enum",
    "const",
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
    "examples",
    "deprecated",
    "writeOnly",
    "readOnly",
    "contentMediaType",
    "contentEncoding",
    "dependentRequired",
    "exclusiveMinimum",
    "exclusiveMaximum",
];
/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: [&str; 9] =
    ["additionalProperties", "items", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems"];
/// Keywords whose value is an array of schemas.
const SCHEMA_LIST_KEYWORDS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is a map of schemas.
const SCHEMA_MAP_KEYWORDS: [&str; 3] = ["properties", "patternProperties", "dependentSchemas"];
/// The types JSON Schema knows.
const TYPES: [&str; 7] = ["string", "number", "integer", "boolean", "object", "array", "null"];

/// Converts schemas of one document, collecting what it had to simplify.
pub(crate) struct Converter<'a> {
    doc: &'a Value,
    /// For a request: `readOnly` properties are left out.
    request: bool,
    nodes: usize,
    /// Serialized bytes built so far (an estimate from above).
    bytes: usize,
    /// Past [`MAX_SCHEMA_BYTES`]: the conversion stopped and its result is not to be used.
    pub(crate) too_large: bool,
    stack: Vec<String>,
    /// What was simplified, each once (`$ref` cycles, depth, unresolved refs).
    pub(crate) notes: Vec<String>,
}

impl<'a> Converter<'a> {
    pub(crate) fn new(doc: &'a Value, request: bool) -> Self {
        Self { doc, request, nodes: 0, bytes: 0, too_large: false, stack: Vec::new(), notes: Vec::new() }
    }

    fn note(&mut self, note: String) {
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// The plain JSON Schema for `schema`.
    pub(crate) fn convert(&mut self, schema: &Value) -> Value {
        self.convert_at(schema, 0)
    }

    /// Counts `n` more bytes built; `false` once past [`MAX_SCHEMA_BYTES`].
    fn spend(&mut self, n: usize) -> bool {
        self.bytes = self.bytes.saturating_add(n);
        if self.bytes > MAX_SCHEMA_BYTES {
            self.too_large = true;
        }
        !self.too_large
    }

    fn convert_at(&mut self, schema: &Value, depth: usize) -> Value {
        // Braces, a key and its quotes: what every node costs at least.
        if !self.spend(8) {
            return json!({});
        }
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            self.note(format!("the schema is larger than {MAX_NODES} parts once its references are inlined; the rest accepts any value"));
            return json!({});
        }
        if depth > MAX_DEPTH {
            self.note(format!("the schema nests deeper than {MAX_DEPTH} levels; the deeper parts accept any value"));
            return json!({});
        }
        let object = match schema {
            Value::Bool(b) => return Value::Bool(*b),
            Value::Object(o) => o,
            _ => return json!({}),
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            let reference = reference.to_owned();
            if self.stack.contains(&reference) {
                self.note(format!("the schema {reference} contains itself; where it recurs it accepts any value"));
                return json!({});
            }
            let Some(target) = resolve_pointer(self.doc, &reference) else {
                self.note(format!("the reference {reference} could not be resolved (only references inside the document are); it accepts any value"));
                return json!({});
            };
            self.stack.push(reference);
            let mut out = self.convert_at(target, depth + 1);
            self.stack.pop();
            // 3.1 allows siblings next to $ref: a description or a title said at the use site wins.
            if let Value::Object(out) = &mut out {
                for key in ["description", "title", "default"] {
                    if let Some(v) = object.get(key) {
                        let room = MAX_SCHEMA_BYTES.saturating_sub(self.bytes) + 1;
                        if !self.spend(key.len() + json_size(v, room)) {
                            break;
                        }
                        out.insert(key.to_owned(), v.clone());
                    }
                }
            }
            return out;
        }

        let mut out = Map::new();
        for (key, value) in object {
            let key = key.as_str();
            if self.too_large {
                break;
            }
            if PLAIN_KEYWORDS.contains(&key) {
                // Sized before it is copied: a huge enum referenced from everywhere stops here.
                let room = MAX_SCHEMA_BYTES.saturating_sub(self.bytes) + 1;
                if !self.spend(key.len() + json_size(value, room)) {
                    break;
                }
                out.insert(key.to_owned(), value.clone());
            } else if SCHEMA_KEYWORDS.contains(&key) {
                let converted = match value {
                    // 3.0 and 2020-12 both: `items` is one schema; an array is draft 4's tuple form.
                    Value::Array(items) if key == "items" => {
                        let list: Vec<Value> = items.iter().map(|s| self.convert_at(s, depth + 1)).collect();
                        out.insert("prefixItems".into(), Value::Array(list));
                        continue;
                    }
                    v => self.convert_at(v, depth + 1),
                };
                out.insert(key.to_owned(), converted);
            } else if SCHEMA_LIST_KEYWORDS.contains(&key) {
                if let Value::Array(items) = value {
                    let list: Vec<Value> = items.iter().map(|s| self.convert_at(s, depth + 1)).collect();
                    if !list.is_empty() {
                        out.insert(key.to_owned(), Value::Array(list));
                    }
                }
            } else if SCHEMA_MAP_KEYWORDS.contains(&key) {
                if let Value::Object(map) = value {
                    let mut converted = Map::new();
                    for (name, s) in map {
                        if key == "properties" && self.request && self.is_read_only(s) {
                            continue;
                        }
                        if !self.spend(name.len() + 4) {
                            break;
                        }
                        converted.insert(name.clone(), self.convert_at(s, depth + 1));
                    }
                    out.insert(key.to_owned(), Value::Object(converted));
                }
            } else if key == "type" {
                match value {
                    Value::String(t) if TYPES.contains(&t.as_str()) => {
                        out.insert("type".into(), value.clone());
                    }
                    Value::Array(types) => {
                        let kept: Vec<Value> =
                            types.iter().filter(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))).cloned().collect();
                        if !kept.is_empty() {
                            out.insert("type".into(), Value::Array(kept));
                        }
                    }
                    // `file` (a Swagger 2.0 leftover) and the like: any value.
                    _ => {}
                }
            } else if key == "required" || key == "example" {
                let room = MAX_SCHEMA_BYTES.saturating_sub(self.bytes) + 1;
                if !self.spend(key.len() + json_size(value, room)) {
                    break;
                }
                if key == "example" {
                    if !object.contains_key("examples") {
                        out.insert("examples".into(), json!([value]));
                    }
                } else if let Value::Array(names) = value {
                    let mut kept: Vec<Value> = Vec::new();
                    for n in names.iter().filter(|n| n.is_string()) {
                        if !kept.contains(n) {
                            kept.push(n.clone());
                        }
                    }
                    out.insert("required".into(), Value::Array(kept));
                }
            }
            // Everything else is OpenAPI's or an extension (`nullable` is handled below,
            // `discriminator`, `xml`, `externalDocs`, `x-…`), or a JSON Schema keyword that
            // cannot work once inlined (`$id`, `$anchor`, `$defs`, `$dynamicRef`): dropped.
        }
        fix_up(&mut out, object);
        Value::Object(out)
    }

    /// Whether a property's schema (through its `$ref`s) is read-only.
    fn is_read_only(&self, schema: &Value) -> bool {
        let mut current = schema;
        for _ in 0..MAX_DEPTH {
            if current.get("readOnly") == Some(&Value::Bool(true)) {
                return true;
            }
            match current.get("$ref").and_then(Value::as_str).and_then(|r| resolve_pointer(self.doc, r)) {
                Some(next) => current = next,
                None => return false,
            }
        }
        false
    }
}

/// Rewrites what 3.0 says differently from 2020-12, and keeps `required` consistent with
/// `properties` (read-only properties were left out).
fn fix_up(out: &mut Map<String, Value>, original: &Map<String, Value>) {
    // 3.0: `exclusiveMinimum: true` next to `minimum`; 2020-12: `exclusiveMinimum: <number>`.
    for (exclusive, bound) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        match out.get(exclusive) {
            Some(Value::Bool(true)) => match out.remove(bound) {
                Some(limit) if limit.is_number() => {
                    out.insert(exclusive.into(), limit);
                }
                _ => {
                    out.remove(exclusive);
                }
            },
            Some(Value::Number(_)) | None => {}
            Some(_) => {
                out.remove(exclusive);
            }
        }
    }
    // 3.0: `nullable: true`.
    if original.get("nullable") == Some(&Value::Bool(true)) {
        match out.get_mut("type") {
            Some(Value::String(t)) => {
                let t = t.clone();
                if t != "null" {
                    out.insert("type".into(), json!([t, "null"]));
                }
            }
            Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => types.push(json!("null")),
            _ => {}
        }
        if let Some(Value::Array(values)) = out.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
    }
    for key in ["enum", "examples"] {
        if out.get(key).is_some_and(|v| !v.is_array()) {
            out.remove(key);
        }
    }
    if let Some(Value::Array(required)) = out.get("required")
        && let Some(Value::Object(properties)) = out.get("properties")
        && original.get("properties").is_some()
    {
        // Drop only the names whose property was left out (read-only), not names the schema
        // requires without describing them.
        let dropped: Vec<&String> = original
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().filter(|k| !properties.contains_key(*k)).collect())
            .unwrap_or_default();
        let kept: Vec<Value> =
            required.iter().filter(|n| !n.as_str().is_some_and(|n| dropped.iter().any(|d| *d == n))).cloned().collect();
        out.insert("required".into(), Value::Array(kept));
    }
    if out.get("required").is_some_and(|r| r.as_array().is_some_and(Vec::is_empty)) {
        out.remove("required");
    }
}

/// The value a local reference (`#/components/schemas/Pet`) points at.
/// The serialized size of `value` (near enough: strings without escapes), or something over
/// `limit` as soon as it is known to be over: the walk stops there, so sizing a huge value costs
/// no more than `limit`.
pub(crate) fn json_size(value: &Value, limit: usize) -> usize {
    fn walk(value: &Value, size: &mut usize, limit: usize) {
        if *size > limit {
            return;
        }
        match value {
            Value::Null | Value::Bool(_) => *size += 5,
            Value::Number(_) => *size += 8,
            Value::String(s) => *size += s.len() + 2,
            Value::Array(items) => {
                *size += 2;
                for item in items {
                    *size += 1;
                    walk(item, size, limit);
                    if *size > limit {
                        return;
                    }
                }
            }
            Value::Object(map) => {
                *size += 2;
                for (k, v) in map {
                    *size += k.len() + 4;
                    walk(v, size, limit);
                    if *size > limit {
                        return;
                    }
                }
            }
        }
    }
    let mut size = 0;
    walk(value, &mut size, limit);
    size
}

pub(crate) fn resolve_pointer<'v>(doc: &'v Value, reference: &str) -> Option<&'v Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(doc);
    }
    let decoded = percent_decode(pointer);
    doc.pointer(&decoded)
}

/// `%7B` and the like in a reference's fragment (a JSON pointer in a URI).
fn percent_decode(s: &str) -> String {
    if !s.contains('%') {
        return s.to_owned();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}

/// Follows `$ref`s of a non-schema object (a parameter, a request body, a path item) to the
/// object itself; `None` when one does not resolve or they loop.
pub(crate) fn deref<'v>(doc: &'v Value, value: &'v Value) -> Option<&'v Value> {
    let mut current = value;
    for _ in 0..MAX_DEPTH {
        match current.get("$ref").and_then(Value::as_str) {
            Some(r) => current = resolve_pointer(doc, r)?,
            None => return Some(current),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openapi_keywords_are_rewritten_or_dropped() {
        let doc = json!({});
        let mut c = Converter::new(&doc, true);
        let out = c.convert(&json!({
            "type": "object",
            "discriminator": {"propertyName": "kind"},
            "xml": {"name": "x"},
            "x-internal": true,
            "required": ["id", "name"],
            "properties": {
                "id": {"type": "integer", "readOnly": true},
                "name": {"type": "string", "nullable": true, "example": "Rex", "externalDocs": {}},
                "age": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
                "kind": {"type": "string", "enum": ["a", "b"], "nullable": true},
                "file": {"type": "file"}
            }
        }));
        assert_eq!(
            out,
            json!({
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": ["string", "null"], "examples": ["Rex"]},
                    "age": {"type": "integer", "exclusiveMinimum": 0},
                    "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
                    "file": {}
                }
            })
        );
        assert!(c.notes.is_empty());
    }

    #[test]
    fn refs_are_inlined_and_cycles_cut() {
        let doc = json!({"components": {"schemas": {
            "Node": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Node"}, "v": {"$ref": "#/components/schemas/V"}}},
            "V": {"type": "string", "description": "a value"}
        }}});
        let mut c = Converter::new(&doc, true);
        let out = c.convert(&json!({"$ref": "#/components/schemas/Node"}));
        assert_eq!(
            out,
            json!({"type": "object", "properties": {"next": {}, "v": {"type": "string", "description": "a value"}}})
        );
        assert_eq!(c.notes.len(), 1);
        assert!(c.notes[0].contains("#/components/schemas/Node contains itself"), "{:?}", c.notes);
        let mut c = Converter::new(&doc, true);
        assert_eq!(c.convert(&json!({"$ref": "other.yaml#/X"})), json!({}));
        assert!(c.notes[0].contains("could not be resolved"));
        assert_eq!(resolve_pointer(&json!({"a/b": {"c d": 1}}), "#/a~1b/c%20d"), Some(&json!(1)));
    }
}
