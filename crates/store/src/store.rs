//! The [`Store`]: one SQLite connection shared by the app, and every query but the recorder's.

use crate::error::{Error, Result};
use crate::model::{
    ConversationSummary, MessagePage, MessageStatus, ProfileOptions, ProviderProfile, Role, StoredError, StoredMessage,
    StoredNotice, StoredToolCall, StoredToolResult, TakenTurn, ToolCallStatus, TurnRows,
};
use crate::recorder::Recorder;
use crate::schema;
use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use switchboard_core::history::{StoredCall, assistant_messages};
use switchboard_core::{Message, ToolSource, Usage};

/// Switchboard's database. Cheap to clone: clones share one connection.
///
/// Methods are synchronous and hold the connection for the length of one statement or
/// transaction; call them from a blocking-friendly context when a turn is streaming.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    conn: Mutex<Connection>,
    path: Option<PathBuf>,
    recovered: usize,
    /// Held (shared) for the store's lifetime so another process opening the same database can
    /// tell a live writer's `streaming` rows from a dead one's. Released when the last clone drops.
    _lock: Option<File>,
}

impl Store {
    /// Opens (creating if needed, with its parent folders) the database at `path`, migrates it,
    /// and turns messages a dead process left `streaming` into `interrupted`.
    ///
    /// A file that is damaged, not a database, another application's database or from a newer
    /// Switchboard is refused with [`Error::Corrupt`] or [`Error::NewerSchema`] and left unchanged.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| Error::Io { path: parent.to_owned(), source })?;
        }
        let mut conn = Connection::open(path).map_err(|e| schema::open_error(path, e))?;
        // Before the first read: a writer in another process must make us wait, not fail the check.
        conn.busy_timeout(std::time::Duration::from_millis(5000)).map_err(|e| schema::open_error(path, e))?;
        schema::check_file(&conn, path)?;
        schema::configure(&conn).map_err(|e| schema::open_error(path, e))?;
        schema::migrate(&mut conn).map_err(|e| schema::open_error(path, e))?;
        let lock = ProcessLock::acquire(path);
        let recovered = if lock.sole {
            schema::recover_streaming(&mut conn, now_millis()).map_err(|e| schema::open_error(path, e))?
        } else {
            tracing::info!(path = %path.display(), "database is open in another process; leaving its streaming messages alone");
            0
        };
        Ok(Self::from_parts(conn, Some(path.to_owned()), recovered, lock.into_shared()))
    }

    /// A fresh database in memory (tests, `--ephemeral` runs).
    pub fn open_in_memory() -> Result<Store> {
        let memory = Path::new(":memory:");
        let mut conn = Connection::open_in_memory().map_err(|e| schema::open_error(memory, e))?;
        schema::configure(&conn).map_err(|e| schema::open_error(memory, e))?;
        schema::migrate(&mut conn).map_err(|e| schema::open_error(memory, e))?;
        Ok(Self::from_parts(conn, None, 0, None))
    }

    fn from_parts(conn: Connection, path: Option<PathBuf>, recovered: usize, lock: Option<File>) -> Store {
        if recovered > 0 {
            tracing::warn!(count = recovered, "marked messages left streaming by an earlier run as interrupted");
        }
        Store { inner: Arc::new(Inner { conn: Mutex::new(conn), path, recovered, _lock: lock }) }
    }

    /// The database file, or `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    /// How many `streaming` messages opening turned into `interrupted` (0 when another process
    /// had the database open, since its turns may still be running).
    pub fn recovered_on_open(&self) -> usize {
        self.inner.recovered
    }

    /// Rows changed through this store since it opened. For diagnostics and for tests that prove
    /// streaming does not write per delta.
    pub fn total_changes(&self) -> u64 {
        self.conn().total_changes()
    }

    /// A recorder that writes one turn's events into the assistant message `message_id` (the one
    /// [`Store::begin_turn`] just created, whose text it starts from empty).
    pub fn recorder(&self, message_id: &str) -> Recorder {
        Recorder::new(self.clone(), message_id.to_owned())
    }

    /// The connection. A panic while it was held leaves SQLite consistent (an open transaction
    /// rolls back on drop), so a poisoned lock is safe to reuse.
    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.inner.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    // ----- turns -------------------------------------------------------------------------------

    /// Starts a turn: creates the conversation when `conversation_id` is `None` (titled after the
    /// first line of `user_text`), stores the person's message and an empty `streaming` assistant
    /// message, and marks the conversation updated — all in one transaction.
    pub fn begin_turn(
        &self,
        conversation_id: Option<&str>,
        user_text: &str,
        provider: &str,
        model: &str,
    ) -> Result<TurnRows> {
        self.begin_turn_with(conversation_id, user_text, provider, model, None)
    }

    /// [`Store::begin_turn`], also keeping `turn_options` (opaque JSON: the choices the question
    /// was asked with) on the person's message, where [`Store::take_last_turn`] finds them.
    pub fn begin_turn_with(
        &self,
        conversation_id: Option<&str>,
        user_text: &str,
        provider: &str,
        model: &str,
        turn_options: Option<&str>,
    ) -> Result<TurnRows> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = now_millis();
        let conversation_id = match conversation_id {
            Some(id) => {
                let n = tx.execute("UPDATE conversations SET updated_at = ?2 WHERE id = ?1", (id, now))?;
                if n == 0 {
                    return Err(Error::not_found("conversation", id));
                }
                id.to_owned()
            }
            None => {
                let id = new_id();
                tx.execute(
                    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
                    (&id, title_from(user_text), now),
                )?;
                id
            }
        };
        let last_seq: i64 = tx.query_row(
            "SELECT COALESCE(MAX(seq), 0) FROM messages WHERE conversation_id = ?1",
            [&conversation_id],
            |r| r.get(0),
        )?;
        let user_message_id = new_id();
        tx.execute(
            "INSERT INTO messages (id, conversation_id, seq, role, content, status, turn_options, created_at, updated_at)
             VALUES (?1, ?2, ?3, 'user', ?4, 'complete', ?5, ?6, ?6)",
            (&user_message_id, &conversation_id, last_seq + 1, user_text, turn_options, now),
        )?;
        let message_id = new_id();
        tx.execute(
            "INSERT INTO messages (id, conversation_id, seq, role, status, provider, model, created_at, updated_at)
             VALUES (?1, ?2, ?3, 'assistant', 'streaming', ?4, ?5, ?6, ?6)",
            (&message_id, &conversation_id, last_seq + 2, provider, model, now),
        )?;
        tx.commit()?;
        Ok(TurnRows { conversation_id, user_message_id, message_id })
    }

    /// The conversation's last question as [`Store::take_last_turn`] would take it, without
    /// removing anything: a caller checks it can ask again before it takes it.
    pub fn last_turn(&self, conversation_id: &str) -> Result<TakenTurn> {
        let conn = self.conn();
        Ok(last_turn_in(&conn, conversation_id)?.1)
    }

    /// Removes the conversation's last question and everything after it (its answer), returning
    /// what is needed to ask it again ("regenerate"): its text, the choices it was asked with,
    /// and the provider and model that answered. A turn still streaming is refused: stop it
    /// first.
    pub fn take_last_turn(&self, conversation_id: &str) -> Result<TakenTurn> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let (seq, taken) = last_turn_in(&tx, conversation_id)?;
        tx.execute("DELETE FROM messages WHERE conversation_id = ?1 AND seq >= ?2", (conversation_id, seq))?;
        tx.commit()?;
        Ok(taken)
    }

    /// The canonical history to send a provider: the person's messages, and each finished
    /// assistant message split back into its iterations (text, calls, results) exactly as the
    /// live turn sent them. The turn in progress (`streaming`) and assistant messages with neither
    /// text nor calls are left out, so right after [`Store::begin_turn`] it ends with the new
    /// user message.
    pub fn history(&self, conversation_id: &str) -> Result<Vec<Message>> {
        let mut out = Vec::new();
        for m in self.messages(conversation_id)? {
            match m.role {
                Role::User => out.push(Message::User { text: m.content }),
                Role::Assistant => {
                    if m.status == MessageStatus::Streaming || (m.content.is_empty() && m.tool_calls.is_empty()) {
                        continue;
                    }
                    let calls: Vec<StoredCall> = m
                        .tool_calls
                        .into_iter()
                        .map(|c| StoredCall {
                            images: c.result.as_ref().map(|r| r.images.clone()).unwrap_or_default(),
                            id: c.call_id,
                            name: c.name,
                            arguments: c.arguments,
                            text_offset: c.text_offset,
                            iteration: c.iteration,
                            result: c.result.map(|r| (r.status, r.output)),
                        })
                        .collect();
                    out.extend(assistant_messages(&m.content, &calls, &m.provider_states));
                }
            }
        }
        Ok(out)
    }

    /// Every message of a conversation in order, with its tool calls and results: enough to redraw
    /// it exactly as it looked live.
    pub fn messages(&self, conversation_id: &str) -> Result<Vec<StoredMessage>> {
        Ok(self.messages_page(conversation_id, None, usize::MAX)?.messages)
    }

    /// The last `limit` (at least one) messages of a conversation that come before the message
    /// `before` (or before its end when `None`), oldest first and drawn as [`Store::messages`]
    /// draws them, with how many come earlier still. Opening a long conversation reads its last
    /// page; scrolling up reads the pages before it.
    pub fn messages_page(&self, conversation_id: &str, before: Option<&str>, limit: usize) -> Result<MessagePage> {
        let conn = self.conn();
        // One read transaction: the page, its calls and the count come from the same snapshot
        // even while another process is recording a turn.
        let tx = conn.unchecked_transaction()?;
        ensure_conversation(&tx, conversation_id)?;
        let end: i64 = match before {
            None => i64::MAX,
            Some(id) => tx
                .prepare_cached("SELECT seq FROM messages WHERE id = ?1 AND conversation_id = ?2")?
                .query_row([id, conversation_id], |r| r.get(0))
                .optional()?
                .ok_or_else(|| Error::not_found("message", id))?,
        };
        let limit = i64::try_from(limit.max(1)).unwrap_or(i64::MAX);
        let first: Option<i64> = tx
            .prepare_cached(
                "SELECT MIN(seq) FROM (SELECT seq FROM messages WHERE conversation_id = ?1 AND seq < ?2
                                       ORDER BY seq DESC LIMIT ?3)",
            )?
            .query_row(rusqlite::params![conversation_id, end, limit], |r| r.get(0))?;
        let Some(first) = first else {
            return Ok(MessagePage { messages: Vec::new(), earlier: 0 });
        };
        let earlier: i64 = tx
            .prepare_cached("SELECT COUNT(*) FROM messages WHERE conversation_id = ?1 AND seq < ?2")?
            .query_row(rusqlite::params![conversation_id, first], |r| r.get(0))?;
        let mut calls: HashMap<String, Vec<StoredToolCall>> = HashMap::new();
        {
            let mut stmt = tx.prepare_cached(
                "SELECT tc.message_id, tc.call_id, tc.name, tc.source, tc.arguments, tc.text_offset,
                        tc.iteration, tc.idx, tc.status, tr.status, tr.output, tr.duration_ms, tr.images,
                        tc.nested
                 FROM tool_calls tc
                 JOIN messages m ON m.id = tc.message_id
                 LEFT JOIN tool_results tr ON tr.tool_call_id = tc.id
                 WHERE m.conversation_id = ?1 AND m.seq >= ?2 AND m.seq < ?3
                 ORDER BY m.seq, tc.iteration, tc.idx",
            )?;
            let rows = stmt.query_map(rusqlite::params![conversation_id, first, end], |r| {
                Ok((r.get::<_, String>(0)?, tool_call_from_row(r)?))
            })?;
            for row in rows {
                let (message_id, call) = row?;
                calls.entry(message_id).or_default().push(call);
            }
        }
        let mut messages = Vec::new();
        {
            let mut stmt = tx.prepare_cached(
                "SELECT id, role, content, reasoning, status, provider, model, finish_reason,
                        prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, tool_calls_made,
                        error_kind, error_message, notices, provider_response_id, created_at, updated_at,
                        provider_state, cache_write_tokens, error_detail
                 FROM messages WHERE conversation_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq",
            )?;
            for row in stmt.query_map(rusqlite::params![conversation_id, first, end], message_from_row)? {
                let mut m = row?;
                m.tool_calls = calls.remove(&m.id).unwrap_or_default();
                messages.push(m);
            }
        }
        tx.commit()?;
        Ok(MessagePage { messages, earlier: u32::try_from(earlier).unwrap_or(u32::MAX) })
    }

    /// Stores the provider's id for a response (for APIs that continue from it).
    pub fn set_provider_response_id(&self, message_id: &str, response_id: &str) -> Result<()> {
        let n = self
            .conn()
            .execute("UPDATE messages SET provider_response_id = ?2 WHERE id = ?1", (message_id, response_id))?;
        if n == 0 {
            return Err(Error::not_found("message", message_id));
        }
        Ok(())
    }

    // ----- conversations -----------------------------------------------------------------------

    /// All conversations, most recently updated first.
    pub fn conversations(&self) -> Result<Vec<ConversationSummary>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached(&format!("{SUMMARY_SELECT} ORDER BY c.pinned DESC, c.updated_at DESC, c.id DESC"))?;
        let rows = stmt.query_map([], summary_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One conversation's summary.
    pub fn conversation(&self, id: &str) -> Result<ConversationSummary> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!("{SUMMARY_SELECT} WHERE c.id = ?1"))?;
        stmt.query_row([id], summary_from_row).optional()?.ok_or_else(|| Error::not_found("conversation", id))
    }

    /// Pins a conversation to the top of the list, or unpins it.
    pub fn set_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        let n = self.conn().execute("UPDATE conversations SET pinned = ?2 WHERE id = ?1", (id, pinned))?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// Archives a conversation (out of the main list), or brings it back. An archived one is
    /// never pinned.
    pub fn set_archived(&self, id: &str, archived: bool) -> Result<()> {
        let n = self.conn().execute(
            "UPDATE conversations SET archived = ?2, pinned = CASE WHEN ?2 THEN 0 ELSE pinned END WHERE id = ?1",
            (id, archived),
        )?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// A conversation's own instructions (its system prompt); `None` when it has none.
    pub fn instructions(&self, id: &str) -> Result<Option<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT instructions FROM conversations WHERE id = ?1")?;
        let found: Option<Option<String>> = stmt.query_row([id], |r| r.get(0)).optional()?;
        found.ok_or_else(|| Error::not_found("conversation", id))
    }

    /// Sets a conversation's own instructions; blank or `None` removes them.
    pub fn set_instructions(&self, id: &str, instructions: Option<&str>) -> Result<()> {
        let value = instructions.filter(|t| !t.trim().is_empty());
        let n = self.conn().execute("UPDATE conversations SET instructions = ?2 WHERE id = ?1", (id, value))?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// The agent a conversation runs, by name; `None` for a plain chat.
    pub fn agent(&self, id: &str) -> Result<Option<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare_cached("SELECT agent FROM conversations WHERE id = ?1")?;
        let found: Option<Option<String>> = stmt.query_row([id], |r| r.get(0)).optional()?;
        found.ok_or_else(|| Error::not_found("conversation", id))
    }

    /// Sets the agent a conversation runs (`None`: a plain chat).
    pub fn set_agent(&self, id: &str, agent: Option<&str>) -> Result<()> {
        let n = self.conn().execute("UPDATE conversations SET agent = ?2 WHERE id = ?1", (id, agent))?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// Renames a conversation. Does not change its place in the list.
    pub fn rename(&self, id: &str, title: &str) -> Result<()> {
        let n = self.conn().execute("UPDATE conversations SET title = ?2 WHERE id = ?1", (id, title))?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// Deletes a conversation with its messages, tool calls and results.
    pub fn delete(&self, id: &str) -> Result<()> {
        let n = self.conn().execute("DELETE FROM conversations WHERE id = ?1", [id])?;
        if n == 0 {
            return Err(Error::not_found("conversation", id));
        }
        Ok(())
    }

    /// Conversations whose title or any message contains `query` literally (`%` and `_` are not
    /// wildcards), most recently updated first. Case-insensitive for ASCII letters only: SQLite's
    /// LIKE does not fold other scripts.
    pub fn search(&self, query: &str) -> Result<Vec<ConversationSummary>> {
        let pattern = format!("%{}%", escape_like(query));
        let conn = self.conn();
        let mut stmt = conn.prepare_cached(&format!(
            "{SUMMARY_SELECT}
             WHERE c.title LIKE ?1 ESCAPE '\\'
                OR EXISTS (SELECT 1 FROM messages m
                           WHERE m.conversation_id = c.id AND m.content LIKE ?1 ESCAPE '\\')
             ORDER BY c.updated_at DESC, c.id DESC"
        ))?;
        let rows = stmt.query_map([pattern], summary_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    // ----- per-chat tool choices ---------------------------------------------------------------

    /// Replaces the tools switched off for this chat.
    pub fn set_disabled_tools(&self, conversation_id: &str, tools: &BTreeSet<String>) -> Result<()> {
        let json = to_json(tools, "disabled tools")?;
        let n = self
            .conn()
            .execute("UPDATE conversations SET disabled_tools = ?2 WHERE id = ?1", (conversation_id, json))?;
        if n == 0 {
            return Err(Error::not_found("conversation", conversation_id));
        }
        Ok(())
    }

    /// The tools switched off for this chat.
    pub fn disabled_tools(&self, conversation_id: &str) -> Result<BTreeSet<String>> {
        let conn = self.conn();
        let json = tool_list(&conn, conversation_id, "disabled_tools")?;
        from_json(&json, || format!("disabled tools of conversation '{conversation_id}'"))
    }

    /// Remembers that the person approved `tool` for the rest of this chat.
    pub fn approve_tool_for_chat(&self, conversation_id: &str, tool: &str) -> Result<()> {
        let mut conn = self.conn();
        // Read-modify-write: IMMEDIATE so another process cannot slip a write in between.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let json = tool_list(&tx, conversation_id, "approved_tools")?;
        let mut tools: BTreeSet<String> =
            from_json(&json, || format!("approved tools of conversation '{conversation_id}'"))?;
        if tools.insert(tool.to_owned()) {
            tx.execute(
                "UPDATE conversations SET approved_tools = ?2 WHERE id = ?1",
                (conversation_id, to_json(&tools, "approved tools")?),
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The tools approved for this chat (the shape `TurnOptions::approved_tools` takes).
    pub fn approved_tools(&self, conversation_id: &str) -> Result<HashSet<String>> {
        let conn = self.conn();
        let json = tool_list(&conn, conversation_id, "approved_tools")?;
        from_json(&json, || format!("approved tools of conversation '{conversation_id}'"))
    }

    // ----- settings ----------------------------------------------------------------------------

    /// A setting, or `None` if it was never set. [`Error::Json`] if it has another shape than `T`.
    pub fn setting<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let value: Option<String> = self
            .conn()
            .prepare_cached("SELECT value FROM settings WHERE key = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()?;
        value.map(|v| from_json(&v, || format!("setting '{key}'"))).transpose()
    }

    /// Sets a setting (stored as JSON).
    pub fn set_setting<T: Serialize + ?Sized>(&self, key: &str, value: &T) -> Result<()> {
        let json = to_json(value, &format!("setting '{key}'"))?;
        self.conn().prepare_cached(
            "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        )?
        .execute((key, json))?;
        Ok(())
    }

    /// Removes a setting; returns whether it existed.
    pub fn delete_setting(&self, key: &str) -> Result<bool> {
        Ok(self.conn().execute("DELETE FROM settings WHERE key = ?1", [key])? > 0)
    }

    // ----- provider profiles -------------------------------------------------------------------

    /// Creates or replaces the profile named `profile.name`.
    pub fn upsert_provider(&self, profile: &ProviderProfile) -> Result<()> {
        self.conn().execute(
            "INSERT INTO providers (name, kind, base_url, model, options, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, base_url = excluded.base_url, model = excluded.model,
                                              options = excluded.options",
            (&profile.name, &profile.kind, &profile.base_url, &profile.model, options_json(&profile.options), now_millis()),
        )?;
        Ok(())
    }

    /// All provider profiles, by name.
    pub fn providers(&self) -> Result<Vec<ProviderProfile>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT name, kind, base_url, model, options FROM providers ORDER BY name")?;
        let rows = stmt.query_map([], provider_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One provider profile, or `None`.
    pub fn provider(&self, name: &str) -> Result<Option<ProviderProfile>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT name, kind, base_url, model, options FROM providers WHERE name = ?1")?
            .query_row([name], provider_from_row)
            .optional()?)
    }

    /// Deletes a provider profile ([`Error::NotFound`] if there is none by that name).
    pub fn delete_provider(&self, name: &str) -> Result<()> {
        let n = self.conn().execute("DELETE FROM providers WHERE name = ?1", [name])?;
        if n == 0 {
            return Err(Error::not_found("provider", name));
        }
        Ok(())
    }
}

/// Advisory lock on `<db>.lock`: exclusive while deciding whether we are the only process with
/// the database open (only then are `streaming` rows provably orphaned), shared afterwards.
struct ProcessLock {
    file: Option<File>,
    sole: bool,
}

impl ProcessLock {
    fn acquire(db: &Path) -> Self {
        let mut name = db.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        let file = match File::options().read(true).write(true).create(true).truncate(false).open(&path) {
            Ok(f) => f,
            Err(e) => {
                // Without a lock we cannot tell; recovering is right in the common single-process case.
                tracing::warn!(path = %path.display(), "cannot create lock file ({e}); assuming no other process uses the database");
                return ProcessLock { file: None, sole: true };
            }
        };
        match file.try_lock() {
            Ok(()) => ProcessLock { file: Some(file), sole: true },
            Err(std::fs::TryLockError::WouldBlock) => ProcessLock { file: Some(file), sole: false },
            Err(std::fs::TryLockError::Error(e)) => {
                tracing::warn!(path = %path.display(), "file locking unavailable ({e}); assuming no other process uses the database");
                ProcessLock { file: None, sole: true }
            }
        }
    }

    /// Downgrades to a shared lock. Unlocking first is safe: in the gap there are no rows of ours
    /// `streaming` yet for another opener to misjudge.
    fn into_shared(self) -> Option<File> {
        let file = self.file?;
        if self.sole {
            let _ = file.unlock();
        }
        match file.lock_shared() {
            Ok(()) => Some(file),
            Err(e) => {
                tracing::warn!("could not hold a shared lock on the database's lock file: {e}");
                None
            }
        }
    }
}

const SUMMARY_SELECT: &str = "SELECT c.id, c.title, c.created_at, c.updated_at,
        (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id), c.pinned, c.archived
    FROM conversations c";

fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<ConversationSummary> {
    Ok(ConversationSummary {
        id: r.get(0)?,
        title: r.get(1)?,
        created_at: r.get(2)?,
        updated_at: r.get(3)?,
        message_count: r.get(4)?,
        pinned: r.get(5)?,
        archived: r.get(6)?,
    })
}

fn provider_from_row(r: &Row<'_>) -> rusqlite::Result<ProviderProfile> {
    let options: Option<String> = r.get(4)?;
    Ok(ProviderProfile {
        name: r.get(0)?,
        kind: r.get(1)?,
        base_url: r.get(2)?,
        model: r.get(3)?,
        // Options written by a newer version and not understood here fall back to the defaults
        // rather than hiding the profile.
        options: options.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default(),
    })
}

/// A profile's options as stored: `NULL` when they are all defaults.
fn options_json(options: &ProfileOptions) -> Option<String> {
    (*options != ProfileOptions::default()).then(|| serde_json::to_string(options).unwrap_or_default())
}

fn message_from_row(r: &Row<'_>) -> rusqlite::Result<StoredMessage> {
    let role: String = r.get(1)?;
    let status: String = r.get(4)?;
    let finish_reason: Option<String> = r.get(7)?;
    let error_kind: Option<String> = r.get(13)?;
    let error_message: Option<String> = r.get(14)?;
    let notices: String = r.get(15)?;
    Ok(StoredMessage {
        id: r.get(0)?,
        role: Role::parse(&role).ok_or_else(|| bad_value(1, "role", &role))?,
        content: r.get(2)?,
        reasoning: r.get(3)?,
        status: MessageStatus::parse(&status).ok_or_else(|| bad_value(4, "message status", &status))?,
        provider: r.get(5)?,
        model: r.get(6)?,
        finish_reason: finish_reason.map(|s| parse_name(7, "finish reason", &s)).transpose()?,
        usage: Usage {
            prompt_tokens: r.get(8)?,
            completion_tokens: r.get(9)?,
            reasoning_tokens: r.get(10)?,
            cached_tokens: r.get(11)?,
            cache_write_tokens: r.get(20)?,
        },
        tool_calls_made: r.get(12)?,
        error: match (error_kind, error_message) {
            (None, None) => None,
            (kind, message) => Some(StoredError {
                kind: kind
                    .map(|k| parse_name(13, "error kind", &k))
                    .transpose()?
                    .unwrap_or(switchboard_core::ErrorKind::Internal),
                message: message.unwrap_or_default(),
                detail: r.get(21)?,
            }),
        },
        notices: serde_json::from_str::<Vec<StoredNotice>>(&notices)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(15, Type::Text, Box::new(e)))?,
        provider_response_id: r.get(16)?,
        created_at: r.get(17)?,
        updated_at: r.get(18)?,
        tool_calls: Vec::new(),
        // State that cannot be read only costs the next request its continuation data.
        provider_states: r
            .get::<_, Option<String>>(19)?
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default(),
    })
}

/// Reads columns 1.. of the tool-call query in [`Store::messages`].
fn tool_call_from_row(r: &Row<'_>) -> rusqlite::Result<StoredToolCall> {
    let source: String = r.get(3)?;
    let status: String = r.get(8)?;
    let result_status: Option<String> = r.get(9)?;
    let result = match result_status {
        None => None,
        Some(s) => Some(StoredToolResult {
            status: switchboard_core::ToolStatus::parse(&s).ok_or_else(|| bad_value(9, "tool result status", &s))?,
            output: r.get(10)?,
            duration_ms: r.get(11)?,
            // Images that cannot be read only cost the card its pictures.
            images: r
                .get::<_, Option<String>>(12)?
                .and_then(|json| serde_json::from_str(&json).ok())
                .unwrap_or_default(),
        }),
    };
    Ok(StoredToolCall {
        call_id: r.get(1)?,
        name: r.get(2)?,
        // A source this build cannot parse only affects the card's label; the call still counts.
        source: serde_json::from_str(&source).unwrap_or(ToolSource::Unknown),
        arguments: r.get(4)?,
        text_offset: r.get(5)?,
        iteration: r.get(6)?,
        index: r.get(7)?,
        status: ToolCallStatus::parse(&status).ok_or_else(|| bad_value(8, "tool call status", &status))?,
        result,
        // A log this build cannot read only costs the card its nested progress.
        nested: r.get::<_, Option<String>>(13)?.and_then(|json| serde_json::from_str(&json).ok()).unwrap_or_default(),
    })
}

fn bad_value(col: usize, what: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(col, Type::Text, format!("unknown {what} '{value}'").into())
}

/// Parses a camelCase name stored with `as_str` back into the core enum it came from.
fn parse_name<T: DeserializeOwned>(col: usize, what: &str, value: &str) -> rusqlite::Result<T> {
    serde_json::from_value(serde_json::Value::String(value.to_owned())).map_err(|_| bad_value(col, what, value))
}

fn ensure_conversation(conn: &Connection, id: &str) -> Result<()> {
    let exists: bool = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM conversations WHERE id = ?1)")?
        .query_row([id], |r| r.get(0))?;
    if exists { Ok(()) } else { Err(Error::not_found("conversation", id)) }
}

/// Reads one of the conversation's JSON tool-list columns (`column` is a fixed name, never input).
fn tool_list(conn: &Connection, conversation_id: &str, column: &str) -> Result<String> {
    conn.prepare_cached(&format!("SELECT {column} FROM conversations WHERE id = ?1"))?
        .query_row([conversation_id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| Error::not_found("conversation", conversation_id))
}

fn to_json<T: Serialize + ?Sized>(value: &T, what: &str) -> Result<String> {
    serde_json::to_string(value).map_err(|source| Error::Json { what: what.to_owned(), source })
}

fn from_json<T: DeserializeOwned>(json: &str, what: impl FnOnce() -> String) -> Result<T> {
    serde_json::from_str(json).map_err(|source| Error::Json { what: what(), source })
}

/// Makes `query` match literally inside a `LIKE ... ESCAPE '\'` pattern.
pub(crate) fn escape_like(query: &str) -> String {
    let mut out = String::with_capacity(query.len());
    for c in query.chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A new conversation's title: its first non-blank line, at most 60 chars with an ellipsis if cut.
pub fn title_from(text: &str) -> String {
    const MAX_CHARS: usize = 60;
    let Some(line) = text.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return "New conversation".to_owned();
    };
    if line.chars().count() <= MAX_CHARS {
        return line.to_owned();
    }
    let cut: String = line.chars().take(MAX_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// A new row id: UUID v7, so ids sort by creation time.
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Unix time in milliseconds; a clock before 1970 counts as 0 rather than failing a write.
pub(crate) fn now_millis() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The last question of a conversation and its sequence number; refused while an answer after
/// it is still streaming.
fn last_turn_in(conn: &Connection, conversation_id: &str) -> Result<(i64, TakenTurn)> {
    let last: Option<(i64, String, Option<String>)> = conn
        .query_row(
            "SELECT seq, content, turn_options FROM messages WHERE conversation_id = ?1 AND role = 'user'
             ORDER BY seq DESC LIMIT 1",
            [conversation_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((seq, text, turn_options)) = last else {
        return Err(Error::not_found("question in conversation", conversation_id));
    };
    let streaming: i64 = conn.query_row(
        "SELECT COUNT(*) FROM messages WHERE conversation_id = ?1 AND seq > ?2 AND status = 'streaming'",
        (conversation_id, seq),
        |r| r.get(0),
    )?;
    if streaming > 0 {
        return Err(Error::Busy("an answer is still streaming in this conversation; stop it first".into()));
    }
    let (provider, model): (Option<String>, Option<String>) = conn
        .query_row(
            "SELECT provider, model FROM messages WHERE conversation_id = ?1 AND seq > ?2 AND role = 'assistant'
             ORDER BY seq LIMIT 1",
            (conversation_id, seq),
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?
        .unwrap_or_default();
    Ok((seq, TakenTurn { text, turn_options, provider, model }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_use_the_first_non_blank_line_and_cut_on_a_char_boundary() {
        assert_eq!(title_from("  \n  Hello there \nsecond"), "Hello there");
        assert_eq!(title_from(" \n\t"), "New conversation");
        let long = "é".repeat(70);
        let t = title_from(&long);
        assert_eq!(t.chars().count(), 60);
        assert!(t.ends_with('…'));
        assert_eq!(title_from(&"x".repeat(60)), "x".repeat(60));
    }

    #[test]
    fn like_escaping_covers_wildcards_and_the_escape_char() {
        assert_eq!(escape_like(r"50%_a\b"), r"50\%\_a\\b");
    }
}
