//! Fewer, larger text events for shells that pay per event (a webview pays a message, a script
//! evaluation and a render task for each one).
//!
//! A provider at full speed sends a delta per token; a window that receives 2,000 messages in a
//! burst spends its main thread on the messages and paints nothing until the burst ends.
//! [`Coalescing`] holds consecutive text (or reasoning) deltas and lets them through as one
//! event when anything else happens, when the loop is about to wait, or when the held text is
//! older than a frame. Sub-agents' deltas (nested in `toolProgress`, at any depth) are held the
//! same way, one buffer per run, so three children streaming at once into one card cost a few
//! events a frame instead of one per token each. Every character is kept and each run's events
//! keep their order; only the cut points between deltas move, and deltas of different runs held
//! in the same frame may arrive in another order among themselves (never past any other event).

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

/// Where a delta goes: the answer itself (empty), or a sub-agent's run inside a call, as the
/// chain of (call id, instance) down to it.
type Route = Vec<(String, String)>;

/// The text held for one run: its route, whether it is reasoning, the text.
struct Buffer {
    route: Route,
    reasoning: bool,
    text: String,
}

#[derive(Default)]
struct Held {
    /// In the order the runs first sent text since the last send.
    buffers: Vec<Buffer>,
    since: Option<Instant>,
}

impl<S: EventSink> Coalescing<S> {
    /// Wraps `inner`; held text is sent at the latest `max_delay` after it arrived (with the next
    /// event, or at the next `tick` or `flush`).
    pub fn new(inner: S, max_delay: Duration) -> Self {
        Self { inner, max_delay, held: Mutex::default() }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        // A panic elsewhere mid-event leaves text that is still worth sending.
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn send(&self, buffer: Buffer) {
        if buffer.text.is_empty() {
            return;
        }
        let Buffer { route, reasoning, text } = buffer;
        let mut event = if reasoning { ChatEvent::ReasoningDelta { text } } else { ChatEvent::TextDelta { text } };
        for (id, instance) in route.into_iter().rev() {
            event = ChatEvent::ToolProgress { id, instance: Some(instance), text: None, event: Some(Box::new(event)) };
        }
        self.inner.emit(event);
    }

    fn send_held(&self, held: &mut Held) {
        held.since = None;
        for buffer in std::mem::take(&mut held.buffers) {
            self.send(buffer);
        }
    }
}

/// A text or reasoning delta, at any depth of sub-agents: its route, kind and text; otherwise the
/// event back.
fn delta(event: ChatEvent) -> Result<(Route, bool, String), Box<ChatEvent>> {
    let mut route = Route::new();
    let mut at = event;
    loop {
        match at {
            ChatEvent::TextDelta { text } => return Ok((route, false, text)),
            ChatEvent::ReasoningDelta { text } => return Ok((route, true, text)),
            ChatEvent::ToolProgress { id, instance: Some(instance), text: None, event: Some(inner) }
                if matches!(
                    *inner,
                    ChatEvent::TextDelta { .. } | ChatEvent::ReasoningDelta { .. } | ChatEvent::ToolProgress { .. }
                ) =>
            {
                route.push((id, instance));
                at = *inner;
            }
            other if route.is_empty() => return Err(Box::new(other)),
            other => {
                // Not a delta after all: put the wrapping back as it came.
                let mut event = other;
                for (id, instance) in route.into_iter().rev() {
                    event = ChatEvent::ToolProgress {
                        id,
                        instance: Some(instance),
                        text: None,
                        event: Some(Box::new(event)),
                    };
                }
                return Err(Box::new(event));
            }
        }
    }
}

impl<S: EventSink> EventSink for Coalescing<S> {
    fn emit(&self, event: ChatEvent) {
        // The lock is held while sending so events from one turn keep their order.
        let mut held = self.held();
        let (route, reasoning, text) = match delta(event) {
            Ok(d) => d,
            Err(other) => {
                self.send_held(&mut held);
                self.inner.emit(*other);
                return;
            }
        };
        match held.buffers.iter().position(|b| b.route == route) {
            Some(i) if held.buffers[i].reasoning == reasoning => held.buffers[i].text.push_str(&text),
            Some(i) => {
                // Within one run, reasoning and text keep their order.
                let before = std::mem::replace(&mut held.buffers[i], Buffer { route, reasoning, text });
                self.send(before);
            }
            None => held.buffers.push(Buffer { route, reasoning, text }),
        }
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

    fn nested(id: &str, instance: &str, event: ChatEvent) -> ChatEvent {
        ChatEvent::ToolProgress {
            id: id.into(),
            instance: Some(instance.into()),
            text: None,
            event: Some(Box::new(event)),
        }
    }

    #[test]
    fn sub_agents_streaming_at_once_are_merged_per_run_and_other_events_keep_their_place() {
        let (c, out) = sink(Duration::from_secs(60));
        for t in ["a", "b", "c"] {
            c.emit(nested("c1", "Scout[1]", text(t)));
            c.emit(nested("c2", "Scout[2]", text(t)));
            // A grandchild's text, two levels down.
            c.emit(nested("c1", "Scout[1]", nested("k1", "Deep[1]", text(t))));
        }
        c.emit(text("lead"));
        let call = nested("c2", "Scout[2]", ChatEvent::ToolStarted { id: "k9".into() });
        c.emit(call.clone());
        c.emit(nested("c1", "Scout[1]", reasoning("hm")));
        c.emit(nested("c1", "Scout[1]", text("d")));
        c.flush();
        assert_eq!(
            out.events(),
            [
                nested("c1", "Scout[1]", text("abc")),
                nested("c2", "Scout[2]", text("abc")),
                nested("c1", "Scout[1]", nested("k1", "Deep[1]", text("abc"))),
                text("lead"),
                call,
                nested("c1", "Scout[1]", reasoning("hm")),
                nested("c1", "Scout[1]", text("d")),
            ]
        );
    }
}
