//! Counting context on a long conversation: a file database of 2,000 messages (1,000 questions
//! and answers; every fifth answer calls a tool whose result is 2,000 characters), counted with
//! OpenAI's o200k tokenizer (the slowest counter; loaded before timing).
//!
//! - `history + request`: what the service's turn preparation reads (`Store::turn_history`: the
//!   canonical path, results framed and cut as sent, the compaction in force, pins), then the
//!   turn's first request built from it (the machine's start: offer, names, the compaction check,
//!   the request, and its count from nothing, every message tokenized once), in a window that
//!   holds it (GPT-4.1's million tokens). Median and p95 over `RUNS`. Target: under 10 ms.
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
    ChatEvent, ContextLimits, EngineConfig, EventSink, FinishReason, Message, ProviderRequest, ReportedContext,
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
            output: "The page says the quarterly numbers rose by 4.2% in Q3. ".repeat(36),
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

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("switchboard.db")).unwrap();
    let first = store.begin_turn(None, "question 0", "p", "gpt-4o").unwrap();
    answer(&store, &first, 0);
    let c = first.conversation_id.clone();
    for i in 1..TURNS {
        let rows = store.begin_turn(Some(&c), &format!("question {i}: what did the page say?"), "p", "gpt-4o").unwrap();
        answer(&store, &rows, i);
    }
    let counter = tokens::counter("openai", "gpt-4o");
    counter.count("warm up: load the tokenizer before timing");
    let (config, registry) = (EngineConfig::default(), ToolRegistry::new());

    let limit = config.tool_result_limit;
    let window = ContextLimits::bounded(Some(1_047_576), Some(32_768), ContextLimits::DEFAULT_COMPACT_AT);
    let (mut loads, mut builds, mut totals) = (Vec::new(), Vec::new(), Vec::new());
    let mut messages = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let turn = store.turn_history(&c, &untrusted, limit).unwrap();
        let loaded = t.elapsed();
        messages = turn.messages.len();
        // A new counter each run: the turn's first count starts from nothing.
        let counter = tokens::counter("openai", "gpt-4.1");
        let options = TurnOptions {
            counter: Some(counter),
            context: window,
            compaction: turn.compaction,
            pinned: turn.pinned,
            ..TurnOptions::default()
        };
        let input = TurnInput {
            conversation_id: c.clone(),
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
        assert!(
            matches!(out.last(), Some(Effect::StartRequest { .. })),
            "{:?}",
            out.last().map(std::mem::discriminant)
        );
        let total = t.elapsed();
        loads.push(loaded);
        builds.push(total - loaded);
        totals.push(total);
        black_box(out);
    }
    println!(
        "turn history + first request counted from nothing ({messages} messages): median {:?} (store {:?} + request {:?}), p95 {:?} (target < 10 ms)",
        median(totals.clone()),
        median(loads),
        median(builds),
        p95(totals)
    );

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
