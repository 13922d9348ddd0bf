//! Recording a turn through `Recorder` and reading it back: durability rules of DESIGN.md §5.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use switchboard_core::history::INTERRUPTED_RESULT;
use switchboard_core::{
    ChatEvent, EventSink, FinishReason, Message, NoticeKind, ToolCall, ToolSource, ToolStatus, Usage,
};
use switchboard_store::{
    DB_FILE, MessageStatus, Role, Store, StoredNotice, StoredToolResult, ToolCallStatus, TurnRows,
};

fn text(t: &str) -> ChatEvent {
    ChatEvent::TextDelta { text: t.into() }
}

fn call(id: &str, offset: usize, iteration: u32, index: u32) -> ChatEvent {
    ChatEvent::ToolCall {
        id: id.into(),
        name: "clock__now".into(),
        source: ToolSource::Mcp { server: "clock".into() },
        arguments: r#"{"tz":"Europe/Paris"}"#.into(),
        text_offset: offset,
        iteration,
        index,
    }
}

/// An image a tool returned: kept with its result and given back in the history.
fn png() -> switchboard_core::ToolImage {
    switchboard_core::ToolImage::checked("image/png", "iVBORw0KGgo=").unwrap()
}

fn usage(p: u64, c: u64) -> Usage {
    Usage { prompt_tokens: p, completion_tokens: c, reasoning_tokens: 3, cached_tokens: 4, cache_write_tokens: 2 }
}

fn started(rows: &TurnRows) -> ChatEvent {
    ChatEvent::Started {
        conversation_id: rows.conversation_id.clone(),
        message_id: rows.message_id.clone(),
        user_message_id: rows.user_message_id.clone(),
        provider: "mock".into(),
        model: "m-1".into(),
    }
}

fn assistant(store: &Store, conversation_id: &str) -> switchboard_store::StoredMessage {
    let msgs = store.messages(conversation_id).unwrap();
    msgs.into_iter().rev().find(|m| m.role == Role::Assistant).expect("an assistant message")
}

fn db(dir: &Path) -> std::path::PathBuf {
    dir.join(DB_FILE)
}

