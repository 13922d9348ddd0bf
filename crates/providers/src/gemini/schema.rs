//! Rewriting a tool's JSON Schema into the subset Gemini's `FunctionDeclaration.parameters`
//! accepts. Pure.
//!
//! Gemini takes a "select subset of an OpenAPI 3.0 schema object" and answers 400 to anything
//! outside it (`Unknown name "additionalProperties"`, `Cannot find field`), so one MCP tool with
//! an ordinary JSON Schema would make every request of a chat fail. The promise here is: whatever
//! schema a tool declares, the converted one is never the reason Gemini rejects a request. What
//! the conversion loses is not lost for correctness: the loop still validates the model's
//! arguments against the tool's *original* schema and tells the model what was wrong.
//!
//! Kept (the documented subset, per node): `type` (one name, upper case), `description`,
//! `nullable`, `properties` and `required` (objects only; `required` filtered to properties that
//! exist), `items` (arrays only), `enum` (strings only), `format` (only those Gemini takes:
//! `enum` and `date-time` for strings, `int32`/`int64` for integers, `float`/`double` for
//! numbers), `minimum`/`maximum`, `minLength`/`maxLength`, `minItems`/`maxItems`,
//! `minProperties`/`maxProperties`, `anyOf`.
//!
//! Rewritten:
//! - `$ref` to `#/$defs/...`, `#/definitions/...` or any local JSON pointer is inlined; a
//!   reference that cannot be resolved, or that refers back into itself (a recursive schema),
//!   becomes a permissive object.
//! - `allOf` is merged into one schema (properties and `required` united, first value wins for
//!   anything else); `oneOf` becomes `anyOf`; `anyOf` branches of `{"type": "null"}` become
//!   `nullable`, and a single remaining branch replaces the `anyOf`. Branches that only add
//!   constraints (`{"required": [...]}`) are dropped.
//! - A type array: `["string", "null"]` is `STRING` + `nullable`; several non-null types become
//!   an `anyOf` with one branch per type, each with that type's keywords.
//! - `const` is a one-value `enum` on strings.
//! - A missing type is inferred (`properties` -> object, `items` -> array, `enum` values, ...);
//!   a schema that allows anything is `STRING`, the one type every value can be written as.
//! - `title` becomes the description when there is none.
//!
//! Dropped, with a short hint appended to the description where it tells the model something:
//! `pattern` (JSON Schema regexes are ECMA-262, Gemini's are not; an unparsable one is a 400),
//! `default`, enums and consts of non-strings (Gemini's enum is strings only), other `format`s,
//! `exclusiveMinimum`/`exclusiveMaximum`. Dropped silently: `$schema`, `$id`, `$comment`,
//! `$defs`, `definitions`, `additionalProperties`, `patternProperties`, `propertyNames`,
//! `unevaluated*`, `dependent*`, `if`/`then`/`else`, `not`, `examples`, `readOnly`, `writeOnly`,
//! `deprecated`, `contentMediaType`, `uniqueItems`, `multipleOf`, `contains`, and anything else.
//!
//! Two shapes Gemini refuses that JSON Schema allows: an object root without properties ("should
//! be non-empty for OBJECT type") — a tool without arguments is declared without `parameters`
//! ([`function_parameters`] returns `None`) — and an array without `items`, which get string
//! items. A nested object without properties (a free-form map) stays a bare `OBJECT`.

use serde_json::{Map, Value, json};

/// Deeper than this, a schema is described as a permissive value: a bound on the work a hostile
/// or generated schema can cause, far above anything a tool needs.
const MAX_DEPTH: usize = 24;

/// The string formats Gemini's API takes; any other makes the request fail.
const STRING_FORMATS: &[&str] = &["enum", "date-time"];

/// The `parameters` of a function declaration for a tool whose arguments are described by
/// `schema`, or `None` when the tool takes no arguments (Gemini refuses an object root without
/// properties, so such a tool is declared without parameters).
pub fn function_parameters(schema: &Value) -> Option<Value> {
    let converted = to_gemini(schema);
    let has_properties = converted.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
    (converted.get("type").and_then(Value::as_str) == Some("OBJECT") && has_properties).then_some(converted)
}

