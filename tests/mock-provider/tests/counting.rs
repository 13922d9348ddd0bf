//! The mock's own token count: a context window refused in each API's real error, usage counted
//! from the request, prompt caching, and replies quoting the request.

mod common;

use common::TIMEOUT;
use serde_json::{Value, json};
use switchboard_mock_provider::count::{MESSAGE_TOKENS, REQUEST_TOKENS, text_tokens};
use switchboard_mock_provider::{ContextRefusal, Counted, MockServer, Reply, Script};

const APIS: [&str; 4] = ["chat", "responses", "anthropic", "gemini"];

/// A non-streamed request (Gemini's is its stream) with `system` and one user message `user`,
/// sent to `server`: (status, JSON body, or the last SSE event's data for Gemini).
async fn send(server: &MockServer, api: &str, system: &str, user: &str) -> (u16, Value) {
    let client = reqwest::Client::new();
    let base = format!("http://{}", server.addr());
    let request = match api {
        "chat" => client.post(format!("{base}/v1/chat/completions")).json(&json!({"model": "m", "messages": [
            {"role": "system", "content": system}, {"role": "user", "content": user}]})),
        "responses" => client
            .post(format!("{base}/v1/responses"))
            .json(&json!({"model": "m", "instructions": system, "input": [{"role": "user", "content": user}]})),
        "anthropic" => {
            client.post(format!("{base}/v1/messages")).header("anthropic-version", "2023-06-01").json(&json!({
                "model": "m", "max_tokens": 100,
                "system": [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                "messages": [{"role": "user", "content": [{"type": "text", "text": user, "cache_control": {"type": "ephemeral"}}]}],
            }))
        }
        _ => client.post(format!("{base}/v1beta/models/m:streamGenerateContent?alt=sse")).json(&json!({
            "systemInstruction": {"parts": [{"text": system}]},
            "contents": [{"role": "user", "parts": [{"text": user}]}]})),
    };
    let response = tokio::time::timeout(TIMEOUT, request.send()).await.expect("timed out").expect("request failed");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    if api == "gemini" && status == 200 {
        let last = text.lines().filter_map(|l| l.strip_prefix("data: ")).next_back().expect("an event");
        return (status, serde_json::from_str(last).unwrap());
    }
    (status, serde_json::from_str(&text).unwrap_or_else(|_| panic!("{api}: not JSON: {text}")))
}

/// The count of a request with `system` and `user` by the documented rule: the request, two
/// messages (a role and a text each).
fn expected(system: &str, user: &str) -> u64 {
    REQUEST_TOKENS
        + 2 * MESSAGE_TOKENS
        + text_tokens("system")
        + text_tokens(system)
        + text_tokens("user")
        + text_tokens(user)
}

/// (prompt incl. cached, cached, written, completion) as `api` reports its usage.
fn usage(api: &str, body: &Value) -> (u64, u64, u64, u64) {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    match api {
        "chat" => {
            let u = &body["usage"];
            (n(&u["prompt_tokens"]), n(&u["prompt_tokens_details"]["cached_tokens"]), 0, n(&u["completion_tokens"]))
        }
        "responses" => {
            let u = &body["usage"];
            (n(&u["input_tokens"]), n(&u["input_tokens_details"]["cached_tokens"]), 0, n(&u["output_tokens"]))
        }
        "anthropic" => {
            let u = &body["usage"];
            let (read, written) = (n(&u["cache_read_input_tokens"]), n(&u["cache_creation_input_tokens"]));
            (n(&u["input_tokens"]) + read + written, read, written, n(&u["output_tokens"]))
        }
        _ => {
            let u = &body["usageMetadata"];
            (n(&u["promptTokenCount"]), n(&u["cachedContentTokenCount"]), 0, n(&u["candidatesTokenCount"]))
        }
    }
}

#[tokio::test]
async fn a_prompt_over_the_window_is_refused_in_each_apis_own_words_and_consumes_nothing() {
    let user = "word ".repeat(200);
    for api in APIS {
        let server = MockServer::start(Script::new([Reply::text("fits")]).with_context_window(100)).await;
        let prompt = expected("be brief", &user);
        let (status, body) = send(&server, api, "be brief", &user).await;
        assert_eq!(status, 400, "{api}: {body}");
        match api {
            "chat" => assert_eq!(
                body,
                json!({"error": {"message": format!("This model's maximum context length is 100 tokens. However, your messages resulted in {prompt} tokens. Please reduce the length of the messages."),
                    "type": "invalid_request_error", "code": "context_length_exceeded"}})
            ),
            "responses" => assert_eq!(
                body,
                json!({"error": {"message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
                    "type": "invalid_request_error", "param": null, "code": "context_length_exceeded"}})
            ),
            "anthropic" => assert_eq!(
                body,
                json!({"type": "error", "error": {"type": "invalid_request_error",
                    "message": format!("prompt is too long: {prompt} tokens > 100 maximum")}})
            ),
            _ => assert_eq!(
                body,
                json!({"error": {"code": 400, "status": "INVALID_ARGUMENT",
                    "message": format!("The input token count ({prompt}) exceeds the maximum number of tokens allowed (100).")}})
            ),
        }
        assert!(server.requests().is_empty(), "{api}: a refused request is not recorded");
        assert_eq!(server.remaining_replies(), 1, "{api}: nor does it consume a reply");
        let path = server.refusals()[0].path.clone();
        assert_eq!(server.refusals(), vec![ContextRefusal { path, prompt_tokens: prompt, window: 100 }]);

        server.set_context_window(Some(prompt));
        let (status, body) = send(&server, api, "be brief", &user).await;
        assert_eq!(status, 200, "{api}: a prompt of exactly the window fits: {body}");
    }
}

#[tokio::test]
async fn usage_is_counted_from_the_request_in_each_apis_shape() {
    for api in APIS {
        let server =
            MockServer::start(Script::new([Reply::text("The answer is forty-two.")]).with_counted_usage()).await;
        let (status, body) = send(&server, api, "You are terse.", "What is six times seven?").await;
        assert_eq!(status, 200, "{api}: {body}");
        let prompt = expected("You are terse.", "What is six times seven?");
        let written_under_1024_tokens = 0;
        assert_eq!(
            usage(api, &body),
            (prompt, 0, written_under_1024_tokens, text_tokens("The answer is forty-two.")),
            "{api}: {body}"
        );
        assert_eq!(
            server.requests()[0].counted,
            Some(Counted { prompt_tokens: prompt, cached_tokens: 0, cache_write_tokens: 0 }),
            "{api}"
        );
    }
}

#[tokio::test]
async fn scripted_usage_is_kept_unless_counting_is_asked_for() {
    let server = MockServer::start(Script::new([Reply::text("a")])).await;
    let (_, body) = send(&server, "chat", "s", "u").await;
    assert_eq!(usage("chat", &body), (10, 0, 0, 5));
    assert_eq!(server.requests()[0].counted, None);
}

/// A system prompt of about 2,000 tokens: one line per fact.
fn long_system() -> String {
    (0..200).map(|i| format!("Fact {i}: the value of item {i} is {}.\n", i * 7)).collect()
}

#[tokio::test]
async fn openai_caches_the_common_prefix_of_1024_tokens_or_more_in_steps_of_128() {
    let system = long_system();
    for api in ["chat", "responses"] {
        let server =
            MockServer::start(Script::new([Reply::text("a"), Reply::text("b"), Reply::text("c")]).with_counted_usage())
                .await;
        let (_, first) = send(&server, api, &system, "first question").await;
        let (_, second) = send(&server, api, &system, "second question").await;
        let (prompt, cached, _, _) = usage(api, &second);
        assert_eq!(usage(api, &first).1, 0, "{api}: nothing cached at first");
        assert!(prompt > 1024, "{api}: {prompt}");
        // Everything before the user's text is common: the request, both messages' starts, the system text.
        let common = expected(&system, "second question") - text_tokens("second question");
        assert_eq!(cached, common - common % 128, "{api}");
        let (_, third) = send(&server, api, "short", "first question").await;
        assert_eq!(usage(api, &third).1, 0, "{api}: a changed start misses the cache");
    }
}

#[tokio::test]
async fn anthropic_reads_up_to_the_last_shared_breakpoint_and_writes_the_rest() {
    let system = long_system();
    let server = MockServer::start(Script::new([Reply::text("a"), Reply::text("b")]).with_counted_usage()).await;
    let (_, first) = send(&server, "anthropic", &system, "first question").await;
    let (prompt, read, written, _) = usage("anthropic", &first);
    assert_eq!((read, written), (0, prompt), "the first request writes up to its last breakpoint (the end)");
    let (_, second) = send(&server, "anthropic", &system, "second question").await;
    let (prompt, read, written, _) = usage("anthropic", &second);
    let system_end = REQUEST_TOKENS + MESSAGE_TOKENS + text_tokens("system") + text_tokens(&system);
    assert_eq!(read, system_end, "the system prompt's breakpoint is shared");
    assert_eq!(written, prompt - system_end);
    assert_eq!(
        server.requests()[1].counted,
        Some(Counted { prompt_tokens: prompt, cached_tokens: read, cache_write_tokens: written })
    );
}

#[tokio::test]
async fn gemini_reports_no_cache() {
    let system = long_system();
    let server = MockServer::start(Script::new([Reply::text("a"), Reply::text("b")]).with_counted_usage()).await;
    send(&server, "gemini", &system, "one").await;
    let (_, second) = send(&server, "gemini", &system, "two").await;
    assert_eq!(usage("gemini", &second).1, 0);
}

#[tokio::test]
async fn a_chained_responses_request_counts_and_quotes_the_chain() {
    let server = MockServer::start(
        Script::new([Reply::text("MARK-1 the answer is 7"), Reply::quote("MARK-")]).with_counted_usage(),
    )
    .await;
    let url = format!("http://{}/v1/responses", server.addr());
    let client = reqwest::Client::new();
    let first: Value = client
        .post(&url)
        .json(&json!({"model": "m", "input": "MARK-0 remember this"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = first["id"].as_str().unwrap();
    let second: Value = client
        .post(&url)
        .json(&json!({"model": "m", "previous_response_id": id, "input": "what did I say?"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(second["output"][0]["content"][0]["text"], "MARK-0 remember this\nMARK-1 the answer is 7");
    let first_prompt = first["usage"]["input_tokens"].as_u64().unwrap();
    let own = MESSAGE_TOKENS + text_tokens("user") + text_tokens("what did I say?");
    let output = MESSAGE_TOKENS + text_tokens("assistant") + text_tokens("MARK-1 the answer is 7");
    assert_eq!(second["usage"]["input_tokens"], first_prompt + output + own);
}

#[tokio::test]
async fn quote_and_keep_lines_answer_from_the_request() {
    let server =
        MockServer::start(Script::new([Reply::quote("FACT-2"), Reply::keep_lines("FACT"), Reply::quote("FACT-9")]))
            .await;
    let system = "Keep these.\n  FACT-1 alpha is 1\nFACT-2 beta is 2\nnoise\nsee FACT-2 beta is 2";
    let (_, quoted) = send(&server, "chat", system, "FACT-2 beta is 2").await;
    assert_eq!(quoted["choices"][0]["message"]["content"], "FACT-2 beta is 2", "each line once");
    let (_, kept) = send(&server, "chat", system, "anything").await;
    assert_eq!(kept["choices"][0]["message"]["content"], "FACT-1 alpha is 1\nFACT-2 beta is 2\nsee FACT-2 beta is 2");
    let (_, none) = send(&server, "chat", system, "x").await;
    assert_eq!(none["choices"][0]["message"]["content"], "no line starts with FACT-9");
}

#[test]
fn a_50000_character_text_is_counted_quickly_and_linearly() {
    let text = "lorem ipsum dolor sit amet ".repeat(2000);
    let started = std::time::Instant::now();
    let tokens = text_tokens(&text);
    assert!(tokens > 5_000 && tokens < 20_000, "{tokens}");
    let one_word = "x".repeat(50_000);
    assert!(text_tokens(&one_word) > 0);
    // Not a performance target: a bound so that a quadratic count fails rather than hangs.
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}
