//! A server's context beyond tools, for the composer and the CLI: its prompts (got with
//! arguments and turned into the message's text), its resources and resource templates (with
//! completion, subscriptions and the updates they announce) and its log level.
//!
//! Invariants: everything a server sends is redacted (known secrets masked) before a shell sees
//! it; a server's refusal names the server and the prompt or resource; a subscribed resource the
//! server updates is only marked (`updates`): what a sent message carried is never rewritten,
//! and reading the resource again (attaching it again) is how a chat gets the new content.

use crate::{Error, Result, Service};
use serde::Serialize;
use std::collections::BTreeMap;
use switchboard_core::Attachment;
use switchboard_core::ErrorKind;
use switchboard_mcp::ContextError;
pub use switchboard_mcp::context::{
    Completion, CompletionRef, LogLevel, PromptArgument, PromptInfo, PromptRole, ResourceTemplateInfo,
};
use switchboard_mcp::context::{PromptContent, ResourceBody, ResourceContents};
pub use switchboard_mcp::{Offers, ResourceUpdate};

/// A server's prompts.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpPrompts {
    /// The server.
    pub server: String,
    /// Its prompts, in its order.
    pub prompts: Vec<PromptInfo>,
    /// What was left out of its listing, one reason each.
    pub skipped: Vec<String>,
}

/// One message of a prompt, as text.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptMessageText {
    /// Who says it.
    pub role: PromptRole,
    /// What it says (non-text content described in words).
    pub text: String,
}

/// A prompt got with its arguments: what the composer puts in the message.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptMessages {
    /// The server.
    pub server: String,
    /// The prompt.
    pub prompt: String,
    /// The server's description of this prompt, if it gave one.
    pub description: Option<String>,
    /// Every message's text joined, in order, for the message box (an assistant's message
    /// is marked as such).
    pub text: String,
    /// The messages one by one.
    pub messages: Vec<PromptMessageText>,
    /// Images and embedded resources, stored as attachments, in order.
    pub attachments: Vec<switchboard_core::Attachment>,
    /// What could not be carried, in words (audio, an unreadable embedded resource).
    pub notes: Vec<String>,
}

/// A resource a server lists, and whether it changed since it was read.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpResource {
    /// What the server lists.
    #[serde(flatten)]
    #[cfg_attr(feature = "ts", ts(flatten))]
    pub resource: switchboard_mcp::context::ResourceInfo,
    /// Whether Switchboard follows its updates.
    pub subscribed: bool,
    /// Updates the server announced since it was last read (more than 0: "updated").
    pub updates: u32,
}

/// A server's resources and resource templates.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpResources {
    /// The server.
    pub server: String,
    /// Its resources, in its order.
    pub resources: Vec<McpResource>,
    /// Its templates, in its order.
    pub templates: Vec<ResourceTemplateInfo>,
    /// What was left out of its listings, one reason each.
    pub skipped: Vec<String>,
}

/// A subscribed resource that changed since it was last read.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceUpdate {
    /// The server.
    pub server: String,
    /// The resource.
    pub uri: String,
    /// Updates announced since it was last read.
    pub updates: u32,
}

/// A resource read, as text (what the CLI and the text fallback send).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceText {
    /// The server.
    pub server: String,
    /// The resource.
    pub uri: String,
    /// Its media type, when the server said.
    pub mime_type: Option<String>,
    /// Its text (every content, in order).
    pub text: String,
}

/// A context error in the service's terms.
fn context_error(e: ContextError) -> Error {
    let kind = match &e {
        ContextError::NotRunning(_) => ErrorKind::Network,
        ContextError::TimedOut(_) => ErrorKind::Timeout,
        ContextError::Unsupported(_) | ContextError::Refused(_) | ContextError::Invalid(_) => ErrorKind::BadRequest,
    };
    let message = e.to_string();
    let mut chars = message.chars();
    let first = chars.next().map(|c| c.to_uppercase().collect::<String>()).unwrap_or_default();
    Error::new(kind, format!("{first}{}.", chars.as_str().trim_end_matches('.')))
}

