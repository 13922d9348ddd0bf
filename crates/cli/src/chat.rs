//! `switchboard chat`: one turn through the engine, recorded durably and printed as it streams.

use crate::render::LivePrinter;
use crate::{CliError, resolve_profile};
use clap::Args;
use futures::FutureExt;
use futures::future::BoxFuture;
use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use switchboard_core::policy::ToolSettings;
use switchboard_core::turn::{ApprovalDecision, ApprovalRequest, Approver, FixedApprover};
use switchboard_core::{
    CancellationToken, ChatEvent, Engine, EngineConfig, ErrorKind, EventSink, FinishReason, TurnInput, TurnOptions,
};
use switchboard_providers::{OpenAiChat, OpenAiConfig, ProviderKind};
use switchboard_secrets::{EnvStore, Layered, SecretStore, ToolSecrets};
use switchboard_store::{ProviderProfile, Recorder, Store};

/// Settings key of the settings-wide tool settings (`{"disabled": [...], "approval": {...}}`).
pub const TOOL_SETTINGS_KEY: &str = "tools";
/// Settings key of the loop limits (`{"maxIterations": 10, "maxToolCallsPerRound": 10, "toolTimeoutSecs": 60}`).
pub const LIMITS_KEY: &str = "limits";

#[derive(Args, Debug)]
pub struct ChatArgs {
    /// Provider profile (default: the default profile).
    #[arg(long)]
    provider: Option<String>,
    /// Model (default: the profile's model).
    #[arg(long)]
    model: Option<String>,
    /// Continue this conversation (default: start a new one).
    #[arg(long, conflicts_with = "continue_last")]
    conversation: Option<String>,
    /// Continue the most recent conversation.
    #[arg(long = "continue", short = 'c')]
    continue_last: bool,
    /// Force this tool in the first iteration (repeatable).
    #[arg(long = "force", value_name = "TOOL")]
    force: Vec<String>,
    /// Disable this tool for this conversation; remembered with the chat (repeatable).
    #[arg(long = "disable", value_name = "TOOL")]
    disable: Vec<String>,
    /// Re-enable a tool disabled for this conversation (repeatable).
    #[arg(long = "enable", value_name = "TOOL")]
    enable: Vec<String>,
    /// No tools this turn.
    #[arg(long)]
    no_tools: bool,
    /// Tools return their example output instead of running.
    #[arg(long)]
    dry_run_tools: bool,
    /// Most model calls with tools before a final answer.
    #[arg(long, value_name = "N")]
    max_iterations: Option<u32>,
    /// Run tools that would ask for approval without asking.
    #[arg(long)]
    approve_all: bool,
    /// System prompt.
    #[arg(long)]
    system: Option<String>,
    /// Print one ChatEvent per line (exactly what the desktop UI receives).
    #[arg(long)]
    pub json: bool,
    /// The message.
    prompt: String,
}

/// The turn ended in an error that was already reported as an event.
#[derive(Debug)]
pub struct TurnFailed {
    pub kind: ErrorKind,
    pub message: String,
}

impl std::fmt::Display for TurnFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TurnFailed {}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct StoredToolSettings {
    disabled: BTreeSet<String>,
    approval: std::collections::HashMap<String, switchboard_core::ApprovalPolicy>,
}

/// Settings key of the retry policy (`{"maxRetries": 3, "baseDelayMs": 1000}`).
pub const RETRY_KEY: &str = "retry";
/// Every settings key the CLI knows.
pub const SETTING_KEYS: &[&str] = &[crate::DEFAULT_PROVIDER_KEY, TOOL_SETTINGS_KEY, LIMITS_KEY, RETRY_KEY];

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct Retry {
    max_retries: Option<u32>,
    base_delay_ms: Option<u64>,
}

