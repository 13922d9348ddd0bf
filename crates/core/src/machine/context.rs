//! How much of the model's context a request fills: [`Machine::estimate`], the
//! `context` event sent before every request, and the provider's reported prompt tokens taken in
//! after each response.
//!
//! The count of a request is the provider's reported prompt tokens of the previous request plus
//! what is new, where "what is new" is the difference between the engine's estimates of the two
//! requests (a message appended, a tool result shortened by compaction, the tools turned off for
//! the last call). Before the first report it is the estimate of everything, or the conversation's
//! last report handed in by the service ([`crate::config::ReportedContext`]).
//!
//! Invariants: a message is counted once per turn ([`Estimator`] caches each message's count by
//! position and a cheap fingerprint, so a request of 2,000 messages costs a pass over their
//! lengths, not a re-tokenization); the breakdown always sums to the total; an absurd report
//! (nothing, or far from the estimate) is ignored rather than trusted.

use super::{Effect, Machine};
use crate::config::ReportedContext;
use crate::event::{ChatEvent, ContextBreakdown};
use crate::provider::{ProviderRequest, ToolSpec};
use crate::tokens::{CharEstimate, TokenCounter, image_size};
use crate::types::{Message, Part, Usage};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Tokens every message adds around its content (role and separators: OpenAI documents 3 per
/// message for its chat format; the others are close).
const PER_MESSAGE: u64 = 3;
/// Tokens a tool call or a tool definition adds around its name and arguments or schema.
const PER_TOOL: u64 = 8;
/// Tokens that prime the reply (OpenAI documents 3).
const PER_REQUEST: u64 = 3;

/// How many tokens one request sends, and where they go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContextEstimate {
    /// Tokens the request sends (reported prompt tokens of the previous request plus an estimate
    /// of what is new, or an estimate of everything).
    pub total: u64,
    /// Where they go; sums to `total`.
    pub breakdown: ContextBreakdown,
    /// No provider report is part of `total`.
    pub estimated: bool,
}

/// Counts requests with one [`TokenCounter`], caching each message's, tool's and the system
/// prompt's count. Also usable outside a turn (the service estimates a conversation's next
/// request with it).
#[derive(Debug)]
pub struct Estimator {
    counter: Arc<dyn TokenCounter>,
    cache: Mutex<Cache>,
}

#[derive(Debug, Default)]
struct Cache {
    /// Per message position: its fingerprint and counted parts.
    messages: Vec<(Fingerprint, ContextBreakdown)>,
    /// Per tool name: the definition's fingerprint and tokens.
    tools: HashMap<String, (Fingerprint, u64)>,
    system: Option<(Fingerprint, u64)>,
}

/// What identifies a message's content cheaply: its kind, total length and a hash of its ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint(u8, usize, u64);

impl Estimator {
    /// An estimator counting with `counter`.
    pub fn new(counter: Arc<dyn TokenCounter>) -> Self {
        Self { counter, cache: Mutex::new(Cache::default()) }
    }

    /// The estimate of everything `request` sends, part by part (no report involved).
    pub fn breakdown(&self, request: &ProviderRequest) -> ContextBreakdown {
        let mut cache = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut b = ContextBreakdown { history: PER_REQUEST, ..ContextBreakdown::default() };
        if let Some(system) = &request.system {
            let fp = fingerprint(0, &[system]);
            b.instructions = match cache.system {
                Some((f, n)) if f == fp => n,
                _ => {
                    let n = self.counter.count(system) + PER_MESSAGE;
                    cache.system = Some((fp, n));
                    n
                }
            };
        }
        for tool in &request.tools {
            b.tools += self.tool(&mut cache, tool);
        }
        let history = self.counted(&mut cache, &request.messages);
        b.history += history.history;
        b.tool_results = history.tool_results;
        b.attachments = history.attachments;
        b
    }

    /// What [`Estimator::breakdown`] counts of `messages` sent as a request's history: the
    /// history, tool results and attachments, the reply's priming included; no instructions
    /// or tools (the service's meter takes those from the last request).
    pub fn history(&self, messages: &[Message]) -> ContextBreakdown {
        let mut cache = self.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut b = self.counted(&mut cache, messages);
        b.history += PER_REQUEST;
        b
    }

    /// The messages' counts, each from the cache while its fingerprint holds.
    fn counted(&self, cache: &mut Cache, messages: &[Message]) -> ContextBreakdown {
        let mut b = ContextBreakdown::default();
        cache.messages.truncate(messages.len());
        for (i, message) in messages.iter().enumerate() {
            let fp = message_fingerprint(message);
            let part = match cache.messages.get(i) {
                Some((f, part)) if *f == fp => *part,
                _ => {
                    let part = self.message(message);
                    if i < cache.messages.len() {
                        cache.messages[i] = (fp, part);
                    } else {
                        cache.messages.push((fp, part));
                    }
                    part
                }
            };
            b.history += part.history;
            b.tool_results += part.tool_results;
            b.attachments += part.attachments;
        }
        b
    }

