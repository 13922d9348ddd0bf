//! `switchboard`: the headless shell over the Switchboard engine and database.
//!
//! It is the desktop app's twin for scripting, tests and benchmarks: same engine, same SQLite file,
//! same `ChatEvent`s (`--json` prints exactly what the UI receives, one per line).

mod agents;
mod args;
mod asks;
mod attach;
mod chat;
mod defined;
mod mcp;
mod mcp_context;
mod models;
mod pairs;
mod render;
mod usage;

use args::{Cli, Command, ConversationsCmd, ExportFormat, KeysCmd, ProvidersCmd, SettingsCmd, ToolsCmd, ToolsListArgs};
use clap::Parser;
use std::io::IsTerminal as _;
use std::io::Write as _;
use std::process::ExitCode;
use switchboard_core::ErrorKind;
use switchboard_service::ipc::{ChatGrant, ChatSetupChange, ProviderProfile, SummariserChange};
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

fn main() -> ExitCode {
    // Before anything starts a process: what the CLI starts ends with it (subreaper on Linux),
    // also on Ctrl-C, SIGTERM and SIGHUP.
    switchboard_process::install();
    switchboard_process::signals::on_exit_signals(stop_on_signal, SIGNAL_GRACE);
    let cli = Cli::parse();
    init_tracing(cli.log.as_deref());
    let code = main_with(cli);
    // Every process a tool started ends with the CLI (the servers were already asked to stop).
    switchboard_process::end_all();
    code
}

/// How long a turn stopped by a signal has to save what it has before the CLI ends anyway.
const SIGNAL_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Stops the running turn, if there is one.
type StopTurn = Box<dyn Fn() + Send>;

fn running_turn() -> std::sync::MutexGuard<'static, Option<StopTurn>> {
    static TURN: std::sync::Mutex<Option<StopTurn>> = std::sync::Mutex::new(None);
    TURN.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// While a turn runs, a signal (Ctrl-C, SIGTERM, SIGHUP) stops it.
pub(crate) fn on_signal_stop_turn(stop: Option<StopTurn>) {
    *running_turn() = stop;
}

/// A signal during a turn stops it and the CLI exits the ordinary way (the partial answer
/// saved, the servers stopped, the tool trees ended); at any other time the CLI ends at once.
fn stop_on_signal(_: switchboard_process::signals::Received) -> bool {
    match running_turn().as_ref() {
        Some(stop) => {
            stop();
            true
        }
        None => false,
    }
}

fn main_with(cli: Cli) -> ExitCode {
    let json_errors = matches!(&cli.command, Command::Chat(a) if a.json)
        || matches!(&cli.command, Command::Regenerate(a) if a.json)
        || matches!(&cli.command, Command::Conversations(ConversationsCmd::Edit(a)) if a.json);
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
                    let _ = writeln!(
                        std::io::stdout(),
                        "{}",
                        render::json(&serde_json::to_string(&event).unwrap_or_default())
                    );
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
    let edits = matches!(cli.command, Command::Conversations(ConversationsCmd::Edit(_)));
    if lists_tools || edits || matches!(cli.command, Command::Chat(_) | Command::Regenerate(_) | Command::Tools(_)) {
        start_tool_sources(&service);
    }
    let code = match cli.command {
        Command::Providers(cmd) => providers(&service, cmd),
        Command::Models(cmd) => models::run(&service, cmd),
        Command::Chat(args) => chat::run(&service, args),
        Command::Regenerate(args) => chat::regenerate(&service, args),
        Command::Conversations(cmd) => conversations(&service, cmd),
        Command::Tools(ToolsCmd::List(args)) => tools_list(&service, &args),
        Command::Tools(ToolsCmd::TrustEgress { name, yes }) => {
            let flag = Flag::new(yes, "--yes");
            flag.check(service.set_tool_egress_exempt(&name, true, &flag)).map(|()| {
                eprintln!("'{name}' may now send data to new destinations after untrusted content without asking.");
                ExitCode::SUCCESS
            })
        }
        Command::Tools(ToolsCmd::UntrustEgress { name }) => service
            .set_tool_egress_exempt(&name, false, &switchboard_service::confirm::Refuse)
            .map(|()| {
                eprintln!("'{name}' asks again before sending data to a new destination after untrusted content.");
                ExitCode::SUCCESS
            })
            .map_err(Into::into),
        Command::Tools(ToolsCmd::Defined(cmd)) => defined::run(&service, *cmd),
        Command::Settings(cmd) => settings(&service, cmd),
        Command::Keys(cmd) => keys(&service, cmd),
        Command::Mcp(cmd) => mcp::run(&service, cmd),
        Command::Agents(cmd) => agents::run(&service, cmd),
        Command::Toolsets(cmd) => agents::run_toolsets(&service, cmd),
        Command::Usage(args) => usage::run(&service, args),
    };
    shut_down(&service);
    code
}

