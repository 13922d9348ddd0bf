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
use switchboard_core::{BudgetChoice, BudgetKind, BudgetPause, ErrorKind, FinishReason};
use switchboard_core::{ElicitationAnswer, ElicitationRequest, SamplingDecision, SamplingRequest};
use switchboard_service::ipc::{ChatGrant, SendRequest, TurnChoices};
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
    /// Sampling temperature for this chat from this message on (over the profile's; kept with
    /// the chat).
    #[arg(long)]
    temperature: Option<f64>,
    /// Nucleus sampling for this chat from this message on (over the profile's; kept).
    #[arg(long)]
    top_p: Option<f64>,
    /// Most tokens of an answer in this chat from this message on (over the profile's; kept).
    #[arg(long, value_name = "TOKENS")]
    max_output_tokens: Option<u32>,
    /// Forget the chat's own parameters: the profile's apply again (with --temperature and the
    /// like: only those).
    #[arg(long)]
    clear_params: bool,
    /// Run tools that would ask for approval without asking (not the egress question: see
    /// --allow-egress).
    #[arg(long)]
    approve_all: bool,
    /// Let tools send data to sites and servers not used in this chat after it read content
    /// from the web or a server, without asking.
    #[arg(long)]
    allow_egress: bool,
    /// Run the completions MCP servers ask for during a call without asking (capped to the
    /// model's output limit; counted in the chat's usage).
    #[arg(long)]
    approve_sampling: bool,
    /// System prompt.
    #[arg(long)]
    system: Option<String>,
    /// Chat with this agent (a new chat; a chat keeps the agent it started with).
    #[arg(long, conflicts_with_all = ["conversation", "continue_last"])]
    agent: Option<String>,
    /// Give the model this toolset's tools only (repeatable; with an agent, besides its own).
    /// Kept with the chat: a continued chat without --toolset keeps its toolsets.
    #[arg(long = "toolset", value_name = "NAME")]
    toolsets: Vec<String>,
    /// Switch the chat's toolsets off: every tool again (kept with the chat).
    #[arg(long, conflicts_with = "toolsets")]
    no_toolsets: bool,
    /// Pause before the model call that would make more than N steps (model calls with tools)
    /// this turn, sub-agents included (over the chat's budget).
    #[arg(long, value_name = "N", value_parser = budget_steps)]
    budget_steps: Option<u32>,
    /// Pause before a model call once this much wall time has passed this turn (90s, 5m,
    /// 1h30m).
    #[arg(long, value_name = "DURATION", value_parser = budget_time)]
    budget_time: Option<u64>,
    /// Pause before the model call that would bring this turn's cost to this many US dollars.
    #[arg(long, value_name = "USD", value_parser = budget_cost)]
    budget_cost: Option<f64>,
    /// What to do at a budget pause without asking: continue (the same allowance again),
    /// answer (one last call with tools off) or stop. Without it a terminal asks, and without
    /// a terminal the model answers now.
    #[arg(long, value_name = "CHOICE")]
    on_budget: Option<OnBudget>,
    /// Print one ChatEvent per line (exactly what the desktop UI receives).
    #[arg(long)]
    pub json: bool,
    /// Start the message with an MCP server's prompt, SERVER/PROMPT (`switchboard mcp prompts
    /// SERVER` lists them); its arguments with --arg.
    #[arg(long = "prompt", value_name = "SERVER/PROMPT")]
    mcp_prompt: Option<String>,
    /// An argument of --prompt, NAME=VALUE (repeatable).
    #[arg(long = "arg", value_name = "NAME=VALUE", requires = "mcp_prompt")]
    prompt_args: Vec<String>,
    /// Send an MCP server's resource with the message (repeatable): its URI, or SERVER:URI when
    /// several servers could have it (`switchboard mcp resources SERVER` lists them).
    #[arg(long = "resource", value_name = "URI")]
    resources: Vec<String>,
    /// The message (with --prompt: added after the prompt's text).
    #[arg(required_unless_present = "mcp_prompt")]
    prompt: Option<String>,
}

/// `--on-budget`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OnBudget {
    /// Go on with the same allowance again.
    Continue,
    /// One last model call with tools off.
    Answer,
    /// End the turn; everything so far is kept.
    Stop,
}

/// How many pauses `--on-budget continue` answers by itself before the model answers now: a
/// run nobody watches must end.
const MAX_AUTO_CONTINUES: u32 = 10;

