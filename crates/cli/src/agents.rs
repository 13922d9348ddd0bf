//! `switchboard agents` and `switchboard toolsets`: the agents file, as Settings shows it.

use crate::CliError;
use crate::render::safe;
use clap::Subcommand;
use std::path::PathBuf;
use std::process::ExitCode;
use switchboard_core::ApprovalPolicy;
use switchboard_service::Service;
use switchboard_service::agents::{AgentConfig, AgentInfo, AgentInput, InputKind, Toolset};

#[derive(Subcommand, Debug)]
pub enum AgentsCmd {
    /// List the agents, with what keeps each from running as set up.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show one agent's whole definition.
    Show {
        /// The agent.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add or replace an agent.
    Add(Box<AddAgent>),
    /// Copy an agent under a new name.
    Duplicate {
        /// The agent to copy.
        name: String,
        /// The copy's name.
        new_name: String,
    },
    /// Remove an agent (chats with it keep their history and go on as plain chats).
    Remove {
        /// The agent.
        name: String,
    },
}

/// `agents add`.
#[derive(clap::Args, Debug)]
pub struct AddAgent {
    /// Its name (a letter, then letters, digits, '-' or '_'); as a tool, `agent__NAME`.
    name: String,
    /// What it does (for people, and for a model choosing to call it).
    #[arg(long, default_value = "")]
    description: String,
    /// Its instructions.
    #[arg(long, conflicts_with = "instructions_file")]
    instructions: Option<String>,
    /// Its instructions, from a file.
    #[arg(long, value_name = "FILE")]
    instructions_file: Option<PathBuf>,
    /// A note for a caller's system prompt while it is offered as a tool (when to hand it work).
    #[arg(long, default_value = "")]
    prompt: String,
    /// Provider profile (default: the default profile).
    #[arg(long)]
    profile: Option<String>,
    /// Model (default: the profile's).
    #[arg(long)]
    model: Option<String>,
    /// A toolset it has (repeatable).
    #[arg(long = "toolset", value_name = "NAME")]
    toolsets: Vec<String>,
    /// Most model calls with tools before its final answer.
    #[arg(long, value_name = "N")]
    max_iterations: Option<u32>,
    /// Make a tool ask (or refuse) while this agent runs: `TOOL=ask` or `TOOL=deny` (repeatable).
    #[arg(long = "approval", value_name = "TOOL=POLICY")]
    approval: Vec<String>,
    /// Called as a tool, its answer streams as the caller's answer and ends the caller's turn.
    #[arg(long, conflicts_with = "exclusive")]
    takes_control: bool,
    /// Called as a tool, it runs alone and only when forced.
    #[arg(long)]
    exclusive: bool,
    /// A structured input field besides the message: `NAME[:string|number|integer|boolean][:required]`
    /// (repeatable).
    #[arg(long = "input", value_name = "FIELD")]
    inputs: Vec<String>,
}

#[derive(Subcommand, Debug)]
pub enum ToolsetsCmd {
    /// List the toolsets, with the tools each gives now and what it names that is gone.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add or replace a toolset: tool names, `mcp:SERVER`, `openapi:DOCUMENT`, `builtin`,
    /// `agent:NAME`.
    Add {
        /// Its name.
        name: String,
        /// What it is for.
        #[arg(long, default_value = "")]
        description: String,
        /// Its entries.
        #[arg(required = true)]
        tools: Vec<String>,
    },
    /// Remove a toolset (no agent may have it).
    Remove {
        /// The toolset.
        name: String,
    },
}

pub fn run(service: &Service, cmd: AgentsCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        AgentsCmd::List { json } => {
            let overview = service.agents()?;
            if json {
                println!("{}", crate::render::json(&serde_json::to_string_pretty(&overview)?));
                return Ok(ExitCode::SUCCESS);
            }
            if let Some(problem) = &overview.problem {
                return Err(CliError::config(problem.clone()).into());
            }
            if overview.agents.is_empty() {
                println!("No agents. Add one with `switchboard agents add NAME --instructions ...`.");
            }
            for a in &overview.agents {
                print_agent_line(a);
            }
        }
        AgentsCmd::Show { name, json } => {
            let info = service.agent_info(&name)?;
            if json {
                println!("{}", crate::render::json(&serde_json::to_string_pretty(&info)?));
                return Ok(ExitCode::SUCCESS);
            }
            print_agent(&info);
        }
        AgentsCmd::Add(add) => {
            let info = service.put_agent(add.into_config()?)?;
            println!("Saved the agent '{}' (as a tool: {}).", safe(&info.config.name), info.tool_name);
            for p in &info.problems {
                eprintln!("note: {}", safe(p));
            }
        }
        AgentsCmd::Duplicate { name, new_name } => {
            let info = service.duplicate_agent(&name, &new_name)?;
            println!("Copied '{}' to '{}'.", safe(&name), safe(&info.config.name));
        }
        AgentsCmd::Remove { name } => {
            service.remove_agent(&name)?;
            println!("Removed the agent '{}'.", safe(&name));
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_toolsets(service: &Service, cmd: ToolsetsCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ToolsetsCmd::List { json } => {
            let overview = service.agents()?;
            if json {
                println!("{}", crate::render::json(&serde_json::to_string_pretty(&overview.toolsets)?));
                return Ok(ExitCode::SUCCESS);
            }
            if let Some(problem) = &overview.problem {
                return Err(CliError::config(problem.clone()).into());
            }
            if overview.toolsets.is_empty() {
                println!("No toolsets. Add one with `switchboard toolsets add NAME TOOL...`.");
            }
            for t in &overview.toolsets {
                println!("{}  {}", safe(&t.toolset.name), safe(&t.tools.join(", ")));
                for m in &t.missing {
                    println!("  problem: {}", safe(m));
                }
            }
        }
        ToolsetsCmd::Add { name, description, tools } => {
            let info = service.put_toolset(Toolset { name, description, tools })?;
            match info.tools.is_empty() {
                true => println!("Saved the toolset '{}' (no tools in it now).", safe(&info.toolset.name)),
                false => {
                    println!("Saved the toolset '{}': {}.", safe(&info.toolset.name), safe(&info.tools.join(", ")))
                }
            }
            for m in &info.missing {
                eprintln!("note: {}", safe(m));
            }
        }
        ToolsetsCmd::Remove { name } => {
            service.remove_toolset(&name)?;
            println!("Removed the toolset '{}'.", safe(&name));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_agent_line(a: &AgentInfo) {
    let c = &a.config;
    let model = match (&c.profile, &c.model) {
        (Some(p), Some(m)) => format!("{p}/{m}"),
        (Some(p), None) => p.clone(),
        (None, Some(m)) => format!("default/{m}"),
        (None, None) => "default".to_owned(),
    };
    let toolsets = if c.toolsets.is_empty() { "no tools".to_owned() } else { c.toolsets.join(", ") };
    println!("{}  {}  [{}]  {}", safe(&c.name), safe(&model), safe(&toolsets), safe(&c.description));
    for p in &a.problems {
        println!("  problem: {}", safe(p));
    }
}

fn print_agent(a: &AgentInfo) {
    print_agent_line(a);
    let c = &a.config;
    println!("tool name: {}", a.tool_name);
    if let Some(n) = c.max_iterations {
        println!("max iterations: {n}");
    }
    for (tool, policy) in &c.approval {
        println!("approval: {} {}", safe(tool), policy.as_str());
    }
    if c.takes_control {
        println!("takes control when called");
    }
    if c.exclusive {
        println!("exclusive");
    }
    for i in &c.inputs {
        println!("input: {} ({:?}{})", safe(&i.name), i.kind, if i.required { ", required" } else { "" });
    }
    if !c.instructions.is_empty() {
        println!("\n{}", safe(&c.instructions));
    }
}

impl AddAgent {
    fn into_config(self) -> anyhow::Result<AgentConfig> {
        let instructions = match (self.instructions, self.instructions_file) {
            (Some(text), _) => text,
            (None, Some(path)) => std::fs::read_to_string(&path)
                .map_err(|e| CliError::config(format!("{} could not be read: {e}", path.display())))?,
            (None, None) => String::new(),
        };
        let mut approval = std::collections::BTreeMap::new();
        for (tool, policy) in crate::pairs::pairs(&self.approval, "The approval")? {
            let policy = ApprovalPolicy::parse(&policy)
                .ok_or_else(|| CliError::config(format!("'{policy}' is not ask, deny or auto.")))?;
            approval.insert(tool, policy);
        }
        let inputs = self.inputs.iter().map(|spec| input(spec)).collect::<anyhow::Result<Vec<_>>>()?;
        Ok(AgentConfig {
            name: self.name,
            description: self.description,
            instructions,
            prompt: self.prompt,
            profile: self.profile,
            model: self.model,
            toolsets: self.toolsets,
            max_iterations: self.max_iterations,
            approval,
            takes_control: self.takes_control,
            exclusive: self.exclusive,
            inputs,
        })
    }
}

/// `NAME[:TYPE][:required]`.
fn input(spec: &str) -> anyhow::Result<AgentInput> {
    let mut parts = spec.split(':');
    let name = parts.next().unwrap_or_default().to_owned();
    let mut field = AgentInput { name, ..AgentInput::default() };
    for part in parts {
        match part {
            "string" => field.kind = InputKind::String,
            "number" => field.kind = InputKind::Number,
            "integer" => field.kind = InputKind::Integer,
            "boolean" => field.kind = InputKind::Boolean,
            "required" => field.required = true,
            other => {
                return Err(CliError::config(format!(
                    "'{other}' in '{spec}' is not a type (string, number, integer, boolean) or 'required'."
                ))
                .into());
            }
        }
    }
    Ok(field)
}
