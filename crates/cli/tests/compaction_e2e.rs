//! Compaction that loses nothing, end to end through the real CLI on all four APIs: a profile
//! whose window is 8,000 tokens (`--context-window`), a mock that refuses anything longer in its
//! API's own "too long" error, and a 30-round tool conversation whose every `web_fetch` result is
//! 10,000 characters with one marked fact in its middle. The turn completes; the stored
//! conversation holds every result whole; the final answer cites the fact of round 2, which can
//! only reach the model by reading it back with `read_tool_result` (the stubs show a result's
//! first lines, the summariser its beginning and end); and on the OpenAI and Anthropic mocks the
//! second request after a compaction reads cached tokens (what is sent starts the same).

mod common;

use common::*;
use serde_json::{Value, json};
use switchboard_core::compaction::SUMMARY_PROMPT;
use switchboard_core::paging;
use switchboard_mock_provider::{MockServer, RecordedRequest, Reply, Script, Step};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const KEY: &str = "sk-test-compaction-e2e-0123456789";
const ROUNDS: usize = 30;
const RESULT_CHARS: usize = 10_000;
const WINDOW: u64 = 8_000;

/// The fact of round `n`, the first line of its result: only this round's result holds it.
fn fact(n: usize) -> String {
    format!("FACT-{n}: the courier of round {n} carries parcel {} to dock {}", 7_000 + n * 13, n * 3 + 1)
}

/// A detail in the middle of round `n`'s result: neither a stub (a result's first lines) nor
/// the summariser (its beginning and end) sees it; only reading the result back does.
fn detail(n: usize) -> String {
    format!("DETAIL-{n}: the seal on parcel {} is green", 7_000 + n * 13)
}

/// Round `n`'s page: 10,000 characters of numbered lines, [`fact`] first, [`detail`] in the middle.
fn page(n: usize) -> String {
    let mut lines: Vec<String> = (0..)
        .map(|i| format!("round {n:02} line {i:03}: the ledger entry lists crates, pallets and a signature"))
        .take(200)
        .collect();
    lines.insert(60, detail(n));
    lines.insert(0, fact(n));
    let mut text = lines.join("\n");
    text.truncate(RESULT_CHARS);
    // A fetch trims the end of what it reads.
    text.truncate(text.trim_end().len());
    text
}

/// Where round `n`'s detail starts in its page, in chars.
fn detail_offset(n: usize) -> usize {
    let text = page(n);
    text[..text.find(&detail(n)).unwrap()].chars().count()
}

/// Serves `/r/N` as [`page`]`(N)` on loopback; the base URL.
async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = conn.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]);
                let round: usize = head
                    .split_whitespace()
                    .nth(1)
                    .and_then(|p| p.strip_prefix("/r/"))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                let body = page(round);
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(head.as_bytes()).await;
                let _ = conn.write_all(body.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}")
}

/// 30 fetches; where the calls have ids the script knows (not Gemini's, which the client
/// makes up), a read back of round 2's detail; then an answer quoting round 2's fact (and
/// detail). The summariser's requests (recognised by its instructions) keep every line naming a
/// fact.
fn script(base: &str, read_back: bool) -> Script {
    let mut replies: Vec<Reply> = (1..=ROUNDS)
        .map(|n| {
            let args = json!({"url": format!("{base}/r/{n}"), "max_chars": 20_000}).to_string();
            Reply::tool_call(format!("c{n}"), "web_fetch", args)
        })
        .collect();
    let mut answer = vec![Step::Quote { marker: "FACT-2:".into() }];
    if read_back {
        let read = json!({"call_id": "c2", "offset": detail_offset(2), "length": 200}).to_string();
        replies.push(Reply::tool_call("r1", paging::TOOL, read));
        answer.extend([Step::text("\n"), Step::Quote { marker: "DETAIL-2:".into() }]);
    }
    answer.extend([Step::finish("stop"), Step::usage(10, 5), Step::Done]);
    replies.push(Reply::stream(answer));
    Script::new(replies)
        .with_context_window(WINDOW)
        .with_counted_usage()
        .with_route(&SUMMARY_PROMPT[..60], (0..ROUNDS).map(|_| Reply::keep_lines("FACT")))
}

/// What one API's run saw.
#[derive(Debug)]
struct Figures {
    requests: usize,
    summaries: usize,
    refusals: usize,
    compactions: usize,
    /// Cached tokens of the second request after each compaction.
    cached_after: Vec<u64>,
}

async fn run(kind: &str) -> Figures {
    run_with(kind, WINDOW).await
}