#[test]
fn a_full_turn_survives_reopening_with_exact_text_offsets_and_results() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(dir.path());
    let rows = {
        let store = Store::open(&path).unwrap();
        let rows = store.begin_turn(None, "What time is it in Paris?\nThanks", "mock", "m-1").unwrap();
        // The engine holds sinks as `Arc<dyn EventSink>`.
        let sink: Arc<dyn EventSink> = Arc::new(store.recorder(&rows.message_id));
        for e in [
            started(&rows),
            ChatEvent::ReasoningDelta { text: "need the clock".into() },
            text("Hé 👋 "),
            text("世界"),
            call("call_1", 6, 1, 0),
            ChatEvent::ToolStarted { id: "call_1".into() },
            ChatEvent::ToolResult {
                images: Some(vec![png()]),
                id: "call_1".into(),
                status: ToolStatus::Ok,
                output: "12:00".into(),
                duration_ms: 5,
            },
            ChatEvent::Usage {
                usage: usage(10, 5),
                total: usage(10, 5),
                request: 1,
                cost_usd: None,
                estimated: false,
                agent_call: None,
            },
            text(" It is "),
            text("noon."),
            ChatEvent::Notice { kind: NoticeKind::DryRun, message: "dry run".into() },
            ChatEvent::Usage {
                usage: usage(20, 7),
                total: usage(30, 12),
                request: 2,
                cost_usd: None,
                estimated: false,
                agent_call: None,
            },
            ChatEvent::Done { finish_reason: FinishReason::Stop, usage: usage(30, 12), tool_calls_made: 1 },
        ] {
            sink.emit(e);
        }
        rows
    }; // store and recorder dropped: everything must already be on disk

    let store = Store::open(&path).unwrap();
    assert_eq!(store.recovered_on_open(), 0, "a finished turn is not 'recovered'");
    let msgs = store.messages(&rows.conversation_id).unwrap();
    assert_eq!(msgs.len(), 2);
    let (user, a) = (&msgs[0], &msgs[1]);
    assert_eq!(user.id, rows.user_message_id);
    assert_eq!(user.role, Role::User);
    assert_eq!(user.content, "What time is it in Paris?\nThanks");
    assert_eq!(user.status, MessageStatus::Complete);

    assert_eq!(a.id, rows.message_id);
    assert_eq!(a.content, "Hé 👋 世界 It is noon.");
    assert_eq!(a.reasoning, "need the clock");
    assert_eq!(a.status, MessageStatus::Complete);
    assert_eq!(a.finish_reason, Some(FinishReason::Stop));
    assert_eq!(a.provider.as_deref(), Some("mock"));
    assert_eq!(a.model.as_deref(), Some("m-1"));
    assert_eq!(a.usage, usage(30, 12));
    assert_eq!(a.tool_calls_made, 1);
    assert_eq!(a.error, None);
    assert_eq!(a.notices, vec![StoredNotice { kind: NoticeKind::DryRun, message: "dry run".into() }]);
    assert_eq!(a.tool_calls.len(), 1);
    let c = &a.tool_calls[0];
    assert_eq!(c.call_id, "call_1");
    assert_eq!(c.name, "clock__now");
    assert_eq!(c.source, ToolSource::Mcp { server: "clock".into() });
    assert_eq!(c.arguments, r#"{"tz":"Europe/Paris"}"#);
    assert_eq!((c.text_offset, c.iteration, c.index), (6, 1, 0));
    assert_eq!(c.status, ToolCallStatus::Ok);
    assert_eq!(
        c.result,
        Some(StoredToolResult { images: vec![png()], status: ToolStatus::Ok, output: "12:00".into(), duration_ms: 5 })
    );
    // The offset is in chars: the card sits after "Hé 👋 世" (12 bytes, 6 chars).
    assert_eq!(a.content.chars().take(c.text_offset).collect::<String>(), "Hé 👋 世");

    let conv = store.conversation(&rows.conversation_id).unwrap();
    assert_eq!(conv.title, "What time is it in Paris?");

    assert_eq!(
        store.history(&rows.conversation_id).unwrap(),
        vec![
            Message::user("What time is it in Paris?\nThanks"),
            Message::Assistant {
                text: "Hé 👋 世".into(),
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "clock__now".into(),
                    arguments: r#"{"tz":"Europe/Paris"}"#.into(),
                }],
                state: None
            },
            Message::Tool {
                images: vec![png()],
                call_id: "call_1".into(),
                name: "clock__now".into(),
                content: "12:00".into(),
                is_error: false
            },
            Message::Assistant { text: "界 It is noon.".into(), tool_calls: vec![], state: None },
        ]
    );

    // The next turn continues the same conversation; its history ends with the new question.
    let next = store.begin_turn(Some(&rows.conversation_id), "And in Tokyo?", "mock", "m-1").unwrap();
    assert_eq!(next.conversation_id, rows.conversation_id);
    let h = store.history(&rows.conversation_id).unwrap();
    assert_eq!(h.len(), 5, "the new streaming assistant row is not history yet");
    assert_eq!(h.last(), Some(&Message::user("And in Tokyo?")));

    // The CLI prints these as JSON: camelCase keys.
    let json = serde_json::to_value(a).unwrap();
    assert_eq!(json["toolCalls"][0]["textOffset"], 6);
    assert_eq!(json["toolCalls"][0]["result"]["durationMs"], 5);
    assert_eq!(json["finishReason"], "stop");
    assert_eq!(json["usage"]["promptTokens"], 30);
}

