//! The body of a Messages request: alternating roles with grouped tool results, no blank text,
//! cache breakpoints, `max_tokens`, thinking and the kept thinking blocks sent back (see the
//! module docs of [`super`]).

use super::API;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use switchboard_core::{Message, Part, ProviderRequest, ProviderState, ToolChoice};

/// The smallest thinking budget the API takes.
pub const MIN_THINKING_BUDGET: u32 = 1024;

/// `max_tokens` for models whose output limit is not known to be lower.
pub const DEFAULT_MAX_TOKENS: u64 = 8192;

/// `max_tokens` for the Claude 3 models (not 3.5 or 3.7), whose output limit is 4096.
pub const CLAUDE_3_MAX_TOKENS: u64 = 4096;

/// `max_tokens` for `model`: see the module docs.
pub fn max_tokens_for(model: &str) -> u64 {
    let m = model.to_ascii_lowercase();
    let claude_3 = ["claude-3-opus", "claude-3-sonnet", "claude-3-haiku"].iter().any(|p| m.starts_with(p));
    if claude_3 { CLAUDE_3_MAX_TOKENS } else { DEFAULT_MAX_TOKENS }
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Whether the API would refuse `text` as a text block (it refuses empty and blank ones).
pub(super) fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// A call id the API accepts (`^[a-zA-Z0-9_-]+$`). Ids from other providers (history made with
/// another profile) may hold other characters; they are rewritten the same way on the `tool_use`
/// and its `tool_result`, with a hash of the original so two ids never become one.
pub fn wire_call_id(id: &str) -> String {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
        return id.to_owned();
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let clean: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).take(48).collect();
    format!("{clean}_{hash:016x}")
}

/// The `input` object of a `tool_use` block, or `None` when the arguments are not a JSON object
/// (then `{}` is sent; see the module docs). Blank arguments are an empty object.
fn call_input(arguments: &str) -> Option<Map<String, Value>> {
    if blank(arguments) {
        return Some(Map::new());
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// One attached file as a content block (see [`crate::parts`]), placed before the person's
/// text as the guides advise: an image as an `image` block with a base64 source
/// (<https://docs.anthropic.com/en/docs/build-with-claude/vision>), a PDF as a `document` block
/// with a base64 `application/pdf` source and its name as `title`
/// (<https://docs.anthropic.com/en/docs/build-with-claude/pdf-support>), a text file as a `text`
/// block.
fn part_block(part: &Part) -> Value {
    match part {
        Part::Image { image, .. } => {
            json!({"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}})
        }
        Part::Pdf { name, data } => json!({
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": data},
            "title": crate::parts::pdf_name(name),
        }),
        Part::Text { .. } => json!({"type": "text", "text": crate::parts::part_text(part)}),
    }
}

/// Appends `block` to the last message when it has `role`, else starts a message.
fn push_block(messages: &mut Vec<(&'static str, Vec<Value>)>, role: &'static str, block: Value) {
    match messages.last_mut() {
        Some((r, blocks)) if *r == role => blocks.push(block),
        _ => messages.push((role, vec![block])),
    }
}

/// The kept thinking blocks of an assistant message made by this API at `origin`.
fn thinking_blocks<'a>(state: Option<&'a ProviderState>, origin: &str) -> &'a [Value] {
    ProviderState::for_endpoint(state, API, origin)
        .and_then(|data| data["blocks"].as_array())
        .map_or(&[], Vec::as_slice)
}

/// `thinking` for this request, or `None` to leave thinking off (see the module docs).
fn thinking(request: &ProviderRequest, origin: &str) -> Option<u32> {
    let budget = request.options.budget().filter(|b| *b > 0)?;
    if matches!(request.tool_choice, ToolChoice::Required | ToolChoice::OneOf(_) | ToolChoice::Named(_))
        && !request.tools.is_empty()
    {
        return None;
    }
    let last_assistant = request.messages.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, state, .. } => Some((tool_calls, state)),
        _ => None,
    });
    if let Some((calls, state)) = last_assistant
        && !calls.is_empty()
        && thinking_blocks(state.as_ref(), origin).is_empty()
    {
        return None;
    }
    Some(budget.max(MIN_THINKING_BUDGET))
}

