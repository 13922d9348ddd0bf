//! Compaction decided by the loop: stubs, then a summary written by a model, between tool rounds
//! of one turn; a provider's "too long" refusal; and the bad inputs (a summariser that fails or
//! says nothing, an unknown window, a stop while summarising, a message larger than the window).

mod support;

use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use support::*;
use switchboard_core::compaction::SUMMARY_PROMPT;
use switchboard_core::provider::{ProviderEvent, StopReason};
use switchboard_core::{
    ChatEvent, Compaction, CompactionReason, ContextLimits, ErrorKind, FinishReason, Message, NoticeKind,
    ProviderError, ProviderRequest, ToolDef, ToolOutput,
};

/// Returns `fact <n>` and then 8,000 chars of filler.
fn big() -> TestTool {
    let schema = json!({ "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"] });
    TestTool::new(ToolDef::new("big", "A long page.", schema), |args, _ctx| async move {
        Ok(ToolOutput::text(format!(
            "fact {} is {}\n{}",
            args["n"],
            1000 + args["n"].as_u64().unwrap_or(0),
            "lorem ipsum ".repeat(700)
        )))
    })
}

/// A scripted summariser.
type Summariser = dyn Fn(&ProviderRequest) -> Vec<Item> + Send + Sync;

fn is_summariser(r: &ProviderRequest) -> bool {
    r.system.as_deref() == Some(SUMMARY_PROMPT)
}

/// A model that calls `big` for `rounds` rounds, then answers; asked for a summary it answers
/// `summary(request)`.
fn model(
    rounds: usize,
    summary: impl Fn(&ProviderRequest) -> Vec<Item> + Send + Sync + Clone + 'static,
) -> Vec<Response> {
    let round = Arc::new(AtomicUsize::new(0));
    (0..rounds * 3 + 10)
        .map(|_| {
            let round = Arc::clone(&round);
            let summary = summary.clone();
            Response::Dynamic(Box::new(move |r: &ProviderRequest| {
                if is_summariser(r) {
                    return summary(r);
                }
                let n = round.fetch_add(1, Ordering::SeqCst);
                if n < rounds {
                    vec![
                        Ok(ProviderEvent::ToolCall {
                            call: switchboard_core::ToolCall {
                                id: format!("c{n}"),
                                name: "big".into(),
                                arguments: format!("{{\"n\":{n}}}"),
                            },
                            text_chars_before: 0,
                        }),
                        finish(StopReason::ToolCalls),
                    ]
                } else {
                    vec![delta("done"), finish(StopReason::Stop)]
                }
            }))
        })
        .collect()
}

