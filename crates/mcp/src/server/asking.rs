//! What a server asks of the person while one of its tools runs: input ([`Asking::elicit`]), a
//! completion ([`Asking::sample`]) and the roots ([`Asking::roots_json`]), with the calls in
//! flight ([`Progress`]) a question is asked through. Per server: a rate limit for each kind of
//! question, a cap on questions waiting at once, and a note in the server's log for everything
//! refused (rate-limited itself), so a flood never reaches the person or the chat.
//!
//! Invariant: a question is only ever asked through the `ToolContext` of a call of this server
//! in one chat; outside a call, or when the service answers nothing (then nothing is declared),
//! it is refused and the log says why.

use crate::asks::{self, Bucket};
use rmcp::ErrorData as McpError;
use rmcp::model::ErrorCode;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use switchboard_core::ToolContext;
use switchboard_core::{ElicitationAction, ElicitationForm, ElicitationMode, ElicitationRequest, SamplingRequest};
use tokio_util::sync::CancellationToken;

/// Questions of one server that may wait for the person at once; more are refused.
pub const MAX_WAITING: usize = 2;
/// Requests for a completion: this many at once, then one a second.
pub const SAMPLING_BURST: u32 = 3;
/// Requests for input: this many at once, then one a second.
pub const ELICITATION_BURST: u32 = 3;

/// A tool call waiting for the server's answer.
#[derive(Clone)]
pub(super) struct Call {
    pub(super) ctx: ToolContext,
    /// The server's name of the tool.
    pub(super) tool: String,
    /// Order of starting: a later call has a larger number.
    seq: u64,
}

/// The calls in flight, by progress token: their progress goes to their card, and what the
/// server asks while one runs is asked through it.
#[derive(Clone, Default)]
pub(super) struct Progress {
    calls: Arc<Mutex<HashMap<String, Call>>>,
    next: Arc<AtomicU64>,
}

impl Progress {
    pub(super) fn key(token: &impl serde::Serialize) -> String {
        serde_json::to_string(token).unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Call>> {
        self.calls.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn insert(&self, key: String, ctx: ToolContext, tool: String) {
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(key, Call { ctx, tool, seq });
    }

    pub(super) fn remove(&self, key: &str) {
        self.lock().remove(key);
    }

    pub(super) fn get(&self, key: &str) -> Option<ToolContext> {
        self.lock().get(key).map(|c| c.ctx.clone())
    }

    /// The call a request from the server belongs to: stdio carries no link between them, so
    /// the latest call, and only when every call running is of one chat (a question is never
    /// shown in another chat than the call's). `Err` says why there is none.
    pub(super) fn current(&self) -> Result<Call, String> {
        let calls = self.lock();
        let latest = calls.values().max_by_key(|c| c.seq).cloned();
        let Some(latest) = latest else { return Err("no tool call of the server was running".into()) };
        if calls.values().any(|c| c.ctx.conversation_id != latest.ctx.conversation_id) {
            return Err("calls of several chats were running, so Switchboard could not tell which one asked".into());
        }
        Ok(latest)
    }
}

/// What a server may ask of the person, and the bounds on its asking.
pub(super) struct Asking {
    server: String,
    /// The service answers questions: elicitation, sampling and roots are declared. Otherwise
    /// nothing is, and a server that asks anyway is refused.
    pub(super) declared: bool,
    /// The folders the server may know of (`roots/list`).
    pub(super) roots: Mutex<Vec<PathBuf>>,
    /// The server's log (its stderr tail), where refusals are noted.
    log: Arc<Mutex<VecDeque<String>>>,
    limits: Mutex<Limits>,
    next: AtomicU64,
}

struct Limits {
    elicit: Bucket,
    sample: Bucket,
    waiting: usize,
    /// Notes allowed in the log: a flood of refusals writes a few lines, not thousands.
    notes: Bucket,
    dropped: u64,
}

/// Counts a question as waiting while it lives.
struct Waiting<'a>(&'a Asking);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut limits = self.0.lock();
        limits.waiting = limits.waiting.saturating_sub(1);
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Elicit,
    Sample,
}

fn refused(message: String) -> McpError {
    McpError::new(ErrorCode::INVALID_REQUEST, message, None)
}

