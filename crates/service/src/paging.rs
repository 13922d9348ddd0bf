//! The built-in tool `read_tool_result`: the model reads any range of any stored tool result of
//! its own conversation by call id, so a result cut for the model ([`switchboard_core::paging`])
//! or stubbed by compaction is never lost to it.
//!
//! It lives here, not with the other built-ins, because it reads the store. It is offered
//! whenever tools are (one small, stable definition): a result can be cut in the middle of a
//! turn, and a tool list that changed between two requests would break the provider's prompt
//! cache, which starts with the tools.
//!
//! Invariants: it reads only the calling turn's conversation (the [`ToolContext`]'s id, never an
//! argument), on its current path; offsets and lengths count characters; a page is never longer
//! than the limit less [`paging::PAGE_TRAILER`], so it is never cut itself; a result read back
//! is exactly as untrusted as the result it came from ([`crate::untrusted::Marker`]), so it is
//! framed, and taints the turn, as the original did.

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::{Arc, Weak};
use switchboard_core::{
    Catalog, Source, SourceStatus, Tool, ToolContext, ToolDef, ToolError, ToolOutput, ToolStatus, paging,
};
use switchboard_store::Store;

use crate::settings::Settings;
use crate::untrusted::Marker;

/// The source of [`ReadToolResult`], always ready.
pub(crate) struct PagingSource {
    tool: Arc<dyn Tool>,
}

impl PagingSource {
    /// The source over `store`, judging untrusted results with `catalog`'s tools.
    pub(crate) fn new(store: Store, catalog: Weak<Catalog>) -> Self {
        Self { tool: Arc::new(ReadToolResult { def: definition(), store, catalog }) }
    }
}

impl Source for PagingSource {
    fn id(&self) -> &str {
        "paging"
    }

    fn status(&self) -> SourceStatus {
        SourceStatus::Ready
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::clone(&self.tool)]
    }

    fn reserved_names(&self) -> Vec<String> {
        vec![paging::TOOL.to_owned()]
    }
}

fn definition() -> ToolDef {
    ToolDef::new(
        paging::TOOL,
        "Reads part of a tool result of this conversation that was cut or shortened for you: give the call_id \
         the note named, and the offset (in characters) to start at. Returns up to `length` characters and says \
         how to read on.",
        json!({
            "type": "object",
            "properties": {
                "call_id": {"type": "string", "description": "The id of the tool call whose result to read."},
                "offset": {"type": "integer", "minimum": 0, "description": "The first character to read (default 0)."},
                "length": {"type": "integer", "minimum": 1, "description": "How many characters to read (default and most: what fits in one result)."},
            },
            "required": ["call_id"],
            "additionalProperties": false,
        }),
    )
}

/// Reads a stored tool result of the calling conversation.
struct ReadToolResult {
    def: ToolDef,
    store: Store,
    catalog: Weak<Catalog>,
}

impl Tool for ReadToolResult {
    fn def(&self) -> &ToolDef {
        &self.def
    }

    fn call(&self, args: Value, ctx: ToolContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        async move { self.read(&args, &ctx.conversation_id) }.boxed()
    }
}

/// What one call asks for.
struct Request {
    call_id: String,
    offset: usize,
    length: usize,
}

fn request(args: &Value, max_page: usize) -> Result<Request, ToolError> {
    let invalid = |what: &str| ToolError::InvalidArguments(what.to_owned());
    let call_id = args.get("call_id").and_then(Value::as_str).ok_or_else(|| invalid("call_id must be a string."))?;
    let number = |key: &str, default: usize| -> Result<usize, ToolError> {
        match args.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(v) => v
                .as_u64()
                .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
                .ok_or_else(|| invalid(&format!("{key} must be a whole number of characters, 0 or more."))),
        }
    };
    let offset = number("offset", 0)?;
    let length = number("length", max_page)?.clamp(1, max_page);
    Ok(Request { call_id: call_id.trim().to_owned(), offset, length })
}

impl ReadToolResult {
    fn read(&self, args: &Value, conversation_id: &str) -> Result<ToolOutput, ToolError> {
        let failed = |e: &dyn std::fmt::Display| ToolError::Failed(format!("Could not read the stored results: {e}"));
        let limit = Settings::load(&self.store).map_err(|e| failed(&e))?.engine_config().tool_result_limit;
        let max_page = paging::max_page(limit);
        let Request { call_id, offset, length } = request(args, max_page)?;
        if conversation_id.is_empty() {
            return Err(ToolError::Failed(format!(
                "{} reads the results of a conversation; this call has none.",
                paging::TOOL
            )));
        }
        let registry = self.catalog.upgrade().map(|c| c.registry()).unwrap_or_default();
        let marker = Marker::new(&registry);
        let mut found = None;
        for message in self.store.messages(conversation_id).map_err(|e| failed(&e))? {
            for call in message.tool_calls {
                let source = marker.mark(&call);
                if call.call_id == call_id {
                    found = Some((call, source));
                }
            }
        }
        let Some((call, source)) = found else {
            return Err(ToolError::Failed(format!(
                "There is no tool call with the id '{call_id}' in this conversation (a call of another conversation cannot be read here). Use the call_id a note about a cut result gave."
            )));
        };
        let Some(result) = call.result else {
            return Err(ToolError::Failed(format!(
                "The call '{call_id}' ({}) has no stored result: it was interrupted or has not finished.",
                call.name
            )));
        };
        let text = &result.output;
        let total = text.chars().count();
        if offset > total || (offset == total && total > 0) {
            return Err(ToolError::Failed(format!(
                "The offset {offset} is past the end of the result of '{call_id}', which has {total} characters; use an offset below {total}."
            )));
        }
        let page = paging::page(text, offset, length);
        let end = offset + page.chars().count();
        let next = if end < total {
            format!(" To read on, call {} with {{\"call_id\": \"{call_id}\", \"offset\": {end}}}.", paging::TOOL)
        } else {
            " That is the end of the result.".to_owned()
        };
        let failed_note = if result.status == ToolStatus::Ok { "" } else { " (the call failed; this is its error)" };
        let text = format!(
            "{page}\n\n[Characters {offset} to {end} of {total} of the result of '{call_id}' ({}){failed_note}.{next}]",
            call.name
        );
        let mut output = ToolOutput::text(text);
        output.untrusted = source;
        Ok(output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_default_and_are_bounded() {
        let r = request(&json!({"call_id": " c1 "}), 500).unwrap();
        assert_eq!((r.call_id.as_str(), r.offset, r.length), ("c1", 0, 500));
        let r = request(&json!({"call_id": "c1", "offset": 7, "length": 100_000}), 500).unwrap();
        assert_eq!((r.offset, r.length), (7, 500));
        assert!(request(&json!({"call_id": "c1", "offset": -1}), 500).is_err());
        assert!(request(&json!({"offset": 1}), 500).is_err());
    }
}