#[test]
fn text_before_a_tool_call_and_each_result_are_durable_at_once_for_another_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(dir.path());
    let store = Store::open(&path).unwrap();
    let rows = store.begin_turn(None, "q", "mock", "m").unwrap();
    let rec = store.recorder(&rows.message_id); // default 1 s interval: only the boundary writes
    rec.emit(started(&rows));
    rec.emit(text("Let me check "));
    rec.emit(text("the clock."));

    let reader = Store::open(&path).unwrap();
    assert_eq!(reader.recovered_on_open(), 0, "a live writer's streaming row must not be 'recovered'");
    assert_eq!(assistant(&reader, &rows.conversation_id).content, "", "no write per delta");

    rec.emit(call("c1", 23, 1, 0));
    let a = assistant(&reader, &rows.conversation_id);
    assert_eq!(a.content, "Let me check the clock.", "tool boundary checkpoint");
    assert_eq!(a.status, MessageStatus::Streaming);
    assert_eq!(a.tool_calls.len(), 1);
    assert_eq!(a.tool_calls[0].status, ToolCallStatus::Pending);

    rec.emit(ChatEvent::ToolStarted { id: "c1".into() });
    assert_eq!(assistant(&reader, &rows.conversation_id).tool_calls[0].status, ToolCallStatus::Running);

    rec.emit(ChatEvent::ToolResult {
        images: Default::default(),
        id: "c1".into(),
        status: ToolStatus::Timeout,
        output: "took too long".into(),
        duration_ms: 30_000,
    });
    let c = assistant(&reader, &rows.conversation_id).tool_calls.remove(0);
    assert_eq!(c.status, ToolCallStatus::Timeout);
    assert_eq!(c.result.unwrap().output, "took too long");

    rec.emit(ChatEvent::Error {
        kind: switchboard_core::ErrorKind::Network,
        message: "connection reset".into(),
        retryable: true,
        detail: Some("tcp: os error 104".into()),
    });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Error, usage: Usage::default(), tool_calls_made: 1 });
    let a = assistant(&reader, &rows.conversation_id);
    assert_eq!(a.status, MessageStatus::Error);
    assert_eq!(a.finish_reason, Some(FinishReason::Error));
    let err = a.error.unwrap();
    assert_eq!((err.kind, err.message.as_str()), (switchboard_core::ErrorKind::Network, "connection reset"));
    assert_eq!(err.detail.as_deref(), Some("tcp: os error 104"), "the detail is kept for Details");
    assert!(rec.take_error().is_none());
}

#[test]
fn a_turn_killed_mid_answer_becomes_interrupted_on_reopen_keeping_checkpointed_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(dir.path());
    let rows = {
        let store = Store::open(&path).unwrap();
        let rows = store.begin_turn(None, "q", "mock", "m").unwrap();
        let rec = store.recorder(&rows.message_id);
        rec.emit(started(&rows));
        rec.emit(text("checkpointed"));
        rec.emit(call("c1", 12, 1, 0));
        rec.emit(ChatEvent::ToolStarted { id: "c1".into() });
        rec.emit(text(" and then the app died")); // within the second: allowed to be lost
        rows
        // no Done: the process "dies" (recorder and store dropped without flushing)
    };

    let store = Store::open(&path).unwrap();
    assert_eq!(store.recovered_on_open(), 1);
    let a = assistant(&store, &rows.conversation_id);
    assert_eq!(a.status, MessageStatus::Interrupted);
    assert_eq!(a.content, "checkpointed");
    assert_eq!(a.finish_reason, None);
    assert_eq!(a.tool_calls[0].status, ToolCallStatus::Cancelled, "a card must not spin forever");
    assert_eq!(a.tool_calls[0].result, None);

    // The next provider request still answers the call.
    assert_eq!(
        store.history(&rows.conversation_id).unwrap()[1..],
        [
            Message::Assistant {
                text: "checkpointed".into(),
                tool_calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "clock__now".into(),
                    arguments: r#"{"tz":"Europe/Paris"}"#.into()
                }],
                state: None
            },
            Message::Tool {
                images: Default::default(),
                call_id: "c1".into(),
                name: "clock__now".into(),
                content: INTERRUPTED_RESULT.into(),
                is_error: true
            },
        ]
    );
    drop(store);
    assert_eq!(Store::open(&path).unwrap().recovered_on_open(), 0, "recovery happens once");
}

