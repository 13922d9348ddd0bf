//! [`CommandTool`]: a checked configuration as a [`Tool`]. It renders a call's argv and
//! environment (a value expands inside its one element; secrets only in the environment, read
//! off the async runtime), shows the exact command line, and runs it: minimal environment, stdin
//! closed, its own process group, the time limit and the stop button both ending the group.

use super::config::{CommandToolConfig, Parsed};
use super::error::CommandToolError;
use super::output::{Captured, capture, lock, success_text, tails};
use super::process::{Group, find_program, home_dir, signal_text, spawn_error};
use super::shell::shell_quote;
use crate::template::{self, Piece, Template};
use futures::future::BoxFuture;
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::{Tool, ToolContext, ToolDef, ToolError, ToolOutput, ToolSource};

/// What the loop's per-call timeout adds to the tool's own, so the tool stops the command and
/// says so before the loop gives up on the call.
const LOOP_TIMEOUT_MARGIN: Duration = Duration::from_secs(5);
/// How long the output pipes may stay open after the command exited (something it started in
/// the background still holds them) before the call ends with what was read.
const PIPE_GRACE: Duration = Duration::from_secs(1);

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
        // Forked from the process keeper thread: on Linux the child then dies with the app.
        let child = switchboard_process::spawn_on_keeper(move || switchboard_process::group(cmd).spawn())
            .await
            .map_err(|e| ToolError::Failed(spawn_error(name, &argv[0], &e)))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use switchboard_core::ApprovalPolicy;

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
}