/// Checks a key, and a value's shape when given, so a typo fails now and not at the next turn.
pub fn check_setting(key: &str, value: Option<&serde_json::Value>) -> anyhow::Result<()> {
    fn shape<T: serde::de::DeserializeOwned>(key: &str, v: &serde_json::Value) -> anyhow::Result<()> {
        serde_json::from_value::<T>(v.clone())
            .map(drop)
            .map_err(|e| CliError::config(format!("Invalid value for '{key}': {e}.")).into())
    }
    match (key, value) {
        (k, None) if SETTING_KEYS.contains(&k) => Ok(()),
        (k, Some(v)) if k == crate::DEFAULT_PROVIDER_KEY => shape::<String>(k, v),
        (TOOL_SETTINGS_KEY, Some(v)) => shape::<StoredToolSettings>(key, v),
        (LIMITS_KEY, Some(v)) => shape::<Limits>(key, v),
        (RETRY_KEY, Some(v)) => shape::<Retry>(key, v),
        _ => Err(CliError::config(format!("Unknown setting '{key}'. Known: {}.", SETTING_KEYS.join(", "))).into()),
    }
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct Limits {
    max_iterations: Option<u32>,
    max_tool_calls_per_round: Option<usize>,
    tool_timeout_secs: Option<u64>,
    idle_timeout_secs: Option<u64>,
}

/// Settings-wide tool settings from the database.
pub fn tool_settings(store: &Store) -> anyhow::Result<ToolSettings> {
    let s: StoredToolSettings = store.setting(TOOL_SETTINGS_KEY)?.unwrap_or_default();
    Ok(ToolSettings { disabled: s.disabled, approval: s.approval })
}

fn engine_config(store: &Store) -> anyhow::Result<EngineConfig> {
    let limits: Limits = store.setting(LIMITS_KEY)?.unwrap_or_default();
    let mut config = EngineConfig { tool_settings: tool_settings(store)?, ..EngineConfig::default() };
    if let Some(n) = limits.max_iterations {
        config.max_iterations = n;
    }
    if let Some(n) = limits.max_tool_calls_per_round {
        config.max_tool_calls_per_round = n;
    }
    if let Some(s) = limits.tool_timeout_secs {
        config.tool_timeout = std::time::Duration::from_secs(s);
    }
    if let Some(s) = limits.idle_timeout_secs {
        config.idle_timeout = std::time::Duration::from_secs(s);
    }
    let retry: Retry = store.setting(RETRY_KEY)?.unwrap_or_default();
    if let Some(n) = retry.max_retries {
        config.max_retries = n;
    }
    if let Some(ms) = retry.base_delay_ms {
        config.retry_base_delay = std::time::Duration::from_millis(ms);
    }
    Ok(config)
}

/// Keys for headless use: `SWITCHBOARD_KEY_<PROFILE>`, then the kind's usual variable.
fn secrets_for(profile: &ProviderProfile, kind: ProviderKind) -> Layered {
    Layered::new(vec![Arc::new(EnvStore::new().with_fallback(&profile.name, kind.usual_key_env()))])
}

/// The OpenAI-compatible provider of a profile, with its key.
pub fn openai_for(profile: &ProviderProfile) -> anyhow::Result<OpenAiChat> {
    let kind = ProviderKind::parse(&profile.kind)?;
    let key = secrets_for(profile, kind)
        .get(&profile.name)
        .map_err(|e| CliError { kind: ErrorKind::Auth, message: e.to_string() })?;
    Ok(OpenAiChat::new(OpenAiConfig { base_url: profile.base_url.clone(), api_key: key })?)
}

/// Asks on the terminal when there is one; otherwise denies and says how to allow.
struct TerminalApprover;

impl Approver for TerminalApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        async move {
            if !std::io::stdin().is_terminal() {
                eprintln!(
                    "'{}' needs approval and there is no terminal to ask; denied. Pass --approve-all to allow it.",
                    request.name
                );
                return ApprovalDecision::Deny;
            }
            let answer = tokio::task::spawn_blocking(move || {
                eprint!(
                    "\nAllow '{}' ({}) with arguments {}?\n[y] once  [c] for this chat  [a] always  [n] deny: ",
                    request.name, request.source, request.arguments
                );
                let mut line = String::new();
                let _ = std::io::stdin().read_line(&mut line);
                line
            })
            .await
            .unwrap_or_default();
            match answer.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => ApprovalDecision::Once,
                "c" => ApprovalDecision::ForChat,
                "a" => ApprovalDecision::Always,
                _ => ApprovalDecision::Deny,
            }
        }
        .boxed()
    }
}

/// The recorder first (durability), then the printer.
struct Sinks {
    recorder: Recorder,
    printer: LivePrinter,
}

