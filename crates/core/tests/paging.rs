//! Tool output the model pages through, live: a result over the limit reaches the model cut with
//! the note, the event (what is shown and stored) keeps it whole, `read_tool_result` is offered
//! from the next request on, and an untrusted result is cut before it is framed.

mod support;

use serde_json::json;
use support::*;
use switchboard_core::{Message, ToolDef, ToolOutput, paging};

/// A tool returning `n` characters of numbered lines.
fn big(n: usize) -> TestTool {
    let def = ToolDef::new("big", "Returns a lot.", json!({"type": "object", "properties": {}}));
    TestTool::new(def, move |_, _| async move { Ok(ToolOutput::text(long_text(n))) })
}

fn long_text(n: usize) -> String {
    let mut text: String = (0..).map(|i| format!("line {i:05}\n")).take(n / 11 + 1).collect();
    text.truncate(n);
    text
}

/// A stand-in for the service's tool, so the registry has it (the loop decides when to offer it).
fn reader() -> TestTool {
    let def = ToolDef::new(paging::TOOL, "Reads a stored result.", json!({"type": "object", "properties": {}}));
    TestTool::new(def, |_, _| async { Ok(ToolOutput::text("page")) })
}

fn tool_message(history: &[Message], id: &str) -> String {
    history
        .iter()
        .find_map(|m| match m {
            Message::Tool { call_id, content, .. } if call_id == id => Some(content.clone()),
            _ => None,
        })
        .expect("the tool message")
}

fn offered(request: &switchboard_core::ProviderRequest) -> Vec<String> {
    request.tools.iter().map(|t| t.name.clone()).collect()
}

#[tokio::test]
async fn a_long_result_is_cut_for_the_model_kept_whole_in_the_event_and_the_reader_offered_from_then_on() {
    let kit = Kit::new([big(50_000), reader()]);
    let mut harness = Harness::new(&kit);
    harness.config.tool_result_limit = 4_000;
    let provider = ScriptedProvider::new([calls("", &[("c1", "big", "{}")]), text("done")]);
    let ran = harness.run(&provider).await;

    assert_eq!(ran.result("c1").output, long_text(50_000), "shown and stored whole");
    let sent = tool_message(&ran.requests[1].messages, "c1");
    assert_eq!(sent, paging::cut("c1", &long_text(50_000), 4_000));
    assert!(sent.chars().count() < 4_400, "{}", sent.len());
    assert!(sent.contains(r#"call read_tool_result with {"call_id": "c1", "offset": "#), "{sent}");
    assert_eq!(offered(&ran.requests[0]), ["big"], "nothing cut yet: the reader is not offered");
    assert_eq!(offered(&ran.requests[1]), ["big", paging::TOOL]);
}

#[tokio::test]
async fn a_result_within_the_limit_goes_whole_and_the_reader_stays_hidden() {
    let kit = Kit::new([big(3_000), reader()]);
    let mut harness = Harness::new(&kit);
    harness.config.tool_result_limit = 4_000;
    let provider = ScriptedProvider::new([calls("", &[("c1", "big", "{}")]), text("done")]);
    let ran = harness.run(&provider).await;
    assert_eq!(tool_message(&ran.requests[1].messages, "c1"), long_text(3_000));
    assert_eq!(offered(&ran.requests[1]), ["big"]);
}

#[tokio::test]
async fn an_untrusted_result_is_cut_then_framed() {
    let big = big(20_000).with(|d| d.source = switchboard_core::ToolSource::Mcp { server: "s".into() });
    let kit = Kit::new([big, reader()]);
    let mut harness = Harness::new(&kit);
    harness.config.tool_result_limit = 2_000;
    let provider = ScriptedProvider::new([calls("", &[("c1", "big", "{}")]), text("done")]);
    let ran = harness.run(&provider).await;
    let text = long_text(20_000);
    let cut = paging::cut("c1", &text, 2_000);
    assert_eq!(tool_message(&ran.requests[1].messages, "c1"), switchboard_core::egress::frame("big", &cut));
}
