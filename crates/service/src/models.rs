//! What a model holds and costs, as every turn and every view reads it: [`Service::model_spec`].
//!
//! Strongest first, field by field: what the person set on the profile (`ProfileOptions`), then
//! what the server's own model listing said (the last listing of that profile, kept in the store
//! so the next start and the CLI know it too; a turn never lists), then the model catalogue in use
//! ([`crate::catalogue`]: the bundled snapshot or a refreshed one), then, for the window alone, a
//! safe default that is said to be one. A profile at a local or private address is free unless
//! the person priced it or its listing states a price.
//!
//! Invariant: windows and prices reach a turn only through here (the turn builder reads it), so
//! the meter, compaction, the cost line and budgets agree; an unknown price stays unknown.

use crate::{Error, Result, Service, lock};
use serde::{Deserialize, Serialize};
use switchboard_core::Prices;
pub use switchboard_models::ModelSpec;
use switchboard_models::UNKNOWN_WINDOW;
use switchboard_providers::{ModelCapabilities, ModelInfo};
use switchboard_store::{ProfileOptions, ProviderProfile};

/// Where a model's window (or output limit, or prices) came from.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SpecSource {
    /// The person set it on the profile.
    Profile,
    /// The server's model listing.
    Listing,
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
    /// Where the output limit came from; `None`: unknown.
    pub max_output_source: Option<SpecSource>,
    /// Where the prices came from; `None`: unknown (and for a free local server).
    pub prices_source: Option<SpecSource>,
    /// Served from this computer or a private network, and not priced by the person: free.
    pub free: bool,
}

impl ResolvedModel {
    /// "context window unknown — assumed N tokens; …", when it is.
    pub fn window_note(&self, model: &str) -> Option<String> {
        (self.source == SpecSource::Default).then(|| {
            format!(
                "The context window of {model} is unknown; {} tokens are assumed. Set it in the profile if it is larger.",
                switchboard_core::tokens::thousands(UNKNOWN_WINDOW)
            )
        })
    }
}

/// What a listing said about one model, as kept between starts (only what it stated).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Listed {
    pub(crate) id: String,
    #[serde(default)]
    pub(crate) capabilities: ListedCapabilities,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) context_window: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_output: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prices: Option<Prices>,
}

/// [`ModelCapabilities`] as kept between starts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ListedCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tools: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    images: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pdf: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reasoning: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sampling: Option<bool>,
}

impl Listed {
    pub(crate) fn capabilities(&self) -> ModelCapabilities {
        let c = self.capabilities;
        ModelCapabilities { tools: c.tools, images: c.images, pdf: c.pdf, reasoning: c.reasoning, sampling: c.sampling }
    }
}

impl From<&ModelInfo> for Listed {
    fn from(m: &ModelInfo) -> Self {
        let c = m.capabilities;
        Listed {
            id: m.id.clone(),
            capabilities: ListedCapabilities {
                tools: c.tools,
                images: c.images,
                pdf: c.pdf,
                reasoning: c.reasoning,
                sampling: c.sampling,
            },
            context_window: m.context_window,
            max_output: m.max_output,
            prices: m.prices,
        }
    }
}

/// A profile's last listing, as kept in the store: for the address it was listed at.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Listing {
    pub(crate) base_url: String,
    pub(crate) models: Vec<Listed>,
}

/// The store key of a profile's last listing.
fn listing_key(profile: &str) -> String {
    format!("modelListing:{profile}")
}

/// Listings longer than this keep their first models only (OpenRouter lists a few hundred).
const MAX_LISTED: usize = 5_000;

impl Service {
    /// Keeps what `profile`'s listing said, for this session and the next start. A listing that
    /// cannot be stored is still used in this session (logged).
    pub(crate) fn remember_listing(&self, profile: &ProviderProfile, models: &[ModelInfo]) {
        let listing = Listing {
            base_url: profile.base_url.clone(),
            models: models.iter().take(MAX_LISTED).map(Listed::from).collect(),
        };
        if let Err(e) = self.inner.store.set_setting(&listing_key(&profile.name), &listing) {
            tracing::warn!("the model listing of '{}' could not be kept: {e}", profile.name);
        }
        lock(&self.inner.listed).insert(profile.name.clone(), listing);
    }

    /// Forgets a removed profile's listing.
    pub(crate) fn forget_listing(&self, profile: &str) {
        lock(&self.inner.listed).remove(profile);
        if let Err(e) = self.inner.store.delete_setting(&listing_key(profile)) {
            tracing::warn!("the model listing of '{profile}' could not be removed: {e}");
        }
    }

