//! A server added by pasting the JSON its README shows.
//!
//! READMEs show it in every shape: a whole `{"mcpServers": {…}}` file, VS Code's `{"servers":
//! {…}}`, the `"name": {…}` entry alone (without the braces around it), or only the server
//! object `{"command": "npx", "args": […]}`, often with `//` comments or a trailing comma.
//! [`import_pasted`] accepts each and hands the servers to [`McpConfig::import_value`], so a
//! pasted server is checked, renamed and previewed exactly as an imported file's is.
//!
//! Invariants: bounded ([`MAX_PASTE`]); nothing here starts or saves anything; a name made up
//! for a bare server object says where it came from in the notes.

use crate::config::{McpConfig, sanitize_name};
use serde_json::{Map, Value};

/// The longest text accepted: a config file is a few KiB.
pub const MAX_PASTE: usize = 256 * 1024;

/// The servers in pasted text, and notes on what was left out or renamed.
pub fn import_pasted(text: &str) -> Result<(McpConfig, Vec<String>), String> {
    if text.len() > MAX_PASTE {
        return Err(format!("The pasted text is {} KiB; a server's JSON is a few KiB at most.", text.len() / 1024));
    }
    let text = text.trim();
    if text.is_empty() {
        return Err("Nothing was pasted: copy the server's JSON from its README and paste it here.".into());
    }
    let value = parse_lenient(text)?;
    let Value::Object(object) = &value else {
        return Err("The pasted JSON is not an object: paste the server's JSON from its README.".into());
    };
    if ["mcpServers", "servers", "mcp"].iter().any(|k| object.contains_key(*k)) {
        return McpConfig::import_value(&value);
    }
    let mut notes = Vec::new();
    let servers = if is_server(object) {
        let name = name_for(object);
        notes.push(format!("the pasted server had no name: it is called '{name}' (rename it after adding)"));
        Map::from_iter([(name, value.clone())])
    } else if !object.is_empty() && object.values().all(|v| v.as_object().is_some_and(is_server)) {
        object.clone()
    } else {
        return Err("No MCP server in the pasted JSON: expected \"mcpServers\", a server's entry, or a server object with \"command\" or \"url\".".into());
    };
    let (config, more) =
        McpConfig::import_value(&Value::Object(Map::from_iter([("mcpServers".into(), Value::Object(servers))])))?;
    notes.extend(more);
    Ok((config, notes))
}

/// Whether `object` is one server's entry.
fn is_server(object: &Map<String, Value>) -> bool {
    ["command", "url", "serverUrl"].iter().any(|k| object.get(*k).is_some_and(Value::is_string))
}

/// A name for a server pasted without one: from its package (`@scope/server-memory` is
/// `memory`, `mcp-server-fetch` is `fetch`), else its URL's host, else its command.
fn name_for(server: &Map<String, Value>) -> String {
    let args: Vec<&str> =
        server.get("args").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let package = args.iter().find(|a| !a.starts_with('-') && (a.contains("mcp") || a.contains("server")));
    let raw = if let Some(package) = package {
        let base = package.rsplit('/').next().unwrap_or(package);
        let base = base.split('@').next().unwrap_or(base);
        ["mcp-server-", "server-", "mcp-"]
            .iter()
            .find_map(|p| base.strip_prefix(p))
            .or_else(|| base.strip_suffix("-mcp-server").or_else(|| base.strip_suffix("-mcp")))
            .unwrap_or(base)
            .to_owned()
    } else if let Some(url) = server.get("url").or_else(|| server.get("serverUrl")).and_then(Value::as_str) {
        url::Url::parse(url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h.trim_start_matches("www.").replace('.', "-")))
            .unwrap_or_default()
    } else {
        let command = server.get("command").and_then(Value::as_str).unwrap_or_default();
        std::path::Path::new(command).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    };
    sanitize_name(&raw)
}

