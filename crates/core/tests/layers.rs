//! The engine crates read bottom-up: their top-level modules import each other in one direction
//! only, so a newcomer can read a crate from its vocabulary up to its loop without meeting a
//! module that needs one above it.
//!
//! This test reads a crate's sources, collects which top-level module names which sibling (a
//! `crate::x` path, a `super::` path that climbs out to the crate root, or a name `lib.rs`
//! re-exports from `x`), and fails naming the circle if there is one. A folder module
//! (`machine/`) counts as one module; paths inside it stay inside it. Comments are ignored.
//!
//! Show the layers (bottom first) and check them:
//! `cargo test -p switchboard-core --test layers -- --nocapture`

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[test]
fn core_modules_import_each_other_in_one_direction() {
    assert_no_circle("switchboard-core", &crate_src("core"));
}

#[test]
fn store_modules_import_each_other_in_one_direction() {
    assert_no_circle("switchboard-store", &crate_src("store"));
}

/// The other engine crates keep the same rule (the service's `defined_tools` sits below
/// `openapi_docs`; each provider API's folder below nothing of another's).
#[test]
fn the_other_engine_crates_import_each_other_in_one_direction() {
    for name in ["providers", "secrets", "process", "tools", "mcp", "media", "service", "cli"] {
        let src = crate_src(name);
        if module_graph(&src).len() > 2 {
            assert_no_circle(&format!("switchboard-{name}"), &src);
        }
    }
}

