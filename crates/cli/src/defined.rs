//! `switchboard tools add-http | add-command | defined | approve | remove | import | try`: the
//! tools people define without code (`tools.json`), as Settings shows them.

use crate::mcp::Yes;
use crate::pairs::pairs;
use crate::{CliError, render, runtime};
use clap::Subcommand;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use switchboard_service::Service;
use switchboard_service::defined_tools::{DefinedKind, DefinedState, DefinedToolInfo};

#[derive(Subcommand, Debug)]
pub enum DefinedCmd {
    /// List the tools of the tools file (HTTP and command tools) and whether each is offered.
    Defined {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add or replace an HTTP API tool: `tools add-http NAME --url 'https://api.example.com/v1/items/{{id}}'`.
    AddHttp {
        /// The tool's name as the model sees it (letters, digits, '_', '-').
        name: String,
        /// The URL; `{{param}}` placeholders may stand in its path and query, never its host.
        #[arg(long)]
        url: String,
        /// GET (default), POST, PUT, PATCH, DELETE or HEAD. Anything but GET and HEAD asks first.
        #[arg(long, default_value = "GET")]
        method: String,
        /// What it does, for the model.
        #[arg(long, default_value = "")]
        description: String,
        /// A query parameter, `name=template` (repeatable).
        #[arg(long = "query", value_name = "NAME=VALUE")]
        query: Vec<String>,
        /// A header, `Name=template` (repeatable); `{{secret:KEY}}` takes a key from the key store.
        #[arg(long = "header", value_name = "NAME=VALUE")]
        headers: Vec<String>,
        /// The JSON body template (`"{{param}}"` alone keeps the argument's type).
        #[arg(long)]
        body: Option<String>,
        /// The arguments' JSON Schema (default: every placeholder a required string).
        #[arg(long)]
        parameters: Option<String>,
        /// The part of a JSON response to give the model, as a JSON pointer (`/data/items`).
        #[arg(long)]
        pointer: Option<String>,
        /// Seconds a call may take.
        #[arg(long)]
        timeout: Option<u64>,
        /// The largest response read, in bytes.
        #[arg(long)]
        max_bytes: Option<u64>,
        /// Let it reach this computer and the local network (off: only public addresses).
        #[arg(long)]
        allow_local: bool,
        /// Ask before every call, whatever the method.
        #[arg(long, conflicts_with = "no_ask")]
        ask: bool,
        /// Never ask, whatever the method.
        #[arg(long)]
        no_ask: bool,
        /// What a dry run returns instead of calling the API.
        #[arg(long)]
        example: Option<String>,
        /// Confirm sending the keys it uses to its address (shown first).
        #[arg(long)]
        yes: bool,
    },
    /// Add or replace a command tool: `tools add-command NAME -- PROGRAM ARGS...` (`{{param}}`
    /// placeholders each stay one argument; no shell unless you name one).
    AddCommand {
        /// The tool's name as the model sees it.
        name: String,
        /// What it does, for the model.
        #[arg(long, default_value = "")]
        description: String,
        /// The working directory (absolute; default: your home directory).
        #[arg(long)]
        cwd: Option<String>,
        /// An environment variable, `NAME=template` (repeatable; `{{secret:KEY}}` allowed).
        #[arg(long = "env", value_name = "NAME=VALUE")]
        env: Vec<String>,
        /// The arguments' JSON Schema (default: every placeholder a required string).
        #[arg(long)]
        parameters: Option<String>,
        /// Seconds a run may take before it is stopped with everything it started.
        #[arg(long)]
        timeout: Option<u64>,
        /// Run without asking you first. Dangerous: the model chooses the arguments.
        #[arg(long)]
        no_ask: bool,
        /// What a dry run returns instead of running the program.
        #[arg(long)]
        example: Option<String>,
        /// Confirm the command line shown.
        #[arg(long)]
        yes: bool,
        /// The program and its arguments, after `--`.
        #[arg(last = true, value_name = "ARGV", required = true)]
        argv: Vec<String>,
    },
    /// Allow a tool that waits for approval (new, or changed in the file since).
    Approve {
        /// The tool.
        name: String,
        /// Confirm what is shown.
        #[arg(long)]
        yes: bool,
    },
    /// Remove a tool from the tools file (its keys stay in the key store).
    Remove {
        /// The tool.
        name: String,
    },
    /// Add every tool of another tools file (`{"httpTools": [...], "commandTools": [...]}`).
    Import {
        /// The file.
        file: PathBuf,
        /// Confirm what is shown.
        #[arg(long)]
        yes: bool,
    },
    /// Offer the operations of an OpenAPI 3.0/3.1 document (JSON or YAML, a file or a URL) as
    /// tools, one per operation; a copy of the document is kept with the tools file.
    ImportOpenapi {
        /// Your name for the API (letters, digits, '-', '_'); its tools show it as their source.
        name: String,
        /// The document: a file path or an http(s) URL.
        source: String,
        /// The base URL to call instead of the document's first server.
        #[arg(long)]
        server: Option<String>,
        /// The key store entry for a security scheme, `SCHEME=KEY` (repeatable; default KEY:
        /// NAME-SCHEME).
        #[arg(long = "key", value_name = "SCHEME=KEY")]
        keys: Vec<String>,
        /// Offer only these operations (tool names, comma-separated; default: all of a document
        /// with at most 30, none of a larger one).
        #[arg(long, value_delimiter = ',')]
        only: Option<Vec<String>>,
        /// Let its tools reach this computer and the local network.
        #[arg(long)]
        allow_local: bool,
        /// Confirm sending the keys its operations use to its server (shown first).
        #[arg(long)]
        yes: bool,
    },
    /// Run an HTTP tool once and show the exact request (keys masked) and the response.
    Try {
        /// The tool.
        name: String,
        /// The arguments, a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
    },
}

fn json_arg(text: &str, flag: &str) -> anyhow::Result<Value> {
    serde_json::from_str(text).map_err(|e| CliError::config(format!("{flag} is not valid JSON: {e}")).into())
}

/// A definition from the flags, through the file's own format (so the CLI and the file can
/// never disagree on a field).
fn config<T: serde::de::DeserializeOwned>(fields: Map<String, Value>) -> anyhow::Result<T> {
    serde_json::from_value(Value::Object(fields)).map_err(|e| CliError::config(e.to_string()).into())
}

fn print_tool(t: &DefinedToolInfo) {
    let kind = match t.kind {
        DefinedKind::Http => "http",
        DefinedKind::Command => "command",
        DefinedKind::OpenApi => "openapi",
    };
    let state = match &t.state {
        DefinedState::Ready => "ready".to_owned(),
        DefinedState::NeedsApproval { .. } => format!("needs approval (switchboard tools approve {} --yes)", t.name),
        DefinedState::Invalid { reason } => format!("not usable: {reason}"),
    };
    let asks = if t.asks_first { ", asks first" } else { "" };
    println!("{:<20} {:<8} {}{asks}", render::safe(&t.name), kind, render::safe(&state));
    println!("    {}", render::safe(&t.target));
    if t.kind == DefinedKind::OpenApi {
        println!("    {}", render::safe(&t.description));
    }
    if !t.keys.is_empty() {
        println!("    keys: {}", render::safe(&t.keys.join(", ")));
    }
}

pub fn run(service: &Service, cmd: DefinedCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        DefinedCmd::Defined { json } => {
            let overview = service.defined_tools()?;
            if json {
                println!("{}", render::json(&serde_json::to_string_pretty(&overview)?));
                return Ok(ExitCode::SUCCESS);
            }
            if let Some(problem) = &overview.problem {
                eprintln!("The tools file has a problem: {}", render::safe(problem));
            }
            if overview.tools.is_empty() {
                println!(
                    "No tools in {}. Add one with `switchboard tools add-http` or `switchboard tools add-command`.",
                    overview.config_path.as_deref().unwrap_or("the tools file")
                );
            }
            for t in &overview.tools {
                print_tool(t);
            }
        }
        DefinedCmd::AddHttp {
            name,
            url,
            method,
            description,
            query,
            headers,
            body,
            parameters,
            pointer,
            timeout,
            max_bytes,
            allow_local,
            ask,
            no_ask,
            example,
            yes,
        } => {
            let mut f = Map::new();
            f.insert("name".into(), json!(name));
            f.insert("description".into(), json!(description));
            f.insert("method".into(), json!(method.to_ascii_uppercase()));
            f.insert("url".into(), json!(url));
            f.insert("query".into(), json!(pairs(&query, "--query")?));
            f.insert("headers".into(), json!(pairs(&headers, "--header")?));
            if let Some(body) = body {
                f.insert("body".into(), json_arg(&body, "--body")?);
            }
            if let Some(p) = parameters {
                f.insert("parameters".into(), json_arg(&p, "--parameters")?);
            }
            if let Some(p) = pointer {
                f.insert("responsePointer".into(), json!(p));
            }
            if let Some(t) = timeout {
                f.insert("timeoutSecs".into(), json!(t));
            }
            if let Some(b) = max_bytes {
                f.insert("maxResponseBytes".into(), json!(b));
            }
            if allow_local {
                f.insert("allowLocalAddresses".into(), json!(true));
            }
            if ask || no_ask {
                f.insert("approval".into(), json!(if ask { "ask" } else { "auto" }));
            }
            if let Some(example) = example {
                f.insert("exampleOutput".into(), json!(example));
            }
            let info = service.add_http_tool(config(f)?, &Yes(yes))?;
            print_tool(&info);
        }
        DefinedCmd::AddCommand { name, description, cwd, env, parameters, timeout, no_ask, example, yes, argv } => {
            let mut f = Map::new();
            f.insert("name".into(), json!(name));
            f.insert("description".into(), json!(description));
            f.insert("argv".into(), json!(argv));
            if let Some(cwd) = cwd {
                f.insert("cwd".into(), json!(cwd));
            }
            f.insert("env".into(), json!(pairs(&env, "--env")?));
            if let Some(p) = parameters {
                f.insert("parameters".into(), json_arg(&p, "--parameters")?);
            }
            if let Some(t) = timeout {
                f.insert("timeoutSecs".into(), json!(t));
            }
            if no_ask {
                f.insert("approval".into(), json!("auto"));
            }
            if let Some(example) = example {
                f.insert("exampleOutput".into(), json!(example));
            }
            let info = service.add_command_tool(config(f)?, &Yes(yes))?;
            print_tool(&info);
        }
        DefinedCmd::Approve { name, yes } => {
            let info = service.approve_defined_tool(&name, &Yes(yes))?;
            print_tool(&info);
        }
        DefinedCmd::Remove { name } => {
            service.remove_defined_tool(&name)?;
            println!("Removed the tool '{name}'.");
        }
        DefinedCmd::Import { file, yes } => {
            for t in service.import_defined_tools(&file, &Yes(yes))? {
                print_tool(&t);
            }
        }
        DefinedCmd::ImportOpenapi { name, source, server, keys, only, allow_local, yes } => {
            let request = switchboard_service::openapi_docs::OpenApiRequest {
                name,
                source,
                server,
                keys: pairs(&keys, "--key")?,
                include: only.map(|o| o.into_iter().collect()),
                allow_local_addresses: allow_local,
            };
            let import = runtime().block_on(service.import_openapi(request, &Yes(yes)))?;
            print_tool(&import.document);
            for op in &import.operations {
                let mark = if op.selected { "[x]" } else { "[ ]" };
                println!("    {mark} {:<32} {}", render::safe(&op.tool), render::safe(&op.route));
                if let Some(why) = &op.left_out {
                    println!("        left out: {}", render::safe(why));
                }
            }
            if import.operations.iter().all(|o| !o.selected) && !import.operations.is_empty() {
                println!(
                    "    None offered yet: pick them with --only NAME,NAME (a large document never floods the model)."
                );
            }
            for note in &import.notes {
                println!("note: {}", render::safe(note));
            }
        }
        DefinedCmd::Try { name, args } => {
            let args = json_arg(&args, "--args")?;
            let report = runtime().block_on(service.try_http_tool(&name, args))?;
            println!("{}", render::safe(&report.request));
            println!();
            match &report.outcome {
                Ok(text) => println!("{}", render::safe(text)),
                Err(e) => {
                    eprintln!("{}", render::safe(e));
                    return Ok(ExitCode::FAILURE);
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