/// The text of a resource content: text, a UTF-8 blob whatever its type, or why it has none.
fn content_text(c: &ResourceContents) -> std::result::Result<&str, String> {
    c.text().ok_or_else(|| {
        format!(
            "{} is binary ({}, {} bytes) and cannot be sent as text",
            c.uri,
            c.mime_type.as_deref().unwrap_or("no media type"),
            c.len()
        )
    })
}

/// How a content is framed in a message's text: its URI and media type, then the text.
fn framed(c: &ResourceContents, text: &str) -> String {
    match &c.mime_type {
        Some(mime) => format!("[resource {} ({mime})]\n{text}", c.uri),
        None => format!("[resource {}]\n{text}", c.uri),
    }
}

impl Service {
    fn context_server(&self, server: &str) -> Result<std::sync::Arc<switchboard_mcp::McpServer>> {
        self.mcp_server(server)
    }

    fn masked(&self, text: &str) -> String {
        self.redactor().redact(text).into_owned()
    }

    /// A server's prompts (listed when first asked, again after it says they changed).
    pub async fn mcp_prompts(&self, server: &str) -> Result<McpPrompts> {
        let listed = self.context_server(server)?.prompts().await.map_err(context_error)?;
        Ok(McpPrompts { server: server.to_owned(), prompts: listed.items, skipped: listed.skipped })
    }

    /// The prompt `name` of `server` with `args`, as the message to send: its messages' text
    /// joined, each message's text, and what could not be carried. A server that refuses the
    /// arguments gives a `BadRequest` naming the server and the prompt.
    pub async fn mcp_get_prompt(
        &self,
        server: &str,
        name: &str,
        args: &BTreeMap<String, String>,
    ) -> Result<PromptMessages> {
        let got = self.context_server(server)?.get_prompt(name, args).await.map_err(context_error)?;
        let mut messages = Vec::with_capacity(got.messages.len());
        let mut attachments = Vec::new();
        let mut notes = Vec::new();
        for m in got.messages {
            // Images and embedded resources become attachments; what cannot be one is said in
            // the text and in a note.
            let stored = match &m.content {
                PromptContent::Image { mime_type, bytes } => {
                    let file = format!("{name}-image-{}.{}", attachments.len() + 1, extension(mime_type));
                    Some((file, bytes.clone()))
                }
                PromptContent::Resource(c) => Some((c.uri.clone(), self.content_bytes(c))),
                _ => None,
            };
            let text = match (stored, m.content) {
                (Some((file, bytes)), _) => match self.store_attachment(&file, bytes).await {
                    Ok(a) => {
                        let shown = format!("[attached: {}]", a.name);
                        attachments.push(a);
                        shown
                    }
                    Err(e) => {
                        notes.push(e.message.clone());
                        format!("[{} was left out: {}]", file, e.message)
                    }
                },
                (None, PromptContent::Text(text)) => text,
                (None, PromptContent::Link { uri, name, .. }) => format!("[link: {name} {uri}]"),
                (None, PromptContent::Other(text)) => {
                    notes.push(text.clone());
                    text
                }
                (None, _) => String::new(),
            };
            messages.push(PromptMessageText { role: m.role, text: self.masked(&text) });
        }
        let text = messages
            .iter()
            .map(|m| match m.role {
                PromptRole::User => m.text.clone(),
                PromptRole::Assistant => format!("(assistant) {}", m.text),
            })
            .collect::<Vec<_>>()
            .join("\n\n");
        Ok(PromptMessages {
            server: server.to_owned(),
            prompt: name.to_owned(),
            description: got.description.map(|d| self.masked(&d)),
            text,
            messages,
            attachments,
            notes,
        })
    }

    /// A server's resources (with whether each changed since it was read) and templates.
    pub async fn mcp_resources(&self, server: &str) -> Result<McpResources> {
        let mcp = self.context_server(server)?;
        let resources = mcp.resources().await.map_err(context_error)?;
        let templates = mcp.resource_templates().await.map_err(context_error)?;
        let subscribed = mcp.subscriptions();
        let updates = mcp.resource_updates();
        let mut skipped = resources.skipped;
        let resources = resources
            .items
            .into_iter()
            .map(|r| McpResource {
                subscribed: subscribed.contains(&r.uri),
                updates: updates.iter().find(|u| u.uri == r.uri).map_or(0, |u| u.updates),
                resource: r,
            })
            .collect();
        skipped.extend(templates.skipped);
        Ok(McpResources { server: server.to_owned(), resources, templates: templates.items, skipped })
    }

