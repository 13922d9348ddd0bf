//! `switchboard`: the headless shell over the Switchboard engine and database.
//!
//! It is the desktop app's twin for scripting, tests and benchmarks: same engine, same SQLite file,
//! same `ChatEvent`s (`--json` prints exactly what the UI receives, one per line).

mod chat;
mod render;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use switchboard_core::ErrorKind;
use switchboard_store::{ProviderProfile, Store};

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
    /// List, show and export stored conversations.
    #[command(subcommand)]
    Conversations(ConversationsCmd),
    /// List the tools the model can be offered.
    #[command(subcommand)]
    Tools(ToolsCmd),
    /// Read and change settings (JSON values).
    #[command(subcommand)]
    Settings(SettingsCmd),
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
        /// defaultProvider, tools, limits or retry.
        key: String,
        /// JSON value.
        value: String,
    },
    /// Remove a setting (back to the default).
    Unset {
        /// The key.
        key: String,
    },
}

#[derive(Subcommand, Debug)]
enum ProvidersCmd {
    /// Add or replace a provider profile.
    Add {
        /// Profile name; its key is read from SWITCHBOARD_KEY_<NAME> (or the kind's usual variable).
        name: String,
        /// API kind: openai (also for OpenAI-compatible servers: Ollama, LM Studio, vLLM, llama.cpp, OpenRouter).
        #[arg(long, default_value = "openai")]
        kind: String,
        /// Base URL of the API, e.g. http://localhost:11434/v1.
        #[arg(long)]
        base_url: Option<String>,
        /// Default model.
        #[arg(long)]
        model: Option<String>,
        /// Make it the default profile.
        #[arg(long)]
        default: bool,
    },
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
}

#[derive(Args, Debug)]
struct ToolsListArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// The settings key of the default provider profile.
pub const DEFAULT_PROVIDER_KEY: &str = "defaultProvider";

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.log.as_deref());
    let json_errors = matches!(&cli.command, Command::Chat(a) if a.json);
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            let (kind, message) = describe(&err);
            if json_errors {
                // `chat --json` already printed its own `error` event when the turn failed; this
                // covers failures before the turn started (unknown provider, unreadable database).
                if err.downcast_ref::<chat::TurnFailed>().is_none() {
                    let event = switchboard_core::ChatEvent::Error {
                        kind,
                        message: message.clone(),
                        retryable: kind.is_retryable(),
                    };
                    let _ = writeln!(std::io::stdout(), "{}", serde_json::to_string(&event).unwrap_or_default());
                }
            }
            eprintln!("error[{kind}]: {message}");
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
    let _ =
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).try_init();
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
    if let Some(e) = err.downcast_ref::<switchboard_store::Error>() {
        return (e.kind(), e.to_string());
    }
    (ErrorKind::Internal, format!("{err:#}"))
}

fn open_store(data_dir: Option<PathBuf>) -> anyhow::Result<Store> {
    let dir = switchboard_store::resolve_data_dir(data_dir)?;
    let store = Store::open(&dir.join(switchboard_store::DB_FILE))?;
    if store.recovered_on_open() > 0 {
        tracing::info!(count = store.recovered_on_open(), "marked interrupted answers from an earlier run");
    }
    Ok(store)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let store = open_store(cli.data_dir)?;
    match cli.command {
        Command::Providers(cmd) => providers(&store, cmd),
        Command::Chat(args) => chat::run(&store, args),
        Command::Conversations(cmd) => conversations(&store, cmd),
        Command::Tools(ToolsCmd::List(args)) => tools_list(&store, &args),
        Command::Settings(cmd) => settings(&store, cmd),
    }
}