impl Asking {
    pub(super) fn new(server: &str, declared: bool, log: Arc<Mutex<VecDeque<String>>>) -> Asking {
        Asking {
            server: server.to_owned(),
            declared,
            roots: Mutex::default(),
            log,
            limits: Mutex::new(Limits {
                elicit: Bucket::new(ELICITATION_BURST, Duration::from_secs(1)),
                sample: Bucket::new(SAMPLING_BURST, Duration::from_secs(1)),
                waiting: 0,
                notes: Bucket::new(5, Duration::from_secs(10)),
                dropped: 0,
            }),
            next: AtomicU64::new(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Limits> {
        self.limits.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes `text` to the server's log (Settings, `mcp logs`), a few lines per flood.
    pub(super) fn note(&self, text: &str) {
        tracing::info!(server = %self.server, "{text}");
        let dropped = {
            let mut limits = self.lock();
            if !limits.notes.take() {
                limits.dropped += 1;
                return;
            }
            std::mem::take(&mut limits.dropped)
        };
        let more = if dropped > 0 { format!(" ({dropped} more like it not shown)") } else { String::new() };
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        if log.len() >= super::stderr::STDERR_LINES {
            log.pop_front();
        }
        log.push_back(format!("[Switchboard] {text}{more}"));
    }

    /// Admits one question of `kind`: within its rate and the cap on waiting questions.
    fn admit(&self, kind: Kind) -> Result<Waiting<'_>, String> {
        let mut limits = self.lock();
        let (bucket, what) = match kind {
            Kind::Elicit => (&mut limits.elicit, "requests for input"),
            Kind::Sample => (&mut limits.sample, "requests for a completion"),
        };
        if !bucket.take() {
            return Err(format!("it sent {what} faster than one a second; refused"));
        }
        if limits.waiting >= MAX_WAITING {
            return Err(format!("{MAX_WAITING} of its questions were already waiting for the person; refused"));
        }
        limits.waiting += 1;
        Ok(Waiting(self))
    }

    /// Refuses what was not declared to the server, noting it in its log.
    pub(super) fn undeclared(&self, what: &str) -> McpError {
        self.note(&format!("it asked for {what}, which Switchboard did not declare to it; refused"));
        McpError::new(ErrorCode::METHOD_NOT_FOUND, format!("the client did not declare {what}"), None)
    }

    fn request_id(&self, call_id: &str) -> String {
        format!("{call_id}/ask-{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// The roots as `roots/list` answers them.
    pub(super) fn roots_json(&self) -> Value {
        let roots = self.roots.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let roots: Vec<Value> = roots
            .iter()
            .filter_map(|p| {
                let uri = url::Url::from_directory_path(p).ok()?;
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                Some(json!({"uri": uri.as_str().trim_end_matches('/'), "name": name}))
            })
            .collect();
        json!({ "roots": roots })
    }

    /// Answers `elicitation/create` (`params` as JSON; `order`: the form's wire order).
    pub(super) async fn elicit(
        &self,
        progress: &Progress,
        params: &Value,
        order: Option<&[String]>,
        asked: CancellationToken,
    ) -> Result<Value, McpError> {
        if !self.declared {
            return Err(self.undeclared("input (elicitation/create)"));
        }
        let call = match progress.current() {
            Ok(call) => call,
            Err(why) => {
                self.note(&format!("it asked for input, but {why}; declined"));
                return Ok(json!({"action": "decline"}));
            }
        };
        let _waiting = self.admit(Kind::Elicit).map_err(|why| {
            self.note(&why);
            refused(format!("Switchboard refused the request for input: {why}"))
        })?;
        let message = params.get("message").and_then(Value::as_str).unwrap_or_default();
        let url_mode = params.get("mode").and_then(Value::as_str) == Some("url");
        let (form, url, why) = if url_mode {
            let url = params.get("url").and_then(Value::as_str).unwrap_or_default();
            let why = asks::url_refusal(url);
            (ElicitationForm::default(), Some(url.chars().take(asks::MAX_URL).collect::<String>()), why)
        } else {
            match asks::form(params.get("requestedSchema").unwrap_or(&Value::Null), order) {
                Ok(form) => (form, None, None),
                Err(why) => (ElicitationForm::default(), None, Some(why)),
            }
        };
        if let Some(why) = &why {
            self.note(&format!("it asked for input Switchboard cannot show ({why}); declined"));
        }
        let request = ElicitationRequest {
            conversation_id: call.ctx.conversation_id.clone(),
            call_id: call.ctx.call_id.clone(),
            request_id: self.request_id(&call.ctx.call_id),
            server: self.server.clone(),
            tool: call.tool.clone(),
            message: message.chars().take(asks::MAX_TEXT).collect(),
            mode: if url_mode { ElicitationMode::Url } else { ElicitationMode::Form },
            form,
            url,
            refused: why.map(|w| format!("Declined without asking: {w}.")),
        };
        let ctx = linked(&call.ctx, &asked);
        let answer = ctx.ctx.elicit(request).await;
        Ok(match (answer.action, answer.content) {
            (ElicitationAction::Accept, Some(content)) => json!({"action": "accept", "content": content}),
            (action, _) => json!({"action": action.as_str()}),
        })
    }

    /// Answers `sampling/createMessage` (`params` as JSON).
    pub(super) async fn sample(
        &self,
        progress: &Progress,
        params: &Value,
        asked: CancellationToken,
    ) -> Result<Value, McpError> {
        if !self.declared {
            return Err(self.undeclared("a completion (sampling/createMessage)"));
        }
        let call = progress.current().map_err(|why| {
            self.note(&format!("it asked for a completion, but {why}; refused"));
            refused(format!("Switchboard runs completions for a server only during one of its tool calls: {why}"))
        })?;
        if !call.ctx.can_sample() {
            self.note("it asked for a completion where none can run (outside a chat); refused");
            return Err(refused("Switchboard cannot run a completion for this call".into()));
        }
        let _waiting = self.admit(Kind::Sample).map_err(|why| {
            self.note(&why);
            refused(format!("Switchboard refused the request for a completion: {why}"))
        })?;
        if params.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty()) {
            self.note("it asked for a completion with tools, which Switchboard does not offer; refused");
            return Err(McpError::invalid_params("Switchboard runs completions without tools", None));
        }
        let Some(max_tokens) = params.get("maxTokens").and_then(Value::as_u64) else {
            return Err(McpError::invalid_params("the request has no maxTokens", None));
        };
        let messages = asks::sampling_messages(params).map_err(|why| {
            self.note(&format!("it asked for a completion Switchboard cannot send ({why}); refused"));
            McpError::invalid_params(format!("Switchboard refused the request: {why}"), None)
        })?;
        let request = SamplingRequest {
            conversation_id: call.ctx.conversation_id.clone(),
            call_id: call.ctx.call_id.clone(),
            request_id: self.request_id(&call.ctx.call_id),
            server: self.server.clone(),
            tool: call.tool.clone(),
            messages,
            system_prompt: params.get("systemPrompt").and_then(Value::as_str).map(str::to_owned),
            max_tokens: u32::try_from(max_tokens).unwrap_or(u32::MAX),
            requested_max_tokens: None,
            model_preferences: asks::preferences(params),
            temperature: params.get("temperature").and_then(Value::as_f64).map(|t| t as f32),
        };
        let ctx = linked(&call.ctx, &asked);
        match ctx.ctx.sample(request).await {
            Ok(sampled) => Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": sampled.text},
                "model": sampled.model,
                "stopReason": if sampled.truncated { "maxTokens" } else { "endTurn" },
            })),
            // The code the specification gives a person's refusal.
            Err(why) => Err(McpError::new(ErrorCode(-1), why, None)),
        }
    }
}

/// The call's context, stopped also when the server cancels its question.
struct Linked {
    ctx: ToolContext,
    _stop: tokio_util::sync::DropGuard,
}

fn linked(ctx: &ToolContext, asked: &CancellationToken) -> Linked {
    let mut ctx = ctx.clone();
    let child = ctx.cancel.child_token();
    ctx.cancel = child.clone();
    let (asked, watch) = (asked.clone(), child.clone());
    tokio::spawn(async move {
        tokio::select! {
            () = asked.cancelled() => watch.cancel(),
            () = watch.cancelled() => {}
        }
    });
    Linked { ctx, _stop: child.drop_guard() }
}
