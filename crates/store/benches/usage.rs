//! Spend queries on a large store: 100,000 requests (2,000 conversations of 5 answers, 10
//! requests per answer, every fourth answer with a sub-agent run of 2 requests among them,
//! spread over a year, 6 models, 3 profiles, 2 agents). Reports median and max of:
//! - `usage_report` over everything, by day, model, conversation, and by day split by model
//!   (target: under 100 ms: the Usage page opens on it);
//! - `usage_report` over the last 30 days (target: under 20 ms);
//! - `conversation_usage` and `message_usage` of one conversation (target: under 5 ms: shown
//!   with every answer);
//! - writing one request's row through the recorder (target: under 1 ms).
//!
//! `cargo bench -p switchboard-store --bench usage` (`USAGE_BENCH_REQUESTS=20000` for a quicker run).

use rusqlite::Connection;
use std::time::{Duration, Instant};
use switchboard_core::{ChatEvent, EventSink, Usage};
use switchboard_store::{DB_FILE, Store, UsageGrouping, UsageQuery};

const ANSWERS_PER_CONVERSATION: usize = 5;
const REQUESTS_PER_ANSWER: usize = 10;
const RUNS: usize = 30;
const DAY_MS: i64 = 86_400_000;
const MODELS: &[&str] = &["gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "gemini-2.5-flash", "llama3", "o3"];
const PROFILES: &[&str] = &["openai", "anthropic", "ollama"];

fn timed<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    (times[times.len() / 2], *times.last().unwrap())
}

fn main() {
    let requests: usize = std::env::var("USAGE_BENCH_REQUESTS").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let answers = requests / REQUESTS_PER_ANSWER;
    let conversations = answers / ANSWERS_PER_CONVERSATION;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let store = Store::open(&path).unwrap();
    let built = Instant::now();
    let mut last = None;
    let mut ids = Vec::with_capacity(answers);
    for c in 0..conversations {
        let mut conversation: Option<String> = None;
        for _ in 0..ANSWERS_PER_CONVERSATION {
            let rows = store.begin_turn(conversation.as_deref(), "a question", "openai", "gpt-4o").unwrap();
            conversation = Some(rows.conversation_id.clone());
            ids.push((rows.conversation_id.clone(), rows.message_id.clone(), c));
            last = Some(rows);
        }
    }
    {
        let mut conn = Connection::open(&path).unwrap();
        let tx = conn.transaction().unwrap();
        let now = 1_790_000_000_000_i64;
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO usage_requests (message_id, conversation_id, request, call_id, run_path, agent,
                         decided, profile, api, model, prompt_tokens, completion_tokens, reasoning_tokens,
                         cached_tokens, cache_write_tokens, cost_usd, estimated, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, '[]', ?7, 'openai', ?8, ?9, ?10, ?11, ?12, 0, ?13, 0, ?14)",
                )
                .unwrap();
            for (i, (conversation, message, c)) in ids.iter().enumerate() {
                let at = now - ((i * 7919) % 365) as i64 * DAY_MS - (i % 1000) as i64 * 60_000;
                let sub_agent = i % 4 == 0;
                for r in 0..REQUESTS_PER_ANSWER {
                    let child = sub_agent && (r == 3 || r == 4);
                    let model = MODELS[(c + r) % MODELS.len()];
                    let profile = PROFILES[c % PROFILES.len()];
                    let prompt = 1_000 + (r as u64) * 800;
                    let cost = (model != "llama3").then(|| prompt as f64 * 2.5 / 1e6);
                    insert
                        .execute(rusqlite::params![
                            message,
                            conversation,
                            if child { r as u32 - 2 } else { r as u32 + 1 },
                            child.then_some("call_1"),
                            if child { "call_1/Scout[1]" } else { "" },
                            if child { Some("Scout") } else { (c % 2 == 0).then_some("Planner") },
                            profile,
                            model,
                            prompt,
                            200,
                            (r % 3) as u64 * 50,
                            prompt / 2,
                            cost,
                            at + r as i64 * 1_000,
                        ])
                        .unwrap();
                }
            }
        }
        tx.commit().unwrap();
    }
    println!(
        "built {conversations} conversations, {answers} answers, {} requests in {:.1} s",
        answers * REQUESTS_PER_ANSWER,
        built.elapsed().as_secs_f64()
    );
    let query = |by, split, since| UsageQuery { by, split, since, until: None, utc_offset_minutes: Some(60) };
    let cases = [
        ("report by day, all time", query(UsageGrouping::Day, None, None)),
        ("report by model, all time", query(UsageGrouping::Model, None, None)),
        ("report by conversation, all time", query(UsageGrouping::Conversation, None, None)),
        ("report by day split by model", query(UsageGrouping::Day, Some(UsageGrouping::Model), None)),
        ("report by day, last 30 days", query(UsageGrouping::Day, None, Some(1_790_000_000_000 - 30 * DAY_MS))),
    ];
    for (name, q) in cases {
        let (median, max) = timed(RUNS, || store.usage_report(&q).unwrap());
        println!("{name:<36} median {:>8.2} ms   max {:>8.2} ms", ms(median), ms(max));
    }
    let (conversation, message, _) = &ids[ids.len() / 2];
    let (median, max) = timed(RUNS * 3, || store.conversation_usage(conversation).unwrap());
    println!("{:<36} median {:>8.2} ms   max {:>8.2} ms", "conversation_usage", ms(median), ms(max));
    let (median, max) = timed(RUNS * 3, || store.message_usage(message).unwrap());
    println!("{:<36} median {:>8.2} ms   max {:>8.2} ms", "message_usage", ms(median), ms(max));
    let rows = last.unwrap();
    let rec = store.recorder(&rows.message_id);
    rec.emit(ChatEvent::Started {
        conversation_id: rows.conversation_id.clone(),
        message_id: rows.message_id.clone(),
        user_message_id: rows.user_message_id.clone(),
        provider: "openai".into(),
        model: "gpt-4o".into(),
    });
    let usage = Usage { prompt_tokens: 1000, completion_tokens: 100, ..Usage::default() };
    let mut n = 0;
    let (median, max) = timed(RUNS * 3, || {
        n += 1;
        rec.emit(ChatEvent::Usage {
            usage,
            total: usage,
            request: n,
            cost_usd: Some(0.01),
            estimated: false,
            agent_call: None,
        });
    });
    assert!(rec.take_error().is_none());
    println!("{:<36} median {:>8.2} ms   max {:>8.2} ms", "recording one request", ms(median), ms(max));
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
