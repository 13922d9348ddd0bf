//! Rebuilding the provider history of a stored assistant message. Pure.
//!
//! A stored assistant message holds the whole turn's text plus its tool calls, each with the
//! iteration it belongs to and the char offset where it appeared. The iteration boundaries in the
//! text are the offsets of each iteration's last call, so the rebuilt history sends the same
//! assistant/tool message sequence a live turn sent.

use crate::event::ToolStatus;
use crate::types::{Message, ProviderState, ToolCall};
use crate::vocab::ToolImage;

/// A stored tool call with its result, as the store hands it over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredCall {
    /// Provider call id.
    pub id: String,
    /// Registry name.
    pub name: String,
    /// Raw arguments.
    pub arguments: String,
    /// Char offset in the turn's text.
    pub text_offset: usize,
    /// 1-based iteration.
    pub iteration: u32,
    /// The result, if one was written before the turn ended.
    pub result: Option<(ToolStatus, String)>,
    /// Images of the result.
    pub images: Vec<ToolImage>,
    /// The untrusted source its result came from (as the live turn framed it), if any.
    pub untrusted: Option<String>,
}

/// What the model is told about a call whose result was never written (the app was killed or
/// the turn stopped mid-call): every call id must be answered or the provider rejects the request.
pub const INTERRUPTED_RESULT: &str = "The tool call was interrupted before it finished; it has no result.";

/// Byte index of the `chars`-th char of `text` (clamped to the end).
pub fn byte_index(text: &str, chars: usize) -> usize {
    text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i)
}

