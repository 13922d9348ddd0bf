//! [`CommandToolConfig`]: a command tool as the person defines it (the settings file's and the
//! editor's shape), and every check that can be made without running it. Invariant: a
//! configuration that passes [`CommandToolConfig::check`] parses into the templates
//! [`CommandTool`](super::CommandTool) runs, so a tool never exists from a config that fails it.

use super::error::CommandToolError;
use super::limits::{DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_SECS, MAX_OUTPUT_BYTES, MAX_TIMEOUT_SECS};
use super::shell::{check_shell_scripts, shell_quote};
use crate::template::{self, Template};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use switchboard_core::ApprovalPolicy;

/// A command tool as the person configured it (the settings file's and the editor's shape).
///
/// ```json
/// {
///   "name": "grep_notes",
///   "description": "Searches my notes for a pattern and returns the matching lines.",
///   "argv": ["grep", "-n", "--", "{{pattern}}", "notes.txt"],
///   "cwd": "/home/me/notes",
///   "env": { "GREP_COLORS": "", "TOKEN": "{{secret:notes-token}}" },
///   "timeoutSecs": 10,
///   "maxOutputBytes": 65536,
///   "approval": "ask",
///   "exampleOutput": "3:a line that matches"
/// }
/// ```
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandToolConfig {
    /// The tool's name (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The program and its arguments, each a template; the program itself has no placeholder.
    pub argv: Vec<String>,
    /// The working folder, an absolute path; the person's home folder when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Extra environment variables; values are templates and may hold secrets.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// JSON Schema of the arguments; when unset every placeholder is a required string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
    /// The time limit in seconds (default 60, at most 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// How much of stdout and of stderr is kept, in bytes (default 64 KiB, at most 4 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<u64>,
    /// Whether a call asks first (default: ask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalPolicy>,
    /// What a dry run returns instead of running the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example_output: Option<String>,
}

