//! The call the isolation hook (`src-tauri/isolation/hook.js`) sends instead of one it refused:
//! the refused command's name and the rule it broke, never its arguments.
//!
//! Invariant: it always fails, after one rate-limited line in the log
//! ([`crate::platform::refusals`]); it reads two short strings and does nothing else.

use super::Result;

/// Logs the refusal and fails with it, so the page's promise rejects.
#[tauri::command]
pub async fn refused_call(command: String, reason: String) -> Result<()> {
    Err(crate::platform::refusals::refused_by_hook(&command, &reason))
}
