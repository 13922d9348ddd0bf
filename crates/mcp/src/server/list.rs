//! A server's tools: every page of `tools/list` read (bounded by [`MAX_LIST_PAGES`] and
//! [`MAX_TOOLS`]), its catalogue capped ([`cap_catalogue`]: no tool over the core's per-tool
//! size, at most [`MAX_CATALOGUE_BYTES`] in all), then the approved definitions offered and the
//! others held back. The tools of a server's first listing are approved as they are (the person
//! approved the server); a tool whose definition changed since, or that the server added
//! afterwards, waits for the person.
//!
//! The list is read as JSON and converted entry by entry ([`convert::tools`]): rmcp's typed
//! `list_tools` rejects a whole page for one malformed entry, so one bad tool would hide all
//! the others. A bad entry is skipped with its reason in the server's status.

use super::call::McpTool;
use super::connect::plain;
use super::detail::HeldTool;
use super::shared::Shared;
use crate::convert::{self, Listed};
use rmcp::model::{ClientRequest, ListToolsRequest, PaginatedRequestParams};
use rmcp::service::{Peer, RoleClient};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::catalogue::{MAX_TOOL_DEFINITION_BYTES, definition_bytes};
use switchboard_core::{SourceStatus, Tool};

/// The most `tools/list` pages read (a server that repeats its cursor ends here).
pub const MAX_LIST_PAGES: usize = 50;

/// The most tools taken from one server.
pub const MAX_TOOLS: usize = 500;

/// The most bytes of tool definitions taken from one server (names, descriptions and schemas):
/// 2 MiB, [`MAX_TOOLS`] tools of 4 KiB each, several times what the largest real servers list.
/// What one server's catalogue costs in memory, and in every registry rebuild, stays bounded.
pub const MAX_CATALOGUE_BYTES: usize = 2 * 1024 * 1024;

/// `listed` without the tools over the per-tool cap ([`MAX_TOOL_DEFINITION_BYTES`], each named
/// with its size) and without those past [`MAX_CATALOGUE_BYTES`] in list order (counted in one
/// reason); the reasons go to `skipped`.
fn cap_catalogue(listed: Vec<Listed>, skipped: &mut Vec<String>) -> Vec<Listed> {
    let mut total = 0usize;
    let mut over_budget = 0usize;
    let mut kept = Vec::with_capacity(listed.len());
    for l in listed {
        let bytes = definition_bytes(&l.def);
        if bytes > MAX_TOOL_DEFINITION_BYTES {
            skipped.push(format!(
                "'{}': its definition is {bytes} bytes, more than the {MAX_TOOL_DEFINITION_BYTES} one tool may take; left out",
                l.remote
            ));
        } else if total + bytes > MAX_CATALOGUE_BYTES {
            over_budget += 1;
        } else {
            total += bytes;
            kept.push(l);
        }
    }
    if over_budget > 0 {
        skipped.push(format!(
            "{over_budget} tools past {} MiB of tool definitions were left out",
            MAX_CATALOGUE_BYTES / (1024 * 1024)
        ));
    }
    kept
}

