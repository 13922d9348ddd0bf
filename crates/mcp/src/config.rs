//! The `mcpServers` config: Claude Desktop's format (stdio `command`/`args`/`env`, remote
//! `url`/`headers`), read strictly from Switchboard's own file and leniently from another app's.
//!
//! Secrets never sit in the file: a value of `env` or `headers` may be `${secret:NAME}`, which
//! names a key in the person's keychain and is resolved only when the server starts.

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The config file's name in the app's config directory.
pub const CONFIG_FILE: &str = "mcp.json";

/// The longest server name accepted (tool names are `server__tool`).
pub const MAX_SERVER_NAME: usize = 40;

/// Why a config could not be read, written or used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file is not valid JSON, or has a field this version does not know.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What is wrong, with the line and column.
        message: String,
    },
    /// The file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The system's message.
        message: String,
    },
    /// A server's entry makes no sense (no command and no url, a bad url, a bad name).
    #[error("MCP server '{server}': {message}")]
    Invalid {
        /// The server.
        server: String,
        /// What is wrong.
        message: String,
    },
}

/// Switchboard's MCP config file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpConfig {
    /// The servers by name, in name order.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, ServerConfig>,
    /// Folders every server is told of (`roots/list`), before each server's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<PathBuf>,
}

/// One server's entry.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerConfig {
    /// `stdio`, `http` (streamable HTTP) or `sse` (taken as streamable HTTP); inferred when absent.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The program to run (stdio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments, passed as they are (no shell).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Environment variables added to the app's own; values may be `${secret:NAME}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The working directory (default: the config directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// The server's URL (streamable HTTP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Headers sent with every request; values may be `${secret:NAME}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Kept in the file but not started.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// Seconds a tool call may take before it is cancelled (default: the app's tool timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    /// Folders this server is told of (`roots/list`), after the ones for every server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<PathBuf>,
    /// The profile (and model) that answers this server's requests for a completion; none: the
    /// calling chat's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingModel>,
}

/// Which profile and model answer a server's requests for a completion.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SamplingModel {
    /// The provider profile's name.
    pub profile: String,
    /// The model; none: the profile's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// How to reach a server, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// A local process speaking JSON-RPC on stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Added environment (values may be secret references).
        env: BTreeMap<String, String>,
        /// Its working directory.
        cwd: Option<PathBuf>,
    },
    /// A remote server over streamable HTTP.
    Http {
        /// The endpoint.
        url: String,
        /// Headers (values may be secret references).
        headers: BTreeMap<String, String>,
    },
}

/// Checks a server name: letters, digits, `-`, `_` and `.`, at most [`MAX_SERVER_NAME`], and no
/// `__` (which separates the server from the tool in a tool's name).
pub fn check_name(name: &str) -> Result<(), ConfigError> {
    let invalid = |message: &str| Err(ConfigError::Invalid { server: name.to_owned(), message: message.to_owned() });
    if name.is_empty() || name.chars().count() > MAX_SERVER_NAME {
        return invalid(&format!("a server name has 1 to {MAX_SERVER_NAME} characters"));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        return invalid("a server name has only letters, digits, '-', '_' and '.'");
    }
    if name.contains("__") {
        return invalid("a server name cannot contain '__'");
    }
    Ok(())
}

/// `name` made into a valid server name (for imports from apps with looser rules).
pub fn sanitize_name(name: &str) -> String {
    let mut out: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '.') { c } else { '-' }).collect();
    while out.contains("--") {
        out = out.replace("--", "-");
    }
    let out: String = out.trim_matches('-').chars().take(MAX_SERVER_NAME).collect();
    if out.is_empty() { "server".to_owned() } else { out }
}

