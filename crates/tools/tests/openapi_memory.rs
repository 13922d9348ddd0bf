//! What a hostile OpenAPI document costs to import (issue 31, class 3): documents built to
//! explode — references that fan out ten ways over thirty levels, a huge enum referenced from
//! everywhere, YAML anchors expanding like the billion laughs, the largest documents of tiny
//! values — each cost under 100 MB at their peak, measured by a counting global allocator (its
//! own test binary, one test, so nothing else allocates meanwhile), and each is refused or capped
//! with a reason.

// A global allocator is `unsafe` to implement: this one only forwards to the system's and counts.
#![allow(unsafe_code)]

use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use switchboard_tools::openapi::{
    MAX_DOCUMENT_BYTES, MAX_DOCUMENT_TOOL_BYTES, MAX_JSON_VALUES, OpenApiError, OpenApiOptions, convert, parse,
};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator unchanged; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's layout is passed on as it is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let now = CURRENT.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const LIMIT: usize = 100 * 1024 * 1024;

/// The import pipeline on `text` (read, convert); its outcome, and the peak bytes it allocated
/// above what was allocated before (the text itself is the caller's).
fn import(text: &str) -> (Result<switchboard_tools::openapi::Converted, OpenApiError>, usize) {
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let outcome = parse(text).and_then(|doc| convert(&doc, &OpenApiOptions::default()));
    (outcome, PEAK.load(Ordering::Relaxed) - base)
}

fn document(paths: Value, schemas: Value) -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Hostile", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": paths,
        "components": {"schemas": schemas}
    })
}

/// `n` operations, each posting a body of `#/components/schemas/{body}`.
fn operations(n: usize, body: &str) -> Value {
    let mut paths = serde_json::Map::new();
    for i in 0..n {
        paths.insert(
            format!("/op{i}"),
            json!({"post": {"operationId": format!("op{i}"), "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{body}")}}}}}}),
        );
    }
    Value::Object(paths)
}

fn defined_bytes(c: &switchboard_tools::openapi::Converted) -> usize {
    c.operations
        .iter()
        .map(|o| {
            o.tool.name.len() + o.tool.description.len() + o.tool.parameters.as_ref().map_or(0, |p| p.to_string().len())
        })
        .sum()
}

#[test]
fn documents_built_to_explode_cost_under_100_mb_and_are_capped_with_a_reason() {
    let mut report = Vec::new();

    // 1. References fanning out ten ways over thirty levels (10^30 nodes inlined), 2000 times.
    let mut schemas = serde_json::Map::new();
    for level in 0..30 {
        let props: serde_json::Map<String, Value> = (0..10)
            .map(|p| (format!("p{p}"), json!({"$ref": format!("#/components/schemas/S{}", level + 1)})))
            .collect();
        schemas
            .insert(format!("S{level}"), json!({"type": "object", "description": "x".repeat(50), "properties": props}));
    }
    schemas.insert("S30".into(), json!({"type": "string"}));
    let text = document(operations(2000, "S0"), Value::Object(schemas)).to_string();
    let (outcome, peak) = import(&text);
    let c = outcome.expect("converted, with the large operations left out");
    assert!(
        c.notes.iter().any(|n| n.contains("left out: its parameters take more than 32 KiB")),
        "{:?}",
        &c.notes[..3]
    );
    assert!(defined_bytes(&c) <= MAX_DOCUMENT_TOOL_BYTES);
    report.push(("fan-out", peak));

    // 2. An enum of 200,000 values (about 2.6 MB) referenced from 50 properties, in 1000 operations.
    let values: Vec<String> = (0..200_000).map(|i| format!("v{i:07}")).collect();
    let props: serde_json::Map<String, Value> =
        (0..50).map(|p| (format!("p{p}"), json!({"$ref": "#/components/schemas/Big"}))).collect();
    let schemas = json!({"Big": {"type": "string", "enum": values}, "Body": {"type": "object", "properties": props}});
    let text = document(operations(1000, "Body"), schemas).to_string();
    let (outcome, peak) = import(&text);
    let c = outcome.expect("converted");
    assert!(c.operations.is_empty(), "every operation is too large");
    assert!(c.notes.iter().any(|n| n.contains("more than 32 KiB")), "{:?}", &c.notes[..1]);
    report.push(("huge enum", peak));

    // 3. Many small operations whose definitions add up past the document's budget.
    let props: serde_json::Map<String, Value> =
        (0..40).map(|p| (format!("field{p}"), json!({"type": "string", "description": "d".repeat(300)}))).collect();
    let text = document(operations(2000, "Body"), json!({"Body": {"type": "object", "properties": props}})).to_string();
    let (outcome, peak) = import(&text);
    let c = outcome.expect("converted");
    assert!(defined_bytes(&c) <= MAX_DOCUMENT_TOOL_BYTES);
    assert!(
        c.notes.iter().any(|n| n.contains("operations were left out: the document's tools would take more than 4 MiB")),
        "{:?}",
        c.notes.last()
    );
    report.push(("many operations", peak));

    // 4. YAML anchors nesting ten ways nine deep (the billion laughs).
    let mut yaml = String::from(
        "openapi: 3.0.3\ninfo: {title: L, version: '1'}\npaths: {}\nx-lol:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..10 {
        let prev = format!("*l{}", i - 1);
        yaml.push_str(&format!("  l{i}: &l{i} [{}]\n", [prev.as_str(); 10].join(", ")));
    }
    let (outcome, peak) = import(&yaml);
    assert!(matches!(outcome, Err(OpenApiError::Syntax { format: "YAML", .. })), "{outcome:?}");
    report.push(("billion laughs", peak));

    // 5. The largest document read, all tiny values.
    let mut dense =
        String::from(r#"{"openapi": "3.0.3", "info": {"title": "D", "version": "1"}, "paths": {}, "x-data": ["#);
    while dense.len() < MAX_DOCUMENT_BYTES - 16 {
        dense.push_str("[],");
    }
    dense.push_str("[]]}");
    let (outcome, peak) = import(&dense);
    assert!(matches!(outcome, Err(OpenApiError::TooComplex(_))), "{:?}", outcome.map(|c| c.operations.len()));
    report.push(("dense arrays", peak));

    // 6. Objects of tiny members, just under the value count: read, and still under the limit.
    let mut members =
        String::from(r#"{"openapi": "3.0.3", "info": {"title": "D", "version": "1"}, "paths": {}, "x-data": {"#);
    for i in 0..(MAX_JSON_VALUES / 2 - 100) {
        members.push_str(&format!(r#""k{i}":{{}},"#));
    }
    members.push_str(r#""end":0}}"#);
    let (outcome, peak) = import(&members);
    assert!(outcome.is_ok_and(|c| c.operations.is_empty()));
    report.push(("dense objects", peak));

    for (case, peak) in &report {
        eprintln!("{case}: peak {:.1} MB", *peak as f64 / 1e6);
    }
    for (case, peak) in report {
        assert!(peak < LIMIT, "{case}: {peak} bytes at the peak");
    }
}
