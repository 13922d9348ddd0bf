//! Redaction of known secret values from text that came from outside.
//!
//! A server may quote a key back: an error body that echoes the `Authorization` header, a tool
//! result that repeats its request. That text becomes events, rows in SQLite, exports, log lines
//! and stderr, so it is redacted once where it enters: the turn's event fan-out (before the
//! recorder), the error a turn or a model listing ends with, and the shells' log writers
//! ([`redact_log`]). Every value is replaced by as many `•` as it has characters, so offsets
//! counted in characters (a tool card's place in the text) stay right.

use std::borrow::Cow;
use std::sync::{Arc, RwLock};
use switchboard_core::ChatEvent;
use switchboard_secrets::SecretValue;

/// Shorter values are not redacted: masking every "abc" in a conversation would mangle it, and
/// no real API key is this short.
pub const MIN_SECRET_CHARS: usize = 8;

/// What a secret's characters become.
const MASK: char = '•';

/// Replaces known secret values in text. Cheap to clone.
#[derive(Clone, Default)]
pub struct Redactor {
    /// Longest first, so a key that contains another is masked whole.
    secrets: Arc<Vec<String>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor").field("secrets", &self.secrets.len()).finish()
    }
}

impl switchboard_core::Redact for Redactor {
    fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        Redactor::redact(self, text)
    }
}

impl Redactor {
    /// A redactor for `values` (too short ones and repeats left out).
    pub fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut secrets: Vec<String> =
            values.into_iter().filter(|v| v.chars().count() >= MIN_SECRET_CHARS).map(str::to_owned).collect();
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        Redactor { secrets: Arc::new(secrets) }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// Whether `text` contains a known value.
    pub fn finds(&self, text: &str) -> bool {
        self.secrets.iter().any(|s| text.contains(s.as_str()))
    }

    /// `text` with every known value masked.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if !self.finds(text) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_owned();
        for s in self.secrets.iter() {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), &MASK.to_string().repeat(s.chars().count()));
            }
        }
        Cow::Owned(out)
    }

    /// The event with every known value masked in every string it carries.
    pub fn redact_event(&self, event: ChatEvent) -> ChatEvent {
        if self.is_empty() {
            return event;
        }
        match event {
            // The hot path: one per streamed token.
            ChatEvent::TextDelta { text } => ChatEvent::TextDelta { text: self.redact_owned(text) },
            ChatEvent::ReasoningDelta { text } => ChatEvent::ReasoningDelta { text: self.redact_owned(text) },
            // A sub-agent's events, one per token of each child: the same fast path, nested.
            ChatEvent::ToolProgress { id, instance, text, event: Some(inner) } => ChatEvent::ToolProgress {
                id,
                instance: instance.map(|i| self.redact_owned(i)),
                text: text.map(|t| self.redact_owned(t)),
                event: Some(Box::new(self.redact_event(*inner))),
            },
            // Everything else is rare, and walked as JSON, so a variant added later is covered
            // without anyone remembering to list it here.
            other => self.redact_generic(other),
        }
    }

    fn redact_owned(&self, text: String) -> String {
        match self.redact(&text) {
            Cow::Borrowed(_) => text,
            Cow::Owned(o) => o,
        }
    }

    fn redact_generic(&self, event: ChatEvent) -> ChatEvent {
        let Ok(mut value) = serde_json::to_value(&event) else { return event };
        if !self.redact_value(&mut value) {
            return event;
        }
        serde_json::from_value(value).unwrap_or_else(|_| {
            // Never the case for strings changed in place; if it were, the event is withheld
            // rather than sent with a key in it.
            ChatEvent::Error {
                kind: switchboard_core::ErrorKind::Internal,
                message: "An event was withheld because it contained a key.".into(),
                retryable: false,
                detail: None,
            }
        })
    }

    /// Masks in place; whether anything changed.
    fn redact_value(&self, value: &mut serde_json::Value) -> bool {
        match value {
            serde_json::Value::String(s) => match self.redact(s) {
                Cow::Borrowed(_) => false,
                Cow::Owned(o) => {
                    *s = o;
                    true
                }
            },
            serde_json::Value::Array(items) => items.iter_mut().fold(false, |acc, v| self.redact_value(v) | acc),
            serde_json::Value::Object(map) => map.values_mut().fold(false, |acc, v| self.redact_value(v) | acc),
            _ => false,
        }
    }
}

