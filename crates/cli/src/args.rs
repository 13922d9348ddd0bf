//! The command line's top-level surface: the global flags, the subcommands and the arguments of
//! the commands `main.rs` runs itself. Commands with a module of their own (`chat`, `mcp`,
//! `agents`, `defined`) declare their arguments there, next to the code that reads them.
//!
//! Invariant: parsing only. Nothing here opens the database, reads a key or starts a runtime.

use crate::{agents, chat, defined, mcp};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use switchboard_core::{GenerationOptions, ReasoningEffort};
use switchboard_service::ipc::ProfileOptions;

#[derive(Parser, Debug)]
#[command(
    name = "switchboard",
    version,
    about = "Chat with tool-using LLMs from the terminal, on the same engine and history as the Switchboard app."
)]
pub(crate) struct Cli {
    /// Where the database lives (default: the OS data directory; env SWITCHBOARD_DATA_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) data_dir: Option<PathBuf>,
    /// Log to stderr at this level (e.g. debug); env RUST_LOG also works.
    #[arg(long, global = true, value_name = "LEVEL")]
    pub(crate) log: Option<String>,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Manage provider profiles (which API, where, which model).
    #[command(subcommand)]
    Providers(ProvidersCmd),
    /// The model catalogue: refresh it, and show what a model holds, costs and can do.
    #[command(subcommand)]
    Models(crate::models::ModelsCmd),
    /// Send a message and stream the answer, running tools as the model calls them.
    Chat(chat::ChatArgs),
    /// Ask a conversation's last question (or the one given) again, with the choices it was
    /// asked with (or those given); the earlier answer stays as a version.
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
    /// What requests used and cost over a period, by day, model, profile, agent or conversation.
    Usage(crate::usage::UsageArgs),
}

#[derive(Subcommand, Debug)]
pub(crate) enum KeysCmd {
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
pub(crate) enum SettingsCmd {
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
pub(crate) struct ProfileFlags {
    /// Most tokens one response may produce (default: the API's or model's).
    #[arg(long, value_name = "TOKENS")]
    max_output_tokens: Option<u32>,
    /// The model's context window in tokens, overriding the catalogue's (compaction keeps what
    /// is sent under it).
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..))]
    context_window: Option<u64>,
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
    pub(crate) fn options(&self) -> ProfileOptions {
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
            context_window: self.context_window,
            ..ProfileOptions::default()
        }
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum ProvidersCmd {
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
pub(crate) enum ConversationsCmd {
    /// List conversations, newest first.
    List {
        /// Only those whose title or messages contain this text.
        #[arg(long)]
        search: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Edit one of your messages and stream the answer: a new branch from there (the old one is
    /// kept as a version).
    Edit(crate::chat::EditArgs),
    /// List the versions of a message (its edits, or its answers asked again).
    Versions {
        /// Conversation id.
        id: String,
        /// Message id.
        message: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a version of a message (and the branch chosen last below it).
    Switch {
        /// Conversation id.
        id: String,
        /// The version's message id.
        message: String,
    },
    /// Copy the branch up to a message into a new conversation; prints its id.
    Branch {
        /// Conversation id.
        id: String,
        /// The last message to copy.
        message: String,
    },
    /// Find words, "phrases", prefix* (also Chinese, Japanese, Thai) in titles, messages, tool
    /// arguments and tool results, best first, with the matching text. `-word` leaves out,
    /// `OR` between alternatives.
    Search {
        /// What to look for (a leading `-` is part of the query, not an option).
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// The most hits to show (at most 200).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Print JSON (matches in each snippet between U+E000 and U+E001).
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
    /// How full the model's context is for the conversation's next request: tokens, window and
    /// what they are made of (`show` ends with the same line).
    Context {
        /// Conversation id.
        id: String,
        /// Count for this profile instead of the chat's.
        #[arg(long)]
        provider: Option<String>,
        /// Count for this model instead of the chat's.
        #[arg(long)]
        model: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export a conversation (Markdown of its current path, or JSON with every branch), or all of
    /// them as one JSON document (`--all`).
    Export {
        /// Conversation id.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        id: Option<String>,
        /// Every conversation, as one JSON document.
        #[arg(long)]
        all: bool,
        /// Format (`--all` is always JSON).
        #[arg(long, value_enum, default_value_t = ExportFormat::Md)]
        format: ExportFormat,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<std::path::PathBuf>,
    },
    /// Import conversations from a Switchboard JSON export or ChatGPT's conversations.json (the
    /// format is recognised); conversations already present are skipped, never overwritten. A
    /// conversation that cannot be imported is listed on stderr with why, the others are still
    /// imported, and the exit status is 1.
    Import {
        /// The file.
        file: std::path::PathBuf,
        /// Print what was imported as JSON.
        #[arg(long)]
        json: bool,
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
    /// Compact a conversation now: older tool results become stubs and earlier messages a
    /// summary written by its summariser (`conversations summariser`); nothing stored is deleted
    /// (undo from the app).
    Compact {
        /// Conversation id.
        id: String,
        /// Print the stored compaction as JSON.
        #[arg(long)]
        json: bool,
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
    /// Show or pick the model that writes a conversation's summaries when it is compacted (by
    /// default its own model).
    Summariser {
        /// Conversation id.
        id: String,
        /// The provider profile of the model that writes summaries.
        #[arg(long, requires = "model", conflicts_with = "clear")]
        provider: Option<String>,
        /// The model on that profile.
        #[arg(long, requires = "provider")]
        model: Option<String>,
        /// Summaries are written by the conversation's own model again.
        #[arg(long)]
        clear: bool,
    },
    /// Show a conversation's setup: its agent, the toolsets switched on, its own parameters, the
    /// profile and model it last used, tools switched off (`chat --continue` runs with it).
    Setup {
        /// Conversation id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// List what was allowed for this conversation only ("for this chat"): tools that run without
    /// asking, and destinations tools may send data to.
    Grants {
        /// Conversation id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Take back a tool (or, with --host, a destination) allowed for this conversation; its next
    /// call asks again.
    Revoke {
        /// Conversation id.
        id: String,
        /// The tool.
        #[arg(required_unless_present = "host", conflicts_with = "host")]
        tool: Option<String>,
        /// A destination (host) instead of a tool.
        #[arg(long)]
        host: Option<String>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum ExportFormat {
    Md,
    Json,
}

#[derive(Subcommand, Debug)]
pub(crate) enum ToolsCmd {
    /// List tools with their source and status.
    List(ToolsListArgs),
    /// Let a tool send data to sites and servers not used in a chat after the chat read
    /// content from the web or a server, without asking first.
    TrustEgress {
        /// The tool.
        name: String,
        /// Confirm: it widens what Switchboard may do.
        #[arg(long)]
        yes: bool,
    },
    /// Ask again before the tool sends data to a new destination after untrusted content.
    UntrustEgress {
        /// The tool.
        name: String,
    },
    #[command(flatten)]
    Defined(Box<defined::DefinedCmd>),
}

#[derive(Args, Debug)]
pub(crate) struct ToolsListArgs {
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Every name `--kind` accepts, from the provider-kind table.
fn kind_names() -> clap::builder::PossibleValuesParser {
    let names =
        switchboard_service::PROVIDER_KINDS.iter().flat_map(|k| std::iter::once(k.id).chain(k.aliases.iter().copied()));
    clap::builder::PossibleValuesParser::new(names)
}
