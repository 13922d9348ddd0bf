//! Tool output the model pages through, through the real CLI: a 50,000-character page fetched by
//! `web_fetch` reaches the model cut with a note, the model reads the rest back page by page with
//! `read_tool_result`, its final answer can quote a fact from the very end (only there if the
//! pages reached it), and the stored result is whole.

mod common;

use common::*;
use serde_json::json;
use switchboard_core::paging;
use switchboard_mock_provider::{Reply, Script};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const FACT: &str = "FACT-END the answer is 42";

/// 50,000 characters of numbered lines ending with [`FACT`].
fn page_text() -> String {
    let mut text: String = (0..).map(|i| format!("line {i:05} of the report\n")).take(2_500).collect();
    text.truncate(50_000 - FACT.len() - 1);
    text.push('\n');
    text.push_str(FACT);
    text
}

/// Serves `body` as text/plain on loopback; the URL.
async fn serve(body: String) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let _ = conn.read(&mut buf).await;
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(head.as_bytes()).await;
                let _ = conn.write_all(body.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}/report.txt")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50000_character_result_is_cut_read_back_in_pages_and_stored_whole() {
    let url = serve(page_text()).await;
    let page = paging::max_page(paging::DEFAULT_LIMIT) as u64;
    let read = |offset: u64| json!({"call_id": "c1", "offset": offset}).to_string();
    let script = Script::new([
        Reply::tool_call("c1", "web_fetch", json!({"url": url, "max_chars": 60_000}).to_string()),
        Reply::tool_call("r1", paging::TOOL, read(page)),
        Reply::tool_call("r2", paging::TOOL, read(2 * page)),
        Reply::tool_call("r3", paging::TOOL, read(3 * page)),
        Reply::quote("FACT-END"),
    ]);
    let env = Env::new(script).await;
    let out = env.run(&["settings", "set", "web", r#"{"allowLocalAddresses": true}"#, "--yes"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let (out, events) = env.chat_json(&[&format!("Summarise {url}")]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(events.last().unwrap()["finishReason"], "stop", "{events:#?}");
    let text: String = of_type(&events, "textDelta").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(text, FACT, "the fact at the very end reached the model");

    // The fetch reached the model cut, with the note; the reader was offered from then on.
    let requests = env.mock.requests();
    let tool = |i: usize, id: &str| -> String {
        let msgs = requests[i].messages();
        let m = msgs.iter().find(|m| m["role"] == "tool" && m["tool_call_id"] == id).expect("tool message");
        m["content"].as_str().unwrap().to_owned()
    };
    let sent = tool(1, "c1");
    assert!(sent.chars().count() < paging::DEFAULT_LIMIT + 600, "{}", sent.chars().count());
    assert!(sent.contains(r#"call read_tool_result with {"call_id": "c1", "offset": "#), "{sent}");
    assert!(!sent.contains(FACT));
    let names = |i: usize| requests[i].tool_names();
    assert!(!names(0).contains(&paging::TOOL.to_owned()) && names(1).contains(&paging::TOOL.to_owned()));

    // Each page is a range of the stored result; the last one says it is the end.
    let stored = env.show_json(&conversation_id(&events)).await;
    let whole = stored[1]["toolCalls"][0]["result"]["output"].as_str().unwrap().to_owned();
    assert!(whole.contains(&page_text()), "the stored result is whole");
    for (i, id, offset) in [(2, "r1", page), (3, "r2", 2 * page), (4, "r3", 3 * page)] {
        let expected = paging::page(&whole, offset as usize, page as usize);
        assert!(tool(i, id).contains(expected), "{id}");
    }
    assert!(tool(4, "r3").contains("That is the end of the result."));
    assert!(tool(4, "r3").contains(FACT));
}