impl CommandToolConfig {
    /// A configuration with every optional field unset (home folder, no env, generated schema,
    /// the default limits, asks first).
    pub fn new(name: impl Into<String>, description: impl Into<String>, argv: Vec<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            argv,
            cwd: None,
            env: BTreeMap::new(),
            parameters: None,
            timeout_secs: None,
            max_output_bytes: None,
            approval: None,
            example_output: None,
        }
    }

    /// Checks everything that can be checked without running it: names, templates, secrets
    /// only in `env`, no placeholder inside a shell script, every placeholder in the schema,
    /// an absolute working folder, limits in range.
    pub fn check(&self) -> Result<(), CommandToolError> {
        self.parsed().map(|_| ())
    }

    /// The approval policy calls get: [`ApprovalPolicy::Ask`] unless the person chose another.
    pub fn approval(&self) -> ApprovalPolicy {
        self.approval.unwrap_or(ApprovalPolicy::Ask)
    }

    /// Whether calls wait for the person; `false` only when they run without asking (the
    /// editor warns before saving that).
    pub fn asks_first(&self) -> bool {
        self.approval() != ApprovalPolicy::Auto
    }

    /// The time limit.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS))
    }

    /// How much of stdout (and of stderr) is kept, in bytes.
    pub fn output_limit(&self) -> u64 {
        self.max_output_bytes.unwrap_or(DEFAULT_MAX_OUTPUT_BYTES)
    }

    /// A stable fingerprint (16 hex digits, FNV-1a 64) of what runs: the argv templates, the
    /// working folder and the env templates (secret names, never values). The person is asked
    /// again when it changes.
    pub fn fingerprint(&self) -> String {
        let canonical = serde_json::json!({ "argv": self.argv, "cwd": self.cwd, "env": self.env });
        format!("{:016x}", fnv1a(canonical.to_string().as_bytes()))
    }

    /// The command line as defined, placeholders as written (`{{pattern}}`): what the person
    /// allows once, for every call (each call's exact line is [`CommandTool::command_line`](super::CommandTool::command_line)).
    pub fn command_line_template(&self) -> String {
        let mut words: Vec<String> = self.env.iter().map(|(var, t)| format!("{var}={}", shell_quote(t))).collect();
        words.extend(self.argv.iter().map(|a| shell_quote(a)));
        let mut line = words.join(" ");
        if let Some(cwd) = &self.cwd {
            line.push_str(&format!("   (in {cwd})"));
        }
        line
    }

    /// The keys its environment takes from the key store, by name, in order of first use.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for t in self.env.values().filter_map(|t| Template::parse(t).ok()) {
            for name in t.secrets() {
                if !out.iter().any(|n| n == name) {
                    out.push(name.to_owned());
                }
            }
        }
        out
    }

    /// The parsed templates, or the first problem.
    pub(super) fn parsed(&self) -> Result<Parsed, CommandToolError> {
        let tool = || self.name.clone();
        if !is_tool_name(&self.name) {
            return Err(CommandToolError::InvalidName(self.name.clone()));
        }
        if self.description.trim().is_empty() {
            return Err(CommandToolError::NoDescription(tool()));
        }
        if self.argv.first().is_none_or(|p| p.trim().is_empty()) {
            return Err(CommandToolError::NoProgram(tool()));
        }
        let template_error =
            |place: String| move |error| CommandToolError::Template { tool: self.name.clone(), place, error };
        let argv = self
            .argv
            .iter()
            .map(|a| Template::parse(a).map_err(template_error("its command".into())))
            .collect::<Result<Vec<_>, _>>()?;
        if !argv[0].is_literal() {
            return Err(CommandToolError::ProgramTemplated { tool: tool(), program: self.argv[0].clone() });
        }
        if let Some(secret) = argv.iter().flat_map(|t| t.secrets()).next() {
            return Err(CommandToolError::SecretInArgv { tool: tool(), secret: secret.to_owned() });
        }
        check_shell_scripts(&self.name, &self.argv, &argv)?;
        let mut env = Vec::with_capacity(self.env.len());
        for (var, value) in &self.env {
            if !is_env_name(var) {
                return Err(CommandToolError::BadEnvName { tool: tool(), var: var.clone() });
            }
            env.push((var.clone(), Template::parse(value).map_err(template_error(format!("the variable {var}")))?));
        }
        if let Some(cwd) = &self.cwd
            && !Path::new(cwd).is_absolute()
        {
            return Err(CommandToolError::RelativeCwd { tool: tool(), cwd: cwd.clone() });
        }
        let secs = self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
            return Err(CommandToolError::Timeout { tool: tool(), secs });
        }
        let bytes = self.output_limit();
        if !(1..=MAX_OUTPUT_BYTES).contains(&bytes) {
            return Err(CommandToolError::OutputLimit { tool: tool(), bytes });
        }
        let mut params: Vec<&str> = Vec::new();
        for t in argv.iter().chain(env.iter().map(|(_, t)| t)) {
            for p in t.params() {
                if !params.contains(&p) {
                    params.push(p);
                }
            }
        }
        let schema = match &self.parameters {
            None => template::schema_for(&params),
            Some(schema) => {
                let bad = |reason: &str| CommandToolError::BadSchema { tool: tool(), reason: reason.to_owned() };
                let object = schema.as_object().ok_or_else(|| bad("is not a JSON object"))?;
                if object.get("type").is_some_and(|t| t != "object") {
                    return Err(bad("does not describe an object (its \"type\" must be \"object\")"));
                }
                let properties = match object.get("properties") {
                    None => None,
                    Some(Value::Object(p)) => Some(p),
                    Some(_) => return Err(bad("has \"properties\" that is not an object")),
                };
                if let Some(param) = params.iter().find(|p| properties.is_none_or(|props| !props.contains_key(**p))) {
                    return Err(CommandToolError::UndefinedParam { tool: tool(), param: (*param).to_owned() });
                }
                schema.clone()
            }
        };
        Ok(Parsed { argv, env, schema })
    }
}

/// A configuration's templates, parsed.
pub(super) struct Parsed {
    pub(super) argv: Vec<Template>,
    pub(super) env: Vec<(String, Template)>,
    pub(super) schema: Value,
}

/// Whether `s` is a valid tool name: `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`.
fn is_tool_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        && s.len() <= 64
}

