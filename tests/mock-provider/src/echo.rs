//! Echo mode: replies computed from the request instead of a script, for use by hand.

use crate::api::ConversationTail;
use crate::script::Reply;

/// The tool the demo path calls; the app's built-in clock tool is meant to answer it.
const DEMO_TOOL: &str = "get_time";

/// The reply echo mode gives to a conversation ending in `tail`.
///
/// A user message mentioning "time" gets a `get_time` call and the tool result is quoted back, so
/// one can watch the whole tool loop by hand without a real model.
pub(crate) fn reply(tail: &ConversationTail, request_number: u64) -> Reply {
    match tail {
        ConversationTail::ToolResult { name, content } => {
            let name = name.as_deref().unwrap_or("the tool");
            Reply::text(format!("{name} returned: {content}"))
        }
        ConversationTail::User(text) if mentions_time(text) => {
            Reply::tool_call(format!("call_mock_{request_number}"), DEMO_TOOL, "{}")
        }
        ConversationTail::User(text) => Reply::text(format!("echo: {text}")),
        ConversationTail::Empty => Reply::text("echo: "),
    }
}

/// Whole-word match so that "timeout" or "sometimes" do not trigger a tool call.
fn mentions_time(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|word| word.eq_ignore_ascii_case("time"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_is_matched_as_a_whole_word() {
        assert!(mentions_time("What time is it?"));
        assert!(mentions_time("TIME"));
        assert!(!mentions_time("a timeout"));
        assert!(!mentions_time("sometimes"));
    }
}