impl ServerConfig {
    /// How to reach the server, or why its entry makes no sense.
    pub fn spec(&self, name: &str) -> Result<Spec, ConfigError> {
        let invalid = |message: String| ConfigError::Invalid { server: name.to_owned(), message };
        check_name(name)?;
        match (self.kind.as_deref(), &self.command, &self.url) {
            (Some(other), _, _)
                if !matches!(other, "stdio" | "http" | "streamable-http" | "streamableHttp" | "sse") =>
            {
                Err(invalid(format!("unknown type '{other}' (use stdio or http)")))
            }
            (_, Some(_), Some(_)) => Err(invalid("has both a command and a url; keep one".into())),
            (_, None, None) => Err(invalid("needs a command (a local server) or a url (a remote one)".into())),
            (Some("http" | "streamable-http" | "streamableHttp" | "sse"), Some(_), None) => {
                Err(invalid("is of type http but has a command instead of a url".into()))
            }
            (Some("stdio"), None, Some(_)) => {
                Err(invalid("is of type stdio but has a url instead of a command".into()))
            }
            (_, Some(command), None) => {
                if command.trim().is_empty() {
                    return Err(invalid("has an empty command".into()));
                }
                if !self.headers.is_empty() {
                    return Err(invalid("has headers, which only a remote (url) server uses".into()));
                }
                for key in self.env.keys() {
                    if key.is_empty() || key.contains('=') || key.contains('\0') {
                        return Err(invalid(format!("has an invalid environment variable name '{key}'")));
                    }
                }
                Ok(Spec::Stdio {
                    command: command.clone(),
                    args: self.args.clone(),
                    env: self.env.clone(),
                    cwd: self.cwd.clone(),
                })
            }
            (_, None, Some(url)) => {
                let parsed =
                    reqwest::Url::parse(url.trim()).map_err(|e| invalid(format!("has an invalid url: {e}")))?;
                if !matches!(parsed.scheme(), "http" | "https") {
                    return Err(invalid(format!("has a {}: url; use http or https", parsed.scheme())));
                }
                if !self.args.is_empty() || !self.env.is_empty() || self.cwd.is_some() {
                    return Err(invalid("has args, env or cwd, which only a local (command) server uses".into()));
                }
                for key in self.headers.keys() {
                    http::HeaderName::from_bytes(key.as_bytes())
                        .map_err(|_| invalid(format!("has an invalid header name '{key}'")))?;
                }
                Ok(Spec::Http { url: url.trim().to_owned(), headers: self.headers.clone() })
            }
        }
    }

    /// Every key this entry refers to (`${secret:NAME}`), once each, in the order of first use.
    pub fn secret_refs(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for name in self.env.values().chain(self.headers.values()).filter_map(|v| secret_ref(v)) {
            if !out.iter().any(|n| n == name) {
                out.push(name.to_owned());
            }
        }
        out
    }
}

/// The key name in `${secret:NAME}`, if `value` is exactly such a reference.
pub fn secret_ref(value: &str) -> Option<&str> {
    value.strip_prefix("${secret:")?.strip_suffix('}').filter(|n| !n.is_empty())
}

/// The reference to a key, as written in the config.
pub fn secret_value(name: &str) -> String {
    format!("${{secret:{name}}}")
}

/// Whether an `env` variable or header by this name usually carries a credential.
pub fn looks_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["key", "token", "secret", "password", "passwd", "auth", "credential", "cookie", "session"]
        .iter()
        .any(|w| k.contains(w))
}

/// The keychain name a secret of `server`'s `key` is stored under.
pub fn secret_name(server: &str, key: &str) -> String {
    let raw = format!("mcp-{server}-{key}");
    let cleaned: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if cleaned.len() <= 64 {
        cleaned
    } else {
        let hash = Sha256::digest(raw.as_bytes());
        format!("{}-{}", &cleaned[..55], hex(&hash[..4]))
    }
}

/// A plain secret found in an entry, to be moved into the keychain.
#[derive(Clone, PartialEq, Eq)]
pub struct FoundSecret {
    /// The keychain name it goes under (also written into the config as a reference).
    pub name: String,
    /// Where it was (`env FOO`, `header Authorization`).
    pub location: String,
    /// The value.
    pub value: String,
}

