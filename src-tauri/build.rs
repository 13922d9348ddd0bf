//! Declares the app's commands so capabilities can grant them one by one (least privilege).
//!
//! The list is read from the shell's own source, so it cannot drift from it: every
//! `#[tauri::command]` function with its arguments (the keys the webview sends) and its result,
//! and the names registered in `generate_handler!`. Both go to `$OUT_DIR/commands.rs` for
//! `tests/command_contract.rs`, which checks them against the running shell and renders them
//! into the UI's `ui/src/lib/ipc/commands.ts`.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let mut sources = Vec::new();
    collect(Path::new("src"), &mut sources);
    sources.sort();
    let mut commands = Vec::new();
    let mut handlers = Vec::new();
    for path in &sources {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let text = strip_comments(&text);
        commands.extend(scan_commands(&text));
        handlers.extend(scan_handlers(&text));
    }
    println!("cargo:rerun-if-changed=src");
    // The isolation app (hook.js, its generated commands.js) is embedded by `generate_context!`.
    println!("cargo:rerun-if-changed=isolation");

    let mut out = String::from("/// An argument: its key as the webview sends it, and its Rust type.\n");
    out.push_str("pub type Arg = (&'static str, &'static str);\n");
    out.push_str("/// `(command, arguments, Rust result type)`, as declared.\n");
    out.push_str("pub const COMMANDS: &[(&str, &[Arg], &str)] = &[\n");
    for c in &commands {
        let args: Vec<String> = c.args.iter().map(|(k, t)| format!("({k:?}, {t:?})")).collect();
        let _ = writeln!(out, "    ({:?}, &[{}], {:?}),", c.name, args.join(", "), c.result);
    }
    out.push_str("];\n/// The names `generate_handler!` registers.\npub const HANDLERS: &[&str] = &[\n");
    for h in &handlers {
        let _ = writeln!(out, "    {h:?},");
    }
    out.push_str("];\n");
    let dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(Path::new(&dir).join("commands.rs"), out).expect("write commands.rs");

    // tauri-build keeps the names for the whole build; this process ends right after.
    let names: &'static [&'static str] =
        Vec::leak(handlers.into_iter().map(|h| &*String::leak(h)).collect::<Vec<&'static str>>());
    let attributes = tauri_build::Attributes::new().app_manifest(tauri_build::AppManifest::new().commands(names));
    tauri_build::try_build(attributes).expect("tauri build script");
}

struct Command {
    name: String,
    args: Vec<(String, String)>,
    result: String,
}

fn collect(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The source without `//` and `/* */` comments (string literals kept), so a doc comment that
/// mentions `#[tauri::command]` or `fn` is not read as code.
fn strip_comments(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if in_str {
            out.push(c);
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            } else if c == '"' {
                in_str = false;
            }
        } else if c == '"' {
            in_str = true;
            out.push(c);
        } else if c == '\'' {
            // A char literal ('"', '\'') is copied whole; a lifetime ('_, 'a) is just a quote.
            out.push(c);
            let mut ahead = chars.clone();
            let literal = match ahead.next() {
                Some('\\') => true,
                Some(_) => ahead.next() == Some('\''),
                None => false,
            };
            if literal {
                let mut prev = c;
                for n in chars.by_ref() {
                    out.push(n);
                    if n == '\'' && prev != '\\' {
                        break;
                    }
                    prev = if prev == '\\' { ' ' } else { n };
                }
            }
        } else if c == '/' && chars.peek() == Some(&'/') {
            for n in chars.by_ref() {
                if n == '\n' {
                    out.push('\n');
                    break;
                }
            }
        } else if c == '/' && chars.peek() == Some(&'*') {
            chars.next();
            let mut prev = ' ';
            for n in chars.by_ref() {
                if prev == '*' && n == '/' {
                    break;
                }
                prev = n;
            }
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// Splits at commas outside `<>`, `()` and `[]`.
fn split_top(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    let mut prev = ' ';
    for c in s.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' if prev != '-' => depth -= 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut cur));
                prev = c;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        prev = c;
    }
    parts.push(cur);
    parts.into_iter().map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|p| !p.is_empty()).collect()
}

/// The text from `open` (an opening bracket at `at`) to its matching close, exclusive.
fn balanced(s: &str, at: usize, open: char, close: char) -> (&str, usize) {
    let mut depth = 0;
    for (i, c) in s[at..].char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return (&s[at + open.len_utf8()..at + i], at + i + close.len_utf8());
            }
        }
    }
    panic!("unbalanced {open} in the command source");
}

/// Arguments Tauri fills in itself; the webview never sends them.
fn injected(ty: &str) -> bool {
    let last = ty.split('<').next().unwrap_or(ty).rsplit("::").next().unwrap_or(ty).trim();
    matches!(
        last,
        "State" | "AppHandle" | "Window" | "WebviewWindow" | "Webview" | "Request" | "CommandScope" | "GlobalScope"
    )
}

fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

fn scan_commands(src: &str) -> Vec<Command> {
    let mut found = Vec::new();
    let mut rest = src;
    while let Some(at) = rest.find("#[tauri::command") {
        let after = &rest[at..];
        let attr_end = after.find(']').expect("attribute end");
        let snake_keys = after[..attr_end].contains("rename_all") && after[..attr_end].contains("snake_case");
        let fn_at = after.find("fn ").expect("a command is a function");
        let sig = &after[fn_at + 3..];
        let name_end = sig.find(|c: char| !(c.is_alphanumeric() || c == '_')).expect("function name");
        let name = sig[..name_end].to_string();
        let mut pos = name_end;
        if sig[pos..].trim_start().starts_with('<') {
            let lt = pos + sig[pos..].find('<').expect("generics");
            pos = balanced(sig, lt, '<', '>').1;
        }
        let paren = pos + sig[pos..].find('(').expect("parameters");
        let (params, end) = balanced(sig, paren, '(', ')');
        let args = split_top(params)
            .into_iter()
            .filter_map(|p| {
                let (pat, ty) = p.split_once(':').unwrap_or_else(|| panic!("parameter `{p}` of `{name}`"));
                let pat = pat.trim().trim_start_matches("mut ").trim();
                let ty = ty.trim().to_string();
                (!injected(&ty)).then(|| (if snake_keys { pat.to_string() } else { camel(pat) }, ty))
            })
            .collect();
        let tail = sig[end..].trim_start();
        let result = match tail.strip_prefix("->") {
            Some(r) => {
                let stop = r.find('{').into_iter().chain(r.find(" where ")).min().unwrap_or(r.len());
                r[..stop].split_whitespace().collect::<Vec<_>>().join(" ")
            }
            None => "()".into(),
        };
        found.push(Command { name, args, result });
        rest = &after[fn_at + 3 + end..];
    }
    found
}

fn scan_handlers(src: &str) -> Vec<String> {
    let Some(at) = src.find("generate_handler![") else { return Vec::new() };
    let open = at + "generate_handler!".len();
    let (list, _) = balanced(src, open, '[', ']');
    split_top(list).into_iter().map(|h| h.rsplit("::").next().unwrap_or(&h).trim().to_string()).collect()
}
