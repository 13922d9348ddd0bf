//! Exports: one conversation as Markdown or JSON (the app's chat menu, `conversations export`),
//! everything as one JSON document, written into the data directory's `exports` folder.

use crate::{Error, Result, Service};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::PathBuf;
use switchboard_core::ErrorKind;
use switchboard_store::{Role, StoredMessage};

/// What an export is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    /// Readable Markdown: the answers, each tool call where it happened.
    Markdown,
    /// Everything stored, as JSON.
    Json,
}

impl ExportFormat {
    fn extension(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            ExportFormat::Json => "json",
        }
    }
}

/// A conversation as Markdown, each tool call as a collapsed block where it happened in the answer.
pub fn markdown(title: &str, messages: &[StoredMessage]) -> String {
    let mut out = format!("# {title}\n\n");
    for m in messages {
        out.push_str(&message_markdown(m));
    }
    out
}

/// One message as Markdown: who wrote it, its text, each tool call where it happened.
pub fn message_markdown(m: &StoredMessage) -> String {
    let mut out = String::new();
    match m.role {
        Role::User => {
            let _ = writeln!(out, "## You\n\n{}\n", m.content);
        }
        Role::Assistant => {
            let who = match (m.provider.as_deref(), m.model.as_deref()) {
                (Some(p), Some(model)) if p != model => format!("{p} · {model}"),
                (_, Some(model)) => model.to_owned(),
                _ => "unknown model".to_owned(),
            };
            let _ = writeln!(out, "## Assistant ({who})\n");
            let mut printed = 0usize;
            let mut calls: Vec<_> = m.tool_calls.iter().collect();
            calls.sort_by_key(|c| (c.iteration, c.index));
            for c in calls {
                let upto = c.text_offset.max(printed);
                out.extend(m.content.chars().skip(printed).take(upto - printed));
                printed = upto;
                let args = serde_json::from_str::<serde_json::Value>(&c.arguments)
                    .and_then(|v| serde_json::to_string_pretty(&v))
                    .unwrap_or_else(|_| c.arguments.clone());
                let _ = writeln!(
                    out,
                    "\n\n<details><summary>Tool call: <code>{}</code> ({})</summary>\n",
                    c.name, c.source
                );
                let fence = fence_for(&args);
                let _ = writeln!(out, "{fence}json\n{args}\n{fence}\n");
                if let Some(r) = &c.result {
                    let fence = fence_for(&r.output);
                    let _ = writeln!(
                        out,
                        "Result ({}, {} ms):\n\n{fence}\n{}\n{fence}\n",
                        r.status.as_str(),
                        r.duration_ms,
                        r.output
                    );
                }
                out.push_str("</details>\n\n");
            }
            let rest: String = m.content.chars().skip(printed).collect();
            let _ = writeln!(out, "{rest}\n");
            if let Some(e) = &m.error {
                let _ = writeln!(out, "> **Error ({})**: {}\n", e.kind, e.message);
            }
        }
    }
    out
}

/// A code fence longer than any run of backticks in `text`, so the text cannot close it.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat(longest.max(2) + 1)
}

/// A file name made of a conversation's title: letters, digits, `-` and `_`, at most 48 chars.
fn file_stem(title: &str) -> String {
    let mut stem = String::new();
    for c in title.chars() {
        if c.is_alphanumeric() {
            stem.extend(c.to_lowercase());
        } else if !stem.ends_with('-') && !stem.is_empty() {
            stem.push('-');
        }
        if stem.chars().count() >= 48 {
            break;
        }
    }
    let stem = stem.trim_end_matches('-');
    if stem.is_empty() { "conversation".to_owned() } else { stem.to_owned() }
}

impl Service {
    /// The `exports` folder of the data directory (created when missing).
    pub fn exports_dir(&self) -> Result<PathBuf> {
        let dir = self
            .inner
            .store
            .path()
            .and_then(|p| p.parent())
            .map(|p| p.join("exports"))
            .ok_or_else(|| Error::config("This database has no folder to export to."))?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::new(ErrorKind::Storage, format!("Cannot create {}: {e}", dir.display())))?;
        Ok(dir)
    }

    /// One conversation as `format`.
    pub fn export_conversation(&self, id: &str, format: ExportFormat) -> Result<String> {
        let view = self.open_all(id)?;
        Ok(match format {
            ExportFormat::Markdown => markdown(&view.conversation.title, &view.messages),
            ExportFormat::Json => {
                let doc = serde_json::json!({"conversation": view.conversation, "messages": view.messages});
                serde_json::to_string_pretty(&doc).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?
            }
        })
    }

    /// Writes [`Service::export_conversation`] into the exports folder; returns the file's path.
    pub fn export_conversation_to_file(&self, id: &str, format: ExportFormat) -> Result<String> {
        let text = self.export_conversation(id, format)?;
        let title = self.inner.store.conversation(id)?.title;
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let path = self.exports_dir()?.join(format!("{}-{stamp}.{}", file_stem(&title), format.extension()));
        write(&path, &text)
    }

    /// Every conversation with its messages, as one JSON document.
    pub fn export_all(&self) -> Result<serde_json::Value> {
        let mut conversations = Vec::new();
        for c in self.inner.store.conversations()? {
            let messages = self.inner.store.messages(&c.id)?;
            conversations.push(serde_json::json!({"conversation": c, "messages": messages}));
        }
        Ok(serde_json::json!({"format": "switchboard-export", "version": 1, "conversations": conversations}))
    }

    /// Writes [`Service::export_all`] into the exports folder; returns the file's path.
    pub fn export_all_to_file(&self) -> Result<String> {
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let path = self.exports_dir()?.join(format!("switchboard-export-{stamp}.json"));
        let text = serde_json::to_string_pretty(&self.export_all()?)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        write(&path, &text)
    }
}

fn write(path: &std::path::Path, text: &str) -> Result<String> {
    std::fs::write(path, text)
        .map_err(|e| Error::new(ErrorKind::Storage, format!("Cannot write {}: {e}", path.display())))?;
    Ok(path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::{fence_for, file_stem};

    #[test]
    fn a_fence_is_longer_than_any_run_of_backticks_it_wraps() {
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(fence_for("a ``` b"), "````");
        assert_eq!(fence_for("`````x``"), "``````");
    }

    #[test]
    fn file_names_come_from_titles_and_never_escape_the_folder() {
        assert_eq!(file_stem("What time is it in Tokyo?"), "what-time-is-it-in-tokyo");
        assert_eq!(file_stem("../../etc/passwd"), "etc-passwd");
        assert_eq!(file_stem("東京の時間"), "東京の時間");
        assert_eq!(file_stem("   "), "conversation");
        assert!(file_stem(&"word ".repeat(40)).chars().count() <= 48);
    }
}
