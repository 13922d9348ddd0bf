//! What a tool's MCP server asks during a call, asked on the terminal: a form field by field
//! (its defaults offered, each answer checked against the form), a page to open, a completion to
//! run. Without a terminal a form or page is declined and a completion denied, unless
//! `--approve-sampling` runs completions without asking.
//!
//! Invariant: what the server wrote is shown through `render::safe` (no control or bidi
//! characters reach the terminal), and an answer that does not fit the form is never sent.

use crate::render::safe;
use std::io::IsTerminal as _;
use switchboard_core::{
    ElicitationAction, ElicitationAnswer, ElicitationMode, ElicitationRequest, FieldKind, FormField, SamplingDecision,
    SamplingRequest, SamplingRole,
};

/// How many times a field is asked again after an answer that does not fit.
const TRIES: usize = 3;

async fn read_line(prompt: String) -> Option<String> {
    tokio::task::spawn_blocking(move || {
        eprint!("{prompt}");
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_owned()),
        }
    })
    .await
    .ok()
    .flatten()
}

/// Asks the person for the input a server needs.
pub async fn elicit(request: ElicitationRequest) -> ElicitationAnswer {
    let who = format!("The MCP server '{}' (tool '{}')", safe(&request.server), safe(&request.tool));
    if !std::io::stdin().is_terminal() {
        eprintln!("{who} asks for input and there is no terminal to ask; declined.");
        return ElicitationAnswer::decline();
    }
    eprintln!("\n{who} asks:\n  {}", safe(&request.message));
    if request.mode == ElicitationMode::Url {
        let url = request.url.clone().unwrap_or_default();
        eprintln!("It asks you to open this page:\n  {}", safe(&url));
        let answer = read_line("[y] I will open it  [n] decline  [c] cancel: ".into()).await;
        return match answer.as_deref().map(str::trim) {
            Some("y" | "yes") => ElicitationAnswer { action: ElicitationAction::Accept, content: None },
            Some("n" | "no") => ElicitationAnswer::decline(),
            _ => ElicitationAnswer::cancel(),
        };
    }
    match read_line("[a] answer  [d] decline  [c] cancel: ".into()).await.as_deref().map(str::trim) {
        Some("a" | "answer" | "y" | "yes") => {}
        Some("d" | "decline" | "n" | "no") => return ElicitationAnswer::decline(),
        _ => return ElicitationAnswer::cancel(),
    }
    let mut content = serde_json::Map::new();
    for field in &request.form.fields {
        let mut tries = 0;
        loop {
            let Some(line) = read_line(field_prompt(field)).await else { return ElicitationAnswer::cancel() };
            let value = match parse(field, line.trim()) {
                Ok(value) => value,
                Err(why) => {
                    eprintln!("{why}");
                    tries += 1;
                    if tries >= TRIES {
                        return ElicitationAnswer::cancel();
                    }
                    continue;
                }
            };
            let mut one = serde_json::Map::new();
            if let Some(v) = &value {
                one.insert(field.name.clone(), v.clone());
            }
            let single = switchboard_core::ElicitationForm { fields: vec![field.clone()] };
            match single.complete(&one) {
                Ok(_) => {
                    if let Some(v) = value {
                        content.insert(field.name.clone(), v);
                    }
                    break;
                }
                Err(why) => {
                    eprintln!("{why}");
                    tries += 1;
                    if tries >= TRIES {
                        return ElicitationAnswer::cancel();
                    }
                }
            }
        }
    }
    ElicitationAnswer { action: ElicitationAction::Accept, content: Some(content) }
}

