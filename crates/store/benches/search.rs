//! Full-text search on a large store: a generated database of 100,000 messages (5,000
//! conversations, varied words from a Zipf-like vocabulary, some Chinese, Japanese and Thai) with
//! 20,000 tool calls and their results. Reports:
//! - search time per query kind (word, phrase, prefix, CJK, a rare and a common word): median,
//!   p95 and max over the runs, and p95 over the whole mix (target: under 50 ms);
//! - how much the search index adds to the database's size (target: under 35%);
//! - writing an answer (a turn started, 30 checkpoints of a growing text, 2 tool calls with
//!   results, done) with the index and after dropping it (target: not measurably slower; the
//!   answer's text is indexed once, when it ends, not at each checkpoint).
//!
//! `cargo bench -p switchboard-store --bench search` (`SEARCH_BENCH_MESSAGES=20000` for a quicker
//! run on a smaller store).

use rusqlite::Connection;
use std::time::{Duration, Instant};
use switchboard_core::{ChatEvent, EventSink, FinishReason, ToolSource, ToolStatus, Usage};
use switchboard_store::{DB_FILE, Store};

const MESSAGES_PER_CONVERSATION: usize = 20;
const SEARCH_RUNS: usize = 60;
const ANSWER_RUNS: usize = 40;
const ANSWER_WARMUP: usize = 10;

/// A small deterministic generator (xorshift64*), so every run builds the same store.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

const SYLLABLES: &[&str] = &[
    "ka", "to", "ri", "mo", "ne", "sa", "lu", "pi", "de", "ga", "ho", "vi", "ze", "ta", "bo", "qu", "ar", "en", "il",
    "on", "us", "ex", "pra", "stre", "cho", "lin", "mar", "per", "ser", "tion", "ble", "ment", "ing", "ous",
];
const ZH: &[&str] = &[
    "数据",
    "数据库",
    "搜索",
    "模型",
    "北京",
    "我们",
    "今天",
    "学习",
    "问题",
    "系统",
    "用户",
    "服务器",
    "代码",
    "测试",
    "故宫",
];
const JA: &[&str] = &["東京", "ラーメン", "検索", "データ", "美味しい", "ですが", "しました", "タワー"];
const TH: &[&str] = &["ภาษาไทย", "อากาศ", "ทะเล", "คอมพิวเตอร์", "วันนี้", "เที่ยว"];

struct Words {
    vocab: Vec<String>,
}

impl Words {
    fn new(rng: &mut Rng) -> Self {
        let mut vocab = Vec::with_capacity(8000);
        let mut seen = std::collections::HashSet::new();
        while vocab.len() < 8000 {
            let n = 1 + rng.below(4);
            let w: String = (0..n).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect();
            if seen.insert(w.clone()) {
                vocab.push(w);
            }
        }
        Words { vocab }
    }

    /// A word, the first ones far more often (roughly Zipf).
    fn word(&self, rng: &mut Rng) -> &str {
        let i = ((self.vocab.len() as f64) * rng.unit().powi(3)) as usize;
        &self.vocab[i.min(self.vocab.len() - 1)]
    }

    /// `min` words and up to `spread` more.
    fn text(&self, rng: &mut Rng, min: usize, spread: usize) -> String {
        let words = min + if spread > 0 { rng.below(spread) } else { 0 };
        let mut out = String::with_capacity(words * 7);
        for i in 0..words {
            if i > 0 {
                out.push_str(if rng.below(12) == 0 { ". " } else { " " });
            }
            out.push_str(self.word(rng));
        }
        // One text in twenty has a sentence without spaces.
        if rng.below(20) == 0 {
            let script = [ZH, JA, TH][rng.below(3)];
            out.push(' ');
            for _ in 0..4 + rng.below(8) {
                out.push_str(script[rng.below(script.len())]);
            }
            out.push('。');
        }
        out
    }
}

