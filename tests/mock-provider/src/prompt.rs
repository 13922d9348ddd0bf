//! Each API's request flattened into [`Prompt`] pieces for counting and quoting
//! ([`crate::count`]): tool definitions first, then the system prompt, then the messages, each
//! message starting with [`Prompt::message`] and its role as text.
//!
//! Invariant: only what the model reads is text (message text, call names and arguments, tool
//! results, tool definitions); ids, signatures and settings are not counted; images, audio and
//! documents are media parts of a fixed size.

use serde_json::Value;

use crate::count::Prompt;

fn array(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

/// OpenAI Chat Completions: `tools`, then `messages` (string or parts content, `tool_calls`).
pub(crate) fn openai_chat(body: &Value) -> Prompt {
    let mut prompt = Prompt::default();
    for tool in array(&body["tools"]) {
        prompt.message().json(tool);
    }
    for message in array(&body["messages"]) {
        prompt.message().json(&message["role"]);
        match &message["content"] {
            Value::String(text) => {
                prompt.text(text);
            }
            Value::Array(parts) => {
                for part in parts {
                    match part.get("text").and_then(Value::as_str) {
                        Some(text) => prompt.text(text),
                        None => prompt.media(part),
                    };
                }
            }
            _ => {}
        }
        for call in array(&message["tool_calls"]) {
            prompt.json(&call["function"]["name"]).json(&call["function"]["arguments"]);
        }
    }
    prompt
}

/// OpenAI Responses: `tools`, `instructions`, then `input` (a string or items).
pub(crate) fn openai_responses(body: &Value) -> Prompt {
    let mut prompt = Prompt::default();
    for tool in array(&body["tools"]) {
        prompt.message().json(tool);
    }
    if let Some(instructions) = body["instructions"].as_str() {
        prompt.message().text("system").text(instructions);
    }
    match &body["input"] {
        Value::String(text) => {
            prompt.message().text("user").text(text);
        }
        Value::Array(items) => {
            for item in items {
                responses_item(&mut prompt, item);
            }
        }
        _ => {}
    }
    prompt
}

fn responses_item(prompt: &mut Prompt, item: &Value) {
    prompt.message();
    match item["type"].as_str().unwrap_or("message") {
        "function_call" => {
            prompt.json(&item["name"]).json(&item["arguments"]);
        }
        "function_call_output" => {
            prompt.json(&item["output"]);
        }
        "reasoning" => {
            for part in array(&item["summary"]) {
                prompt.json(&part["text"]);
            }
        }
        _ => {
            prompt.json(&item["role"]);
            match &item["content"] {
                Value::String(text) => {
                    prompt.text(text);
                }
                Value::Array(parts) => {
                    for part in parts {
                        match part.get("text").and_then(Value::as_str) {
                            Some(text) => prompt.text(text),
                            None => prompt.media(part),
                        };
                    }
                }
                _ => {}
            }
        }
    }
}

/// Anthropic Messages: `tools`, `system`, then `messages` (string or blocks); a block (or tool)
/// with `cache_control` is a cache breakpoint after it.
pub(crate) fn anthropic(body: &Value) -> Prompt {
    let mut prompt = Prompt::default();
    let breakpoint = |prompt: &mut Prompt, value: &Value| {
        if value.get("cache_control").is_some() {
            prompt.breakpoint();
        }
    };
    for tool in array(&body["tools"]) {
        prompt.message().json(tool);
        breakpoint(&mut prompt, tool);
    }
    match &body["system"] {
        Value::String(text) => {
            prompt.message().text("system").text(text);
        }
        Value::Array(blocks) => {
            prompt.message().text("system");
            for block in blocks {
                prompt.json(&block["text"]);
                breakpoint(&mut prompt, block);
            }
        }
        _ => {}
    }
    for message in array(&body["messages"]) {
        prompt.message().json(&message["role"]);
        match &message["content"] {
            Value::String(text) => {
                prompt.text(text);
            }
            Value::Array(blocks) => {
                for block in blocks {
                    anthropic_block(&mut prompt, block);
                    breakpoint(&mut prompt, block);
                }
            }
            _ => {}
        }
    }
    prompt
}

fn anthropic_block(prompt: &mut Prompt, block: &Value) {
    match block["type"].as_str().unwrap_or("") {
        "text" => {
            prompt.json(&block["text"]);
        }
        "thinking" => {
            prompt.json(&block["thinking"]);
        }
        "redacted_thinking" => {}
        "tool_use" => {
            prompt.json(&block["name"]).json(&block["input"]);
        }
        "tool_result" => match &block["content"] {
            Value::Array(parts) => {
                for part in parts {
                    anthropic_block(prompt, part);
                }
            }
            other => {
                prompt.json(other);
            }
        },
        _ => {
            prompt.media(block);
        }
    }
}

/// Gemini: `tools` (each function declaration), `systemInstruction`, then `contents` (parts).
pub(crate) fn gemini(body: &Value) -> Prompt {
    let mut prompt = Prompt::default();
    for tool in array(&body["tools"]) {
        let declarations = tool.get("functionDeclarations").or_else(|| tool.get("function_declarations")).map(array);
        match declarations {
            Some(declarations) => {
                for declaration in declarations {
                    prompt.message().json(declaration);
                }
            }
            None => {
                prompt.message().json(tool);
            }
        }
    }
    let system = body.get("systemInstruction").or_else(|| body.get("system_instruction"));
    if let Some(system) = system {
        prompt.message().text("system");
        for part in array(&system["parts"]) {
            prompt.json(&part["text"]);
        }
    }
    for content in array(&body["contents"]) {
        prompt.message().json(&content["role"]);
        for part in array(&content["parts"]) {
            if let Some(text) = part.get("text") {
                prompt.json(text);
            } else if let Some(call) = part.get("functionCall") {
                prompt.json(&call["name"]).json(&call["args"]);
            } else if let Some(response) = part.get("functionResponse") {
                prompt.json(&response["name"]).json(&response["response"]);
            } else {
                prompt.media(part);
            }
        }
    }
    prompt
}

/// What a reply adds to the conversation, for a request that continues it: its reasoning, its
/// text and each call, as output items.
pub(crate) fn output(reply: &crate::api::Assembled) -> Prompt {
    let mut prompt = Prompt::default();
    if !reply.reasoning.is_empty() {
        prompt.message().text(&reply.reasoning);
    }
    if !reply.text.is_empty() {
        prompt.message().text("assistant").text(&reply.text);
    }
    for (_, name, arguments) in &reply.tool_calls {
        prompt.message().text(name).text(arguments);
    }
    prompt
}