/// Every secret value this process has read or written through the service, for the shells'
/// log writers, which exist before any service and outlive none.
static SEEN: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Adds a value to those the logs redact.
pub(crate) fn remember(value: &SecretValue) {
    let v = value.expose();
    if v.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    let known = SEEN.read().unwrap_or_else(|p| p.into_inner()).iter().any(|s| s == v);
    if !known {
        SEEN.write().unwrap_or_else(|p| p.into_inner()).push(v.to_owned());
    }
}

/// A log line with every secret value the service has handled masked: what the shells' tracing
/// writers pass each line through.
pub fn redact_log(line: &str) -> Cow<'_, str> {
    let seen = SEEN.read().unwrap_or_else(|p| p.into_inner());
    if !seen.iter().any(|s| line.contains(s.as_str())) {
        return Cow::Borrowed(line);
    }
    Cow::Owned(Redactor::new(seen.iter().map(String::as_str)).redact(line).into_owned())
}

/// A writer that masks every secret value the service has handled before passing the bytes on:
/// the shells' tracing subscribers write through it (`.with_writer(|| RedactingWriter(stderr()))`),
/// so a log line that quotes a server's error carries no key. A formatted event arrives in one
/// write, so a value is never split between two.
#[derive(Debug)]
pub struct RedactingWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => self.0.write_all(redact_log(text).as_bytes())?,
            // Not text (never the case for log lines): masked as lossy text rather than passed raw.
            Err(_) => self.0.write_all(redact_log(&String::from_utf8_lossy(buf)).as_bytes())?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-test-redact-0123456789";

    #[test]
    fn every_occurrence_is_masked_keeping_the_character_count() {
        let r = Redactor::new([KEY, "short"]);
        let text = format!("Invalid key: Bearer {KEY}. Again: {KEY}, and short stays.");
        let out = r.redact(&text);
        assert!(!out.contains(KEY), "{out}");
        assert!(out.contains("short stays"), "values under the minimum are left alone");
        assert_eq!(out.chars().count(), text.chars().count());
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn a_key_containing_another_is_masked_whole() {
        let r = Redactor::new(["abcdefgh", "abcdefgh-longer-key"]);
        assert_eq!(r.redact("x abcdefgh-longer-key y"), format!("x {} y", "•".repeat(19)));
    }

    #[test]
    fn events_of_every_kind_are_redacted() {
        let r = Redactor::new([KEY]);
        let events = [
            ChatEvent::TextDelta { text: format!("a {KEY}") },
            ChatEvent::Error {
                kind: switchboard_core::ErrorKind::Auth,
                message: format!("401: {{\"error\": \"Bearer {KEY}\"}}"),
                retryable: false,
                detail: None,
            },
            ChatEvent::ToolResult {
                id: "c1".into(),
                status: switchboard_core::ToolStatus::Error,
                output: format!("HTTP 401 for key {KEY}"),
                duration_ms: 3,
                images: None,
            },
            // A grandchild agent's text, nested twice.
            ChatEvent::ToolProgress {
                id: "c1".into(),
                instance: Some("Scout[1]".into()),
                text: None,
                event: Some(Box::new(ChatEvent::ToolProgress {
                    id: "d1".into(),
                    instance: Some("Deep[1]".into()),
                    text: None,
                    event: Some(Box::new(ChatEvent::TextDelta { text: format!("the key is {KEY}") })),
                })),
            },
        ];
        for e in events {
            let kind = std::mem::discriminant(&e);
            let out = r.redact_event(e);
            assert_eq!(std::mem::discriminant(&out), kind);
            assert!(!serde_json::to_string(&out).unwrap().contains(KEY), "{out:?}");
        }
    }

    #[test]
    fn log_lines_mask_values_the_service_handled() {
        let key = "sk-test-logline-9876543210";
        assert_eq!(redact_log(&format!("sent {key}")), format!("sent {key}"), "not known yet");
        remember(&SecretValue::new(key));
        assert!(!redact_log(&format!("sent {key}")).contains(key));
        let mut out = Vec::new();
        std::io::Write::write_all(&mut RedactingWriter(&mut out), format!("WARN turn failed: {key}\n").as_bytes())
            .unwrap();
        let line = String::from_utf8(out).unwrap();
        assert!(line.starts_with("WARN turn failed: ") && !line.contains(key), "{line}");
    }
}
