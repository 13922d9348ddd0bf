//! Registering tools: unique names across sources, usable schemas.

mod support;

use serde_json::json;
use std::sync::Arc;
use support::*;
use switchboard_core::{RegistryError, ToolDef, ToolOutput, ToolRegistry, ToolSource};

fn named(name: &str, source: ToolSource, parameters: serde_json::Value) -> TestTool {
    let mut def = ToolDef::new(name, "d", parameters);
    def.source = source;
    TestTool::new(def, |_args, _ctx| async move { Ok(ToolOutput::text("ok")) })
}

#[test]
fn a_duplicate_name_is_an_error_naming_both_sources_and_changes_nothing() {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(named("search", ToolSource::Builtin, json!({"type": "object"})))).unwrap();
    let clash = named("search", ToolSource::Mcp { server: "files".into() }, json!({"type": "object"}));
    let err = registry.register(Arc::new(clash)).unwrap_err();

    assert!(
        matches!(
            &err,
            RegistryError::Duplicate { name, existing: ToolSource::Builtin, new: ToolSource::Mcp { server } }
                if name == "search" && server == "files"
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("'search'"), "{message}");
    assert!(message.contains("built-in"), "{message}");
    assert!(message.contains("MCP server 'files'"), "{message}");
    assert_eq!(registry.len(), 1);
    assert_eq!(registry.get("search").unwrap().def().source, ToolSource::Builtin, "never silently overridden");
}

#[test]
fn the_same_name_from_two_other_sources_is_still_a_duplicate() {
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(named("x", ToolSource::OpenApi { document: "pets".into() }, json!({})))).unwrap();
    let err = registry.register(Arc::new(named("x", ToolSource::Http, json!({})))).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("OpenAPI 'pets'") && message.contains("HTTP tool"), "{message}");
}

#[test]
fn an_invalid_schema_is_an_error_and_the_tool_is_not_added() {
    let cases = [
        ("unknown type", json!({"type": "nonsense"})),
        ("type is not a string", json!({"type": 5})),
        ("required is not an array", json!({"type": "object", "required": "n"})),
    ];
    for (name, schema) in cases {
        let mut registry = ToolRegistry::new();
        let err = registry.register(Arc::new(named("bad", ToolSource::Http, schema))).unwrap_err();
        assert!(matches!(&err, RegistryError::InvalidSchema { name, .. } if name == "bad"), "{name}: {err:?}");
        assert!(err.to_string().contains("'bad'"), "{name}");
        assert!(registry.is_empty(), "{name}");
    }
}

#[test]
fn an_empty_name_is_an_error() {
    let mut registry = ToolRegistry::new();
    let err = registry.register(Arc::new(named("", ToolSource::Builtin, json!({})))).unwrap_err();
    assert!(matches!(err, RegistryError::EmptyName));
}

#[test]
fn every_test_tool_registers_and_validation_names_the_field() {
    let kit = Kit::standard();
    assert_eq!(kit.registry.len(), all_tools().len());
    let problem = kit.registry.validate("count", &json!({"n": "three"})).unwrap_err();
    assert!(problem.contains("/n"), "{problem}");
    let problem = kit.registry.validate("count", &json!({})).unwrap_err();
    assert!(problem.contains("\"n\""), "{problem}");
    assert!(kit.registry.validate("count", &json!({"n": 3})).is_ok());
}

#[test]
fn a_builtin_schema_is_compiled_at_the_first_call_and_a_broken_one_fails_only_its_calls() {
    // Built-in schemas are compiled lazily (start-up cost); a broken one (which the tools
    // crate's tests forbid) must still give the model a clear error, never a panic.
    let mut registry = ToolRegistry::new();
    registry.register(Arc::new(named("broken", ToolSource::Builtin, json!({"type": "nonsense"})))).unwrap();
    registry
        .register(Arc::new(named(
            "fine",
            ToolSource::Builtin,
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}),
        )))
        .unwrap();
    assert_eq!(registry.len(), 2);
    for _ in 0..2 {
        let problem = registry.validate("broken", &json!({})).unwrap_err();
        assert!(problem.contains("'broken' has an invalid parameter schema"), "{problem}");
    }
    assert!(registry.validate("fine", &json!({"n": 1})).is_ok());
    let problem = registry.validate("fine", &json!({"n": 1, "m": 2})).unwrap_err();
    assert!(problem.contains("'m'") && !problem.contains("invalid parameter schema"), "{problem}");
}
