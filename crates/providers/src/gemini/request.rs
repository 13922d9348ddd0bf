//! The body of a `streamGenerateContent` request: contents by role, function responses in call
//! order, declarations in Gemini's schema subset, the calling and generation config, and the
//! thought signatures sent back on their parts (see the module docs of [`super`]).

use super::{API, GENERATED_ID_PREFIX, THINKING_BUDGET_RANGE};
use serde_json::{Value, json};
use switchboard_core::provider::GenerationOptions;
use switchboard_core::{Message, Part, ProviderRequest, ProviderState, ToolChoice};

/// The JSON body of a `streamGenerateContent` request to the endpoint at `origin` (whose own
/// thought signatures, and only those, go back on their parts).
pub fn request_body(request: &ProviderRequest, origin: &str) -> Value {
    let mut contents: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, parts: Vec<Value>| {
        if parts.is_empty() {
            return;
        }
        match contents.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(parts),
            _ => contents.push((role, parts)),
        }
    };
    let mut messages = request.messages.iter().peekable();
    while let Some(m) = messages.next() {
        match m {
            Message::User { text, parts } => {
                push("user", parts.iter().map(user_part).chain(text_part(text)).collect());
            }
            Message::Assistant { text, tool_calls, state } => {
                let signed = ProviderState::for_endpoint(state.as_ref(), API, origin).unwrap_or(&Value::Null);
                let signature = |part: &mut Value, sig: &Value| {
                    if let Some(sig) = sig.as_str().filter(|s| !s.is_empty()) {
                        part["thoughtSignature"] = json!(sig);
                    }
                };
                // Signed thoughts first, where Gemini sent them; unsigned ones are not sent back.
                let mut parts: Vec<Value> = signed["thoughts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| {
                        let text = t["text"].as_str().filter(|t| !t.is_empty())?;
                        let sig = t["signature"].as_str().filter(|s| !s.is_empty())?;
                        Some(json!({"text": text, "thought": true, "thoughtSignature": sig}))
                    })
                    .collect();
                if let Some(mut part) = text_part(text) {
                    signature(&mut part, &signed["text"]);
                    parts.push(part);
                }
                for call in tool_calls {
                    let mut fc = json!({"name": call.name, "args": args_object(&call.arguments)});
                    if let Some(id) = sent_id(&call.id) {
                        fc["id"] = json!(id);
                    }
                    let mut part = json!({"functionCall": fc});
                    signature(&mut part, &signed["calls"][call.id.as_str()]);
                    parts.push(part);
                }
                push("model", parts);
                if tool_calls.is_empty() {
                    continue;
                }
                // The results that follow, in the order of the calls.
                let mut results: Vec<(&str, &str, &str, bool)> = Vec::new();
                // Images of the results follow the responses as inline data of the same turn.
                let mut images: Vec<Value> = Vec::new();
                while let Some(Message::Tool { call_id, name, content, is_error, images: returned }) = messages.peek() {
                    results.push((call_id, name, content, *is_error));
                    images.extend(returned.iter().map(inline_data));
                    messages.next();
                }
                let mut responses = Vec::with_capacity(tool_calls.len());
                for call in tool_calls {
                    let response = match results.iter().position(|r| r.0 == call.id) {
                        Some(i) => {
                            let (_, _, content, is_error) = results.remove(i);
                            function_response(&call.id, &call.name, content, is_error)
                        }
                        None => function_response(&call.id, &call.name, "No result was recorded for this call.", true),
                    };
                    responses.push(response);
                }
                // Results of no call of this turn (a damaged history) still go back, after the rest.
                for (call_id, name, content, is_error) in results {
                    responses.push(function_response(call_id, name, content, is_error));
                }
                responses.extend(images);
                push("user", responses);
            }
            Message::Tool { call_id, name, content, is_error, images } => {
                let mut parts = vec![function_response(call_id, name, content, *is_error)];
                parts.extend(images.iter().map(inline_data));
                push("user", parts);
            }
        }
    }
    let contents: Vec<Value> =
        contents.into_iter().map(|(role, parts)| json!({"role": role, "parts": parts})).collect();
    let mut body = json!({ "contents": contents });
    if let Some(system) = request.system.as_deref().filter(|s| !s.trim().is_empty()) {
        body["systemInstruction"] = json!({"parts": [{"text": system}]});
    }
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                let mut d = json!({"name": t.name});
                if !t.description.trim().is_empty() {
                    d["description"] = json!(t.description);
                }
                if let Some(p) = super::schema::function_parameters(&t.parameters) {
                    d["parameters"] = p;
                }
                d
            })
            .collect();
        body["tools"] = json!([{ "functionDeclarations": declarations }]);
        body["toolConfig"] = json!({ "functionCallingConfig": calling_config(&request.tool_choice) });
    }
    if let Some(config) = generation_config(&request.options) {
        body["generationConfig"] = config;
    }
    body
}