impl std::fmt::Debug for FoundSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FoundSecret")
            .field("name", &self.name)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl ServerConfig {
    /// Replaces plain values of credential-looking `env` variables and headers with references,
    /// returning what was taken out (for the keychain).
    pub fn extract_secrets(&mut self, server: &str) -> Vec<FoundSecret> {
        let mut found = Vec::new();
        for (map, what) in [(&mut self.env, "env"), (&mut self.headers, "header")] {
            for (key, value) in map.iter_mut() {
                if secret_ref(value).is_none() && !value.is_empty() && looks_secret(key) {
                    let name = secret_name(server, key);
                    found.push(FoundSecret {
                        name: name.clone(),
                        location: format!("{what} {key}"),
                        value: std::mem::replace(value, secret_value(&name)),
                    });
                }
            }
        }
        found
    }

    /// The exact command line, as a person would type it in a POSIX shell: each word quoted when
    /// it needs to be, environment first, the working directory last. Secret references are
    /// shown as references, never as values. `None` for a remote server.
    pub fn command_line(&self) -> Option<String> {
        let command = self.command.as_ref()?;
        let mut words: Vec<String> = self.env.iter().map(|(k, v)| format!("{k}={}", shell_quote(v))).collect();
        words.push(shell_quote(command));
        words.extend(self.args.iter().map(|a| shell_quote(a)));
        let mut line = words.join(" ");
        if let Some(cwd) = &self.cwd {
            line.push_str(&format!("   (in {})", cwd.display()));
        }
        Some(line)
    }

    /// A fingerprint of what would run: command, args, env (references, not values) and working
    /// directory. A person confirms a stdio server's command once per fingerprint.
    pub fn command_fingerprint(&self) -> Option<String> {
        let command = self.command.as_ref()?;
        let canonical = serde_json::json!({
            "command": command,
            "args": self.args,
            "env": self.env,
            "cwd": self.cwd,
        });
        Some(hex(&Sha256::digest(canonical.to_string().as_bytes())))
    }
}

/// A word quoted for a POSIX shell when it has anything but safe characters.
fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '@' | '+' | ',' | '=' | '%')
        });
    if safe { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl McpConfig {
    /// Reads Switchboard's own config file strictly; a missing file is an empty config.
    pub fn load(path: &Path) -> Result<McpConfig, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(McpConfig::default()),
            Err(e) => return Err(ConfigError::Io { path: path.display().to_string(), message: e.to_string() }),
        };
        McpConfig::parse(&text).map_err(|message| ConfigError::Parse { path: path.display().to_string(), message })
    }

    /// Parses the config's text strictly (unknown fields are errors, so a typo is never ignored).
    pub fn parse(text: &str) -> Result<McpConfig, String> {
        if text.trim().is_empty() {
            return Ok(McpConfig::default());
        }
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    /// Writes the file atomically (a temporary file renamed over it), readable by its owner only.
    pub fn save(&self, path: &Path) -> Result<(), ConfigError> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| ConfigError::Io { path: path.display().to_string(), message: e.to_string() })?;
        text.push('\n');
        write_private(path, &text)
            .map_err(|e| ConfigError::Io { path: path.display().to_string(), message: e.to_string() })
    }

    /// Reads another app's config (Claude Desktop's `claude_desktop_config.json`, Cursor's
    /// `mcp.json`, VS Code's `servers`): only the servers, each keeping the fields Switchboard
    /// knows; names are made valid. Returns the servers and, per server, the fields left behind.
    pub fn import(text: &str) -> Result<(McpConfig, Vec<String>), String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let servers = value
            .get("mcpServers")
            .or_else(|| value.get("servers"))
            .or_else(|| value.get("mcp").and_then(|m| m.get("servers")))
            .and_then(|s| s.as_object())
            .ok_or("no \"mcpServers\" object in this file")?;
        let mut config = McpConfig::default();
        let mut notes = Vec::new();
        for (raw_name, entry) in servers {
            let Some(fields) = entry.as_object() else {
                notes.push(format!("'{raw_name}': not an object, skipped"));
                continue;
            };
            let mut known = serde_json::Map::new();
            for (key, v) in fields {
                match key.as_str() {
                    "type" | "command" | "args" | "env" | "cwd" | "url" | "headers" | "disabled" | "timeout" => {
                        known.insert(key.clone(), v.clone());
                    }
                    "serverUrl" => {
                        known.insert("url".into(), v.clone());
                    }
                    other => notes.push(format!("'{raw_name}': field '{other}' is not used by Switchboard")),
                }
            }
            let server: ServerConfig = match serde_json::from_value(serde_json::Value::Object(known)) {
                Ok(s) => s,
                Err(e) => {
                    notes.push(format!("'{raw_name}': {e}, skipped"));
                    continue;
                }
            };
            let mut name = sanitize_name(raw_name);
            let mut n = 2;
            while config.mcp_servers.contains_key(&name) {
                name = format!("{}-{n}", sanitize_name(raw_name));
                n += 1;
            }
            if &name != raw_name {
                notes.push(format!("'{raw_name}' is named '{name}' here"));
            }
            config.mcp_servers.insert(name, server);
        }
        Ok((config, notes))
    }
}