/// Fills the store in one transaction with prepared statements (triggers index as rows go in).
fn generate(path: &std::path::Path, messages: usize) -> Words {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let words = Words::new(&mut rng);
    drop(Store::open(path).unwrap()); // creates and migrates
    let mut conn = Connection::open(path).unwrap();
    switchboard_store::register_sql_functions(&conn).unwrap();
    let tx = conn.transaction().unwrap();
    {
        let mut conv = tx
            .prepare("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)")
            .unwrap();
        let mut msg = tx
            .prepare(
                "INSERT INTO messages (id, conversation_id, seq, role, content, status, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'complete', ?6, ?6)",
            )
            .unwrap();
        let mut call = tx
            .prepare(
                "INSERT INTO tool_calls (id, message_id, call_id, iteration, idx, name, source, arguments, text_offset, status, created_at)
                 VALUES (?1, ?2, 'call', 1, 0, 'web_search', '\"builtin\"', ?3, 0, 'ok', ?4)",
            )
            .unwrap();
        let mut result = tx
            .prepare("INSERT INTO tool_results (tool_call_id, status, output, duration_ms, created_at) VALUES (?1, 'ok', ?2, 12, ?3)")
            .unwrap();
        let start = 1_700_000_000_000i64;
        let mut assistant_n = 0usize;
        for i in 0..messages {
            let c = i / MESSAGES_PER_CONVERSATION;
            let at = start + i as i64 * 60_000;
            let cid = format!("c{c:06}");
            if i % MESSAGES_PER_CONVERSATION == 0 {
                conv.execute((&cid, words.text(&mut rng, 3, 5), at)).unwrap();
            }
            let user = i % 2 == 0;
            let mut text = if user { words.text(&mut rng, 8, 40) } else { words.text(&mut rng, 40, 260) };
            if i % 33_333 == 7 {
                text.push_str(" quetzalcoatl");
            }
            let mid = format!("m{i:07}");
            msg.execute((
                &mid,
                &cid,
                (i % MESSAGES_PER_CONVERSATION) as i64,
                if user { "user" } else { "assistant" },
                text,
                at,
            ))
            .unwrap();
            if !user {
                assistant_n += 1;
                // Two assistant messages in five call a tool: 20,000 calls in 100,000 messages.
                if assistant_n % 5 < 2 {
                    let tid = format!("t{i:07}");
                    let args = format!("{{\"query\":\"{}\",\"limit\":5}}", words.text(&mut rng, 2, 4));
                    call.execute((&tid, &mid, args, at)).unwrap();
                    result.execute((&tid, words.text(&mut rng, 60, 340), at)).unwrap();
                }
            }
        }
    }
    tx.commit().unwrap();
    words
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3
}

/// Bytes of the database after a VACUUM (no free pages, no WAL).
fn compacted_size(path: &std::path::Path) -> u64 {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    drop(conn);
    std::fs::metadata(path).unwrap().len()
}

/// One answer as the recorder writes it: `checkpoints` of a growing text, two tool calls with results.
/// Returns how long its end (the Done, which indexes the answer's text) took.
fn write_answer(store: &Store, conversation: &str, words: &Words, rng: &mut Rng, checkpoints: usize) -> Duration {
    let rows = store.begin_turn(Some(conversation), &words.text(rng, 20, 0), "p", "m").unwrap();
    let rec = store.recorder(&rows.message_id).with_checkpoint_interval(Duration::from_secs(3600));
    for i in 0..checkpoints {
        rec.emit(ChatEvent::TextDelta { text: format!(" {}", words.text(rng, 25, 0)) });
        rec.flush();
        if i % 15 == 5 {
            let id = format!("call{i}");
            rec.emit(ChatEvent::ToolCall {
                id: id.clone(),
                name: "web_search".into(),
                source: ToolSource::Builtin,
                arguments: format!("{{\"query\":\"{}\"}}", words.text(rng, 3, 0)),
                text_offset: 0,
                iteration: 1,
                index: 0,
            });
            rec.emit(ChatEvent::ToolResult {
                id,
                status: ToolStatus::Ok,
                output: words.text(rng, 200, 0),
                duration_ms: 5,
                images: None,
            });
        }
    }
    let t = Instant::now();
    rec.emit(ChatEvent::Done { finish_reason: FinishReason::Stop, usage: Usage::default(), tool_calls_made: 2 });
    let end = t.elapsed();
    assert!(rec.take_error().is_none());
    end
}

