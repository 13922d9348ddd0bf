//! Command tools: a tool a person defines without code that runs a configured local command.
//!
//! The command is an argv array, never a shell line: each element is a template
//! ([`crate::template`]) and a `{{param}}` expands inside its one element, whatever the value
//! holds (spaces, quotes, `;`, `$(…)`, newlines), so the model can choose arguments but never
//! the command's shape. A shell runs only when the person names one (`bash -c '…'`), and then a
//! placeholder may not sit inside the script: it is passed as a positional argument (`"$1"`) or
//! an environment variable instead. `{{secret:NAME}}` is allowed in `env` only, since every
//! process on the machine can read another's command line.
//!
//! A call runs the command in its own process group with a minimal environment (`PATH`, `HOME`,
//! `USER`, `LANG`, `LC_ALL`, `TMPDIR` and the tool's own `env`; never the app's keys), stdin
//! closed, stdout and stderr read at the same time and kept up to a limit (the rest is read and
//! dropped, so the command never blocks on a full pipe). At the time limit or on stop the whole
//! group is killed, grandchildren too. A process the command leaves running in the background
//! when it exits on its own is left alone (a command may start an app on purpose); what it
//! writes after the first second is not part of the result.
//!
//! Architecture invariant: what runs is exactly what [`CommandTool::command_line`] shows the
//! person approving it, with secrets by name only.

use crate::template::{self, Piece, Template, TemplateError};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::{ApprovalPolicy, Tool, ToolContext, ToolDef, ToolError, ToolOutput, ToolSource};
use tokio::io::{AsyncRead, AsyncReadExt};

/// The time limit when none is configured, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
/// The longest time limit a command tool can have, in seconds (an hour).
pub const MAX_TIMEOUT_SECS: u64 = 3600;
/// How much of stdout (and of stderr) is kept when no limit is configured.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 64 * 1024;
/// The largest output limit a command tool can have.
pub const MAX_OUTPUT_BYTES: u64 = 4 * 1024 * 1024;

/// What the loop's per-call timeout adds to the tool's own, so the tool stops the command and
/// says so before the loop gives up on the call.
const LOOP_TIMEOUT_MARGIN: Duration = Duration::from_secs(5);
/// How long the output pipes may stay open after the command exited (something it started in
/// the background still holds them) before the call ends with what was read.
const PIPE_GRACE: Duration = Duration::from_secs(1);
/// How much of the end of stdout and of stderr an error quotes.
const ERROR_TAIL_CHARS: usize = 2000;

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

