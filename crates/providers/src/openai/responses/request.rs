//! The body of a Responses request: history as input items, chaining onto a stored response,
//! reasoning sent back, tools with `strict` where the schema allows (see the module docs of
//! [`super`]).

use super::KIND;
use crate::parts;
use serde_json::{Value, json};
use switchboard_core::{Message, Part, ProviderRequest, ProviderState, ToolCall, ToolChoice};

/// What a request's body depends on besides the request: the endpoint's origin (whose provider
/// state it may send back) and `store` as the profile sets it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// The origin (`scheme://host[:port]`) of the endpoint.
    pub origin: String,
    /// `store` as the profile sets it; `None` leaves the API's default (kept).
    pub store: Option<bool>,
    /// Whether the API still has the stored responses the history names, so their reasoning
    /// items may go back by id alone; false after it said it lost the previous response (older
    /// ones are likelier gone still), when only encrypted reasoning goes back.
    pub lost_responses: bool,
}

/// A request chained onto an earlier response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    /// The response the request continues.
    pub previous_response_id: String,
    /// The index in the request's messages of the first message after that response's.
    pub from: usize,
}

/// The chain `request` can use (see the module docs), if any.
pub fn chain(request: &ProviderRequest, target: &Target) -> Option<Chain> {
    if target.store == Some(false) {
        return None;
    }
    let at = request.messages.iter().rposition(|m| matches!(m, Message::Assistant { .. }))?;
    let Message::Assistant { tool_calls, state, .. } = &request.messages[at] else { return None };
    let data = ProviderState::for_endpoint(state.as_ref(), KIND, &target.origin)?;
    if data["stored"] == false {
        return None;
    }
    let id = data["responseId"].as_str().filter(|id| !id.is_empty())?;
    // A call the response does not have (an id the parser had to invent) would have its result
    // refused: such a history goes whole.
    let items = data["items"].as_array().map_or(&[][..], Vec::as_slice);
    let known = |c: &ToolCall| items.iter().any(|i| i["type"] == "function_call" && i["call_id"] == c.id.as_str());
    if !tool_calls.iter().all(known) {
        return None;
    }
    let rest = &request.messages[at + 1..];
    let sends_something = rest.iter().any(|m| match m {
        Message::User { text, parts } => !blank(text) || !parts.is_empty(),
        _ => true,
    });
    sends_something.then(|| Chain { previous_response_id: id.to_owned(), from: at + 1 })
}

/// Whether the API would refuse `text` as an empty text.
pub(super) fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// Keywords outside the strict subset (anywhere in the schema).
const NOT_STRICT: &[&str] =
    &["oneOf", "allOf", "not", "if", "then", "else", "patternProperties", "dependentRequired", "dependentSchemas"];

/// Whether the API would accept `schema` with `strict: true`: its root is an object, every object
/// in it closes its properties (`additionalProperties: false`) and requires all of them, and it
/// uses no keyword outside the strict subset. A schema that fails this is sent with
/// `strict: false`, which the API takes as it is (the loop validates the arguments anyway).
pub fn strict_compatible(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object") && strict_node(schema)
}

fn strict_node(node: &Value) -> bool {
    let Some(map) = node.as_object() else {
        // `true`/`false` schemas are not in the subset; anything else is not a schema.
        return false;
    };
    if NOT_STRICT.iter().any(|k| map.contains_key(*k)) {
        return false;
    }
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => map.contains_key("properties"),
    };
    if is_object {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            return false;
        }
        let props = map.get("properties").and_then(Value::as_object);
        let required: Vec<&str> =
            map.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        if props.is_some_and(|p| p.keys().any(|k| !required.contains(&k.as_str()))) {
            return false;
        }
        if props.is_some_and(|p| !p.values().all(strict_node)) {
            return false;
        }
    }
    let children_ok = |key: &str| match map.get(key) {
        None => true,
        Some(Value::Array(list)) => list.iter().all(strict_node),
        Some(Value::Object(defs)) if key == "$defs" || key == "definitions" => defs.values().all(strict_node),
        Some(one) => strict_node(one),
    };
    ["items", "anyOf", "$defs", "definitions"].iter().all(|k| children_ok(k))
}

