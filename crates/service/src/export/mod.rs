//! Exports and imports of conversations. Export: one conversation as Markdown (its current path)
//! or any number of them as the app's JSON document ([`document`]), written where the person
//! chose. Import ([`import`]): the app's own document or ChatGPT's `conversations.json`
//! ([`chatgpt`]).
//!
//! Invariant: the JSON document carries every stored row of a conversation, so an export
//! imported into an empty store exports again byte for byte the same.

pub mod chatgpt;
pub mod document;
pub mod import;

use crate::{Error, Result, Service};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
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

/// A code fence for `text`: backticks, one more than its longest run of them (at least three), so
/// a fence inside the text cannot close the block early.
pub fn fence(text: &str) -> String {
    let (mut longest, mut run) = (0usize, 0usize);
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat(longest.max(2) + 1)
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
            if !m.attachments.is_empty() {
                out.push_str(&attachments_markdown(&m.attachments));
            }
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
                let f = fence(&args);
                let _ = writeln!(out, "{f}json\n{args}\n{f}\n");
                if let Some(r) = &c.result {
                    let f = fence(&r.output);
                    let _ = writeln!(
                        out,
                        "Result ({}, {} ms):\n\n{f}\n{}\n{f}\n",
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

/// The files attached to a question, by name (the bytes are in the JSON export, not here).
fn attachments_markdown(attachments: &[switchboard_core::Attachment]) -> String {
    use switchboard_core::AttachmentKind;
    let mut out = String::from("Attached:\n\n");
    for a in attachments {
        let what = match (a.kind, a.pages, a.width, a.height) {
            (AttachmentKind::Pdf, Some(pages), ..) => {
                format!("PDF, {} page{}", pages, if pages == 1 { "" } else { "s" })
            }
            (AttachmentKind::Image, _, Some(w), Some(h)) => format!("{}, {w}×{h}", a.mime_type),
            _ => a.mime_type.clone(),
        };
        // The name in a code span: a file name is never read as Markdown.
        let f = if a.name.contains('`') { "`` " } else { "`" };
        let close = if a.name.contains('`') { " ``" } else { "`" };
        let cut = a.text_note.as_deref().map(|note| format!("; {}", note.replace('\n', " "))).unwrap_or_default();
        let _ = writeln!(out, "- {f}{}{close} ({what}, {}{cut})", a.name.replace('\n', " "), size_label(a.size));
    }
    out.push('\n');
    out
}

/// A size for people: bytes, KB or MB (1024-based, one decimal).
fn size_label(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
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
    /// The `exports` folder of the data directory (created when missing): where the save dialog
    /// starts.
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

    /// One conversation as `format`: Markdown of its current path, or the JSON document holding it.
    pub fn export_conversation(&self, id: &str, format: ExportFormat) -> Result<String> {
        Ok(match format {
            ExportFormat::Markdown => {
                let view = self.open_all(id)?;
                markdown(&view.conversation.title, &view.messages)
            }
            ExportFormat::Json => self.export_document(Some(&[id.to_owned()]))?,
        })
    }

    /// A file name to suggest for exporting conversation `id` as `format`.
    pub fn export_file_name(&self, id: &str, format: ExportFormat) -> Result<String> {
        let title = self.inner.store.conversation(id)?.title;
        Ok(format!("{}.{}", file_stem(&title), format.extension()))
    }

    /// Writes [`Service::export_conversation`] to `path` (one the person chose); returns the path.
    pub fn export_conversation_to(&self, id: &str, format: ExportFormat, path: &Path) -> Result<String> {
        write(path, &self.export_conversation(id, format)?)
    }

    /// Writes every conversation as the JSON document to `path` (one the person chose).
    pub fn export_all_to(&self, path: &Path) -> Result<String> {
        write(path, &self.export_document(None)?)
    }
}

/// Writes `text` to `path` (a file the person named) as exports are written; returns the path.
pub fn write_file(path: &Path, text: &str) -> Result<String> {
    write(path, text)
}

/// Writes `text` to `path`: through a temporary file beside it, so a failed write leaves no half
/// file and never a damaged earlier one. A folder that cannot be written says so.
fn write(path: &Path, text: &str) -> Result<String> {
    let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let cannot = |e: std::io::Error| {
        Error::new(
            ErrorKind::Storage,
            format!("Could not save to {}: {e}. Choose a folder you can write to.", folder.display()),
        )
    };
    let mut tmp_name = path.file_name().map(std::ffi::OsStr::to_os_string).unwrap_or_default();
    tmp_name.push(".part");
    let tmp = folder.join(tmp_name);
    std::fs::write(&tmp, text).map_err(cannot)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        cannot(e)
    })?;
    Ok(path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::{fence, file_stem};

    #[test]
    fn attached_files_are_listed_by_name_with_what_they_are() {
        use switchboard_core::{Attachment, AttachmentKind};
        let file = |name: &str, kind, size, pages, dims: Option<(u32, u32)>| Attachment {
            id: "0".repeat(64),
            name: name.into(),
            mime_type: if kind == AttachmentKind::Pdf { "application/pdf" } else { "image/png" }.into(),
            kind,
            size,
            width: dims.map(|d| d.0),
            height: dims.map(|d| d.1),
            pages,
            text_note: None,
        };
        let mut cut = file("long.pdf", AttachmentKind::Pdf, 2048, Some(40), None);
        cut.text_note = Some("text of page 1 of 40 only: extraction stopped after 20 s".into());
        let md = super::attachments_markdown(&[
            file("report.pdf", AttachmentKind::Pdf, 2_500_000, Some(12), None),
            file("a`b.png", AttachmentKind::Image, 2048, None, Some((640, 480))),
            cut,
        ]);
        assert_eq!(
            md,
            "Attached:\n\n- `report.pdf` (PDF, 12 pages, 2.4 MB)\n- `` a`b.png `` (image/png, 640×480, 2.0 KB)\n- `long.pdf` (PDF, 40 pages, 2.0 KB; text of page 1 of 40 only: extraction stopped after 20 s)\n\n"
        );
    }

    #[test]
    fn a_fence_is_longer_than_any_run_of_backticks_inside() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("```rust\nfn x() {}\n```"), "````");
        assert_eq!(fence("a ````` b ` c"), "``````");
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