/// Why a command tool's configuration cannot be used. Each message is one sentence naming the
/// tool and saying what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandToolError {
    /// The name is not a valid tool name.
    #[error(
        "The command tool name '{0}' is not valid: use 1 to 64 letters, digits, _ or -, starting with a letter or _."
    )]
    InvalidName(String),
    /// The description is empty.
    #[error("The command tool '{0}' needs a description, so the model knows when to use it.")]
    NoDescription(String),
    /// `argv` is empty or its program is blank.
    #[error("The command tool '{0}' has no program to run: the first element of its command is empty.")]
    NoProgram(String),
    /// The program is a placeholder.
    #[error(
        "The command tool '{tool}' lets the model choose the program ('{program}'): the first element of its command must be written out."
    )]
    ProgramTemplated {
        /// The tool's name.
        tool: String,
        /// The first element as written.
        program: String,
    },
    /// A template cannot be parsed.
    #[error("The command tool '{tool}' has a broken placeholder in {place}: the template {error}.")]
    Template {
        /// The tool's name.
        tool: String,
        /// Where (`its command`, `the variable X`).
        place: String,
        /// What is wrong.
        error: TemplateError,
    },
    /// `{{secret:NAME}}` in an argv element.
    #[error(
        "The command tool '{tool}' puts the secret '{secret}' on its command line, where any program on this computer can read it: pass it in an environment variable instead (env, e.g. TOKEN = {{{{secret:{secret}}}}})."
    )]
    SecretInArgv {
        /// The tool's name.
        tool: String,
        /// The secret's name.
        secret: String,
    },
    /// A placeholder inside the script a shell runs.
    #[error(
        "The command tool '{tool}' puts {{{{{param}}}}} inside the script {shell} runs, where its value would be read as code: {advice}."
    )]
    ParamInShellScript {
        /// The tool's name.
        tool: String,
        /// The parameter.
        param: String,
        /// The shell's file name.
        shell: String,
        /// How to pass it instead.
        advice: String,
    },
    /// The working folder is not an absolute path.
    #[error("The command tool '{tool}' has the working folder '{cwd}', which is not an absolute path.")]
    RelativeCwd {
        /// The tool's name.
        tool: String,
        /// The folder as written.
        cwd: String,
    },
    /// An environment variable name that is not one.
    #[error(
        "The command tool '{tool}' sets the environment variable '{var}', which is not a valid name: use letters, digits and _, not starting with a digit."
    )]
    BadEnvName {
        /// The tool's name.
        tool: String,
        /// The name as written.
        var: String,
    },
    /// A placeholder the parameter schema does not define.
    #[error(
        "The command tool '{tool}' uses {{{{{param}}}}}, which its parameters do not define: add '{param}' to the schema's properties or remove the placeholder."
    )]
    UndefinedParam {
        /// The tool's name.
        tool: String,
        /// The parameter.
        param: String,
    },
    /// The parameter schema is not an object schema.
    #[error("The command tool '{tool}' has a parameter schema that {reason}.")]
    BadSchema {
        /// The tool's name.
        tool: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The time limit is 0 or above an hour.
    #[error("The command tool '{tool}' has a time limit of {secs} s: use 1 to {MAX_TIMEOUT_SECS} seconds.")]
    Timeout {
        /// The tool's name.
        tool: String,
        /// The configured limit.
        secs: u64,
    },
    /// The output limit is 0 or above 4 MiB.
    #[error("The command tool '{tool}' keeps at most {bytes} bytes of output: use 1 to {MAX_OUTPUT_BYTES} bytes.")]
    OutputLimit {
        /// The tool's name.
        tool: String,
        /// The configured limit.
        bytes: u64,
    },
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
    /// allows once, for every call (each call's exact line is [`CommandTool::command_line`]).
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
    fn parsed(&self) -> Result<Parsed, CommandToolError> {
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
struct Parsed {
    argv: Vec<Template>,
    env: Vec<(String, Template)>,
    schema: Value,
}

/// A configured command as a [`Tool`].
#[derive(Debug)]
pub struct CommandTool {
    config: CommandToolConfig,
    def: ToolDef,
    argv: Vec<Template>,
    env: Vec<(String, Template)>,
}

impl CommandTool {
    /// The tool for `config`, or why the configuration cannot be used ([`CommandToolConfig::check`]).
    pub fn new(config: CommandToolConfig) -> Result<CommandTool, CommandToolError> {
        let Parsed { argv, env, schema } = config.parsed()?;
        let mut def = ToolDef::new(config.name.clone(), config.description.clone(), schema);
        def.source = ToolSource::Command;
        def.approval = config.approval();
        def.example_output = config.example_output.clone();
        def.timeout = Some(config.timeout() + LOOP_TIMEOUT_MARGIN);
        Ok(CommandTool { config, def, argv, env })
    }

    /// Its configuration.
    pub fn config(&self) -> &CommandToolConfig {
        &self.config
    }

    /// The exact command line a call with `args` runs, as a person would type it in a POSIX
    /// shell: environment variables first (a secret shown as `NAME=[secret KEY]`), then each
    /// argv element quoted when it needs to be, then the working folder. Arguments that cannot
    /// be passed (a NUL character) are an error, as they would be when running.
    pub fn command_line(&self, args: &Value) -> Result<String, ToolError> {
        let mut words: Vec<String> =
            self.env.iter().map(|(var, t)| format!("{var}={}", shown_value(t, args))).collect();
        words.extend(self.render_argv(args)?.iter().map(|a| shell_quote(a)));
        let mut line = words.join(" ");
        match (&self.config.cwd, home_dir()) {
            (Some(cwd), _) => line.push_str(&format!("   (in {cwd})")),
            (None, Some(home)) => line.push_str(&format!("   (in {})", home.display())),
            (None, None) => line.push_str("   (in the home folder)"),
        }
        Ok(line)
    }

    /// The argv a call with `args` runs. An element that is exactly one placeholder whose
    /// argument is absent or `null` (an optional parameter) is left out; elsewhere an absent
    /// argument is empty text.
    fn render_argv(&self, args: &Value) -> Result<Vec<String>, ToolError> {
        let mut out = Vec::with_capacity(self.argv.len());
        for (i, t) in self.argv.iter().enumerate() {
            if i > 0
                && let [Piece::Param(p)] = t.pieces()
                && argument(args, p).is_none()
            {
                continue;
            }
            let text = t.render(
                |p| Ok(argument(args, p).map(template::value_text).unwrap_or_default()),
                |s| Err(ToolError::Failed(format!("the secret '{s}' cannot be on a command line"))),
            )?;
            if text.contains('\0') {
                return Err(nul_error(t));
            }
            out.push(text);
        }
        Ok(out)
    }

    /// The tool's own variables for a call with `args`, secrets read from `ctx`.
    async fn render_env(&self, args: &Value, ctx: &ToolContext) -> Result<Vec<(String, String)>, ToolError> {
        let names: Vec<String> = {
            let mut names: Vec<String> = Vec::new();
            for s in self.env.iter().flat_map(|(_, t)| t.secrets()) {
                if !names.iter().any(|n| n == s) {
                    names.push(s.to_owned());
                }
            }
            names
        };
        let mut values = HashMap::new();
        if !names.is_empty() {
            // A keychain read may wait on an unlock prompt: keep it off the async runtime.
            let secrets = ctx.secrets.clone();
            let wanted = names.clone();
            let read = tokio::task::spawn_blocking(move || {
                wanted.iter().map(|n| secrets.get(n)).collect::<Vec<Result<_, String>>>()
            })
            .await
            .map_err(|_| {
                ToolError::Failed(format!("'{}' could not read its keys (the read was interrupted).", self.def.name))
            })?;
            for (name, value) in names.iter().zip(read) {
                match value {
                    Ok(Some(v)) => {
                        values.insert(name.clone(), v);
                    }
                    Ok(None) => {
                        return Err(ToolError::MissingSecret(format!(
                            "'{}' needs the key '{name}', which is not set. Add it in Settings (or set {}), then try again.",
                            self.def.name,
                            crate::web::key_env_var(name)
                        )));
                    }
                    Err(why) => {
                        return Err(ToolError::Failed(format!(
                            "'{}' could not read the key '{name}': {why}. Unlock your system keychain, then try again.",
                            self.def.name
                        )));
                    }
                }
            }
        }
        let mut out = Vec::with_capacity(self.env.len());
        for (var, t) in &self.env {
            let text = t.render(
                |p| Ok::<_, ToolError>(argument(args, p).map(template::value_text).unwrap_or_default()),
                |s| Ok(values.get(s).map(|v| v.expose().to_owned()).unwrap_or_default()),
            )?;
            if text.contains('\0') {
                return Err(ToolError::InvalidArguments(format!(
                    "the environment variable {var} would contain a NUL character, which it cannot hold"
                )));
            }
            out.push((var.clone(), text));
        }
        Ok(out)
    }

    /// Runs one call.
    async fn run(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let name = &self.def.name;
        let argv = self.render_argv(&args)?;
        let own_env = self.render_env(&args, &ctx).await?;
        // The minimal environment every child gets, then the tool's own variables (which win).
        let mut env: Vec<(OsString, OsString)> = switchboard_process::minimal_env()
            .into_iter()
            .filter(|(k, _)| !own_env.iter().any(|(o, _)| OsStr::new(o) == k))
            .collect();
        env.extend(own_env.into_iter().map(|(k, v)| (k.into(), v.into())));
        let cwd = match &self.config.cwd {
            Some(cwd) => PathBuf::from(cwd),
            None => home_dir().ok_or_else(|| {
                ToolError::Failed(format!(
                    "'{name}' has no working folder and no home folder was found: set its working folder in the tool's settings."
                ))
            })?,
        };
        if !cwd.is_dir() {
            return Err(ToolError::Failed(format!(
                "'{name}' cannot run: its working folder {} does not exist. Check the tool's settings.",
                cwd.display()
            )));
        }
        let path_var = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_os_str());
        let program = find_program(&argv[0], path_var, &cwd).map_err(|why| {
            ToolError::Failed(format!("'{name}' cannot run '{}': {why}. Check the tool's settings.", argv[0]))
        })?;

        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let mut cmd = tokio::process::Command::new(&program);
        #[cfg(unix)]
        cmd.arg0(&argv[0]);
        cmd.args(&argv[1..])
            .env_clear()
            .envs(env)
            .current_dir(&cwd)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let child =
            switchboard_process::group(cmd).spawn().map_err(|e| ToolError::Failed(spawn_error(name, &argv[0], &e)))?;
        let mut group = Group { child, exited: false };

        let limit = usize::try_from(self.config.output_limit()).unwrap_or(usize::MAX);
        let stdout = Arc::new(Mutex::new(Captured::default()));
        let stderr = Arc::new(Mutex::new(Captured::default()));
        let mut readers = Vec::with_capacity(2);
        if let Some(out) = group.child.stdout().take() {
            readers.push(tokio::spawn(capture(out, limit, Arc::clone(&stdout))));
        }
        if let Some(err) = group.child.stderr().take() {
            readers.push(tokio::spawn(capture(err, limit, Arc::clone(&stderr))));
        }
        let readers = futures::future::join_all(readers);

        let timeout = self.config.timeout();
        enum End {
            Exited(std::io::Result<std::process::ExitStatus>),
            TimedOut,
            Cancelled,
        }
        let end = tokio::select! {
            biased;
            _ = ctx.cancel.cancelled() => End::Cancelled,
            status = group.child.wait() => End::Exited(status),
            _ = tokio::time::sleep(timeout) => End::TimedOut,
        };
        let status = match end {
            End::Exited(status) => {
                group.exited = true;
                status
            }
            End::Cancelled => {
                group.stop().await;
                let _ = tokio::time::timeout(PIPE_GRACE, readers).await;
                return Err(ToolError::Cancelled);
            }
            End::TimedOut => {
                group.stop().await;
                // The group is gone, so the pipes close; a process that left the group may
                // still hold them, which the grace covers.
                let _ = tokio::time::timeout(PIPE_GRACE, readers).await;
                let so_far = tails(&lock(&stdout), &lock(&stderr));
                return Err(ToolError::Failed(format!(
                    "'{name}' was stopped after {} s (its time limit); output so far: {}",
                    timeout.as_secs(),
                    if so_far.is_empty() { "none".to_owned() } else { format!("\n{so_far}") }
                )));
            }
        };
        // Something the command started in the background may hold the pipes: wait a little,
        // then answer with what was read (the readers keep draining until they close).
        let _ = tokio::time::timeout(PIPE_GRACE, readers).await;
        let status = status.map_err(|e| ToolError::Failed(format!("'{name}' could not be waited for: {e}")))?;
        let (stdout, stderr) = (lock(&stdout).clone(), lock(&stderr).clone());
        if status.success() {
            return Ok(ToolOutput::text(success_text(&stdout, &stderr)));
        }
        let how = match status.code() {
            Some(code) => format!("'{name}' exited with code {code}."),
            None => signal_text(name, &status),
        };
        let tail = tails(&stdout, &stderr);
        Err(ToolError::Failed(if tail.is_empty() { how } else { format!("{how}\n{tail}") }))
    }
}

impl Tool for CommandTool {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(args, ctx))
    }

    fn preview(&self, args: &Value) -> Option<String> {
        self.command_line(args).ok()
    }
}

