//! Counting context on a long conversation: a file database of 2,000 messages (1,000 questions
//! and answers; every fifth answer calls a tool whose result, each different, is about 2,000 characters), counted with
//! OpenAI's o200k tokenizer (the slowest counter; loaded before timing).
//!
//! - `history + request`: what the service does to start a turn whose question is stored: the
//!   history its turn preparation reads (`Store::turn_history`: the canonical path, results
//!   framed and cut as sent, the compaction in force, pins), the conversation's stored token
//!   counts (`Store::token_counts` into a `Memo`, as the service's `token_cache` does), then the
//!   machine's start up to the first request (offer, names, the compaction check, the request and
//!   its count), in a window that holds it (GPT-4.1's million tokens). Twice: with no stored
//!   counts (an upgraded chat's first turn: every text tokenized), and with the counts the turn
//!   before stored (only its answer and the new question are tokenized). Median and p95 over
//!   `RUNS`. Target: under 10 ms.
//! - `decision per request`: the count of the next request in a tool loop (one more call and
//!   result than the last, every earlier message cached), what the machine and compaction decide
//!   on before each request. Target: under 1 ms.
//!
//! `cargo bench -p switchboard-models --bench context`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use switchboard_core::machine::{Effect, Estimator, Input, Machine, combine};
use switchboard_core::{
    ChatEvent, ContextLimits, EngineConfig, EventSink, FinishReason, Memo, Message, ProviderRequest, ReportedContext,
    ToolCall, ToolRegistry, ToolSource, ToolStatus, TurnInput, TurnOptions, Usage,
};
use switchboard_models::tokens;
use switchboard_store::{Store, TurnRows};

const TURNS: usize = 1_000;
const RUNS: usize = 100;

fn answer(store: &Store, rows: &TurnRows, i: usize) {
    let rec = store.recorder(&rows.message_id);
    rec.emit(ChatEvent::TextDelta { text: format!("Answer {i}: the figures agree with the report. ").repeat(4) });
    if i.is_multiple_of(5) {
        rec.emit(ChatEvent::ToolCall {
            id: format!("call_{i}"),
            name: "web_fetch".into(),
            source: ToolSource::Builtin,
            arguments: r#"{"url":"https://example.com/a/long/path"}"#.into(),
            text_offset: 0,
            iteration: 1,
            index: 0,
        });
        rec.emit(ChatEvent::ToolResult {
            id: format!("call_{i}"),
            status: ToolStatus::Ok,
            output: format!("The page {i} says the quarterly numbers rose by 4.2% in Q3. ").repeat(36),
            duration_ms: 3,
            images: None,
        });
    }
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 0 });
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn p95(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[(v.len() * 95).div_ceil(100) - 1]
}

/// What the service's marker says of these calls: `web_fetch` returns untrusted data.
fn untrusted(call: &switchboard_store::StoredToolCall) -> Option<String> {
    (call.name == "web_fetch").then(|| call.name.clone())
}

/// The window of GPT-4.1 (o200k, like GPT-4o): the history fits, nothing is compacted.
fn window() -> ContextLimits {
    ContextLimits::bounded(Some(1_047_576), Some(32_768), ContextLimits::DEFAULT_COMPACT_AT)
}

/// What the service does to start a turn in `c` (whose new question is stored): the history
/// read by `Store::turn_history`, the stored token counts read into a [`Memo`] when `stored`
/// (the service's `token_cache`), and the machine's start up to the first request, counted.
/// Returns the memo and how many messages the history held.
fn first_request(store: &Store, c: &str, stored: bool) -> (Arc<Memo>, usize) {
    let config = EngineConfig::default();
    let registry = ToolRegistry::new();
    let turn = store.turn_history(c, &untrusted, config.tool_result_limit).unwrap();
    let known = if stored { store.token_counts(c, tokens::Tokenizer::O200k.name()).unwrap() } else { Vec::new() };
    let memo = Arc::new(Memo::new(tokens::counter("openai", "gpt-4.1"), known));
    let messages = turn.messages.len();
    let options = TurnOptions {
        counter: Some(memo.clone()),
        context: window(),
        compaction: turn.compaction,
        pinned: turn.pinned,
        ..TurnOptions::default()
    };
    let input = TurnInput {
        conversation_id: c.to_owned(),
        user_message_id: "u".into(),
        message_id: "m".into(),
        provider_name: "p".into(),
        model: "gpt-4.1".into(),
        system_prompt: Some("You are helpful.".into()),
        history: turn.messages,
        options,
    };
    let mut m = Machine::new(&config, &registry, input);
    let mut out = Vec::new();
    m.handle(Input::Start, &mut out);
    assert!(matches!(out.last(), Some(Effect::StartRequest { .. })), "the request is not the last effect");
    black_box(out);
    (memo, messages)
}

