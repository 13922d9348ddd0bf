//! What one request used and cost: the provider's reported usage when it can be true, otherwise
//! an estimate from what was sent and received (marked `estimated`), priced at the turn's
//! [`TurnOptions::prices`](crate::config::TurnOptions::prices).
//!
//! Invariants: every request that was answered (finished, or stopped or failed after output
//! began) yields exactly one `usage` event, numbered like the tool calls it decided; numbers that
//! cannot be true (over [`ABSURD_TOKENS`] in one request, more cached or written than sent, more
//! reasoning than output) are never stored: they are logged and replaced by the estimate; a cost
//! is `None` exactly when the prices are unknown.

use super::{Effect, Machine};
use crate::event::ChatEvent;
use crate::provider::ProviderRequest;
use crate::types::{Message, Usage};

/// More tokens than any model takes or writes in one request: a count above it is not believed.
pub const ABSURD_TOKENS: u64 = 10_000_000;

/// Tokens in `chars` characters of text, estimated: one per four characters, rounded up (the
/// usual figure for English and code on today's tokenizers). The one place the estimate is made,
/// so a better counter replaces only this.
pub fn estimate_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(4)
}

/// Characters of everything `request` sends: instructions, messages, tool calls and results,
/// and the offered tools' definitions.
pub fn request_chars(request: &ProviderRequest) -> usize {
    let messages: usize = request
        .messages
        .iter()
        .map(|m| match m {
            Message::User { text, .. } => text.len(),
            Message::Assistant { text, tool_calls, .. } => {
                text.len() + tool_calls.iter().map(|c| c.name.len() + c.arguments.len()).sum::<usize>()
            }
            Message::Tool { name, content, .. } => name.len() + content.len(),
        })
        .sum();
    let tools: usize =
        request.tools.iter().map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len()).sum();
    request.system.as_ref().map_or(0, String::len) + messages + tools
}

/// Why `usage` cannot be true, if it cannot.
pub fn implausible(usage: &Usage) -> Option<&'static str> {
    if usage.prompt_tokens > ABSURD_TOKENS || usage.completion_tokens > ABSURD_TOKENS {
        Some("more than 10 million tokens in one request")
    } else if usage.cached_tokens > usage.prompt_tokens {
        Some("more cached tokens than prompt tokens")
    } else if usage.cache_write_tokens > usage.prompt_tokens {
        Some("more cache-write tokens than prompt tokens")
    } else if usage.reasoning_tokens > usage.completion_tokens {
        Some("more reasoning tokens than completion tokens")
    } else {
        None
    }
}

/// What was sent and received in one request, in characters, for the estimate.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Exchanged {
    pub(super) sent: usize,
    pub(super) received: usize,
    pub(super) reasoning: usize,
}

impl Exchanged {
    fn estimate(self) -> Usage {
        let reasoning = estimate_tokens(self.reasoning);
        Usage {
            prompt_tokens: estimate_tokens(self.sent),
            completion_tokens: estimate_tokens(self.received) + reasoning,
            reasoning_tokens: reasoning,
            ..Usage::default()
        }
    }
}

impl Machine<'_> {
    /// Ends the current request's accounting: its usage (reported, or estimated when `billed`
    /// and nothing believable was reported) goes into the turn's total and out as a `usage`
    /// event.
    pub(super) fn account_request(&mut self, billed: bool, out: &mut Vec<Effect>) {
        let reported = self.it.usage;
        let why = implausible(&reported);
        if let Some(why) = why {
            tracing::warn!(
                model = %self.model,
                request = self.iteration_no,
                ?reported,
                "the provider reported usage that cannot be true ({why}); estimating it instead"
            );
        }
        let (usage, estimated) = if !reported.is_empty() && why.is_none() {
            (reported, false)
        } else if billed || !reported.is_empty() {
            (self.it.exchanged.estimate(), true)
        } else {
            return;
        };
        self.usage.add(&usage);
        out.push(Effect::Emit(ChatEvent::Usage {
            usage,
            total: self.usage,
            request: self.iteration_no,
            cost_usd: self.options.prices.map(|p| p.cost(&usage)),
            estimated,
            agent_call: None,
        }));
    }

    /// What a sub-agent call spent (its whole run, children included) counts in this turn.
    pub(super) fn account_agent_call(
        &mut self,
        call_id: &str,
        spent: Usage,
        cost_usd: Option<f64>,
        out: &mut Vec<Effect>,
    ) {
        if spent.is_empty() {
            return;
        }
        self.usage.add(&spent);
        out.push(Effect::Emit(ChatEvent::Usage {
            usage: spent,
            total: self.usage,
            request: self.iteration_no,
            cost_usd,
            estimated: false,
            agent_call: Some(call_id.to_owned()),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_that_cannot_be_true_are_named() {
        let ok = Usage {
            prompt_tokens: 100,
            completion_tokens: 20,
            reasoning_tokens: 5,
            cached_tokens: 80,
            cache_write_tokens: 20,
        };
        assert_eq!(implausible(&ok), None);
        assert!(implausible(&Usage { prompt_tokens: ABSURD_TOKENS + 1, ..ok }).is_some());
        assert!(implausible(&Usage { cached_tokens: 101, ..ok }).is_some());
        assert!(implausible(&Usage { reasoning_tokens: 21, ..ok }).is_some());
        assert!(implausible(&Usage { cache_write_tokens: 101, ..ok }).is_some());
        assert_eq!(estimate_tokens(0), 0);
        assert_eq!(estimate_tokens(9), 3);
    }
}
