//! `switchboard`: the headless shell over the Switchboard engine and database.
//!
//! It is the desktop app's twin for scripting, tests and benchmarks: same engine, same SQLite file,
//! same `ChatEvent`s (`--json` prints exactly what the UI receives, one per line).

mod agents;
mod chat;
mod defined;
mod mcp;
mod render;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::IsTerminal as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use switchboard_core::{ErrorKind, GenerationOptions, ReasoningEffort};
use switchboard_service::ipc::{ProfileOptions, ProviderProfile};
use switchboard_service::{KeychainAccess, ProviderKind, Service};

/// A failure with the kind the shells report (`error[kind]: message` on stderr).
#[derive(Debug)]
pub struct CliError {
    /// Classification.
    pub kind: ErrorKind,
    /// What to tell the person.
    pub message: String,
}

impl CliError {
    /// A configuration problem the person can fix with a command.
    pub fn config(message: impl Into<String>) -> Self {
        Self { kind: ErrorKind::Config, message: message.into() }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

#[derive(Parser, Debug)]
#[command(
    name = "switchboard",
    version,
    about = "Chat with tool-using LLMs from the terminal, on the same engine and history as the Switchboard app."
)]
struct Cli {
    /// Where the database lives (default: the OS data directory; env SWITCHBOARD_DATA_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Log to stderr at this level (e.g. debug); env RUST_LOG also works.
    #[arg(long, global = true, value_name = "LEVEL")]
    log: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Manage provider profiles (which API, where, which model).
    #[command(subcommand)]
    Providers(ProvidersCmd),
    /// Send a message and stream the answer, running tools as the model calls them.
    Chat(chat::ChatArgs),
    /// Ask a conversation's last question again, with the choices it was asked with (or
    /// those given).
    Regenerate(chat::RegenerateArgs),
    /// List, show and export stored conversations.
    #[command(subcommand)]
    Conversations(ConversationsCmd),
    /// List the tools the model can be offered.
    #[command(subcommand)]
    Tools(ToolsCmd),
    /// Read and change settings (JSON values).
    #[command(subcommand)]
    Settings(SettingsCmd),
    /// Set, delete and check keys (stored in the OS keychain; never shown back).
    #[command(subcommand)]
    Keys(KeysCmd),
    /// Manage MCP servers (the mcpServers config shared with the app).
    #[command(subcommand)]
    Mcp(mcp::McpCmd),
    /// Manage agents: named setups to chat with (`chat --agent NAME`) and to call as tools.
    #[command(subcommand)]
    Agents(agents::AgentsCmd),
    /// Manage toolsets: named groups of tools an agent (or a chat) has.
    #[command(subcommand)]
    Toolsets(agents::ToolsetsCmd),
}

