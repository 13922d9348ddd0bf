//! Classifying HTTP failures into [`ErrorKind`]s with specific, actionable messages. Pure.

use std::time::Duration;
use switchboard_core::{ContextOverflow, ErrorKind, ProviderError};

/// The most of an error body worth reading or quoting.
pub const MAX_ERROR_BODY: usize = 16 * 1024;

/// How long the response asks us to wait, from its headers or body; see [`crate::retry_hint`].
/// Never panics and never exceeds [`crate::retry_hint::MAX_RETRY_HINT`].
pub fn retry_after(header: impl Fn(&str) -> Option<String>, body: &str) -> Option<Duration> {
    crate::retry_hint::retry_hint(header, body, std::time::SystemTime::now())
}

/// `who` for the middle of a sentence: "The provider at …" becomes "the provider at …".
pub fn mid_sentence(who: &str) -> String {
    match who.strip_prefix("The ") {
        Some(rest) => format!("the {rest}"),
        None => who.to_owned(),
    }
}

/// The `host:port` (or host) of the URL in `who` ("The provider at http://127.0.0.1:1234/v1"), or
/// `who` mid-sentence when it names no URL: what a person recognises in "Couldn't connect to …".
pub fn address(who: &str) -> String {
    let Some(url) = who.split_whitespace().find(|w| w.contains("://")) else { return mid_sentence(who) };
    match reqwest::Url::parse(url) {
        Ok(u) => match (u.host_str(), u.port()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_owned(),
            _ => url.to_owned(),
        },
        Err(_) => url.to_owned(),
    }
}

/// A failed connection in plain words, the transport's own words as its detail.
pub fn unreachable(who: &str, transport: String) -> ProviderError {
    ProviderError::new(
        ErrorKind::Network,
        format!("Couldn't connect to {} — is the server running, and is the address right?", address(who)),
    )
    .with_detail(transport)
}

/// The provider's own words from a JSON error body (`{"error":{"message":..}}`, `{"message":..}`,
/// `{"error":"..."}`), with its type/code.
fn json_error(body: &str) -> Option<(String, Option<String>)> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let err = v.get("error").unwrap_or(&v);
    let message = match err {
        serde_json::Value::String(s) => s.clone(),
        _ => err.get("message")?.as_str()?.to_owned(),
    };
    let code =
        ["code", "type", "status"].iter().filter_map(|k| err.get(*k)).find_map(|c| c.as_str().map(str::to_owned));
    Some((message, code))
}

fn looks_like_html(body: &str) -> bool {
    let head = body.trim_start().get(..64).unwrap_or(body.trim_start()).to_ascii_lowercase();
    head.starts_with("<!doctype html")
        || head.starts_with("<html")
        || head.starts_with("<head")
        || head.starts_with("<body")
}

fn shorten(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max_chars).collect();
    out.push('…');
    out
}

/// Classifies a non-success HTTP response. `who` names the provider endpoint in messages. A
/// refusal because the model takes no tools is marked so the loop can ask again without them.
pub fn http_error(who: &str, status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
    let error = with_overflow(classify_http(who, status, retry_after, body), body);
    if matches!(status, 400 | 404 | 422) && refuses_tools(body) { error.with_tools_unsupported() } else { error }
}

