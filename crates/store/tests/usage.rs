//! Spend as data: each request's row as the recorder writes it, and the details, totals and
//! reports read back from the rows (store::usage).

use switchboard_core::{ChatEvent, EventSink, FinishReason, ToolSource, ToolStatus, Usage};
use switchboard_store::{ProviderProfile, Recorder, Store, TurnRows, UsageGrouping, UsageQuery, UsageTotals};

fn usage(p: u64, c: u64, reasoning: u64, cached: u64) -> Usage {
    Usage {
        prompt_tokens: p,
        completion_tokens: c,
        reasoning_tokens: reasoning,
        cached_tokens: cached,
        cache_write_tokens: 0,
    }
}

fn spent(usage: Usage, request: u32, cost_usd: Option<f64>) -> ChatEvent {
    ChatEvent::Usage { usage, total: Usage::default(), request, cost_usd, estimated: false, agent_call: None }
}

fn started(rows: &TurnRows, provider: &str, model: &str) -> ChatEvent {
    ChatEvent::Started {
        conversation_id: rows.conversation_id.clone(),
        message_id: rows.message_id.clone(),
        user_message_id: rows.user_message_id.clone(),
        provider: provider.into(),
        model: model.into(),
    }
}

fn call(id: &str, iteration: u32, index: u32) -> ChatEvent {
    ChatEvent::ToolCall {
        id: id.into(),
        name: "fetch".into(),
        source: ToolSource::Builtin,
        arguments: "{}".into(),
        text_offset: 0,
        iteration,
        index,
    }
}

fn result(id: &str, chars: usize) -> ChatEvent {
    ChatEvent::ToolResult {
        id: id.into(),
        status: ToolStatus::Ok,
        output: "x".repeat(chars),
        duration_ms: 1,
        images: None,
    }
}

/// `event` as a sub-agent's, nested under `call`'s instance `instance` (then deeper ones).
fn nested(event: ChatEvent, path: &[(&str, &str)]) -> ChatEvent {
    path.iter().rev().fold(event, |event, (id, instance)| ChatEvent::ToolProgress {
        id: (*id).into(),
        instance: Some((*instance).into()),
        text: None,
        event: Some(Box::new(event)),
    })
}

fn store_with_profiles() -> Store {
    let store = Store::open_in_memory().unwrap();
    for (name, kind) in [("main", "openai"), ("cheap", "anthropic")] {
        store
            .upsert_provider(&ProviderProfile {
                name: name.into(),
                kind: kind.into(),
                base_url: "http://127.0.0.1:1".into(),
                model: None,
                options: Default::default(),
            })
            .unwrap();
    }
    store
}

