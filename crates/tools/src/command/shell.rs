//! Shells, the two places a command tool meets one: refusing a `{{param}}` inside the script a
//! shell runs (where its value would be read as code), and quoting a word as a POSIX shell
//! reads it, for the command line the person approves.

use super::error::CommandToolError;
use crate::template::Template;

/// A word quoted for a POSIX shell when it has anything but safe characters.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '@' | '+' | ',' | '=' | '%')
        });
    if safe { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

/// How a shell takes a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ShellKind {
    /// `sh -c SCRIPT [NAME ARGS…]`: one element is the script, the ones after it are `$0`, `$1`…
    Posix,
    /// `cmd /c …`, `pwsh -Command …`: everything after the flag is the script.
    RestOfLine,
}

/// The shell `word` names (by file name, any folder, `.exe` or not), if any.
fn shell_kind(word: &str) -> Option<ShellKind> {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word).to_ascii_lowercase();
    match base.strip_suffix(".exe").unwrap_or(&base) {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "fish" => Some(ShellKind::Posix),
        "cmd" | "pwsh" | "powershell" => Some(ShellKind::RestOfLine),
        _ => None,
    }
}

/// Refuses a placeholder inside a script a shell runs. The first element naming a shell counts,
/// not only the program (`timeout 5 bash -c …`, `env bash -c …`); what follows it is the
/// shell's (its options, its script, then the script's arguments, where `sh` is often `$0`).
pub(super) fn check_shell_scripts(tool: &str, raw: &[String], argv: &[Template]) -> Result<(), CommandToolError> {
    let first_shell =
        raw.iter().enumerate().find_map(|(i, w)| shell_kind(w).filter(|_| argv[i].is_literal()).map(|k| (i, k)));
    if let Some((i, kind)) = first_shell {
        let word = &raw[i];
        let shell = word.rsplit(['/', '\\']).next().unwrap_or(word).to_owned();
        let (checked, advice) = match kind {
            ShellKind::Posix => (
                posix_script_end(raw, argv, i).map(|end| i + 1..end + 1),
                "pass it as a positional argument instead (after the script, e.g. \"--\", \"{{name}}\", and use \"$1\" in the script)",
            ),
            ShellKind::RestOfLine => (
                rest_of_line_flag(&shell, &raw[i + 1..]).then_some(i + 1..raw.len()),
                "pass it in an environment variable instead (env, e.g. VALUE = {{name}}, read as %VALUE% or $env:VALUE)",
            ),
        };
        if let Some(param) = checked.and_then(|range| argv[range].iter().flat_map(|t| t.params()).next()) {
            return Err(CommandToolError::ParamInShellScript {
                tool: tool.to_owned(),
                param: param.to_owned(),
                shell,
                advice: advice.replace("name", param),
            });
        }
    }
    Ok(())
}

/// The index of the script element of the POSIX shell at `shell`, when it runs one (`-c`,
/// `-lc`, `-ec`…, fish's `--command`); `None` when it runs a file or reads stdin. An element
/// with a placeholder where an option could be is taken as the script (so it is refused).
fn posix_script_end(raw: &[String], argv: &[Template], shell: usize) -> Option<usize> {
    let mut command_flag = false;
    let mut j = shell + 1;
    while j < raw.len() {
        let a = raw[j].as_str();
        if !argv[j].is_literal() {
            return Some(j);
        }
        if a == "--" || a == "-" {
            if !command_flag {
                return None;
            }
        } else if matches!(a, "-o" | "+o" | "-O" | "+O") {
            j += 1;
        } else if a == "--command" {
            command_flag = true;
        } else if a.starts_with("--command=") {
            return Some(j);
        } else if a.starts_with("--") {
            // A long option (`--login`, `--norc`).
        } else if let Some(flags) = a.strip_prefix(['-', '+']).filter(|f| !f.is_empty()) {
            if flags.chars().all(|c| c.is_ascii_alphabetic()) && flags.contains('c') && a.starts_with('-') {
                command_flag = true;
            }
        } else {
            return command_flag.then_some(j);
        }
        j += 1;
    }
    None
}

/// Whether `args` (what follows `cmd` or PowerShell) has the flag after which the rest of the
/// line is the script: `/c`, `/k` for cmd; `-c`, `-Command`, `-EncodedCommand` (or their
/// prefixes) for PowerShell.
fn rest_of_line_flag(shell: &str, args: &[String]) -> bool {
    let is_cmd = shell.to_ascii_lowercase().trim_end_matches(".exe") == "cmd";
    args.iter().any(|a| {
        let a = a.to_ascii_lowercase();
        if is_cmd {
            return a == "/c" || a == "/k";
        }
        let Some(flag) = a.strip_prefix("--").or_else(|| a.strip_prefix(['-', '/'])) else { return false };
        !flag.is_empty() && ("command".starts_with(flag) || "encodedcommand".starts_with(flag) || flag == "ec")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::{CommandTool, CommandToolConfig};

    fn config(argv: &[&str]) -> CommandToolConfig {
        CommandToolConfig::new("t", "A test tool.", argv.iter().map(|s| (*s).to_owned()).collect())
    }

    #[test]
    fn a_placeholder_inside_a_shell_script_is_refused_and_a_positional_one_allowed() {
        for argv in [
            &["bash", "-c", "grep -n '{{pattern}}' notes.txt"][..],
            &["/bin/sh", "-c", "{{pattern}}"],
            &["bash", "-lc", "echo {{pattern}}"],
            &["zsh", "-o", "pipefail", "-c", "echo {{pattern}}"],
            &["fish", "--command", "echo {{pattern}}"],
            &["timeout", "5", "dash", "-ec", "echo {{pattern}}"],
            &["bash", "{{pattern}}", "-c", "echo hi"],
            &["cmd.exe", "/c", "echo", "{{pattern}}"],
            &["pwsh", "-Command", "Get-Item", "{{pattern}}"],
            &["C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", "-c", "{{pattern}}"],
        ] {
            let e = CommandTool::new(config(argv)).unwrap_err();
            assert!(
                matches!(&e, CommandToolError::ParamInShellScript { param, .. } if param == "pattern"),
                "{argv:?}: {e:?}"
            );
        }
        let e = CommandTool::new(config(&["bash", "-c", "grep -n {{pattern}} notes.txt"])).unwrap_err().to_string();
        assert!(e.contains("positional argument") && e.contains("\"{{pattern}}\"") && e.contains("bash"), "{e}");
        let e = CommandTool::new(config(&["cmd", "/C", "dir {{pattern}}"])).unwrap_err().to_string();
        assert!(e.contains("environment variable"), "{e}");
        for argv in [
            &["bash", "-c", "grep -n \"$1\" notes.txt", "--", "{{pattern}}"][..],
            &["sh", "-c", "printf '%s' \"$1\"", "sh", "x{{pattern}}"],
            &["bash", "script.sh", "{{pattern}}"],
            &["grep", "-c", "{{pattern}}", "notes.txt"],
            &["pwsh", "-File", "s.ps1", "{{pattern}}"],
        ] {
            assert!(CommandTool::new(config(argv)).is_ok(), "{argv:?}");
        }
    }
}
