//! The command contract between the shell and the UI. `build.rs` reads every command, its argument
//! keys and result from the shell's source; this test checks that list against the shell running
//! on Tauri's mock runtime (registered, allowed by the capabilities, reading exactly those keys)
//! and that the UI's `ui/src/lib/ipc/commands.ts` is rendered from it. Regenerate that file with
//! `UPDATE_COMMANDS=1 cargo test -p switchboard-desktop --test command_contract`, which also renders
//! the isolation hook's allowlist (`src-tauri/isolation/commands.js`) from the same list.

mod common;

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;
use switchboard_service::Service;
use switchboard_store::Store;
use tauri::test::MockRuntime;
use tauri::{App, WebviewWindow};

include!(concat!(env!("OUT_DIR"), "/commands.rs"));

const TS_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../ui/src/lib/ipc/commands.ts");
const ALLOWLIST_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/isolation/commands.js");
const CAPABILITY_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/capabilities/main.json");
/// What the isolation hook sends for a call it refused; the page itself may not call it.
const REFUSED: &str = "refused_call";

/// The app; it says no to every widening change (this test only reads argument keys).
fn app() -> (App<MockRuntime>, WebviewWindow<MockRuntime>) {
    common::plain_app(
        Service::new(Store::open_in_memory().unwrap(), Arc::new(switchboard_secrets::MemoryStore::new())).unwrap(),
    )
}

/// A call from the page; an error as its message.
fn invoke(webview: &WebviewWindow<MockRuntime>, cmd: &str, body: Value) -> Result<Value, String> {
    common::invoke(webview, cmd, body).map_err(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned))
}

/// The outermost name of a Rust type and its generic arguments: `Option<Vec<T>>` -> (`Option`, [`Vec<T>`]).
fn head(ty: &str) -> (&str, Vec<&str>) {
    let ty = ty.trim();
    let Some(open) = ty.find('<') else { return (ty.rsplit("::").next().unwrap_or(ty), Vec::new()) };
    let name = ty[..open].rsplit("::").next().unwrap_or(&ty[..open]);
    let inner = &ty[open + 1..ty.len() - 1];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(inner[start..].trim());
    (name, parts)
}