/// Whether an error body says the model (or the server as configured) cannot take tools:
/// Ollama's "does not support tools", OpenRouter's "No endpoints found that support tool use",
/// OpenAI's "'tools' is not supported with this model", vLLM without its tool parser, llama.cpp
/// without `--jinja`, Gemini's "Function calling is not enabled".
pub fn refuses_tools(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    [
        "does not support tools",
        "support tool use",
        "'tools' is not supported",
        "tools is not supported",
        "tools are not supported",
        "does not support function calling",
        "function calling is not enabled",
        "enable-auto-tool-choice",
        "tools param requires --jinja",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
}

fn classify_http(who: &str, status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
    if let Some(error) = anthropic_http_error(who, status, retry_after, body) {
        return error;
    }
    if let Some(error) = google_http_error(who, status, retry_after, body) {
        return error;
    }
    let parsed = json_error(body);
    let said = match (&parsed, looks_like_html(body)) {
        // The message goes mid-sentence; its own full stop would double ours.
        (Some((m, _)), _) => format!(": {}", shorten(m.trim().trim_end_matches('.'), 400)),
        // A gateway's own error page: its title says what failed ("502 Bad Gateway").
        (None, true) if status >= 500 => match crate::event_stream::html_title(body) {
            Some(title) => format!(": {}", title.trim_end_matches('.')),
            None => " and an HTML page".to_owned(),
        },
        (None, true) => {
            let title =
                crate::event_stream::html_title(body).map(|t| format!(" (\u{201c}{t}\u{201d})")).unwrap_or_default();
            format!(
                " with an HTML page{title} instead of an API response; check that the base URL points at the API (it usually ends in /v1)"
            )
        }
        (None, false) if body.trim().is_empty() => String::new(),
        (None, false) => format!(": {}", shorten(body, 200)),
    };
    let code = parsed.as_ref().and_then(|(_, c)| c.as_deref()).unwrap_or("").to_ascii_lowercase();
    let lower_msg = parsed.as_ref().map(|(m, _)| m.to_ascii_lowercase()).unwrap_or_default();
    let context_exceeded = code.contains("context_length")
        || lower_msg.contains("context length")
        || lower_msg.contains("context window")
        || lower_msg.contains("maximum context")
        || lower_msg.contains("too many tokens");
    let overloaded = code.contains("overloaded") || lower_msg.contains("overloaded");
    let spent = quota_exhausted(&code, &lower_msg);

    let (kind, message) = match status {
        // OpenAI's Responses API says an unknown model with a 400 where Chat Completions says
        // 404: the code decides, so both are the same kind.
        400..=499 if unknown_model(&code) => (
            ErrorKind::NotFound,
            format!("{who} has no such model ({status}){said}. Check the model name (and that the key can use it)."),
        ),
        // Waiting does not lift a spend limit or an exhausted quota: never retried.
        402 | 403 | 429 if spent => {
            (ErrorKind::Auth, format!("{who} says {}{said} ({status}). {QUOTA_ADVICE}", spent_what(&lower_msg, &code)))
        }
        401 => {
            (ErrorKind::Auth, format!("{who} rejected the API key (401){said}. Check the key set for this provider."))
        }
        403 => (ErrorKind::Auth, format!("{who} refused access (403){said}. The key may lack access to this model.")),
        404 => (
            ErrorKind::NotFound,
            format!("{who} has no such model or endpoint (404){said}. Check the model name and the base URL."),
        ),
        408 => (ErrorKind::Timeout, format!("{who} timed out the request (408){said}.")),
        413 => (ErrorKind::ContextLength, format!("{who} says the request is too large (413){said}.")),
        429 => {
            let wait =
                retry_after.map(|d| format!(" It asked to wait {:.0} s.", d.as_secs_f32().ceil())).unwrap_or_default();
            (ErrorKind::RateLimited, format!("{who} is rate limiting requests (429){said}.{wait}"))
        }
        400 | 422 if context_exceeded => (
            ErrorKind::ContextLength,
            format!(
                "The conversation is too long for this model's context window{said}. Start a new chat or pick a model with a larger context."
            ),
        ),
        400 | 422 => (ErrorKind::BadRequest, format!("{who} rejected the request ({status}){said}.")),
        503 | 529 => (ErrorKind::Overloaded, format!("{who} is overloaded ({status}){said}. Try again in a moment.")),
        500..=599 if overloaded => (ErrorKind::Overloaded, format!("{who} is overloaded ({status}){said}.")),
        500..=599 => (ErrorKind::Server, format!("{who} failed with a server error ({status}){said}.")),
        _ => (ErrorKind::Protocol, format!("{who} answered with unexpected status {status}{said}.")),
    };
    ProviderError::new(kind, message).with_status(status).with_retry_after(retry_after)
}

/// OpenAI's code for a model that does not exist or that the key cannot use, in an HTTP error
/// body or a stream's error event, whatever the status.
fn unknown_model(code: &str) -> bool {
    code == "model_not_found"
}

const QUOTA_ADVICE: &str = "Waiting will not help: raise the limit or add credit in the provider's billing settings (or use another key or provider in Settings), then ask again.";

/// A limit that only a person can lift: OpenAI's `insufficient_quota`, "exceeded your current
/// quota", spend limits, billing hard limits, credit balances.
fn quota_exhausted(code: &str, lower_msg: &str) -> bool {
    code.contains("insufficient_quota")
        || code.contains("billing")
        || code.contains("spend_limit")
        || code.contains("credit")
        || [
            "exceeded your current quota",
            "spend limit",
            "spending limit",
            "billing hard limit",
            "hard limit",
            "insufficient credit",
            "credit balance",
            "out of credits",
            "insufficient_quota",
            "quota exceeded",
            "billing",
        ]
        .iter()
        .any(|needle| lower_msg.contains(needle))
}

fn spent_what(lower_msg: &str, code: &str) -> &'static str {
    if lower_msg.contains("spend") || code.contains("spend") {
        "the spend limit was reached"
    } else if lower_msg.contains("quota") || code.contains("quota") {
        "the account's quota is used up"
    } else if lower_msg.contains("credit") || code.contains("credit") {
        "the account is out of credit"
    } else {
        "the billing limit was reached"
    }
}

/// A context length error with the numbers its body gives ([`overflow`]); any other unchanged.
fn with_overflow(error: ProviderError, body: &str) -> ProviderError {
    if error.kind == ErrorKind::ContextLength { error.with_overflow(overflow(body)) } else { error }
}