fn budget_steps(s: &str) -> Result<u32, String> {
    match s.trim().parse::<i64>() {
        Ok(n) if (1..=i64::from(switchboard_core::budget::MAX_BUDGET_STEPS)).contains(&n) => Ok(n as u32),
        _ => Err(format!(
            "'{s}' is not a step budget: give a whole number from 1 to {}.",
            switchboard_core::budget::MAX_BUDGET_STEPS
        )),
    }
}

fn budget_time(s: &str) -> Result<u64, String> {
    let secs = switchboard_core::budget::parse_duration(s)?.as_secs();
    let budget = switchboard_core::Budget { time_secs: Some(secs), ..Default::default() };
    budget.check().map(|()| secs)
}

fn budget_cost(s: &str) -> Result<f64, String> {
    let usd: f64 = s
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("'{s}' is not an amount: give US dollars, like 0.50."))?;
    let budget = switchboard_core::Budget { cost_usd: Some(usd), ..Default::default() };
    budget.check().map(|()| usd)
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
    on_budget: Option<OnBudget>,
    /// Pauses `--on-budget continue` answered so far.
    continues: std::sync::atomic::AtomicU32,
    /// `--approve-sampling`: servers' completions run without asking.
    approve_sampling: bool,
}

impl TerminalApprover {
    fn new(approve_all: bool, allow_egress: bool, on_budget: Option<OnBudget>) -> Self {
        Self { approve_all, allow_egress, on_budget, continues: Default::default(), approve_sampling: false }
    }

    fn approving_sampling(self, approve_sampling: bool) -> Self {
        Self { approve_sampling, ..self }
    }
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

    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationAnswer> {
        crate::asks::elicit(request).boxed()
    }

    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, SamplingDecision> {
        crate::asks::sample(request, self.approve_sampling).boxed()
    }

    fn budget(&self, pause: BudgetPause) -> BoxFuture<'_, BudgetChoice> {
        async move {
            match self.on_budget {
                Some(OnBudget::Continue) => {
                    let n = self.continues.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if n < MAX_AUTO_CONTINUES {
                        return BudgetChoice::Continue { allowance: None };
                    }
                    eprintln!("Budget reached again after {MAX_AUTO_CONTINUES} automatic continues; answering now.");
                    return BudgetChoice::AnswerNow;
                }
                Some(OnBudget::Answer) => return BudgetChoice::AnswerNow,
                Some(OnBudget::Stop) => return BudgetChoice::Stop,
                None => {}
            }
            if !std::io::stdin().is_terminal() {
                eprintln!(
                    "Budget reached and there is no terminal to ask; the model answers now. Pass --on-budget continue|answer|stop to choose."
                );
                return BudgetChoice::AnswerNow;
            }
            loop {
                let prompt = budget_prompt(&pause);
                let answer = tokio::task::spawn_blocking(move || {
                    eprint!("{prompt}");
                    let mut line = String::new();
                    let _ = std::io::stdin().read_line(&mut line);
                    line
                })
                .await
                .unwrap_or_default();
                let answer = answer.trim().to_ascii_lowercase();
                let (word, amount) = answer.split_once(' ').unwrap_or((answer.as_str(), ""));
                let choice = match word {
                    "" | "a" | "answer" => BudgetChoice::AnswerNow,
                    "s" | "stop" => BudgetChoice::Stop,
                    "c" | "continue" => match amount.trim() {
                        "" => BudgetChoice::Continue { allowance: None },
                        more => match allowance(pause.kind, more) {
                            Ok(a) => BudgetChoice::Continue { allowance: Some(a) },
                            Err(e) => {
                                eprintln!("{e}");
                                continue;
                            }
                        },
                    },
                    _ => {
                        eprintln!("Answer c (continue), a (answer now) or s (stop).");
                        continue;
                    }
                };
                if let Err(e) = choice.check(pause.kind) {
                    eprintln!("{e}");
                    continue;
                }
                return choice;
            }
        }
        .boxed()
    }
}

/// The question at a budget pause, for the terminal.
fn budget_prompt(p: &BudgetPause) -> String {
    let (what, limit, unit) = match p.kind {
        BudgetKind::StepLimit => ("the step limit", format!("{} steps", p.limit), "steps"),
        BudgetKind::Steps => ("the step budget", format!("{} steps", p.limit), "steps"),
        BudgetKind::Time => ("the time budget", format!("{} s", p.limit), "seconds (or 5m)"),
        BudgetKind::Cost => ("the cost budget", format!("${:.4}", p.limit), "US dollars"),
    };
    let cost = if p.spent.cost_unknown && p.spent.cost_usd == 0.0 {
        "cost unknown".to_owned()
    } else {
        format!("${:.4}{}", p.spent.cost_usd, if p.spent.cost_unknown { " or more" } else { "" })
    };
    format!(
        "\nBudget: the next model call would pass {what} ({limit}). Spent: {} steps, {} s, {cost}.\n[c] continue (same again; or c AMOUNT in {unit})  [a] answer now, tools off  [s] stop: ",
        p.spent.steps,
        p.spent.elapsed_ms / 1000
    )
}