/// The JSON body of a streamed Responses request: the whole history, or with `chain` only what
/// follows the response it continues.
pub fn request_body(request: &ProviderRequest, target: &Target, chain: Option<&Chain>) -> Value {
    let from = chain.map_or(0, |c| c.from.min(request.messages.len()));
    let mut input = Vec::with_capacity(request.messages.len() - from);
    for m in &request.messages[from..] {
        match m {
            Message::User { text, parts } => {
                let content = user_content(text, parts);
                if !content.is_empty() {
                    input.push(json!({"role": "user", "content": content}));
                }
            }
            Message::Assistant { text, tool_calls, state } => {
                let data = ProviderState::for_endpoint(state.as_ref(), KIND, &target.origin);
                let by_id = target.store != Some(false) && !target.lost_responses;
                push_assistant(&mut input, text, tool_calls, data, by_id);
            }
            Message::Tool { call_id, content, .. } => {
                input.push(json!({"type": "function_call_output", "call_id": call_id, "output": content}));
            }
        }
    }
    let mut body = json!({
        "model": request.model,
        "input": input,
        "stream": true,
    });
    if let Some(store) = target.store {
        body["store"] = json!(store);
    }
    if target.store == Some(false) {
        // Nothing is kept: reasoning can only come back encrypted.
        body["include"] = json!(["reasoning.encrypted_content"]);
    }
    if let Some(chain) = chain {
        body["previous_response_id"] = json!(chain.previous_response_id);
    }
    if let Some(system) = request.system.as_deref().filter(|s| !blank(s)) {
        body["instructions"] = json!(system);
    }
    if let Some(max) = request.options.max_output_tokens {
        body["max_output_tokens"] = json!(max);
    }
    if let Some(effort) = request.options.reasoning_effort {
        body["reasoning"] = json!({"effort": effort.as_str(), "summary": "auto"});
    }
    if let Some(t) = request.options.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(p) = request.options.top_p {
        body["top_p"] = json!(p);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                let parameters = if t.parameters.is_object() {
                    t.parameters.clone()
                } else {
                    json!({"type": "object", "properties": {}})
                };
                json!({
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "strict": strict_compatible(&parameters),
                    "parameters": parameters,
                })
            })
            .collect();
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            // OneOf offers exactly the forced tools, so "required" means "one of these".
            ToolChoice::Required | ToolChoice::OneOf(_) => json!("required"),
            ToolChoice::Named(name) => json!({"type": "function", "name": name}),
        };
        body["parallel_tool_calls"] = json!(true);
    }
    body
}

/// A person's message as `input_text`, then each attached file (see [`crate::parts`]): images
/// as `input_image` with a data URL and `detail: auto`
/// (<https://platform.openai.com/docs/guides/images-vision>), PDFs as `input_file` with
/// `filename` and `file_data` as a data URL (<https://platform.openai.com/docs/guides/pdf-files>),
/// text files as `input_text`. A blank text is left out (the API refuses an empty one).
fn user_content(text: &str, parts: &[Part]) -> Vec<Value> {
    let mut content = Vec::with_capacity(parts.len() + 1);
    if !blank(text) {
        content.push(json!({"type": "input_text", "text": text}));
    }
    content.extend(parts.iter().map(|part| match part {
        Part::Image { image, .. } => json!({
            "type": "input_image",
            "image_url": parts::data_url(&image.mime_type, &image.data),
            "detail": "auto",
        }),
        Part::Pdf { name, data } => json!({
            "type": "input_file",
            "filename": parts::pdf_name(name),
            "file_data": parts::data_url("application/pdf", data),
        }),
        Part::Text { .. } => json!({"type": "input_text", "text": parts::part_text(part)}),
    }));
    content
}

