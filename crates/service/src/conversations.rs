//! Conversations: listing, searching (full text: [`Service::search_messages`]), opening (a page at a time), renaming, deleting and
//! exporting them.

use crate::ipc::ConversationView;
use crate::{Error, OLDER_PAGE_MAX, OPEN_PAGE, Result, Service};
use switchboard_store::{ConversationSummary, MessagePage, SEARCH_LIMIT_DEFAULT, SearchHit};

/// The most characters a title the person (or the page) sets may have.
pub const MAX_TITLE_CHARS: usize = 300;

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

    /// The places in titles, messages, tool arguments and tool results that match `query` (words,
    /// `"phrases"`, `prefix*`, `-excluded`, `OR`), best first, highlighted snippets; `limit`
    /// defaults to 50 and is capped at 200.
    pub fn search_messages(&self, query: &str, limit: Option<u32>) -> Result<Vec<SearchHit>> {
        let limit = limit.map_or(SEARCH_LIMIT_DEFAULT, |l| usize::try_from(l).unwrap_or(usize::MAX));
        Ok(self.inner.store.search_messages(query, limit)?)
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
            agent: store.agent(id)?,
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
            agent: store.agent(id)?,
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
        if title.chars().count() > MAX_TITLE_CHARS {
            return Err(Error::config(format!("A conversation title can have at most {MAX_TITLE_CHARS} characters.")));
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

    /// A chat's instructions: the custom ones every chat gets, its own, and what its last
    /// question was sent with.
    pub fn chat_instructions(&self, id: &str) -> Result<crate::ipc::ChatInstructions> {
        let chat = self.inner.store.instructions(id)?.unwrap_or_default();
        let last_sent = self.last_choices(id).ok().and_then(|c| c.sent_instructions);
        Ok(crate::ipc::ChatInstructions { custom: self.settings()?.chats.instructions, chat, last_sent })
    }

    /// Sets a chat's own instructions (blank removes them); its next question is sent with them.
    pub fn set_chat_instructions(&self, id: &str, text: &str) -> Result<()> {
        crate::settings::check_instructions(text, "The chat's instructions")?;
        Ok(self.inner.store.set_instructions(id, Some(text))?)
    }

    /// Pins a conversation to the top of the list, or unpins it.
    pub fn set_pinned(&self, id: &str, pinned: bool) -> Result<()> {
        Ok(self.inner.store.set_pinned(id, pinned)?)
    }

    /// Archives a conversation (out of the main list; still searchable), or brings it back.
    pub fn set_archived(&self, id: &str, archived: bool) -> Result<()> {
        Ok(self.inner.store.set_archived(id, archived)?)
    }
}