/// An allowance typed at the terminal, in the unit of the limit reached.
fn allowance(kind: BudgetKind, text: &str) -> Result<f64, String> {
    match kind {
        BudgetKind::Time => {
            text.parse::<f64>().or_else(|_| switchboard_core::budget::parse_duration(text).map(|d| d.as_secs() as f64))
        }
        BudgetKind::Cost => {
            text.trim_start_matches('$').parse::<f64>().map_err(|_| format!("'{text}' is not an amount."))
        }
        BudgetKind::Steps | BudgetKind::StepLimit => {
            text.parse::<f64>().map_err(|_| format!("'{text}' is not a number of steps."))
        }
    }
}

/// `switchboard regenerate`: the last question of a conversation, asked again.
#[derive(Args, Debug)]
pub struct RegenerateArgs {
    /// The conversation (default: the most recent one).
    conversation: Option<String>,
    /// The answer to ask again, or its question (default: the last one shown); the earlier
    /// answer stays as a version.
    #[arg(long, value_name = "MESSAGE_ID")]
    message: Option<String>,
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
    // The flags change the chat's parameters, each over what the chat has (none: it keeps them).
    let flags = switchboard_core::GenerationOptions {
        temperature: args.temperature,
        top_p: args.top_p,
        max_output_tokens: args.max_output_tokens,
        ..Default::default()
    };
    let kept = match (&conversation, args.clear_params) {
        (Some(id), false) => service.chat_setup(id)?.generation.unwrap_or_default(),
        _ => switchboard_core::GenerationOptions::default(),
    };
    let generation = (flags != switchboard_core::GenerationOptions::default() || args.clear_params)
        .then(|| kept.overridden_by(&flags));
    let budget =
        switchboard_core::Budget { steps: args.budget_steps, time_secs: args.budget_time, cost_usd: args.budget_cost };
    let budget = (!budget.is_empty()).then_some(budget);
    let text = message_text(service, args.mcp_prompt.as_deref(), &args.prompt_args, &args.resources, args.prompt)?;
    let request = SendRequest {
        conversation_id: conversation,
        text,
        provider: args.provider,
        model: args.model,
        forced: args.force,
        use_tools: !args.no_tools,
        dry_run: args.dry_run_tools,
        disable_for_chat: args.disable,
        system_prompt: args.system,
        max_iterations: args.max_iterations,
        generation,
        agent: args.agent,
        toolsets: (!args.toolsets.is_empty() || args.no_toolsets).then_some(args.toolsets),
        budget,
    };
    let turn = service.prepare(request)?;
    let approver = TerminalApprover::new(args.approve_all, args.allow_egress, args.on_budget)
        .approving_sampling(args.approve_sampling);
    stream(service, turn, args.json, approver)
}

/// The message: an MCP prompt's text, then the person's own, then each resource's text framed
/// with its URI and media type.
fn message_text(
    service: &Service,
    mcp_prompt: Option<&str>,
    prompt_args: &[String],
    resources: &[String],
    own: Option<String>,
) -> anyhow::Result<String> {
    let mut parts = Vec::new();
    if let Some(which) = mcp_prompt {
        parts.push(crate::mcp_context::prompt_text(service, which, prompt_args)?);
    }
    parts.extend(own);
    for which in resources {
        parts.push(crate::mcp_context::resource_text(service, which)?);
    }
    Ok(parts.join("\n\n"))
}

pub fn regenerate(service: &Service, args: RegenerateArgs) -> anyhow::Result<ExitCode> {
    let conversation = match args.conversation {
        Some(id) => id,
        None => service.latest_conversation()?.ok_or_else(|| CliError::config("There is no conversation yet."))?,
    };
    // Without overrides the service uses the choices the question was asked with.
    let choices = if args.provider.is_some() || args.model.is_some() {
        let last = service.question_choices(&conversation, args.message.as_deref())?;
        Some(TurnChoices { provider: args.provider.or(last.provider), model: args.model, ..last })
    } else {
        None
    };
    let turn = service.prepare_regenerate(&conversation, args.message.as_deref(), choices)?;
    stream(service, turn, args.json, TerminalApprover::new(args.approve_all, args.allow_egress, None))
}