/// One assistant message's items. With its response's state, the reasoning items the API can
/// resolve go back in the response's order, and then the message and `function_call` items
/// carry their ids so the API can pair each reasoning item with the item that followed it;
/// without sendable reasoning they are plain items (an id without its reasoning item is refused).
fn push_assistant(input: &mut Vec<Value>, text: &str, tool_calls: &[ToolCall], data: Option<&Value>, by_id: bool) {
    let message = |id: Option<&str>| {
        let mut item = json!({"role": "assistant", "content": [{"type": "output_text", "text": text}]});
        if let Some(id) = id {
            item["id"] = json!(id);
        }
        item
    };
    let call = |c: &ToolCall, id: Option<&str>| {
        let arguments = if blank(&c.arguments) { "{}" } else { c.arguments.as_str() };
        let mut item = json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": arguments});
        if let Some(id) = id {
            item["id"] = json!(id);
        }
        item
    };
    let items = data.and_then(|d| d["items"].as_array()).map_or(&[][..], Vec::as_slice);
    let stored = data.is_some_and(|d| d["stored"] != false);
    // By id only when the API kept the response and may still have it (`by_id`: this request does
    // not say nothing is kept, and the API did not just say it lost a response).
    let sendable = |item: &Value| {
        item["type"] == "reasoning"
            && item["id"].is_string()
            && (item["encrypted_content"].is_string() || (stored && by_id))
    };
    let has_follower = !blank(text) || !tool_calls.is_empty();
    if !has_follower || !items.iter().any(sendable) {
        if !blank(text) {
            input.push(message(None));
        }
        input.extend(tool_calls.iter().map(|c| call(c, None)));
        return;
    }
    let mut text_sent = blank(text);
    let mut calls_sent = vec![false; tool_calls.len()];
    for item in items {
        match item["type"].as_str() {
            Some("reasoning") if sendable(item) => input.push(item.clone()),
            Some("message") if !text_sent => {
                input.push(message(item["id"].as_str()));
                text_sent = true;
            }
            Some("function_call") => {
                let at = tool_calls.iter().position(|c| item["call_id"] == c.id.as_str());
                if let Some(i) = at.filter(|&i| !calls_sent[i]) {
                    // The text came before the calls; the response had no message item to place it.
                    if !text_sent {
                        input.push(message(None));
                        text_sent = true;
                    }
                    input.push(call(&tool_calls[i], item["id"].as_str()));
                    calls_sent[i] = true;
                }
            }
            _ => {}
        }
    }
    if !text_sent {
        input.push(message(None));
    }
    for (c, _) in tool_calls.iter().zip(calls_sent).filter(|(_, sent)| !sent) {
        input.push(call(c, None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::provider::{GenerationOptions, ReasoningEffort, ToolSpec};

    /// The body of a whole-history request to an endpoint with no origin and `store` unset.
    fn whole(request: &ProviderRequest) -> Value {
        request_body(request, &Target::default(), None)
    }

    fn tool(name: &str, parameters: Value) -> ToolSpec {
        ToolSpec { name: name.into(), description: format!("{name} does things"), parameters }
    }

    #[test]
    fn the_request_maps_history_into_items_in_order() {
        let request = ProviderRequest {
            model: "gpt-5".into(),
            system: Some("Be brief.".into()),
            messages: vec![
                Message::user("What time is it?"),
                Message::Assistant {
                    text: "Checking.".into(),
                    tool_calls: vec![
                        ToolCall { id: "call_1".into(), name: "get_time".into(), arguments: "".into() },
                        ToolCall { id: "call_2".into(), name: "get_time".into(), arguments: r#"{"tz":"UTC"}"#.into() },
                    ],
                    state: None,
                },
                Message::Tool {
                    images: Default::default(),
                    call_id: "call_1".into(),
                    name: "get_time".into(),
                    content: "noon".into(),
                    is_error: false,
                },
                Message::Tool {
                    images: Default::default(),
                    call_id: "call_2".into(),
                    name: "get_time".into(),
                    content: "12:00".into(),
                    is_error: true,
                },
                Message::Assistant { text: "".into(), tool_calls: vec![], state: None },
                Message::Assistant { text: "It is noon.".into(), tool_calls: vec![], state: None },
                Message::user("  "),
                Message::user("Thanks"),
            ],
            tools: vec![],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = whole(&request);
        assert_eq!(body["model"], "gpt-5");
        assert_eq!(body["instructions"], "Be brief.");
        assert_eq!(body["stream"], true);
        for absent in ["store", "include", "previous_response_id", "max_output_tokens", "reasoning"] {
            assert!(body.get(absent).is_none(), "{absent} is left to the API: {body}");
        }
        assert_eq!(
            body["input"],
            json!([
                {"role":"user","content":[{"type":"input_text","text":"What time is it?"}]},
                {"role":"assistant","content":[{"type":"output_text","text":"Checking."}]},
                {"type":"function_call","call_id":"call_1","name":"get_time","arguments":"{}"},
                {"type":"function_call","call_id":"call_2","name":"get_time","arguments":"{\"tz\":\"UTC\"}"},
                {"type":"function_call_output","call_id":"call_1","output":"noon"},
                {"type":"function_call_output","call_id":"call_2","output":"12:00"},
                {"role":"assistant","content":[{"type":"output_text","text":"It is noon."}]},
                {"role":"user","content":[{"type":"input_text","text":"Thanks"}]},
            ])
        );
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none(), "{body}");
        let no_system = whole(&ProviderRequest { system: Some(" ".into()), ..request });
        assert!(no_system.get("instructions").is_none());
    }

    #[test]
    fn tools_are_flat_functions_with_strict_only_where_the_schema_allows() {
        let closed = json!({"type":"object","properties":{"tz":{"type":["string","null"]}},"required":["tz"],"additionalProperties":false});
        let open = json!({"type":"object","properties":{"tz":{"type":"string"}}});
        let mut request = ProviderRequest {
            model: "m".into(),
            system: None,
            messages: vec![Message::user("hi")],
            tools: vec![tool("a", closed.clone()), tool("b", open.clone())],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = whole(&request);
        assert_eq!(
            body["tools"][0],
            json!({"type":"function","name":"a","description":"a does things","parameters":closed,"strict":true})
        );
        assert_eq!(body["tools"][1]["strict"], false);
        assert_eq!(body["tools"][1]["parameters"], open);
        assert_eq!(body["parallel_tool_calls"], true);
        for (choice, want) in [
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::None, json!("none")),
            (ToolChoice::Required, json!("required")),
            (ToolChoice::OneOf(vec!["a".into(), "b".into()]), json!("required")),
            (ToolChoice::Named("b".into()), json!({"type":"function","name":"b"})),
        ] {
            request.tool_choice = choice;
            assert_eq!(whole(&request)["tool_choice"], want);
        }
    }

    const ORIGIN: &str = "https://api.openai.com";

    fn state(data: Value) -> Option<ProviderState> {
        Some(ProviderState { api: KIND.into(), origin: ORIGIN.into(), data })
    }

    fn user(text: &str) -> Message {
        Message::user(text)
    }

    fn result(call_id: &str, content: &str) -> Message {
        Message::Tool {
            images: Default::default(),
            call_id: call_id.into(),
            name: "get_time".into(),
            content: content.into(),
            is_error: false,
        }
    }

    fn get_time(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "get_time".into(), arguments: "{}".into() }
    }

    /// The state of a stored response `resp_1` that reasoned (`rs_1`, encrypted), said something
    /// (`msg_1`) and called `call_1` (`fc_1`).
    fn resp_1_state() -> Value {
        json!({"responseId": "resp_1", "stored": true, "items": [
            {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Think."}],
                "encrypted_content": "enc_1"},
            {"type": "message", "id": "msg_1"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1"},
        ]})
    }

    fn conversation(first_state: Option<ProviderState>) -> ProviderRequest {
        ProviderRequest {
            model: "gpt-5".into(),
            messages: vec![
                user("What time is it?"),
                Message::Assistant {
                    text: "Checking.".into(),
                    tool_calls: vec![get_time("call_1")],
                    state: first_state,
                },
                result("call_1", "noon"),
            ],
            ..ProviderRequest::default()
        }
    }

    /// Each input item as its type (or role), with `#` when it carries an item id.
    fn input_kinds(body: &Value) -> Vec<String> {
        body["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                let kind = i["type"].as_str().or(i["role"].as_str()).unwrap();
                if i.get("id").is_some() { format!("{kind}#") } else { kind.to_owned() }
            })
            .collect()
    }

    fn target(store: Option<bool>) -> Target {
        Target { origin: ORIGIN.into(), store, lost_responses: false }
    }

    #[test]
    fn options_map_to_max_output_tokens_and_reasoning_and_store_is_sent_only_when_set() {
        let mut request = conversation(None);
        let body = request_body(&request, &target(None), None);
        assert!(body.get("max_output_tokens").is_none() && body.get("reasoning").is_none(), "{body}");
        assert!(body.get("store").is_none() && body.get("include").is_none(), "{body}");
        for (effort, word) in
            [(ReasoningEffort::Low, "low"), (ReasoningEffort::Medium, "medium"), (ReasoningEffort::High, "high")]
        {
            request.options = GenerationOptions {
                max_output_tokens: Some(2048),
                reasoning_effort: Some(effort),
                thinking_budget: Some(999),
                ..GenerationOptions::default()
            };
            let body = request_body(&request, &target(Some(true)), None);
            assert_eq!(body["max_output_tokens"], 2048);
            assert_eq!(body["reasoning"], json!({"effort": word, "summary": "auto"}));
            assert_eq!(body["store"], true);
            assert!(body.get("include").is_none(), "{body}");
        }
        request.options = GenerationOptions { max_output_tokens: Some(64), ..GenerationOptions::default() };
        let body = request_body(&request, &target(Some(false)), None);
        assert_eq!((&body["max_output_tokens"], body.get("reasoning")), (&json!(64), None));
        assert_eq!((&body["store"], &body["include"]), (&json!(false), &json!(["reasoning.encrypted_content"])));
        request.options =
            GenerationOptions { temperature: Some(0.25), top_p: Some(0.5), ..GenerationOptions::default() };
        let body = request_body(&request, &target(None), None);
        assert_eq!((&body["temperature"], &body["top_p"]), (&json!(0.25), &json!(0.5)));
    }

    #[test]
    fn reasoning_items_go_back_before_the_items_they_preceded_with_those_items_ids() {
        let request = conversation(state(resp_1_state()));
        let body = request_body(&request, &target(None), None);
        assert_eq!(
            body["input"],
            json!([
                {"role":"user","content":[{"type":"input_text","text":"What time is it?"}]},
                {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Think."}],"encrypted_content":"enc_1"},
                {"role":"assistant","id":"msg_1","content":[{"type":"output_text","text":"Checking."}]},
                {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_time","arguments":"{}"},
                {"type":"function_call_output","call_id":"call_1","output":"noon"},
            ])
        );

        // Interleaved reasoning keeps the response's order; the text goes before the first call.
        let data = json!({"responseId":"r","stored":true,"items":[
            {"type":"reasoning","id":"rs_a","summary":[]},
            {"type":"function_call","id":"fc_a","call_id":"call_a"},
            {"type":"reasoning","id":"rs_b","summary":[]},
            {"type":"function_call","id":"fc_b","call_id":"call_b"}]});
        let mut input = Vec::new();
        let calls = [get_time("call_a"), get_time("call_b"), get_time("call_c")];
        push_assistant(&mut input, "Two.", &calls, Some(&data), true);
        let shape: Vec<String> = input
            .iter()
            .map(|i| {
                format!("{}:{}", i["type"].as_str().or(i["role"].as_str()).unwrap(), i["id"].as_str().unwrap_or("-"))
            })
            .collect();
        assert_eq!(
            shape,
            [
                "reasoning:rs_a",
                "assistant:-",
                "function_call:fc_a",
                "reasoning:rs_b",
                "function_call:fc_b",
                "function_call:-"
            ]
        );
    }

    #[test]
    fn reasoning_goes_back_only_where_the_api_can_resolve_it() {
        let by_id = json!({"responseId":"resp_1","stored":true,"items":[
            {"type":"reasoning","id":"rs_1","summary":[]},
            {"type":"message","id":"msg_1"},
            {"type":"function_call","id":"fc_1","call_id":"call_1"}]});
        let kinds = |data: Value, store: Option<bool>| {
            input_kinds(&request_body(&conversation(state(data)), &target(store), None))
        };
        let plain = ["user", "assistant", "function_call", "function_call_output"];
        let paired = ["user", "reasoning#", "assistant#", "function_call#", "function_call_output"];
        // Stored and referenced by id: fine unless this request keeps nothing.
        assert_eq!(kinds(by_id.clone(), None), paired);
        assert_eq!(kinds(by_id.clone(), Some(true)), paired);
        assert_eq!(kinds(by_id.clone(), Some(false)), plain, "an id alone cannot be resolved with store false");
        let mut unstored = by_id.clone();
        unstored["stored"] = json!(false);
        assert_eq!(kinds(unstored, None), plain, "the API never kept that response");
        // Encrypted content goes back whatever `store` says.
        assert_eq!(kinds(resp_1_state(), Some(false)), paired);
        let mut unstored = resp_1_state();
        unstored["stored"] = json!(false);
        assert_eq!(kinds(unstored, None), paired);

        // After the API said it lost the previous response, only encrypted reasoning goes back.
        let lost = Target { lost_responses: true, ..target(None) };
        let kinds_lost = |data: Value| input_kinds(&request_body(&conversation(state(data)), &lost, None));
        assert_eq!(kinds_lost(by_id.clone()), plain);
        assert_eq!(kinds_lost(resp_1_state()), paired);

        // State from another origin or API is never sent.
        let request = |api: &str, origin: &str| {
            let s = ProviderState { api: api.into(), origin: origin.into(), data: resp_1_state() };
            request_body(&conversation(Some(s)), &target(None), None)["input"].clone()
        };
        let whole = request_body(&conversation(None), &target(None), None)["input"].clone();
        assert_eq!(request("openai-responses", "http://127.0.0.1:8080"), whole);
        assert_eq!(request("anthropic", ORIGIN), whole);
        assert_eq!(whole.as_array().unwrap().len(), 4);

        // A message with nothing to follow its reasoning sends none.
        let mut input = Vec::new();
        push_assistant(&mut input, " ", &[], Some(&resp_1_state()), true);
        assert!(input.is_empty(), "{input:?}");
    }

    #[test]
    fn a_request_chains_onto_the_last_answer_when_its_state_allows() {
        let mut request = conversation(state(resp_1_state()));
        let want = Chain { previous_response_id: "resp_1".into(), from: 2 };
        assert_eq!(chain(&request, &target(None)), Some(want.clone()));
        assert_eq!(chain(&request, &target(Some(true))), Some(want.clone()));
        let body = request_body(&request, &target(None), Some(&want));
        assert_eq!(body["previous_response_id"], "resp_1");
        assert_eq!(body["input"], json!([{"type":"function_call_output","call_id":"call_1","output":"noon"}]));

        // A later turn: only the new message.
        request.messages.push(Message::Assistant {
            text: "It is noon.".into(),
            tool_calls: vec![],
            state: state(json!({"responseId":"resp_2","stored":true,"items":[{"type":"message","id":"msg_2"}]})),
        });
        request.messages.push(user("  "));
        request.messages.push(user("Thanks"));
        let c = chain(&request, &target(None)).unwrap();
        assert_eq!(c, Chain { previous_response_id: "resp_2".into(), from: 4 });
        let body = request_body(&request, &target(None), Some(&c));
        assert_eq!(body["input"], json!([{"role":"user","content":[{"type":"input_text","text":"Thanks"}]}]));
        assert_eq!(body["model"], "gpt-5");
    }

    #[test]
    fn without_a_usable_state_on_the_last_answer_the_whole_history_goes() {
        let with = |s: Option<ProviderState>| chain(&conversation(s), &target(None));
        assert_eq!(with(None), None, "no state");
        let other = |api: &str, origin: &str| {
            Some(ProviderState { api: api.into(), origin: origin.into(), data: resp_1_state() })
        };
        assert_eq!(with(other("anthropic", ORIGIN)), None, "another API");
        assert_eq!(with(other(KIND, "https://example.com")), None, "another endpoint");
        let mut data = resp_1_state();
        data["stored"] = json!(false);
        assert_eq!(with(state(data)), None, "a response the API did not keep");
        let mut data = resp_1_state();
        data.as_object_mut().unwrap().remove("responseId");
        assert_eq!(with(state(data)), None, "no response id");
        let data = json!({"responseId":"resp_1","stored":true,"items":[]});
        assert_eq!(with(state(data)), None, "a call the response does not have");
        assert_eq!(chain(&conversation(state(resp_1_state())), &target(Some(false))), None, "store false");

        // Only the last answer counts: an earlier one with state does not chain.
        let mut request = conversation(state(resp_1_state()));
        request.messages.push(Message::assistant("It is noon.", vec![]));
        request.messages.push(user("Thanks"));
        assert_eq!(chain(&request, &target(None)), None);
        // Nothing after the last answer: nothing to chain with.
        let mut request = conversation(state(resp_1_state()));
        request.messages.truncate(2);
        assert_eq!(chain(&request, &target(None)), None);
    }

    #[test]
    fn attached_files_are_input_parts_after_the_text_and_count_for_a_chain() {
        let image = switchboard_core::ToolImage { mime_type: "image/jpeg".into(), data: "/9j/4AAQ".into() };
        let parts = vec![
            Part::Image { name: "a.jpg".into(), image },
            Part::Pdf { name: "".into(), data: "JVBERi0x".into() },
            Part::Text { name: "n.txt".into(), mime_type: "text/plain".into(), text: "hi".into(), note: None },
        ];
        let mut request = conversation(state(resp_1_state()));
        request.messages.push(Message::Assistant {
            text: "It is noon.".into(),
            tool_calls: vec![],
            state: state(json!({"responseId":"resp_2","stored":true,"items":[]})),
        });
        request.messages.push(Message::User { text: "".into(), parts: parts.clone() });
        let c = chain(&request, &target(None)).expect("files alone are something to send");
        let body = request_body(&request, &target(None), Some(&c));
        assert_eq!(
            body["input"],
            json!([{"role": "user", "content": [
                {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQ", "detail": "auto"},
                {"type": "input_file", "filename": "document.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"},
                {"type": "input_text", "text": "File n.txt (text/plain):\n```\nhi\n```"},
            ]}])
        );
        let with_text = ProviderRequest { messages: vec![Message::User { text: "See".into(), parts }], ..request };
        assert_eq!(whole(&with_text)["input"][0]["content"][0], json!({"type": "input_text", "text": "See"}));
    }

    #[test]
    fn strict_needs_every_object_closed_and_every_property_required() {
        let ok = |s: Value| strict_compatible(&s);
        assert!(ok(json!({"type":"object","properties":{},"additionalProperties":false})));
        assert!(ok(json!({"type":"object","additionalProperties":false,"required":["a"],"properties":{
            "a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"integer"}},"required":["b"],"additionalProperties":false}}}})));
        // Not closed, a property not required, a nested object not closed.
        assert!(!ok(json!({"type":"object","properties":{}})));
        assert!(!ok(json!({"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false})));
        assert!(!ok(
            json!({"type":"object","properties":{"a":{"type":"object","properties":{}}},"required":["a"],"additionalProperties":false})
        ));
        assert!(!ok(
            json!({"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}},"required":["a"],"additionalProperties":false})
        ));
        assert!(!ok(
            json!({"type":"object","properties":{"a":{"anyOf":[{"type":"object"}]}},"required":["a"],"additionalProperties":false})
        ));
        assert!(!ok(json!({"type":"object","additionalProperties":false,"$defs":{"x":{"type":"object"}}})));
        // Keywords outside the subset, a root that is not an object, no schema at all.
        assert!(!ok(json!({"type":"object","properties":{},"additionalProperties":false,"oneOf":[]})));
        assert!(!ok(json!({"type":"string"})));
        assert!(!ok(json!({})));
        assert!(!ok(Value::Null));
    }
}
