//! `switchboard chat`: one turn through the engine, recorded durably and printed as it streams.

use crate::CliError;
use crate::render::LivePrinter;
use clap::Args;
use futures::FutureExt;
use futures::future::BoxFuture;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;
use switchboard_core::turn::{ApprovalDecision, ApprovalRequest, Approver};
use switchboard_core::{ErrorKind, FinishReason};
use switchboard_service::ipc::{SendRequest, TurnChoices};
use switchboard_service::{PreparedTurn, Service};

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
    /// Sampling temperature for this message (over the profile's).
    #[arg(long)]
    temperature: Option<f64>,
    /// Nucleus sampling for this message (over the profile's).
    #[arg(long)]
    top_p: Option<f64>,
    /// Most tokens of the answer (over the profile's).
    #[arg(long, value_name = "TOKENS")]
    max_output_tokens: Option<u32>,
    /// Run tools that would ask for approval without asking (not the egress question: see
    /// --allow-egress).
    #[arg(long)]
    approve_all: bool,
    /// Let tools send data to sites and servers not used in this chat after it read content
    /// from the web or a server, without asking.
    #[arg(long)]
    allow_egress: bool,
    /// System prompt.
    #[arg(long)]
    system: Option<String>,
    /// Chat with this agent (a new chat; a chat keeps the agent it started with).
    #[arg(long, conflicts_with_all = ["conversation", "continue_last"])]
    agent: Option<String>,
    /// Give the model this toolset's tools only (repeatable; with an agent, besides its own).
    #[arg(long = "toolset", value_name = "NAME")]
    toolsets: Vec<String>,
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

/// Answers approvals: `--approve-all` the ordinary ones and `--allow-egress` the egress
/// question, each only its own; the rest are asked on the terminal when there is one, and
/// otherwise denied with how to allow them.
struct TerminalApprover {
    approve_all: bool,
    allow_egress: bool,
}