/// `conversations edit`: a new version of one of the person's messages, answered like `chat`.
#[derive(clap::Args, Debug)]
pub struct EditArgs {
    /// The conversation.
    conversation: String,
    /// The message of yours to edit (`conversations show --json` lists ids).
    message: String,
    /// The new text.
    text: String,
    /// Use this provider profile instead of the one it was asked with.
    #[arg(long)]
    provider: Option<String>,
    /// Use this model instead of the one it was asked with.
    #[arg(long)]
    model: Option<String>,
    /// Run tools that would ask for approval without asking (not the egress question).
    #[arg(long)]
    approve_all: bool,
    /// Let tools send data to sites and servers not used in this chat, without asking.
    #[arg(long)]
    allow_egress: bool,
    /// Print one ChatEvent per line (exactly what the desktop UI receives).
    #[arg(long)]
    pub json: bool,
}

pub fn edit(service: &Service, args: EditArgs) -> anyhow::Result<ExitCode> {
    let choices = if args.provider.is_some() || args.model.is_some() {
        let asked = service.question_choices(&args.conversation, Some(&args.message))?;
        Some(TurnChoices { provider: args.provider.or(asked.provider), model: args.model, ..asked })
    } else {
        None
    };
    let turn = service.prepare_edit(&args.conversation, &args.message, &args.text, choices)?;
    stream(service, turn, args.json, TerminalApprover::new(args.approve_all, args.allow_egress, None))
}

/// `conversations setup`: what a continued chat runs with.
pub fn print_setup(service: &Service, id: &str, json: bool) -> anyhow::Result<()> {
    let view = service.open(id)?;
    let setup = view.setup.clone().unwrap_or_default();
    if json {
        let value = serde_json::json!({
            "agent": view.agent,
            "toolsets": setup.toolsets,
            "generation": setup.generation,
            "provider": setup.provider,
            "model": setup.model,
            "summariser": setup.summariser,
            "disabledTools": view.disabled_tools,
        });
        println!("{}", crate::render::json(&serde_json::to_string_pretty(&value)?));
        return Ok(());
    }
    let safe = |t: &str| crate::render::safe(t).into_owned();
    let list = |items: &[String]| if items.is_empty() { None } else { Some(safe(&items.join(", "))) };
    println!("Agent:          {}", view.agent.as_deref().map_or("(none)".into(), safe));
    println!("Toolsets:       {}", list(&setup.toolsets).unwrap_or_else(|| "(none: every tool)".into()));
    let g = setup.generation.unwrap_or_default();
    let params: Vec<String> = [
        g.temperature.map(|t| format!("temperature {t}")),
        g.top_p.map(|p| format!("top-p {p}")),
        g.max_output_tokens.map(|m| format!("max output tokens {m}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    println!("Parameters:     {}", if params.is_empty() { "(the profile's)".into() } else { params.join(", ") });
    let model = match (&setup.provider, &setup.model) {
        (Some(p), Some(m)) => format!("{} / {}", safe(p), safe(m)),
        (Some(p), None) => safe(p),
        _ => "(the default profile)".into(),
    };
    println!("Profile, model: {model}");
    println!("{}", summariser_line(&setup));
    println!("Tools off:      {}", list(&view.disabled_tools).unwrap_or_else(|| "(none)".into()));
    Ok(())
}

/// Who writes a chat's summaries, as `conversations setup` and `conversations summariser` say it.
pub fn summariser_line(setup: &switchboard_service::ipc::ChatSetup) -> String {
    let safe = |t: &str| crate::render::safe(t).into_owned();
    match &setup.summariser {
        Some(s) => format!("Summaries by:   {} / {}", safe(&s.provider), safe(&s.model)),
        None => "Summaries by:   (the chat's own model)".into(),
    }
}

/// `conversations grants` (and what `revoke` leaves).
pub fn print_grants(grants: &[ChatGrant], json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", crate::render::json(&serde_json::to_string_pretty(grants)?));
        return Ok(());
    }
    if grants.is_empty() {
        println!("Nothing is allowed for this chat only.");
    }
    for g in grants {
        match g {
            ChatGrant::Tool(t) => println!("tool  {}", crate::render::safe(t)),
            ChatGrant::Host(h) => println!("host  {}", crate::render::safe(h)),
        }
    }
    Ok(())
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