fn time_answers(path: &std::path::Path, words: &Words, label: &str) -> f64 {
    let store = Store::open(path).unwrap();
    let mut rng = Rng(42);
    // Warm-up, untimed: the first writes after opening read cold pages either way.
    for i in 0..ANSWER_WARMUP {
        write_answer(&store, &format!("c{:06}", i * 7 + 3), words, &mut rng, 30);
    }
    let (mut times, mut ends): (Vec<Duration>, Vec<Duration>) = (0..ANSWER_RUNS)
        .map(|i| {
            let conversation = format!("c{:06}", i * 7);
            let t = Instant::now();
            let end = write_answer(&store, &conversation, words, &mut rng, 30);
            (t.elapsed(), end)
        })
        .unzip();
    times.sort_unstable();
    ends.sort_unstable();
    println!(
        "write an answer ({label}): median {:.2} ms, p95 {:.2} ms, max {:.2} ms ({ANSWER_RUNS} answers of 30 checkpoints, 2 tool calls); its end alone: median {:.2} ms",
        pct(&times, 0.5),
        pct(&times, 0.95),
        pct(&times, 1.0),
        pct(&ends, 0.5)
    );
    pct(&times, 0.5)
}

fn main() {
    let messages: usize = std::env::var("SEARCH_BENCH_MESSAGES").ok().and_then(|v| v.parse().ok()).unwrap_or(100_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(DB_FILE);
    let t = Instant::now();
    let words = generate(&path, messages);
    let calls: i64 =
        Connection::open(&path).unwrap().query_row("SELECT count(*) FROM tool_calls", [], |r| r.get(0)).unwrap();
    println!("generated {messages} messages, {calls} tool calls with results in {:.1} s", t.elapsed().as_secs_f64());

    let store = Store::open(&path).unwrap();
    let common = words.vocab[0].clone();
    let mid = words.vocab[200].clone();
    let prefix = format!("{}*", &words.vocab[50][..3.min(words.vocab[50].len())]);
    let phrase = format!("\"{} {}\"", words.vocab[0], words.vocab[1]);
    let queries: Vec<(&str, String)> = vec![
        ("word", mid.clone()),
        ("two words", format!("{} {}", words.vocab[30], words.vocab[400])),
        ("phrase", phrase),
        ("prefix", prefix),
        ("CJK 2 chars", "数据".to_owned()),
        ("CJK 1 char", "宫".to_owned()),
        ("Japanese", "ラーメン".to_owned()),
        ("Thai", "ทะเล".to_owned()),
        ("rare word", "quetzalcoatl".to_owned()),
        ("common word", common),
    ];
    let mut all = Vec::new();
    for (kind, q) in &queries {
        let hits = store.search_messages(q, 50).unwrap().len();
        let mut times: Vec<Duration> = (0..SEARCH_RUNS)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(store.search_messages(q, 50).unwrap());
                t.elapsed()
            })
            .collect();
        times.sort_unstable();
        all.extend_from_slice(&times);
        println!(
            "search {kind:<12} {q:<22} {hits:>3} hits: median {:6.2} ms, p95 {:6.2} ms, max {:6.2} ms",
            pct(&times, 0.5),
            pct(&times, 0.95),
            pct(&times, 1.0)
        );
    }
    all.sort_unstable();
    println!("search, the whole mix: p95 {:.2} ms (target < 50 ms)", pct(&all, 0.95));
    drop(store);

    let size_with = compacted_size(&path);
    let with_index = time_answers(&path, &words, "with the index");
    {
        let conn = Connection::open(&path).unwrap();
        let triggers: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'search_%'")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        for t in triggers {
            conn.execute_batch(&format!("DROP TRIGGER {t}")).unwrap();
        }
        conn.execute_batch("DROP TABLE search_index").unwrap();
    }
    let size_without = compacted_size(&path);
    println!(
        "database: {:.1} MB with the index, {:.1} MB without: the index adds {:.1}% (target < 35%)",
        size_with as f64 / 1e6,
        size_without as f64 / 1e6,
        (size_with as f64 - size_without as f64) / size_without as f64 * 100.0
    );
    let without_index = time_answers(&path, &words, "without the index");
    println!(
        "write an answer: median {with_index:.2} ms with the index, {without_index:.2} ms without ({:+.2} ms)",
        with_index - without_index
    );
}
