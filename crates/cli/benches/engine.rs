//! Engine CPU per streamed token (parse -> loop -> event -> store), and the engine time a tool
//! round trip adds between the end of one model stream and the start of the next request, for
//! each API; and what a provider switch costs a turn.
//!
//! `cargo bench -p switchboard-cli --bench engine`. No network while measuring: each API's wire
//! format is recorded once from the mock server (its own encoder, the same bytes the tests
//! check), then replayed through that API's real parser, its real request-body builder, the real
//! loop, the real SQLite recorder (a file in a temp dir, WAL) and a sink that serializes every
//! event as the CLI's `--json` does.

use futures::StreamExt;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use switchboard_core::turn::{ApprovalDecision, FixedApprover};
use switchboard_core::{
    CancellationToken, ChatEvent, Engine, EngineConfig, EventSink, Message, Provider, ProviderRequest, ProviderState,
    ProviderStream, ToolCall, TurnInput, TurnOptions,
};
use switchboard_mock_provider::{MockServer, Reply, Script};
use switchboard_providers::sse::{Decided, Parser};
use switchboard_providers::{anthropic, gemini, openai, openai_responses};
use switchboard_store::Store;

const TOKENS: usize = 2000;
const ORIGIN: &str = "http://127.0.0.1:1";

/// One API: how its stream is parsed and its request body built.
struct Api {
    kind: &'static str,
    parser: fn() -> Box<dyn Parser>,
    body: fn(&ProviderRequest) -> String,
}

const APIS: &[Api] = &[
    Api {
        kind: "openai",
        parser: || Box::new(openai::ChunkParser::new()),
        body: |r| openai::request_body(r).to_string(),
    },
    Api {
        kind: "openai-responses",
        parser: || Box::new(openai_responses::EventParser::for_endpoint(ORIGIN, true)),
        body: |r| {
            let target = openai_responses::Target { origin: ORIGIN.into(), store: None, lost_responses: false };
            let chain = openai_responses::chain(r, &target);
            openai_responses::request_body(r, &target, chain.as_ref()).to_string()
        },
    },
    Api {
        kind: "anthropic",
        parser: || Box::new(anthropic::EventParser::for_origin(ORIGIN)),
        body: |r| anthropic::request_body(r, ORIGIN).to_string(),
    },
    Api {
        kind: "gemini",
        parser: || Box::new(gemini::StreamParser::new("bench", ORIGIN)),
        body: |r| gemini::request_body(r, ORIGIN).to_string(),
    },
];

/// `(event name, data)` pairs of one recorded response.
type Wire = Vec<(String, String)>;

/// The mock's answer to one request of `kind`, as SSE events.
async fn record(mock: &MockServer, kind: &str) -> Wire {
    let client = reqwest::Client::new();
    let base = mock.base_url();
    let user = "what time is it in Paris?";
    let request = match kind {
        "openai" => client
            .post(format!("{base}/chat/completions"))
            .json(&serde_json::json!({"model": "bench", "stream": true, "messages": [{"role": "user", "content": user}]})),
        "openai-responses" => client
            .post(format!("{base}/responses"))
            .json(&serde_json::json!({"model": "bench", "stream": true, "input": [{"role": "user", "content": user}]})),
        "anthropic" => client.post(format!("{base}/messages")).header("anthropic-version", "2023-06-01").json(
            &serde_json::json!({"model": "bench", "stream": true, "max_tokens": 1024, "messages": [{"role": "user", "content": user}]}),
        ),
        _ => client
            .post(format!("{}/models/bench:streamGenerateContent?alt=sse", base.replace("/v1", "/v1beta")))
            .header("x-goog-api-key", "bench")
            .json(&serde_json::json!({"contents": [{"role": "user", "parts": [{"text": user}]}]})),
    };
    let text = request.send().await.unwrap().error_for_status().unwrap().text().await.unwrap();
    text.split("\n\n")
        .filter_map(|block| {
            let mut event = "message".to_owned();
            let mut data: Vec<&str> = Vec::new();
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = v.trim().to_owned();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            (!data.is_empty()).then(|| (event, data.join("\n")))
        })
        .collect()
}

/// Replays recorded responses through the API's real parser, after building the real request
/// body; records when each stream ended and began.
struct ReplayProvider {
    api: &'static Api,
    responses: Mutex<VecDeque<Wire>>,
    marks: Arc<Mutex<Vec<(&'static str, Instant)>>>,
}

impl Provider for ReplayProvider {
    fn kind(&self) -> &'static str {
        self.api.kind
    }