#[test]
fn text_is_checkpointed_once_the_interval_has_passed_and_on_tick() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(dir.path());
    let store = Store::open(&path).unwrap();
    let reader = Store::open(&path).unwrap();
    let rows = store.begin_turn(None, "q", "mock", "m").unwrap();
    let rec = store.recorder(&rows.message_id).with_checkpoint_interval(Duration::from_millis(200));
    rec.emit(text("a"));
    rec.emit(ChatEvent::ReasoningDelta { text: "r".into() });
    assert_eq!(assistant(&reader, &rows.conversation_id).content, "");

    std::thread::sleep(Duration::from_millis(250));
    rec.emit(text("b")); // first delta after the interval writes everything so far
    let a = assistant(&reader, &rows.conversation_id);
    assert_eq!((a.content.as_str(), a.reasoning.as_str()), ("ab", "r"));

    rec.emit(text("c")); // right after a checkpoint: buffered
    assert_eq!(assistant(&reader, &rows.conversation_id).content, "ab");
    rec.tick(); // the engine ticks every second even when no event arrives
    assert_eq!(assistant(&reader, &rows.conversation_id).content, "abc");
}

#[test]
fn the_default_interval_is_one_second() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(dir.path());
    let store = Store::open(&path).unwrap();
    let reader = Store::open(&path).unwrap();
    let rows = store.begin_turn(None, "q", "mock", "m").unwrap();
    let rec = store.recorder(&rows.message_id);
    rec.emit(text("x"));
    std::thread::sleep(Duration::from_millis(500));
    rec.emit(text("y"));
    assert_eq!(assistant(&reader, &rows.conversation_id).content, "", "under a second: buffered");
    std::thread::sleep(Duration::from_millis(600));
    rec.emit(text("z"));
    assert_eq!(assistant(&reader, &rows.conversation_id).content, "xyz", "over a second: written");
}

#[test]
fn two_thousand_deltas_cost_at_most_a_couple_of_writes() {
    let store = Store::open_in_memory().unwrap();
    let rows = store.begin_turn(None, "q", "mock", "m").unwrap();
    let rec = store.recorder(&rows.message_id);
    let before = store.total_changes();
    for i in 0..2000 {
        rec.emit(text(if i % 2 == 0 { "é" } else { "👋" }));
    }
    let during = store.total_changes() - before;
    assert!(during <= 2, "{during} rows written for 2000 deltas");
    rec.flush();
    // One row: a streaming answer's checkpoints never touch the search index.
    assert_eq!(store.total_changes() - before, during + 1);
    assert_eq!(assistant(&store, &rows.conversation_id).content.chars().count(), 2000);
}

#[test]
fn cancelled_turns_keep_their_text_and_status() {
    let store = Store::open_in_memory().unwrap();
    let rows = store.begin_turn(None, "q", "mock", "m").unwrap();
    let rec = store.recorder(&rows.message_id);
    rec.emit(text("partial"));
    rec.emit(call("c1", 7, 1, 0));
    rec.emit(ChatEvent::ToolResult {
        images: Default::default(),
        id: "c1".into(),
        status: ToolStatus::Cancelled,
        output: "Stopped".into(),
        duration_ms: 0,
    });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Cancelled, usage: Usage::default(), tool_calls_made: 1 });
    let a = assistant(&store, &rows.conversation_id);
    assert_eq!(a.status, MessageStatus::Cancelled);
    assert_eq!(a.content, "partial");
    assert_eq!(a.tool_calls[0].status, ToolCallStatus::Cancelled);
    assert!(rec.take_error().is_none());
}