/// The one runtime of the process: servers started for a command keep running on it until
/// [`shut_down`] stops them.
///
/// It runs on the main thread (current-thread flavour), so a token goes from the socket through
/// the parser, the recorder and the printer without changing threads. A multi-thread runtime
/// drove the HTTP connection on a worker while `block_on` ran the turn on the main thread, and
/// handed every chunk across with a futex and an eventfd wake-up: four times the wall time and
/// five times the CPU of a turn (issue 24). Tasks spawned here (MCP servers, the Ctrl-C
/// watcher) make progress whenever the main thread is inside `block_on`, which is during every
/// wait a command makes; nothing waits for them outside it. Blocking work still goes to
/// `spawn_blocking` threads.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("the async runtime starts")
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
                println!("{}", render::json(&serde_json::to_string_pretty(&keys)?));
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
                println!("{}", render::json(&serde_json::to_string_pretty(&profiles)?));
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
                let models = render::safe(&models);
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
                println!("{}", render::json(&serde_json::to_string_pretty(&report)?));
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
                println!("{}", render::json(&serde_json::to_string_pretty(&list)?));
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
        ConversationsCmd::Search { query, limit, json } => {
            let hits = service.search_messages(&query, Some(limit))?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&hits)?));
            } else if hits.is_empty() {
                eprintln!("No matches.");
            } else {
                let bold = std::io::stdout().is_terminal();
                let mut out = std::io::stdout().lock();
                for hit in &hits {
                    render::search_hit(&mut out, hit, bold)?;
                }
            }
        }
        ConversationsCmd::Show { id, json } => {
            let view = service.open_all(&id)?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&view.messages)?));
            } else {
                let spend = service.conversation_usage(&id)?;
                let mut out = std::io::stdout().lock();
                for m in &view.messages {
                    if m.versions.len() > 1 {
                        let at = m.versions.iter().position(|v| *v == m.id).map_or(0, |i| i + 1);
                        writeln!(out, "‹{at}/{}› {}", m.versions.len(), m.id)?;
                    }
                    render::stored_message(&mut out, m)?;
                    if let Some(s) = spend.messages.iter().find(|s| s.message_id == m.id) {
                        writeln!(out, "{}\n", usage::cost_line(&s.total))?;
                    }
                }
                if spend.total.requests > 0 {
                    writeln!(out, "conversation {}", usage::cost_line(&spend.total))?;
                }
                if let Ok(c) = service.conversation_context(&id, None, None) {
                    writeln!(out, "{}", render::context_line(&c))?;
                }
            }
        }
        ConversationsCmd::Context { id, provider, model, json } => {
            let c = service.conversation_context(&id, provider.as_deref(), model.as_deref())?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&c)?));
            } else {
                println!("{}", render::context_line(&c));
            }
        }
        ConversationsCmd::Edit(args) => return chat::edit(service, args),
        ConversationsCmd::Versions { id, message, json } => {
            let versions = service.versions(&id, &message)?;
            let shown: std::collections::HashSet<String> =
                service.open_all(&id)?.messages.into_iter().map(|m| m.id).collect();
            if json {
                let list: Vec<_> = versions
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        serde_json::json!({"index": i + 1, "id": v.id, "current": shown.contains(&v.id),
                                           "role": v.role, "content": v.content, "model": v.model})
                    })
                    .collect();
                println!("{}", render::json(&serde_json::to_string_pretty(&list)?));
            } else {
                for (i, v) in versions.iter().enumerate() {
                    let mark = if shown.contains(&v.id) { "*" } else { " " };
                    let start: String = v.content.chars().take(60).collect::<String>().replace('\n', " ");
                    let model = v.model.as_deref().map(|m| format!(" [{m}]")).unwrap_or_default();
                    println!("{mark} {}  {}{model}  {}", i + 1, v.id, render::safe(&start));
                }
            }
        }
        ConversationsCmd::Switch { id, message } => {
            service.switch_version(&id, &message)?;
        }
        ConversationsCmd::Branch { id, message } => println!("{}", service.branch_conversation(&id, &message)?),
        ConversationsCmd::Export { id, all, format, output } => {
            let format = match format {
                ExportFormat::Md => switchboard_service::export::ExportFormat::Markdown,
                ExportFormat::Json => switchboard_service::export::ExportFormat::Json,
            };
            let text = match id {
                Some(id) if !all => service.export_conversation(&id, format)?,
                _ => service.export_document(None)?,
            };
            if let Some(path) = output {
                let saved = switchboard_service::export::write_file(&path, &text)?;
                eprintln!("Exported to {}", render::safe(&saved));
                return Ok(ExitCode::SUCCESS);
            }
            let mut out = std::io::stdout().lock();
            // A file gets the text exactly; a terminal gets it neutralised like `show`.
            if std::io::stdout().is_terminal() {
                writeln!(out, "{}", render::safe(&text))?;
            } else {
                writeln!(out, "{text}")?;
            }
        }
        ConversationsCmd::Import { file, json } => {
            let report = service.import_conversations(&file)?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&report)?));
            } else {
                println!("{}", render::safe(&report.summary));
                for r in &report.refused {
                    let id = r.id.as_deref().map(|id| format!(" ({id})")).unwrap_or_default();
                    eprintln!(
                        "Not imported: {}{}: {}",
                        render::safe(&r.title),
                        render::safe(&id),
                        render::safe(&r.reason)
                    );
                }
            }
            if !report.refused.is_empty() {
                return Ok(ExitCode::FAILURE);
            }
        }
        ConversationsCmd::Title { id } => {
            println!("{}", render::safe(&runtime().block_on(service.generate_title(&id))?));
        }
        ConversationsCmd::Pin { id } => service.set_pinned(&id, true)?,
        ConversationsCmd::Unpin { id } => service.set_pinned(&id, false)?,
        ConversationsCmd::Compact { id, json } => {
            let c = runtime().block_on(service.compact_conversation(&id))?;
            if json {
                println!("{}", serde_json::to_string_pretty(&c)?);
            } else {
                println!(
                    "Compacted: about {} tokens are now sent instead of {} ({} results as stubs{}).",
                    c.tokens_after,
                    c.tokens_before,
                    c.compaction.stubbed.len(),
                    if c.compaction.summary.is_some() { ", earlier messages summarised" } else { "" }
                );
                // The model picked for summaries could not be used: the person is told, not only the log.
                if let Some(why) = &c.summariser_fallback {
                    println!("Note: {}", render::safe(why));
                }
            }
        }
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
        ConversationsCmd::Summariser { id, provider, model, clear } => {
            let change = match (provider, model) {
                (Some(provider), Some(model)) => Some(SummariserChange::Pick { provider, model }),
                _ => clear.then_some(SummariserChange::Chat),
            };
            let setup = match change {
                Some(summariser) => service
                    .set_chat_setup(&id, ChatSetupChange { summariser: Some(summariser), ..Default::default() })?,
                None => service.chat_setup(&id)?,
            };
            println!("{}", chat::summariser_line(&setup));
        }
        ConversationsCmd::Setup { id, json } => chat::print_setup(service, &id, json)?,
        ConversationsCmd::Grants { id, json } => chat::print_grants(&service.chat_grants(&id)?, json)?,
        ConversationsCmd::Revoke { id, tool, host } => {
            let grant = match (tool, host) {
                (_, Some(host)) => ChatGrant::Host(host),
                // clap requires one of the two.
                (tool, None) => ChatGrant::Tool(tool.unwrap_or_default()),
            };
            let left = service.revoke_chat_grant(&id, &grant)?;
            chat::print_grants(&left, false)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn tools_list(service: &Service, args: &ToolsListArgs) -> anyhow::Result<ExitCode> {
    let tools = service.tools(None)?;
    if args.json {
        println!("{}", render::json(&serde_json::to_string_pretty(&tools)?));
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
            mcp::print_findings(&t.findings);
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
        SettingsCmd::List => println!("{}", render::json(&serde_json::to_string_pretty(&service.settings()?)?)),
        SettingsCmd::Get { key } => {
            println!("{}", render::json(&serde_json::to_string_pretty(&service.setting(&key)?)?))
        }
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