fn summary_of(text: &'static str) -> impl Fn(&ProviderRequest) -> Vec<Item> + Send + Sync + Clone + 'static {
    move |_| vec![delta(text), finish(StopReason::Stop)]
}

fn harness(kit: &Kit, window: Option<u64>) -> Harness {
    let mut h = Harness::new(kit);
    h.options.max_iterations = Some(40);
    h.options.context = ContextLimits { window, max_output: Some(500), compact_at: 0.8, window_assumed: false };
    h
}

fn compactions(ran: &Ran) -> Vec<(Compaction, CompactionReason, Option<String>)> {
    ran.events
        .iter()
        .filter_map(|e| match e {
            ChatEvent::Compacted { compaction, reason, summariser, .. } => {
                Some((compaction.clone(), *reason, summariser.clone()))
            }
            _ => None,
        })
        .collect()
}

fn sent(r: &ProviderRequest) -> usize {
    switchboard_core::compaction::estimate(r) as usize
}

#[tokio::test]
async fn a_long_tool_loop_compacts_between_rounds_and_every_request_fits() {
    let kit = Kit::new([big()]);
    let h = harness(&kit, Some(4000));
    // A summary written in pieces keeps what the earlier pieces found (the summary so far).
    let provider = ScriptedProvider::new(model(20, |r: &ProviderRequest| {
        let Message::User { text, .. } = &r.messages[0] else { panic!() };
        let summary = if text.contains("fact 1 is 1001") { "Round 2 found: fact 1 is 1001." } else { "Nothing yet." };
        vec![delta(summary), Ok(ProviderEvent::Usage(USAGE)), finish(StopReason::Stop)]
    }));
    let ran = h.run(&provider).await;
    assert_eq!(ran.finish_reason(), FinishReason::Stop, "{:?}", ran.events.last());
    assert_eq!(ran.results().len(), 20);
    let limit = switchboard_core::compaction::threshold(4000, Some(500), 0.8) as usize;
    for r in ran.requests.iter().filter(|r| !is_summariser(r)) {
        assert!(sent(r) <= limit, "a request of {} tokens passed {limit}", sent(r));
    }
    let done = compactions(&ran);
    assert!(done.iter().any(|(c, _, s)| c.summary.is_none() && !c.stubbed.is_empty() && s.is_none()), "stubs first");
    let (with_summary, reason, by) = done.iter().find(|(c, ..)| c.summary.is_some()).expect("then a summary");
    assert_eq!((*reason, by.as_deref()), (CompactionReason::Threshold, Some(MODEL)));
    assert!(with_summary.quoted.contains(&0), "the turn's question stays verbatim");
    // Every later request starts with the summary, the question quoted after it.
    let last = ran.requests.iter().rfind(|r| !is_summariser(r)).unwrap();
    let Message::User { text, .. } = &last.messages[0] else { panic!() };
    assert!(text.contains("fact 1 is 1001") && text.ends_with(USER_TEXT), "{text}");
    // Stubs name the tool that reads the whole result back.
    assert!(
        last.messages
            .iter()
            .any(|m| matches!(m, Message::Tool { content, .. } if content.contains("read_tool_result")))
    );
    // The summary cost counts toward the turn.
    assert!(ran.outcome.usage.prompt_tokens >= USAGE.prompt_tokens);
}

#[tokio::test]
async fn a_summariser_with_a_smaller_window_gets_pieces_that_fit_it_and_the_fallback_is_told() {
    // Results too short to stub: only a summary makes room.
    let schema = json!({ "type": "object", "properties": { "n": { "type": "integer" } }, "required": ["n"] });
    let short = TestTool::new(ToolDef::new("big", "A short page.", schema), |args, _ctx| async move {
        let n = args["n"].as_u64().unwrap_or(0);
        Ok(ToolOutput::text(format!("fact {n} is {}\n{}", 1000 + n, "lorem ipsum ".repeat(45))))
    });
    let kit = Kit::new([short]);
    let mut h = harness(&kit, Some(6_000));
    h.options.max_iterations = Some(50);
    let small = 3_000;
    h.options.summariser = Some("small".into());
    h.options.summariser_context = Some(ContextLimits::bounded(Some(small), None, 0.8));
    h.options.summariser_fallback = Some("The profile 'cheap' cannot be used".into());
    let provider = ScriptedProvider::new(model(36, |r: &ProviderRequest| {
        let Message::User { text, .. } = &r.messages[0] else { panic!() };
        let facts: Vec<&str> = text.lines().filter(|l| l.contains("fact ")).collect();
        vec![delta(&facts.join("\n")), finish(StopReason::Stop)]
    }));
    let ran = h.run(&provider).await;
    assert_eq!(ran.finish_reason(), FinishReason::Stop, "{:?}", ran.events.last());
    let summaries: Vec<&ProviderRequest> = ran.requests.iter().filter(|r| is_summariser(r)).collect();
    assert!(summaries.len() > 1, "the part to summarise is more than one request of the small window");
    for r in &summaries {
        assert_eq!(r.model, "small");
        let output = u64::from(r.options.max_output_tokens.unwrap());
        assert!(sent(r) as u64 + output <= small, "{} + {output} tokens passed the summariser's {small}", sent(r));
    }
    let (with_summary, ..) = compactions(&ran).into_iter().find(|(c, ..)| c.summary.is_some()).unwrap();
    // The results it covers are at 2, 4, …: each one's fact is in the summary.
    let summary = with_summary.summary.as_deref().unwrap();
    let covered = (0..40).filter(|n| 2 + 2 * n < with_summary.covered as usize).collect::<Vec<_>>();
    assert!(covered.len() > 1, "{covered:?}");
    assert!(covered.iter().all(|n| summary.contains(&format!("fact {n} is"))), "nothing lost: {summary}");
    let fallback = ran.events.iter().find_map(|e| match e {
        ChatEvent::Compacted { summariser_fallback: Some(why), summariser: Some(_), .. } => Some(why.clone()),
        _ => None,
    });
    assert_eq!(fallback.as_deref(), Some("The profile 'cheap' cannot be used"), "the compaction says why");
}

#[tokio::test]
async fn a_compaction_is_kept_so_the_start_of_what_is_sent_is_stable() {
    let kit = Kit::new([big()]);
    let h = harness(&kit, Some(4000));
    let provider = ScriptedProvider::new(model(20, summary_of("S")));
    let ran = h.run(&provider).await;
    let requests: Vec<&ProviderRequest> = ran.requests.iter().filter(|r| !is_summariser(r)).collect();
    let mut stable = 0;
    for pair in requests.windows(2) {
        let (a, b) = (&pair[0].messages, &pair[1].messages);
        if b.len() > a.len() && b[..a.len()] == a[..] {
            stable += 1;
        }
    }
    let compacted = compactions(&ran).len();
    assert_eq!(stable + compacted, requests.len() - 1, "a request differs from the one before only by a compaction");
    let pieces = switchboard_core::summarising::MAX_PIECES;
    assert!(ran.requests.iter().filter(|r| is_summariser(r)).count() <= compacted * pieces);
}

#[tokio::test]
async fn a_summariser_that_fails_or_says_nothing_leaves_the_history_whole_and_says_so() {
    for summary in [
        Box::new(|_: &ProviderRequest| vec![Err(ProviderError::new(ErrorKind::Server, "Server error."))])
            as Box<Summariser>,
        Box::new(|_: &ProviderRequest| vec![delta("  "), finish(StopReason::Stop)]),
    ] {
        let summary: Arc<Summariser> = Arc::from(summary);
        let kit = Kit::new([big()]);
        let h = harness(&kit, Some(4000));
        let provider = ScriptedProvider::new(model(12, move |r: &ProviderRequest| summary(r)));
        let ran = h.run(&provider).await;
        assert_eq!(ran.finish_reason(), FinishReason::Stop);
        assert!(compactions(&ran).iter().all(|(c, ..)| c.summary.is_none()), "no summary is recorded");
        let notices = ran.notices(NoticeKind::Context);
        assert!(notices.iter().any(|n| n.starts_with("Summarising the earlier messages failed")), "{notices:?}");
        let last = ran.requests.iter().rfind(|r| !is_summariser(r)).unwrap();
        assert_eq!(last.messages[0], Message::user(USER_TEXT), "the original history is sent");
        assert_eq!(last.messages.iter().filter(|m| matches!(m, Message::Tool { .. })).count(), 12);
    }
}

#[tokio::test]
async fn a_stop_while_summarising_ends_the_turn_and_compacts_nothing() {
    let kit = Kit::new([big()]);
    let h = harness(&kit, Some(4000));
    let cancel = h.cancel.clone();
    let provider = ScriptedProvider::new(model(20, move |_: &ProviderRequest| {
        cancel.cancel();
        vec![delta("half a summ")]
    }));
    // The summariser's stream stalls after its first words; the stop arrives meanwhile.
    let ran = h.run(&provider).await;
    assert_eq!(ran.finish_reason(), FinishReason::Cancelled);
    assert!(compactions(&ran).iter().all(|(c, ..)| c.summary.is_none()), "no half compaction");
}

#[tokio::test]
async fn an_unknown_window_compacts_against_the_safe_default_and_says_so() {
    let kit = Kit::new([big()]);
    let h = harness(&kit, None);
    let provider = ScriptedProvider::new(model(20, summary_of("S")));
    let ran = h.run(&provider).await;
    assert_eq!(ran.finish_reason(), FinishReason::Stop);
    let notices = ran.notices(NoticeKind::Context);
    assert_eq!(notices.len(), 1, "said once: {notices:?}");
    assert!(notices[0].contains("is not known") && notices[0].contains("32768"));
}

#[tokio::test]
async fn too_long_compacts_once_and_asks_again() {
    let kit = Kit::new([big()]);
    // The loop thinks the window is large; the provider refuses the third request.
    let h = harness(&kit, Some(1_000_000));
    let calls = Arc::new(AtomicUsize::new(0));
    let script: Vec<Response> = model(3, summary_of("S"))
        .into_iter()
        .map(|inner| {
            let calls = Arc::clone(&calls);
            let Response::Dynamic(inner) = inner else { unreachable!() };
            Response::Dynamic(Box::new(move |r: &ProviderRequest| {
                if !is_summariser(r) && calls.fetch_add(1, Ordering::SeqCst) == 2 {
                    return vec![Err(ProviderError::new(ErrorKind::ContextLength, "too long"))];
                }
                inner(r)
            }))
        })
        .collect();
    let ran = h.run(&ScriptedProvider::new(script)).await;
    assert_eq!(ran.finish_reason(), FinishReason::Stop, "{:?}", ran.events);
    let done = compactions(&ran);
    assert_eq!(done[0].1, CompactionReason::TooLong);
    // The refusal showed the window is smaller than the loop thought: later requests compact
    // before they reach it.
    assert!(done[1..].iter().all(|d| d.1 == CompactionReason::Threshold), "{done:?}");
    let retried = ran.requests.iter().filter(|r| !is_summariser(r)).nth(3).unwrap();
    assert!(
        retried
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { content, .. } if content.contains("read_tool_result")))
    );
}

#[tokio::test]
async fn a_message_larger_than_the_window_is_refused_saying_what_does_not_fit() {
    let kit = Kit::new([big()]);
    let mut h = harness(&kit, Some(128_000));
    h.history = vec![Message::user("word ".repeat(300_000))];
    let provider = ScriptedProvider::new([
        fail(ProviderError::new(ErrorKind::ContextLength, "too long")),
        fail(ProviderError::new(ErrorKind::ContextLength, "too long")),
    ]);
    let ran = h.run(&provider).await;
    assert_eq!(ran.finish_reason(), FinishReason::Error);
    let message = ran
        .events
        .iter()
        .find_map(|e| match e {
            ChatEvent::Error { kind: ErrorKind::ContextLength, message, .. } => Some(message.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        message,
        format!(
            "Your message alone is about 375,000 tokens; {MODEL} takes 128,000 tokens. Shorten it or send it in parts (or attach less), or pick a model with a larger context window."
        )
    );
    assert!(ran.requests.len() <= 2);
}
