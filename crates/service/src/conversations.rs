//! Conversations: listing, searching, opening (a page at a time), renaming, deleting and
//! exporting them.

use crate::ipc::ConversationView;
use crate::{Error, OLDER_PAGE_MAX, OPEN_PAGE, Result, Service};
use switchboard_core::ErrorKind;
use switchboard_store::{ConversationSummary, MessagePage};

impl Service {
    /// Conversations, newest first.
    pub fn conversations(&self) -> Result<Vec<ConversationSummary>> {
        Ok(self.inner.store.conversations()?)
    }

    /// The most recently updated conversation's id, if there is one (`chat --continue`).
    pub fn latest_conversation(&self) -> Result<Option<String>> {
        Ok(self.conversations()?.into_iter().next().map(|c| c.id))
    }

    /// Conversations whose title or messages contain `query`.
    pub fn search(&self, query: &str) -> Result<Vec<ConversationSummary>> {
        Ok(self.inner.store.search(query)?)
    }

    /// A conversation with everything needed to draw it: its last [`OPEN_PAGE`] messages (a long
    /// conversation's older ones are read with [`Service::older_messages`] as the person scrolls up).
    pub fn open(&self, id: &str) -> Result<ConversationView> {
        let store = &self.inner.store;
        let page = store.messages_page(id, None, OPEN_PAGE)?;
        Ok(ConversationView {
            conversation: store.conversation(id)?,
            messages: page.messages,
            earlier: page.earlier,
            disabled_tools: store.disabled_tools(id)?.into_iter().collect(),
        })
    }

    /// A conversation with every message (for transcripts and exports).
    pub fn open_all(&self, id: &str) -> Result<ConversationView> {
        let store = &self.inner.store;
        Ok(ConversationView {
            conversation: store.conversation(id)?,
            messages: store.messages(id)?,
            earlier: 0,
            disabled_tools: store.disabled_tools(id)?.into_iter().collect(),
        })
    }

    /// The (at most `limit`, capped at [`OLDER_PAGE_MAX`]) messages of a conversation that come
    /// just before the message `before`, oldest first, and how many come earlier still.
    pub fn older_messages(&self, id: &str, before: &str, limit: u32) -> Result<MessagePage> {
        let limit = usize::try_from(limit).unwrap_or(usize::MAX).min(OLDER_PAGE_MAX);
        Ok(self.inner.store.messages_page(id, Some(before), limit)?)
    }

    /// Renames a conversation.
    pub fn rename(&self, id: &str, title: &str) -> Result<()> {
        let title = title.trim();
        if title.is_empty() {
            return Err(Error::config("A conversation title cannot be empty."));
        }
        Ok(self.inner.store.rename(id, title)?)
    }

    /// Deletes a conversation (stopping its turn if one runs).
    pub fn delete(&self, id: &str) -> Result<()> {
        for m in self.inner.store.messages(id)? {
            self.stop(&m.id);
        }
        Ok(self.inner.store.delete(id)?)
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

    /// Writes [`Service::export_all`] to a file in the data directory's `exports` folder.
    pub fn export_all_to_file(&self) -> Result<String> {
        let dir = self
            .inner
            .store
            .path()
            .and_then(|p| p.parent())
            .map(|p| p.join("exports"))
            .ok_or_else(|| Error::config("This database has no folder to export to."))?;
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::new(ErrorKind::Storage, format!("Cannot create {}: {e}", dir.display())))?;
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let path = dir.join(format!("switchboard-export-{stamp}.json"));
        let text = serde_json::to_string_pretty(&self.export_all()?)
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        std::fs::write(&path, text)
            .map_err(|e| Error::new(ErrorKind::Storage, format!("Cannot write {}: {e}", path.display())))?;
        Ok(path.display().to_string())
    }
}