/// `generationConfig` for the profile's options, or `None` when they leave everything to the
/// model (see the module docs).
pub fn generation_config(options: &GenerationOptions) -> Option<Value> {
    let mut config = serde_json::Map::new();
    if let Some(max) = options.max_output_tokens {
        config.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(t) = options.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(p) = options.top_p {
        config.insert("topP".into(), json!(p));
    }
    if let Some(budget) = options.budget() {
        let thinking = if budget == 0 {
            json!({"thinkingBudget": 0})
        } else {
            let budget = budget.clamp(*THINKING_BUDGET_RANGE.start(), *THINKING_BUDGET_RANGE.end());
            json!({"thinkingBudget": budget, "includeThoughts": true})
        };
        config.insert("thinkingConfig".into(), thinking);
    }
    (!config.is_empty()).then_some(Value::Object(config))
}

/// `functionCallingConfig` for a tool choice.
pub fn calling_config(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!({"mode": "AUTO"}),
        ToolChoice::None => json!({"mode": "NONE"}),
        ToolChoice::Required => json!({"mode": "ANY"}),
        ToolChoice::Named(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
        ToolChoice::OneOf(names) => json!({"mode": "ANY", "allowedFunctionNames": names}),
    }
}

fn text_part(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({"text": text}))
}

/// A call id Gemini gave (sent back so it can match the response); ours are never sent.
fn sent_id(id: &str) -> Option<&str> {
    (!id.is_empty() && !id.starts_with(GENERATED_ID_PREFIX)).then_some(id)
}

/// A call's arguments as the JSON object `args` must be. Arguments that are not an object (from
/// another provider's history, or a model's broken JSON) are passed as text so the model sees
/// what it sent.
fn args_object(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({ "arguments": arguments }),
    }
}

/// One attached file as a part (see [`crate::parts`]), placed before the person's text as the
/// guide advises: images and PDFs as `inlineData` with their media type
/// (<https://ai.google.dev/gemini-api/docs/image-understanding>,
/// <https://ai.google.dev/gemini-api/docs/document-processing>), a text file as a text part.
fn user_part(part: &Part) -> Value {
    match part {
        Part::Image { image, .. } => inline_data(image),
        Part::Pdf { data, .. } => json!({"inlineData": {"mimeType": "application/pdf", "data": data}}),
        Part::Text { .. } => json!({"text": crate::parts::part_text(part)}),
    }
}

/// An image as an inline-data part.
fn inline_data(image: &switchboard_core::ToolImage) -> Value {
    json!({"inlineData": {"mimeType": image.mime_type, "data": image.data}})
}

