//! Command tools: a tool a person defines without code that runs a configured local command.
//!
//! The command is an argv array, never a shell line: each element is a template
//! ([`crate::template`]) and a `{{param}}` expands inside its one element, whatever the value
//! holds (spaces, quotes, `;`, `$(…)`, newlines), so the model can choose arguments but never
//! the command's shape. A shell runs only when the person names one (`bash -c '…'`), and then a
//! placeholder may not sit inside the script: it is passed as a positional argument (`"$1"`) or
//! an environment variable instead. `{{secret:NAME}}` is allowed in `env` only, since every
//! process on the machine can read another's command line.
//!
//! A call runs the command in its own process group with a minimal environment (`PATH`, `HOME`,
//! `USER`, `LANG`, `LC_ALL`, `TMPDIR` and the tool's own `env`; never the app's keys), stdin
//! closed, stdout and stderr read at the same time and kept up to a limit (the rest is read and
//! dropped, so the command never blocks on a full pipe). At the time limit or on stop the whole
//! group is killed, grandchildren too. A process the command leaves running in the background
//! when it exits on its own is left alone (a command may start an app on purpose); what it
//! writes after the first second is not part of the result.
//!
//! Architecture invariant: what runs is exactly what [`CommandTool::command_line`] shows the
//! person approving it, with secrets by name only.
//!
//! The folder, bottom up: `limits` (what a configuration may set), `error` (why one cannot be
//! used), `shell` (shells: refusing a placeholder inside a script, quoting a word),
//! `config` (the person's definition and its checks), `output` (reading the pipes up to the
//! limit), `process` (finding the program, the process group) and `tool` (the [`CommandTool`]
//! that renders a call and runs it). Each uses only those before it.

mod config;
mod error;
mod limits;
mod output;
mod process;
mod shell;
mod tool;

pub use config::CommandToolConfig;
pub use error::CommandToolError;
pub use limits::{DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIMEOUT_SECS, MAX_OUTPUT_BYTES, MAX_TIMEOUT_SECS};
pub use shell::shell_quote;
pub use tool::CommandTool;
