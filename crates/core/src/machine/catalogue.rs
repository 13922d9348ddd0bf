//! Keeping each request within the provider's catalogue bounds: the policy's offer fitted to
//! [`ToolLimits`](crate::catalogue::ToolLimits) by the precedence of [`crate::catalogue`], a
//! notice once per turn when it did not all fit, and the `find_tools` step answered here, without
//! running anything: the tools it finds take direct places from the next iteration on.
//!
//! Invariant: every request carries at most the provider's maximum of tools and bytes of
//! definitions, `find_tools` included; a tool the model finds is offered only if it was enabled
//! for this turn (the policy's offer), so the search can never widen what the person allowed.

use super::{Effect, Machine, Slot};
use crate::catalogue::{self, FIND_TOOLS, FOUND_PER_CALL};
use crate::event::{NoticeKind, ToolStatus};
use crate::policy::{Forcing, Offer};
use crate::types::Message;
use crate::vocab::ToolDef;

impl Machine<'_> {
    /// `offer` within the provider's limits; when some enabled tools do not fit, `find_tools`
    /// stands in for them (unless the request forces a choice) and the person is told once.
    pub(super) fn fit_offer(&mut self, mut offer: Offer, out: &mut Vec<Effect>) -> Offer {
        let used = self.used_tools();
        let registry = self.registry;
        let search = offer.forcing == Forcing::Auto;
        let fit = |tools: &[String]| {
            catalogue::fit(
                tools,
                |name| registry.candidate(name),
                [&self.options.forced, &self.found, &used],
                self.limits,
                search,
            )
        };
        let mut fitted = fit(&offer.tools);
        if !fitted.find_tools && fitted.direct.len() == offer.tools.len() {
            self.enabled.clear();
            return offer;
        }
        // Over the limit, the paging tool takes a direct place only when this request will send
        // it (a result is cut or compacted already); otherwise the place goes to another tool and
        // `find_tools` still reaches it.
        let paging_now = crate::paging::needed(&self.history) || !self.compaction.is_empty();
        if !paging_now && fitted.direct.iter().any(|n| n == crate::paging::TOOL) {
            let others: Vec<String> = offer.tools.iter().filter(|n| *n != crate::paging::TOOL).cloned().collect();
            fitted = fit(&others);
        }
        if !self.over_limit_noticed {
            self.over_limit_noticed = true;
            let limits = self.limits;
            Self::notice(
                NoticeKind::TooManyTools,
                format!(
                    "{} tools are enabled, but one request to this model's API carries at most {} tools and {} KB of tool definitions. {} are offered directly and the model can look up the rest with {FIND_TOOLS}. To choose which tools it gets directly, turn off the tools this chat does not need, or force the ones it should use.",
                    offer.tools.len(),
                    limits.max_tools,
                    limits.max_schema_bytes / 1024,
                    fitted.direct.len(),
                ),
                out,
            );
        }
        self.enabled = std::mem::replace(&mut offer.tools, fitted.direct);
        if fitted.find_tools {
            offer.tools.push(FIND_TOOLS.to_owned());
        }
        if let Forcing::AnyOf(names) = &mut offer.forcing {
            names.retain(|n| offer.tools.contains(n));
        }
        offer
    }

    /// Tools that ran for the model earlier in the conversation (a result that is not an
    /// error), the latest first, each once.
    fn used_tools(&self) -> Vec<String> {
        let mut used: Vec<String> = Vec::new();
        for message in self.history.iter().rev() {
            if let Message::Tool { name, is_error: false, .. } = message
                && !used.contains(name)
            {
                used.push(name.clone());
            }
        }
        used
    }

    /// Enabled this turn but not offered in this request.
    fn not_offered(&self) -> impl Iterator<Item = &ToolDef> {
        self.enabled
            .iter()
            .filter(|n| !self.offer.tools.contains(n))
            .filter_map(|n| self.registry.get(n).map(|t| t.def()))
    }

    /// The definition `find_tools` is offered with this iteration.
    pub(super) fn find_tools_def(&self) -> ToolDef {
        catalogue::find_tools_def(self.not_offered().count())
    }

    /// Whether `name` was enabled this turn though not offered in this request.
    pub(super) fn enabled_not_offered(&self, name: &str) -> bool {
        self.enabled.iter().any(|n| n == name) && !self.offer.tools.iter().any(|n| n == name)
    }

    /// Answers a `find_tools` call: the best matches among the tools not offered, which take
    /// direct places from the next iteration on (at most [`FOUND_PER_CALL`] a call).
    pub(super) fn answer_find_tools(&mut self, arguments: &str) -> Slot {
        let args: serde_json::Value = serde_json::from_str(arguments.trim()).unwrap_or_default();
        let query = match catalogue::query_of(&args) {
            Ok(q) => q.to_owned(),
            Err(problem) => return Slot::Answered(ToolStatus::Error, problem),
        };
        let not_offered = self.not_offered().count();
        let found = catalogue::search(&query, self.not_offered());
        let text = catalogue::describe_found(&query, &found, not_offered);
        let names: Vec<String> = found.iter().take(FOUND_PER_CALL).map(|d| d.name.clone()).collect();
        self.found.retain(|n| !names.contains(n));
        self.found.splice(0..0, names);
        Slot::Answered(ToolStatus::Ok, text)
    }
}