fn field_prompt(field: &FormField) -> String {
    let mut p = format!("\n{}{}", safe(&field.title), if field.required { " (required)" } else { "" });
    if let Some(d) = &field.description {
        p.push_str(&format!(" — {}", safe(d)));
    }
    match &field.kind {
        FieldKind::Text { format, default, .. } => {
            if let Some(f) = format {
                p.push_str(&format!(" [{f}]"));
            }
            if let Some(d) = default {
                p.push_str(&format!("\n  empty: {}", safe(d)));
            }
        }
        FieldKind::Number { integer, minimum, maximum, default } => {
            p.push_str(if *integer { " [whole number" } else { " [number" });
            if let (Some(lo), Some(hi)) = (minimum, maximum) {
                p.push_str(&format!(" {lo}..{hi}"));
            }
            p.push(']');
            if let Some(d) = default {
                p.push_str(&format!("\n  empty: {d}"));
            }
        }
        FieldKind::Boolean { default } => {
            p.push_str(" [y/n]");
            if let Some(d) = default {
                p.push_str(&format!("\n  empty: {}", if *d { "y" } else { "n" }));
            }
        }
        FieldKind::Choice { choices, multiple, default, .. } => {
            for (i, c) in choices.iter().enumerate() {
                p.push_str(&format!("\n  {}. {}", i + 1, safe(&c.title)));
            }
            if *multiple {
                p.push_str("\n  (numbers separated by commas)");
            }
            if !default.is_empty() {
                p.push_str(&format!("\n  empty: {}", safe(&default.join(", "))));
            }
        }
    }
    p.push_str("\n> ");
    p
}

/// The value typed for `field`; `None`: left empty (its default, if any, applies).
fn parse(field: &FormField, line: &str) -> Result<Option<serde_json::Value>, String> {
    use serde_json::Value;
    if line.is_empty() {
        return Ok(None);
    }
    Ok(Some(match &field.kind {
        FieldKind::Text { .. } => Value::String(line.to_owned()),
        FieldKind::Number { .. } => Value::String(line.to_owned()),
        FieldKind::Boolean { .. } => match line.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => return Err("Answer y or n.".into()),
        },
        FieldKind::Choice { choices, multiple, .. } => {
            let pick = |s: &str| -> Result<Value, String> {
                let s = s.trim();
                let by_number = s.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| choices.get(i));
                by_number
                    .or_else(|| choices.iter().find(|c| c.value == s || c.title == s))
                    .map(|c| Value::String(c.value.clone()))
                    .ok_or_else(|| format!("'{}' is not one of the choices.", safe(s)))
            };
            if *multiple { Value::Array(line.split(',').map(pick).collect::<Result<_, _>>()?) } else { pick(line)? }
        }
    }))
}

/// Asks the person whether to run a server's completion (`approve`: run it without asking).
pub async fn sample(request: SamplingRequest, approve: bool) -> SamplingDecision {
    let who = format!("The MCP server '{}' (tool '{}')", safe(&request.server), safe(&request.tool));
    let cap = match request.requested_max_tokens {
        Some(asked) => format!("at most {} tokens (it asked for {asked})", request.max_tokens),
        None => format!("at most {} tokens", request.max_tokens),
    };
    if approve {
        eprintln!("{who} asked for a completion of {cap}; running it (--approve-sampling).");
        return SamplingDecision::Approve { messages: None };
    }
    if !std::io::stdin().is_terminal() {
        eprintln!(
            "{who} asks for a completion and there is no terminal to ask; denied. Pass --approve-sampling to allow it."
        );
        return SamplingDecision::Deny;
    }
    let mut shown = format!("\n{who} asks the model for a completion of {cap}:\n");
    if let Some(system) = &request.system_prompt {
        shown.push_str(&format!("  system: {}\n", safe(system)));
    }
    for m in &request.messages {
        let role = if m.role == SamplingRole::User { "user" } else { "assistant" };
        shown.push_str(&format!("  {role}: {}\n", safe(&m.text)));
    }
    if let Some(p) = &request.model_preferences {
        shown.push_str(&format!("  it prefers: {}\n", safe(p)));
    }
    eprint!("{shown}");
    match read_line("[y] run it  [n] deny: ".into()).await.as_deref().map(str::trim) {
        Some("y" | "yes") => SamplingDecision::Approve { messages: None },
        _ => SamplingDecision::Deny,
    }
}