impl EventSink for Sinks {
    fn emit(&self, event: ChatEvent) {
        self.recorder.emit(event.clone());
        self.printer.emit(event);
    }

    fn tick(&self) {
        self.recorder.tick();
    }

    fn flush(&self) {
        self.printer.flush();
    }
}

pub fn run(store: &Store, args: ChatArgs) -> anyhow::Result<ExitCode> {
    let profile = resolve_profile(store, args.provider.as_deref())?;
    let model = args.model.clone().or_else(|| profile.model.clone()).ok_or_else(|| {
        CliError::config(format!(
            "No model chosen for provider '{}'. Pass --model MODEL or set one with `switchboard providers add {} --base-url {} --model MODEL`.",
            profile.name, profile.name, profile.base_url
        ))
    })?;
    let provider = openai_for(&profile)?;
    let config = engine_config(store)?;
    let registry = switchboard_tools::builtin_registry()?;
    let tool_secrets: Arc<dyn switchboard_core::Secrets> = Arc::new(ToolSecrets(Arc::new(EnvStore::new())));
    let engine = Engine::new(config, Arc::new(registry), tool_secrets);

    let conversation = match (&args.conversation, args.continue_last) {
        (Some(id), _) => Some(id.clone()),
        (None, true) => store.conversations()?.first().map(|c| c.id.clone()),
        (None, false) => None,
    };
    let rows = store.begin_turn(conversation.as_deref(), &args.prompt, &profile.name, &model)?;
    let mut disabled = store.disabled_tools(&rows.conversation_id)?;
    if !args.disable.is_empty() || !args.enable.is_empty() {
        disabled.extend(args.disable.iter().cloned());
        for t in &args.enable {
            disabled.remove(t);
        }
        store.set_disabled_tools(&rows.conversation_id, &disabled)?;
    }
    let history = store.history(&rows.conversation_id)?;
    let input = TurnInput {
        conversation_id: rows.conversation_id.clone(),
        user_message_id: rows.user_message_id.clone(),
        message_id: rows.message_id.clone(),
        provider_name: profile.name.clone(),
        model,
        system_prompt: args.system.clone(),
        history,
        options: TurnOptions {
            use_tools: !args.no_tools,
            forced: args.force.clone(),
            disabled_for_chat: disabled,
            dry_run: args.dry_run_tools,
            max_iterations: args.max_iterations,
            approved_tools: store.approved_tools(&rows.conversation_id)?,
        },
    };
    let sinks = Arc::new(Sinks { recorder: store.recorder(&rows.message_id), printer: LivePrinter::new(args.json) });
    let approver: Box<dyn Approver> =
        if args.approve_all { Box::new(FixedApprover(ApprovalDecision::Once)) } else { Box::new(TerminalApprover) };

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let cancel = CancellationToken::new();
    let outcome = runtime.block_on(async {
        let stop = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.cancel();
            }
        });
        engine.run_turn(&provider, input, sinks.clone(), approver.as_ref(), cancel.clone()).await
    });
    sinks.recorder.flush();
    sinks.printer.finish();
    if let Some(e) = sinks.recorder.take_error() {
        return Err(
            CliError { kind: ErrorKind::Storage, message: format!("The answer could not be saved: {e}") }.into()
        );
    }
    if !args.json {
        eprintln!("[conversation {}]", rows.conversation_id);
    }
    match outcome.finish_reason {
        FinishReason::Error => {
            let error = outcome
                .error
                .unwrap_or_else(|| switchboard_core::ProviderError::new(ErrorKind::Internal, "the turn failed"));
            let mut message = error.message.clone();
            if error.kind == ErrorKind::Auth {
                message.push_str(&format!(
                    " Set the key in {} (or {}).",
                    switchboard_secrets::env_var_for(&profile.name),
                    ProviderKind::parse(&profile.kind).map(|k| k.usual_key_env()).unwrap_or("the provider's variable")
                ));
            }
            Err(TurnFailed { kind: error.kind, message }.into())
        }
        FinishReason::Cancelled => {
            Err(TurnFailed { kind: ErrorKind::Cancelled, message: "Stopped; the partial answer was kept.".into() }
                .into())
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}
