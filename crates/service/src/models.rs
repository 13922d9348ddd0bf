//! What a model holds and costs, as every turn and every view reads it: [`Service::model_spec`].
//!
//! Strongest first: what the person set on the profile (`ProfileOptions`), then the model
//! catalogue (`switchboard-models`), then, for the window alone, a safe default that is said to
//! be one. A profile at a local or private address is free unless the person priced it.
//!
//! Invariant: windows and prices reach a turn only through here (the turn builder reads it), so
//! the meter, compaction, the cost line and budgets agree; an unknown price stays unknown.

use crate::{Error, Result, Service};
use serde::Serialize;
use switchboard_models::{Catalogue, ModelSpec, UNKNOWN_WINDOW};
use switchboard_store::{ProfileOptions, ProviderProfile};

/// Where a model's window came from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SpecSource {
    /// The person set it on the profile.
    Profile,
    /// The model catalogue.
    Catalogue,
    /// Nobody knows it: [`UNKNOWN_WINDOW`] is assumed.
    Default,
}

/// A model's facts as a turn uses them.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedModel {
    /// Window, output limit, prices (`None`: unknown), capabilities. The window is always set.
    pub spec: ModelSpec,
    /// Where the window came from.
    pub source: SpecSource,
    /// Served from this computer or a private network, and not priced by the person: free.
    pub free: bool,
}

impl ResolvedModel {
    /// "context window unknown — assumed N tokens; …", when it is.
    pub fn window_note(&self, model: &str) -> Option<String> {
        (self.source == SpecSource::Default).then(|| {
            format!(
                "The context window of {model} is unknown; {UNKNOWN_WINDOW} tokens are assumed. Set it in the profile if it is larger."
            )
        })
    }
}

impl Service {
    /// What `model` served by `profile` holds and costs. See the module docs for the order.
    pub fn model_spec(&self, profile: &ProviderProfile, model: &str) -> ResolvedModel {
        let known = Catalogue::bundled().lookup(&profile.kind, &profile.base_url, model).unwrap_or_default();
        let set = &profile.options;
        let local = url::Url::parse(&profile.base_url).is_ok_and(|u| switchboard_net::names_local_address(&u));
        let free = local && set.prices.is_none();
        let (context_window, source) = match (set.context_window, known.context_window) {
            (Some(w), _) => (w, SpecSource::Profile),
            (None, Some(w)) => (w, SpecSource::Catalogue),
            (None, None) => (UNKNOWN_WINDOW, SpecSource::Default),
        };
        let prices = if free { Some(switchboard_core::Prices::FREE) } else { set.prices.or(known.prices) };
        let spec = ModelSpec {
            context_window: Some(context_window),
            max_output: set.max_output_tokens.or(known.max_output),
            prices,
            ..known
        };
        ResolvedModel { spec, source, free }
    }
}

/// Refuses a window or output limit of zero and a price that is not a number of zero or more.
pub(crate) fn check_overrides(options: &ProfileOptions) -> Result<()> {
    if options.context_window == Some(0) {
        return Err(Error::config(
            "A context window of 0 tokens cannot hold a message; leave it empty to use the catalogue's.",
        ));
    }
    if options.max_output_tokens == Some(0) {
        return Err(Error::config(
            "An output limit of 0 tokens leaves no room for an answer; leave it empty to use the catalogue's.",
        ));
    }
    if options.prices.is_some_and(|p| !p.is_valid()) {
        return Err(Error::config("Prices must be numbers of zero or more (US dollars per million tokens)."));
    }
    Ok(())
}