/// The checker itself: a back-import between two sibling modules, one through a `lib.rs`
/// re-export and one through a grouped `use`, is reported as a circle with both modules named.
#[test]
fn a_back_import_is_reported_as_a_circle() {
    let dir = std::env::temp_dir().join(format!("switchboard-layers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("upper")).unwrap();
    let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    write("lib.rs", "pub mod lower;\npub mod upper;\npub use upper::{Loop, Other};\n");
    write("lower.rs", "// use crate::upper::Loop; (a comment is no import)\npub fn f() -> crate::Loop { todo!() }\n");
    write("upper/mod.rs", "mod part;\npub struct Loop;\npub struct Other;\n");
    write("upper/part.rs", "use super::super::{lower::f};\nuse super::Loop;\n");
    let graph = module_graph(&dir);
    let circle = find_circle(&graph).expect("the back-import must be found");
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(circle.len(), 3, "{circle:?}");
    assert_eq!(circle.first(), circle.last());
    assert!(circle.contains(&"lower".to_owned()) && circle.contains(&"upper".to_owned()), "{circle:?}");
    // Without the back-import the same crate is one-directional.
    let mut graph = graph;
    graph.get_mut("lower").unwrap().clear();
    assert_eq!(find_circle(&graph), None);
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(name).join("src")
}

/// Each top-level module, with the siblings it names and where it first names each.
type Graph = BTreeMap<String, BTreeMap<String, String>>;

fn assert_no_circle(krate: &str, src: &Path) {
    let graph = module_graph(src);
    assert!(graph.len() > 2, "{krate}: no modules found under {}", src.display());
    if let Some(circle) = find_circle(&graph) {
        let steps: Vec<String> =
            circle.windows(2).map(|w| format!("  {} -> {}   ({})", w[0], w[1], graph[&w[0]][&w[1]])).collect();
        panic!(
            "{krate}: its modules import each other in a circle; move the shared part down (or the \
             depending part up) so imports go one way:\n{}",
            steps.join("\n")
        );
    }
    println!("{krate}, bottom layer first:");
    for (level, modules) in layers(&graph).iter().enumerate() {
        println!("  {level}: {}", modules.join(", "));
    }
}

/// The dependency graph between the top-level modules of the crate whose `src` is `src`.
fn module_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    collect_rs(src, &mut files);
    let mut graph = Graph::new();
    let mut sources = Vec::new();
    let mut lib = String::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let text = strip_comments(&std::fs::read_to_string(&file).unwrap());
        if parts.len() == 1 && (parts[0] == "lib.rs" || parts[0] == "main.rs") {
            lib = text;
            continue;
        }
        let top = parts[0].trim_end_matches(".rs").to_owned();
        // How many `super::` lead from this file's module to the crate root.
        let depth = if parts.last().is_some_and(|p| p == "mod.rs") { parts.len() - 1 } else { parts.len() };
        graph.entry(top.clone()).or_default();
        sources.push((top, depth, rel.display().to_string(), text));
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    let reexports = reexports(&lib, &modules);
    let resolve = |name: &str| -> Option<String> {
        if modules.contains(name) { Some(name.to_owned()) } else { reexports.get(name).cloned() }
    };
    for (top, depth, rel, text) in sources {
        for (line_no, line) in text.lines().enumerate() {
            for name in root_names(line, depth) {
                if let Some(target) = resolve(&name).filter(|t| *t != top) {
                    graph.get_mut(&top).unwrap().entry(target).or_insert_with(|| format!("{rel}:{}", line_no + 1));
                }
            }
        }
    }
    graph
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text without `//` comments (doc comments and intra-doc links included); lines are kept so
/// line numbers stay true.
fn strip_comments(text: &str) -> String {
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// Names `lib.rs` re-exports (`pub use module::{A, b};`), mapped to the module they come from.
fn reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for statement in lib.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else { continue };
        let mut idents = identifiers(path);
        let Some(first) = idents.next().filter(|m| modules.contains(m)) else { continue };
        for name in idents.filter(|n| !modules.contains(n)) {
            out.insert(name, first.clone());
        }
    }
    out
}

fn identifiers(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// The first segment after every path in `line` that starts at the crate root: `crate::x`,
/// `crate::{x::A, y}`, or `super::` repeated at least `depth` times.
fn root_names(line: &str, depth: usize) -> Vec<String> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let rest = &line[i..];
        let after = if !word_start {
            None
        } else if let Some(r) = rest.strip_prefix("crate::") {
            Some(r)
        } else if rest.starts_with("super::") {
            let mut r = rest;
            let mut climbs = 0;
            while let Some(next) = r.strip_prefix("super::") {
                r = next;
                climbs += 1;
            }
            // Fewer climbs stay inside this module (its own files, its `mod tests`).
            (climbs >= depth).then_some(r)
        } else {
            None
        };
        match after {
            Some(r) => {
                out.extend(first_segments(r));
                i = line.len() - r.len();
            }
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

/// `x::A` -> `x`; `{x::A, y, z::{B, C}}` -> `x`, `y`, `z`.
fn first_segments(path: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let Some(group) = path.strip_prefix('{') else {
        return vec![ident(path)].into_iter().filter(|s| !s.is_empty()).collect();
    };
    let mut out = Vec::new();
    let mut level = 0;
    let mut item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => level += 1,
            '}' if level == 0 => break,
            '}' => level -= 1,
            ',' if level == 0 => item_start = true,
            c if c.is_whitespace() => {}
            _ if item_start && level == 0 => {
                item_start = false;
                let name = ident(&group[i..]);
                if !name.is_empty() {
                    out.push(name);
                }
            }
            _ => {}
        }
    }
    out
}

/// A circle as `[a, b, ..., a]`, or `None` when every import goes one way.
fn find_circle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(node: &str, graph: &Graph, done: &mut BTreeSet<String>, path: &mut Vec<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            if let Some(circle) = visit(next, graph, done, path) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

/// Modules by layer: each module one above the highest module it imports.
fn layers(graph: &Graph) -> Vec<Vec<String>> {
    fn level(node: &str, graph: &Graph, memo: &mut BTreeMap<String, usize>) -> usize {
        if let Some(l) = memo.get(node) {
            return *l;
        }
        let l = graph[node].keys().map(|d| level(d, graph, memo) + 1).max().unwrap_or(0);
        memo.insert(node.to_owned(), l);
        l
    }
    let mut memo = BTreeMap::new();
    let mut out: Vec<Vec<String>> = Vec::new();
    for node in graph.keys() {
        let l = level(node, graph, &mut memo);
        if out.len() <= l {
            out.resize(l + 1, Vec::new());
        }
        out[l].push(node.clone());
    }
    out
}
