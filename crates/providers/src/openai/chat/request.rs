//! The body of a streamed Chat Completions request.

use crate::parts;
use serde_json::{Value, json};
use switchboard_core::{Message, Part, ProviderRequest, ToolChoice};

/// Whether `base_url` is OpenAI's own API (not a compatible server).
pub(super) fn is_openai(base_url: &str) -> bool {
    crate::endpoint::origin(base_url) == "https://api.openai.com"
}

/// The JSON body of a streamed Chat Completions request. The output limit is `max_tokens`, the
/// name compatible servers take (the provider renames it for OpenAI's own API); reasoning effort
/// is `reasoning_effort`, sent only when the profile sets it (models without reasoning refuse it).
pub fn request_body(request: &ProviderRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = &request.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in &request.messages {
        messages.push(match m {
            Message::User { text, parts } if parts.is_empty() => json!({"role": "user", "content": text}),
            Message::User { text, parts } => json!({"role": "user", "content": user_content(text, parts)}),
            Message::Assistant { text, tool_calls, .. } if tool_calls.is_empty() => {
                json!({"role": "assistant", "content": text})
            }
            Message::Assistant { text, tool_calls, .. } => json!({
                "role": "assistant",
                // Some compatible servers reject "" next to tool calls; null is the spec's "none".
                "content": if text.is_empty() { Value::Null } else { Value::String(text.clone()) },
                "tool_calls": tool_calls.iter().map(|c| json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": if c.arguments.trim().is_empty() { "{}" } else { c.arguments.as_str() }},
                })).collect::<Vec<_>>(),
            }),
            Message::Tool { call_id, content, .. } => {
                json!({"role": "tool", "tool_call_id": call_id, "content": content})
            }
        });
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    if let Some(limit) = request.options.max_output_tokens {
        body["max_tokens"] = json!(limit);
    }
    if let Some(effort) = request.options.reasoning_effort {
        body["reasoning_effort"] = json!(effort.as_str());
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
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        body["tool_choice"] = match &request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            // The request offers exactly the forced tools, so "required" means "one of these".
            ToolChoice::Required | ToolChoice::OneOf(_) => json!("required"),
            ToolChoice::Named(name) => json!({"type": "function", "function": {"name": name}}),
        };
    }
    body
}