impl Shared {
    /// Lists every page of tools (at most [`MAX_LIST_PAGES`] pages and [`MAX_TOOLS`] tools) and
    /// offers the approved ones; `false` (after marking the server failed) when it could not.
    pub(super) async fn list(&self, peer: &Peer<RoleClient>) -> bool {
        let mut values: Vec<serde_json::Value> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut skipped = Vec::new();
        for page in 0.. {
            if page == MAX_LIST_PAGES {
                skipped.push(format!("the list went on past {MAX_LIST_PAGES} pages; the rest was not read"));
                break;
            }
            let params = cursor.take().map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            // Any result shape is taken as JSON (a page with a malformed tool is rmcp's
            // `CustomResult`), so the good entries of a page survive its bad one.
            let request = ClientRequest::ListToolsRequest(ListToolsRequest {
                method: Default::default(),
                params,
                extensions: Default::default(),
            });
            let result = match tokio::time::timeout(self.options.list_timeout, peer.send_request(request)).await {
                Ok(Ok(result)) => serde_json::to_value(&result).unwrap_or_default(),
                Ok(Err(e)) => {
                    self.fail(&format!("tools/list failed: {}", plain(&e.to_string())));
                    return false;
                }
                Err(_) => {
                    self.fail("tools/list did not answer in time");
                    return false;
                }
            };
            if let Some(tools) = result.get("tools").and_then(serde_json::Value::as_array) {
                values.extend(tools.iter().cloned());
            }
            if values.len() > MAX_TOOLS {
                skipped.push(format!("more than {MAX_TOOLS} tools; the rest were left out"));
                values.truncate(MAX_TOOLS);
                break;
            }
            match result.get("nextCursor").and_then(serde_json::Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_owned()),
                _ => break,
            }
        }
        let (listed, mut left_out) = convert::tools(&self.name, &values);
        let listed = cap_catalogue(listed, &mut left_out);
        left_out.append(&mut skipped);
        for reason in &left_out {
            tracing::warn!(server = %self.name, "tool skipped: {reason}");
        }
        {
            let mut state = self.lock();
            state.listed = listed;
            state.skipped = left_out;
        }
        self.offer();
        true
    }

    /// Offers the listed tools whose definitions are approved; holds back the rest.
    pub(super) fn offer(&self) {
        let listed = self.lock().listed.clone();
        // Approving a server approves its tools as it first lists them. What is held back is a
        // tool whose definition changed after it was approved (a description rewritten to steer
        // the model, a schema that now asks for more) or that the server added later (a new
        // tool is a new definition no one has seen): the person looks at it first.
        let recorded = self.approvals.approved_tools(&self.name).and_then(|approved| {
            let before = self.approvals.tools_approved_before(&self.name)?;
            Ok((approved, before))
        });
        let (mut approved, approved_before) = match recorded {
            Ok(recorded) => recorded,
            Err(e) => {
                // Without the approvals nothing can be told apart from a changed tool.
                self.fail(&format!("the approvals of its tools could not be read: {e}"));
                return;
            }
        };
        if !approved_before {
            for l in &listed {
                tracing::info!(server = %self.name, tool = %l.remote, "tool approved with the server");
                approved.insert(l.remote.clone(), l.fingerprint.clone());
            }
            if let Err(e) = self.approvals.record_tools(&self.name, &approved) {
                tracing::warn!(server = %self.name, "approvals not saved: {e}");
            }
        }
        let prompt = self.lock().prompt.clone();
        let mut offered: Vec<Arc<dyn Tool>> = Vec::new();
        let mut held = Vec::new();
        for l in &listed {
            let why = match approved.get(&l.remote) {
                Some(fp) if *fp == l.fingerprint => {
                    let mut def = l.def.clone();
                    def.prompt.clone_from(&prompt);
                    def.timeout = self.config.timeout.map(Duration::from_secs);
                    offered.push(Arc::new(McpTool {
                        def,
                        remote: l.remote.clone(),
                        server: self.weak.clone(),
                        closed_read_only: convert::closed_read_only(l.annotations.as_ref()),
                    }));
                    continue;
                }
                Some(_) => "its definition changed since you approved it",
                None => "the server added it after you approved its tools",
            };
            held.push(HeldTool {
                name: l.def.name.clone(),
                why: why.to_owned(),
                description: l.def.description.clone(),
                fingerprint: l.fingerprint.clone(),
                findings: switchboard_core::lint::check(&l.def, &|_| false),
            });
        }
        for h in &held {
            tracing::warn!(server = %self.name, tool = %h.name, "held back until approved: {}", h.why);
        }
        {
            let mut state = self.lock();
            state.offered = offered;
            state.held = held;
            state.status = Some(SourceStatus::Ready);
        }
        self.changed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn listed(name: &str, padding: usize) -> Value {
        json!({"name": name, "description": "d", "inputSchema": {"type": "object", "description": "x".repeat(padding)}})
    }

    #[test]
    fn a_catalogue_is_capped_per_tool_and_in_total_with_reasons() {
        let mut values = vec![listed("huge", MAX_TOOL_DEFINITION_BYTES)];
        let each = 30 * 1024;
        values.extend((0..100).map(|i| listed(&format!("t{i}"), each)));
        let (tools, mut skipped) = convert::tools("s", &values);
        let kept = cap_catalogue(tools, &mut skipped);
        assert!(kept.iter().all(|l| l.remote != "huge"));
        assert!(skipped[0].starts_with("'huge': its definition is") && skipped[0].ends_with("left out"), "{skipped:?}");
        let total: usize = kept.iter().map(|l| definition_bytes(&l.def)).sum();
        assert!(total <= MAX_CATALOGUE_BYTES && kept.len() == MAX_CATALOGUE_BYTES / (each + 100), "{}", kept.len());
        assert_eq!(kept[0].remote, "t0", "list order");
        assert!(skipped[1].contains("tools past 2 MiB of tool definitions were left out"), "{skipped:?}");
    }
}
