//! A short title for a new chat, written by the chat's own model with one tiny request (or, when
//! the person opts out, the first line of the first message, which the store already uses).

use crate::settings::TitleMode;
use crate::{Error, Result, Service};
use futures::StreamExt;
use std::time::Duration;
use switchboard_core::{
    ErrorKind, GenerationOptions, Message, ProviderEvent, ProviderRequest, ReasoningEffort, ToolChoice,
};
use switchboard_store::Role;

/// The request may take this long.
const TIMEOUT: Duration = Duration::from_secs(20);

/// What the model is shown of the conversation, per message.
const EXCERPT_CHARS: usize = 1500;

/// The longest title kept.
const MAX_TITLE_CHARS: usize = 60;

const INSTRUCTIONS: &str = "You name chat conversations. Reply with a title of 2 to 6 words for the conversation below, \
     in its language: no quotes, no ending punctuation, nothing else.";

fn excerpt(text: &str) -> String {
    let mut out: String = text.chars().take(EXCERPT_CHARS).collect();
    if text.chars().count() > EXCERPT_CHARS {
        out.push('…');
    }
    out
}

/// The model's answer as a title: its first non-blank line without Markdown, quotes, a "Title:"
/// label or ending punctuation, at most [`MAX_TITLE_CHARS`]; `None` when nothing is left.
pub fn clean(answer: &str) -> Option<String> {
    let line = answer.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line.trim_start_matches('#').trim();
    let line = line.strip_prefix("Title:").or_else(|| line.strip_prefix("title:")).unwrap_or(line).trim();
    let line = line.trim_matches(['"', '\'', '*', '`', '“', '”', '«', '»', '「', '」']);
    let line = line.trim_end_matches(['.', '!', '?', ':', ';', ',', '。']).trim();
    if line.is_empty() {
        return None;
    }
    let mut title: String = line.chars().filter(|c| !c.is_control()).take(MAX_TITLE_CHARS).collect();
    if line.chars().count() > MAX_TITLE_CHARS {
        title.push('…');
    }
    Some(title)
}

impl Service {
    /// Gives a conversation a short title written by its own model (the profile and model of its
    /// last question), unless the settings say to keep the first line or the person renamed it.
    /// Returns the title it has afterwards. A model that cannot be reached leaves the title as it
    /// was and says why.
    pub async fn generate_title(&self, conversation_id: &str) -> Result<String> {
        let summary = self.inner.store.conversation(conversation_id)?;
        if self.settings()?.chats.titles == TitleMode::FirstLine {
            return Ok(summary.title);
        }
        let messages = self.inner.store.messages(conversation_id)?;
        let Some(question) = messages.iter().find(|m| m.role == Role::User) else { return Ok(summary.title) };
        // A title the person chose is theirs.
        if summary.title != switchboard_store::title_from(&question.content) {
            return Ok(summary.title);
        }
        let answer = messages.iter().find(|m| m.role == Role::Assistant && !m.content.trim().is_empty());
        let mut text = format!("Person: {}", excerpt(&question.content));
        if let Some(a) = answer {
            text.push_str(&format!("\n\nAssistant: {}", excerpt(&a.content)));
        }

        let choices = self.last_choices(conversation_id)?;
        let keys = self.turn_keys();
        let resolved = self.provider_factory().resolve_with(&choices, &keys)?;
        let caps = self.model_capabilities(&resolved.profile, &resolved.model);
        let reasons = caps.reasoning == Some(true);
        let request = ProviderRequest {
            model: resolved.model.clone(),
            system: Some(INSTRUCTIONS.into()),
            messages: vec![Message::user(text)],
            tools: Vec::new(),
            tool_choice: ToolChoice::None,
            options: GenerationOptions {
                // A reasoning model spends output tokens thinking first.
                max_output_tokens: Some(if reasons { 600 } else { 40 }),
                reasoning_effort: reasons.then_some(ReasoningEffort::Low),
                ..Default::default()
            },
        };
        let run = async {
            let mut stream = resolved.provider.stream(request);
            let mut out = String::new();
            while let Some(item) = stream.next().await {
                match item? {
                    ProviderEvent::TextDelta(t) => out.push_str(&t),
                    ProviderEvent::Finish { .. } => break,
                    _ => {}
                }
            }
            Ok::<String, switchboard_core::ProviderError>(out)
        };
        let answer = tokio::time::timeout(TIMEOUT, run)
            .await
            .map_err(|_| Error::new(ErrorKind::Timeout, "The title took too long; the chat keeps its first line."))?
            .map_err(|e| {
                let mut e = Error::from(e);
                e.message = keys.redactor().redact(&e.message).into_owned();
                e
            })?;
        let redacted = keys.redactor().redact(&answer).into_owned();
        let Some(title) = clean(&redacted) else { return Ok(summary.title) };
        self.inner.store.rename(conversation_id, &title)?;
        Ok(title)
    }
}

#[cfg(test)]
mod tests {
    use super::clean;

    #[test]
    fn a_models_answer_becomes_a_short_clean_title() {
        assert_eq!(clean("\"Tokyo Time Check\"").as_deref(), Some("Tokyo Time Check"));
        assert_eq!(
            clean("Title: **Rust lifetimes explained.**\nMore text").as_deref(),
            Some("Rust lifetimes explained")
        );
        assert_eq!(clean("# 東京の時間。").as_deref(), Some("東京の時間"));
        assert_eq!(clean("  \n \n"), None);
        assert_eq!(clean("\"\""), None);
        let long = clean(&"word ".repeat(30)).unwrap();
        assert!(long.chars().count() <= 61 && long.ends_with('…'), "{long}");
        assert_eq!(clean("a\u{1b}[31mred").as_deref(), Some("a[31mred"), "control characters are dropped");
    }
}