/// A person's message with attached files as content parts: the text, then each file
/// (see [`crate::parts`]). Images are `image_url` parts with a data URL
/// (<https://platform.openai.com/docs/guides/images-vision>), PDFs `file` parts with `filename`
/// and `file_data` as a data URL (<https://platform.openai.com/docs/guides/pdf-files>: "Chat
/// Completions accepts only PDF files as file content parts"), text files text parts. A blank
/// text is left out (the API refuses an empty text part).
fn user_content(text: &str, parts: &[Part]) -> Vec<Value> {
    let mut content = Vec::with_capacity(parts.len() + 1);
    if !text.trim().is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    content.extend(parts.iter().map(|part| match part {
        Part::Image { image, .. } => json!({
            "type": "image_url",
            "image_url": {"url": parts::data_url(&image.mime_type, &image.data), "detail": "auto"},
        }),
        Part::Pdf { name, data } => json!({
            "type": "file",
            "file": {"filename": parts::pdf_name(name), "file_data": parts::data_url("application/pdf", data)},
        }),
        Part::Text { .. } => json!({"type": "text", "text": parts::part_text(part)}),
    }));
    content
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::ToolCall;
    use switchboard_core::provider::ToolSpec;

    #[test]
    fn the_request_maps_history_tools_and_forcing() {
        let mut req = ProviderRequest {
            model: "m".into(),
            system: Some("sys".into()),
            messages: vec![
                Message::user("hi"),
                Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall { id: "c1".into(), name: "t".into(), arguments: String::new() }],
                    state: None,
                },
                Message::Tool {
                    images: Default::default(),
                    call_id: "c1".into(),
                    name: "t".into(),
                    content: "r".into(),
                    is_error: false,
                },
            ],
            tools: vec![ToolSpec { name: "t".into(), description: "d".into(), parameters: json!({"type":"object"}) }],
            tool_choice: ToolChoice::Named("t".into()),
            options: Default::default(),
        };
        let body = request_body(&req);
        assert_eq!(body["messages"][0], json!({"role":"system","content":"sys"}));
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(body["messages"][2]["tool_calls"][0]["function"]["arguments"], "{}");
        assert_eq!(body["messages"][3], json!({"role":"tool","tool_call_id":"c1","content":"r"}));
        assert_eq!(body["tool_choice"], json!({"type":"function","function":{"name":"t"}}));
        assert_eq!(body["stream_options"]["include_usage"], true);
        for (choice, wire) in [
            (ToolChoice::Auto, json!("auto")),
            (ToolChoice::None, json!("none")),
            (ToolChoice::Required, json!("required")),
            (ToolChoice::OneOf(vec!["t".into()]), json!("required")),
        ] {
            req.tool_choice = choice;
            assert_eq!(request_body(&req)["tool_choice"], wire);
        }
        req.tools.clear();
        assert!(request_body(&req).get("tools").is_none(), "no tools, no tool_choice");
    }

    #[test]
    fn attached_files_are_content_parts_after_the_text() {
        let image = switchboard_core::ToolImage { mime_type: "image/png".into(), data: "iVBORw0K".into() };
        let parts = vec![
            Part::Image { name: "shot.png".into(), image },
            Part::Pdf { name: "spec.pdf".into(), data: "JVBERi0x".into() },
            Part::Text {
                name: "main.rs".into(),
                mime_type: "text/x-rust".into(),
                text: "fn main() {}".into(),
                note: None,
            },
        ];
        let req = ProviderRequest {
            model: "gpt-4o".into(),
            messages: vec![Message::User { text: "Look".into(), parts: parts.clone() }, Message::user("plain")],
            ..Default::default()
        };
        let body = request_body(&req);
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "text", "text": "Look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K", "detail": "auto"}},
                {"type": "file", "file": {"filename": "spec.pdf", "file_data": "data:application/pdf;base64,JVBERi0x"}},
                {"type": "text", "text": "File main.rs (text/x-rust):\n```\nfn main() {}\n```"},
            ])
        );
        assert_eq!(body["messages"][1], json!({"role": "user", "content": "plain"}), "no parts: a string, as before");
        // Files alone: no empty text part.
        let req = ProviderRequest { messages: vec![Message::User { text: " ".into(), parts }], ..req };
        assert_eq!(request_body(&req)["messages"][0]["content"][0]["type"], "image_url");
    }

    #[test]
    fn options_are_sent_only_when_set() {
        let mut req = ProviderRequest { model: "m".into(), ..Default::default() };
        let body = request_body(&req);
        assert!(body.get("max_tokens").is_none() && body.get("reasoning_effort").is_none(), "{body}");
        req.options = switchboard_core::GenerationOptions {
            max_output_tokens: Some(300),
            reasoning_effort: Some(switchboard_core::ReasoningEffort::Low),
            thinking_budget: Some(9000),
            temperature: Some(0.5),
            top_p: Some(0.9),
        };
        let body = request_body(&req);
        assert_eq!((body["max_tokens"].clone(), body["reasoning_effort"].clone()), (json!(300), json!("low")));
        assert_eq!((body["temperature"].clone(), body["top_p"].clone()), (json!(0.5), json!(0.9)));
        // Sent as the person set them: 0.9 is written "0.9", not "0.8999999761581421" (an f32).
        assert!(body.to_string().contains(r#""top_p":0.9"#), "{body}");
        assert!(is_openai("https://api.openai.com/v1") && !is_openai("http://localhost:11434/v1"));
    }
}