    /// The estimate of a list of messages alone (the service's "what is new since the report").
    pub fn messages(&self, messages: &[Message]) -> u64 {
        messages.iter().map(|m| self.message(m).total()).sum()
    }

    /// Tokens of one image `width` × `height` (`None`: its header does not say) as this model
    /// family counts images: what a request's image part costs.
    pub fn image(&self, size: Option<(u32, u32)>) -> u64 {
        self.counter.image(size)
    }

    fn tool(&self, cache: &mut Cache, tool: &ToolSpec) -> u64 {
        let fp = fingerprint(1, &[&tool.name, &tool.description]);
        if let Some((f, n)) = cache.tools.get(&tool.name)
            && *f == fp
        {
            return *n;
        }
        let n = PER_TOOL
            + self.counter.count(&tool.name)
            + self.counter.count(&tool.description)
            + self.counter.count(&tool.parameters.to_string());
        cache.tools.insert(tool.name.clone(), (fp, n));
        n
    }

    fn message(&self, message: &Message) -> ContextBreakdown {
        let c = &self.counter;
        let mut part = ContextBreakdown::default();
        match message {
            Message::User { text, parts } => {
                part.history = PER_MESSAGE + c.count(text);
                part.attachments = parts.iter().map(|p| self.part(p)).sum();
            }
            Message::Assistant { text, tool_calls, .. } => {
                part.history = PER_MESSAGE + c.count(text);
                for call in tool_calls {
                    part.history += PER_TOOL + c.count(&call.name) + c.count(&call.arguments);
                }
            }
            Message::Tool { content, images, .. } => {
                part.tool_results = PER_MESSAGE + c.count(content);
                part.attachments = images.iter().map(|i| c.image(image_size(i))).sum();
            }
        }
        part
    }

    /// An attached file: an image as the API prices images, a PDF as its pages of text and
    /// images (about 1,500 tokens a page, Anthropic's and Google's guidance, [`pdf_tokens`]),
    /// text as text.
    pub fn part(&self, part: &Part) -> u64 {
        match part {
            Part::Image { image, .. } => self.counter.image(image_size(image)),
            Part::Pdf { data, .. } => pdf_tokens(base64_len_decoded(data)),
            Part::Text { name, text, note, .. } => {
                PER_MESSAGE
                    + self.counter.count(name)
                    + self.counter.count(text)
                    + note.as_deref().map_or(0, |n| self.counter.count(n))
            }
        }
    }
}

/// Bytes of a PDF per token sent, for a PDF whose pages are not yet counted: a typical page is
/// about 60 KB and costs about 1,500 tokens.
const PDF_BYTES_PER_TOKEN: u64 = 40;

/// Tokens of a PDF of `bytes` bytes sent as a document (see [`Estimator::part`]): known from
/// its size alone, so a stored PDF is counted without reading it.
pub fn pdf_tokens(bytes: u64) -> u64 {
    PER_MESSAGE + bytes.div_ceil(PDF_BYTES_PER_TOKEN)
}

/// The bytes standard base64 `data` decodes to.
fn base64_len_decoded(data: &str) -> u64 {
    let padding = data.bytes().rev().take(2).filter(|&b| b == b'=').count();
    (data.len() / 4 * 3 + data.len() % 4 * 3 / 4).saturating_sub(padding) as u64
}

/// The estimate of a request (its raw `breakdown`, whose total the engine compares with the
/// report) on top of `reported`, if any: what was reported plus the difference of the two
/// estimates, with the breakdown scaled to sum to it.
pub fn combine(breakdown: ContextBreakdown, reported: Option<ReportedContext>) -> ContextEstimate {
    let raw = breakdown.total();
    let Some(r) = reported else {
        return ContextEstimate { total: raw, breakdown, estimated: true };
    };
    let total = (r.prompt_tokens as i128 + raw as i128 - r.estimate as i128).max(0) as u64;
    ContextEstimate { total, breakdown: scaled(breakdown, total), estimated: false }
}

/// [`combine`] on the conversation's last report, handed in from before this request (the
/// turn's first, or the meter's figure of it): it holds only while this request sends at least
/// what that one did (after an edit the history is shorter, and it is not the base).
pub fn combine_handed_in(breakdown: ContextBreakdown, reported: Option<ReportedContext>) -> ContextEstimate {
    combine(breakdown, reported.filter(|r| breakdown.total() >= r.estimate))
}

/// Whether a reported prompt count is believable for a request estimated at `estimate`: not
/// nothing, and within a factor of 4 either way (tokenizers differ by far less than that).
pub fn believable(prompt_tokens: u64, estimate: u64) -> bool {
    prompt_tokens > 0
        && prompt_tokens <= estimate.saturating_mul(4).max(64)
        && prompt_tokens.saturating_mul(4) >= estimate
}

/// `b` scaled to sum to `total`, the rounding left over going to the history.
fn scaled(b: ContextBreakdown, total: u64) -> ContextBreakdown {
    let raw = b.total();
    if raw == 0 {
        return ContextBreakdown { history: total, ..ContextBreakdown::default() };
    }
    let scale = |n: u64| (n as u128 * total as u128 / raw as u128) as u64;
    let mut out = ContextBreakdown {
        instructions: scale(b.instructions),
        tools: scale(b.tools),
        history: 0,
        tool_results: scale(b.tool_results),
        attachments: scale(b.attachments),
    };
    out.history = total - out.total();
    out
}

