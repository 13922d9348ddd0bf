//! Which stored tool results are untrusted data, for a history rebuilt from rows: the live turn
//! framed them as such (the tool declared it, [`switchboard_core::Tool::untrusted_output`]), so
//! the rebuilt one must too, and the turn starts tainted when any is in its context.
//!
//! Invariant: decided from what is stored (the tool's name and source, for an agent's call the
//! calls its sub-agents made, for a `read_tool_result` call the call it read), asking the turn's
//! registry what each tool declares; a tool no source offers any more is judged by its source,
//! never taken for trusted when it came from a server.

use std::cell::RefCell;
use std::collections::HashMap;
use switchboard_core::{ChatEvent, ToolRegistry, ToolSource, ToolStatus, paging};
use switchboard_store::StoredToolCall;

/// Judges the stored calls of one conversation in order: like [`stored`], except that a result
/// `read_tool_result` read back successfully counts as coming from the call it read, as the live
/// turn framed it (`read_tool_result (which read <that call's source>)`).
pub(crate) struct Marker<'a> {
    registry: &'a ToolRegistry,
    /// The source of every call judged so far, by call id.
    seen: RefCell<HashMap<String, Option<String>>>,
}

impl<'a> Marker<'a> {
    pub(crate) fn new(registry: &'a ToolRegistry) -> Self {
        Self { registry, seen: RefCell::default() }
    }

    /// The untrusted source `call`'s result counts as coming from, if any; calls are judged in
    /// the conversation's order.
    pub(crate) fn mark(&self, call: &StoredToolCall) -> Option<String> {
        let source = if call.name == paging::TOOL && call.source == ToolSource::Builtin {
            let ok = call.result.as_ref().is_some_and(|r| r.status == ToolStatus::Ok);
            let read = read_target(&call.arguments).and_then(|id| self.source_of(&id));
            read.filter(|_| ok).map(|read| format!("{} (which read {read})", call.name))
        } else {
            stored(self.registry, call)
        };
        self.seen.borrow_mut().insert(call.call_id.clone(), source.clone());
        source
    }

    /// The source of the call `call_id` judged earlier, if it had one.
    pub(crate) fn source_of(&self, call_id: &str) -> Option<String> {
        self.seen.borrow().get(call_id).cloned().flatten()
    }
}

/// The call id a `read_tool_result` call's arguments name.
pub(crate) fn read_target(arguments: &str) -> Option<String> {
    let args: serde_json::Value = serde_json::from_str(arguments).ok()?;
    args.get("call_id")?.as_str().map(str::to_owned)
}

/// The untrusted source a stored call's result counts as coming from, if any.
pub(crate) fn stored(registry: &ToolRegistry, call: &StoredToolCall) -> Option<String> {
    if let ToolSource::Agent = call.source {
        let nested = call.nested.iter().map(|n| &n.event);
        return read_by_agent(registry, nested).map(|read| format!("{} (which read {read})", call.name));
    }
    untrusted_tool(registry, &call.name, &call.source).then(|| call.name.clone())
}

/// Whether the tool `name` from `source` returns untrusted data.
fn untrusted_tool(registry: &ToolRegistry, name: &str, source: &ToolSource) -> bool {
    match registry.get(name) {
        Some(tool) if tool.def().source == *source => tool.untrusted_output(),
        _ => matches!(source, ToolSource::Mcp { .. } | ToolSource::Http | ToolSource::OpenApi { .. }),
    }
}

/// The first untrusted tool a sub-agent's stored events show it called, at any depth.
fn read_by_agent<'a>(registry: &ToolRegistry, events: impl Iterator<Item = &'a ChatEvent>) -> Option<String> {
    for event in events {
        match event {
            ChatEvent::ToolCall { name, source, .. } if untrusted_tool(registry, name, source) => {
                return Some(name.clone());
            }
            ChatEvent::ToolProgress { event: Some(inner), .. } => {
                if let Some(read) = read_by_agent(registry, std::iter::once(inner.as_ref())) {
                    return Some(read);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_store::NestedEvent;

    fn call(name: &str, source: ToolSource, nested: Vec<NestedEvent>) -> StoredToolCall {
        StoredToolCall {
            call_id: "c".into(),
            name: name.into(),
            source,
            arguments: "{}".into(),
            text_offset: 0,
            iteration: 1,
            index: 0,
            status: switchboard_store::ToolCallStatus::Ok,
            result: None,
            nested,
        }
    }

    fn tool_call(name: &str, source: ToolSource) -> ChatEvent {
        ChatEvent::ToolCall {
            id: "x".into(),
            name: name.into(),
            source,
            arguments: "{}".into(),
            text_offset: 0,
            iteration: 1,
            index: 0,
        }
    }

    #[test]
    fn server_results_are_untrusted_and_an_agent_is_when_it_read_one_at_any_depth() {
        let registry = ToolRegistry::new();
        let mcp = ToolSource::Mcp { server: "notes".into() };
        assert_eq!(stored(&registry, &call("notes__read", mcp.clone(), vec![])).as_deref(), Some("notes__read"));
        assert_eq!(stored(&registry, &call("get_time", ToolSource::Builtin, vec![])), None);
        assert_eq!(stored(&registry, &call("agent__Scout", ToolSource::Agent, vec![])), None);
        let deep = ChatEvent::ToolProgress {
            id: "x".into(),
            instance: Some("Inner[1]".into()),
            text: None,
            event: Some(Box::new(tool_call("notes__read", mcp))),
        };
        let nested = vec![
            NestedEvent { instance: "Scout[1]".into(), event: tool_call("get_time", ToolSource::Builtin) },
            NestedEvent { instance: "Scout[1]".into(), event: deep },
        ];
        assert_eq!(
            stored(&registry, &call("agent__Scout", ToolSource::Agent, nested)).as_deref(),
            Some("agent__Scout (which read notes__read)")
        );
    }
}
