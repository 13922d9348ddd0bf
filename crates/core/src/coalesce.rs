//! Fewer, larger text events for shells that pay per event (a webview pays a message, a script
//! evaluation and a render task for each one).
//!
//! A provider at full speed sends a delta per token; a window that receives 2,000 messages in a
//! burst spends its main thread on the messages and paints nothing until the burst ends.
//! [`Coalescing`] holds consecutive text (or reasoning) deltas and lets them through as one
//! event when anything else happens, when the loop is about to wait, or when the held text is
//! older than a frame. The order of events and every character are kept; only the cut points
//! between deltas move.

use crate::event::{ChatEvent, EventSink};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// About one display frame: text never waits longer than this to be sent on.
pub const FRAME: Duration = Duration::from_millis(16);

/// Merges runs of [`ChatEvent::TextDelta`] and of [`ChatEvent::ReasoningDelta`] before `inner`.
pub struct Coalescing<S> {
    inner: S,
    max_delay: Duration,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    reasoning: bool,
    text: String,
    since: Option<Instant>,
}

impl<S: EventSink> Coalescing<S> {
    /// Wraps `inner`; held text is sent on once it is `max_delay` old (checked as events arrive;
    /// the loop's `flush` covers a stream that pauses).
    pub fn new(inner: S, max_delay: Duration) -> Self {
        Self { inner, max_delay, held: Mutex::default() }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        // A panic elsewhere mid-event leaves text that is still worth sending.
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn send_held(&self, held: &mut Held) {
        held.since = None;
        if held.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut held.text);
        self.inner.emit(if held.reasoning {
            ChatEvent::ReasoningDelta { text }
        } else {
            ChatEvent::TextDelta { text }
        });
    }
}

impl<S: EventSink> EventSink for Coalescing<S> {
    fn emit(&self, event: ChatEvent) {
        // The lock is held while sending so events from one turn keep their order.
        let mut held = self.held();
        let (reasoning, text) = match event {
            ChatEvent::TextDelta { text } => (false, text),
            ChatEvent::ReasoningDelta { text } => (true, text),
            other => {
                self.send_held(&mut held);
                self.inner.emit(other);
                return;
            }
        };
        if held.reasoning != reasoning {
            self.send_held(&mut held);
            held.reasoning = reasoning;
        }
        held.text.push_str(&text);
        let since = *held.since.get_or_insert_with(Instant::now);
        if since.elapsed() >= self.max_delay {
            self.send_held(&mut held);
        }
    }

    fn tick(&self) {
        let mut held = self.held();
        self.send_held(&mut held);
        drop(held);
        self.inner.tick();
    }

    fn flush(&self) {
        let mut held = self.held();
        self.send_held(&mut held);
        drop(held);
        self.inner.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::VecSink;
    use std::sync::Arc;

    fn text(t: &str) -> ChatEvent {
        ChatEvent::TextDelta { text: t.into() }
    }

    fn reasoning(t: &str) -> ChatEvent {
        ChatEvent::ReasoningDelta { text: t.into() }
    }

    struct Shared(Arc<VecSink>);
    impl EventSink for Shared {
        fn emit(&self, event: ChatEvent) {
            self.0.emit(event);
        }
    }

    fn sink(max_delay: Duration) -> (Coalescing<Shared>, Arc<VecSink>) {
        let out = Arc::new(VecSink::default());
        (Coalescing::new(Shared(Arc::clone(&out)), max_delay), out)
    }

    #[test]
    fn a_burst_of_deltas_becomes_one_event_on_flush() {
        let (c, out) = sink(Duration::from_secs(60));
        for t in ["Hel", "lo", ", ", "wörld 🌍"] {
            c.emit(text(t));
        }
        assert!(out.events().is_empty(), "held until something happens");
        c.flush();
        assert_eq!(out.events(), [text("Hello, wörld 🌍")]);
        c.flush();
        assert_eq!(out.events().len(), 1, "nothing held, nothing sent");
    }

    #[test]
    fn other_events_send_the_held_text_first_and_keep_their_order() {
        let (c, out) = sink(Duration::from_secs(60));
        c.emit(reasoning("think"));
        c.emit(reasoning("ing"));
        c.emit(text("a"));
        c.emit(text("b"));
        let notice = ChatEvent::Notice { kind: crate::NoticeKind::Retrying, message: "m".into() };
        c.emit(notice.clone());
        c.emit(text("c"));
        c.tick();
        assert_eq!(out.events(), [reasoning("thinking"), text("ab"), notice, text("c")]);
    }

    #[test]
    fn text_older_than_the_delay_is_sent_without_a_flush() {
        let (c, out) = sink(Duration::ZERO);
        c.emit(text("a"));
        c.emit(text("b"));
        assert_eq!(out.events(), [text("a"), text("b")]);

        let (c, out) = sink(Duration::from_millis(5));
        c.emit(text("a"));
        std::thread::sleep(Duration::from_millis(10));
        c.emit(text("b"));
        assert_eq!(out.events(), [text("ab")], "the second delta finds the first one old enough");
    }
}