/// [`run`] with a profile that says the window is `profile_window` (the mock takes [`WINDOW`]).
async fn run_with(kind: &str, profile_window: u64) -> Figures {
    let base = serve().await;
    let read_back = kind != "gemini";
    let env = Env { dir: tempfile::tempdir().unwrap(), mock: MockServer::start(script(&base, read_back)).await };
    let api = if kind == "gemini" { format!("http://{}/v1beta", env.mock.addr()) } else { env.mock.base_url() };
    let window = profile_window.to_string();
    let out = env
        .run(&[
            "providers",
            "add",
            "p",
            "--kind",
            kind,
            "--base-url",
            &api,
            "--model",
            "mock-model",
            "--context-window",
            &window,
        ])
        .await;
    assert!(out.status.success(), "{kind}: {}", stderr(&out));
    let out = env.run(&["settings", "set", "web", r#"{"allowLocalAddresses": true}"#, "--yes"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // 30 fetches, a read back and the answer: 32 steps.
    let out = env.run(&["settings", "set", "limits", r#"{"maxIterations": 40}"#]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let (out, events) = env
        .json_with_key(
            &[
                "chat",
                "--json",
                "--provider",
                "p",
                &format!("Read the 30 ledger pages at {base}/r/1 to {base}/r/30, one by one."),
            ],
            "p",
            KEY,
        )
        .await;
    assert!(out.status.success(), "{kind}: {}", stderr(&out));
    let last = events.last().unwrap();
    assert_eq!(last["finishReason"], "stop", "{kind}: {last:#}");

    // The answer cites round 2's fact: it reached the model.
    let text: String = of_type(&events, "textDelta").iter().map(|e| e["text"].as_str().unwrap()).collect();
    let expected = if read_back { format!("{}\n{}", fact(2), detail(2)) } else { fact(2) };
    assert_eq!(text, expected, "{kind}");

    // Every request fitted the window (the mock refused none it could not recover from) and the
    // loop compacted on its own.
    let requests = env.mock.requests();
    let needle = &SUMMARY_PROMPT[..60];
    let is_summary = |r: &RecordedRequest| r.body.to_string().contains(needle);
    for r in &requests {
        let counted = r.counted.expect("counted").prompt_tokens;
        assert!(counted <= WINDOW, "{kind}: a request of {counted} tokens passed the window");
    }
    let compacted = of_type(&events, "compacted");
    assert!(!compacted.is_empty(), "{kind}: no compaction");

    // The stored conversation holds every result whole.
    let stored = env.show_json(&conversation_id(&events)).await;
    let outputs: Vec<String> = stored
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["toolCalls"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["name"] == "web_fetch")
        .map(|c| c["result"]["output"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(outputs.len(), ROUNDS, "{kind}");
    for (i, output) in outputs.iter().enumerate() {
        assert!(
            output.contains(&page(i + 1)),
            "{kind}: result {} is not whole: {}",
            i + 1,
            &output[output.len().saturating_sub(300)..]
        );
    }

    // The second request after each compaction read the cache. A compaction is announced before
    // the `context` event of the request it shortens (the first after it); the second is the
    // next one among the turn's requests (the summariser's apart). None was refused, so the mock
    // recorded every request the loop counted. Not counted: a second request that a new summary
    // rewrote from the start.
    let refusals = env.mock.refusals().len();
    let main: Vec<&RecordedRequest> = requests.iter().filter(|r| !is_summary(r)).collect();
    assert_eq!(main.len() + refusals, of_type(&events, "context").len(), "{kind}");
    let mut compaction_before: Vec<Option<&Value>> = vec![None; main.len() + refusals + 1];
    let mut counted = 0;
    for e in &events {
        if e["type"] == "context" {
            counted += 1;
        } else if e["type"] == "compacted" {
            compaction_before[counted] = Some(e);
        }
    }
    let mut cached_after = Vec::new();
    for i in 0..main.len().saturating_sub(1).min(if refusals == 0 { usize::MAX } else { 0 }) {
        let resummarised = compaction_before[i + 1].is_some_and(|c| c["summariser"].is_string());
        if compaction_before[i].is_some() && !resummarised {
            cached_after.push(main[i + 1].counted.unwrap().cached_tokens);
        }
    }
    Figures {
        requests: requests.len(),
        summaries: requests.iter().filter(|r| is_summary(r)).count(),
        refusals,
        compactions: compacted.len(),
        cached_after,
    }
}

/// The run compacted round after round, summarised at least once, and was never refused: the
/// loop kept every request under the window on its own.
fn assert_compacted(f: &Figures) {
    assert!(f.compactions >= 20 && f.summaries >= 1 && f.refusals == 0, "{f:?}");
    // 31 or 32 requests of the conversation, and the summariser's.
    assert!(f.requests > ROUNDS + f.summaries, "{f:?}");
}

/// Every second request after a compaction read the cache, once what stays before the newly
/// stubbed result (tools, the question, the calls and the stubs so far) passed the providers'
/// 1,024-token caching minimum: only the first few may read nothing.
fn assert_caches(f: &Figures) {
    assert_compacted(f);
    let misses = f.cached_after.iter().take_while(|&&c| c == 0).count();
    assert!(misses <= 3, "{f:?}");
    assert!(f.cached_after.len() >= 20 && f.cached_after[misses..].iter().all(|&c| c > 0), "{f:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_rounds_of_large_results_complete_on_openai_chat() {
    let f = run("openai").await;
    eprintln!("openai: {f:?}");
    assert_caches(&f);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_rounds_of_large_results_complete_on_openai_responses() {
    let f = run("openai-responses").await;
    eprintln!("openai-responses: {f:?}");
    assert_caches(&f);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_rounds_of_large_results_complete_on_anthropic() {
    let f = run("anthropic").await;
    eprintln!("anthropic: {f:?}");
    assert_caches(&f);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_rounds_of_large_results_complete_on_gemini() {
    let f = run("gemini").await;
    eprintln!("gemini: {f:?}");
    assert_compacted(&f);
}

/// A profile that says the window is 20,000 tokens on a server that takes 8,000: the first
/// request past 8,000 is refused in the API's own error, compacted and sent again, and the turn
/// goes on counting with the window the refusal showed (or below what was refused, where the
/// error gives no figures), so it completes on every API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_larger_than_the_servers_is_recovered_from_its_refusals_on_every_api() {
    for kind in ["openai", "openai-responses", "anthropic", "gemini"] {
        let f = run_with(kind, 20_000).await;
        eprintln!("{kind}, profile window 20,000: {f:?}");
        assert!(f.refusals >= 1, "{kind}: {f:?}");
    }
}
