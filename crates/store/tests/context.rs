//! The last `context` count of each answer is kept with the prompt tokens the provider reported
//! for that request, so a reopened chat's meter and its next turn start from it.

use switchboard_core::{ChatEvent, ContextBreakdown, EventSink, FinishReason, Usage};
use switchboard_store::Store;

fn context(used_tokens: u64, estimate: u64) -> ChatEvent {
    let breakdown = ContextBreakdown { instructions: 10, tools: 20, history: used_tokens - 30, ..Default::default() };
    ChatEvent::Context { used_tokens, window: Some(128_000), breakdown, estimated: true, estimate }
}

fn usage(prompt_tokens: u64) -> ChatEvent {
    let usage = Usage { prompt_tokens, completion_tokens: 3, ..Usage::default() };
    ChatEvent::Usage { usage, total: usage, request: 1, cost_usd: None, estimated: false, agent_call: None }
}

#[test]
fn the_last_request_of_the_latest_answer_is_kept_with_its_report() {
    let store = Store::open_in_memory().unwrap();
    let a = store.begin_turn(None, "q1", "p", "gpt-4o").unwrap();
    assert_eq!(store.last_context(&a.conversation_id).unwrap(), None);
    let rec = store.recorder(&a.message_id);
    rec.emit(context(100, 100));
    rec.emit(usage(110));
    rec.emit(context(150, 140));
    rec.emit(usage(160));
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
    let c = store.last_context(&a.conversation_id).unwrap().unwrap();
    assert_eq!((c.used_tokens, c.estimate, c.reported_prompt), (150, 140, Some(160)));
    assert_eq!((c.window, c.breakdown.tools, c.model.as_deref()), (Some(128_000), 20, Some("gpt-4o")));

    // The next answer's count replaces it; an absurd report is not kept.
    let b = store.begin_turn(Some(&a.conversation_id), "q2", "p", "gpt-4o").unwrap();
    let rec = store.recorder(&b.message_id);
    rec.emit(context(300, 290));
    rec.emit(usage(0));
    let c = store.last_context(&a.conversation_id).unwrap().unwrap();
    assert_eq!((c.message_id.as_str(), c.used_tokens, c.reported_prompt), (b.message_id.as_str(), 300, None));
    assert!(rec.take_error().is_none());

    // It goes with its conversation.
    store.delete(&a.conversation_id).unwrap();
    assert_eq!(store.last_context(&a.conversation_id).unwrap(), None);
}

#[test]
fn token_counts_are_kept_per_conversation_and_tokenizer_and_go_with_the_conversation() {
    use switchboard_core::TextKey;
    let store = Store::open_in_memory().unwrap();
    let a = store.begin_turn(None, "q1", "p", "gpt-4o").unwrap();
    let b = store.begin_turn(None, "q2", "p", "gpt-4o").unwrap();
    let big = TextKey { len: u64::MAX, hash: u64::MAX - 1 };
    let counts = [(TextKey::of("hello world"), 2), (big, 7)];
    store.put_token_counts(&a.conversation_id, "o200k_base", &counts).unwrap();
    // Stored again: nothing changes.
    store.put_token_counts(&a.conversation_id, "o200k_base", &counts[..1]).unwrap();
    let mut read = store.token_counts(&a.conversation_id, "o200k_base").unwrap();
    read.sort_by_key(|(k, _)| k.len);
    assert_eq!(read, counts.to_vec());
    assert!(store.token_counts(&a.conversation_id, "cl100k_base").unwrap().is_empty());
    assert!(store.token_counts(&b.conversation_id, "o200k_base").unwrap().is_empty());
    assert!(store.put_token_counts("nope", "o200k_base", &counts).is_err());
    store.delete(&a.conversation_id).unwrap();
    assert!(store.token_counts(&a.conversation_id, "o200k_base").unwrap().is_empty());
}
