//! The durable consumer of a turn's events (DESIGN.md §5): killing the app mid-answer loses at
//! most the last second of text and no tool call or result.
//!
//! Text is buffered and written as a whole (content and reasoning) at checkpoints: at every tool
//! boundary, when a delta arrives more than a second after the last checkpoint, on `tick`, and at
//! `done`. Calls and results are written the moment they happen. What a sub-agent does inside a
//! call (its nested events) is kept per call, runs of text merged, and written at the same
//! checkpoints and with the call's result, up to [`NESTED_MAX_BYTES`].
//!
//! Each request's `usage` event, the answer's own or a sub-agent's (nested at any depth), is
//! written at once as a row of `usage_requests` (see `store::usage`), with the profile and model
//! of its run (from that run's `started`) and the tool calls it decided (the run's calls since
//! its previous request): a turn that fails or is stopped keeps every request it made.
//!
//! [`Store::recorder`] is defined here, next to what it returns: the recorder builds on the
//! store, and the store never imports its recorder.

use crate::error::{Error, Result};
use crate::model::{MessageStatus, NestedEvent, StoredNotice};
use crate::store::{Store, now_millis};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use switchboard_core::{
    ChatEvent, ErrorKind, EventSink, FinishReason, NoticeKind, ProviderState, ToolSource, ToolStatus, Usage,
};

impl Store {
    /// A recorder that writes one turn's events into the assistant message `message_id` (the one
    /// [`Store::begin_turn`] just created, whose text it starts from empty).
    pub fn recorder(&self, message_id: &str) -> Recorder {
        Recorder::new(self.clone(), message_id.to_owned())
    }
}

/// How long buffered text may stay unwritten while deltas keep arriving.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(1);

/// At most this much of one call's nested log is kept (its text counted); what comes after is
/// left out, and the call's result still is written.
pub const NESTED_MAX_BYTES: usize = 1 << 20;

/// A call's nested events so far.
#[derive(Default)]
struct NestedLog {
    events: Vec<NestedEvent>,
    bytes: usize,
    dirty: bool,
}

impl NestedLog {
    fn push(&mut self, instance: String, event: ChatEvent) {
        let size = match &event {
            ChatEvent::TextDelta { text } | ChatEvent::ReasoningDelta { text } => text.len(),
            _ => 96,
        };
        if self.bytes + size > NESTED_MAX_BYTES {
            return;
        }
        self.bytes += size;
        self.dirty = true;
        if let Some(last) = self.events.last_mut()
            && last.instance == instance
            && merge(&mut last.event, &event)
        {
            return;
        }
        self.events.push(NestedEvent { instance, event });
    }
}

/// Appends `next` to `into` when both are text of the same kind (at any depth of nesting).
fn merge(into: &mut ChatEvent, next: &ChatEvent) -> bool {
    match (into, next) {
        (ChatEvent::TextDelta { text }, ChatEvent::TextDelta { text: more })
        | (ChatEvent::ReasoningDelta { text }, ChatEvent::ReasoningDelta { text: more }) => {
            text.push_str(more);
            true
        }
        (
            ChatEvent::ToolProgress { id, instance, text: None, event: Some(inner) },
            ChatEvent::ToolProgress { id: next_id, instance: next_instance, text: None, event: Some(next_inner) },
        ) if id == next_id && instance == next_instance => merge(inner, next_inner),
        _ => false,
    }
}

/// Writes one turn's [`ChatEvent`]s into its assistant message. Create it with
/// [`Store::recorder`] and give it the same events the UI gets, `tick` included.
///
/// A write failure never panics and never stops the turn: it is logged, the first one is kept for
/// [`Recorder::take_error`], and later events are still written.
pub struct Recorder {
    store: Store,
    message_id: String,
    interval: Duration,
    state: Mutex<State>,
}

