//! Engine CPU per streamed token (parse -> loop -> event -> store), and the engine time a tool
//! round trip adds between the end of one model stream and the start of the next request.
//!
//! `cargo bench -p switchboard-cli --bench engine`. No network: a provider replays pre-rendered
//! Chat Completions chunks through the real `ChunkParser`, the real loop, the real SQLite recorder
//! (a file in a temp dir, WAL) and a sink that serializes every event as the CLI's `--json` does.

use futures::StreamExt;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::turn::{ApprovalDecision, FixedApprover};
use switchboard_core::{
    CancellationToken, ChatEvent, Engine, EngineConfig, EventSink, Message, Provider, ProviderRequest, ProviderStream,
    TurnInput, TurnOptions,
};
use switchboard_providers::openai::ChunkParser;
use switchboard_store::Store;

const TOKENS: usize = 2000;

fn chunk(delta: &str, finish: Option<&str>) -> String {
    let finish = finish.map_or("null".to_owned(), |f| format!("\"{f}\""));
    format!(
        r#"{{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767268800,"model":"bench","choices":[{{"index":0,"delta":{delta},"finish_reason":{finish}}}]}}"#
    )
}

/// Replays scripted SSE data through the real parser; records when each stream ended and began.
struct ReplayProvider {
    responses: Mutex<VecDeque<Vec<String>>>,
    marks: Arc<Mutex<Vec<(&'static str, Instant)>>>,
}

impl Provider for ReplayProvider {
    fn kind(&self) -> &'static str {
        "bench"
    }

    fn stream(&self, _request: ProviderRequest) -> ProviderStream {
        self.marks.lock().unwrap().push(("start", Instant::now()));
        let datas = self.responses.lock().unwrap().pop_front().unwrap_or_default();
        let marks = Arc::clone(&self.marks);
        let state = (datas.into_iter(), ChunkParser::new(), VecDeque::new(), marks);
        futures::stream::unfold(state, |(mut datas, mut parser, mut queue, marks)| async move {
            loop {
                if let Some(item) = queue.pop_front() {
                    if matches!(item, Ok(switchboard_core::ProviderEvent::Finish { .. })) {
                        marks.lock().unwrap().push(("end", Instant::now()));
                    }
                    return Some((item, (datas, parser, queue, marks)));
                }
                match datas.next() {
                    Some(d) => parser.push("bench", &d, &mut queue),
                    None if parser.is_done() => return None,
                    None => parser.end("bench", &mut queue),
                }
            }
        })
        .boxed()
    }
}

struct JsonSink {
    recorder: switchboard_store::Recorder,
    out: Mutex<std::io::Sink>,
}

impl EventSink for JsonSink {
    fn emit(&self, event: ChatEvent) {
        use std::io::Write;
        let line = serde_json::to_vec(&event).unwrap();
        self.out.lock().unwrap().write_all(&line).unwrap();
        self.recorder.emit(event);
    }
    fn tick(&self) {
        self.recorder.tick();
    }
}

fn text_response(tokens: usize) -> Vec<String> {
    let mut v: Vec<String> = (0..tokens).map(|i| chunk(&format!(r#"{{"content":"word{i} "}}"#), None)).collect();
    v.push(chunk("{}", Some("stop")));
    v.push(r#"{"id":"chatcmpl-bench","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":2000}}"#.into());
    v.push("[DONE]".into());
    v
}

fn tool_response() -> Vec<String> {
    vec![
        chunk(r#"{"role":"assistant","content":"Checking the time. "}"#, None),
        chunk(
            r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_time","arguments":"{\"timezone\":"}}]}"#,
            None,
        ),
        chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"\"Europe/Paris\"}"}}]}"#, None),
        chunk("{}", Some("tool_calls")),
        "[DONE]".into(),
    ]
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("bench.db")).unwrap();
    let registry = Arc::new(switchboard_tools::builtin_registry().unwrap());
    let engine = Engine::new(EngineConfig::default(), registry, Arc::new(switchboard_core::tool::NoSecrets));
    let approver = FixedApprover(ApprovalDecision::Once);

    let mut per_token = Vec::new();
    let mut gaps = Vec::new();
    let runs = 30;
    for run in 0..runs + 3 {
        let marks = Arc::new(Mutex::new(Vec::new()));
        let provider = ReplayProvider {
            responses: Mutex::new(VecDeque::from([tool_response(), text_response(TOKENS)])),
            marks: Arc::clone(&marks),
        };
        let rows = store.begin_turn(None, "what time is it in Paris?", "bench", "bench").unwrap();
        let sink = Arc::new(JsonSink { recorder: store.recorder(&rows.message_id), out: Mutex::new(std::io::sink()) });
        let input = TurnInput {
            conversation_id: rows.conversation_id,
            user_message_id: rows.user_message_id,
            message_id: rows.message_id,
            provider_name: "bench".into(),
            model: "bench".into(),
            system_prompt: None,
            history: vec![Message::User { text: "what time is it in Paris?".into() }],
            options: TurnOptions::default(),
        };
        let cpu0 = cpu_time();
        runtime.block_on(engine.run_turn(&provider, input, sink.clone(), &approver, CancellationToken::new()));
        sink.recorder.flush();
        let cpu = cpu_time() - cpu0;
        assert!(sink.recorder.take_error().is_none());
        let marks = marks.lock().unwrap();
        let end1 = marks.iter().find(|(k, _)| *k == "end").unwrap().1;
        let start2 = marks.iter().filter(|(k, _)| *k == "start").nth(1).unwrap().1;
        if run >= 3 {
            // Warm-up runs excluded. CPU covers both model responses, the tool and every SQL write.
            per_token.push(cpu.as_secs_f64() * 1e6 / TOKENS as f64);
            gaps.push(start2.duration_since(end1).as_secs_f64() * 1e6);
        }
    }
    per_token.sort_by(f64::total_cmp);
    gaps.sort_by(f64::total_cmp);
    let median = |v: &[f64]| v[v.len() / 2];
    let p90 = |v: &[f64]| v[v.len() * 9 / 10];
    println!(
        "engine CPU per streamed token (parse -> loop -> event -> store), {runs} turns of {TOKENS} tokens + 1 tool round:"
    );
    println!("  median {:.2} µs/token, p90 {:.2} µs/token   (target <= 5 µs)", median(&per_token), p90(&per_token));
    println!("tool round trip, end of stream 1 -> start of request 2 (dedup, validation, get_time, SQL writes):");
    println!("  median {:.0} µs, p90 {:.0} µs   (target < 1000 µs)", median(&gaps), p90(&gaps));
}

fn cpu_time() -> Duration {
    // SAFETY: getrusage only writes into the struct we pass.
    #[allow(unsafe_code)]
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