/// A running command's process group, killed when dropped before it exited (a call whose
/// future the loop dropped leaves nothing running).
struct Group {
    child: Box<dyn process_wrap::tokio::ChildWrapper>,
    exited: bool,
}

impl Group {
    /// Kills the whole group and reaps the command.
    async fn stop(&mut self) {
        let _ = self.child.start_kill();
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await.is_ok() {
            self.exited = true;
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if !self.exited {
            let _ = self.child.start_kill();
        }
    }
}

/// What was read from one pipe: the first bytes up to the limit, and how many there were.
#[derive(Clone, Debug, Default)]
struct Captured {
    kept: Vec<u8>,
    total: u64,
}

impl Captured {
    /// The kept bytes as text (invalid UTF-8 replaced; a character the limit cut in half
    /// left out).
    fn text(&self) -> String {
        let bytes = match std::str::from_utf8(&self.kept) {
            Err(e) if e.error_len().is_none() && self.cut() => &self.kept[..e.valid_up_to()],
            _ => &self.kept[..],
        };
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// Whether the limit cut the output.
    fn cut(&self) -> bool {
        self.total > self.kept.len() as u64
    }

    /// The note that says the output was cut, if it was.
    fn cut_note(&self, what: &str) -> Option<String> {
        self.cut().then(|| format!("[{what} cut: kept the first {} of {} bytes]", self.kept.len(), self.total))
    }
}

/// Reads `pipe` to its end, keeping the first `limit` bytes in `into` and dropping the rest.
async fn capture(mut pipe: impl AsyncRead + Unpin, limit: usize, into: Arc<Mutex<Captured>>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut c = lock(&into);
                let room = limit.saturating_sub(c.kept.len());
                c.kept.extend_from_slice(&buf[..n.min(room)]);
                c.total += n as u64;
            }
        }
    }
}