/// The profile `name`, or the default one; a clear error says how to add one.
pub fn resolve_profile(store: &Store, name: Option<&str>) -> anyhow::Result<ProviderProfile> {
    let profiles = store.providers()?;
    let known = || {
        if profiles.is_empty() {
            "No provider profiles exist yet.".to_owned()
        } else {
            format!("Known profiles: {}.", profiles.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "))
        }
    };
    let wanted = match name {
        Some(n) => n.to_owned(),
        None => match store.setting::<String>(DEFAULT_PROVIDER_KEY)? {
            Some(n) => n,
            None if profiles.len() == 1 => profiles[0].name.clone(),
            None => {
                return Err(CliError::config(format!(
                    "No provider chosen. Pass --provider NAME or add one with `switchboard providers add NAME --kind openai --base-url URL --model MODEL --default`. {}",
                    known()
                ))
                .into());
            }
        },
    };
    profiles.iter().find(|p| p.name == wanted).cloned().ok_or_else(|| {
        CliError::config(format!(
            "Unknown provider '{wanted}'. {} Add it with `switchboard providers add {wanted} --kind openai --base-url URL`.",
            known()
        ))
        .into()
    })
}

fn providers(store: &Store, cmd: ProvidersCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ProvidersCmd::Add { name, kind, base_url, model, default } => {
            let kind = switchboard_providers::ProviderKind::parse(&kind)?;
            switchboard_secrets::validate_name(&name)
                .map_err(|e| CliError::config(format!("Invalid profile name: {e}")))?;
            let base_url = base_url.unwrap_or_else(|| kind.default_base_url().to_owned());
            if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
                return Err(CliError::config(format!(
                    "The base URL '{base_url}' must start with http:// or https://."
                ))
                .into());
            }
            store.upsert_provider(&ProviderProfile {
                name: name.clone(),
                kind: kind.as_str().into(),
                base_url,
                model,
            })?;
            if default || store.setting::<String>(DEFAULT_PROVIDER_KEY)?.is_none() {
                store.set_setting(DEFAULT_PROVIDER_KEY, &name)?;
            }
            println!(
                "Saved provider '{name}'. Its key is read from {} (or {}).",
                switchboard_secrets::env_var_for(&name),
                kind.usual_key_env()
            );
        }
        ProvidersCmd::List { json } => {
            let profiles = store.providers()?;
            let default = store.setting::<String>(DEFAULT_PROVIDER_KEY)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&profiles)?);
            } else if profiles.is_empty() {
                println!(
                    "No providers. Add one with `switchboard providers add NAME --kind openai --base-url URL --model MODEL`."
                );
            } else {
                for p in profiles {
                    let mark = if default.as_deref() == Some(p.name.as_str()) { "*" } else { " " };
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
            resolve_profile(store, Some(&name))?;
            store.delete_provider(&name)?;
            if store.setting::<String>(DEFAULT_PROVIDER_KEY)?.as_deref() == Some(name.as_str()) {
                store.delete_setting(DEFAULT_PROVIDER_KEY)?;
            }
            println!("Removed provider '{name}'.");
        }
        ProvidersCmd::Models { name } => {
            let profile = resolve_profile(store, name.as_deref())?;
            let provider = chat::openai_for(&profile)?;
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            for id in rt.block_on(provider.list_models())? {
                println!("{id}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn conversations(store: &Store, cmd: ConversationsCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ConversationsCmd::List { search, json } => {
            let list = match search {
                Some(q) => store.search(&q)?,
                None => store.conversations()?,
            };
            if json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                for c in list {
                    println!("{}  {:>3} msgs  {}", c.id, c.message_count, c.title);
                }
            }
        }
        ConversationsCmd::Show { id, json } => {
            let messages = store.messages(&id)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&messages)?);
            } else {
                let mut out = std::io::stdout().lock();
                for m in &messages {
                    render::stored_message(&mut out, m)?;
                }
            }
        }
        ConversationsCmd::Export { id, format } => {
            let conversation = store.conversation(&id)?;
            let messages = store.messages(&id)?;
            let mut out = std::io::stdout().lock();
            match format {
                ExportFormat::Json => {
                    let doc = serde_json::json!({"conversation": conversation, "messages": messages});
                    writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
                }
                ExportFormat::Md => render::markdown(&mut out, &conversation.title, &messages)?,
            }
        }
        ConversationsCmd::Rename { id, title } => {
            store.rename(&id, &title)?;
        }
        ConversationsCmd::Delete { id } => {
            store.conversation(&id).context("cannot delete")?;
            store.delete(&id)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn tools_list(store: &Store, args: &ToolsListArgs) -> anyhow::Result<ExitCode> {
    let registry = switchboard_tools::builtin_registry()?;
    let settings = chat::tool_settings(store)?;
    let rows: Vec<serde_json::Value> = registry
        .defs()
        .map(|d| {
            serde_json::json!({
                "name": d.name,
                "source": d.source,
                "description": d.description,
                "enabled": !settings.disabled.contains(&d.name),
                "approval": switchboard_core::policy::approval_for(d, &settings),
                "exclusive": d.exclusive,
                "takesControl": d.takes_control,
                "parameters": d.parameters,
            })
        })
        .collect();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        for d in registry.defs() {
            let state = if settings.disabled.contains(&d.name) { "disabled" } else { "enabled" };
            println!("{:<20} {:<10} {:<9} {}", d.name, d.source.to_string(), state, d.description);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn settings(store: &Store, cmd: SettingsCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        SettingsCmd::List => {
            let mut all = serde_json::Map::new();
            for key in chat::SETTING_KEYS {
                if let Some(v) = store.setting::<serde_json::Value>(key)? {
                    all.insert((*key).to_owned(), v);
                }
            }
            println!("{}", serde_json::to_string_pretty(&all)?);
        }
        SettingsCmd::Get { key } => {
            chat::check_setting(&key, None)?;
            let v = store.setting::<serde_json::Value>(&key)?.unwrap_or(serde_json::Value::Null);
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        SettingsCmd::Set { key, value } => {
            let v: serde_json::Value = serde_json::from_str(&value).map_err(|e| {
                CliError::config(format!("The value for '{key}' is not JSON: {e}. Quote strings: '\"name\"'."))
            })?;
            chat::check_setting(&key, Some(&v))?;
            store.set_setting(&key, &v)?;
        }
        SettingsCmd::Unset { key } => {
            chat::check_setting(&key, None)?;
            store.delete_setting(&key)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