/// Parses `text` as JSON; failing that, as JSON with `//` and `/* */` comments and trailing
/// commas; failing that, as an entry without its braces (`"memory": {…}`).
fn parse_lenient(text: &str) -> Result<Value, String> {
    let first = match serde_json::from_str(text) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    let cleaned = without_comments_and_trailing_commas(text);
    if let Ok(v) = serde_json::from_str(&cleaned) {
        return Ok(v);
    }
    if cleaned.trim_start().starts_with('"') {
        let wrapped = format!("{{{}}}", cleaned.trim().trim_end_matches(','));
        if let Ok(v) = serde_json::from_str(&wrapped) {
            return Ok(v);
        }
    }
    Err(format!("The pasted text is not JSON ({first})."))
}

/// `text` without comments outside strings, and without a comma right before `}` or `]`.
fn without_comments_and_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => out.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => while chars.next_if(|&n| n != '\n').is_some() {},
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for n in chars.by_ref() {
                    if last == '*' && n == '/' {
                        break;
                    }
                    last = n;
                }
            }
            (',', _) => {
                let rest: String = chars.clone().collect();
                let next = without_leading_comments(&rest);
                if !(next.starts_with('}') || next.starts_with(']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

/// `rest` from its first character that is neither white space nor inside a comment.
fn without_leading_comments(mut rest: &str) -> &str {
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("//") {
            rest = r.split_once('\n').map_or("", |(_, after)| after);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.split_once("*/").map_or("", |(_, after)| after);
        } else {
            return rest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        import_pasted(text).unwrap().0.mcp_servers.keys().cloned().collect()
    }

    #[test]
    fn every_shape_a_readme_shows_is_read() {
        let file =
            r#"{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}"#;
        assert_eq!(names(file), ["memory"]);
        let vscode = r#"{"servers": {"fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"]}}}"#;
        assert_eq!(names(vscode), ["fetch"]);
        let entry = r#""memory": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"] }"#;
        assert_eq!(names(entry), ["memory"]);
        let entries = r#"{"a": {"command": "npx"}, "b": {"url": "https://mcp.example.com/mcp"}}"#;
        assert_eq!(names(entries), ["a", "b"]);
        let commented = "{\n  // the memory server\n  \"mcpServers\": {\n    \"memory\": {\"command\": \"npx\", /* y */ \"args\": [\"-y\", \"x\",],},\n  },\n}";
        assert_eq!(names(commented), ["memory"]);
    }

    #[test]
    fn a_bare_server_object_is_named_after_its_package_or_host() {
        let (config, notes) =
            import_pasted(r#"{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}"#)
                .unwrap();
        assert_eq!(config.mcp_servers.keys().collect::<Vec<_>>(), ["filesystem"]);
        assert!(notes[0].contains("called 'filesystem'"), "{notes:?}");
        assert_eq!(names(r#"{"command": "uvx", "args": ["mcp-server-fetch"]}"#), ["fetch"]);
        assert_eq!(names(r#"{"url": "https://www.example.com/mcp"}"#), ["example-com"]);
        assert_eq!(names(r#"{"command": "/opt/tools/weather"}"#), ["weather"]);
    }

    #[test]
    fn what_is_no_server_says_so() {
        for (text, says) in [
            ("", "Nothing was pasted"),
            ("not json", "not JSON"),
            ("[1, 2]", "not an object"),
            (r#"{"name": "x", "version": "1"}"#, "No MCP server"),
        ] {
            let err = import_pasted(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
        let huge = format!("{{\"a\": \"{}\"}}", "x".repeat(MAX_PASTE));
        assert!(import_pasted(&huge).unwrap_err().contains("KiB"));
    }

    #[test]
    fn strings_keep_what_looks_like_comments() {
        let (config, _) = import_pasted(r#"{"x": {"url": "https://example.com/a//b,}"}}"#).unwrap();
        assert_eq!(config.mcp_servers["x"].url.as_deref(), Some("https://example.com/a//b,}"));
    }
}