/// `schema` rewritten into the subset Gemini accepts (see the module docs).
pub fn to_gemini(schema: &Value) -> Value {
    Converter { root: schema, expanding: Vec::new() }.convert(schema, 0)
}

struct Converter<'a> {
    root: &'a Value,
    /// The `$ref`s being inlined on the current path: meeting one again is recursion.
    expanding: Vec<String>,
}

impl Converter<'_> {
    fn convert(&mut self, node: &Value, depth: usize) -> Value {
        let Some(obj) = node.as_object() else {
            // `true`, `false` or garbage: nothing Gemini can express; a string is always writable.
            return json!({"type": "STRING"});
        };
        if depth > MAX_DEPTH {
            return permissive(obj);
        }
        if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
            return self.inline_ref(reference, obj, depth);
        }
        if let Some(all_of) = obj.get("allOf").and_then(Value::as_array) {
            let merged = self.merge_all_of(obj, all_of);
            return self.convert(&Value::Object(merged), depth + 1);
        }
        let branches: Vec<&Value> = ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| obj.get(*k).and_then(Value::as_array))
            .flatten()
            .filter(|b| !is_constraint_only(b))
            .collect();
        if !branches.is_empty() {
            return self.union(obj, &branches, depth);
        }
        self.typed(obj, depth)
    }

    /// Inlines a local reference; siblings of `$ref` (a description, usually) win over the target's.
    fn inline_ref(&mut self, reference: &str, obj: &Map<String, Value>, depth: usize) -> Value {
        let target = reference.strip_prefix('#').and_then(|pointer| self.root.pointer(pointer));
        let Some(target) = target.filter(|_| !self.expanding.iter().any(|r| r == reference)) else {
            return permissive(obj);
        };
        let mut merged = target.as_object().cloned().unwrap_or_default();
        for (k, v) in obj {
            if k != "$ref" {
                merged.insert(k.clone(), v.clone());
            }
        }
        self.expanding.push(reference.to_owned());
        let out = self.convert(&Value::Object(merged), depth + 1);
        self.expanding.pop();
        out
    }

    fn resolved(&self, node: &Value) -> Value {
        match node.get("$ref").and_then(Value::as_str) {
            Some(r) if !self.expanding.iter().any(|e| e == r) => {
                r.strip_prefix('#').and_then(|p| self.root.pointer(p)).cloned().unwrap_or(Value::Null)
            }
            _ => node.clone(),
        }
    }

    fn merge_all_of(&self, obj: &Map<String, Value>, members: &[Value]) -> Map<String, Value> {
        let mut merged = obj.clone();
        merged.remove("allOf");
        for member in members {
            let Value::Object(member) = self.resolved(member) else { continue };
            for (k, v) in member {
                match (k.as_str(), merged.get_mut(&k)) {
                    ("properties", Some(Value::Object(props))) => {
                        if let Value::Object(more) = v {
                            for (name, schema) in more {
                                props.entry(name).or_insert(schema);
                            }
                        }
                    }
                    ("required", Some(Value::Array(req))) => {
                        if let Value::Array(more) = v {
                            req.extend(more);
                        }
                    }
                    (_, Some(_)) => {}
                    (_, None) => {
                        merged.insert(k, v);
                    }
                }
            }
        }
        merged
    }

    /// `anyOf`/`oneOf`: null branches become `nullable`; one remaining branch replaces the union.
    fn union(&mut self, obj: &Map<String, Value>, branches: &[&Value], depth: usize) -> Value {
        let mut base = obj.clone();
        base.remove("anyOf");
        base.remove("oneOf");
        // A node with its own structure and a union of alternatives: each alternative is the base
        // with the branch merged in (as `allOf` would do).
        let structured = ["type", "properties", "items"].iter().any(|k| base.contains_key(*k));
        let mut nullable = obj.get("nullable") == Some(&Value::Bool(true));
        let mut converted = Vec::new();
        for branch in branches {
            let resolved = self.resolved(branch);
            if resolved.get("type").and_then(Value::as_str) == Some("null") {
                nullable = true;
                continue;
            }
            let branch_schema = if structured {
                let mut only_base = base.clone();
                only_base.remove("description");
                only_base.remove("title");
                Value::Object(self.merge_all_of(&only_base, std::slice::from_ref(branch)))
            } else {
                (*branch).clone()
            };
            converted.push(self.convert(&branch_schema, depth + 1));
        }
        let mut out = match converted.len() {
            0 => json!({"type": "STRING"}),
            1 => converted.pop().unwrap_or_default(),
            _ => json!({"anyOf": converted}),
        };
        if nullable {
            out["nullable"] = Value::Bool(true);
        }
        if let Some(description) = description_of(obj, Vec::new()) {
            out["description"] = Value::String(description);
        }
        out
    }

    /// A node without `$ref`, `allOf` or a union.
    fn typed(&mut self, obj: &Map<String, Value>, depth: usize) -> Value {
        let mut nullable = obj.get("nullable") == Some(&Value::Bool(true));
        let types: Vec<String> = match obj.get("type") {
            Some(Value::String(t)) => vec![t.to_ascii_lowercase()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_ascii_lowercase).collect(),
            _ => vec![infer_type(obj).to_owned()],
        };
        if types.iter().any(|t| t == "null") {
            nullable = true;
        }
        let mut non_null: Vec<String> = types.into_iter().filter(|t| t != "null").collect();
        non_null.dedup();
        let mut out = match non_null.as_slice() {
            [] => json!({"type": "STRING"}),
            [one] => self.one_type(one, obj, depth),
            several => {
                let branches: Vec<Value> = several
                    .iter()
                    .map(|t| {
                        let mut b = self.one_type(t, obj, depth);
                        if let Some(m) = b.as_object_mut() {
                            m.remove("description");
                        }
                        b
                    })
                    .collect();
                let mut u = json!({"anyOf": branches});
                if let Some(d) = description_of(obj, Vec::new()) {
                    u["description"] = Value::String(d);
                }
                u
            }
        };
        if nullable {
            out["nullable"] = Value::Bool(true);
        }
        out
    }

    /// The schema of `obj` read as type `ty` (a JSON Schema type name, lower case).
    fn one_type(&mut self, ty: &str, obj: &Map<String, Value>, depth: usize) -> Value {
        let mut hints = Vec::new();
        let mut out = Map::new();
        let gemini_type = match ty {
            "string" => "STRING",
            "integer" => "INTEGER",
            "number" => "NUMBER",
            "boolean" => "BOOLEAN",
            "array" => "ARRAY",
            "object" => "OBJECT",
            // An unknown type name: a string can carry any value.
            _ => "STRING",
        };
        out.insert("type".into(), json!(gemini_type));
        let values: Option<Vec<Value>> = match (obj.get("enum"), obj.get("const")) {
            (Some(Value::Array(vs)), _) if !vs.is_empty() => Some(vs.clone()),
            (_, Some(c)) => Some(vec![c.clone()]),
            _ => None,
        };
        match gemini_type {
            "STRING" => {
                if let Some(values) = values {
                    let strings: Vec<Value> = values.iter().filter(|v| v.is_string()).cloned().collect();
                    if !strings.is_empty() {
                        out.insert("enum".into(), Value::Array(strings));
                    }
                }
                match obj.get("format").and_then(Value::as_str) {
                    Some(f) if STRING_FORMATS.contains(&f) => {
                        out.insert("format".into(), json!(f));
                    }
                    Some(f) => hints.push(format!("Format: {f}.")),
                    None => {}
                }
                copy_count(obj, &mut out, &["minLength", "maxLength"]);
                if let Some(p) = obj.get("pattern").and_then(Value::as_str) {
                    hints.push(format!("Must match the regular expression {p}."));
                }
            }
            "INTEGER" | "NUMBER" => {
                let formats: &[&str] =
                    if gemini_type == "INTEGER" { &["int32", "int64"] } else { &["float", "double"] };
                if let Some(f) = obj.get("format").and_then(Value::as_str).filter(|f| formats.contains(f)) {
                    out.insert("format".into(), json!(f));
                }
                for k in ["minimum", "maximum"] {
                    if let Some(n) = obj.get(k).filter(|v| v.as_f64().is_some_and(f64::is_finite)) {
                        out.insert(k.into(), n.clone());
                    }
                }
                for (k, word) in [("exclusiveMinimum", "Greater than"), ("exclusiveMaximum", "Less than")] {
                    if let Some(n) = obj.get(k).filter(|v| v.is_number()) {
                        hints.push(format!("{word} {n}."));
                    }
                }
                enum_hint(values.as_deref(), &mut hints);
            }
            "BOOLEAN" => enum_hint(values.as_deref(), &mut hints),
            "ARRAY" => {
                let items = match (obj.get("items"), obj.get("prefixItems")) {
                    (Some(Value::Array(tuple)), _) | (None, Some(Value::Array(tuple))) if !tuple.is_empty() => {
                        let mut branches: Vec<Value> = tuple.iter().map(|s| self.convert(s, depth + 1)).collect();
                        branches.dedup();
                        if branches.len() == 1 {
                            branches.pop().unwrap_or_default()
                        } else {
                            json!({"anyOf": branches})
                        }
                    }
                    (Some(items @ Value::Object(_)), _) => self.convert(items, depth + 1),
                    _ => json!({"type": "STRING"}),
                };
                out.insert("items".into(), items);
                copy_count(obj, &mut out, &["minItems", "maxItems"]);
            }
            "OBJECT" => {
                let mut props = Map::new();
                if let Some(Value::Object(p)) = obj.get("properties") {
                    for (name, schema) in p {
                        props.insert(name.clone(), self.convert(schema, depth + 1));
                    }
                }
                let mut required: Vec<Value> = Vec::new();
                for name in obj.get("required").and_then(Value::as_array).into_iter().flatten() {
                    if name.as_str().is_some_and(|n| props.contains_key(n)) && !required.contains(name) {
                        required.push(name.clone());
                    }
                }
                if !props.is_empty() {
                    out.insert("properties".into(), Value::Object(props));
                }
                if !required.is_empty() {
                    out.insert("required".into(), Value::Array(required));
                }
                copy_count(obj, &mut out, &["minProperties", "maxProperties"]);
            }
            _ => {}
        }
        if let Some(d) = obj.get("default") {
            hints.push(format!("Default: {}.", shorten(&d.to_string(), 80)));
        }
        if let Some(d) = description_of(obj, hints) {
            out.insert("description".into(), Value::String(d));
        }
        Value::Object(out)
    }
}

