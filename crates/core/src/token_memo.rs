//! Counting a text once: [`Memo`] wraps a [`TokenCounter`] and remembers each text's count by a
//! [`TextKey`] (its length and a 64-bit FNV-1a hash of all its bytes), seeded with the counts a
//! caller stored earlier, and hands back the counts it had to make ([`Memo::fresh`]) for the
//! caller to store. The first request of a turn on a long conversation then tokenizes only what is
//! new since the counts were stored.
//!
//! Invariants: a count from the memo is the count the wrapped counter gives the same text (the key
//! is computed from every byte, and a count is only ever stored by the counter that made it, as the
//! caller keys stored counts by tokenizer); the key is stable across processes and builds (FNV-1a
//! over the bytes, never `std`'s randomised or unspecified hashers).

use crate::tokens::TokenCounter;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// What identifies a text's count: its length in bytes and a 64-bit FNV-1a hash of its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TextKey {
    /// Length in bytes.
    pub len: u64,
    /// FNV-1a over every byte.
    pub hash: u64,
}

impl TextKey {
    /// The key of `text`.
    pub fn of(text: &str) -> Self {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        for &b in text.as_bytes() {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        TextKey { len: text.len() as u64, hash }
    }
}

/// A [`TokenCounter`] that counts each text once: see the module docs.
#[derive(Debug)]
pub struct Memo {
    inner: Arc<dyn TokenCounter>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    known: HashMap<TextKey, u64>,
    /// Counts made since the memo was seeded, in the order they were made.
    fresh: Vec<(TextKey, u64)>,
}

impl Memo {
    /// Counts with `inner`, starting from the counts `known` (made earlier by the same counter).
    pub fn new(inner: Arc<dyn TokenCounter>, known: impl IntoIterator<Item = (TextKey, u64)>) -> Self {
        let known = known.into_iter().collect();
        Self { inner, state: Mutex::new(State { known, fresh: Vec::new() }) }
    }

    /// The counts made since it was seeded (or since the last call), for the caller to store.
    pub fn take_fresh(&self) -> Vec<(TextKey, u64)> {
        std::mem::take(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner).fresh)
    }
}

impl TokenCounter for Memo {
    fn count(&self, text: &str) -> u64 {
        let key = TextKey::of(text);
        if let Some(&n) = self.state.lock().unwrap_or_else(PoisonError::into_inner).known.get(&key) {
            return n;
        }
        // Counted outside the lock: a long text does not hold up another thread's lookups.
        let n = self.inner.count(text);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.known.insert(key, n).is_none() {
            state.fresh.push((key, n));
        }
        n
    }

    fn image(&self, size: Option<(u32, u32)>) -> u64 {
        self.inner.image(size)
    }

    fn exact(&self) -> bool {
        self.inner.exact()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Debug, Default)]
    struct Words(AtomicUsize);
    impl TokenCounter for Words {
        fn count(&self, text: &str) -> u64 {
            self.0.fetch_add(1, Ordering::Relaxed);
            text.split_whitespace().count() as u64
        }
    }

    #[test]
    fn a_text_is_counted_once_and_the_same_as_without_the_memo() {
        let words = Arc::new(Words::default());
        let memo = Memo::new(words.clone(), []);
        assert_eq!(memo.count("one two three"), 3);
        assert_eq!(memo.count("one two three"), 3);
        assert_eq!(memo.count("one two"), 2);
        assert_eq!(words.0.load(Ordering::Relaxed), 2);
        let fresh = memo.take_fresh();
        assert_eq!(fresh, vec![(TextKey::of("one two three"), 3), (TextKey::of("one two"), 2)]);
        assert!(memo.take_fresh().is_empty());

        // Seeded with what was stored: nothing is counted again, nothing is fresh.
        let again = Arc::new(Words::default());
        let seeded = Memo::new(again.clone(), fresh);
        assert_eq!(seeded.count("one two three") + seeded.count("one two"), 5);
        assert_eq!(again.0.load(Ordering::Relaxed), 0);
        assert!(seeded.take_fresh().is_empty());
    }

    #[test]
    fn the_key_is_fnv1a_of_every_byte() {
        // FNV-1a 64 of "a" (the published test vector).
        assert_eq!(TextKey::of("a"), TextKey { len: 1, hash: 0xaf63_dc4c_8601_ec8c });
        assert_ne!(TextKey::of("ab"), TextKey::of("ba"));
        let long = "x".repeat(10_000);
        assert_ne!(TextKey::of(&long), TextKey::of(&(long.clone() + "y")));
    }
}