struct State {
    content: String,
    reasoning: String,
    /// Text or reasoning changed since the last checkpoint.
    dirty: bool,
    last_checkpoint: Instant,
    /// The whole list is rewritten on each notice; there are a handful per turn at most.
    notices: Vec<StoredNotice>,
    /// Each iteration's provider state; rewritten whole, like the notices.
    provider_states: Vec<(u32, ProviderState)>,
    nested: HashMap<String, NestedLog>,
    /// Per run ("" the answer's own; "call/Instance[i]" a sub-agent's), who answers it and the
    /// calls decided since its last request.
    runs: HashMap<String, Run>,
    /// The count of the request in flight, until its usage comes.
    context: Option<crate::store::StoredContext>,
    error: Option<Error>,
}

/// A run of the turn, for its requests' rows.
#[derive(Default)]
struct Run {
    profile: String,
    model: String,
    decided: Vec<String>,
}

/// One request, as the recorder writes it.
struct RequestRow<'a> {
    run_path: &'a str,
    request: u32,
    usage: &'a Usage,
    cost_usd: Option<f64>,
    estimated: bool,
}

/// Where a nested event happened: the answer's call it runs under, the run's path, the
/// innermost instance, and the event itself.
fn nested_leaf<'a>(id: &'a str, instance: &'a str, event: &'a ChatEvent) -> (String, &'a str, &'a ChatEvent) {
    let mut path = format!("{id}/{instance}");
    let mut instance = instance;
    let mut event = event;
    while let ChatEvent::ToolProgress { id, instance: Some(inner), text: None, event: Some(next) } = event {
        path.push('/');
        path.push_str(id);
        path.push('/');
        path.push_str(inner);
        instance = inner;
        event = next;
    }
    (path, instance, event)
}

impl Recorder {
    pub(crate) fn new(store: Store, message_id: String) -> Self {
        Recorder {
            store,
            message_id,
            interval: CHECKPOINT_INTERVAL,
            state: Mutex::new(State {
                content: String::new(),
                reasoning: String::new(),
                dirty: false,
                last_checkpoint: Instant::now(),
                notices: Vec::new(),
                provider_states: Vec::new(),
                nested: HashMap::new(),
                runs: HashMap::new(),
                context: None,
                error: None,
            }),
        }
    }

    /// Replaces the one-second checkpoint interval (tests; a slower disk).
    pub fn with_checkpoint_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// The assistant message this recorder writes.
    pub fn message_id(&self) -> &str {
        &self.message_id
    }

    /// Writes buffered text now, if there is any.
    pub fn flush(&self) {
        let mut st = self.state();
        self.checkpoint(&mut st);
    }