fn emit_all(rec: &Recorder, events: Vec<ChatEvent>) {
    for e in events {
        rec.emit(e);
    }
    assert!(rec.take_error().is_none());
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// An answer: request 1 decides `call_1` (a 400-char result) and `agent_1`, a sub-agent whose
/// run makes two requests and calls a grandchild (one request, price unknown); request 2
/// answers. A second answer in the same chat makes one request.
#[test]
fn requests_sub_agent_runs_and_re_sent_results_are_attributed_from_the_rows() {
    let store = store_with_profiles();
    let first = store.begin_turn(None, "research", "main", "big").unwrap();
    let rec = store.recorder(&first.message_id);
    let scout = [("agent_1", "Scout[0]")];
    let deep = [("agent_1", "Scout[0]"), ("c9", "Helper[0]")];
    emit_all(
        &rec,
        vec![
            started(&first, "main", "big"),
            call("call_1", 1, 0),
            call("agent_1", 1, 1),
            spent(usage(1000, 100, 40, 600), 1, Some(0.01)),
            result("call_1", 400),
            nested(started(&first, "cheap", "small"), &scout),
            nested(call("c9", 1, 0), &scout),
            nested(spent(usage(200, 20, 0, 0), 1, Some(0.001)), &scout),
            nested(started(&first, "cheap", "tiny"), &deep),
            nested(spent(usage(50, 5, 0, 0), 1, None), &deep),
            // The child's total of its own agent call: not a request, no row.
            nested(
                ChatEvent::Usage {
                    usage: usage(50, 5, 0, 0),
                    total: Usage::default(),
                    request: 1,
                    cost_usd: None,
                    estimated: false,
                    agent_call: Some("c9".into()),
                },
                &scout,
            ),
            nested(spent(usage(300, 30, 0, 100), 2, Some(0.002)), &scout),
            ChatEvent::Usage {
                usage: usage(550, 55, 0, 100),
                total: Usage::default(),
                request: 1,
                cost_usd: None,
                estimated: false,
                agent_call: Some("agent_1".into()),
            },
            result("agent_1", 40),
            spent(usage(1500, 50, 0, 1000), 2, Some(0.02)),
            ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 2 },
        ],
    );
    let second = store.begin_turn(Some(&first.conversation_id), "more", "main", "big").unwrap();
    let rec = store.recorder(&second.message_id);
    emit_all(&rec, vec![started(&second, "main", "big"), spent(usage(2000, 10, 0, 1500), 1, Some(0.005))]);
    // Stopped: no `done` ever came, the request is kept all the same.

    let details = store.message_usage(&first.message_id).unwrap();
    let requests: Vec<_> = details
        .requests
        .iter()
        .map(|r| (r.request, r.run_path.as_str(), r.profile.as_str(), r.api.as_str(), r.model.as_str()))
        .collect();
    assert_eq!(
        requests,
        [
            (1, "", "main", "openai", "big"),
            (1, "agent_1/Scout[0]", "cheap", "anthropic", "small"),
            (1, "agent_1/Scout[0]/c9/Helper[0]", "cheap", "anthropic", "tiny"),
            (2, "agent_1/Scout[0]", "cheap", "anthropic", "small"),
            (2, "", "main", "openai", "big"),
        ]
    );
    assert_eq!(details.requests[0].decided, ["call_1", "agent_1"]);
    assert_eq!(details.requests[1].decided, ["c9"], "the child's own calls, in its run");
    assert!(details.requests[3].decided.is_empty() && details.requests[4].decided.is_empty());
    assert_eq!(details.requests[1].call_id.as_deref(), Some("agent_1"));
    assert_eq!(details.requests[2].agent.as_deref(), Some("Helper"));
    assert_eq!(details.requests[0].call_id, None);
    // Totals: every request once, sub-agents' included; the unknown price counted apart.
    let t = details.total;
    assert_eq!(
        (t.requests, t.prompt_tokens, t.completion_tokens, t.reasoning_tokens, t.cached_tokens),
        (5, 3050, 205, 40, 1700)
    );
    assert!(close(t.cost_usd, 0.033), "{}", t.cost_usd);
    assert_eq!(t.unpriced_requests, 1);
    // Each run with its children.
    let runs: Vec<_> = details.runs.iter().map(|r| (r.run_path.as_str(), r.agent.as_str(), r.total.requests)).collect();
    assert_eq!(runs, [("agent_1/Scout[0]", "Scout", 3), ("agent_1/Scout[0]/c9/Helper[0]", "Helper", 1)]);
    assert_eq!(details.runs[0].total.prompt_tokens, 550);
    assert_eq!(details.runs[0].total.unpriced_requests, 1);
    // call_1's result (400 chars, ≈ 100 tokens) went out again with request 2 and the next answer.
    let resent: Vec<_> =
        details.resends.iter().map(|r| (r.call_id.as_str(), r.resent_times, r.approx_tokens)).collect();
    assert_eq!(resent, [("call_1", 2, 200), ("agent_1", 2, 20)]);
    // The next answer's results are sent by nothing later.
    assert!(store.message_usage(&second.message_id).unwrap().resends.is_empty());

    let conversation = store.conversation_usage(&first.conversation_id).unwrap();
    assert_eq!(conversation.total.requests, 6);
    assert_eq!(conversation.total.prompt_tokens, 5050);
    assert!(close(conversation.total.cost_usd, 0.038));
    assert_eq!(conversation.total.unpriced_requests, 1);
    let per: Vec<_> = conversation.messages.iter().map(|m| (m.message_id.clone(), m.total.requests)).collect();
    assert_eq!(per, [(first.message_id.clone(), 5), (second.message_id.clone(), 1)]);

    // Reports.
    let report = |by, split| {
        store.usage_report(&UsageQuery { by, split, since: None, until: None, utc_offset_minutes: None }).unwrap()
    };
    let by_model = report(UsageGrouping::Model, None);
    let models: Vec<_> = by_model.groups.iter().map(|g| (g.key.as_str(), g.total.requests)).collect();
    assert_eq!(models, [("big", 3), ("small", 2), ("tiny", 1)], "the costliest first; unknown cost last");
    assert_eq!(by_model.total, conversation.total);
    let by_profile = report(UsageGrouping::Profile, None);
    assert_eq!(by_profile.groups.iter().map(|g| g.key.as_str()).collect::<Vec<_>>(), ["main", "cheap"]);
    let by_agent = report(UsageGrouping::Agent, None);
    let agents: Vec<_> = by_agent.groups.iter().map(|g| (g.key.as_str(), g.total.requests)).collect();
    assert_eq!(agents, [("", 3), ("Scout", 2), ("Helper", 1)]);
    let by_conversation = report(UsageGrouping::Conversation, None);
    assert_eq!(by_conversation.groups.len(), 1);
    assert_eq!(by_conversation.groups[0].label, "research");
    let by_day = report(UsageGrouping::Day, Some(UsageGrouping::Model));
    assert_eq!(by_day.groups.len(), 3, "one day, three models: {by_day:#?}");
    assert!(by_day.groups.iter().all(|g| g.key.len() == 10 && g.sub.is_some()));
    // A period before any request holds nothing.
    let none = store
        .usage_report(&UsageQuery {
            by: UsageGrouping::Day,
            split: None,
            since: None,
            until: Some(0),
            utc_offset_minutes: None,
        })
        .unwrap();
    assert!(none.groups.is_empty());
    assert_eq!(none.total, UsageTotals::default());

    // Deleting the conversation deletes its requests.
    store.delete(&first.conversation_id).unwrap();
    assert_eq!(report(UsageGrouping::Day, None).total.requests, 0);
}

#[test]
fn unknown_messages_and_conversations_are_errors_not_empty_spend() {
    let store = Store::open_in_memory().unwrap();
    assert!(store.message_usage("nope").is_err());
    assert!(store.conversation_usage("nope").is_err());
}