    fn stream(&self, request: ProviderRequest) -> ProviderStream {
        self.marks.lock().unwrap().push(("start", Instant::now()));
        std::hint::black_box((self.api.body)(&request));
        let wire = self.responses.lock().unwrap().pop_front().unwrap_or_default();
        let marks = Arc::clone(&self.marks);
        let state = (wire.into_iter(), (self.api.parser)(), Decided::new(), marks);
        futures::stream::unfold(state, |(mut wire, mut parser, mut queue, marks)| async move {
            loop {
                if let Some(item) = queue.pop_front() {
                    if matches!(item, Ok(switchboard_core::ProviderEvent::Finish { .. })) {
                        marks.lock().unwrap().push(("end", Instant::now()));
                    }
                    return Some((item, (wire, parser, queue, marks)));
                }
                match wire.next() {
                    Some((event, data)) => parser.push("bench", &event, &data, &mut queue),
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

/// An earlier conversation of 40 rounds (a question, a call, its result, an answer), its
/// responses made by `api` (state that goes back) or by another API (state that is dropped).
fn history(state_api: &str) -> Vec<Message> {
    let state = ProviderState {
        api: state_api.into(),
        origin: ORIGIN.into(),
        data: serde_json::json!({"blocks": [{"type": "thinking", "thinking": "Let me think about it.", "signature": "sig"}],
                                 "calls": {}, "responseId": "resp_1", "stored": true, "items": []}),
    };
    let mut out = Vec::new();
    for i in 0..40 {
        let id = format!("call_{i}");
        out.push(Message::user(format!("Question {i}: what time is it in Paris?")));
        out.push(Message::Assistant {
            text: "Checking. ".into(),
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "get_time".into(),
                arguments: r#"{"timezone":"Europe/Paris"}"#.into(),
            }],
            state: Some(state.clone()),
        });
        out.push(Message::Tool {
            call_id: id,
            name: "get_time".into(),
            content: "12:00".into(),
            is_error: false,
            images: Vec::new(),
        });
        out.push(Message::Assistant {
            text: format!("It is noon ({i})."),
            tool_calls: Vec::new(),
            state: Some(state.clone()),
        });
    }
    out.push(Message::user("what time is it in Paris?"));
    out
}

/// Medians over `runs` turns of `api`: CPU µs per token, tool round trip µs.
fn measure(
    runtime: &tokio::runtime::Runtime,
    store: &Store,
    engine: &Engine,
    api: &'static Api,
    wires: &(Wire, Wire),
    history: &[Message],
    runs: usize,
) -> (f64, f64) {
    let approver: std::sync::Arc<dyn switchboard_core::turn::Approver> =
        std::sync::Arc::new(FixedApprover(ApprovalDecision::Once));
    let mut per_token = Vec::new();
    let mut gaps = Vec::new();
    for run in 0..runs + 3 {
        let marks = Arc::new(Mutex::new(Vec::new()));
        let provider = ReplayProvider {
            api,
            responses: Mutex::new(VecDeque::from([wires.0.clone(), wires.1.clone()])),
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
            history: history.to_vec(),
            options: TurnOptions::default(),
        };
        let cpu0 = cpu_time();
        runtime.block_on(engine.run_turn(&provider, input, sink.clone(), approver.clone(), CancellationToken::new()));
        sink.recorder.flush();
        let cpu = cpu_time() - cpu0;
        assert!(sink.recorder.take_error().is_none());
        let marks = marks.lock().unwrap();
        let end1 = marks.iter().find(|(k, _)| *k == "end").unwrap().1;
        let start2 = marks.iter().filter(|(k, _)| *k == "start").nth(1).expect("a second request").1;
        if run >= 3 {
            // Warm-up runs excluded. CPU covers both model responses, the tool and every SQL write.
            per_token.push(cpu.as_secs_f64() * 1e6 / TOKENS as f64);
            gaps.push(start2.duration_since(end1).as_secs_f64() * 1e6);
        }
    }
    per_token.sort_by(f64::total_cmp);
    gaps.sort_by(f64::total_cmp);
    (per_token[per_token.len() / 2], gaps[gaps.len() / 2])
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let tool = || {
        Reply::text_then_tool_calls("Checking the time. ", &[("call_1", "get_time", r#"{"timezone":"Europe/Paris"}"#)])
    };
    let recorded: Vec<(Wire, Wire)> = runtime.block_on(async {
        let mut out = Vec::new();
        for api in APIS {
            let mock = MockServer::start(Script::new([tool(), Reply::long_text(TOKENS)])).await;
            out.push((record(&mock, api.kind).await, record(&mock, api.kind).await));
        }
        out
    });
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("bench.db")).unwrap();
    let registry = Arc::new(switchboard_tools::builtin_registry().unwrap());
    let engine = Engine::new(EngineConfig::default(), registry, Arc::new(switchboard_core::tool::NoSecrets));

    let runs = 30;
    println!("engine CPU per streamed token (parse -> loop -> event -> store) and tool round trip (end of stream 1 ->");
    println!(
        "start of request 2: dedup, validation, get_time, SQL writes), {runs} turns of {TOKENS} tokens + 1 tool round, medians:"
    );
    let fresh = vec![Message::user("what time is it in Paris?")];
    for (api, wires) in APIS.iter().zip(&recorded) {
        let (cpu, gap) = measure(&runtime, &store, &engine, api, wires, &fresh, runs);
        println!(
            "  {:<17} {cpu:.2} µs/token (target <= 2 µs)   tool round trip {gap:.0} µs (target < 1000 µs)",
            api.kind
        );
    }
    println!("a provider switch: the same turn after 40 earlier rounds whose responses came from this API (state sent");
    println!("back) and from another (state dropped), CPU per token of the whole turn, medians:");
    for (api, wires) in APIS.iter().zip(&recorded) {
        let other = if api.kind == "anthropic" { "gemini" } else { "anthropic" };
        let (same, _) = measure(&runtime, &store, &engine, api, wires, &history(api.kind), runs);
        let (switched, _) = measure(&runtime, &store, &engine, api, wires, &history(other), runs);
        println!("  {:<17} same API {same:.2} µs/token   switched from {other} {switched:.2} µs/token", api.kind);
    }
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
