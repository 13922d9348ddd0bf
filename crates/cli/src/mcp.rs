//! `switchboard mcp`: the MCP servers of the config file, as Settings shows them.

use crate::{CliError, render, runtime};
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;
use switchboard_core::SourceStatus;
use switchboard_service::mcp::McpServerInfo;
use switchboard_service::{Confirm, Service, Widening};

#[derive(Subcommand, Debug)]
pub enum McpCmd {
    /// List the configured servers (without starting them).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add or replace a server: `mcp add NAME -- COMMAND ARGS...` (local) or `mcp add NAME --url URL`.
    Add {
        /// The server's name (letters, digits, '-', '_', '.'); its tools are NAME__tool.
        name: String,
        /// A remote server's streamable-HTTP endpoint.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// A header for a remote server, `Name=value` (repeatable; credentials go to the keychain).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// An environment variable for a local server, `NAME=value` (repeatable; credentials go
        /// to the keychain).
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// A local server's working directory.
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Seconds one tool call may take.
        #[arg(long)]
        timeout: Option<u64>,
        /// Confirm running the command shown (for scripts; without it nothing runs).
        #[arg(long)]
        yes: bool,
        /// The command and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Edit a server: each option given replaces that part, the rest stays
    /// (`mcp edit NAME -- COMMAND ARGS...`, `--url URL`, `--env NAME=value`, `--rename NEW`).
    Edit {
        /// The server.
        name: String,
        /// A new name (refused when another server has it).
        #[arg(long)]
        rename: Option<String>,
        /// A remote server's new endpoint.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// Set a header, `Name=value` (repeatable; credentials go to the keychain).
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// Remove a header (repeatable).
        #[arg(long = "remove-header", value_name = "NAME")]
        remove_headers: Vec<String>,
        /// Set an environment variable, `NAME=value` (repeatable; credentials go to the keychain).
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// Remove an environment variable (repeatable).
        #[arg(long = "remove-env", value_name = "NAME")]
        remove_env: Vec<String>,
        /// A local server's working directory.
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Seconds one tool call may take.
        #[arg(long)]
        timeout: Option<u64>,
        /// Confirm running the command shown when it changed (for scripts; without it nothing runs).
        #[arg(long)]
        yes: bool,
        /// The new command and its arguments, after `--`.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Remove a server (its keys stay in the keychain).
    Remove {
        /// The server.
        name: String,
    },
    /// Import the servers of Claude Desktop's or Cursor's config file, or of the JSON a
    /// server's README shows (`-`: read from stdin; a whole `mcpServers` file, one server's
    /// entry or only its object).
    Import {
        /// The file (`claude_desktop_config.json`, `~/.cursor/mcp.json`), or `-` for stdin.
        file: PathBuf,
        /// Confirm running the commands shown.
        #[arg(long)]
        yes: bool,
    },
    /// Start every server and show its state, tools and problems.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Start a server and print what it wrote to stderr (and its log notifications).
    Logs {
        /// The server.
        name: String,
        /// Ask it for log notifications at this level and above (debug, info, notice, warning,
        /// error, critical, alert, emergency) and wait a moment for them.
        #[arg(long)]
        level: Option<String>,
    },
    /// Start a server and list its prompts with their arguments.
    Prompts {
        /// The server.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Start a server and list its resources and resource templates.
    Resources {
        /// The server.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Allow a server's command (new, or changed since it was allowed) to run.
    Approve {
        /// The server.
        name: String,
        /// Confirm running the command shown.
        #[arg(long)]
        yes: bool,
    },
    /// Sign in to a remote server that asks for it (OAuth): opens the address in your browser.
    Login {
        /// The server.
        name: String,
    },
    /// Forget a remote server's sign-in.
    Logout {
        /// The server.
        name: String,
    },
    /// Offer a server's tools whose definitions changed since they were approved.
    ApproveTools {
        /// The server.
        name: String,
        /// Confirm offering them as they are now (shown first).
        #[arg(long)]
        yes: bool,
    },
}

/// `--yes`, showing on stderr exactly what it agrees to (the command line, the keys it sends),
/// or would agree to when it was not given.
pub(crate) struct Yes(pub(crate) bool);

impl Confirm for Yes {
    fn confirm(&self, changes: &[Widening]) -> bool {
        // The service's text is neutralised already; it is printed through the same function
        // as every other text a server or a document wrote.
        let what = Widening::describe_all(changes);
        let what = render::safe(&what);
        if self.0 {
            eprintln!("{what}\n\nAllowed (--yes).");
        } else {
            eprintln!("{what}\n\nNothing was run. Run it again with --yes to allow it.");
        }
        self.0
    }
}

/// Shows a sign-in address at the terminal and hands it to the desktop's opener when there is one.
struct Terminal;

impl switchboard_service::mcp::Browser for Terminal {
    fn open(&self, url: &str) -> Result<(), String> {
        eprintln!("Sign in at this address (it opens in your browser if one is available):\n{}", render::safe(url));
        // A missing opener only means the person copies the address.
        if let Err(why) = switchboard_process::open_external(url) {
            tracing::debug!("the browser was not opened: {why}");
        }
        Ok(())
    }
}

fn status_words(status: &SourceStatus) -> String {
    match status {
        SourceStatus::Starting => "starting".into(),
        SourceStatus::Ready => "ready".into(),
        SourceStatus::Failed { reason } => format!("failed: {reason}"),
        SourceStatus::Stopped => "stopped".into(),
        SourceStatus::NeedsApproval { .. } => "needs approval (switchboard mcp approve NAME --yes)".into(),
        SourceStatus::NeedsSignIn { .. } => "needs sign-in (switchboard mcp login NAME)".into(),
    }
}

fn print_server(s: &McpServerInfo, verbose: bool) {
    let d = &s.detail;
    let state = if s.enabled { status_words(&d.status) } else { "disabled".into() };
    let tools = if d.tools.is_empty() { String::new() } else { format!(", {} tools", d.tools.len()) };
    let held = if d.held.is_empty() { String::new() } else { format!(", {} held back", d.held.len()) };
    println!("{:<16} {:<5} {}{tools}{held}", render::safe(&d.name), d.transport, render::safe(&state));
    println!("    {}", render::safe(&d.target));
    if verbose {
        for t in &d.tools {
            let hints = t.annotations.as_ref().map(|a| format!("  {a}")).unwrap_or_default();
            println!("    tool {}{}", render::safe(&t.name), render::safe(&hints));
            print_findings(&t.findings);
        }
        for h in &d.held {
            println!(
                "    held back {}: {} (switchboard mcp approve-tools {})",
                render::safe(&h.name),
                render::safe(&h.why),
                render::safe(&d.name)
            );
            print_findings(&h.findings);
        }
        for why in &d.skipped {
            println!("    skipped {}", render::safe(why));
        }
    }
}

/// The lint's findings of a tool, one warning line each, under it.
pub(crate) fn print_findings(findings: &[switchboard_core::Finding]) {
    for f in findings {
        println!("        warning: {}", render::safe(&f.reason));
    }
}

pub fn run(service: &Service, cmd: McpCmd) -> anyhow::Result<ExitCode> {
    let rt = runtime();
    match cmd {
        McpCmd::List { json } => {
            let overview = service.mcp_servers()?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&overview)?));
                return Ok(ExitCode::SUCCESS);
            }
            if let Some(problem) = &overview.problem {
                eprintln!("The config file has a problem: {}", render::safe(problem));
            }
            if overview.servers.is_empty() {
                println!(
                    "No MCP servers in {}. Add one with `switchboard mcp add NAME -- COMMAND ARGS...`.",
                    overview.config_path.as_deref().unwrap_or("the config")
                );
            }
            for s in &overview.servers {
                print_server(s, false);
            }
        }
        McpCmd::Add { name, url, headers, env, cwd, timeout, yes, command } => {
            let mut parts = command.into_iter();
            let config = switchboard_service::mcp::ServerConfig {
                command: parts.next(),
                args: parts.collect(),
                env: crate::pairs::pairs(&env, "--env")?,
                cwd,
                url,
                headers: crate::pairs::pairs(&headers, "--header")?,
                timeout,
                ..Default::default()
            };
            let info = rt.block_on(service.mcp_add(&name, config, &Yes(yes)))?;
            print_server(&info, true);
        }
        McpCmd::Edit { name, rename, url, headers, remove_headers, env, remove_env, cwd, timeout, yes, command } => {
            let Some(current) = service.mcp_servers()?.servers.into_iter().find(|s| s.detail.name == name) else {
                let message = format!("There is no MCP server named '{name}' (see `switchboard mcp list`).");
                return Err(CliError { kind: switchboard_core::ErrorKind::NotFound, message }.into());
            };
            let mut config = current.config;
            if !command.is_empty() {
                let mut parts = command.into_iter();
                config.command = parts.next();
                config.args = parts.collect();
                (config.url, config.kind) = (None, None);
            }
            if url.is_some() {
                (config.url, config.kind, config.command) = (url, None, None);
                config.args.clear();
            }
            config.env.extend(crate::pairs::pairs(&env, "--env")?);
            config.env.retain(|k, _| !remove_env.contains(k));
            config.headers.extend(crate::pairs::pairs(&headers, "--header")?);
            config.headers.retain(|k, _| !remove_headers.contains(k));
            config.cwd = cwd.or(config.cwd);
            config.timeout = timeout.or(config.timeout);
            let new_name = rename.unwrap_or_else(|| name.clone());
            let edited = rt.block_on(service.mcp_edit(&name, &new_name, config, &Yes(yes)))?;
            print_server(&edited.server, true);
        }
        McpCmd::Remove { name } => {
            rt.block_on(service.mcp_remove(&name))?;
            println!("Removed the MCP server '{name}'.");
        }
        McpCmd::Import { file, yes } => {
            let preview = if file.as_os_str() == "-" {
                // Bounded: the service refuses more than a config's size with a message.
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::io::Read::take(std::io::stdin(), 1024 * 1024), &mut text)?;
                rt.block_on(service.mcp_paste(&text, &Yes(yes)))?
            } else {
                rt.block_on(service.mcp_import(&file, &Yes(yes)))?
            };
            for s in &preview.servers {
                let what = if s.exists { "kept as it is (a server of that name exists)" } else { "added" };
                println!("{:<16} {what}: {}", render::safe(&s.name), render::safe(&s.target));
                for secret in &s.secrets {
                    println!("    {}: moved to the keychain", render::safe(secret));
                }
            }
            for note in &preview.notes {
                println!("note: {}", render::safe(note));
            }
        }
        McpCmd::Status { json } => {
            rt.block_on(service.start_tool_sources());
            let overview = service.mcp_servers()?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&overview)?));
            } else {
                for s in &overview.servers {
                    print_server(s, true);
                }
            }
            if overview.servers.iter().any(|s| s.enabled && matches!(s.detail.status, SourceStatus::Failed { .. })) {
                return Ok(ExitCode::FAILURE);
            }
        }
        McpCmd::Logs { name, level } => {
            rt.block_on(service.start_tool_sources());
            if let Some(level) = level {
                let level = switchboard_service::mcp::LogLevel::parse(&level).ok_or_else(|| {
                    CliError::config(format!(
                        "'{level}' is not a log level: debug, info, notice, warning, error, critical, alert or emergency."
                    ))
                })?;
                rt.block_on(service.mcp_set_log_level(&name, level))?;
                // What the server logs once asked arrives as notifications: give it a moment.
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
            for line in service.mcp_logs(&name)? {
                println!("{}", render::safe(&line));
            }
        }
        McpCmd::Prompts { name, json } => {
            rt.block_on(service.start_tool_sources());
            let prompts = rt.block_on(service.mcp_prompts(&name))?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&prompts)?));
                return Ok(ExitCode::SUCCESS);
            }
            crate::mcp_context::print_prompts(&prompts);
        }
        McpCmd::Resources { name, json } => {
            rt.block_on(service.start_tool_sources());
            let resources = rt.block_on(service.mcp_resources(&name))?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&resources)?));
                return Ok(ExitCode::SUCCESS);
            }
            crate::mcp_context::print_resources(&resources);
        }
        McpCmd::Approve { name, yes } => {
            let info = rt.block_on(service.mcp_approve(&name, &Yes(yes)))?;
            print_server(&info, true);
        }
        McpCmd::Login { name } => {
            rt.block_on(service.start_tool_sources());
            let info = rt.block_on(service.mcp_sign_in(&name, &Terminal))?;
            print_server(&info, false);
        }
        McpCmd::Logout { name } => {
            rt.block_on(service.start_tool_sources());
            let info = rt.block_on(service.mcp_sign_out(&name))?;
            print_server(&info, false);
        }
        McpCmd::ApproveTools { name, yes } => {
            rt.block_on(service.start_tool_sources());
            let info = service.mcp_approve_tools(&name, &Yes(yes))?;
            print_server(&info, true);
        }
    }
    Ok(ExitCode::SUCCESS)
}
