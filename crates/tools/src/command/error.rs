//! Why a command tool's configuration cannot be used: [`CommandToolError`], one sentence per
//! mistake naming the tool and saying what to change.

use super::limits::{MAX_OUTPUT_BYTES, MAX_TIMEOUT_SECS};
use crate::template::TemplateError;

/// Why a command tool's configuration cannot be used. Each message is one sentence naming the
/// tool and saying what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandToolError {
    /// The name is not a valid tool name.
    #[error(
        "The command tool name '{0}' is not valid: use 1 to 64 letters, digits, _ or -, starting with a letter or _."
    )]
    InvalidName(String),
    /// The description is empty.
    #[error("The command tool '{0}' needs a description, so the model knows when to use it.")]
    NoDescription(String),
    /// `argv` is empty or its program is blank.
    #[error("The command tool '{0}' has no program to run: the first element of its command is empty.")]
    NoProgram(String),
    /// The program is a placeholder.
    #[error(
        "The command tool '{tool}' lets the model choose the program ('{program}'): the first element of its command must be written out."
    )]
    ProgramTemplated {
        /// The tool's name.
        tool: String,
        /// The first element as written.
        program: String,
    },
    /// A template cannot be parsed.
    #[error("The command tool '{tool}' has a broken placeholder in {place}: the template {error}.")]
    Template {
        /// The tool's name.
        tool: String,
        /// Where (`its command`, `the variable X`).
        place: String,
        /// What is wrong.
        error: TemplateError,
    },
    /// `{{secret:NAME}}` in an argv element.
    #[error(
        "The command tool '{tool}' puts the secret '{secret}' on its command line, where any program on this computer can read it: pass it in an environment variable instead (env, e.g. TOKEN = {{{{secret:{secret}}}}})."
    )]
    SecretInArgv {
        /// The tool's name.
        tool: String,
        /// The secret's name.
        secret: String,
    },
    /// A placeholder inside the script a shell runs.
    #[error(
        "The command tool '{tool}' puts {{{{{param}}}}} inside the script {shell} runs, where its value would be read as code: {advice}."
    )]
    ParamInShellScript {
        /// The tool's name.
        tool: String,
        /// The parameter.
        param: String,
        /// The shell's file name.
        shell: String,
        /// How to pass it instead.
        advice: String,
    },
    /// The working folder is not an absolute path.
    #[error("The command tool '{tool}' has the working folder '{cwd}', which is not an absolute path.")]
    RelativeCwd {
        /// The tool's name.
        tool: String,
        /// The folder as written.
        cwd: String,
    },
    /// An environment variable name that is not one.
    #[error(
        "The command tool '{tool}' sets the environment variable '{var}', which is not a valid name: use letters, digits and _, not starting with a digit."
    )]
    BadEnvName {
        /// The tool's name.
        tool: String,
        /// The name as written.
        var: String,
    },
    /// A placeholder the parameter schema does not define.
    #[error(
        "The command tool '{tool}' uses {{{{{param}}}}}, which its parameters do not define: add '{param}' to the schema's properties or remove the placeholder."
    )]
    UndefinedParam {
        /// The tool's name.
        tool: String,
        /// The parameter.
        param: String,
    },
    /// The parameter schema is not an object schema.
    #[error("The command tool '{tool}' has a parameter schema that {reason}.")]
    BadSchema {
        /// The tool's name.
        tool: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The time limit is 0 or above an hour.
    #[error("The command tool '{tool}' has a time limit of {secs} s: use 1 to {MAX_TIMEOUT_SECS} seconds.")]
    Timeout {
        /// The tool's name.
        tool: String,
        /// The configured limit.
        secs: u64,
    },
    /// The output limit is 0 or above 4 MiB.
    #[error("The command tool '{tool}' keeps at most {bytes} bytes of output: use 1 to {MAX_OUTPUT_BYTES} bytes.")]
    OutputLimit {
        /// The tool's name.
        tool: String,
        /// The configured limit.
        bytes: u64,
    },
}