#[test]
fn calls_are_ordered_by_iteration_then_index_and_a_repeated_result_replaces_the_first() {
    let store = Store::open_in_memory().unwrap();
    let rows = store.begin_turn(None, "q", "mock", "m").unwrap();
    let rec = store.recorder(&rows.message_id);
    rec.emit(text("ab"));
    rec.emit(call("x2", 2, 1, 1));
    rec.emit(call("x1", 2, 1, 0));
    rec.emit(text("cd"));
    rec.emit(call("y1", 4, 2, 0));
    for id in ["x1", "x2", "y1"] {
        rec.emit(ChatEvent::ToolResult {
            images: Default::default(),
            id: id.into(),
            status: ToolStatus::Ok,
            output: format!("{id}-1"),
            duration_ms: 1,
        });
    }
    rec.emit(ChatEvent::ToolResult {
        images: Default::default(),
        id: "x1".into(),
        status: ToolStatus::Error,
        output: "x1-2".into(),
        duration_ms: 2,
    });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 3 });
    assert!(rec.take_error().is_none());
    let a = assistant(&store, &rows.conversation_id);
    let ids: Vec<_> = a.tool_calls.iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["x1", "x2", "y1"]);
    assert_eq!(a.tool_calls[0].status, ToolCallStatus::Error);
    assert_eq!(a.tool_calls[0].result.as_ref().unwrap().output, "x1-2");

    let h = store.history(&rows.conversation_id).unwrap();
    let shape: Vec<String> = h
        .iter()
        .map(|m| match m {
            Message::User { .. } => "user".to_owned(),
            Message::Assistant { text, tool_calls, .. } => format!("a:{text}:{}", tool_calls.len()),
            Message::Tool { call_id, .. } => format!("t:{call_id}"),
        })
        .collect();
    assert_eq!(shape, ["user", "a:ab:2", "t:x1", "t:x2", "a:cd:1", "t:y1"]);
}

#[test]
fn a_result_for_an_unknown_call_is_reported_not_panicked() {
    let store = Store::open_in_memory().unwrap();
    let rows = store.begin_turn(None, "q", "mock", "m").unwrap();
    let rec = store.recorder(&rows.message_id);
    rec.emit(ChatEvent::ToolResult {
        images: Default::default(),
        id: "ghost".into(),
        status: ToolStatus::Ok,
        output: "?".into(),
        duration_ms: 1,
    });
    let err = rec.take_error().expect("kept");
    assert!(err.to_string().contains("ghost"), "{err}");
    // The recorder keeps working after a failure.
    rec.emit(text("still here"));
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
    assert_eq!(assistant(&store, &rows.conversation_id).content, "still here");
}

#[test]
fn empty_assistant_messages_are_left_out_of_history() {
    let store = Store::open_in_memory().unwrap();
    let rows = store.begin_turn(None, "first", "mock", "m").unwrap();
    let rec = store.recorder(&rows.message_id);
    rec.emit(ChatEvent::Error {
        kind: switchboard_core::ErrorKind::Auth,
        message: "bad key".into(),
        retryable: false,
        detail: None,
    });
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Error, usage: Usage::default(), tool_calls_made: 0 });
    store.begin_turn(Some(&rows.conversation_id), "second", "mock", "m").unwrap();
    assert_eq!(store.history(&rows.conversation_id).unwrap(), vec![Message::user("first"), Message::user("second")]);
}

#[test]
fn answering_a_question_again_keeps_the_earlier_answer_as_a_version() {
    let store = switchboard_store::Store::open_in_memory().unwrap();
    let first = store.begin_turn(None, "first question", "p", "m").unwrap();
    let rec = store.recorder(&first.message_id);
    rec.emit(text("first answer"));
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
    let second = store
        .begin_turn_with(
            Some(&first.conversation_id),
            "second question",
            "p2",
            "m2",
            Some(r#"{"useTools":false}"#),
            &[],
        )
        .unwrap();
    let busy = store.begin_answer(&first.conversation_id, &second.user_message_id, ("p", "m"), None);
    assert!(matches!(busy, Err(switchboard_store::Error::Busy(_))), "a streaming answer blocks regenerate");
    let rec = store.recorder(&second.message_id);
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Error, usage: Usage::default(), tool_calls_made: 0 });
    let question = store.last_question(&first.conversation_id).unwrap();
    assert_eq!(
        question,
        switchboard_store::Question {
            id: second.user_message_id.clone(),
            text: "second question".into(),
            turn_options: Some(r#"{"useTools":false}"#.into()),
            provider: Some("p2".into()),
            model: Some("m2".into()),
            attachments: Vec::new(),
        }
    );
    let again = store.begin_answer(&first.conversation_id, &question.id, ("p3", "m3"), None).unwrap();
    let shown = store.messages(&first.conversation_id).unwrap();
    let contents: Vec<&str> = shown.iter().map(|m| m.content.as_str()).collect();
    assert_eq!(contents, ["first question", "first answer", "second question", ""]);
    assert_eq!(shown[3].versions, [second.message_id.clone(), again.message_id.clone()]);
    assert_eq!(store.question(&first.conversation_id, &again.message_id).unwrap().model.as_deref(), Some("m3"));
}