fn lock(c: &Mutex<Captured>) -> std::sync::MutexGuard<'_, Captured> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

/// A successful call's text: stdout, then a `stderr:` section when there is any.
fn success_text(stdout: &Captured, stderr: &Captured) -> String {
    let mut text = stdout.text();
    if let Some(note) = stdout.cut_note("output") {
        push_line(&mut text, &note);
    }
    if stderr.total > 0 {
        if !text.is_empty() {
            push_line(&mut text, "\n");
        }
        text.push_str("stderr:\n");
        text.push_str(&stderr.text());
        if let Some(note) = stderr.cut_note("stderr") {
            push_line(&mut text, &note);
        }
    }
    if text.is_empty() {
        text.push_str("(the command finished with no output)");
    }
    text
}

/// The end of stderr and of stdout, labelled, for an error message; empty when both are.
fn tails(stdout: &Captured, stderr: &Captured) -> String {
    let mut out = String::new();
    for (label, c) in [("stderr", stderr), ("stdout", stdout)] {
        let text = c.text();
        let text = text.trim_end();
        if text.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        let n = text.chars().count();
        if n > ERROR_TAIL_CHARS || c.cut() {
            let start = text.char_indices().nth(n.saturating_sub(ERROR_TAIL_CHARS)).map_or(0, |(i, _)| i);
            out.push_str(&format!("{label} (the end of what was kept):\n…{}", &text[start..]));
        } else {
            out.push_str(&format!("{label}:\n{text}"));
        }
    }
    out
}

fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
}

#[cfg(unix)]
fn signal_text(name: &str, status: &std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status.signal() {
        Some(sig) => format!("'{name}' was ended by signal {sig}."),
        None => format!("'{name}' failed ({status})."),
    }
}

#[cfg(not(unix))]
fn signal_text(name: &str, status: &std::process::ExitStatus) -> String {
    format!("'{name}' failed ({status}).")
}

/// Why a spawn failed, in words: the program is missing, not executable, or something else.
fn spawn_error(tool: &str, program: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("'{tool}' cannot run '{program}': it was not found. Check the tool's settings.")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("'{tool}' cannot run '{program}': it is not executable. Check the tool's settings.")
        }
        _ => format!("'{tool}' could not start '{program}': {e}. Check the tool's settings."),
    }
}

/// The argument `name`, unless absent or `null`.
fn argument<'a>(args: &'a Value, name: &str) -> Option<&'a Value> {
    args.get(name).filter(|v| !v.is_null())
}

fn nul_error(t: &Template) -> ToolError {
    let params = t.params().join("', '");
    ToolError::InvalidArguments(format!(
        "the value of '{params}' contains a NUL character, which a command argument cannot hold"
    ))
}

/// An env value for the command line: quoted text, secrets as `[secret KEY]`.
fn shown_value(t: &Template, args: &Value) -> String {
    let mut out = String::new();
    let mut text = String::new();
    for piece in t.pieces() {
        match piece {
            Piece::Literal(s) => text.push_str(s),
            Piece::Param(p) => text.push_str(&argument(args, p).map(template::value_text).unwrap_or_default()),
            Piece::Secret(s) => {
                if !text.is_empty() {
                    out.push_str(&shell_quote(&std::mem::take(&mut text)));
                }
                out.push_str(&format!("[secret {s}]"));
            }
        }
    }
    if !text.is_empty() || out.is_empty() {
        out.push_str(&shell_quote(&text));
    }
    out
}