/// The prompt tokens and window a "too long" message gives, in each API's words:
/// OpenAI Chat's "maximum context length is M tokens. However, your messages resulted in N
/// tokens" (or "you requested N tokens"), Anthropic's "prompt is too long: N tokens > M maximum"
/// (or "input length and `max_tokens` exceed context limit: N + K > M"), Gemini's "The input token
/// count (N) exceeds the maximum number of tokens allowed (M)". `None` when it names neither.
pub fn overflow(body: &str) -> Option<ContextOverflow> {
    let lower = body.to_ascii_lowercase();
    let (prompt_tokens, window) = if lower.contains("maximum context length is") {
        let prompt = number_after(&lower, "resulted in").or_else(|| number_after(&lower, "you requested"));
        (prompt, number_after(&lower, "maximum context length is"))
    } else if lower.contains("prompt is too long:") {
        (number_after(&lower, "prompt is too long:"), number_after(&lower, "tokens >"))
    } else if lower.contains("exceed context limit:") {
        let rest = &lower[lower.find("exceed context limit:")?..];
        (number_after(rest, "exceed context limit:"), number_after(rest, ">"))
    } else if lower.contains("input token count") {
        (number_after(&lower, "input token count"), number_after(&lower, "tokens allowed"))
    } else {
        (None, None)
    };
    (prompt_tokens.is_some() || window.is_some()).then_some(ContextOverflow { prompt_tokens, window })
}

/// The number right after `phrase` in `text` (skipping spaces and an opening parenthesis; digit
/// group commas allowed).
fn number_after(text: &str, phrase: &str) -> Option<u64> {
    let rest = &text[text.find(phrase)? + phrase.len()..];
    let rest = rest.trim_start_matches([' ', '(']);
    let digits: String =
        rest.chars().take_while(|c| c.is_ascii_digit() || *c == ',').filter(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Classifies an error object sent inside a stream (`data: {"error": {...}}`).
pub fn stream_error(who: &str, body: &str) -> ProviderError {
    with_overflow(stream_error_kind(who, body), body)
}

fn stream_error_kind(who: &str, body: &str) -> ProviderError {
    if let Some(error) = anthropic_stream_error(who, body) {
        return error;
    }
    let (message, code) = json_error(body).unwrap_or_else(|| (shorten(body, 200), None));
    let code = code.unwrap_or_default().to_ascii_lowercase();
    let lower = message.to_ascii_lowercase();
    if quota_exhausted(&code, &lower) {
        let what = spent_what(&lower, &code);
        return ProviderError::new(
            ErrorKind::Auth,
            format!("{who} says {what}: {}. {QUOTA_ADVICE}", shorten(message.trim_end_matches('.'), 400)),
        );
    }
    if unknown_model(&code) {
        return ProviderError::new(
            ErrorKind::NotFound,
            format!(
                "{who} has no such model: {}. Check the model name (and that the key can use it).",
                shorten(message.trim_end_matches('.'), 400)
            ),
        );
    }
    let kind = if code.contains("rate_limit") {
        ErrorKind::RateLimited
    } else if code.contains("overloaded") || lower.contains("overloaded") {
        ErrorKind::Overloaded
    } else if code.contains("context_length") || lower.contains("context length") {
        ErrorKind::ContextLength
    } else {
        ErrorKind::Server
    };
    ProviderError::new(kind, format!("{who} reported an error mid-response: {}", shorten(&message, 400)))
        .with_retry_after(crate::retry_hint::body_hint(body))
}

/// A Responses API stream failure: an `error` event's or a `response.failed` response's `code`
/// and `message`. Classified like an OpenAI stream error, except that a code the API uses for
/// requests it will never accept (`invalid_prompt`, `invalid_image`, ...: every `invalid_*`)
/// is a bad request, which no retry can fix, where an unknown code stays a retryable server error.
pub fn responses_stream_error(who: &str, code: Option<&str>, message: &str) -> ProviderError {
    let body = serde_json::json!({"error": {"message": message, "code": code}}).to_string();
    let error = stream_error(who, &body);
    let code = code.unwrap_or("").to_ascii_lowercase();
    if error.kind == ErrorKind::Server && code.starts_with("invalid_") {
        return ProviderError::new(
            ErrorKind::BadRequest,
            format!("{who} refused the request ({code}): {}", shorten(message.trim_end_matches('.'), 400)),
        );
    }
    error
}

/// Anthropic's error body, `{"type":"error","error":{"type":T,"message":M}}`: its (type, message).
/// No other API's errors have this shape, so what follows changes nothing for them.
fn anthropic_shape(body: &str) -> Option<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    if v.get("type")?.as_str()? != "error" {
        return None;
    }
    let err = v.get("error")?;
    let kind = err.get("type")?.as_str()?.to_owned();
    let message = err.get("message").and_then(|m| m.as_str()).unwrap_or("").to_owned();
    Some((kind, message))
}

/// What an Anthropic error type means, given its message; `None` for a type not known here.
fn anthropic_kind(kind: &str, lower_msg: &str) -> Option<ErrorKind> {
    Some(match kind {
        _ if quota_exhausted(kind, lower_msg) => ErrorKind::Auth,
        "authentication_error" | "permission_error" => ErrorKind::Auth,
        "not_found_error" => ErrorKind::NotFound,
        "rate_limit_error" => ErrorKind::RateLimited,
        "overloaded_error" => ErrorKind::Overloaded,
        "request_too_large" => ErrorKind::ContextLength,
        "invalid_request_error" if anthropic_context_exceeded(lower_msg) => ErrorKind::ContextLength,
        "invalid_request_error" => ErrorKind::BadRequest,
        "timeout_error" => ErrorKind::Timeout,
        "api_error" => ErrorKind::Server,
        _ => return None,
    })
}

fn anthropic_context_exceeded(lower_msg: &str) -> bool {
    ["prompt is too long", "context window", "context length", "context limit", "too many tokens"]
        .iter()
        .any(|n| lower_msg.contains(n))
}

const ANTHROPIC_KEY_ADVICE: &str = "Set a valid Anthropic key for this provider in Settings (or `switchboard keys set <profile>`, or the ANTHROPIC_API_KEY environment variable); keys are made in the Anthropic Console.";

/// An HTTP error in Anthropic's shape, classified by its error type first (the status second):
/// a 400 can be a spent credit balance or a prompt too long, a 529 is an overload.
fn anthropic_http_error(who: &str, status: u16, retry_after: Option<Duration>, body: &str) -> Option<ProviderError> {
    let (kind_name, message) = anthropic_shape(body)?;
    let lower = message.to_ascii_lowercase();
    let kind = anthropic_kind(&kind_name, &lower)?;
    let said = if message.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", shorten(message.trim().trim_end_matches('.'), 400))
    };
    let text = match kind {
        ErrorKind::Auth if quota_exhausted(&kind_name, &lower) => {
            format!("{who} says {}{said} ({status}). {QUOTA_ADVICE}", spent_what(&lower, &kind_name))
        }
        ErrorKind::Auth if kind_name == "permission_error" => format!(
            "{who} refused access ({status}){said}. The key's organization or workspace may lack access to this model or feature; check its permissions in the Anthropic Console, or use another key."
        ),
        ErrorKind::Auth => format!("{who} rejected the API key ({status}){said}. {ANTHROPIC_KEY_ADVICE}"),
        ErrorKind::NotFound => format!(
            "{who} has no such model or endpoint ({status}){said}. Check the model name and the base URL (Anthropic's is https://api.anthropic.com/v1)."
        ),
        ErrorKind::RateLimited => {
            let wait =
                retry_after.map(|d| format!(" It asked to wait {:.0} s.", d.as_secs_f32().ceil())).unwrap_or_default();
            format!("{who} is rate limiting requests ({status}){said}.{wait}")
        }
        ErrorKind::Overloaded => format!("{who} is overloaded ({status}){said}. Try again in a moment."),
        ErrorKind::ContextLength => format!(
            "The conversation is too long for this model's context window{said}. Start a new chat or pick a model with a larger context."
        ),
        ErrorKind::Timeout => format!("{who} timed out the request ({status}){said}."),
        ErrorKind::BadRequest => format!("{who} rejected the request ({status}){said}."),
        _ => format!("{who} failed with a server error ({status}){said}."),
    };
    Some(ProviderError::new(kind, text).with_status(status).with_retry_after(retry_after))
}

