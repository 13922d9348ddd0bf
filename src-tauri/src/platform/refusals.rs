//! The trace a refused call leaves: one warn line in the app's log naming the command and the
//! reason, so a person or a bug report can see that something in the page tried.
//!
//! Two sources: the isolation hook (`src-tauri/isolation/hook.js`), which turns a call it refuses
//! into the `refused_call` command ([`refused_by_hook`]), and the commands' own checks: every
//! command's body runs inside [`logged`], so a refusal (invalid input, a widening change the person
//! did not confirm) is logged on its way back to the page.
//!
//! Invariants: a line never carries an argument's value (keys, header values, message text) —
//! only the command's name, reduced to the characters a command name has, and the service's error
//! message (which never contains a secret, and is also masked by the
//! log writer); the page cannot flood the log: at most [`LINES_PER_WINDOW`] lines per
//! [`WINDOW`], then one line counting those left out.

use std::sync::Mutex;
use std::time::{Duration, Instant};
use switchboard_core::ErrorKind;
use switchboard_service::ipc::IpcError;

/// Most refusal lines written per [`WINDOW`].
pub const LINES_PER_WINDOW: u32 = 20;
/// The rate limit's window.
pub const WINDOW: Duration = Duration::from_secs(10);
/// Most characters of a command name or a reason in a line.
const MAX_NAME_CHARS: usize = 64;
const MAX_REASON_CHARS: usize = 300;

struct Limiter {
    since: Option<Instant>,
    written: u32,
    dropped: u64,
}

static LIMITER: Mutex<Limiter> = Mutex::new(Limiter { since: None, written: 0, dropped: 0 });

/// `name` as a command name: letters, digits and `_ : | -`, anything else as `?`, at most 64.
fn command_name(name: &str) -> String {
    name.chars()
        .take(MAX_NAME_CHARS)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '|' | '-') { c } else { '?' })
        .collect()
}

/// `reason` on one line without control characters, at most 300 characters.
fn one_line(reason: &str) -> String {
    reason.chars().take(MAX_REASON_CHARS).map(|c| if c.is_control() { ' ' } else { c }).collect()
}

/// Writes the line unless the window's lines are spent (then counts it).
fn write(command: &str, reason: &str) {
    let Ok(mut l) = LIMITER.lock() else { return };
    let now = Instant::now();
    if l.since.is_none_or(|s| now.duration_since(s) >= WINDOW) {
        if l.dropped > 0 {
            tracing::warn!(target: "switchboard::refused", dropped = l.dropped, "more refused calls were not logged");
        }
        *l = Limiter { since: Some(now), written: 0, dropped: 0 };
    }
    if l.written >= LINES_PER_WINDOW {
        l.dropped += 1;
        return;
    }
    l.written += 1;
    tracing::warn!(target: "switchboard::refused", command = %command_name(command), reason = %one_line(reason), "refused a call from the page");
}

/// The argument the isolation hook adds to every app command it lets through: the command's own
/// name, inside the encrypted body (src-tauri/isolation/hook.js).
pub const CHECKED_KEY: &str = "__switchboardChecked";

/// Why an app command did not come through the isolation hook, or `None` when it did: its
/// arguments carry [`CHECKED_KEY`] with its own name. Only the hook's frame can put it there
/// (Tauri decrypts every non-empty body with a key the page never sees); without it the call came
/// with an empty body, which Tauri does not decrypt, and with another name it is a body replayed
/// under another command.
pub fn unchecked(command: &str, payload: &tauri::ipc::InvokeBody) -> Option<IpcError> {
    let checked = match payload {
        tauri::ipc::InvokeBody::Json(serde_json::Value::Object(args)) => args.get(CHECKED_KEY),
        _ => None,
    };
    let reason = match checked.and_then(serde_json::Value::as_str) {
        Some(name) if name == command => return None,
        Some(_) => "its arguments were checked for another command",
        None => "it did not pass the isolation hook",
    };
    Some(refused_by_hook(command, reason))
}

/// A call the isolation hook refused: logged, and the error its caller gets.
pub fn refused_by_hook(command: &str, reason: &str) -> IpcError {
    write(command, reason);
    IpcError {
        kind: ErrorKind::BadRequest,
        message: format!("The app refused the call to `{}`: {}.", command_name(command), one_line(reason)),
        retryable: false,
    }
}

/// Whether an error of `kind` means the command refused the call (its input is invalid, or the
/// person did not confirm a widening change), rather than failed doing it.
pub fn is_refusal(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::Config | ErrorKind::BadRequest | ErrorKind::Cancelled)
}

/// The result of `call`, the body of `command`, its refusal logged (see [`is_refusal`]).
pub async fn logged<T>(command: &str, call: impl Future<Output = Result<T, IpcError>>) -> Result<T, IpcError> {
    let result = call.await;
    if let Err(e) = &result
        && is_refusal(e.kind)
    {
        write(command, &e.message);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_reasons_are_reduced_to_one_safe_line() {
        assert_eq!(command_name("set_key\n\u{202e}x"), "set_key??x");
        assert_eq!(command_name(&"a".repeat(500)).len(), MAX_NAME_CHARS);
        assert_eq!(one_line("too\nlong\r"), "too long ");
        assert_eq!(one_line(&"b".repeat(5000)).len(), MAX_REASON_CHARS);
    }
}
