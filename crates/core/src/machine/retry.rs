//! Retries: a response that failed before any output is asked again, after a backoff that
//! doubles per attempt (spread by jitter, capped, or as long as the server asked); a model that
//! refuses tools is asked again once without them.
//!
//! Invariant: nothing is retried once output has started; the person is told before each wait.

use super::{Effect, Machine, Phase, StreamEnd};
use crate::event::NoticeKind;
use crate::policy::Offer;

impl Machine<'_> {
    /// Spreads retry backoff with jitter drawn from `seed` (the driver passes a random one), so
    /// many clients failing together do not retry together: each backoff wait becomes a value
    /// between half of it and all of it, still under `retry_max_delay`. A wait the server asked
    /// for is kept as asked. Without a seed (or with 0) waits are exact.
    #[must_use]
    pub fn with_retry_jitter(mut self, seed: u64) -> Self {
        self.jitter = seed;
        self
    }

    /// The next jitter factor in [0.5, 1.0], or 1.0 without jitter.
    fn jitter_factor(&mut self) -> f64 {
        if self.jitter == 0 {
            return 1.0;
        }
        let mut x = self.jitter;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.jitter = x;
        0.5 + 0.5 * ((x >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// A response ended: retried while nothing was output, else the iteration ends.
    pub(super) fn end_stream(&mut self, mut end: StreamEnd, out: &mut Vec<Effect>) {
        if let StreamEnd::Failed(error) = &mut end
            && !self.it.output_started
            && super::compact::is_too_long(error)
            && self.on_too_long(error, out)
        {
            return;
        }
        if let StreamEnd::Failed(error) = &end
            && error.tools_unsupported
            && !self.it.output_started
            && !self.offer.tools.is_empty()
        {
            // Asking again without tools costs one request and answers the person; an error
            // would only tell them to turn tools off by hand.
            self.tools_refused = true;
            self.offer = Offer::none();
            Self::notice(
                NoticeKind::ToolUnavailable,
                format!(
                    "{} does not take tools, so it is answering without them. To stop offering them, set \"Tools\" to off in the profile.",
                    self.model
                ),
                out,
            );
            return self.start_attempt(out);
        }
        if let StreamEnd::Failed(error) = &end
            && !self.it.output_started
            && error.is_retryable()
            && self.retries < self.config.max_retries
        {
            self.retries += 1;
            let backoff = self.config.retry_base_delay.saturating_mul(1 << (self.retries - 1).min(16));
            let backoff = backoff.min(self.config.retry_max_delay).mul_f64(self.jitter_factor());
            let delay = error.retry_after.unwrap_or(backoff).min(self.config.retry_max_delay);
            Self::notice(
                NoticeKind::Retrying,
                format!(
                    "{} Retrying in {:.1} s (attempt {} of {}).",
                    error.message,
                    delay.as_secs_f32(),
                    self.retries + 1,
                    self.config.max_retries + 1
                ),
                out,
            );
            out.push(Effect::Flush);
            out.push(Effect::WaitRetry { delay });
            self.phase = Phase::WaitingRetry;
            return;
        }
        self.end_iteration(end, out);
    }
}