/// An `error` event of an Anthropic stream, classified by its type: an overload or a rate limit
/// may be retried (before any output), an invalid request or a rejected key is not.
fn anthropic_stream_error(who: &str, body: &str) -> Option<ProviderError> {
    let (kind_name, message) = anthropic_shape(body)?;
    let lower = message.to_ascii_lowercase();
    let kind = anthropic_kind(&kind_name, &lower)?;
    let text = match kind {
        ErrorKind::Auth if quota_exhausted(&kind_name, &lower) => format!(
            "{who} says {}: {}. {QUOTA_ADVICE}",
            spent_what(&lower, &kind_name),
            shorten(message.trim_end_matches('.'), 400)
        ),
        _ => format!("{who} reported an error mid-response ({kind_name}): {}", shorten(&message, 400)),
    };
    Some(ProviderError::new(kind, text).with_retry_after(crate::retry_hint::body_hint(body)))
}

/// Google's error body, `{"error":{"code":400,"message":M,"status":"INVALID_ARGUMENT","details":[..]}}`
/// (also wrapped in an array, as a non-SSE stream sends it): the error object. A numeric code next
/// to an upper-case canonical status is Google's; no other API's errors look like this.
fn google_shape(body: &str) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let v = match v {
        serde_json::Value::Array(mut items) if !items.is_empty() => items.swap_remove(0),
        v => v,
    };
    let err = v.get("error")?;
    err.get("code")?.as_u64()?;
    let status = err.get("status")?.as_str()?;
    (!status.is_empty() && status.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')).then(|| err.clone())
}

const GEMINI_KEY_ADVICE: &str = "Set a valid Gemini key for this provider in Settings (or `switchboard keys set <profile>`, or the GEMINI_API_KEY environment variable); keys are made in Google AI Studio.";

const GEMINI_BILLING_ADVICE: &str = "Waiting will not help: enable billing for the key's Google Cloud project (Google AI Studio, Billing), or use another model, key or provider in Settings.";

