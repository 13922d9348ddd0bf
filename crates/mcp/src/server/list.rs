//! A server's tools: every page of `tools/list` read (bounded by [`MAX_LIST_PAGES`] and
//! [`MAX_TOOLS`]), then the approved definitions offered and the changed ones held back. A tool
//! first seen is approved as it is; one whose definition changed since waits for the person.

use super::call::McpTool;
use super::connect::plain;
use super::detail::HeldTool;
use super::shared::Shared;
use crate::convert::{self, Listed};
use rmcp::model::PaginatedRequestParams;
use rmcp::service::{Peer, RoleClient};
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::{SourceStatus, Tool};

/// The most `tools/list` pages read (a server that repeats its cursor ends here).
pub const MAX_LIST_PAGES: usize = 50;

/// The most tools taken from one server.
pub const MAX_TOOLS: usize = 500;

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
            let result = match tokio::time::timeout(self.options.list_timeout, peer.list_tools(params)).await {
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
        // Approving a server approves its tools as it lists them; a tool it adds later is
        // approved as first seen. What is held back is a tool whose definition changed after it
        // was approved (a description rewritten to steer the model, a schema that now asks for
        // more): the person looks at the change first.
        let mut approved = match self.approvals.approved_tools(&self.name) {
            Ok(approved) => approved,
            Err(e) => {
                // Without the approvals nothing can be told apart from a changed tool.
                self.fail(&format!("the approvals of its tools could not be read: {e}"));
                return;
            }
        };
        let new: Vec<&Listed> = listed.iter().filter(|l| !approved.contains_key(&l.remote)).collect();
        if !new.is_empty() {
            for l in &new {
                tracing::info!(server = %self.name, tool = %l.remote, "tool approved as first seen");
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
            match approved.get(&l.remote) {
                Some(fp) if *fp == l.fingerprint => {
                    let mut def = l.def.clone();
                    def.prompt.clone_from(&prompt);
                    def.timeout = self.config.timeout.map(Duration::from_secs);
                    offered.push(Arc::new(McpTool { def, remote: l.remote.clone(), server: self.weak.clone() }));
                }
                _ => held.push(HeldTool {
                    name: l.def.name.clone(),
                    why: "its definition changed since you approved it".to_owned(),
                    description: l.def.description.clone(),
                    fingerprint: l.fingerprint.clone(),
                }),
            }
        }
        for h in &held {
            tracing::warn!(server = %self.name, tool = %h.name, "held back until approved again: {}", h.why);
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