/// A sub-agent's event inside call `id`, as the agent tool forwards it.
fn nested(id: &str, instance: &str, event: ChatEvent) -> ChatEvent {
    ChatEvent::ToolProgress { id: id.into(), instance: Some(instance.into()), text: None, event: Some(Box::new(event)) }
}

#[test]
fn what_sub_agents_did_inside_a_call_is_kept_with_it_and_reloads_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(dir.path());
    let inner_call = ChatEvent::ToolCall {
        id: "c1".into(),
        name: "fetch".into(),
        source: ToolSource::Builtin,
        arguments: "{}".into(),
        text_offset: 3,
        iteration: 1,
        index: 0,
    };
    let rows = {
        let store = Store::open(&path).unwrap();
        let rows = store.begin_turn(None, "Research both", "mock", "m-1").unwrap();
        store.set_agent(&rows.conversation_id, Some("Lead")).unwrap();
        let sink: Arc<dyn EventSink> = Arc::new(store.recorder(&rows.message_id));
        for e in [
            started(&rows),
            call("call_1", 0, 1, 0),
            nested("call_1", "Scout[1]", text("One")),
            nested("call_1", "Scout[2]", text("Two")),
            nested("call_1", "Scout[1]", text(" more")),
            nested("call_1", "Scout[1]", text(" text")),
            nested("call_1", "Scout[1]", inner_call.clone()),
            // A grandchild's text, nested twice, merges the same way.
            nested("call_1", "Scout[1]", nested("c1", "Deep[1]", text("a"))),
            nested("call_1", "Scout[1]", nested("c1", "Deep[1]", text("b"))),
            nested(
                "call_1",
                "Scout[1]",
                ChatEvent::ProviderState {
                    iteration: 1,
                    state: switchboard_core::ProviderState {
                        api: "x".into(),
                        origin: "y".into(),
                        data: serde_json::json!({}),
                    },
                },
            ),
            ChatEvent::ToolResult {
                id: "call_1".into(),
                status: ToolStatus::Ok,
                output: "One more text / Two".into(),
                duration_ms: 9,
                images: None,
            },
            text("Done."),
            ChatEvent::Done { finish_reason: FinishReason::Stop, usage: usage(1, 1), tool_calls_made: 1 },
        ] {
            sink.emit(e);
        }
        rows
    };
    let store = Store::open(&path).unwrap();
    assert_eq!(store.agent(&rows.conversation_id).unwrap().as_deref(), Some("Lead"));
    let m = assistant(&store, &rows.conversation_id);
    let log: Vec<(String, ChatEvent)> =
        m.tool_calls[0].nested.iter().map(|n| (n.instance.clone(), n.event.clone())).collect();
    assert_eq!(
        log,
        [
            ("Scout[1]".to_owned(), text("One")),
            ("Scout[2]".to_owned(), text("Two")),
            ("Scout[1]".to_owned(), text(" more text")),
            ("Scout[1]".to_owned(), inner_call),
            ("Scout[1]".to_owned(), nested("c1", "Deep[1]", text("ab"))),
        ],
        "text runs merge per instance, provider state is not kept"
    );
    assert_eq!(m.tool_calls[0].result.as_ref().unwrap().output, "One more text / Two");
    store.set_agent(&rows.conversation_id, None).unwrap();
    assert_eq!(store.agent(&rows.conversation_id).unwrap(), None);
    assert!(store.set_agent("nope", Some("Lead")).is_err());
}