/// Turns one stored assistant message into the canonical messages it stood for. `states` are the
/// provider states of its iterations, by 1-based iteration; each goes back on its iteration's
/// assistant message. A result longer than `result_limit` characters is cut as the live turn cut
/// it ([`crate::paging::cut`]), before it is framed.
pub fn assistant_messages(
    text: &str,
    calls: &[StoredCall],
    states: &[(u32, ProviderState)],
    result_limit: usize,
) -> Vec<Message> {
    let state_of = |iteration: u32| states.iter().find(|(i, _)| *i == iteration).map(|(_, s)| s.clone());
    let mut calls: Vec<&StoredCall> = calls.iter().collect();
    calls.sort_by_key(|c| c.iteration);
    let mut out = Vec::new();
    let mut start = 0usize; // byte index where the next iteration's text begins
    let mut i = 0;
    let mut last_iteration = 0;
    while i < calls.len() {
        let iteration = calls[i].iteration;
        let group: Vec<&StoredCall> = calls[i..].iter().take_while(|c| c.iteration == iteration).copied().collect();
        i += group.len();
        let end_chars = group.iter().map(|c| c.text_offset).max().unwrap_or(0);
        let end = byte_index(text, end_chars).max(start);
        out.push(Message::Assistant {
            text: text[start..end].to_owned(),
            tool_calls: group
                .iter()
                .map(|c| ToolCall { id: c.id.clone(), name: c.name.clone(), arguments: c.arguments.clone() })
                .collect(),
            state: state_of(iteration),
        });
        for c in group {
            let (status, content) = match (&c.result, &c.untrusted) {
                (Some((status, content)), source) => {
                    let content = crate::paging::cut(&c.id, content, result_limit);
                    match source {
                        Some(source) => (*status, crate::egress::frame(source, &content)),
                        None => (*status, content.into_owned()),
                    }
                }
                (None, _) => (ToolStatus::Cancelled, INTERRUPTED_RESULT.to_owned()),
            };
            out.push(Message::Tool {
                call_id: c.id.clone(),
                name: c.name.clone(),
                content,
                is_error: status.is_error(),
                images: c.images.clone(),
            });
        }
        start = end;
        last_iteration = iteration;
    }
    if start < text.len() {
        out.push(Message::Assistant {
            text: text[start..].to_owned(),
            tool_calls: Vec::new(),
            state: state_of(last_iteration + 1),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = crate::paging::DEFAULT_LIMIT;

    fn sc(id: &str, offset: usize, iteration: u32, result: Option<&str>) -> StoredCall {
        StoredCall {
            images: Default::default(),
            untrusted: None,
            id: id.into(),
            name: "get_time".into(),
            arguments: "{}".into(),
            text_offset: offset,
            iteration,
            result: result.map(|r| (ToolStatus::Ok, r.to_owned())),
        }
    }

    #[test]
    fn text_only_is_one_assistant_message() {
        let msgs = assistant_messages("hello", &[], &[], LIMIT);
        assert_eq!(msgs, vec![Message::assistant("hello", vec![])]);
    }

    #[test]
    fn text_is_split_at_each_iterations_last_call_in_chars_not_bytes() {
        // "héllo 👋 " is 8 chars but 12 bytes; CJK follows in iteration 2.
        let text = "héllo 👋 世界。done";
        let calls = [sc("a", 8, 1, Some("r1")), sc("b", 8, 1, Some("r2")), sc("c", 11, 2, Some("r3"))];
        let msgs = assistant_messages(text, &calls, &[], LIMIT);
        assert_eq!(msgs.len(), 6);
        assert_eq!(
            msgs[0],
            Message::assistant(
                "héllo 👋 ",
                vec![
                    ToolCall { id: "a".into(), name: "get_time".into(), arguments: "{}".into() },
                    ToolCall { id: "b".into(), name: "get_time".into(), arguments: "{}".into() },
                ],
            )
        );
        assert!(
            matches!(&msgs[1], Message::Tool { call_id, content, is_error: false, .. } if call_id == "a" && content == "r1")
        );
        assert!(
            matches!(&msgs[3], Message::Assistant { text, tool_calls, .. } if text == "世界。" && tool_calls.len() == 1)
        );
        assert_eq!(msgs[5], Message::assistant("done", vec![]));
    }

    #[test]
    fn an_untrusted_result_goes_back_framed_as_the_live_turn_sent_it() {
        let call = StoredCall { untrusted: Some("web_fetch".into()), ..sc("a", 1, 1, Some("page")) };
        let msgs = assistant_messages("x", &[call], &[], LIMIT);
        assert!(
            matches!(&msgs[1], Message::Tool { content, .. } if *content == crate::egress::frame("web_fetch", "page"))
        );
    }

    #[test]
    fn a_call_without_result_is_answered_as_interrupted() {
        let msgs = assistant_messages("x", &[sc("a", 1, 1, None)], &[], LIMIT);
        assert!(matches!(&msgs[1], Message::Tool { content, is_error: true, .. } if content == INTERRUPTED_RESULT));
        assert_eq!(msgs.len(), 2, "no empty trailing assistant message");
    }

    #[test]
    fn offsets_past_the_end_are_clamped() {
        let msgs = assistant_messages("ab", &[sc("a", 99, 1, Some("r"))], &[], LIMIT);
        assert!(matches!(&msgs[0], Message::Assistant { text, .. } if text == "ab"));
    }

    #[test]
    fn each_iterations_provider_state_goes_back_on_its_own_assistant_message() {
        let state = |n: u32| ProviderState {
            api: "anthropic".into(),
            origin: "https://api.anthropic.com".into(),
            data: serde_json::json!({ "n": n }),
        };
        let calls = [sc("a", 2, 1, Some("r1")), sc("b", 4, 2, Some("r2"))];
        let msgs = assistant_messages("abcdef", &calls, &[(3, state(3)), (1, state(1))], LIMIT);
        let states: Vec<Option<&ProviderState>> = msgs
            .iter()
            .filter_map(|m| match m {
                Message::Assistant { state, .. } => Some(state.as_ref()),
                _ => None,
            })
            .collect();
        assert_eq!(
            states,
            [Some(&state(1)), None, Some(&state(3))],
            "iteration 2 had none; the final text is iteration 3"
        );
    }

    #[test]
    fn a_long_result_is_cut_as_the_live_turn_cut_it_then_framed() {
        let long = "r".repeat(30_000);
        let plain = assistant_messages("x", &[sc("a", 1, 1, Some(&long))], &[], 2_000);
        let expected = crate::paging::cut("a", &long, 2_000).into_owned();
        assert!(matches!(&plain[1], Message::Tool { content, .. } if *content == expected));
        let call = StoredCall { untrusted: Some("web_fetch".into()), ..sc("a", 1, 1, Some(&long)) };
        let framed = assistant_messages("x", &[call], &[], 2_000);
        let expected = crate::egress::frame("web_fetch", &expected);
        assert!(matches!(&framed[1], Message::Tool { content, .. } if *content == expected));
    }
}