/// An object that accepts any properties, for what cannot be described (recursion, depth).
fn permissive(obj: &Map<String, Value>) -> Value {
    let mut out = json!({"type": "OBJECT"});
    if let Some(d) = description_of(obj, Vec::new()) {
        out["description"] = Value::String(d);
    }
    out
}

/// A union branch that adds constraints without saying what the value is (`{"required": ["a"]}`):
/// Gemini cannot use it, and the loop's validation still applies it.
fn is_constraint_only(branch: &Value) -> bool {
    let Some(b) = branch.as_object() else { return false };
    !["type", "$ref", "properties", "items", "enum", "const", "anyOf", "oneOf", "allOf"]
        .iter()
        .any(|k| b.contains_key(*k))
}

fn infer_type(obj: &Map<String, Value>) -> &'static str {
    let has = |k: &str| obj.contains_key(k);
    if has("properties") || has("additionalProperties") || has("required") || has("patternProperties") {
        return "object";
    }
    if has("items") || has("prefixItems") || has("minItems") || has("maxItems") {
        return "array";
    }
    let values: Vec<&Value> = match (obj.get("enum"), obj.get("const")) {
        (Some(Value::Array(vs)), _) => vs.iter().collect(),
        (_, Some(c)) => vec![c],
        _ => Vec::new(),
    };
    if !values.is_empty() {
        let all = |f: fn(&Value) -> bool| values.iter().all(|v| f(v));
        return if all(Value::is_boolean) {
            "boolean"
        } else if all(|v| v.is_i64() || v.is_u64()) {
            "integer"
        } else if all(Value::is_number) {
            "number"
        } else {
            "string"
        };
    }
    if has("minimum") || has("maximum") || has("exclusiveMinimum") || has("exclusiveMaximum") {
        return "number";
    }
    "string"
}

