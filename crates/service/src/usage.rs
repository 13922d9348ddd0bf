//! Spend as the shells read it: one answer's requests in detail, a conversation's total with
//! each answer's, and reports over a period ([`switchboard_store`]'s `usage_requests` rows,
//! written by the recorder as each request ends). Prices reach a turn through
//! [`Service::model_spec`] in the turn builder; nothing here prices anything again.
//!
//! Invariant: a request of unknown price is counted apart, never as $0.

use crate::{Error, Result, Service};
use switchboard_store::{ConversationUsage, MessageUsage, UsageQuery, UsageReport};

impl Service {
    /// One answer's requests (its sub-agent runs' included), runs, and re-sent tool results.
    pub fn message_usage(&self, message_id: &str) -> Result<MessageUsage> {
        Ok(self.inner.store.message_usage(message_id)?)
    }

    /// A conversation's total (every branch: what was spent stays spent) and each answer's.
    pub fn conversation_usage(&self, conversation_id: &str) -> Result<ConversationUsage> {
        Ok(self.inner.store.conversation_usage(conversation_id)?)
    }

    /// Every request in the query's period, grouped as it asks. A period that ends before it
    /// starts is refused.
    pub fn usage_report(&self, query: &UsageQuery) -> Result<UsageReport> {
        if let (Some(since), Some(until)) = (query.since, query.until)
            && until < since
        {
            return Err(Error::config("The report's period ends before it starts; swap the two dates."));
        }
        if query.utc_offset_minutes.is_some_and(|m| m.abs() > 14 * 60) {
            return Err(Error::config("A time zone is at most 14 hours from UTC."));
        }
        Ok(self.inner.store.usage_report(query)?)
    }
}