fn report(what: &str, messages: usize, times: Vec<Duration>) {
    println!("{what} ({messages} messages): median {:?}, p95 {:?} (target < 10 ms)", median(times.clone()), p95(times));
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let first = store.begin_turn(None, "question 0", "p", "gpt-4o").unwrap();
    answer(&store, &first, 0);
    let c = first.conversation_id.clone();
    for i in 1..TURNS - 1 {
        let rows = store.begin_turn(Some(&c), &format!("question {i}: what did the page say?"), "p", "gpt-4o").unwrap();
        answer(&store, &rows, i);
    }
    let counter = tokens::counter("openai", "gpt-4o");
    counter.count("warm up: load the tokenizer before timing");

    // The turn before: it counted its history and the service stored the counts when it ended.
    let i = TURNS - 1;
    let rows = store.begin_turn(Some(&c), &format!("question {i}: what did the page say?"), "p", "gpt-4o").unwrap();
    let (memo, _) = first_request(&store, &c, true);
    store.put_token_counts(&c, tokens::Tokenizer::O200k.name(), &memo.take_fresh()).unwrap();
    answer(&store, &rows, i);
    // This turn: its question is stored, its answer is streaming.
    store.begin_turn(Some(&c), "question 1000: and the totals?", "p", "gpt-4o").unwrap();

    let mut messages = 0;
    let mut cold = Vec::new();
    let mut loads = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let (_, n) = first_request(&store, &c, false);
        cold.push(t.elapsed());
        messages = n;
        let t = Instant::now();
        black_box(store.turn_history(&c, &untrusted, EngineConfig::default().tool_result_limit).unwrap());
        loads.push(t.elapsed());
    }
    report(
        "turn history + first request counted from nothing (no stored counts: an upgraded chat's first turn)",
        messages,
        cold,
    );
    println!("  of which Store::turn_history: median {:?}", median(loads));
    let mut warm = Vec::new();
    let mut fresh = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let (memo, _) = first_request(&store, &c, true);
        warm.push(t.elapsed());
        fresh = memo.take_fresh().len();
    }
    report("turn history + stored counts + first request (the turn before stored its counts)", messages, warm);
    println!("  texts tokenized: {fresh} (the last answer and the new question)");
    let (config, registry) = (EngineConfig::default(), ToolRegistry::new());
    let window = window();

    // The same request built with a counter that reads nothing: what building it costs alone.
    #[derive(Debug)]
    struct Nothing;
    impl switchboard_core::TokenCounter for Nothing {
        fn count(&self, _text: &str) -> u64 {
            0
        }
    }
    let history = store.history(&c).unwrap();
    let mut alone = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        let options = TurnOptions { counter: Some(Arc::new(Nothing)), context: window, ..TurnOptions::default() };
        let input = TurnInput {
            conversation_id: c.clone(),
            user_message_id: "u".into(),
            message_id: "m".into(),
            provider_name: "p".into(),
            model: "gpt-4o".into(),
            system_prompt: Some("You are helpful.".into()),
            history: history.clone(),
            options,
        };
        let mut m = Machine::new(&config, &registry, input);
        let mut out = Vec::new();
        m.handle(Input::Start, &mut out);
        alone.push(t.elapsed());
        black_box(out);
    }
    println!("request built alone (history cloned in): {:?}", median(alone));

    // The decision: one request after another, each with one more call and result.
    let mut request = ProviderRequest {
        model: "gpt-4o".into(),
        system: Some("You are helpful.".into()),
        messages: store.history(&c).unwrap(),
        tools: Vec::new(),
        tool_choice: Default::default(),
        options: Default::default(),
    };
    let estimator = Estimator::new(counter.clone());
    let raw = estimator.breakdown(&request).total();
    let mut reported = ReportedContext { prompt_tokens: raw, estimate: raw };
    let mut times = Vec::new();
    for i in 0..200 {
        let call = ToolCall { id: format!("x{i}"), name: "web_fetch".into(), arguments: "{}".into() };
        request.messages.push(Message::assistant("", vec![call]));
        request.messages.push(Message::Tool {
            call_id: format!("x{i}"),
            name: "web_fetch".into(),
            content: "A new result of a few hundred characters. ".repeat(10),
            is_error: false,
            images: Vec::new(),
        });
        let t = Instant::now();
        let e = combine(estimator.breakdown(&request), Some(reported));
        times.push(t.elapsed());
        reported = ReportedContext { prompt_tokens: e.total, estimate: e.total };
        black_box(e);
    }
    println!(
        "decision per request ({}+ messages): median {:?}, max {:?} (target < 1 ms)",
        messages,
        median(times.clone()),
        times.iter().max().unwrap()
    );
}