/// A value that deserializes as `ty`: what the arguments before the one being probed carry.
fn sample(ty: &str) -> Value {
    match head(ty) {
        ("Option", _) => Value::Null,
        ("String", _) => json!("probe"),
        ("u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" | "f64", _) => json!(1),
        ("bool", _) => json!(false),
        ("Vec", _) => json!([]),
        // How the JavaScript `Channel` serializes itself (tauri::ipc::JavaScriptChannelId).
        ("Channel", _) => json!("__CHANNEL__:7"),
        ("SendRequest", _) => serde_json::to_value(switchboard_service::ipc::SendRequest::text(None, "probe")).unwrap(),
        ("Settings", _) => serde_json::to_value(switchboard_service::settings::Settings::default()).unwrap(),
        ("ApprovalChoice", _) => json!("deny"),
        ("KeyMode", _) => json!("environment"),
        ("Map", _) => json!({}),
        ("CompletionRef", _) => json!({"type": "prompt", "name": "probe"}),
        ("LogLevel", _) => json!("info"),
        ("ElicitationAction", _) => json!("decline"),
        ("ProviderProfile", _) => {
            json!({"name": "probe", "kind": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": null})
        }
        (other, _) => panic!("no sample value for argument type `{other}`: add one to `sample` in {}", file!()),
    }
}

/// A value no argument of type `ty` accepts, so the command is refused naming that argument
/// before it runs.
fn refused(ty: &str) -> Value {
    let inner = match head(ty) {
        ("Option", args) => args[0].to_owned(),
        _ => ty.to_owned(),
    };
    if head(&inner).0 == "bool" { json!("probe") } else { json!(true) }
}

#[test]
fn every_registered_command_is_declared_once_and_every_declared_one_registered() {
    let declared: Vec<&str> = COMMANDS.iter().map(|c| c.0).collect();
    let unique: BTreeSet<&str> = declared.iter().copied().collect();
    assert_eq!(unique.len(), declared.len(), "a command is declared twice: {declared:?}");
    let registered: BTreeSet<&str> = HANDLERS.iter().copied().collect();
    assert_eq!(unique, registered, "`#[tauri::command]` functions and `generate_handler!` differ");
    assert!(declared.len() >= 20, "the scan of src-tauri/src found only {declared:?}");
}

#[test]
fn the_shell_reads_exactly_the_declared_argument_keys() {
    let (_app, webview) = app();
    let mut probed = 0;
    for (name, args, _) in COMMANDS {
        if args.is_empty() {
            // Runs it (on an empty in-memory service): all that matters is that it is known and allowed.
            if let Err(e) = invoke(&webview, name, json!({})) {
                assert!(!e.contains("not found") && !e.contains("not allowed"), "`{name}` was refused: {e}");
            }
            continue;
        }
        for (i, (key, ty)) in args.iter().enumerate() {
            let mut body = serde_json::Map::new();
            for (k, t) in &args[..i] {
                body.insert((*k).to_owned(), sample(t));
            }
            body.insert((*key).to_owned(), refused(ty));
            let e = invoke(&webview, name, Value::Object(body))
                .expect_err(&format!("`{name}` ran with an invalid `{key}`: it does not read that key"));
            let expected = format!("invalid args `{key}` for command `{name}`");
            assert!(e.contains(&expected), "`{name}`, argument `{key}`: expected \"{expected}…\", got: {e}");
            probed += 1;
        }
    }
    assert!(probed > 0);
}

#[test]
fn a_command_the_shell_does_not_have_is_refused() {
    let (_app, webview) = app();
    let e = invoke(&webview, "list_conversation", json!({})).unwrap_err();
    assert!(e.contains("not found") || e.contains("not allowed"), "{e}");
    // And the probe above would notice a renamed key: the old one is then ignored.
    let e = invoke(&webview, "search_conversations", json!({"q": "x"})).unwrap_err();
    assert!(e.contains("missing required key query"), "{e}");
}

/// The TypeScript type of a Rust argument or result type; names the UI gets from `bindings.ts`
/// are collected into `imports`.
fn ts(ty: &str, imports: &mut BTreeSet<String>) -> String {
    let (name, args) = head(ty);
    let wrap = |t: String| if t.contains('|') { format!("({t})") } else { t };
    match (name, args.as_slice()) {
        ("()", _) => "void".into(),
        ("Result", [ok, ..]) => ts(ok, imports),
        ("Option", [t]) => format!("{} | null", ts(t, imports)),
        ("Vec", [t]) => format!("{}[]", wrap(ts(t, imports))),
        ("Channel", [t]) => format!("EventChannel<{}>", ts(t, imports)),
        ("String" | "str" | "&str", _) => "string".into(),
        ("u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" | "f64", _) => "number".into(),
        ("bool", _) => "boolean".into(),
        ("Value", _) => "unknown".into(),
        ("Map", [_, v]) => format!("{{ [key: string]: {} }}", ts(v, imports)),
        (n, []) if n.chars().all(|c| c.is_alphanumeric() || c == '_') => {
            imports.insert(n.to_owned());
            n.to_owned()
        }
        _ => panic!("no TypeScript for `{ty}`: extend `ts` in {}", file!()),
    }
}

fn render() -> String {
    let mut imports = BTreeSet::new();
    let mut body = String::new();
    for (name, args, result) in COMMANDS {
        let fields: Vec<String> = args
            .iter()
            .map(|(k, t)| match head(t) {
                // Tauri reads a missing key as `None`: the UI may leave optional arguments out.
                ("Option", inner) => format!("{k}?: {} | null", ts(inner[0], &mut imports)),
                _ => format!("{k}: {}", ts(t, &mut imports)),
            })
            .collect();
        let args_ty =
            if fields.is_empty() { "Record<string, never>".to_owned() } else { format!("{{ {} }}", fields.join("; ")) };
        // The same arguments in declaration order, for a method that takes them one by one: an
        // optional argument may be left out only when no required one follows it.
        let required_after = |i: usize| args[i + 1..].iter().any(|(_, t)| head(t).0 != "Option");
        let params: Vec<String> = args
            .iter()
            .enumerate()
            .map(|(i, (k, t))| match head(t) {
                ("Option", inner) if !required_after(i) => format!("{k}?: {} | null", ts(inner[0], &mut imports)),
                _ => format!("{k}: {}", ts(t, &mut imports)),
            })
            .collect();
        body.push_str(&format!(
            "  {name}: {{ args: {args_ty}; params: [{}]; result: {} }};\n",
            params.join(", "),
            ts(result, &mut imports)
        ));
    }
    let channels: Vec<String> = COMMANDS
        .iter()
        .filter_map(|(name, args, _)| {
            let key = args.iter().find(|(_, t)| head(t).0 == "Channel")?.0;
            Some(format!("  {name}: '{key}',\n"))
        })
        .collect();
    let keys: Vec<String> = COMMANDS
        .iter()
        .map(|(name, args, _)| {
            let k: Vec<String> = args.iter().map(|(k, _)| format!("'{k}'")).collect();
            format!("  {name}: [{}],\n", k.join(", "))
        })
        .collect();
    format!(
        "// Generated from src-tauri's commands by src-tauri/tests/command_contract.rs. Do not edit.\n\
         // Regenerate: UPDATE_COMMANDS=1 cargo test -p switchboard-desktop --test command_contract\n\
         import type {{ {} }} from './bindings';\n\n\
         /** What a turn's events arrive on (Tauri's `Channel`). */\n\
         export interface EventChannel<T> {{\n  onmessage: (message: T) => void;\n}}\n\n\
         /** Every command the shell registers: the arguments it reads and what it resolves with. */\n\
         export interface Commands {{\n{body}}}\n\n\
         export type CommandName = keyof Commands;\n\n\
         /** Every command and its argument keys, in declaration order (the order of `params`). */\n\
         export const COMMANDS = {{\n{}}} as const satisfies {{ [C in CommandName]: readonly (keyof Commands[C]['args'])[] }};\n\n\
         /** The argument that carries a turn's events, for the commands that have one. */\n\
         export const CHANNEL_ARGS = {{\n{}}} as const satisfies {{ [C in CommandName]?: keyof Commands[C]['args'] }};\n",
        imports.into_iter().collect::<Vec<_>>().join(", "),
        keys.concat(),
        channels.concat(),
    )
}

#[test]
fn ui_commands_are_fresh() {
    let fresh = render();
    if std::env::var_os("UPDATE_COMMANDS").is_some() {
        std::fs::write(TS_PATH, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(TS_PATH).unwrap_or_default();
    assert!(
        committed == fresh,
        "ui/src/lib/ipc/commands.ts is stale: run `UPDATE_COMMANDS=1 cargo test -p switchboard-desktop --test command_contract` and commit it"
    );
}

/// The isolation hook's allowlist: every command but `refused_call`, with its argument keys.
fn render_allowlist() -> String {
    let mut body = String::new();
    for (name, args, _) in COMMANDS.iter().filter(|c| c.0 != REFUSED) {
        let keys: Vec<String> = args.iter().map(|(k, _)| format!("'{k}'")).collect();
        body.push_str(&format!("  {name}: [{}],\n", keys.join(", ")));
    }
    format!(
        "// Generated from src-tauri's commands by src-tauri/tests/command_contract.rs. Do not edit.\n\
         // Regenerate: UPDATE_COMMANDS=1 cargo test -p switchboard-desktop --test command_contract\n\
         // The commands the isolation hook (hook.js) lets through, each with the argument keys it may carry.\n\
         // eslint-disable-next-line no-unused-vars\n\
         const SWITCHBOARD_COMMANDS = {{\n{body}}};\n"
    )
}

#[test]
fn the_isolation_allowlist_is_fresh() {
    let fresh = render_allowlist();
    if std::env::var_os("UPDATE_COMMANDS").is_some() {
        std::fs::write(ALLOWLIST_PATH, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(ALLOWLIST_PATH).unwrap_or_default();
    assert!(
        committed == fresh,
        "src-tauri/isolation/commands.js is stale: run `UPDATE_COMMANDS=1 cargo test -p switchboard-desktop --test command_contract` and commit it"
    );
}

#[test]
fn the_capability_grants_the_allowlist_and_the_refusal_and_nothing_else_of_the_app() {
    let cap: Value = serde_json::from_str(&std::fs::read_to_string(CAPABILITY_PATH).unwrap()).unwrap();
    let granted: BTreeSet<String> = cap["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p.as_str())
        .filter(|p| !p.contains(':'))
        .map(str::to_owned)
        .collect();
    let expected: BTreeSet<String> = COMMANDS.iter().map(|c| format!("allow-{}", c.0.replace('_', "-"))).collect();
    assert_eq!(granted, expected, "capabilities/main.json and the commands differ");
    assert!(COMMANDS.iter().any(|c| c.0 == REFUSED), "`{REFUSED}` is gone: the isolation hook sends it");
}
