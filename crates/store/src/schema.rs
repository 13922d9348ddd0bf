//! Opening a database safely and bringing its schema up to date.
//!
//! Nothing is written to a file until it has been read cleanly and recognised as empty or as ours:
//! a damaged file, another program's database or one from a newer build is refused untouched.

use crate::error::{Error, Result, is_corruption};
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// Embedded migrations, applied in order; `PRAGMA user_version` is how many have run.
///
/// Released entries are never edited: a database that ran one must mean the same thing forever.
/// Change the schema by appending.
///
/// Statuses and roles are validated in Rust rather than with CHECK constraints, because SQLite can
/// only change a CHECK by rebuilding the table, and new statuses are the likeliest change.
pub const MIGRATIONS: &[&str] = &[
    // 1: the initial schema.
    r#"
    PRAGMA application_id = 1398227524;

    CREATE TABLE conversations (
        id             TEXT PRIMARY KEY NOT NULL,
        title          TEXT NOT NULL,
        created_at     INTEGER NOT NULL,
        updated_at     INTEGER NOT NULL,
        disabled_tools TEXT NOT NULL DEFAULT '[]',
        approved_tools TEXT NOT NULL DEFAULT '[]'
    );
    CREATE INDEX conversations_by_updated ON conversations (updated_at DESC, id DESC);

    CREATE TABLE messages (
        id                   TEXT PRIMARY KEY NOT NULL,
        conversation_id      TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        seq                  INTEGER NOT NULL,
        role                 TEXT NOT NULL,
        content              TEXT NOT NULL DEFAULT '',
        reasoning            TEXT NOT NULL DEFAULT '',
        status               TEXT NOT NULL,
        provider             TEXT,
        model                TEXT,
        finish_reason        TEXT,
        prompt_tokens        INTEGER NOT NULL DEFAULT 0,
        completion_tokens    INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens     INTEGER NOT NULL DEFAULT 0,
        cached_tokens        INTEGER NOT NULL DEFAULT 0,
        tool_calls_made      INTEGER NOT NULL DEFAULT 0,
        error_kind           TEXT,
        error_message        TEXT,
        notices              TEXT NOT NULL DEFAULT '[]',
        provider_response_id TEXT,
        created_at           INTEGER NOT NULL,
        updated_at           INTEGER NOT NULL,
        UNIQUE (conversation_id, seq)
    );
    -- Start-up recovery looks for these; a partial index keeps that instant on a large database.
    CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming';

    CREATE TABLE tool_calls (
        id          TEXT PRIMARY KEY NOT NULL,
        message_id  TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        call_id     TEXT NOT NULL,
        iteration   INTEGER NOT NULL,
        idx         INTEGER NOT NULL,
        name        TEXT NOT NULL,
        source      TEXT NOT NULL,
        arguments   TEXT NOT NULL,
        text_offset INTEGER NOT NULL,
        status      TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        UNIQUE (message_id, call_id)
    );

    CREATE TABLE tool_results (
        tool_call_id TEXT PRIMARY KEY NOT NULL REFERENCES tool_calls (id) ON DELETE CASCADE,
        status       TEXT NOT NULL,
        output       TEXT NOT NULL,
        duration_ms  INTEGER NOT NULL,
        created_at   INTEGER NOT NULL
    );

    CREATE TABLE settings (
        key   TEXT PRIMARY KEY NOT NULL,
        value TEXT NOT NULL
    );

    -- No key column on purpose: secrets live in the OS keychain only.
    CREATE TABLE providers (
        name       TEXT PRIMARY KEY NOT NULL,
        kind       TEXT NOT NULL,
        base_url   TEXT NOT NULL,
        model      TEXT,
        created_at INTEGER NOT NULL
    );
    "#,
    // 2: the choices a question was asked with (provider, model, forced tools, tools on or off,
    // dry run, ...), as JSON on the person's message, so asking it again uses the same ones.
    r#"
    ALTER TABLE messages ADD COLUMN turn_options TEXT;
    "#,
    // 3: images a tool returned (JSON: [{mimeType, data}]), shown on its card and given back to
    // models that take images in tool results.
    r#"
    ALTER TABLE tool_results ADD COLUMN images TEXT;
    "#,
    // 4: what each response's API wants back unchanged (signed thinking, thought signatures,
    // reasoning items, response ids; JSON: [[iteration, {api, origin, data}]]), and a profile's
    // generation settings and capability overrides (JSON); tokens written to a prompt cache.
    r#"
    ALTER TABLE messages ADD COLUMN provider_state TEXT;
    ALTER TABLE messages ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE providers ADD COLUMN options TEXT;
    "#,
    // 5: conversations pinned to the top of the list, and archived out of it; the technical detail
    // of an error (behind "Details").
    r#"
    ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE conversations ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE messages ADD COLUMN error_detail TEXT;
    "#,
    // 6: a conversation's own instructions (its system prompt, beside the person's custom ones).
    r#"
    ALTER TABLE conversations ADD COLUMN instructions TEXT;
    "#,
    // 7: the agent a conversation runs (by name), and what a sub-agent did inside a call (JSON:
    // [{instance, event}], its events as they streamed), so the nested cards reload as they ran.
    r#"
    ALTER TABLE conversations ADD COLUMN agent TEXT;
    ALTER TABLE tool_calls ADD COLUMN nested TEXT;
    "#,
    // 8: the message tree. Each message has a parent (NULL: a root; several roots are versions of
    // the first message); a conversation's current path is its head walked up through parents;
    // `chosen_at` says when a message was last put on the path, so switching to a version follows
    // the branch chosen last below it. Every existing conversation becomes one path, in seq order.
    r#"
    ALTER TABLE messages ADD COLUMN parent_id TEXT REFERENCES messages (id) ON DELETE CASCADE;
    ALTER TABLE messages ADD COLUMN chosen_at INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE conversations ADD COLUMN head_id TEXT;
    CREATE INDEX messages_by_parent ON messages (parent_id);
    UPDATE messages SET parent_id = (
        SELECT p.id FROM messages p
        WHERE p.conversation_id = messages.conversation_id AND p.seq < messages.seq
        ORDER BY p.seq DESC LIMIT 1);
    UPDATE conversations SET head_id = (
        SELECT m.id FROM messages m WHERE m.conversation_id = conversations.id ORDER BY m.seq DESC LIMIT 1);
    "#,
    // 9: full-text search (see `crate::fts`). A contentless FTS5 table: the texts stay only in
    // their own tables (snippets are cut from them), so the index adds its token lists and little
    // more. Its rowid is kind * 2^40 + the source row's rowid (kind 0: a title, 1: a message's
    // text, 2: a tool call's arguments, 3: a tool result). Triggers keep it in step with every
    // write, cascades included; they call `switchboard_search_text` (registered on every
    // connection), which splits scripts written without spaces into one token per character.
    // A message's text is indexed only once it is no longer `streaming`: the recorder's
    // checkpoints of a growing answer do not touch the index, and the answer is indexed once,
    // when it ends (done, stopped, failed, or recovered as interrupted at start-up). Invariant: a
    // message has an entry exactly when its content is not empty and its status not `streaming`.
    r#"
    CREATE VIRTUAL TABLE search_index USING fts5(
        body,
        content = '',
        contentless_delete = 1,
        tokenize = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
    );
    INSERT INTO search_index (rowid, body)
        SELECT rowid, switchboard_search_text(title) FROM conversations;
    INSERT INTO search_index (rowid, body)
        SELECT rowid + 1099511627776, switchboard_search_text(content) FROM messages
        WHERE content <> '' AND status <> 'streaming';
    INSERT INTO search_index (rowid, body)
        SELECT rowid + 2199023255552, switchboard_search_text(arguments) FROM tool_calls WHERE arguments <> '';
    INSERT INTO search_index (rowid, body)
        SELECT rowid + 3298534883328, switchboard_search_text(output) FROM tool_results WHERE output <> '';

    CREATE TRIGGER search_title_insert AFTER INSERT ON conversations BEGIN
        INSERT INTO search_index (rowid, body) VALUES (new.rowid, switchboard_search_text(new.title));
    END;
    CREATE TRIGGER search_title_update AFTER UPDATE OF title ON conversations BEGIN
        DELETE FROM search_index WHERE rowid = old.rowid;
        INSERT INTO search_index (rowid, body) VALUES (new.rowid, switchboard_search_text(new.title));
    END;
    CREATE TRIGGER search_title_delete AFTER DELETE ON conversations BEGIN
        DELETE FROM search_index WHERE rowid = old.rowid;
    END;

    CREATE TRIGGER search_message_insert AFTER INSERT ON messages
    WHEN new.content <> '' AND new.status <> 'streaming' BEGIN
        INSERT INTO search_index (rowid, body) VALUES (new.rowid + 1099511627776, switchboard_search_text(new.content));
    END;
    CREATE TRIGGER search_message_update AFTER UPDATE OF content, status ON messages
    WHEN old.status <> 'streaming' OR new.status <> 'streaming' BEGIN
        DELETE FROM search_index WHERE rowid = old.rowid + 1099511627776 AND old.status <> 'streaming';
        INSERT INTO search_index (rowid, body)
            SELECT new.rowid + 1099511627776, switchboard_search_text(new.content)
            WHERE new.content <> '' AND new.status <> 'streaming';
    END;
    CREATE TRIGGER search_message_delete AFTER DELETE ON messages BEGIN
        DELETE FROM search_index WHERE rowid = old.rowid + 1099511627776;
    END;

    CREATE TRIGGER search_arguments_insert AFTER INSERT ON tool_calls WHEN new.arguments <> '' BEGIN
        INSERT INTO search_index (rowid, body) VALUES (new.rowid + 2199023255552, switchboard_search_text(new.arguments));
    END;
    CREATE TRIGGER search_arguments_update AFTER UPDATE OF arguments ON tool_calls BEGIN
        DELETE FROM search_index WHERE rowid = old.rowid + 2199023255552;
        INSERT INTO search_index (rowid, body)
            SELECT new.rowid + 2199023255552, switchboard_search_text(new.arguments) WHERE new.arguments <> '';
    END;
    CREATE TRIGGER search_arguments_delete AFTER DELETE ON tool_calls BEGIN
        DELETE FROM search_index WHERE rowid = old.rowid + 2199023255552;
    END;

    CREATE TRIGGER search_result_insert AFTER INSERT ON tool_results WHEN new.output <> '' BEGIN
        INSERT INTO search_index (rowid, body) VALUES (new.rowid + 3298534883328, switchboard_search_text(new.output));
    END;
    CREATE TRIGGER search_result_update AFTER UPDATE OF output ON tool_results BEGIN
        DELETE FROM search_index WHERE rowid = old.rowid + 3298534883328;
        INSERT INTO search_index (rowid, body)
            SELECT new.rowid + 3298534883328, switchboard_search_text(new.output) WHERE new.output <> '';
    END;
    CREATE TRIGGER search_result_delete AFTER DELETE ON tool_results BEGIN
        DELETE FROM search_index WHERE rowid = old.rowid + 3298534883328;
    END;
    "#,
    // 10: a chat's setup
    // (JSON: {toolsets, generation, provider, model}; see `store::setup`), so a reopened chat
    // gets the tools, parameters and model it had. Existing chats start from what their last
    // question was sent with.
    r#"
    ALTER TABLE conversations ADD COLUMN setup TEXT;
    UPDATE conversations SET setup = (
        SELECT json_object(
            'toolsets', json(coalesce(json_extract(m.turn_options, '$.toolsets'), '[]')),
            'generation', json(json_extract(m.turn_options, '$.generation')),
            'provider', json_extract(m.turn_options, '$.provider'),
            'model', json_extract(m.turn_options, '$.model'))
        FROM messages m
        WHERE m.conversation_id = conversations.id AND m.role = 'user'
          AND m.turn_options IS NOT NULL AND json_valid(m.turn_options)
        ORDER BY m.seq DESC LIMIT 1);
    "#,
    // 11: what each request (model call) of an answer used and cost, one row per request, written
    // as its `usage` event arrives (see `crate::recorder` and `store::usage`). A sub-agent's
    // requests are rows of the calling answer: `call_id` is the answer's tool call they ran under,
    // `run_path` the run ("call_1/Scout[0]", deeper runs appended), `agent` its agent's name.
    // `decided` (JSON array) holds the ids of the tool calls the request made. `cost_usd` NULL:
    // the price was unknown. Rows go with their message (cascade); the conversation id is kept
    // for reports over a period.
    r#"
    CREATE TABLE usage_requests (
        id                 INTEGER PRIMARY KEY,
        message_id         TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        conversation_id    TEXT NOT NULL,
        request            INTEGER NOT NULL,
        call_id            TEXT,
        run_path           TEXT NOT NULL DEFAULT '',
        agent              TEXT,
        decided            TEXT NOT NULL DEFAULT '[]',
        profile            TEXT NOT NULL,
        api                TEXT NOT NULL,
        model              TEXT NOT NULL,
        prompt_tokens      INTEGER NOT NULL,
        completion_tokens  INTEGER NOT NULL,
        reasoning_tokens   INTEGER NOT NULL,
        cached_tokens      INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        cost_usd           REAL,
        estimated          INTEGER NOT NULL,
        created_at         INTEGER NOT NULL
    );
    CREATE INDEX usage_requests_by_message ON usage_requests (message_id);
    CREATE INDEX usage_requests_by_conversation ON usage_requests (conversation_id);
    CREATE INDEX usage_requests_by_time ON usage_requests (created_at);
    "#,
    // 12: compactions and pinned messages. A compaction says how
    // a conversation's history is sent from then on (see `switchboard_core::compaction`): the
    // first `covered` canonical messages of the path through `message_id` (the answer during
    // which it was made, or the head for "compact now") as `summary`, the results of `stubbed`
    // (JSON: [call id]) as stubs, the covered messages `quoted` (JSON: [index]) verbatim. It is
    // cumulative: the latest one on the current path and not `undone` is the one in force.
    // Compacting adds a row; nothing else is deleted or rewritten. A pinned message is never
    // summarised: it is sent verbatim.
    r#"
    CREATE TABLE compactions (
        id              TEXT PRIMARY KEY NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        message_id      TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        covered         INTEGER NOT NULL,
        summary         TEXT,
        stubbed         TEXT NOT NULL DEFAULT '[]',
        quoted          TEXT NOT NULL DEFAULT '[]',
        tokens_before   INTEGER NOT NULL,
        tokens_after    INTEGER NOT NULL,
        reason          TEXT NOT NULL,
        summariser      TEXT,
        usage           TEXT,
        created_at      INTEGER NOT NULL,
        undone          INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX compactions_by_conversation ON compactions (conversation_id, created_at);
    CREATE INDEX compactions_by_message ON compactions (message_id);
    ALTER TABLE messages ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
    "#,
    // 13: the last `context` count of each answer (the
    // request it last sent: tokens, window, breakdown, the engine's own estimate and the prompt
    // tokens the provider reported for it), so a reopened chat's meter shows what it showed and
    // the next turn counts from the report.
    r#"
    CREATE TABLE message_context (
        message_id      TEXT PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
        used_tokens     INTEGER NOT NULL,
        context_window  INTEGER,
        instructions    INTEGER NOT NULL,
        tools           INTEGER NOT NULL,
        history         INTEGER NOT NULL,
        tool_results    INTEGER NOT NULL,
        attachments     INTEGER NOT NULL,
        estimated       INTEGER NOT NULL,
        estimate        INTEGER NOT NULL,
        reported_prompt INTEGER
    ) WITHOUT ROWID;
    "#,
    // 14: each text's token count per tokenizer, per conversation (keyed by the text's length and
    // FNV-1a hash, `switchboard_core::TextKey`), so a turn's first request counts only what is new
    // instead of tokenizing the whole history again. A cache: it goes with its conversation, and
    // losing it only costs counting again.
    r#"
    CREATE TABLE token_counts (
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        tokenizer       TEXT NOT NULL,
        text_len        INTEGER NOT NULL,
        text_hash       INTEGER NOT NULL,
        tokens          INTEGER NOT NULL,
        PRIMARY KEY (conversation_id, tokenizer, text_hash, text_len)
    ) WITHOUT ROWID;
    "#,
    // 15: attached files. `attachments` has one row per distinct file, keyed by the SHA-256 of its
    // bytes (which live in `<data dir>/attachments/<sha[0..2]>/<sha>`, see `crate::blobs`): what
    // it is (name as first attached, media type, kind, size, dimensions, pages), the text
    // extracted from it (for search and for models that read no PDFs) and a small thumbnail;
    // `created_at` is when it was last attached, so a file in the composer that no message uses
    // yet survives garbage collection for a while. `message_attachments` lists a person's
    // message's files in order, each under the name it was attached with; a file is deleted
    // only once no row here names it. Search (kind 4): each message's attachment is indexed as
    // its name and extracted text, so a hit points at the message; rows are never updated, and
    // an attachment's text never changes once stored.
    r#"
    CREATE TABLE attachments (
        id         TEXT PRIMARY KEY NOT NULL,
        name       TEXT NOT NULL,
        mime_type  TEXT NOT NULL,
        kind       TEXT NOT NULL,
        size       INTEGER NOT NULL,
        width      INTEGER,
        height     INTEGER,
        pages      INTEGER,
        text       TEXT,
        thumbnail  BLOB,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE message_attachments (
        message_id    TEXT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        position      INTEGER NOT NULL,
        attachment_id TEXT NOT NULL REFERENCES attachments (id),
        name          TEXT NOT NULL,
        PRIMARY KEY (message_id, position)
    );
    CREATE INDEX message_attachments_by_attachment ON message_attachments (attachment_id);

    CREATE TRIGGER search_attachment_insert AFTER INSERT ON message_attachments BEGIN
        INSERT INTO search_index (rowid, body)
            SELECT new.rowid + 4398046511104, switchboard_search_text(new.name || char(10) || COALESCE(a.text, ''))
            FROM attachments a WHERE a.id = new.attachment_id;
    END;
    CREATE TRIGGER search_attachment_delete AFTER DELETE ON message_attachments BEGIN
        DELETE FROM search_index WHERE rowid = old.rowid + 4398046511104;
    END;
    "#,
    // 16: why the model picked to write a chat's summaries did not write a compaction's summary
    // (its profile gone, its key refused, …; the chat's own model wrote it), shown on its boundary.
    r#"
    ALTER TABLE compactions ADD COLUMN summariser_fallback TEXT;
    "#,
    // 17: why a PDF's extracted text is not all of it (extraction stopped at its deadline or size
    // limit), as the sentence the person and the model read; NULL when it is all of it, and for
    // files stored before (whose extraction said nothing).
    r#"
    ALTER TABLE attachments ADD COLUMN text_note TEXT;
    "#,
];

/// The schema version this build creates and understands.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// `PRAGMA application_id` of a Switchboard database ("SWBD"); set by migration 1.
pub(crate) const APPLICATION_ID: i64 = 0x5357_4244;

const BUSY_TIMEOUT: Duration = Duration::from_millis(5000);

/// Reads the header fields that decide whether the file may be touched. Reads only.
pub(crate) fn check_file(conn: &Connection, path: &Path) -> Result<()> {
    let corrupt = |detail: String| Error::Corrupt { path: path.to_owned(), detail };
    let read = || -> rusqlite::Result<(i64, i64, i64)> {
        // sqlite_master forces SQLite to read (and validate) the first page, which a PRAGMA on a
        // freshly opened handle may not.
        let objects: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        let app_id: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        Ok((objects, app_id, version))
    };
    let (objects, app_id, version) = match read() {
        Ok(v) => v,
        Err(e) if is_corruption(&e) => return Err(corrupt(e.to_string())),
        Err(e) => {
            return Err(Error::CannotOpen { path: path.to_owned(), detail: e.to_string() });
        }
    };
    if objects == 0 && app_id == 0 && version == 0 {
        return Ok(()); // empty: ours to initialise
    }
    if app_id != APPLICATION_ID {
        return Err(corrupt(format!(
            "it is an SQLite database of another application (application_id {app_id}, {objects} schema objects)"
        )));
    }
    if version > SCHEMA_VERSION {
        return Err(Error::NewerSchema { path: path.to_owned(), found: version, supported: SCHEMA_VERSION });
    }
    check_pages(conn, path)
}

/// Up to this size a database's pages are all checked when it is opened; `quick_check` reads
/// every page, about a second per few hundred megabytes here. A larger file is checked as it is
/// read: damage found later gets the same guidance (see `Error::Sqlite`).
pub(crate) const PAGE_CHECK_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// Finds damaged pages (not only a damaged header) before anything is written. Reads only.
fn check_pages(conn: &Connection, path: &Path) -> Result<()> {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    if size > PAGE_CHECK_MAX_BYTES {
        tracing::info!(bytes = size, "database larger than the open-time page check; checked as it is read");
        return Ok(());
    }
    let corrupt = |detail: String| Error::Corrupt { path: path.to_owned(), detail };
    let mut problems = Vec::new();
    let checked = conn.prepare("PRAGMA quick_check(3)").and_then(|mut stmt| {
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        for row in rows {
            problems.push(row?);
        }
        Ok(())
    });
    match checked {
        Err(e) if is_corruption(&e) => Err(corrupt(format!("damaged pages: {e}"))),
        Err(e) => Err(Error::CannotOpen { path: path.to_owned(), detail: e.to_string() }),
        Ok(()) if problems.len() == 1 && problems[0] == "ok" => Ok(()),
        Ok(()) => Err(corrupt(format!("damaged pages: {}", problems.join("; ")))),
    }
}

/// Sets the connection up for the store's use. Runs only after [`check_file`] passed.
pub(crate) fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // The search index's triggers call it on every write.
    crate::fts::register(conn)?;
    // WAL lets a reader (the UI listing conversations) run while a turn writes; NORMAL is durable
    // across an app crash under WAL and only risks the last commits on power loss.
    let _mode: String = conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

/// Applies the migrations this database has not run yet, each in its own transaction.
///
/// The version is re-read inside an IMMEDIATE transaction so two processes opening the same new
/// database at once do not both run a migration.
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<i64> {
    // Migration 9 and the triggers it creates need it, whether or not `configure` ran.
    crate::fts::register(conn)?;
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version >= SCHEMA_VERSION {
            return Ok(version);
        }
        let Some(sql) = usize::try_from(version).ok().and_then(|v| MIGRATIONS.get(v)) else {
            return Ok(version);
        };
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.commit()?;
        tracing::info!(version = version + 1, "applied database migration");
    }
}

/// Every `streaming` message left by a process that died becomes `interrupted`, text kept.
///
/// Its calls still `pending` or `running` never will finish: they become `cancelled` (without a
/// result row), so a redrawn card stops spinning, matching what the rebuilt history tells the
/// model about them.
pub(crate) fn recover_streaming(conn: &mut Connection, now: i64) -> rusqlite::Result<usize> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(
        "UPDATE tool_calls SET status = 'cancelled'
         WHERE status IN ('pending', 'running')
           AND message_id IN (SELECT id FROM messages WHERE status = 'streaming')",
        [],
    )?;
    let n =
        tx.execute("UPDATE messages SET status = 'interrupted', updated_at = ?1 WHERE status = 'streaming'", [now])?;
    tx.commit()?;
    Ok(n)
}