/// A turn that paused at a budget and was stopped there: the result of the round before the
/// pause, every request's usage and the pause's notices are stored; a restart while paused shows
/// the pause and keeps what was spent until then.
#[test]
fn a_budget_pause_loses_nothing_spent_stopped_or_killed() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(dir.path());
    let pause = ChatEvent::BudgetPaused {
        id: "m/budget-1".into(),
        kind: switchboard_core::BudgetKind::Cost,
        scope: switchboard_core::BudgetScope::Turn,
        spent: switchboard_core::BudgetSpent { steps: 1, elapsed_ms: 900, cost_usd: 0.02, cost_unknown: false },
        limit: 0.02,
        next_cost_usd: Some(0.001),
    };
    let paused = ChatEvent::Notice { kind: NoticeKind::Budget, message: "Paused before the next request.".into() };
    let (stopped, killed) = {
        let store = Store::open(&path).unwrap();
        let stopped = store.begin_turn(None, "Spend a little", "mock", "m-1").unwrap();
        let sink: Arc<dyn EventSink> = Arc::new(store.recorder(&stopped.message_id));
        for e in [
            started(&stopped),
            call("call_1", 0, 1, 0),
            ChatEvent::Usage {
                usage: usage(10, 5),
                total: usage(10, 5),
                request: 1,
                cost_usd: None,
                estimated: false,
                agent_call: None,
            },
            ChatEvent::ToolResult {
                images: None,
                id: "call_1".into(),
                status: ToolStatus::Ok,
                output: "12:00".into(),
                duration_ms: 5,
            },
            pause.clone(),
            paused.clone(),
            ChatEvent::BudgetResolved { id: "m/budget-1".into(), choice: switchboard_core::BudgetChoice::Stop },
            ChatEvent::Notice { kind: NoticeKind::Budget, message: "You chose to stop.".into() },
            ChatEvent::Done { finish_reason: FinishReason::Budget, usage: usage(10, 5), tool_calls_made: 1 },
        ] {
            sink.emit(e);
        }
        // Another turn is killed while it waits at a pause: no `done` ever comes.
        let killed = store.begin_turn(None, "Spend more", "mock", "m-1").unwrap();
        let sink: Arc<dyn EventSink> = Arc::new(store.recorder(&killed.message_id));
        for e in [
            started(&killed),
            text("Looking"),
            call("call_2", 7, 1, 0),
            ChatEvent::Usage {
                usage: usage(20, 7),
                total: usage(20, 7),
                request: 1,
                cost_usd: None,
                estimated: false,
                agent_call: None,
            },
            pause,
            paused,
        ] {
            sink.emit(e);
        }
        (stopped, killed)
    };

    let store = Store::open(&path).unwrap();
    let a = assistant(&store, &stopped.conversation_id);
    assert_eq!((a.status, a.finish_reason), (MessageStatus::Complete, Some(FinishReason::Budget)));
    assert_eq!(a.usage, usage(10, 5));
    assert_eq!(
        a.notices.iter().map(|n| (n.kind, n.message.as_str())).collect::<Vec<_>>(),
        [(NoticeKind::Budget, "Paused before the next request."), (NoticeKind::Budget, "You chose to stop.")]
    );
    let k = assistant(&store, &killed.conversation_id);
    assert_eq!(k.status, MessageStatus::Interrupted);
    assert_eq!(k.content, "Looking");
    assert_eq!(k.usage, usage(20, 7), "what was spent before the pause is kept");
    assert_eq!(k.notices.len(), 1, "a restart shows the pause");
}