    /// A server's resource templates.
    pub async fn mcp_resource_templates(&self, server: &str) -> Result<Vec<ResourceTemplateInfo>> {
        Ok(self.context_server(server)?.resource_templates().await.map_err(context_error)?.items)
    }

    /// The URI a template gives with `values` (RFC 6570 level 1); one whose scheme is not the
    /// template's is refused.
    pub fn mcp_expand_template(&self, uri_template: &str, values: &BTreeMap<String, String>) -> Result<String> {
        switchboard_mcp::server::expand(uri_template, values).map_err(context_error)
    }

    /// The server's suggestions for an argument of a prompt or a variable of a template.
    pub async fn mcp_complete(
        &self,
        server: &str,
        reference: &CompletionRef,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<Completion> {
        let mut completion =
            self.context_server(server)?.complete(reference, argument, value, context).await.map_err(context_error)?;
        for v in &mut completion.values {
            *v = self.masked(v);
        }
        Ok(completion)
    }

    /// Reads a resource as text (every content, framed with its URI and media type); a binary
    /// content that is not UTF-8 is refused with what it is.
    pub async fn mcp_read_resource_text(&self, server: &str, uri: &str) -> Result<McpResourceText> {
        let read = self.context_server(server)?.read_resource(uri).await.map_err(context_error)?;
        let mut parts = Vec::with_capacity(read.len());
        for c in &read {
            let text = content_text(c).map_err(|why| Error::new(ErrorKind::BadRequest, capitalised(&why)))?;
            parts.push(framed(c, text));
        }
        let mime_type = read.first().and_then(|c| c.mime_type.clone());
        Ok(McpResourceText {
            server: server.to_owned(),
            uri: uri.to_owned(),
            mime_type,
            text: self.masked(&parts.join("\n\n")),
        })
    }

    /// Reads a resource and stores it as an attachment, named by its URI (text as text, an image
    /// or PDF as such; a binary of another type is refused with what it is). The resource is
    /// subscribed when the server offers it: its updates show in [`Service::mcp_resource_updates`]
    /// until it is attached again, and what a sent message carried is never rewritten.
    pub async fn mcp_attach_resource(&self, server: &str, uri: &str) -> Result<Attachment> {
        let mcp = self.context_server(server)?;
        let read = mcp.read_resource(uri).await.map_err(context_error)?;
        let bytes = match read.as_slice() {
            [one] => self.content_bytes(one),
            [] => return Err(Error::new(ErrorKind::BadRequest, format!("The resource {uri} is empty."))),
            several => {
                let mut parts = Vec::with_capacity(several.len());
                for c in several {
                    let text = content_text(c).map_err(|why| {
                        Error::new(
                            ErrorKind::BadRequest,
                            capitalised(&format!("{uri} has {} parts and {why}", several.len())),
                        )
                    })?;
                    parts.push(framed(c, text));
                }
                self.masked(&parts.join("\n\n")).into_bytes()
            }
        };
        let attachment = self.store_attachment(uri, bytes).await?;
        if mcp.offers().subscribe
            && let Err(e) = mcp.subscribe(uri).await
        {
            tracing::warn!(server, "{uri} is attached but its updates are not followed: {e}");
        }
        Ok(attachment)
    }

    /// A content's bytes for storing: text redacted, bytes as they are.
    fn content_bytes(&self, c: &ResourceContents) -> Vec<u8> {
        match &c.body {
            ResourceBody::Text(text) => self.masked(text).into_bytes(),
            ResourceBody::Blob(bytes) => bytes.clone(),
        }
    }

    /// Inspects and stores `bytes` as an attachment named `name` (a URI is kept whole).
    async fn store_attachment(&self, name: &str, bytes: Vec<u8>) -> Result<Attachment> {
        let name: String = name.chars().filter(|c| !c.is_control()).take(255).collect();
        let store = self.inner.store.clone();
        tokio::task::spawn_blocking(move || crate::attachments::ingest(&store, &name, bytes))
            .await
            .map_err(|e| Error::new(ErrorKind::Internal, format!("The attachment could not be stored: {e}")))?
    }

    /// Follows a resource's updates (when the server offers subscriptions).
    pub async fn mcp_subscribe(&self, server: &str, uri: &str) -> Result<()> {
        self.context_server(server)?.subscribe(uri).await.map_err(context_error)
    }

    /// Stops following a resource's updates.
    pub async fn mcp_unsubscribe(&self, server: &str, uri: &str) -> Result<()> {
        self.context_server(server)?.unsubscribe(uri).await.map_err(context_error)
    }

    /// Every subscribed resource that changed since it was last read, on every server.
    pub fn mcp_resource_updates(&self) -> Vec<McpResourceUpdate> {
        let servers: Vec<_> = self.inner.mcp.lock().iter().map(|(n, s)| (n.clone(), s.clone())).collect();
        servers
            .into_iter()
            .flat_map(|(server, s)| {
                s.resource_updates().into_iter().map(move |u| McpResourceUpdate {
                    server: server.clone(),
                    uri: u.uri,
                    updates: u.updates,
                })
            })
            .collect()
    }

    /// Asks a server for log notifications at `level` and above; they appear in its log.
    pub async fn mcp_set_log_level(&self, server: &str, level: LogLevel) -> Result<super::McpServerInfo> {
        self.context_server(server)?.set_log_level(level).await.map_err(context_error)?;
        self.mcp_info(server)
    }

    /// The server that has `uri`: the one listing it, else the one with a template of its
    /// scheme, else the only server offering resources. For `chat --resource URI`.
    pub async fn mcp_resource_server(&self, uri: &str) -> Result<String> {
        let servers: Vec<_> = self.inner.mcp.lock().iter().map(|(n, s)| (n.clone(), s.clone())).collect();
        let offering: Vec<_> = servers.into_iter().filter(|(_, s)| s.offers().resources).collect();
        for (name, s) in &offering {
            if s.resources().await.is_ok_and(|l| l.items.iter().any(|r| r.uri == uri)) {
                return Ok(name.clone());
            }
        }
        let scheme = switchboard_mcp::template::scheme(uri).unwrap_or("");
        for (name, s) in &offering {
            let templates = s.resource_templates().await.map(|l| l.items).unwrap_or_default();
            if templates.iter().any(|t| switchboard_mcp::template::scheme(&t.uri_template) == Some(scheme)) {
                return Ok(name.clone());
            }
        }
        match offering.as_slice() {
            [(name, _)] => Ok(name.clone()),
            [] => Err(Error::new(ErrorKind::NotFound, "No running MCP server offers resources.")),
            _ => Err(Error::new(
                ErrorKind::NotFound,
                format!("No MCP server lists {uri}, and several offer resources: give SERVER:{uri}."),
            )),
        }
    }
}

/// A file extension for an image's media type.
fn extension(mime_type: &str) -> &'static str {
    match mime_type {
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/png" => "png",
        _ => "bin",
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    let first = chars.next().map(|c| c.to_uppercase().collect::<String>()).unwrap_or_default();
    format!("{first}{}.", chars.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_errors_read_as_sentences_of_the_right_kind() {
        let e = context_error(ContextError::Refused("the MCP server 'every' refused the prompt 'p': no".into()));
        assert_eq!(e.kind, ErrorKind::BadRequest);
        assert_eq!(e.message, "The MCP server 'every' refused the prompt 'p': no.");
        assert_eq!(context_error(ContextError::TimedOut("x".into())).kind, ErrorKind::Timeout);
    }

    #[test]
    fn a_binary_content_has_no_text_and_says_what_it_is() {
        let c = ResourceContents {
            uri: "a://b".into(),
            mime_type: Some("application/x-thing".into()),
            body: ResourceBody::Blob(vec![0xff, 0xfe]),
        };
        assert_eq!(
            content_text(&c).unwrap_err(),
            "a://b is binary (application/x-thing, 2 bytes) and cannot be sent as text"
        );
        let t = ResourceContents { uri: "a://t".into(), mime_type: None, body: ResourceBody::Blob(b"hi".to_vec()) };
        assert_eq!(framed(&t, content_text(&t).unwrap()), "[resource a://t]\nhi");
    }
}