/// Maps a failure after [`check_file`] passed: corruption discovered late is still corruption.
pub(crate) fn open_error(path: &Path, e: rusqlite::Error) -> Error {
    if is_corruption(&e) {
        Error::Corrupt { path: path.to_owned(), detail: e.to_string() }
    } else {
        Error::CannotOpen { path: path.to_owned(), detail: e.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_stored_before_notes_on_cut_text_has_none() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::fts::register(&conn).unwrap();
        for sql in &MIGRATIONS[..15] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 15).unwrap();
        conn.execute(
            "INSERT INTO attachments (id, name, mime_type, kind, size, pages, text, created_at)
             VALUES ('f', 'old.pdf', 'application/pdf', 'pdf', 3, 40, 'some text', 1)",
            [],
        )
        .unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), SCHEMA_VERSION);
        let (pages, note): (u32, Option<String>) = conn
            .query_row("SELECT pages, text_note FROM attachments WHERE id = 'f'", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!((pages, note), (40, None));
    }

    #[test]
    fn a_database_of_the_first_schema_upgrades_and_keeps_its_messages() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute_batch(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c', 'old chat', 1, 1);
             INSERT INTO messages (id, conversation_id, seq, role, content, status, created_at, updated_at)
             VALUES ('m', 'c', 1, 'user', 'asked before choices were kept', 'complete', 1, 1);",
        )
        .unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), SCHEMA_VERSION);
        let (content, options): (String, Option<String>) = conn
            .query_row("SELECT content, turn_options FROM messages WHERE id = 'm'", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!(content, "asked before choices were kept");
        assert_eq!(options, None);
    }

    #[test]
    fn the_search_migration_indexes_rows_written_before_it() {
        let search = MIGRATIONS.iter().position(|m| m.contains("CREATE VIRTUAL TABLE search_index")).unwrap();
        let mut conn = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..search] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", search as i64).unwrap();
        conn.execute_batch(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c', 'otters and 海獭', 1, 1);
             INSERT INTO messages (id, conversation_id, seq, role, content, status, created_at, updated_at)
             VALUES ('q', 'c', 1, 'user', 'where do otters sleep', 'complete', 1, 1),
                    ('a', 'c', 2, 'assistant', '', 'interrupted', 1, 1),
                    ('s', 'c', 3, 'assistant', 'walruses still streaming', 'streaming', 1, 1);
             INSERT INTO tool_calls (id, message_id, call_id, iteration, idx, name, source, arguments, text_offset, status, created_at)
             VALUES ('t', 'a', 'call', 1, 0, 'lookup', '\"builtin\"', '{\"q\":\"kelp\"}', 0, 'ok', 1);
             INSERT INTO tool_results (tool_call_id, status, output, duration_ms, created_at)
             VALUES ('t', 'ok', 'they sleep in kelp forests', 1, 1);",
        )
        .unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), SCHEMA_VERSION);
        let kinds = |conn: &Connection, q: &str| -> Vec<i64> {
            let mut stmt =
                conn.prepare("SELECT rowid >> 40 FROM search_index WHERE search_index MATCH ?1 ORDER BY 1").unwrap();
            stmt.query_map([q], |r| r.get(0)).unwrap().collect::<rusqlite::Result<_>>().unwrap()
        };
        assert_eq!(kinds(&conn, "otters"), [0, 1], "the title and the question");
        assert_eq!(kinds(&conn, "kelp"), [2, 3], "the call's arguments and its result");
        assert_eq!(kinds(&conn, "\"海 獭\""), [0]);
        assert!(kinds(&conn, "walruses").is_empty(), "a streaming answer waits until it ends");
        conn.execute("INSERT INTO search_index (search_index) VALUES ('integrity-check')", []).unwrap();
        assert_eq!(recover_streaming(&mut conn, 2).unwrap(), 1);
        assert_eq!(kinds(&conn, "walruses"), [1], "recovered as interrupted: indexed");
        conn.execute("INSERT INTO search_index (search_index) VALUES ('integrity-check')", []).unwrap();
    }

    #[test]
    fn an_existing_chat_starts_with_the_setup_its_last_question_was_sent_with() {
        let mut conn = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..7] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 7).unwrap();
        conn.execute_batch(
            r#"INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c', 'chat', 1, 1), ('old', 'old', 1, 1), ('bad', 'bad', 1, 1);
             INSERT INTO messages (id, conversation_id, seq, role, status, created_at, updated_at, turn_options) VALUES
               ('m1', 'c', 1, 'user', 'complete', 1, 1, '{"provider":"p","model":"m","toolsets":["a"]}'),
               ('m2', 'c', 3, 'user', 'complete', 1, 1, '{"provider":"q","model":"n","toolsets":["b","c"],"generation":{"temperature":0.5}}'),
               ('m3', 'old', 1, 'user', 'complete', 1, 1, NULL),
               ('m4', 'bad', 1, 'user', 'complete', 1, 1, 'not json');"#,
        )
        .unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), SCHEMA_VERSION);
        let setup = |id: &str| -> Option<String> {
            conn.query_row("SELECT setup FROM conversations WHERE id = ?1", [id], |r| r.get(0)).unwrap()
        };
        let c: serde_json::Value = serde_json::from_str(&setup("c").unwrap()).unwrap();
        assert_eq!(
            c,
            serde_json::json!({"toolsets": ["b", "c"], "generation": {"temperature": 0.5}, "provider": "q", "model": "n"})
        );
        assert_eq!(setup("old"), None, "no choices kept: the empty setup");
        assert_eq!(setup("bad"), None, "unreadable choices are left alone");
    }
}