/// The JSON body of a streamed Messages request to the endpoint at `origin` (whose kept thinking
/// blocks go back; any other endpoint's are dropped).
pub fn request_body(request: &ProviderRequest, origin: &str) -> Value {
    // Tool-call arguments that had to be replaced by `{}`, by wire id: their tool results say so.
    let mut replaced: BTreeMap<String, &str> = BTreeMap::new();
    let mut used_tools: Vec<&str> = Vec::new();
    let mut messages: Vec<(&'static str, Vec<Value>)> = Vec::with_capacity(request.messages.len());
    for m in &request.messages {
        match m {
            Message::User { text, parts } => {
                for part in parts {
                    push_block(&mut messages, "user", part_block(part));
                }
                if !blank(text) {
                    push_block(&mut messages, "user", json!({"type": "text", "text": text}));
                }
            }
            Message::Assistant { text, tool_calls, state } => {
                for block in thinking_blocks(state.as_ref(), origin) {
                    push_block(&mut messages, "assistant", block.clone());
                }
                if !blank(text) {
                    push_block(&mut messages, "assistant", json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let id = wire_call_id(&call.id);
                    let input = call_input(&call.arguments).unwrap_or_else(|| {
                        replaced.insert(id.clone(), call.arguments.as_str());
                        Map::new()
                    });
                    if !used_tools.contains(&call.name.as_str()) {
                        used_tools.push(&call.name);
                    }
                    push_block(
                        &mut messages,
                        "assistant",
                        json!({"type": "tool_use", "id": id, "name": call.name, "input": input}),
                    );
                }
            }
            Message::Tool { call_id, content, is_error, images, .. } => {
                let id = wire_call_id(call_id);
                let mut content = content.clone();
                if let Some(raw) = replaced.get(&id)
                    && !content.contains(raw)
                {
                    let shown: String = raw.chars().take(2000).collect();
                    content.push_str(&format!(
                        "\n\n(The arguments of this call were not a JSON object and are shown to you as {{}}; what you sent: {shown})"
                    ));
                }
                let mut block = json!({"type": "tool_result", "tool_use_id": id});
                // The API refuses an empty text block inside a result too; no content is allowed.
                if images.is_empty() {
                    if !blank(&content) {
                        block["content"] = json!(content);
                    }
                } else {
                    // Images go back as image blocks of the result, after its text.
                    let mut blocks: Vec<Value> = Vec::new();
                    if !blank(&content) {
                        blocks.push(json!({"type": "text", "text": content}));
                    }
                    blocks.extend(images.iter().map(|i| {
                        json!({"type": "image", "source": {"type": "base64", "media_type": i.mime_type, "data": i.data}})
                    }));
                    block["content"] = Value::Array(blocks);
                }
                if *is_error {
                    block["is_error"] = json!(true);
                }
                push_block(&mut messages, "user", block);
            }
        }
    }
    // A user message that answers tool calls must begin with its tool_result blocks; a person's
    // text merged into it (a question asked after an interrupted round) goes after them.
    for (role, blocks) in &mut messages {
        if *role == "user" {
            blocks.sort_by_key(|b| b["type"] != "tool_result");
        }
    }
    // The last message, and the one before it: a compaction that shortens the latest whole
    // result (it becomes a stub once the next one arrives) keeps everything before that result,
    // so the next request still reads the cache up to the call that asked for it.
    let n = messages.len();
    for (_, blocks) in messages.iter_mut().skip(n.saturating_sub(2)) {
        if let Some(last) = blocks.last_mut() {
            last["cache_control"] = ephemeral();
        }
    }
    let mut max_tokens = request.options.max_output_tokens.map_or_else(|| max_tokens_for(&request.model), u64::from);
    let thinking = thinking(request, origin);
    if let Some(budget) = thinking {
        // The budget is part of max_tokens and must stay below it.
        max_tokens = max_tokens.max(u64::from(budget) + max_tokens_for(&request.model).min(4096));
    }
    let mut body = json!({
        "model": request.model,
        "max_tokens": max_tokens,
        "stream": true,
        "messages": messages
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect::<Vec<_>>(),
    });
    if let Some(budget) = thinking {
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    } else if let Some(t) = request.options.temperature {
        // Anthropic's range is 0 to 1, and newer models refuse temperature and top_p together;
        // while Claude thinks it takes neither.
        body["temperature"] = json!(t.min(1.0));
    } else if let Some(p) = request.options.top_p {
        body["top_p"] = json!(p);
    }
    if let Some(system) = request.system.as_deref().filter(|s| !blank(s)) {
        body["system"] = json!([{"type": "text", "text": system, "cache_control": ephemeral()}]);
    }
    let (mut tools, choice): (Vec<Value>, Option<Value>) = if request.tools.is_empty() {
        // The API refuses a history with tool blocks and no tools: declare the used ones, unusable.
        let tools: Vec<Value> = used_tools
            .iter()
            .map(|name| {
                json!({"name": name, "description": "Not available in this request.", "input_schema": {"type": "object"}})
            })
            .collect();
        let choice = (!tools.is_empty()).then(|| json!({"type": "none"}));
        (tools, choice)
    } else {
        let tools = request
            .tools
            .iter()
            .map(|t| {
                let mut schema = match &t.parameters {
                    Value::Object(map) => Value::Object(map.clone()),
                    _ => json!({}),
                };
                // The API requires an object schema and says so only by refusing the request.
                if schema.get("type").is_none() {
                    schema["type"] = json!("object");
                }
                let mut tool = json!({"name": t.name, "input_schema": schema});
                if !blank(&t.description) {
                    tool["description"] = json!(t.description);
                }
                tool
            })
            .collect();
        let choice = match &request.tool_choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            // Tools stay declared: they are part of the cached prefix, and history may use them.
            ToolChoice::None => json!({"type": "none"}),
            // `any` is "call one of the offered tools"; OneOf offers exactly the forced ones.
            ToolChoice::Required | ToolChoice::OneOf(_) => json!({"type": "any"}),
            // One forced tool: one call of it, not several in parallel.
            ToolChoice::Named(name) => json!({"type": "tool", "name": name, "disable_parallel_tool_use": true}),
        };
        (tools, Some(choice))
    };
    if let Some(last) = tools.last_mut() {
        last["cache_control"] = ephemeral();
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    if let Some(choice) = choice {
        body["tool_choice"] = choice;
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::provider::ToolSpec;
    use switchboard_core::{GenerationOptions, ReasoningEffort, ToolCall};

    const ORIGIN: &str = "https://api.anthropic.com";

    fn request(messages: Vec<Message>, tools: Vec<ToolSpec>, tool_choice: ToolChoice) -> ProviderRequest {
        ProviderRequest {
            model: "claude-sonnet-4-5".into(),
            system: Some("sys".into()),
            messages,
            tools,
            tool_choice,
            options: Default::default(),
        }
    }

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("{name} does"),
            parameters: json!({"type":"object","properties":{}}),
        }
    }

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
    }

    fn result(id: &str, content: &str, is_error: bool) -> Message {
        Message::Tool {
            images: Default::default(),
            call_id: id.into(),
            name: "t".into(),
            content: content.into(),
            is_error,
        }
    }

    #[test]
    fn attached_files_are_blocks_before_the_text() {
        let image = switchboard_core::ToolImage { mime_type: "image/webp".into(), data: "UklGR".into() };
        let parts = vec![
            Part::Image { name: "a.webp".into(), image },
            Part::Pdf { name: "spec.pdf".into(), data: "JVBERi0x".into() },
            Part::Text {
                name: "r.pdf".into(),
                mime_type: "application/pdf".into(),
                text: "Words".into(),
                note: Some("text extracted from a 1-page PDF".into()),
            },
        ];
        let body = request_body(
            &request(vec![Message::User { text: "Compare".into(), parts }], vec![], ToolChoice::Auto),
            ORIGIN,
        );
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "UklGR"}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0x"},
                    "title": "spec.pdf"},
                {"type": "text", "text": "File r.pdf (application/pdf; text extracted from a 1-page PDF):\n```\nWords\n```"},
                {"type": "text", "text": "Compare", "cache_control": {"type": "ephemeral"}},
            ])
        );
    }

    #[test]
    fn history_maps_to_alternating_blocks_with_grouped_tool_results() {
        let req = request(
            vec![
                Message::user("hi"),
                Message::Assistant {
                    text: "Checking.".into(),
                    tool_calls: vec![call("toolu_1", "a", r#"{"x":1}"#), call("toolu_2", "b", "")],
                    state: None,
                },
                result("toolu_1", "one", false),
                result("toolu_2", "boom", true),
                Message::Assistant { text: "Done.".into(), tool_calls: vec![], state: None },
                Message::user("again"),
            ],
            vec![tool("a"), tool("b")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["max_tokens"], 8192);
        assert_eq!(body["stream"], true);
        assert_eq!(body["system"], json!([{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}]));
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 5, "{m:#?}");
        assert_eq!(m[0], json!({"role":"user","content":[{"type":"text","text":"hi"}]}));
        assert_eq!(
            m[1],
            json!({"role":"assistant","content":[
                {"type":"text","text":"Checking."},
                {"type":"tool_use","id":"toolu_1","name":"a","input":{"x":1}},
                {"type":"tool_use","id":"toolu_2","name":"b","input":{}},
            ]})
        );
        assert_eq!(
            m[2],
            json!({"role":"user","content":[
                {"type":"tool_result","tool_use_id":"toolu_1","content":"one"},
                {"type":"tool_result","tool_use_id":"toolu_2","content":"boom","is_error":true},
            ]}),
            "consecutive results are one user message"
        );
        assert_eq!(m[3]["role"], "assistant");
        let before_last = m[3]["content"].as_array().unwrap().last().unwrap();
        assert_eq!(before_last["cache_control"], json!({"type":"ephemeral"}), "so is the message before it");
        assert_eq!(
            m[4],
            json!({"role":"user","content":[{"type":"text","text":"again","cache_control":{"type":"ephemeral"}}]}),
            "the last message is a cache breakpoint"
        );
        assert_eq!(body["tool_choice"], json!({"type":"auto"}));
        assert_eq!(
            body["tools"][0],
            json!({"name":"a","description":"a does","input_schema":{"type":"object","properties":{}}})
        );
        assert_eq!(body["tools"][1]["cache_control"], json!({"type":"ephemeral"}), "the last tool is a breakpoint");
        let breakpoints = body.to_string().matches("cache_control").count();
        assert_eq!(breakpoints, 4, "at most 4 are allowed");
    }

    #[test]
    fn same_role_messages_merge_and_blank_text_is_never_sent() {
        let req = request(
            vec![
                Message::user("a"),
                Message::user("  "),
                Message::Assistant { text: String::new(), tool_calls: vec![], state: None },
                Message::user("b"),
                Message::Assistant { text: " \n".into(), tool_calls: vec![call("c1", "t", "{}")], state: None },
                result("c1", "", false),
                // A question asked after an interrupted round joins the results, after them.
                Message::user("next"),
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m.len(), 3, "{m:#?}");
        assert_eq!(m[0], json!({"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}));
        assert_eq!(
            m[1],
            json!({"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"t","input":{},"cache_control":{"type":"ephemeral"}}]})
        );
        assert_eq!(
            m[2]["content"][0],
            json!({"type":"tool_result","tool_use_id":"c1"}),
            "an empty result has no content"
        );
        assert_eq!(m[2]["content"][1]["text"], "next");
        assert!(!body.to_string().contains(r#""text":"""#));
    }

    #[test]
    fn images_of_a_result_become_image_blocks_after_its_text() {
        let png = switchboard_core::ToolImage::checked("image/png", "iVBORw0KGgo=").unwrap();
        let with_image = Message::Tool {
            call_id: "c1".into(),
            name: "t".into(),
            content: "Here it is.".into(),
            is_error: false,
            images: vec![png],
        };
        let req = request(
            vec![
                Message::Assistant { text: String::new(), tool_calls: vec![call("c1", "t", "{}")], state: None },
                with_image,
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(
            body["messages"][1]["content"][0]["content"],
            json!([
                {"type": "text", "text": "Here it is."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
            ])
        );
    }

    #[test]
    fn tool_results_lead_their_user_message_even_if_text_came_first() {
        let req = request(
            vec![
                Message::Assistant { text: String::new(), tool_calls: vec![call("c1", "t", "{}")], state: None },
                Message::user("hm"),
                result("c1", "r", false),
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["messages"][1]["content"][0]["type"], "tool_result");
        assert_eq!(body["messages"][1]["content"][1]["type"], "text");
    }

    #[test]
    fn arguments_that_are_not_an_object_are_sent_as_empty_input_and_quoted_in_the_result() {
        let req = request(
            vec![
                Message::user("go"),
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![call("c1", "t", "[1, 2"), call("c2", "t", "[3]")],
                    state: None,
                },
                result("c1", "Invalid JSON arguments for 't'. Arguments received: [1, 2.", true),
                result("c2", "Invalid arguments for 't': not an object.", true),
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["messages"][1]["content"][0]["input"], json!({}));
        assert_eq!(body["messages"][1]["content"][1]["input"], json!({}));
        let results = &body["messages"][2]["content"];
        assert_eq!(
            results[0]["content"], "Invalid JSON arguments for 't'. Arguments received: [1, 2.",
            "a result that already quotes the arguments is unchanged"
        );
        let second = results[1]["content"].as_str().unwrap();
        assert!(
            second.starts_with("Invalid arguments for 't': not an object.") && second.ends_with("what you sent: [3])"),
            "{second}"
        );
    }

    #[test]
    fn call_ids_from_other_apis_are_made_safe_the_same_way_on_both_sides() {
        let req = request(
            vec![
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![call("fc/1.a", "t", "{}"), call("fc/1:a", "t", "{}")],
                    state: None,
                },
                result("fc/1.a", "r1", false),
                result("fc/1:a", "r2", false),
            ],
            vec![tool("t")],
            ToolChoice::Auto,
        );
        let body = request_body(&req, ORIGIN);
        let a = body["messages"][0]["content"][0]["id"].as_str().unwrap();
        let b = body["messages"][0]["content"][1]["id"].as_str().unwrap();
        assert_ne!(a, b, "two ids never become one");
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-'), "{a}");
        assert_eq!(body["messages"][1]["content"][0]["tool_use_id"], a);
        assert_eq!(body["messages"][1]["content"][1]["tool_use_id"], b);
        assert_eq!(wire_call_id("toolu_01AbC-x"), "toolu_01AbC-x");
    }

    #[test]
    fn tool_choice_maps_to_the_apis_forcing() {
        let mut req = request(vec![Message::user("q")], vec![tool("a"), tool("b")], ToolChoice::Auto);
        for (choice, wire) in [
            (ToolChoice::Auto, json!({"type":"auto"})),
            (ToolChoice::None, json!({"type":"none"})),
            (ToolChoice::Required, json!({"type":"any"})),
            (ToolChoice::OneOf(vec!["a".into(), "b".into()]), json!({"type":"any"})),
            (ToolChoice::Named("a".into()), json!({"type":"tool","name":"a","disable_parallel_tool_use":true})),
        ] {
            req.tool_choice = choice;
            let body = request_body(&req, ORIGIN);
            assert_eq!(body["tool_choice"], wire);
            assert_eq!(body["tools"].as_array().unwrap().len(), 2, "tools stay declared");
        }
        req.tools.clear();
        let body = request_body(&req, ORIGIN);
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "no tools, no tool_choice");
    }

    #[test]
    fn a_history_with_calls_and_no_tools_offered_declares_the_used_tools_unusable() {
        let req = request(
            vec![
                Message::user("q"),
                Message::Assistant { text: String::new(), tool_calls: vec![call("c1", "get_time", "{}")], state: None },
                result("c1", "noon", false),
            ],
            vec![],
            ToolChoice::None,
        );
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["tools"][0]["name"], "get_time");
        assert_eq!(body["tools"][0]["input_schema"], json!({"type":"object"}));
        assert_eq!(body["tool_choice"], json!({"type":"none"}));
    }

    #[test]
    fn schemas_without_a_type_become_objects_and_max_tokens_fits_the_model() {
        let mut t = tool("a");
        t.parameters = json!({"properties":{"x":{"type":"string"}}});
        t.description = String::new();
        let mut req = request(vec![Message::user("q")], vec![t], ToolChoice::Auto);
        req.system = Some("   ".into());
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        assert!(body["tools"][0].get("description").is_none());
        assert!(body.get("system").is_none(), "a blank system prompt is not sent");
        assert_eq!(max_tokens_for("claude-3-haiku-20240307"), 4096);
        assert_eq!(max_tokens_for("claude-3-5-haiku-latest"), 8192);
        assert_eq!(max_tokens_for("claude-opus-4-1"), 8192);
    }

    fn signed(thinking: &str, origin: &str) -> Option<ProviderState> {
        Some(ProviderState {
            api: "anthropic".into(),
            origin: origin.into(),
            data: json!({"blocks": [{"type": "thinking", "thinking": thinking, "signature": "sig"}]}),
        })
    }

    fn thinking_request(messages: Vec<Message>, tool_choice: ToolChoice) -> ProviderRequest {
        let mut req = request(messages, vec![tool("t")], tool_choice);
        req.model = "claude-sonnet-4-5".into();
        req.options.thinking_budget = Some(4000);
        req
    }

    #[test]
    fn kept_thinking_goes_back_first_and_only_to_its_own_endpoint() {
        let round = |origin: &str| {
            vec![
                Message::user("go"),
                Message::Assistant {
                    text: "Let me check.".into(),
                    tool_calls: vec![call("toolu_1", "t", "{}")],
                    state: signed("I should call t.", origin),
                },
                result("toolu_1", "ok", false),
            ]
        };
        let body = request_body(&thinking_request(round(ORIGIN), ToolChoice::Auto), ORIGIN);
        let content = &body["messages"][1]["content"];
        assert_eq!(content[0], json!({"type": "thinking", "thinking": "I should call t.", "signature": "sig"}));
        assert_eq!(content[1]["type"], "text");
        assert_eq!(content[2]["type"], "tool_use");
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 4000}));
        assert!(body["max_tokens"].as_u64().unwrap() > 4000, "max_tokens stays above the budget");

        // Another endpoint's blocks are dropped, and then thinking must stay off: the API demands
        // that an assistant message with tool calls start with thinking when it is on.
        let body = request_body(&thinking_request(round("https://gateway.example"), ToolChoice::Auto), ORIGIN);
        assert_eq!(body["messages"][1]["content"][0]["type"], "text");
        assert!(body.get("thinking").is_none(), "{body:#}");
    }

    #[test]
    fn thinking_is_off_when_a_tool_is_forced_and_follows_the_profiles_limits() {
        let first = vec![Message::user("go")];
        let body = request_body(&thinking_request(first.clone(), ToolChoice::Named("t".into())), ORIGIN);
        assert!(body.get("thinking").is_none(), "the API refuses thinking with a forced tool");
        let body = request_body(&thinking_request(first.clone(), ToolChoice::OneOf(vec!["t".into()])), ORIGIN);
        assert!(body.get("thinking").is_none());

        // An effort maps to a budget; a small budget is raised to the API's minimum.
        let mut req = thinking_request(first.clone(), ToolChoice::Auto);
        req.options = GenerationOptions { reasoning_effort: Some(ReasoningEffort::High), ..Default::default() };
        assert_eq!(request_body(&req, ORIGIN)["thinking"]["budget_tokens"], 24576);
        req.options =
            GenerationOptions { thinking_budget: Some(10), max_output_tokens: Some(500), ..Default::default() };
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["thinking"]["budget_tokens"], 1024);
        assert!(body["max_tokens"].as_u64().unwrap() > 1024);
        // Sampling: temperature capped at 1, never with top_p, neither while thinking.
        req.options = GenerationOptions { temperature: Some(1.4), top_p: Some(0.9), ..Default::default() };
        let body = request_body(&req, ORIGIN);
        assert_eq!((body["temperature"].clone(), body.get("top_p")), (json!(1.0), None));
        req.options = GenerationOptions { top_p: Some(0.9), ..Default::default() };
        assert_eq!(request_body(&req, ORIGIN)["top_p"], json!(0.9));
        req.options = GenerationOptions { temperature: Some(0.2), thinking_budget: Some(2000), ..Default::default() };
        let body = request_body(&req, ORIGIN);
        assert!(body.get("thinking").is_some() && body.get("temperature").is_none());
        // A budget of 0 is thinking off; the output limit alone is max_tokens.
        req.options =
            GenerationOptions { thinking_budget: Some(0), max_output_tokens: Some(500), ..Default::default() };
        let body = request_body(&req, ORIGIN);
        assert!(body.get("thinking").is_none());
        assert_eq!(body["max_tokens"], 500);
    }
}
