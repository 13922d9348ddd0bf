//! `mock-provider`: the mock LLM provider as a standalone server, for use by hand and from
//! scripts. Prints `listening on http://127.0.0.1:PORT/v1` once bound, then serves until killed.

use std::convert::Infallible;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use switchboard_mock_provider::{MockServer, Script};
use tracing_subscriber::EnvFilter;

/// A scriptable mock of the OpenAI Chat Completions API on 127.0.0.1.
#[derive(Debug, Parser)]
#[command(name = "mock-provider", version)]
struct Args {
    /// Port to bind on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// A JSON `Script` file (see the crate README); without it the server echoes.
    #[arg(long, value_name = "FILE.json")]
    script: Option<PathBuf>,
    /// Echo once the script is exhausted (the default when no script is given).
    #[arg(long)]
    echo: bool,
    /// Pause between SSE events, overriding the script's `chunk_delay_ms`.
    #[arg(long, value_name = "N")]
    chunk_delay_ms: Option<u64>,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    // Logs go to stderr so stdout carries only the one line that callers parse.
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let args = Args::parse();

    let mut script = match &args.script {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read script {}", path.display()))?;
            serde_json::from_str::<Script>(&text).with_context(|| format!("invalid script {}", path.display()))?
        }
        None => Script::default(),
    };
    if args.echo || args.script.is_none() {
        script.echo_when_empty = true;
    }
    if let Some(ms) = args.chunk_delay_ms {
        script.chunk_delay_ms = ms;
    }

    let server = MockServer::start_on_port(args.port, script)
        .await
        .with_context(|| format!("cannot bind 127.0.0.1:{}", args.port))?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {}", server.base_url())?;
    // A parent process waits for this line through a pipe, where stdout is block-buffered.
    stdout.flush()?;
    drop(stdout);

    let never: Infallible = std::future::pending().await;
    match never {}
}