impl Approver for TerminalApprover {
    fn decide(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        async move {
            let egress = request.egress.as_ref().map(|r| crate::render::safe(&r.describe()).to_string());
            match &egress {
                Some(_) if self.allow_egress => return ApprovalDecision::Once,
                None if self.approve_all => return ApprovalDecision::Once,
                _ => {}
            }
            if !std::io::stdin().is_terminal() {
                match &egress {
                    Some(why) => eprintln!(
                        "'{}' was not run: {why} There is no terminal to ask; denied. Pass --allow-egress to allow it.",
                        crate::render::safe(&request.name)
                    ),
                    None => eprintln!(
                        "'{}' needs approval and there is no terminal to ask; denied. Pass --approve-all to allow it.",
                        crate::render::safe(&request.name)
                    ),
                }
                return ApprovalDecision::Deny;
            }
            let answer = tokio::task::spawn_blocking(move || {
                let what = match &request.preview {
                    Some(preview) => format!("to do exactly this:\n\n{}\n", crate::render::safe(preview)),
                    None => format!("with arguments {}", crate::render::safe(&request.arguments)),
                };
                let (why, choices) = match &egress {
                    Some(why) => (format!("\n{why}"), "[y] once  [c] this destination for this chat  [n] deny"),
                    None => (String::new(), "[y] once  [c] for this chat  [a] always  [n] deny"),
                };
                eprint!(
                    "{why}\nAllow '{}' ({}) {what}?\n{choices}: ",
                    crate::render::safe(&request.name),
                    crate::render::safe(&request.source.to_string()),
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

/// `switchboard regenerate`: the last question of a conversation, asked again.
#[derive(Args, Debug)]
pub struct RegenerateArgs {
    /// The conversation (default: the most recent one).
    conversation: Option<String>,
    /// Use this provider profile instead of the one that answered.
    #[arg(long)]
    provider: Option<String>,
    /// Use this model instead of the one that answered.
    #[arg(long)]
    model: Option<String>,
    /// Run tools that would ask for approval without asking (not the egress question: see
    /// --allow-egress).
    #[arg(long)]
    approve_all: bool,
    /// Let tools send data to sites and servers not used in this chat after it read content
    /// from the web or a server, without asking.
    #[arg(long)]
    allow_egress: bool,
    /// Print one ChatEvent per line (exactly what the desktop UI receives).
    #[arg(long)]
    pub json: bool,
}

pub fn run(service: &Service, args: ChatArgs) -> anyhow::Result<ExitCode> {
    let conversation = match (&args.conversation, args.continue_last) {
        (Some(id), _) => Some(id.clone()),
        (None, true) => service.latest_conversation()?,
        (None, false) => None,
    };
    if let Some(id) = &conversation {
        for t in &args.enable {
            service.set_chat_tool_disabled(id, t, false)?;
        }
    }
    let request = SendRequest {
        conversation_id: conversation,
        text: args.prompt,
        provider: args.provider,
        model: args.model,
        forced: args.force,
        use_tools: !args.no_tools,
        dry_run: args.dry_run_tools,
        disable_for_chat: args.disable,
        system_prompt: args.system,
        max_iterations: args.max_iterations,
        generation: (args.temperature.is_some() || args.top_p.is_some() || args.max_output_tokens.is_some()).then(
            || switchboard_core::GenerationOptions {
                temperature: args.temperature,
                top_p: args.top_p,
                max_output_tokens: args.max_output_tokens,
                ..Default::default()
            },
        ),
        agent: args.agent,
        toolsets: args.toolsets,
    };
    let turn = service.prepare(request)?;
    stream(
        service,
        turn,
        args.json,
        TerminalApprover { approve_all: args.approve_all, allow_egress: args.allow_egress },
    )
}

pub fn regenerate(service: &Service, args: RegenerateArgs) -> anyhow::Result<ExitCode> {
    let conversation = match args.conversation {
        Some(id) => id,
        None => service.latest_conversation()?.ok_or_else(|| CliError::config("There is no conversation yet."))?,
    };
    // Without overrides the service uses the choices the question was asked with.
    let choices = if args.provider.is_some() || args.model.is_some() {
        let last = service.last_choices(&conversation)?;
        Some(TurnChoices { provider: args.provider.or(last.provider), model: args.model, ..last })
    } else {
        None
    };
    let turn = service.prepare_regenerate(&conversation, None, choices)?;
    stream(
        service,
        turn,
        args.json,
        TerminalApprover { approve_all: args.approve_all, allow_egress: args.allow_egress },
    )
}

/// Runs a prepared turn, printing it as it streams; Ctrl-C stops it.
fn stream(service: &Service, turn: PreparedTurn, json: bool, approver: TerminalApprover) -> anyhow::Result<ExitCode> {
    let cancel = turn.cancel_token();
    let printer = Arc::new(LivePrinter::new(json));
    let approver: Arc<dyn Approver> = Arc::new(approver);

    // Ctrl-C, SIGTERM and SIGHUP stop the turn (see `main::stop_on_signal`).
    let stop = cancel.clone();
    crate::on_signal_stop_turn(Some(Box::new(move || stop.cancel())));
    let report = crate::runtime().block_on(service.run(turn, printer.clone(), approver));
    crate::on_signal_stop_turn(None);
    printer.finish();
    if let Some(e) = report.storage_error {
        return Err(
            CliError { kind: ErrorKind::Storage, message: format!("The answer could not be saved: {e}") }.into()
        );
    }
    if !json {
        eprintln!("[conversation {}]", report.started.conversation_id);
    }
    match report.outcome.finish_reason {
        FinishReason::Error => {
            let error = report
                .outcome
                .error
                .unwrap_or_else(|| switchboard_core::ProviderError::new(ErrorKind::Internal, "the turn failed"));
            let mut message = error.message.clone();
            if error.kind == ErrorKind::Auth {
                message.push(' ');
                message.push_str(&service.key_hint(&report.profile.name));
            }
            if let Some(detail) = &error.detail {
                message.push_str(&format!("\nDetails: {detail}"));
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