/// Writes a config file the way every config of the app is written: readable by its owner only
/// (it may hold secret references and commands), to a temporary file first and then renamed
/// over the old one, so a crash never leaves half a file. Creates the directory.
pub fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("json.tmp");
    {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(command: &str, args: &[&str]) -> ServerConfig {
        ServerConfig {
            command: Some(command.into()),
            args: args.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn claude_desktops_format_parses_and_unknown_fields_are_errors_that_name_them() {
        let config = McpConfig::parse(
            r#"{"mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"]},
                "remote": {"url": "https://mcp.example/mcp", "headers": {"X-Team": "a"}}
            }}"#,
        )
        .unwrap();
        assert_eq!(config.mcp_servers.len(), 2);
        assert!(matches!(config.mcp_servers["time"].spec("time").unwrap(), Spec::Stdio { .. }));
        assert!(matches!(config.mcp_servers["remote"].spec("remote").unwrap(), Spec::Http { .. }));

        let typo = McpConfig::parse(r#"{"mcpServers": {"t": {"comand": "x"}}}"#).unwrap_err();
        assert!(typo.contains("unknown field `comand`"), "{typo}");
        let broken = McpConfig::parse(r#"{"mcpServers": {"#).unwrap_err();
        assert!(broken.contains("line 1"), "{broken}");
        assert_eq!(McpConfig::parse("  ").unwrap(), McpConfig::default());
    }

    #[test]
    fn entries_that_make_no_sense_say_why() {
        let err = |c: ServerConfig| c.spec("s").unwrap_err().to_string();
        assert!(err(ServerConfig::default()).contains("needs a command"));
        let both = ServerConfig { url: Some("https://x".into()), ..stdio("x", &[]) };
        assert!(err(both).contains("both a command and a url"));
        let ftp = ServerConfig { url: Some("ftp://x".into()), ..Default::default() };
        assert!(err(ftp).contains("ftp: url"));
        let bad_header = ServerConfig {
            url: Some("https://x".into()),
            headers: [("bad header".to_owned(), "v".to_owned())].into(),
            ..Default::default()
        };
        assert!(err(bad_header).contains("invalid header name"));
        assert!(stdio("x", &[]).spec("a__b").unwrap_err().to_string().contains("'__'"));
        assert!(stdio("x", &[]).spec("with space").is_err());
        assert!(stdio("x", &[]).spec("time.v2-x_y").is_ok());
    }

    #[test]
    fn the_command_line_is_exact_quoted_and_never_shows_a_secret() {
        let mut c = stdio("npx", &["-y", "@scope/server", "a b", "it's"]);
        c.env.insert("API_KEY".into(), secret_value("mcp-s-API_KEY"));
        c.env.insert("MODE".into(), "fast".into());
        assert_eq!(
            c.command_line().unwrap(),
            "API_KEY='${secret:mcp-s-API_KEY}' MODE=fast npx -y @scope/server 'a b' 'it'\\''s'"
        );
        let remote = ServerConfig { url: Some("https://x".into()), ..Default::default() };
        assert_eq!(remote.command_line(), None);
    }

    #[test]
    fn the_fingerprint_changes_with_command_args_env_and_cwd_only() {
        let a = stdio("npx", &["server"]);
        let fp = a.command_fingerprint().unwrap();
        assert_eq!(fp, stdio("npx", &["server"]).command_fingerprint().unwrap());
        assert_ne!(fp, stdio("npx", &["server", "--x"]).command_fingerprint().unwrap());
        assert_ne!(fp, stdio("node", &["server"]).command_fingerprint().unwrap());
        let mut env = a.clone();
        env.env.insert("X".into(), "1".into());
        assert_ne!(fp, env.command_fingerprint().unwrap());
        let mut cwd = a.clone();
        cwd.cwd = Some("/tmp".into());
        assert_ne!(fp, cwd.command_fingerprint().unwrap());
        let mut timeout = a.clone();
        timeout.timeout = Some(5);
        assert_eq!(fp, timeout.command_fingerprint().unwrap());
    }

    #[test]
    fn credential_looking_values_move_out_and_references_stay() {
        let mut c = stdio("x", &[]);
        c.env.insert("GITHUB_TOKEN".into(), "ghp_secret".into());
        c.env.insert("LOG_LEVEL".into(), "debug".into());
        c.env.insert("API_KEY".into(), secret_value("already"));
        let found = c.extract_secrets("gh");
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].name.as_str(), found[0].value.as_str()), ("mcp-gh-GITHUB_TOKEN", "ghp_secret"));
        assert!(!format!("{found:?}").contains("ghp_secret"));
        assert_eq!(c.env["GITHUB_TOKEN"], "${secret:mcp-gh-GITHUB_TOKEN}");
        assert_eq!(c.env["LOG_LEVEL"], "debug");
        assert_eq!(c.secret_refs(), ["already", "mcp-gh-GITHUB_TOKEN"]);
        let long = secret_name(&"s".repeat(40), &"K".repeat(40));
        assert!(long.len() <= 64 && long.starts_with("mcp-sss"), "{long}");
    }

    #[test]
    fn importing_takes_the_servers_and_says_what_it_left() {
        let (config, notes) = McpConfig::import(
            r#"{"globalShortcut": "x", "mcpServers": {
                "My Files": {"command": "npx", "args": ["fs"], "autoApprove": ["read"]},
                "remote": {"serverUrl": "https://x.example/mcp"}
            }}"#,
        )
        .unwrap();
        assert_eq!(config.mcp_servers.keys().collect::<Vec<_>>(), ["My-Files", "remote"]);
        assert_eq!(config.mcp_servers["remote"].url.as_deref(), Some("https://x.example/mcp"));
        assert!(notes.iter().any(|n| n.contains("autoApprove")), "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("'My Files' is named 'My-Files'")), "{notes:?}");
        assert!(McpConfig::import("{}").unwrap_err().contains("mcpServers"));
    }

    #[test]
    fn saving_and_loading_round_trips_and_a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join(CONFIG_FILE);
        assert_eq!(McpConfig::load(&path).unwrap(), McpConfig::default());
        let mut config = McpConfig::default();
        config.mcp_servers.insert("time".into(), stdio("uvx", &["mcp-server-time"]));
        config.save(&path).unwrap();
        assert_eq!(McpConfig::load(&path).unwrap(), config);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
        std::fs::write(&path, "{not json").unwrap();
        assert!(matches!(McpConfig::load(&path), Err(ConfigError::Parse { .. })));
    }
}