/// A word quoted for a POSIX shell when it has anything but safe characters.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '@' | '+' | ',' | '=' | '%')
        });
    if safe { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
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

/// The person's home folder.
fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var).filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The program to run for `program`: a bare name is looked up on `path` (the command's own
/// PATH, not the app's), a relative path with a folder is taken from `cwd`.
fn find_program(program: &str, path: Option<&OsStr>, cwd: &Path) -> Result<PathBuf, String> {
    let given = Path::new(program);
    if given.components().count() > 1 || given.is_absolute() {
        let full = if given.is_absolute() { given.to_path_buf() } else { cwd.join(given) };
        return if full.is_file() { Ok(full) } else { Err(format!("{} does not exist", full.display())) };
    }
    let path = path.unwrap_or_default();
    for dir in std::env::split_paths(path).filter(|d| !d.as_os_str().is_empty()) {
        for candidate in candidates(&dir.join(program)) {
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
    }
    Err(format!("it was not found on the PATH commands get ({}), so give its full path", path.to_string_lossy()))
}

#[cfg(unix)]
fn candidates(base: &Path) -> Vec<PathBuf> {
    vec![base.to_path_buf()]
}

#[cfg(windows)]
fn candidates(base: &Path) -> Vec<PathBuf> {
    let mut out = vec![base.to_path_buf()];
    if base.extension().is_none() {
        let exts = std::env::var("PATHEXT").unwrap_or_else(|_| ".COM;.EXE;.BAT;.CMD".into());
        out.extend(exts.split(';').filter(|e| !e.is_empty()).map(|e| base.with_extension(e.trim_start_matches('.'))));
    }
    out
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(windows)]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// How a shell takes a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ShellKind {
    /// `sh -c SCRIPT [NAME ARGS…]`: one element is the script, the ones after it are `$0`, `$1`…
    Posix,
    /// `cmd /c …`, `pwsh -Command …`: everything after the flag is the script.
    RestOfLine,
}

/// The shell `word` names (by file name, any folder, `.exe` or not), if any.
fn shell_kind(word: &str) -> Option<ShellKind> {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word).to_ascii_lowercase();
    match base.strip_suffix(".exe").unwrap_or(&base) {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" => Some(ShellKind::Posix),
        "cmd" | "pwsh" | "powershell" => Some(ShellKind::RestOfLine),
        _ => None,
    }
}

/// Refuses a placeholder inside a script a shell runs. The first element naming a shell counts,
/// not only the program (`timeout 5 bash -c …`, `env bash -c …`); what follows it is the
/// shell's (its options, its script, then the script's arguments, where `sh` is often `$0`).
fn check_shell_scripts(tool: &str, raw: &[String], argv: &[Template]) -> Result<(), CommandToolError> {
    let first_shell =
        raw.iter().enumerate().find_map(|(i, w)| shell_kind(w).filter(|_| argv[i].is_literal()).map(|k| (i, k)));
    if let Some((i, kind)) = first_shell {
        let word = &raw[i];
        let shell = word.rsplit(['/', '\\']).next().unwrap_or(word).to_owned();
        let (checked, advice) = match kind {
            ShellKind::Posix => (
                posix_script_end(raw, argv, i).map(|end| i + 1..end + 1),
                "pass it as a positional argument instead (after the script, e.g. \"--\", \"{{name}}\", and use \"$1\" in the script)",
            ),
            ShellKind::RestOfLine => (
                rest_of_line_flag(&shell, &raw[i + 1..]).then_some(i + 1..raw.len()),
                "pass it in an environment variable instead (env, e.g. VALUE = {{name}}, read as %VALUE% or $env:VALUE)",
            ),
        };
        if let Some(param) = checked.and_then(|range| argv[range].iter().flat_map(|t| t.params()).next()) {
            return Err(CommandToolError::ParamInShellScript {
                tool: tool.to_owned(),
                param: param.to_owned(),
                shell,
                advice: advice.replace("name", param),
            });
        }
    }
    Ok(())
}

/// The index of the script element of the POSIX shell at `shell`, when it runs one (`-c`,
/// `-lc`, `-ec`…, fish's `--command`); `None` when it runs a file or reads stdin. An element
/// with a placeholder where an option could be is taken as the script (so it is refused).
fn posix_script_end(raw: &[String], argv: &[Template], shell: usize) -> Option<usize> {
    let mut command_flag = false;
    let mut j = shell + 1;
    while j < raw.len() {
        let a = raw[j].as_str();
        if !argv[j].is_literal() {
            return Some(j);
        }
        if a == "--" || a == "-" {
            if !command_flag {
                return None;
            }
        } else if matches!(a, "-o" | "+o" | "-O" | "+O") {
            j += 1;
        } else if a == "--command" {
            command_flag = true;
        } else if a.starts_with("--command=") {
            return Some(j);
        } else if a.starts_with("--") {
            // A long option (`--login`, `--norc`).
        } else if let Some(flags) = a.strip_prefix(['-', '+']).filter(|f| !f.is_empty()) {
            if flags.chars().all(|c| c.is_ascii_alphabetic()) && flags.contains('c') && a.starts_with('-') {
                command_flag = true;
            }
        } else {
            return command_flag.then_some(j);
        }
        j += 1;
    }
    None
}