/// An HTTP error in Google's shape, for what the status alone gets wrong: a rejected key is a 400,
/// a per-minute rate limit and a used-up daily quota are both 429 RESOURCE_EXHAUSTED (with a
/// message about "quota" and "billing" either way), an overlong prompt is a 400. `None` leaves
/// the rest to the general rules, which read Google's message and status like any other.
fn google_http_error(who: &str, status: u16, retry_after: Option<Duration>, body: &str) -> Option<ProviderError> {
    let err = google_shape(body)?;
    let grpc = err.get("status").and_then(|s| s.as_str()).unwrap_or("");
    let message = err.get("message").and_then(|m| m.as_str()).unwrap_or("").trim();
    let lower = message.to_ascii_lowercase();
    let said =
        if message.is_empty() { String::new() } else { format!(": {}", shorten(message.trim_end_matches('.'), 400)) };
    let details: Vec<&serde_json::Value> =
        err.get("details").and_then(|d| d.as_array()).into_iter().flatten().collect();
    let reason_is = |r: &str| details.iter().any(|d| d.get("reason").and_then(|x| x.as_str()) == Some(r));
    let quota_ids: Vec<String> = details
        .iter()
        .filter_map(|d| d.get("violations").and_then(|v| v.as_array()))
        .flatten()
        .filter_map(|v| v.get("quotaId").and_then(|q| q.as_str()))
        .map(str::to_owned)
        .collect();
    let (kind, text) = if reason_is("API_KEY_INVALID")
        || lower.contains("api key not valid")
        || lower.contains("api key expired")
    {
        (ErrorKind::Auth, format!("{who} rejected the API key ({status}){said}. {GEMINI_KEY_ADVICE}"))
    } else if grpc == "PERMISSION_DENIED" && lower.contains("unregistered callers") {
        (ErrorKind::Auth, format!("{who} was sent no API key ({status}). {GEMINI_KEY_ADVICE}"))
    } else if grpc == "RESOURCE_EXHAUSTED" && quota_ids.iter().any(|q| q.contains("PerDay")) {
        (
            ErrorKind::Auth,
            format!(
                "{who} says the daily quota for this model is used up{said} ({status}). It resets at midnight Pacific time. {GEMINI_BILLING_ADVICE}"
            ),
        )
    } else if grpc == "RESOURCE_EXHAUSTED" && lower.contains("limit: 0") {
        (
            ErrorKind::Auth,
            format!("{who} says the key's plan has no quota for this model{said} ({status}). {GEMINI_BILLING_ADVICE}"),
        )
    } else if grpc == "RESOURCE_EXHAUSTED" {
        let wait =
            retry_after.map(|d| format!(" It asked to wait {:.0} s.", d.as_secs_f32().ceil())).unwrap_or_default();
        (ErrorKind::RateLimited, format!("{who} is rate limiting requests ({status}){said}.{wait}"))
    } else if lower.contains("input token count") && lower.contains("exceeds the maximum") {
        (
            ErrorKind::ContextLength,
            format!(
                "The conversation is too long for this model's context window{said}. Start a new chat or pick a model with a larger context."
            ),
        )
    } else if grpc == "FAILED_PRECONDITION" {
        (
            ErrorKind::Auth,
            format!(
                "{who} cannot serve this key here ({status}){said}. The Gemini API's free tier is not offered in every region; enabling billing for the key's project may lift this, or use another provider."
            ),
        )
    } else {
        return None;
    };
    Some(ProviderError::new(kind, text).with_status(status).with_retry_after(retry_after))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_classified() {
        let openai = |m: &str, t: &str| format!(r#"{{"error":{{"message":"{m}","type":"{t}","code":null}}}}"#);
        let cases = [
            (401, openai("Incorrect API key provided: sk-...abcd", "invalid_request_error"), ErrorKind::Auth, "rejected the API key"),
            (403, String::new(), ErrorKind::Auth, "refused access"),
            (404, openai("The model `gpt-9` does not exist", "invalid_request_error"), ErrorKind::NotFound, "gpt-9"),
            (429, openai("Rate limit reached", "rate_limit_exceeded"), ErrorKind::RateLimited, "rate limiting"),
            (429, r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#.into(), ErrorKind::Auth, "quota is used up"),
            (400, r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}"#.into(), ErrorKind::ContextLength, "too long"),
            (400, openai("Invalid value for tool_choice", "invalid_request_error"), ErrorKind::BadRequest, "tool_choice"),
            (500, "internal error".into(), ErrorKind::Server, "server error (500): internal error"),
            (502, "<!DOCTYPE html><html><body>Bad gateway</body></html>".into(), ErrorKind::Server, "(502) and an HTML page."),
            (502, "<html><head><title>502 Bad Gateway</title></head><body><center>nginx</center></body></html>".into(), ErrorKind::Server, "server error (502): 502 Bad Gateway."),
            (200, "<!doctype html><title>Sign in</title>".into(), ErrorKind::Protocol, "(\u{201c}Sign in\u{201d}) instead of an API response"),
            (503, String::new(), ErrorKind::Overloaded, "overloaded"),
            (529, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(), ErrorKind::Overloaded, "Overloaded"),
            (418, String::new(), ErrorKind::Protocol, "unexpected status 418"),
        ];
        for (status, body, kind, needle) in cases {
            let e = http_error("The provider", status, None, &body);
            assert_eq!(e.kind, kind, "{status} {body}");
            assert!(e.message.contains(needle), "{status}: {:?} lacks {needle:?}", e.message);
            assert_eq!(e.status, Some(status));
        }
    }

    #[test]
    fn a_message_ending_in_a_full_stop_does_not_double_ours() {
        let body = r#"{"error":{"message":"Incorrect API key provided: sk-e2e***. ","code":"invalid_api_key"}}"#;
        let e = http_error("The provider", 401, None, body);
        assert_eq!(
            e.message,
            "The provider rejected the API key (401): Incorrect API key provided: sk-e2e***. Check the key set for this provider."
        );
    }

    #[test]
    fn retry_after_is_parsed_and_worded() {
        let headers = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
        };
        assert_eq!(retry_after(headers(&[("retry-after", "3")]), ""), Some(Duration::from_secs(3)));
        assert_eq!(retry_after(headers(&[("retry-after", "inf")]), ""), None);
        assert_eq!(retry_after(headers(&[]), ""), None);
        let e = http_error("X", 429, Some(Duration::from_secs(2)), "");
        assert!(e.message.contains("wait 2 s"), "{}", e.message);
        assert_eq!(e.retry_after, Some(Duration::from_secs(2)));
        assert!(e.is_retryable());
    }

    #[test]
    fn a_429_with_the_longest_hint_says_a_finite_wait() {
        let hint = retry_after(|_| Some("1e309".into()), r#"{"error":{"retry_after":1e300}}"#);
        let e = http_error("X", 429, hint, "");
        assert!(e.message.contains("wait 86400 s"), "{}", e.message);
    }

    #[test]
    fn spend_limits_and_exhausted_quotas_are_never_retried_and_say_what_to_change() {
        let bodies = [
            (
                429,
                r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
                "quota is used up",
            ),
            (429, r#"{"error":{"message":"Monthly spend limit reached for this project"}}"#, "spend limit"),
            (
                429,
                r#"{"error":{"message":"Billing hard limit has been reached","type":"billing_error"}}"#,
                "billing limit",
            ),
            (
                402,
                r#"{"error":{"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits","code":402}}"#,
                "out of credit",
            ),
        ];
        for (status, body, what) in bodies {
            let e = http_error("The provider", status, Some(Duration::from_secs(1)), body);
            assert!(!e.is_retryable(), "{body}");
            assert!(e.message.contains(what), "{}", e.message);
            assert!(e.message.contains("billing settings"), "{}", e.message);
        }
        let e =
            stream_error("X", r#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#);
        assert!(!e.is_retryable(), "{}", e.message);
        // A plain rate limit is still retried.
        let e = http_error(
            "X",
            429,
            None,
            r#"{"error":{"message":"Rate limit reached for requests","code":"rate_limit_exceeded"}}"#,
        );
        assert!(e.is_retryable());
    }

    #[test]
    fn stream_errors_are_classified() {
        let e = stream_error("X", r#"{"error":{"message":"The server is overloaded","type":"server_error"}}"#);
        assert_eq!(e.kind, ErrorKind::Overloaded);
        let e = stream_error("X", r#"{"error":{"message":"boom","type":"server_error"}}"#);
        assert_eq!(e.kind, ErrorKind::Server);
        assert!(e.message.contains("boom"));
    }
    #[test]
    fn responses_stream_errors_keep_the_message_and_retry_only_what_can_pass() {
        let e = responses_stream_error("P", Some("server_error"), "The server had an error.");
        assert_eq!(e.kind, ErrorKind::Server);
        assert!(e.is_retryable() && e.message.contains("The server had an error"), "{}", e.message);
        let e = responses_stream_error("P", Some("rate_limit_exceeded"), "Slow down");
        assert_eq!(e.kind, ErrorKind::RateLimited);
        let e = responses_stream_error("P", Some("invalid_prompt"), "Your prompt was flagged.");
        assert_eq!(e.kind, ErrorKind::BadRequest);
        assert!(!e.is_retryable() && e.message.contains("Your prompt was flagged"), "{}", e.message);
        let e = responses_stream_error("P", Some("context_length_exceeded"), "Your input exceeds the context length");
        assert_eq!(e.kind, ErrorKind::ContextLength);
        let e = responses_stream_error("P", Some("insufficient_quota"), "You exceeded your current quota.");
        assert_eq!(e.kind, ErrorKind::Auth);
        let e = responses_stream_error("P", None, "Something broke");
        assert_eq!(e.kind, ErrorKind::Server);
    }

    #[test]
    fn an_unknown_model_is_not_found_in_every_api_and_shape() {
        let openai = |code: &str| {
            format!(
                r#"{{"error":{{"message":"The model `gpt-nope` does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"{code}"}}}}"#
            )
        };
        // Chat Completions: 404; Responses: 400 with the same code.
        for status in [404, 400] {
            let e = http_error("P", status, None, &openai("model_not_found"));
            assert_eq!(e.kind, ErrorKind::NotFound, "{status}");
            assert!(e.message.contains("no such model") && e.message.contains("gpt-nope"), "{}", e.message);
            assert!(!e.is_retryable());
        }
        // Mid-stream: a Responses `error` / `response.failed`, and a Chat Completions error chunk.
        let e = responses_stream_error("P", Some("model_not_found"), "The model `gpt-nope` does not exist.");
        assert_eq!(e.kind, ErrorKind::NotFound);
        assert!(e.message.contains("no such model") && e.message.contains("gpt-nope"), "{}", e.message);
        assert_eq!(stream_error("P", &openai("model_not_found")).kind, ErrorKind::NotFound);
        // Anthropic's unknown model is the same kind.
        let anthropic = r#"{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}"#;
        assert_eq!(http_error("P", 404, None, anthropic).kind, ErrorKind::NotFound);
        // Another 400 stays a bad request.
        assert_eq!(http_error("P", 400, None, &openai("invalid_value")).kind, ErrorKind::BadRequest);
    }

    #[test]
    fn anthropic_error_bodies_are_classified_by_their_type() {
        let body = |t: &str, m: &str| format!(r#"{{"type":"error","error":{{"type":"{t}","message":"{m}"}}}}"#);
        let cases = [
            (401, body("authentication_error", "invalid x-api-key"), ErrorKind::Auth, "ANTHROPIC_API_KEY"),
            (403, body("permission_error", "no access"), ErrorKind::Auth, "Anthropic Console"),
            (404, body("not_found_error", "model: claude-nope"), ErrorKind::NotFound, "model: claude-nope"),
            (429, body("rate_limit_error", "slow down"), ErrorKind::RateLimited, "wait 3 s"),
            (529, body("overloaded_error", "Overloaded"), ErrorKind::Overloaded, "Try again"),
            (500, body("api_error", "boom"), ErrorKind::Server, "server error (500): boom"),
            (400, body("invalid_request_error", "tools.0: bad"), ErrorKind::BadRequest, "tools.0: bad"),
            (
                400,
                body("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
                ErrorKind::ContextLength,
                "too long for this model",
            ),
            (
                400,
                body("invalid_request_error", "Your credit balance is too low to access the Anthropic API."),
                ErrorKind::Auth,
                "out of credit",
            ),
            (413, body("request_too_large", "Request exceeds the maximum size"), ErrorKind::ContextLength, "too long"),
        ];
        for (status, body, kind, needle) in cases {
            let e = http_error("The provider", status, Some(Duration::from_secs(3)), &body);
            assert_eq!(e.kind, kind, "{status} {body}");
            assert!(e.message.contains(needle), "{status}: {:?} lacks {needle:?}", e.message);
            assert_eq!(e.status, Some(status));
        }
        // An unknown type falls back to the status.
        let e = http_error("P", 503, None, &body("brand_new_error", "x"));
        assert_eq!(e.kind, ErrorKind::Overloaded);
    }

    #[test]
    fn anthropic_stream_errors_are_classified_by_their_type() {
        let event = |t: &str| format!(r#"{{"type":"error","error":{{"type":"{t}","message":"m"}}}}"#);
        for (t, kind) in [
            ("overloaded_error", ErrorKind::Overloaded),
            ("rate_limit_error", ErrorKind::RateLimited),
            ("api_error", ErrorKind::Server),
            ("invalid_request_error", ErrorKind::BadRequest),
            ("authentication_error", ErrorKind::Auth),
        ] {
            let e = stream_error("X", &event(t));
            assert_eq!(e.kind, kind, "{t}");
            assert!(e.message.contains("mid-response") && e.message.contains(t), "{}", e.message);
        }
        // OpenAI's shape is untouched: its invalid_request_error mid-stream is still a server error.
        let e = stream_error("X", r#"{"error":{"message":"m","type":"invalid_request_error"}}"#);
        assert_eq!(e.kind, ErrorKind::Server);
    }

    #[test]
    fn google_error_bodies_are_classified_by_status_reason_and_quota() {
        let google = |code: u16, status: &str, message: &str, details: &str| {
            format!(r#"{{"error":{{"code":{code},"message":"{message}","status":"{status}","details":[{details}]}}}}"#)
        };
        let key_invalid = google(
            400,
            "INVALID_ARGUMENT",
            "API key not valid. Please pass a valid API key.",
            r#"{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}"#,
        );
        let per_minute = google(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details.",
            r#"{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}"#,
        );
        let per_day = google(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota, please check your plan and billing details.",
            r#"{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"40s"}"#,
        );
        let too_long = google(
            400,
            "INVALID_ARGUMENT",
            "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
            "",
        );
        let location = google(400, "FAILED_PRECONDITION", "User location is not supported for the API use.", "");
        let cases = [
            (400, key_invalid.clone(), ErrorKind::Auth, "GEMINI_API_KEY", false),
            (
                403,
                google(
                    403,
                    "PERMISSION_DENIED",
                    "Method doesn't allow unregistered callers (callers without established identity).",
                    "",
                ),
                ErrorKind::Auth,
                "was sent no API key",
                false,
            ),
            (429, per_minute.clone(), ErrorKind::RateLimited, "wait 12 s", true),
            (429, per_day, ErrorKind::Auth, "midnight Pacific", false),
            (400, too_long, ErrorKind::ContextLength, "too long for this model", false),
            (400, location, ErrorKind::Auth, "not offered in every region", false),
            (
                404,
                google(404, "NOT_FOUND", "models/gemini-9 is not found for API version v1beta", ""),
                ErrorKind::NotFound,
                "gemini-9",
                false,
            ),
            (
                503,
                google(503, "UNAVAILABLE", "The model is overloaded. Please try again later.", ""),
                ErrorKind::Overloaded,
                "overloaded",
                true,
            ),
            (
                400,
                google(400, "INVALID_ARGUMENT", "Invalid JSON payload received.", ""),
                ErrorKind::BadRequest,
                "Invalid JSON payload",
                false,
            ),
            (400, format!("[{key_invalid}]"), ErrorKind::Auth, "rejected the API key", false),
        ];
        for (status, body, kind, needle, retryable) in cases {
            let retry = retry_after(|_| None, &body);
            let e = http_error("The Gemini API", status, retry, &body);
            assert_eq!(e.kind, kind, "{body}");
            assert!(e.message.contains(needle), "{:?} lacks {needle:?}", e.message);
            assert_eq!(e.is_retryable(), retryable, "{body}");
        }
        assert_eq!(retry_after(|_| None, &per_minute), Some(Duration::from_secs(12)), "RetryInfo's delay is read");
        // An OpenAI body that happens to carry a numeric code is not Google's.
        let e = http_error("X", 429, None, r#"{"error":{"message":"You exceeded your current quota","code":429}}"#);
        assert!(e.message.contains("quota is used up"), "{}", e.message);
    }

    #[test]
    fn refusals_of_tools_are_marked_and_other_errors_are_not() {
        for (status, body) in [
            (
                400,
                r#"{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error"}}"#,
            ),
            (
                404,
                r#"{"error":{"message":"No endpoints found that support tool use. Try disabling \"get_time\".","code":404}}"#,
            ),
            (
                400,
                r#"{"error":{"message":"Unsupported parameter: 'tools' is not supported with this model.","type":"invalid_request_error"}}"#,
            ),
            (
                400,
                r#"{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"}"#,
            ),
            (
                400,
                r#"{"error":{"code":400,"message":"Function calling is not enabled for models/gemma-3-27b-it","status":"INVALID_ARGUMENT"}}"#,
            ),
        ] {
            let e = http_error("The provider at http://x", status, None, body);
            assert!(e.tools_unsupported, "{status} {body}");
        }
        let e = http_error("The provider at http://x", 400, None, r#"{"error":{"message":"bad tool schema"}}"#);
        assert!(!e.tools_unsupported);
        let e = http_error("The provider at http://x", 500, None, "does not support tools");
        assert!(!e.tools_unsupported, "a server error is not a refusal");
    }

    #[test]
    fn every_apis_too_long_error_is_a_context_length_error_with_its_numbers() {
        let cases = [
            (
                r#"{"error":{"message":"This model's maximum context length is 8000 tokens. However, your messages resulted in 9,123 tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}"#,
                Some(9123),
                Some(8000),
            ),
            (
                r#"{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":null,"code":"context_length_exceeded"}}"#,
                None,
                None,
            ),
            (
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 9123 tokens > 8000 maximum"}}"#,
                Some(9123),
                Some(8000),
            ),
            (
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 7900 + 4096 > 8000, decrease input length or `max_tokens` and try again"}}"#,
                Some(7900),
                Some(8000),
            ),
            (
                r#"{"error":{"code":400,"message":"The input token count (9123) exceeds the maximum number of tokens allowed (8000).","status":"INVALID_ARGUMENT"}}"#,
                Some(9123),
                Some(8000),
            ),
        ];
        for (body, prompt_tokens, window) in cases {
            let e = http_error("P", 400, None, body);
            assert_eq!(e.kind, ErrorKind::ContextLength, "{body}");
            let expected =
                (prompt_tokens.is_some() || window.is_some()).then_some(ContextOverflow { prompt_tokens, window });
            assert_eq!(e.overflow, expected, "{body}");
        }
        let streamed = stream_error(
            "P",
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 5 tokens > 4 maximum"}}"#,
        );
        assert_eq!(streamed.overflow, Some(ContextOverflow { prompt_tokens: Some(5), window: Some(4) }));
        assert_eq!(http_error("P", 400, None, r#"{"error":{"message":"bad tool_choice 5 > 4"}}"#).overflow, None);
    }
}
