//! Bounded catalogues end to end (issue 31, class 3): an MCP server listing 10,000 tools (a
//! hostile fixture on the official Python SDK) leaves chats working. The CLI against the mock
//! provider, which refuses more than 128 tools as OpenAI does: every request carries at most
//! the API's maximum and the schema budget, the person is told once, the model finds the tool
//! it needs with `find_tools`, calls it, and the answer completes.

mod common;

use common::*;
use serde_json::Value;
use switchboard_core::catalogue::MAX_REQUEST_SCHEMA_BYTES;
use switchboard_mock_provider::{Reply, Script};

fn flood_server() -> String {
    repo().join("crates/mcp/tests/fixtures/catalogue_flood_server.py").display().to_string()
}

/// Bytes of tool definitions in a Chat Completions body: name, description, parameters.
fn schema_bytes(body: &Value) -> usize {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let f = &t["function"];
            f["name"].as_str().unwrap_or("").len()
                + f["description"].as_str().unwrap_or("").len()
                + f["parameters"].to_string().len()
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_listing_ten_thousand_tools_leaves_chats_working_through_find_tools() {
    let env = Env::new(Script::new([
        Reply::tool_call("c1", "find_tools", r#"{"query": "weather forecast"}"#),
        Reply::tool_call("c2", "flood__weather_forecast", r#"{"city": "Oslo"}"#),
        Reply::text("It is sunny in Oslo."),
    ]))
    .await;
    let out = env.run(&["mcp", "add", "flood", "--yes", "--", &venv_bin("python"), &flood_server()]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    // The server's catalogue is capped, each cut with its reason.
    let out = env.run(&["mcp", "status"]).await;
    let status = stdout(&out);
    assert!(status.contains("more than 500 tools; the rest were left out"), "{status}");
    assert!(status.contains("'huge_schema': its definition is") && status.contains("left out"), "{status}");

    let (out, events) = env.chat_json(&["--approve-all", "What is the weather in Oslo?"]).await;
    assert!(out.status.success(), "{}\n{events:#?}", stderr(&out));

    let requests = env.mock.requests();
    assert_eq!(requests.len(), 3, "find, call, answer");
    for (i, r) in requests.iter().enumerate() {
        let tools = r.tool_names();
        assert!(tools.len() <= 128, "request {i} offers {} tools", tools.len());
        assert!(schema_bytes(&r.body) <= MAX_REQUEST_SCHEMA_BYTES, "request {i}: {} bytes", schema_bytes(&r.body));
        assert!(tools.iter().any(|t| t == "find_tools"), "request {i}: {tools:?}");
    }
    assert_eq!(requests[0].tool_names().len(), 128, "as many as the API takes");
    assert!(!requests[0].tool_names().iter().any(|t| t == "flood__weather_forecast"));
    assert!(requests[1].tool_names().iter().any(|t| t == "flood__weather_forecast"), "found, then offered");

    let notices: Vec<&Value> = of_type(&events, "notice").into_iter().filter(|n| n["kind"] == "tooManyTools").collect();
    assert_eq!(notices.len(), 1, "{events:#?}");
    let notice = notices[0]["message"].as_str().unwrap();
    // The server's 499 (500 taken, one too large) and the built-ins.
    let enabled: usize = notice.split(' ').next().unwrap().parse().unwrap();
    assert!(enabled > 499, "{notice}");
    assert!(notice.contains(" tools are enabled, but one request to this model's API carries at most 128 tools"));
    assert!(notice.contains("127 are offered directly") && notice.contains("find_tools"), "{notice}");

    let results = of_type(&events, "toolResult");
    assert_eq!(results.len(), 2, "{events:#?}");
    assert_eq!(results[0]["status"], "ok");
    assert!(results[0]["output"].as_str().unwrap().contains("- flood__weather_forecast: The weather forecast"));
    assert_eq!(results[1]["status"], "ok", "{:?}", results[1]);
    assert!(results[1]["output"].as_str().unwrap().contains("Sunny in Oslo"), "{:?}", results[1]);
    let done = of_type(&events, "done");
    assert_eq!(done[0]["finishReason"], "stop");
    let text: String = of_type(&events, "textDelta").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(text, "It is sunny in Oslo.");
}

/// Each API's own maximum reaches the loop: a Gemini profile's requests carry at most 64 tools
/// (the lower of Google's documented figures), `find_tools` among them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_request_carries_at_most_its_apis_64_tools() {
    let env = Env::new(Script::new([])).await;
    let mock = switchboard_mock_provider::MockServer::start(Script::new([Reply::text("Hello.")])).await;
    let base = format!("http://{}/v1beta", mock.addr());
    let out = env.run(&["providers", "add", "g", "--kind", "gemini", "--base-url", &base, "--model", "m"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["mcp", "add", "flood", "--yes", "--", &venv_bin("python"), &flood_server()]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let (out, events) =
        env.json_with_key(&["chat", "--json", "--provider", "g", "Hi"], "g", "AIza-e2e-fake-key-0123456789").await;
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = mock.requests();
    let declarations: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| t["functionDeclarations"].as_array().into_iter().flatten())
        .filter_map(|d| d["name"].as_str())
        .collect();
    assert_eq!(declarations.len(), 64, "{declarations:?}");
    assert!(declarations.contains(&"find_tools"));
    let notice = of_type(&events, "notice").into_iter().find(|n| n["kind"] == "tooManyTools").expect("the notice");
    assert!(notice["message"].as_str().unwrap().contains("carries at most 64 tools"), "{notice}");
    assert_eq!(of_type(&events, "done")[0]["finishReason"], "stop");
}