fn function_response(call_id: &str, name: &str, content: &str, is_error: bool) -> Value {
    let response = if is_error { json!({"error": content}) } else { json!({"content": content}) };
    let mut fr = json!({"name": name, "response": response});
    if let Some(id) = sent_id(call_id) {
        fr["id"] = json!(id);
    }
    json!({"functionResponse": fr})
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::ToolCall;
    use switchboard_core::provider::ToolSpec;

    const ORIGIN: &str = "https://generativelanguage.googleapis.com";

    fn state(data: Value) -> ProviderState {
        ProviderState { api: "gemini".into(), origin: ORIGIN.into(), data }
    }

    fn call(id: &str, name: &str, args: &str) -> ToolCall {
        ToolCall { id: id.into(), name: name.into(), arguments: args.into() }
    }

    fn tool(call_id: &str, name: &str, content: &str, is_error: bool) -> Message {
        Message::Tool {
            images: Default::default(),
            call_id: call_id.into(),
            name: name.into(),
            content: content.into(),
            is_error,
        }
    }

    #[test]
    fn attached_files_are_inline_data_and_text_before_the_text() {
        let image = switchboard_core::ToolImage { mime_type: "image/png".into(), data: "iVBORw0K".into() };
        let parts = vec![
            Part::Image { name: "a.png".into(), image },
            Part::Pdf { name: "spec.pdf".into(), data: "JVBERi0x".into() },
            Part::Text { name: "c.csv".into(), mime_type: "text/csv".into(), text: "a,b\n".into(), note: None },
        ];
        let request = ProviderRequest {
            messages: vec![Message::User { text: "Sum it".into(), parts: parts.clone() }],
            ..Default::default()
        };
        assert_eq!(
            request_body(&request, ORIGIN)["contents"],
            json!([{"role": "user", "parts": [
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}},
                {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0x"}},
                {"text": "File c.csv (text/csv):\n```\na,b\n```"},
                {"text": "Sum it"},
            ]}])
        );
        let alone = ProviderRequest { messages: vec![Message::User { text: "".into(), parts }], ..request };
        assert_eq!(request_body(&alone, ORIGIN)["contents"][0]["parts"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn images_of_results_follow_the_function_responses_as_inline_data() {
        let png = switchboard_core::ToolImage::checked("image/png", "iVBORw0KGgo=").unwrap();
        let req = ProviderRequest {
            model: "m".into(),
            system: None,
            messages: vec![
                Message::user("draw"),
                Message::Assistant { text: String::new(), tool_calls: vec![call("c1", "snap", "{}")], state: None },
                Message::Tool {
                    call_id: "c1".into(),
                    name: "snap".into(),
                    content: "[image: image/png]".into(),
                    is_error: false,
                    images: vec![png],
                },
            ],
            tools: vec![],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = request_body(&req, ORIGIN);
        let parts = &body["contents"][2]["parts"];
        assert!(parts[0].get("functionResponse").is_some(), "{parts}");
        assert_eq!(parts[1], json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}));
    }

    #[test]
    fn function_responses_are_grouped_after_the_model_turn_in_call_order() {
        let req = ProviderRequest {
            model: "m".into(),
            system: Some("sys".into()),
            messages: vec![
                Message::user("hi"),
                Message::Assistant {
                    text: "Checking".into(),
                    tool_calls: vec![
                        call("gemini-call-x-0", "a", r#"{"q":1}"#),
                        call("srv-7", "b", ""),
                        call("gemini-call-x-2", "c", "not json"),
                    ],
                    state: Some(state(json!({"calls": {"gemini-call-x-0": "sig"}}))),
                },
                // Results arrive out of order; one call has none.
                tool("srv-7", "b", "B failed", true),
                tool("gemini-call-x-0", "a", "A", false),
                Message::user("and?"),
                // A text signature without text has no part to go on.
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![],
                    state: Some(state(json!({"text": "lost"}))),
                },
                Message::Assistant {
                    text: "Done.".into(),
                    tool_calls: vec![],
                    state: Some(state(json!({"text": "sig-done"}))),
                },
            ],
            tools: vec![],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = request_body(&req, ORIGIN);
        assert_eq!(body["systemInstruction"], json!({"parts": [{"text": "sys"}]}));
        assert_eq!(
            body["contents"],
            json!([
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [
                    {"text": "Checking"},
                    {"functionCall": {"name": "a", "args": {"q": 1}}, "thoughtSignature": "sig"},
                    {"functionCall": {"name": "b", "args": {}, "id": "srv-7"}},
                    {"functionCall": {"name": "c", "args": {"arguments": "not json"}}}
                ]},
                {"role": "user", "parts": [
                    {"functionResponse": {"name": "a", "response": {"content": "A"}}},
                    {"functionResponse": {"name": "b", "response": {"error": "B failed"}, "id": "srv-7"}},
                    {"functionResponse": {"name": "c", "response": {"error": "No result was recorded for this call."}}},
                    {"text": "and?"}
                ]},
                {"role": "model", "parts": [{"text": "Done.", "thoughtSignature": "sig-done"}]}
            ])
        );
        assert!(body.get("tools").is_none() && body.get("toolConfig").is_none(), "no tools, no config");
    }

    #[test]
    fn function_calling_config_per_choice_and_converted_declarations() {
        let mut req = ProviderRequest {
            model: "m".into(),
            system: None,
            messages: vec![Message::user("hi")],
            tools: vec![
                ToolSpec {
                    name: "get_time".into(),
                    description: "Time".into(),
                    parameters: json!({"type": "object", "properties": {"timezone": {"type": "string"}}, "additionalProperties": false}),
                },
                ToolSpec {
                    name: "ping".into(),
                    description: String::new(),
                    parameters: json!({"type": "object", "properties": {}}),
                },
            ],
            tool_choice: ToolChoice::Auto,
            options: Default::default(),
        };
        let body = request_body(&req, ORIGIN);
        assert!(body.get("systemInstruction").is_none());
        assert_eq!(
            body["tools"],
            json!([{"functionDeclarations": [
                {"name": "get_time", "description": "Time", "parameters": {"type": "OBJECT", "properties": {"timezone": {"type": "STRING"}}}},
                {"name": "ping"}
            ]}])
        );
        for (choice, config) in [
            (ToolChoice::Auto, json!({"mode": "AUTO"})),
            (ToolChoice::None, json!({"mode": "NONE"})),
            (ToolChoice::Required, json!({"mode": "ANY"})),
            (ToolChoice::Named("get_time".into()), json!({"mode": "ANY", "allowedFunctionNames": ["get_time"]})),
            (
                ToolChoice::OneOf(vec!["get_time".into(), "ping".into()]),
                json!({"mode": "ANY", "allowedFunctionNames": ["get_time", "ping"]}),
            ),
        ] {
            req.tool_choice = choice;
            assert_eq!(request_body(&req, ORIGIN)["toolConfig"], json!({"functionCallingConfig": config}));
        }
    }

    #[test]
    fn generation_config_takes_the_output_limit_and_the_thinking_budget() {
        use switchboard_core::provider::{GenerationOptions, ReasoningEffort};
        let body = |options: GenerationOptions| {
            let req = ProviderRequest {
                model: "m".into(),
                messages: vec![Message::user("hi")],
                options,
                ..Default::default()
            };
            request_body(&req, ORIGIN).get("generationConfig").cloned()
        };
        assert_eq!(body(GenerationOptions::default()), None, "the model's defaults");
        let o = |max: Option<u32>, effort: Option<ReasoningEffort>, budget: Option<u32>| GenerationOptions {
            max_output_tokens: max,
            reasoning_effort: effort,
            thinking_budget: budget,
            ..Default::default()
        };
        assert_eq!(body(o(Some(4096), None, None)), Some(json!({"maxOutputTokens": 4096})), "no thinkingConfig");
        assert_eq!(
            body(o(Some(4096), None, Some(2000))),
            Some(json!({"maxOutputTokens": 4096, "thinkingConfig": {"thinkingBudget": 2000, "includeThoughts": true}}))
        );
        assert_eq!(
            body(o(None, None, Some(0))),
            Some(json!({"thinkingConfig": {"thinkingBudget": 0}})),
            "0 turns thinking off, with no thoughts to include"
        );
        assert_eq!(
            body(o(None, Some(ReasoningEffort::High), Some(0))),
            Some(json!({"thinkingConfig": {"thinkingBudget": 0}})),
            "the budget wins over the effort"
        );
        assert_eq!(
            body(o(None, Some(ReasoningEffort::Medium), None)),
            Some(json!({"thinkingConfig": {"thinkingBudget": 8192, "includeThoughts": true}}))
        );
        assert_eq!(
            body(o(None, None, Some(5))),
            Some(json!({"thinkingConfig": {"thinkingBudget": 128, "includeThoughts": true}}))
        );
        assert_eq!(
            body(o(None, None, Some(1_000_000))),
            Some(json!({"thinkingConfig": {"thinkingBudget": 32768, "includeThoughts": true}}))
        );
        let sampling = GenerationOptions { temperature: Some(0.5), top_p: Some(0.5), ..Default::default() };
        assert_eq!(body(sampling), Some(json!({"temperature": 0.5, "topP": 0.5})));
    }
}