#[derive(Subcommand, Debug)]
enum KeysCmd {
    /// Store or replace a key, read from standard input (never from an argument).
    Set {
        /// Key name: a provider profile name, or `tavily` / `exa` for web search.
        name: String,
    },
    /// Delete a key from the keychain.
    Delete {
        /// Key name.
        name: String,
    },
    /// Whether each key is set, where, and its last four characters.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand, Debug)]
enum SettingsCmd {
    /// Print every setting that is set.
    List,
    /// Print one setting.
    Get {
        /// defaultProvider, tools, limits or retry.
        key: String,
    },
    /// Set one setting to a JSON value, e.g. `settings set limits '{"maxIterations": 5}'`.
    Set {
        /// defaultProvider, tools, limits, retry or web.
        key: String,
        /// JSON value.
        value: String,
        /// Confirm a change that widens what Switchboard may do (a tool's approval loosened,
        /// local addresses allowed for web_fetch).
        #[arg(long)]
        yes: bool,
    },
    /// Remove a setting (back to the default).
    Unset {
        /// The key.
        key: String,
        /// Confirm when the default widens what Switchboard may do (a denied tool runs again).
        #[arg(long)]
        yes: bool,
    },
}

/// A profile's generation settings and capability overrides.
#[derive(clap::Args, Debug)]
struct ProfileFlags {
    /// Most tokens one response may produce (default: the API's or model's).
    #[arg(long, value_name = "TOKENS")]
    max_output_tokens: Option<u32>,
    /// Reasoning effort for models that reason: low, medium or high.
    #[arg(long, value_parser = ["low", "medium", "high"])]
    reasoning_effort: Option<String>,
    /// Thinking budget in tokens (Anthropic, Gemini); 0 turns thinking off.
    #[arg(long, value_name = "TOKENS")]
    thinking_budget: Option<u32>,
    /// Whether the model takes tools: auto (the capability table and the API decide), on, off.
    #[arg(long, value_parser = ["auto", "on", "off"], default_value = "auto")]
    tools: String,
    /// Responses API: whether OpenAI keeps responses (needed to continue from the last one).
    #[arg(long, value_name = "BOOL")]
    store: Option<bool>,
    /// Sampling temperature, 0 to 2 (Anthropic: 0 to 1).
    #[arg(long)]
    temperature: Option<f64>,
    /// Nucleus sampling, 0 to 1.
    #[arg(long)]
    top_p: Option<f64>,
}

impl ProfileFlags {
    fn options(&self) -> ProfileOptions {
        let effort = self.reasoning_effort.as_deref().map(|e| match e {
            "low" => ReasoningEffort::Low,
            "high" => ReasoningEffort::High,
            _ => ReasoningEffort::Medium,
        });
        ProfileOptions {
            generation: GenerationOptions {
                max_output_tokens: self.max_output_tokens,
                reasoning_effort: effort,
                thinking_budget: self.thinking_budget,
                temperature: self.temperature,
                top_p: self.top_p,
            },
            tools: match self.tools.as_str() {
                "on" => Some(true),
                "off" => Some(false),
                _ => None,
            },
            store: self.store,
        }
    }
}

#[derive(Subcommand, Debug)]
enum ProvidersCmd {
    /// Add or replace a provider profile.
    Add {
        /// Profile name; its key is read from SWITCHBOARD_KEY_<NAME> (or the kind's usual variable).
        name: String,
        /// API kind: openai (Chat Completions; also OpenAI-compatible servers such as Ollama, LM Studio, vLLM, llama.cpp, OpenRouter), openai-responses (OpenAI's Responses API), anthropic, gemini.
        #[arg(long, default_value = "openai", value_parser = kind_names())]
        kind: String,
        /// Base URL of the API, e.g. http://localhost:11434/v1 (default: the kind's).
        #[arg(long)]
        base_url: Option<String>,
        /// Default model.
        #[arg(long)]
        model: Option<String>,
        /// Make it the default profile.
        #[arg(long)]
        default: bool,
        /// Confirm sending the profile's key to a different origin (scheme, host or port) than
        /// the one it was saved for.
        #[arg(long)]
        allow_key_to_new_origin: bool,
        #[command(flatten)]
        options: ProfileFlags,
    },
    /// Make one tiny request with a profile and say what works: the address, the key, the
    /// model, tools.
    Test {
        /// Profile name (default: the default profile).
        name: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Look for Ollama and LM Studio on their default ports.
    Detect,
    /// List provider profiles.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a provider profile.
    Remove {
        /// Profile name.
        name: String,
    },
    /// List the models the provider offers (GET /models).
    Models {
        /// Profile name (default: the default profile).
        name: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
enum ConversationsCmd {
    /// List conversations, newest first.
    List {
        /// Only those whose title or messages contain this text.
        #[arg(long)]
        search: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a conversation with tool calls where they happened.
    Show {
        /// Conversation id.
        id: String,
        /// Print the stored messages as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export a conversation.
    Export {
        /// Conversation id.
        id: String,
        /// Format.
        #[arg(long, value_enum, default_value_t = ExportFormat::Md)]
        format: ExportFormat,
    },
    /// Rename a conversation.
    Rename {
        /// Conversation id.
        id: String,
        /// New title.
        title: String,
    },
    /// Delete a conversation.
    Delete {
        /// Conversation id.
        id: String,
    },
    /// Give a conversation a short title written by its model (see the `chats` setting).
    Title {
        /// Conversation id.
        id: String,
    },
    /// Pin a conversation to the top of the list.
    Pin {
        /// Conversation id.
        id: String,
    },
    /// Unpin a conversation.
    Unpin {
        /// Conversation id.
        id: String,
    },
    /// Archive a conversation (out of the list; still searchable).
    Archive {
        /// Conversation id.
        id: String,
    },
    /// Bring an archived conversation back into the list.
    Unarchive {
        /// Conversation id.
        id: String,
    },
    /// Show a conversation's instructions (its own, the custom ones, what its last question was
    /// sent with), or set its own.
    Instructions {
        /// Conversation id.
        id: String,
        /// Set its own instructions (from its next message on).
        #[arg(long, conflicts_with = "clear")]
        set: Option<String>,
        /// Remove its own instructions.
        #[arg(long)]
        clear: bool,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ExportFormat {
    Md,
    Json,
}

#[derive(Subcommand, Debug)]
enum ToolsCmd {
    /// List tools with their source and status.
    List(ToolsListArgs),
    #[command(flatten)]
    Defined(Box<defined::DefinedCmd>),
}

#[derive(Args, Debug)]
struct ToolsListArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// Every name `--kind` accepts, from the provider-kind table.
fn kind_names() -> clap::builder::PossibleValuesParser {
    let names =
        switchboard_service::PROVIDER_KINDS.iter().flat_map(|k| std::iter::once(k.id).chain(k.aliases.iter().copied()));
    clap::builder::PossibleValuesParser::new(names)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.log.as_deref());
    let json_errors =
        matches!(&cli.command, Command::Chat(a) if a.json) || matches!(&cli.command, Command::Regenerate(a) if a.json);
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            let (kind, message) = describe(&err);
            // A last net under the service's own redaction: an error from anywhere may quote a key.
            let message = switchboard_service::redact::redact_log(&message).into_owned();
            if json_errors {
                // `chat --json` already printed its own `error` event when the turn failed; this
                // covers failures before the turn started (unknown provider, unreadable database).
                if err.downcast_ref::<chat::TurnFailed>().is_none() {
                    let event = switchboard_core::ChatEvent::Error {
                        kind,
                        message: message.clone(),
                        retryable: kind.is_retryable(),
                        detail: None,
                    };
                    let _ = writeln!(std::io::stdout(), "{}", serde_json::to_string(&event).unwrap_or_default());
                }
            }
            eprintln!("error[{kind}]: {}", render::safe(&message));
            if kind == ErrorKind::Cancelled { ExitCode::from(130) } else { ExitCode::FAILURE }
        }
    }
}

fn init_tracing(level: Option<&str>) {
    use tracing_subscriber::EnvFilter;
    let filter = match level {
        Some(l) => EnvFilter::new(l),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("error")),
    };
    // Log lines may quote a server's error text, which may quote a key: masked like every output.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| switchboard_service::redact::RedactingWriter(std::io::stderr()))
        .with_target(false)
        .try_init();
}

/// The kind and message of any failure, for stderr and `error` events.
fn describe(err: &anyhow::Error) -> (ErrorKind, String) {
    if let Some(e) = err.downcast_ref::<CliError>() {
        return (e.kind, e.message.clone());
    }
    if let Some(e) = err.downcast_ref::<chat::TurnFailed>() {
        return (e.kind, e.message.clone());
    }
    if let Some(e) = err.downcast_ref::<switchboard_core::ProviderError>() {
        return (e.kind, e.message.clone());
    }
    if let Some(e) = err.downcast_ref::<switchboard_service::Error>() {
        return (e.kind, e.message.clone());
    }
    (ErrorKind::Internal, format!("{err:#}"))
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    // Commands that write keys probe the keychain first, so an unusable one is explained now.
    let writes_keys = matches!(cli.command, Command::Keys(KeysCmd::Set { .. } | KeysCmd::Delete { .. }));
    let access = if writes_keys { KeychainAccess::Checked } else { KeychainAccess::Unchecked };
    let service = Service::load(cli.data_dir, access)?;
    // Commands that offer tools start the tool sources (MCP servers) first and wait for each
    // to be ready or to fail; one that fails is reported and the others are offered.
    let lists_tools = matches!(
        cli.command,
        Command::Agents(agents::AgentsCmd::List { .. } | agents::AgentsCmd::Show { .. })
            | Command::Toolsets(agents::ToolsetsCmd::List { .. })
    );
    if lists_tools || matches!(cli.command, Command::Chat(_) | Command::Regenerate(_) | Command::Tools(_)) {
        start_tool_sources(&service);
    }
    let code = match cli.command {
        Command::Providers(cmd) => providers(&service, cmd),
        Command::Chat(args) => chat::run(&service, args),
        Command::Regenerate(args) => chat::regenerate(&service, args),
        Command::Conversations(cmd) => conversations(&service, cmd),
        Command::Tools(ToolsCmd::List(args)) => tools_list(&service, &args),
        Command::Tools(ToolsCmd::Defined(cmd)) => defined::run(&service, *cmd),
        Command::Settings(cmd) => settings(&service, cmd),
        Command::Keys(cmd) => keys(&service, cmd),
        Command::Mcp(cmd) => mcp::run(&service, cmd),
        Command::Agents(cmd) => agents::run(&service, cmd),
        Command::Toolsets(cmd) => agents::run_toolsets(&service, cmd),
    };
    shut_down(&service);
    code
}

/// The one runtime of the process: servers started for a command keep running on it until
/// [`shut_down`] stops them.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("the async runtime starts")
    })
}

fn start_tool_sources(service: &Service) {
    runtime().block_on(service.start_tool_sources());
    for source in service.tool_sources() {
        if let switchboard_core::SourceStatus::Failed { reason }
        | switchboard_core::SourceStatus::NeedsApproval { reason }
        | switchboard_core::SourceStatus::NeedsSignIn { reason } = &source.status
        {
            let first = reason.lines().next().unwrap_or_default();
            eprintln!("warning: {} is not available: {}", render::safe(&source.id), render::safe(first));
        }
    }
}

/// Stops the tool sources (servers the CLI started) before the process exits: stdin closed,
/// then SIGTERM, then kill.
fn shut_down(service: &Service) {
    runtime().block_on(service.shutdown());
}

fn keys(service: &Service, cmd: KeysCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        KeysCmd::Set { name } => {
            service.require_writable_keys()?;
            if std::io::stdin().is_terminal() {
                eprint!("Paste the key for '{name}' and press Enter: ");
            }
            let mut value = String::new();
            std::io::stdin().read_line(&mut value)?;
            let info = service.set_key(&name, value.trim_end_matches(['\r', '\n']))?;
            println!("Saved the key for '{}' in {} ({}).", name, info.source, describe_key(&info));
        }
        KeysCmd::Delete { name } => {
            service.require_writable_keys()?;
            let info = service.delete_key(&name)?;
            println!("Deleted the key for '{name}' ({}).", describe_key(&info));
        }
        KeysCmd::Status { json } => {
            let keys = service.keys_overview()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&keys)?);
            } else {
                for k in keys {
                    println!("{:<16} {:<28} {}", k.name, describe_key(&k), k.label);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn describe_key(k: &switchboard_service::ipc::KeyInfo) -> String {
    match (&k.is_set, &k.last4) {
        (true, Some(l4)) => format!("set, ends in {l4}, {}", k.source),
        (true, None) => format!("set, {}", k.source),
        (false, _) => format!("not set (or {})", k.env_var),
    }
}

fn providers(service: &Service, cmd: ProvidersCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ProvidersCmd::Add { name, kind, base_url, model, default, allow_key_to_new_origin, options } => {
            let parsed = ProviderKind::parse(&kind)?;
            let profile = ProviderProfile {
                name: name.clone(),
                kind,
                base_url: base_url.unwrap_or_default(),
                model,
                options: options.options(),
            };
            let flag = Flag::new(allow_key_to_new_origin, "--allow-key-to-new-origin");
            flag.check(service.add_provider_confirmed(&profile, default, &flag))?;
            println!("Saved provider '{name}' ({}). {}", parsed.label, service.key_hint(&name));
        }
        ProvidersCmd::List { json } => {
            let profiles = service.providers()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&profiles)?);
            } else if profiles.is_empty() {
                println!(
                    "No providers. Add one with `switchboard providers add NAME --kind openai --base-url URL --model MODEL`."
                );
            } else {
                for p in profiles {
                    let mark = if p.is_default { "*" } else { " " };
                    println!(
                        "{mark} {:<16} {:<8} {:<40} {}",
                        p.name,
                        p.kind,
                        p.base_url,
                        p.model.as_deref().unwrap_or("-")
                    );
                }
            }
        }
        ProvidersCmd::Remove { name } => {
            service.remove_provider(&name)?;
            println!("Removed provider '{name}'.");
        }
        ProvidersCmd::Models { name } => {
            for id in runtime().block_on(service.models(name.as_deref()))? {
                println!("{}", render::safe(&id));
            }
        }
        ProvidersCmd::Detect => {
            let found = runtime().block_on(service.detect_local_servers())?;
            if found.is_empty() {
                println!("Neither Ollama (port 11434) nor LM Studio (port 1234) answered on this machine.");
            }
            for s in found {
                let models = if s.models.is_empty() { "no models".to_owned() } else { s.models.join(", ") };
                match s.profile {
                    Some(p) => println!("{} at {} ({models}): profile '{p}' uses it.", s.label, s.base_url),
                    None => println!(
                        "{} at {} ({models}). Add it: switchboard providers add {} --base-url {}{}",
                        s.label,
                        s.base_url,
                        s.preset,
                        s.base_url,
                        s.models.first().map(|m| format!(" --model {m}")).unwrap_or_default()
                    ),
                }
            }
        }
        ProvidersCmd::Test { name, json } => {
            let report = runtime().block_on(service.test_provider(name.as_deref()))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!("{}", render::safe(&report.summary));
                if let Some(detail) = report.detail.as_deref().filter(|d| *d != report.summary) {
                    eprintln!("Details: {}", render::safe(detail));
                }
            }
            if !report.ok {
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn conversations(service: &Service, cmd: ConversationsCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ConversationsCmd::List { search, json } => {
            let list = match search {
                Some(q) => service.search(&q)?,
                None => service.conversations()?,
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                for c in list {
                    let mark = if c.pinned {
                        "pinned  "
                    } else if c.archived {
                        "archived"
                    } else {
                        "        "
                    };
                    println!("{}  {:>3} msgs  {mark}  {}", c.id, c.message_count, render::safe(&c.title));
                }
            }
        }
        ConversationsCmd::Show { id, json } => {
            let view = service.open_all(&id)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&view.messages)?);
            } else {
                let mut out = std::io::stdout().lock();
                for m in &view.messages {
                    render::stored_message(&mut out, m)?;
                }
            }
        }
        ConversationsCmd::Export { id, format } => {
            let format = match format {
                ExportFormat::Md => switchboard_service::export::ExportFormat::Markdown,
                ExportFormat::Json => switchboard_service::export::ExportFormat::Json,
            };
            let text = service.export_conversation(&id, format)?;
            let mut out = std::io::stdout().lock();
            // A file gets the text exactly; a terminal gets it neutralised like `show`.
            if std::io::stdout().is_terminal() {
                writeln!(out, "{}", render::safe(&text))?;
            } else {
                writeln!(out, "{text}")?;
            }
        }
        ConversationsCmd::Title { id } => {
            println!("{}", render::safe(&runtime().block_on(service.generate_title(&id))?));
        }
        ConversationsCmd::Pin { id } => service.set_pinned(&id, true)?,
        ConversationsCmd::Unpin { id } => service.set_pinned(&id, false)?,
        ConversationsCmd::Archive { id } => service.set_archived(&id, true)?,
        ConversationsCmd::Unarchive { id } => service.set_archived(&id, false)?,
        ConversationsCmd::Instructions { id, set, clear } => {
            if let Some(text) = set.as_deref().or(clear.then_some("")) {
                service.set_chat_instructions(&id, text)?;
            }
            let shown = service.chat_instructions(&id)?;
            let or_none =
                |t: &str| if t.trim().is_empty() { "(none)".to_owned() } else { render::safe(t).into_owned() };
            println!("This chat's instructions:\n{}\n", or_none(&shown.chat));
            println!("Custom instructions (every chat):\n{}", or_none(&shown.custom));
            if let Some(sent) = &shown.last_sent {
                println!("\nIts last question was sent with:\n{}", render::safe(sent));
            }
        }
        ConversationsCmd::Rename { id, title } => service.rename(&id, &title)?,
        ConversationsCmd::Delete { id } => service.delete(&id)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn tools_list(service: &Service, args: &ToolsListArgs) -> anyhow::Result<ExitCode> {
    let tools = service.tools(None)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&tools)?);
    } else {
        for t in tools {
            let state = if t.enabled { "enabled" } else { "disabled" };
            let source = t.source.to_string();
            println!(
                "{:<20} {:<10} {:<9} {}",
                render::safe(&t.name),
                render::safe(&source),
                state,
                render::safe(&t.description)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A confirmation flag: the person at their own terminal typed it, so it counts as agreeing to
/// a change that widens what Switchboard may do. Without it such a change fails, naming the flag.
struct Flag {
    given: bool,
    name: &'static str,
    asked: std::sync::atomic::AtomicBool,
}

impl Flag {
    fn new(given: bool, name: &'static str) -> Self {
        Flag { given, name, asked: std::sync::atomic::AtomicBool::new(false) }
    }

    /// The service's answer, with how to confirm when the flag was needed and missing.
    fn check(&self, result: switchboard_service::Result<()>) -> anyhow::Result<()> {
        match result {
            Err(e) if !self.given && self.asked.load(std::sync::atomic::Ordering::SeqCst) => {
                Err(CliError::config(format!("{} Run it again with {} to confirm.", e.message, self.name)).into())
            }
            other => Ok(other?),
        }
    }
}

impl switchboard_service::Confirm for Flag {
    fn confirm(&self, _: &[switchboard_service::Widening]) -> bool {
        self.asked.store(true, std::sync::atomic::Ordering::SeqCst);
        self.given
    }
}

fn settings(service: &Service, cmd: SettingsCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        SettingsCmd::List => println!("{}", serde_json::to_string_pretty(&service.settings()?)?),
        SettingsCmd::Get { key } => println!("{}", serde_json::to_string_pretty(&service.setting(&key)?)?),
        SettingsCmd::Set { key, value, yes } => {
            let v: serde_json::Value = serde_json::from_str(&value).map_err(|e| {
                CliError::config(format!("The value for '{key}' is not JSON: {e}. Quote strings: '\"name\"'."))
            })?;
            let flag = Flag::new(yes, "--yes");
            flag.check(service.set_setting_confirmed(&key, v, &flag))?;
        }
        SettingsCmd::Unset { key, yes } => {
            let flag = Flag::new(yes, "--yes");
            flag.check(service.unset_setting_confirmed(&key, &flag))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