/// Whether `args` (what follows `cmd` or PowerShell) has the flag after which the rest of the
/// line is the script: `/c`, `/k` for cmd; `-c`, `-Command`, `-EncodedCommand` (or their
/// prefixes) for PowerShell.
fn rest_of_line_flag(shell: &str, args: &[String]) -> bool {
    let is_cmd = shell.to_ascii_lowercase().trim_end_matches(".exe") == "cmd";
    args.iter().any(|a| {
        let a = a.to_ascii_lowercase();
        if is_cmd {
            return a == "/c" || a == "/k";
        }
        let Some(flag) = a.strip_prefix("--").or_else(|| a.strip_prefix(['-', '/'])) else { return false };
        !flag.is_empty() && ("command".starts_with(flag) || "encodedcommand".starts_with(flag) || flag == "ec")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config(argv: &[&str]) -> CommandToolConfig {
        CommandToolConfig::new("t", "A test tool.", argv.iter().map(|s| (*s).to_owned()).collect())
    }

    fn tool(argv: &[&str]) -> CommandTool {
        CommandTool::new(config(argv)).unwrap()
    }

    #[test]
    fn a_value_expands_inside_one_element_whatever_it_holds() {
        let t = tool(&["printf", "<%s>\\n", "{{a}}", "x={{b}}"]);
        let nasty = "one two 'q' \"d\"; rm -rf ~ $(reboot) `id` * \n second line ünïcødé | > <";
        let argv = t.render_argv(&json!({ "a": nasty, "b": "a b" })).unwrap();
        assert_eq!(argv, ["printf", "<%s>\\n", nasty, "x=a b"]);
        let argv = t.render_argv(&json!({ "a": 3.5, "b": true })).unwrap();
        assert_eq!(argv[2..], ["3.5", "x=true"]);
        let nul = t.render_argv(&json!({ "a": "a\0b", "b": "" })).unwrap_err();
        assert!(matches!(nul, ToolError::InvalidArguments(ref m) if m.contains("NUL") && m.contains("'a'")), "{nul:?}");
    }

    #[test]
    fn an_optional_element_is_left_out_when_its_argument_is_absent() {
        let mut c = config(&["ls", "{{flags}}", "--", "dir-{{name}}"]);
        c.parameters = Some(json!({
            "type": "object",
            "properties": { "flags": { "type": "string" }, "name": { "type": "string" } },
            "required": []
        }));
        let t = CommandTool::new(c).unwrap();
        assert_eq!(t.render_argv(&json!({})).unwrap(), ["ls", "--", "dir-"]);
        assert_eq!(t.render_argv(&json!({ "flags": null, "name": "x" })).unwrap(), ["ls", "--", "dir-x"]);
        assert_eq!(t.render_argv(&json!({ "flags": "" })).unwrap(), ["ls", "", "--", "dir-"]);
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
    fn a_placeholder_inside_a_shell_script_is_refused_and_a_positional_one_allowed() {
        for argv in [
            &["bash", "-c", "grep -n '{{pattern}}' notes.txt"][..],
            &["/bin/sh", "-c", "{{pattern}}"],
            &["bash", "-lc", "echo {{pattern}}"],
            &["zsh", "-o", "pipefail", "-c", "echo {{pattern}}"],
            &["fish", "--command", "echo {{pattern}}"],
            &["timeout", "5", "dash", "-ec", "echo {{pattern}}"],
            &["bash", "{{pattern}}", "-c", "echo hi"],
            &["cmd.exe", "/c", "echo", "{{pattern}}"],
            &["pwsh", "-Command", "Get-Item", "{{pattern}}"],
            &["C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", "-c", "{{pattern}}"],
        ] {
            let e = CommandTool::new(config(argv)).unwrap_err();
            assert!(
                matches!(&e, CommandToolError::ParamInShellScript { param, .. } if param == "pattern"),
                "{argv:?}: {e:?}"
            );
        }
        let e = CommandTool::new(config(&["bash", "-c", "grep -n {{pattern}} notes.txt"])).unwrap_err().to_string();
        assert!(e.contains("positional argument") && e.contains("\"{{pattern}}\"") && e.contains("bash"), "{e}");
        let e = CommandTool::new(config(&["cmd", "/C", "dir {{pattern}}"])).unwrap_err().to_string();
        assert!(e.contains("environment variable"), "{e}");
        for argv in [
            &["bash", "-c", "grep -n \"$1\" notes.txt", "--", "{{pattern}}"][..],
            &["sh", "-c", "printf '%s' \"$1\"", "sh", "x{{pattern}}"],
            &["bash", "script.sh", "{{pattern}}"],
            &["grep", "-c", "{{pattern}}", "notes.txt"],
            &["pwsh", "-File", "s.ps1", "{{pattern}}"],
        ] {
            assert!(CommandTool::new(config(argv)).is_ok(), "{argv:?}");
        }
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
    fn the_schema_is_generated_from_every_placeholder_and_the_def_asks_first() {
        let mut c = config(&["grep", "-n", "{{pattern}}", "{{file}}", "{{pattern}}"]);
        c.env.insert("MODE".into(), "{{mode}}-{{secret:k}}".into());
        c.example_output = Some("1:x".into());
        c.timeout_secs = Some(10);
        let t = CommandTool::new(c).unwrap();
        let def = t.def();
        assert_eq!(def.parameters, template::schema_for(&["pattern", "file", "mode"]));
        assert_eq!(def.source, ToolSource::Command);
        assert_eq!(def.approval, ApprovalPolicy::Ask);
        assert_eq!(def.example_output.as_deref(), Some("1:x"));
        assert_eq!(def.timeout, Some(Duration::from_secs(15)));
        assert!(t.config().asks_first());
        let mut c = config(&["echo"]);
        c.approval = Some(ApprovalPolicy::Auto);
        assert!(!c.asks_first());
        assert_eq!(CommandTool::new(c).unwrap().def().approval, ApprovalPolicy::Auto);
    }

    #[test]
    fn the_command_line_is_quoted_exactly_and_shows_secrets_by_name() {
        let mut c = config(&["printf", "<%s>\\n", "{{a}}", "{{b}}"]);
        c.cwd = Some("/srv/notes".into());
        c.env.insert("TOKEN".into(), "{{secret:gh}}".into());
        c.env.insert("AUTH".into(), "Bearer {{secret:gh}}".into());
        c.env.insert("LEVEL".into(), "{{b}}".into());
        let t = CommandTool::new(c).unwrap();
        let line = t.command_line(&json!({ "a": "it's one", "b": "plain" })).unwrap();
        assert_eq!(
            line,
            "AUTH='Bearer '[secret gh] LEVEL=plain TOKEN=[secret gh] printf '<%s>\\n' 'it'\\''s one' plain   (in /srv/notes)"
        );
        assert_eq!(
            t.preview(&json!({ "a": "", "b": "x y" })).unwrap(),
            "AUTH='Bearer '[secret gh] LEVEL='x y' TOKEN=[secret gh] printf '<%s>\\n' '' 'x y'   (in /srv/notes)"
        );
        assert_eq!(shell_quote("$(id)"), "'$(id)'");
        assert_eq!(shell_quote("a\nb"), "'a\nb'");
        assert_eq!(shell_quote("ü"), "'ü'");
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

    #[test]
    fn programs_are_found_on_the_given_path_only() {
        let dir = std::env::temp_dir();
        assert!(
            find_program("sh", Some(OsStr::new("/nonexistent-dir")), &dir).unwrap_err().contains("/nonexistent-dir")
        );
        #[cfg(unix)]
        {
            let sh = find_program("sh", Some(OsStr::new("/nonexistent-dir:/bin:/usr/bin")), &dir).unwrap();
            assert!(sh.ends_with("sh"), "{sh:?}");
            assert!(find_program("/definitely/not/here", None, &dir).unwrap_err().contains("does not exist"));
        }
    }

    #[test]
    fn a_cut_output_says_so_and_never_ends_in_half_a_character() {
        let c = Captured { kept: "aé".as_bytes()[..2].to_vec(), total: 100 };
        assert_eq!(c.text(), "a");
        let text = success_text(&c, &Captured::default());
        assert_eq!(text, "a\n[output cut: kept the first 2 of 100 bytes]");
        let err = Captured { kept: b"boom\n".to_vec(), total: 5 };
        assert_eq!(success_text(&Captured::default(), &err), "stderr:\nboom\n");
        assert_eq!(success_text(&Captured::default(), &Captured::default()), "(the command finished with no output)");
    }
}