/// Copies non-negative integer counts (`minItems`, ...), which Gemini reads as int64.
fn copy_count(obj: &Map<String, Value>, out: &mut Map<String, Value>, keys: &[&str]) {
    for k in keys {
        if let Some(n) = obj.get(*k).and_then(Value::as_u64) {
            out.insert((*k).into(), json!(n));
        }
    }
}

fn enum_hint(values: Option<&[Value]>, hints: &mut Vec<String>) {
    if let Some(values) = values {
        let listed: Vec<String> = values.iter().take(50).map(Value::to_string).collect();
        hints.push(format!("One of: {}.", listed.join(", ")));
    }
}

/// The description (or title), followed by the hints.
fn description_of(obj: &Map<String, Value>, hints: Vec<String>) -> Option<String> {
    let base = ["description", "title"]
        .iter()
        .filter_map(|k| obj.get(*k).and_then(Value::as_str))
        .map(str::trim)
        .find(|d| !d.is_empty());
    let mut parts: Vec<String> = base.map(str::to_owned).into_iter().collect();
    parts.extend(hints);
    (!parts.is_empty()).then(|| parts.join(" "))
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The keys Gemini's `Schema` object takes (what the mock provider also enforces).
    const ALLOWED: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    ];

    /// Fails with the path of the first thing Gemini would refuse.
    pub(crate) fn assert_gemini_subset(schema: &Value, path: &str) {
        let obj = schema.as_object().unwrap_or_else(|| panic!("{path}: not an object: {schema}"));
        for k in obj.keys() {
            assert!(ALLOWED.contains(&k.as_str()), "{path}: unknown field {k:?} in {schema}");
        }
        let ty = obj.get("type").map(|t| t.as_str().unwrap_or_else(|| panic!("{path}: type {t} is not one name")));
        assert!(ty.is_some() || obj.contains_key("anyOf"), "{path}: no type in {schema}");
        if let Some(ty) = ty {
            assert!(["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"].contains(&ty), "{path}: type {ty}");
            if ty != "OBJECT" {
                assert!(!obj.contains_key("properties") && !obj.contains_key("required"), "{path}: properties on {ty}");
            }
            if ty != "STRING" {
                assert!(!obj.contains_key("enum"), "{path}: enum on {ty}");
            }
            if ty == "ARRAY" {
                assert!(obj.contains_key("items"), "{path}: array without items");
            } else {
                assert!(!obj.contains_key("items"), "{path}: items on {ty}");
            }
            if let Some(f) = obj.get("format").and_then(Value::as_str) {
                let ok: &[&str] = match ty {
                    "STRING" => STRING_FORMATS,
                    "INTEGER" => &["int32", "int64"],
                    "NUMBER" => &["float", "double"],
                    _ => &[],
                };
                assert!(ok.contains(&f), "{path}: format {f} on {ty}");
            }
        }
        if let Some(e) = obj.get("enum") {
            assert!(e.as_array().is_some_and(|e| !e.is_empty() && e.iter().all(Value::is_string)), "{path}: enum {e}");
        }
        let props = obj.get("properties").and_then(Value::as_object);
        for name in obj.get("required").and_then(Value::as_array).into_iter().flatten() {
            let name = name.as_str().unwrap();
            assert!(props.is_some_and(|p| p.contains_key(name)), "{path}: required {name} is not a property");
        }
        for (name, p) in props.into_iter().flatten() {
            assert_gemini_subset(p, &format!("{path}.properties.{name}"));
        }
        if let Some(items) = obj.get("items") {
            assert_gemini_subset(items, &format!("{path}.items"));
        }
        for (i, b) in obj.get("anyOf").and_then(Value::as_array).into_iter().flatten().enumerate() {
            assert_gemini_subset(b, &format!("{path}.anyOf[{i}]"));
        }
    }

    /// The built-in tools' schemas as `crates/tools` declares them (kept in step by the CLI's
    /// Gemini end-to-end test, which offers the real ones to the strict mock).
    pub(crate) fn builtin_schemas() -> Vec<(&'static str, Value)> {
        vec![
            (
                "get_time",
                json!({"type": "object", "properties": {"timezone": {"type": "string", "description": "IANA time zone name such as Europe/Paris or America/New_York. Defaults to UTC."}}, "additionalProperties": false}),
            ),
            (
                "web_fetch",
                json!({"type": "object", "properties": {"url": {"type": "string", "description": "Absolute http:// or https:// URL of the page."}, "max_chars": {"type": "integer", "minimum": 100, "maximum": 200000, "description": "Most characters of content to return."}}, "required": ["url"], "additionalProperties": false}),
            ),
            (
                "web_search",
                json!({"type": "object", "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 400, "description": "What to search for."}, "max_results": {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many results to return."}}, "required": ["query"], "additionalProperties": false}),
            ),
        ]
    }

    /// An MCP server's tool as such servers publish them (a zod-to-json-schema shape): `$schema`,
    /// `$ref`s into `definitions`, defaults, a nullable via a type array, `oneOf`, `const`.
    pub(crate) fn mcp_schema() -> Value {
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "File to edit", "format": "uri-reference"},
                "edits": {"type": "array", "items": {"$ref": "#/definitions/Edit"}},
                "dryRun": {"type": "boolean", "default": false, "description": "Preview only"},
                "encoding": {"type": ["string", "null"], "enum": ["utf-8", "latin1", null]},
                "mode": {"oneOf": [{"const": "fast"}, {"const": "safe"}]},
                "target": {"oneOf": [{"$ref": "#/definitions/Edit"}, {"type": "integer", "exclusiveMinimum": 0}]},
                "tree": {"$ref": "#/definitions/Node"}
            },
            "required": ["path", "edits", "ghost"],
            "additionalProperties": false,
            "definitions": {
                "Edit": {
                    "type": "object",
                    "title": "One replacement",
                    "properties": {"oldText": {"type": "string", "pattern": "^.+$"}, "newText": {"type": "string"}},
                    "required": ["oldText", "newText"],
                    "additionalProperties": false
                },
                "Node": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}}
                }
            }
        })
    }

    #[test]
    fn real_world_schemas_convert_into_the_subset() {
        let mut schemas = builtin_schemas();
        schemas.push(("mcp", mcp_schema()));
        for (name, schema) in schemas {
            let p = function_parameters(&schema).unwrap_or_else(|| panic!("{name} has parameters"));
            assert_gemini_subset(&p, name);
        }
        let p = function_parameters(&builtin_schemas()[1].1).unwrap();
        assert_eq!(
            p,
            json!({"type": "OBJECT", "properties": {
                "url": {"type": "STRING", "description": "Absolute http:// or https:// URL of the page."},
                "max_chars": {"type": "INTEGER", "minimum": 100, "maximum": 200000, "description": "Most characters of content to return."}
            }, "required": ["url"]})
        );
    }

    #[test]
    fn the_mcp_schema_keeps_its_meaning_where_gemini_can_say_it() {
        let p = function_parameters(&mcp_schema()).unwrap();
        let props = &p["properties"];
        assert_eq!(p["required"], json!(["path", "edits"]), "a required name that is no property is dropped");
        assert_eq!(props["path"], json!({"type": "STRING", "description": "File to edit Format: uri-reference."}));
        assert_eq!(
            props["edits"]["items"],
            json!({"type": "OBJECT", "description": "One replacement", "properties": {
                "oldText": {"type": "STRING", "description": "Must match the regular expression ^.+$."},
                "newText": {"type": "STRING"}
            }, "required": ["oldText", "newText"]}),
            "$ref inlined from definitions"
        );
        assert_eq!(props["dryRun"], json!({"type": "BOOLEAN", "description": "Preview only Default: false."}));
        assert_eq!(props["encoding"], json!({"type": "STRING", "enum": ["utf-8", "latin1"], "nullable": true}));
        assert_eq!(
            props["mode"],
            json!({"anyOf": [{"type": "STRING", "enum": ["fast"]}, {"type": "STRING", "enum": ["safe"]}]}),
            "oneOf is anyOf, const a one-value enum"
        );
        assert_eq!(props["target"]["anyOf"][1], json!({"type": "INTEGER", "description": "Greater than 0."}));
        // The recursive schema is described once, then its recursion as a permissive object.
        let tree = &props["tree"];
        assert_eq!(tree["properties"]["children"]["items"], json!({"type": "OBJECT"}));
    }

    #[test]
    fn each_rewrite_of_the_table() {
        let cases: Vec<(&str, Value, Value)> = vec![
            (
                "type array with null",
                json!({"type": ["integer", "null"]}),
                json!({"type": "INTEGER", "nullable": true}),
            ),
            (
                "several types",
                json!({"type": ["string", "number"], "description": "d", "minimum": 1}),
                json!({"anyOf": [{"type": "STRING"}, {"type": "NUMBER", "minimum": 1}], "description": "d"}),
            ),
            (
                "optional via anyOf null",
                json!({"anyOf": [{"type": "string"}, {"type": "null"}], "description": "d"}),
                json!({"type": "STRING", "nullable": true, "description": "d"}),
            ),
            ("const string", json!({"const": "x"}), json!({"type": "STRING", "enum": ["x"]})),
            (
                "integer enum",
                json!({"type": "integer", "enum": [1, 2]}),
                json!({"type": "INTEGER", "description": "One of: 1, 2."}),
            ),
            (
                "inferred integer enum",
                json!({"enum": [1, 2]}),
                json!({"type": "INTEGER", "description": "One of: 1, 2."}),
            ),
            (
                "string format kept",
                json!({"type": "string", "format": "date-time"}),
                json!({"type": "STRING", "format": "date-time"}),
            ),
            ("number format", json!({"type": "number", "format": "int32"}), json!({"type": "NUMBER"})),
            ("array without items", json!({"type": "array"}), json!({"type": "ARRAY", "items": {"type": "STRING"}})),
            (
                "tuple items",
                json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 2}),
                json!({"type": "ARRAY", "items": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}, "minItems": 2}),
            ),
            (
                "free-form map",
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                json!({"type": "OBJECT"}),
            ),
            ("anything", json!({}), json!({"type": "STRING"})),
            ("true", json!(true), json!({"type": "STRING"})),
            (
                "title as description",
                json!({"type": "string", "title": "T"}),
                json!({"type": "STRING", "description": "T"}),
            ),
            (
                "unresolvable ref",
                json!({"$ref": "https://example.com/s.json", "description": "d"}),
                json!({"type": "OBJECT", "description": "d"}),
            ),
            (
                "allOf merged",
                json!({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, {"properties": {"b": {"type": "boolean"}}, "required": ["b"]}]}),
                json!({"type": "OBJECT", "properties": {"a": {"type": "STRING"}, "b": {"type": "BOOLEAN"}}, "required": ["a", "b"]}),
            ),
            (
                "constraint-only oneOf dropped",
                json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}),
                json!({"type": "OBJECT", "properties": {"a": {"type": "STRING"}, "b": {"type": "STRING"}}}),
            ),
            ("nullable kept", json!({"type": "string", "nullable": true}), json!({"type": "STRING", "nullable": true})),
            ("only null", json!({"type": "null"}), json!({"type": "STRING", "nullable": true})),
        ];
        for (name, input, expected) in cases {
            let out = to_gemini(&input);
            assert_eq!(out, expected, "{name}");
            assert_gemini_subset(&out, name);
        }
    }

    #[test]
    fn a_tool_without_arguments_has_no_parameters() {
        for schema in [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            json!({}),
        ] {
            assert_eq!(function_parameters(&schema), None, "{schema}");
        }
    }

    #[test]
    fn hostile_schemas_stay_bounded() {
        // Self-reference at the root and a schema nested far deeper than the bound.
        let schema = json!({"$ref": "#", "properties": {"x": {"$ref": "#"}}});
        assert_gemini_subset(&to_gemini(&schema), "self");
        let mut deep = json!({"type": "string"});
        for _ in 0..200 {
            deep = json!({"type": "object", "properties": {"a": deep}});
        }
        assert_gemini_subset(&to_gemini(&deep), "deep");
    }
}