/// Compaction adds rows and never changes a message or result: the next turn's history applies
/// the latest compaction on the path that is not undone, pins included; undo sends it whole.
#[test]
fn a_compaction_is_a_row_the_next_turn_applies_and_undo_leaves_out() {
    use switchboard_core::{Compaction, CompactionReason};
    let store = Store::open_in_memory().unwrap();
    let rows = store.begin_turn(None, "Find the facts", "mock", "m-1").unwrap();
    let rec = store.recorder(&rows.message_id);
    let big = "x".repeat(5000);
    for e in [started(&rows), text("A"), call("c1", 1, 1, 0)] {
        rec.emit(e);
    }
    rec.emit(ChatEvent::ToolResult {
        images: None,
        id: "c1".into(),
        status: ToolStatus::Ok,
        output: big.clone(),
        duration_ms: 1,
    });
    rec.emit(text("B"));
    rec.emit(call("c2", 2, 2, 0));
    rec.emit(ChatEvent::ToolResult {
        images: None,
        id: "c2".into(),
        status: ToolStatus::Ok,
        output: "small".into(),
        duration_ms: 1,
    });
    let compaction = Compaction {
        covered: 3,
        summary: Some("c1 found x".into()),
        stubbed: ["c1".to_owned()].into(),
        quoted: vec![0],
    };
    rec.emit(ChatEvent::Compacted {
        compaction: compaction.clone(),
        tokens_before: 900,
        tokens_after: 100,
        summariser: Some("m-1".into()),
        usage: Some(usage(10, 5)),
        summariser_fallback: Some("The profile 'cheap' no longer exists".into()),
        reason: CompactionReason::Threshold,
    });
    rec.emit(text("done"));
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: usage(1, 1), tool_calls_made: 2 });
    assert!(rec.take_error().is_none());

    // Every original result is still stored and shown.
    let answer = assistant(&store, &rows.conversation_id);
    assert_eq!(answer.tool_calls[0].result.as_ref().unwrap().output, big);

    let next = store.begin_turn(Some(&rows.conversation_id), "And then?", "mock", "m-1").unwrap();
    let turn = store.turn_history(&next.conversation_id, &|_| None, usize::MAX).unwrap();
    assert_eq!(turn.compaction, compaction);
    assert_eq!(turn.messages, store.history(&next.conversation_id).unwrap(), "the history itself is whole");
    let sent = turn.compaction.apply(&turn.messages, &turn.pinned);
    assert!(
        matches!(&sent[0], Message::User { text, .. } if text.contains("c1 found x") && text.ends_with("Find the facts"))
    );

    let listed = store.compactions(&next.conversation_id).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].through_message_id.as_deref(), Some(rows.message_id.as_str()));
    assert_eq!((listed[0].tokens_before, listed[0].summariser.as_deref()), (900, Some("m-1")));
    assert_eq!(listed[0].summariser_fallback.as_deref(), Some("The profile 'cheap' no longer exists"), "kept");
    assert_eq!(
        store.compaction(&next.conversation_id, &listed[0].id).unwrap().compaction.summary.as_deref(),
        Some("c1 found x")
    );

    store.set_compaction_undone(&next.conversation_id, &listed[0].id, true).unwrap();
    let turn = store.turn_history(&next.conversation_id, &|_| None, usize::MAX).unwrap();
    assert!(turn.compaction.is_empty(), "undone: the full history is sent");
    assert!(store.compactions(&next.conversation_id).unwrap()[0].undone);

    store.set_message_pinned(&next.conversation_id, &rows.user_message_id, true).unwrap();
    assert_eq!(store.turn_history(&next.conversation_id, &|_| None, usize::MAX).unwrap().pinned, [0]);
    assert!(store.messages(&next.conversation_id).unwrap()[0].pinned);
    assert!(store.set_message_pinned(&next.conversation_id, "nope", true).is_err());

    // Another branch (the answer regenerated) does not carry the compaction.
    store.set_compaction_undone(&next.conversation_id, &listed[0].id, false).unwrap();
    let done = ChatEvent::Done { finish_reason: FinishReason::Stop, usage: usage(1, 1), tool_calls_made: 0 };
    store.recorder(&next.message_id).emit(done);
    store.begin_answer(&rows.conversation_id, &rows.user_message_id, ("mock", "m-1"), None).unwrap();
    assert!(store.turn_history(&rows.conversation_id, &|_| None, usize::MAX).unwrap().compaction.is_empty());
}