/// Whether `s` is a portable environment variable name: `[A-Za-z_][A-Za-z0-9_]*`.
fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::CommandTool;
    use serde_json::json;

    fn config(argv: &[&str]) -> CommandToolConfig {
        CommandToolConfig::new("t", "A test tool.", argv.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn secrets_are_refused_on_the_command_line_and_allowed_in_env() {
        let e = CommandTool::new(config(&["curl", "-H", "Authorization: {{secret:gh}}"])).unwrap_err();
        assert_eq!(e, CommandToolError::SecretInArgv { tool: "t".into(), secret: "gh".into() });
        assert!(e.to_string().contains("environment variable"), "{e}");
        let mut c = config(&["curl", "https://x.test"]);
        c.env.insert("TOKEN".into(), "Bearer {{secret:gh}}".into());
        assert!(CommandTool::new(c).is_ok());
    }

    #[test]
    fn every_definition_mistake_is_named() {
        let check = |c: CommandToolConfig| c.check().unwrap_err();
        assert!(matches!(check(config(&[])), CommandToolError::NoProgram(_)));
        assert!(matches!(check(config(&["  "])), CommandToolError::NoProgram(_)));
        assert!(matches!(check(config(&["{{prog}}", "x"])), CommandToolError::ProgramTemplated { .. }));
        assert!(matches!(check(config(&["echo", "{{a"])), CommandToolError::Template { .. }));
        let mut c = config(&["echo"]);
        c.name = "bad name".into();
        assert!(check(c).to_string().contains("'bad name'"));
        let mut c = config(&["echo"]);
        c.description = " ".into();
        assert!(matches!(check(c), CommandToolError::NoDescription(_)));
        let mut c = config(&["echo"]);
        c.cwd = Some("notes".into());
        assert!(matches!(check(c), CommandToolError::RelativeCwd { .. }));
        let mut c = config(&["echo"]);
        c.env.insert("1X".into(), "v".into());
        assert!(matches!(check(c), CommandToolError::BadEnvName { .. }));
        for (secs, ok) in [(0, false), (1, true), (3600, true), (3601, false)] {
            let mut c = config(&["echo"]);
            c.timeout_secs = Some(secs);
            assert_eq!(c.check().is_ok(), ok, "{secs}");
        }
        for (bytes, ok) in [(0, false), (MAX_OUTPUT_BYTES, true), (MAX_OUTPUT_BYTES + 1, false)] {
            let mut c = config(&["echo"]);
            c.max_output_bytes = Some(bytes);
            assert_eq!(c.check().is_ok(), ok, "{bytes}");
        }
        let mut c = config(&["echo", "{{a}}"]);
        c.env.insert("B".into(), "{{b}}".into());
        c.parameters = Some(json!({ "type": "object", "properties": { "a": { "type": "string" } } }));
        let e = check(c);
        assert_eq!(e, CommandToolError::UndefinedParam { tool: "t".into(), param: "b".into() });
        assert!(
            e.to_string().starts_with("The command tool 't' uses {{b}}, which its parameters do not define"),
            "{e}"
        );
        let mut c = config(&["echo"]);
        c.parameters = Some(json!({ "type": "string" }));
        assert!(matches!(check(c), CommandToolError::BadSchema { .. }));
        for e in [check(config(&[])), check(config(&["echo", "{{a"]))] {
            let text = e.to_string();
            assert!(text.contains("'t'") && text.ends_with('.') && !text.contains('\n'), "{text}");
        }
    }

    #[test]
    fn the_fingerprint_changes_with_what_runs_only() {
        let base = config(&["grep", "{{p}}"]);
        let fp = base.fingerprint();
        assert_eq!(fp.len(), 16);
        assert_eq!(fp, config(&["grep", "{{p}}"]).fingerprint(), "stable");
        let mut other = base.clone();
        other.argv.push("-i".into());
        assert_ne!(other.fingerprint(), fp);
        let mut other = base.clone();
        other.cwd = Some("/tmp".into());
        assert_ne!(other.fingerprint(), fp);
        let mut other = base.clone();
        other.env.insert("A".into(), "{{secret:k}}".into());
        let with_env = other.fingerprint();
        assert_ne!(with_env, fp);
        other.env.insert("A".into(), "{{secret:k2}}".into());
        assert_ne!(other.fingerprint(), with_env);
        let mut other = base.clone();
        other.description = "Something else.".into();
        other.timeout_secs = Some(5);
        assert_eq!(other.fingerprint(), fp, "the description and limits do not change what runs");
    }

    #[test]
    fn the_config_reads_camel_case_and_refuses_unknown_fields() {
        let c: CommandToolConfig = serde_json::from_value(json!({
            "name": "n", "description": "d", "argv": ["echo", "{{x}}"],
            "timeoutSecs": 5, "maxOutputBytes": 10, "approval": "auto", "exampleOutput": "x",
            "env": { "A": "b" }, "cwd": "/"
        }))
        .unwrap();
        assert_eq!(c.timeout(), Duration::from_secs(5));
        assert_eq!(c.output_limit(), 10);
        assert_eq!(serde_json::from_value::<CommandToolConfig>(serde_json::to_value(&c).unwrap()).unwrap(), c);
        let e = serde_json::from_value::<CommandToolConfig>(json!({
            "name": "n", "description": "d", "argv": ["echo"], "shell": true
        }))
        .unwrap_err();
        assert!(e.to_string().contains("shell"), "{e}");
    }
}