    /// The first write failure since the last call, so the shell can tell the person their
    /// conversation is not being saved.
    pub fn take_error(&self) -> Option<Error> {
        self.state().error.take()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Poisoning only means a panic elsewhere mid-event; the buffers are still the best record.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn on_delta(&self, st: &mut State) {
        st.dirty = true;
        if st.last_checkpoint.elapsed() > self.interval {
            self.checkpoint(st);
        }
    }

    fn checkpoint(&self, st: &mut State) {
        self.write_nested(st, None);
        if !st.dirty {
            return;
        }
        // Whether or not it works: a failing disk must not turn every delta into a write attempt.
        st.last_checkpoint = Instant::now();
        let result = self.update_message(
            "UPDATE messages SET content = ?2, reasoning = ?3, updated_at = ?4 WHERE id = ?1",
            (&self.message_id, &st.content, &st.reasoning, now_millis()),
        );
        match result {
            Ok(()) => st.dirty = false,
            Err(e) => self.fail(st, "text checkpoint", e),
        }
    }

    /// Runs an UPDATE of this recorder's message row; a missing row is an error, not a no-op.
    /// Writes the nested logs that changed (of `only` that call, when given).
    fn write_nested(&self, st: &mut State, only: Option<&str>) {
        let mut failed = None;
        for (call_id, log) in st.nested.iter_mut().filter(|(id, log)| log.dirty && only.is_none_or(|o| o == *id)) {
            let result = serde_json::to_string(&log.events)
                .map_err(|source| Error::Json { what: "nested events".to_owned(), source })
                .and_then(|json| {
                    self.store
                        .conn()
                        .prepare_cached("UPDATE tool_calls SET nested = ?3 WHERE message_id = ?1 AND call_id = ?2")?
                        .execute((&self.message_id, call_id, json))?;
                    Ok(())
                });
            match result {
                Ok(()) => log.dirty = false,
                Err(e) => failed = Some(e),
            }
        }
        if let Some(e) = failed {
            self.fail(st, "nested events", e);
        }
    }

    fn update_message<P: rusqlite::Params>(&self, sql: &str, params: P) -> Result<()> {
        let n = self.store.conn().prepare_cached(sql)?.execute(params)?;
        if n == 0 {
            return Err(Error::not_found("message", &self.message_id));
        }
        Ok(())
    }

    fn fail(&self, st: &mut State, what: &str, e: Error) {
        tracing::error!(message_id = %self.message_id, "could not record the {what}: {e}");
        if st.error.is_none() {
            st.error = Some(e);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn tool_call(
        &self,
        call_id: &str,
        name: &str,
        source: &ToolSource,
        arguments: &str,
        text_offset: usize,
        iteration: u32,
        index: u32,
    ) -> Result<()> {
        let source =
            serde_json::to_string(source).map_err(|source| Error::Json { what: "tool source".to_owned(), source })?;
        let n = self
            .store
            .conn()
            .prepare_cached(
                "INSERT INTO tool_calls (id, message_id, call_id, iteration, idx, name, source, arguments,
                                         text_offset, status, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'pending', ?10)
                 ON CONFLICT (message_id, call_id) DO NOTHING",
            )?
            .execute((
                crate::store::new_id(),
                &self.message_id,
                call_id,
                iteration,
                index,
                name,
                source,
                arguments,
                text_offset,
                now_millis(),
            ))?;
        if n == 0 {
            tracing::warn!(message_id = %self.message_id, call_id, "tool call id repeated in one turn; keeping the first");
        }
        Ok(())
    }

    fn tool_started(&self, call_id: &str) -> Result<()> {
        self.store
            .conn()
            .prepare_cached(
                "UPDATE tool_calls SET status = 'running' WHERE message_id = ?1 AND call_id = ?2 AND status = 'pending'",
            )?
            .execute((&self.message_id, call_id))?;
        Ok(())
    }

    fn tool_result(
        &self,
        call_id: &str,
        status: ToolStatus,
        output: &str,
        duration_ms: u64,
        images: Option<&[switchboard_core::ToolImage]>,
    ) -> Result<()> {
        let images = images.filter(|i| !i.is_empty()).and_then(|i| serde_json::to_string(i).ok());
        let mut conn = self.store.conn();
        let tx = conn.transaction()?;
        // Keyed through the call row; a second result for the same call replaces the first rather
        // than failing, so a misbehaving caller cannot lose the latest result.
        let n = tx
            .prepare_cached(
                "INSERT INTO tool_results (tool_call_id, status, output, duration_ms, created_at, images)
                 SELECT id, ?3, ?4, ?5, ?6, ?7 FROM tool_calls WHERE message_id = ?1 AND call_id = ?2
                 ON CONFLICT (tool_call_id) DO UPDATE
                 SET status = excluded.status, output = excluded.output, duration_ms = excluded.duration_ms,
                     images = excluded.images",
            )?
            .execute((&self.message_id, call_id, status.as_str(), output, duration_ms, now_millis(), images))?;
        if n == 0 {
            return Err(Error::not_found("tool call", call_id));
        }
        tx.prepare_cached("UPDATE tool_calls SET status = ?3 WHERE message_id = ?1 AND call_id = ?2")?.execute((
            &self.message_id,
            call_id,
            status.as_str(),
        ))?;
        tx.commit()?;
        Ok(())
    }

    fn usage(&self, total: &Usage) -> Result<()> {
        self.update_message(
            "UPDATE messages SET prompt_tokens = ?2, completion_tokens = ?3, reasoning_tokens = ?4,
                                 cached_tokens = ?5, updated_at = ?6, cache_write_tokens = ?7
             WHERE id = ?1",
            (
                &self.message_id,
                total.prompt_tokens,
                total.completion_tokens,
                total.reasoning_tokens,
                total.cached_tokens,
                now_millis(),
                total.cache_write_tokens,
            ),
        )
    }

    /// Writes one request's row; the run's decided calls go with it.
    fn request(&self, st: &mut State, row: RequestRow<'_>) -> Result<()> {
        let run = st.runs.remove(row.run_path).unwrap_or_default();
        let decided = serde_json::to_string(&run.decided)
            .map_err(|source| Error::Json { what: "decided calls".to_owned(), source })?;
        let (call_id, agent) = match row.run_path.split_once('/') {
            Some((call, _)) => {
                let innermost = row.run_path.rsplit('/').next().unwrap_or_default();
                (Some(call), Some(crate::store::agent_name(innermost)))
            }
            None => (None, None),
        };
        let u = row.usage;
        let n = self
            .store
            .conn()
            .prepare_cached(
                "INSERT INTO usage_requests (message_id, conversation_id, request, call_id, run_path, agent, decided,
                                             profile, api, model, prompt_tokens, completion_tokens,
                                             reasoning_tokens, cached_tokens, cache_write_tokens, cost_usd,
                                             estimated, created_at)
                 SELECT m.id, m.conversation_id, ?2, ?3, ?4, coalesce(?5, c.agent), ?6, ?7,
                        coalesce((SELECT kind FROM providers WHERE name = ?7), ''), ?8, ?9, ?10, ?11, ?12, ?13,
                        ?14, ?15, ?16
                 FROM messages m JOIN conversations c ON c.id = m.conversation_id WHERE m.id = ?1",
            )?
            .execute(rusqlite::params![
                &self.message_id,
                row.request,
                call_id,
                row.run_path,
                agent,
                decided,
                run.profile,
                run.model,
                u.prompt_tokens,
                u.completion_tokens,
                u.reasoning_tokens,
                u.cached_tokens,
                u.cache_write_tokens,
                row.cost_usd,
                row.estimated,
                now_millis(),
            ])?;
        // The run goes on: the next request of it decides its own calls.
        st.runs.insert(row.run_path.to_owned(), Run { decided: Vec::new(), ..run });
        if n == 0 {
            return Err(Error::not_found("message", &self.message_id));
        }
        Ok(())
    }

    /// Keeps what a sub-agent's event says about its run's requests.
    fn nested_usage(&self, st: &mut State, id: &str, instance: &str, event: &ChatEvent) {
        let (path, _, leaf) = nested_leaf(id, instance, event);
        let result = match leaf {
            ChatEvent::Started { provider, model, .. } => {
                let run = st.runs.entry(path).or_default();
                run.profile.clone_from(provider);
                run.model.clone_from(model);
                return;
            }
            ChatEvent::ToolCall { id, .. } => {
                st.runs.entry(path).or_default().decided.push(id.clone());
                return;
            }
            ChatEvent::Usage { usage, request, cost_usd, estimated, agent_call: None, .. } => {
                let row = RequestRow {
                    run_path: &path,
                    request: *request,
                    usage,
                    cost_usd: *cost_usd,
                    estimated: *estimated,
                };
                self.request(st, row)
            }
            _ => return,
        };
        if let Err(e) = result {
            self.fail(st, "sub-agent request usage", e);
        }
    }

    fn notice(&self, st: &mut State, kind: NoticeKind, message: String) -> Result<()> {
        st.notices.push(StoredNotice { kind, message });
        let json =
            serde_json::to_string(&st.notices).map_err(|source| Error::Json { what: "notices".to_owned(), source })?;
        self.update_message(
            "UPDATE messages SET notices = ?2, updated_at = ?3 WHERE id = ?1",
            (&self.message_id, json, now_millis()),
        )
    }

    fn provider_state(&self, st: &mut State, iteration: u32, state: ProviderState) -> Result<()> {
        st.provider_states.push((iteration, state));
        let json = serde_json::to_string(&st.provider_states)
            .map_err(|source| Error::Json { what: "provider state".to_owned(), source })?;
        self.update_message(
            "UPDATE messages SET provider_state = ?2, updated_at = ?3 WHERE id = ?1",
            (&self.message_id, json, now_millis()),
        )
    }

    fn error(&self, kind: ErrorKind, message: &str, detail: Option<&str>) -> Result<()> {
        self.update_message(
            "UPDATE messages SET error_kind = ?2, error_message = ?3, error_detail = ?5, updated_at = ?4 WHERE id = ?1",
            (&self.message_id, kind.as_str(), message, now_millis(), detail),
        )
    }

    fn done(&self, st: &mut State, reason: FinishReason, usage: &Usage, tool_calls_made: u32) -> Result<()> {
        st.last_checkpoint = Instant::now();
        let mut conn = self.store.conn();
        let tx = conn.transaction()?;
        let n = tx
            .prepare_cached(
                "UPDATE messages SET content = ?2, reasoning = ?3, status = ?4, finish_reason = ?5,
                                     prompt_tokens = ?6, completion_tokens = ?7, reasoning_tokens = ?8,
                                     cached_tokens = ?9, tool_calls_made = ?10, updated_at = ?11,
                                     cache_write_tokens = ?12
                 WHERE id = ?1",
            )?
            .execute((
                &self.message_id,
                &st.content,
                &st.reasoning,
                MessageStatus::from_finish(reason).as_str(),
                reason.as_str(),
                usage.prompt_tokens,
                usage.completion_tokens,
                usage.reasoning_tokens,
                usage.cached_tokens,
                tool_calls_made,
                now_millis(),
                usage.cache_write_tokens,
            ))?;
        if n == 0 {
            return Err(Error::not_found("message", &self.message_id));
        }
        // The engine answers every call; this only matters if a caller ends a turn without that,
        // and keeps such a card from spinning forever.
        tx.prepare_cached(
            "UPDATE tool_calls SET status = 'cancelled' WHERE message_id = ?1 AND status IN ('pending', 'running')",
        )?
        .execute([&self.message_id])?;
        tx.commit()?;
        st.dirty = false;
        Ok(())
    }
}

impl EventSink for Recorder {
    fn emit(&self, event: ChatEvent) {
        let mut st = self.state();
        let (what, result) = match event {
            ChatEvent::TextDelta { text } => {
                st.content.push_str(&text);
                self.on_delta(&mut st);
                return;
            }
            ChatEvent::ReasoningDelta { text } => {
                st.reasoning.push_str(&text);
                self.on_delta(&mut st);
                return;
            }
            ChatEvent::ToolCall { id, name, source, arguments, text_offset, iteration, index } => {
                // The text before the call must be durable before the call is: a reloaded card
                // must never point past the saved text.
                self.checkpoint(&mut st);
                st.runs.entry(String::new()).or_default().decided.push(id.clone());
                ("tool call", self.tool_call(&id, &name, &source, &arguments, text_offset, iteration, index))
            }
            ChatEvent::ToolStarted { id } => ("tool start", self.tool_started(&id)),
            ChatEvent::ToolResult { id, status, output, duration_ms, images } => {
                self.write_nested(&mut st, Some(&id));
                ("tool result", self.tool_result(&id, status, &output, duration_ms, images.as_deref()))
            }
            ChatEvent::Usage { usage, total, request, cost_usd, estimated, agent_call } => {
                if agent_call.is_none() {
                    let row = RequestRow { run_path: "", request, usage: &usage, cost_usd, estimated };
                    if let Err(e) = self.request(&mut st, row) {
                        self.fail(&mut st, "request usage", e);
                    }
                    // The provider's count of the request the last `context` event announced.
                    if let Some(c) = st.context.take()
                        && !estimated
                        && switchboard_core::machine::believable(usage.prompt_tokens, c.estimate)
                        && let Err(e) = self.store.put_reported_prompt(&self.message_id, usage.prompt_tokens)
                    {
                        self.fail(&mut st, "context count", e);
                    }
                }
                ("usage", self.usage(&total))
            }
            ChatEvent::Compacted {
                compaction,
                tokens_before,
                tokens_after,
                summariser,
                usage,
                summariser_fallback,
                reason,
            } => {
                // What it covers of this turn is durable before the row that covers it.
                self.checkpoint(&mut st);
                let new = crate::store::NewCompaction {
                    compaction: &compaction,
                    tokens_before,
                    tokens_after,
                    reason,
                    summariser: summariser.as_deref(),
                    usage: usage.as_ref(),
                    summariser_fallback: summariser_fallback.as_deref(),
                };
                ("compaction", self.store.record_compaction(&self.message_id, &new).map(drop))
            }
            ChatEvent::Context { used_tokens, window, breakdown, estimated, estimate } => {
                let c = crate::store::StoredContext {
                    message_id: self.message_id.clone(),
                    model: None,
                    used_tokens,
                    window,
                    breakdown,
                    estimated,
                    estimate,
                    reported_prompt: None,
                };
                let result = self.store.put_context(&c);
                st.context = Some(c);
                ("context count", result)
            }
            ChatEvent::Notice { kind, message } => ("notice", self.notice(&mut st, kind, message)),
            ChatEvent::ProviderState { iteration, state } => {
                ("provider state", self.provider_state(&mut st, iteration, state))
            }
            ChatEvent::Error { kind, message, detail, .. } => ("error", self.error(kind, &message, detail.as_deref())),
            ChatEvent::Done { finish_reason, usage, tool_calls_made } => {
                self.write_nested(&mut st, None);
                ("end of the turn", self.done(&mut st, finish_reason, &usage, tool_calls_made))
            }
            ChatEvent::ToolProgress { id, instance: Some(instance), text: None, event: Some(event) } => {
                self.nested_usage(&mut st, &id, &instance, &event);
                if !matches!(*event, ChatEvent::ProviderState { .. }) {
                    st.nested.entry(id).or_default().push(instance, *event);
                }
                return;
            }
            ChatEvent::Started { provider, model, .. } => {
                let run = st.runs.entry(String::new()).or_default();
                (run.profile, run.model) = (provider, model);
                return;
            }
            // Ids were written by begin_turn; progress lines and approvals are live-only UI state.
            ChatEvent::ToolProgress { .. }
            | ChatEvent::ApprovalRequested { .. }
            | ChatEvent::ApprovalResolved { .. }
            // A server's questions during a call are live-only too (a sampling run it caused
            // is stored as the call's nested run).
            | ChatEvent::ElicitationRequested { .. }
            | ChatEvent::ElicitationResolved { .. }
            | ChatEvent::SamplingRequested { .. }
            | ChatEvent::SamplingResolved { .. }
            // A pause and its answer are stored as the notices that go with them.
            | ChatEvent::BudgetPaused { .. }
            | ChatEvent::BudgetResolved { .. } => return,
        };
        if let Err(e) = result {
            self.fail(&mut st, what, e);
        }
    }

    fn tick(&self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_message_row_is_reported_not_panicked() {
        let store = Store::open_in_memory().unwrap();
        let rec = store.recorder("nope").with_checkpoint_interval(Duration::ZERO);
        rec.emit(ChatEvent::TextDelta { text: "hi".into() });
        rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
        let err = rec.take_error().expect("first error kept");
        assert!(matches!(err, Error::NotFound { what: "message", .. }), "{err}");
        assert!(rec.take_error().is_none(), "taken once");
    }
}