    /// What `profile`'s last listing (at its current address) said about `model`.
    pub(crate) fn listed(&self, profile: &ProviderProfile, model: &str) -> Option<Listed> {
        let mut listed = lock(&self.inner.listed);
        if !listed.contains_key(&profile.name) {
            let stored: Option<Listing> = self.inner.store.setting(&listing_key(&profile.name)).ok().flatten();
            listed.insert(profile.name.clone(), stored.unwrap_or_default());
        }
        let listing = listed.get(&profile.name)?;
        if listing.base_url != profile.base_url {
            return None;
        }
        listing.models.iter().find(|m| m.id == model).cloned()
    }

    /// What the catalogue in use says about `model` served by `profile` (the profile editor's
    /// placeholders), without the profile's overrides or the listing.
    pub fn catalogue_spec(&self, kind: &str, base_url: &str, model: &str) -> Option<ModelSpec> {
        self.inner.catalogues.current().catalogue.lookup(kind, base_url, model)
    }

    /// What `model` served by `profile` holds and costs. See the module docs for the order.
    pub fn model_spec(&self, profile: &ProviderProfile, model: &str) -> ResolvedModel {
        let known = self.catalogue_spec(&profile.kind, &profile.base_url, model).unwrap_or_default();
        let listed = self.listed(profile, model).unwrap_or_default();
        let set = &profile.options;
        let local = url::Url::parse(&profile.base_url).is_ok_and(|u| switchboard_net::names_local_address(&u));
        // A price the person set or the server states (a local proxy to a paid API) wins over
        // "local is free".
        let free = local && set.prices.is_none() && listed.prices.is_none();
        let first = |values: [(Option<u64>, SpecSource); 3]| values.into_iter().find_map(|(v, s)| Some((v?, s)));
        let (context_window, source) = first([
            (set.context_window, SpecSource::Profile),
            (listed.context_window, SpecSource::Listing),
            (known.context_window, SpecSource::Catalogue),
        ])
        .unwrap_or((UNKNOWN_WINDOW, SpecSource::Default));
        let max_output = first([
            (set.max_output_tokens, SpecSource::Profile),
            (listed.max_output, SpecSource::Listing),
            (known.max_output, SpecSource::Catalogue),
        ]);
        let prices = if free {
            Some((Prices::FREE, SpecSource::Default))
        } else {
            [
                (set.prices, SpecSource::Profile),
                (listed.prices, SpecSource::Listing),
                (known.prices, SpecSource::Catalogue),
            ]
            .into_iter()
            .find_map(|(p, s)| Some((p?, s)))
        };
        let spec = ModelSpec {
            context_window: Some(context_window),
            max_output: max_output.map(|(v, _)| v),
            prices: prices.map(|(p, _)| p),
            ..known
        };
        ResolvedModel {
            spec,
            source,
            max_output_source: max_output.map(|(_, s)| s),
            prices_source: prices.filter(|_| !free).map(|(_, s)| s),
            free,
        }
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

/// One model as Settings, the model picker and `switchboard models show` present it.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelDetails {
    /// The profile it was resolved for.
    pub provider: String,
    /// The model.
    pub model: String,
    /// Window, output limit, prices and where each came from.
    pub resolved: ResolvedModel,
    /// What it can do: the profile's override, else the listing, else the catalogue (images and
    /// PDFs), else the capability table.
    pub capabilities: ModelCapabilities,
    /// "The context window of … is unknown; … assumed", when it is.
    pub note: Option<String>,
}

/// At most this many models are described in one call (a picker shows a server's listing).
pub const MAX_DESCRIBED: usize = 5_000;

impl Service {
    /// `model` (else the profile's own) of the profile `provider` (else the default one).
    pub fn model_details(&self, provider: Option<&str>, model: Option<&str>) -> Result<ModelDetails> {
        let profile = self.profile(provider)?;
        let model = model.map(str::to_owned).or_else(|| profile.model.clone()).ok_or_else(|| {
            Error::config(format!("Name a model: the profile '{}' has no default model.", profile.name))
        })?;
        Ok(self.details(&profile, &model))
    }

    /// [`Service::model_details`] for each of `models` of the profile `provider`, in order.
    pub fn describe_models(&self, provider: &str, models: &[String]) -> Result<Vec<ModelDetails>> {
        let profile = self.profile(Some(provider))?;
        Ok(models.iter().take(MAX_DESCRIBED).map(|m| self.details(&profile, m)).collect())
    }

    fn details(&self, profile: &ProviderProfile, model: &str) -> ModelDetails {
        let resolved = self.model_spec(profile, model);
        ModelDetails {
            provider: profile.name.clone(),
            model: model.to_owned(),
            capabilities: self.model_capabilities(profile, model),
            note: resolved.window_note(model),
            resolved,
        }
    }
}