fn message_fingerprint(m: &Message) -> Fingerprint {
    match m {
        Message::User { text, .. } => fingerprint(2, &[text]),
        Message::Assistant { text, tool_calls, .. } => {
            let mut fp = fingerprint(3, &[text]);
            for call in tool_calls {
                let f = fingerprint(4, &[&call.id, &call.name, &call.arguments]);
                fp = Fingerprint(3, fp.1 + f.1, fp.2.rotate_left(5) ^ f.2);
            }
            fp
        }
        Message::Tool { call_id, content, images, .. } => {
            let mut fp = fingerprint(5, &[call_id, content]);
            for image in images {
                fp.1 += image.data.len();
                fp.2 = fp.2.rotate_left(7) ^ hash_ends(&image.data);
            }
            fp
        }
    }
}

/// Kind, total length, and a hash of each part's length and first and last 32 bytes.
fn fingerprint(kind: u8, parts: &[&str]) -> Fingerprint {
    let mut len = 0;
    let mut h = 0u64;
    for p in parts {
        len += p.len();
        h = h.rotate_left(11) ^ hash_ends(p) ^ p.len() as u64;
    }
    Fingerprint(kind, len, h)
}

/// FNV-1a over the first and last 32 bytes.
fn hash_ends(s: &str) -> u64 {
    let b = s.as_bytes();
    let head = &b[..b.len().min(32)];
    let tail = &b[b.len().saturating_sub(32)..];
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &x in head.iter().chain(tail) {
        h = (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The turn's counting state: the estimator, the last believable report and the raw estimate of
/// the request last sent.
#[derive(Debug)]
pub(super) struct Counting {
    estimator: Estimator,
    reported: Option<ReportedContext>,
    /// `reported` is the conversation's, handed in: it holds only while this turn sends more
    /// than that request did (after an edit the history is shorter, and it is not the base).
    handed_in: bool,
    sent: Option<u64>,
}

impl Counting {
    pub(super) fn new(counter: Option<Arc<dyn TokenCounter>>, reported: Option<ReportedContext>) -> Self {
        let counter = counter.unwrap_or_else(|| Arc::new(CharEstimate::default()));
        Self { estimator: Estimator::new(counter), handed_in: reported.is_some(), reported, sent: None }
    }

    fn combine(&self, breakdown: ContextBreakdown) -> ContextEstimate {
        if self.handed_in { combine_handed_in(breakdown, self.reported) } else { combine(breakdown, self.reported) }
    }
}

impl Machine<'_> {
    /// How many tokens `request` sends: the last request's reported prompt tokens plus an
    /// estimate of what is new (see the module docs).
    pub fn estimate(&self, request: &ProviderRequest) -> ContextEstimate {
        self.counting.combine(self.counting.estimator.breakdown(request))
    }

    /// Emits the `context` event for the request about to be sent, and remembers its estimate
    /// for the report that follows.
    pub(super) fn announce_context(&mut self, request: &ProviderRequest, out: &mut Vec<Effect>) {
        let breakdown = self.counting.estimator.breakdown(request);
        self.counting.sent = Some(breakdown.total());
        let e = self.counting.combine(breakdown);
        out.push(Effect::Emit(ChatEvent::Context {
            used_tokens: e.total,
            window: self.options.context.window.filter(|_| !self.options.context.window_assumed),
            breakdown: e.breakdown,
            estimated: e.estimated,
            estimate: breakdown.total(),
        }));
    }

    /// Takes in the usage the provider reported for the request last sent.
    pub(super) fn take_report(&mut self, usage: &Usage) {
        if let Some(estimate) = self.counting.sent.take()
            && believable(usage.prompt_tokens, estimate)
        {
            self.counting.reported = Some(ReportedContext { prompt_tokens: usage.prompt_tokens, estimate });
            self.counting.handed_in = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pdf_is_counted_by_its_bytes_whether_sent_or_stored() {
        for n in [0usize, 1, 2, 3, 4, 5, 119, 120, 121, 60_000] {
            let data = base64_of(n);
            assert_eq!(base64_len_decoded(&data), n as u64, "{n} bytes");
            let part = Part::Pdf { name: "f.pdf".into(), data: data.into() };
            let estimator = Estimator::new(Arc::new(CharEstimate::default()));
            assert_eq!(estimator.part(&part), pdf_tokens(n as u64));
        }
        assert_eq!(pdf_tokens(60_000), PER_MESSAGE + 1_500);
    }

    /// Padded standard base64 of `n` zero bytes.
    fn base64_of(n: usize) -> String {
        let mut s = "A".repeat(n / 3 * 4);
        match n % 3 {
            1 => s.push_str("AA=="),
            2 => s.push_str("AAA="),
            _ => {}
        }
        s
    }
}
