//! Provider profiles (which API, where, which model), the default one, and the provider factory
//! that turns a profile into a ready [`Provider`]. Everything about an API kind comes from the
//! kind table ([`switchboard_providers::KINDS`]).

use crate::ipc::{ProviderInfo, TurnChoices};
use crate::{Error, Result, Service, settings};
use switchboard_core::Provider;
use switchboard_providers::{ProviderKind, ProviderSettings};
use switchboard_store::ProviderProfile;

/// A profile resolved for a turn: the profile, the model, and the provider to call.
pub struct ResolvedProvider {
    /// The profile used.
    pub profile: ProviderProfile,
    /// The model: the one asked for, else the profile's.
    pub model: String,
    /// The provider, with the profile's key.
    pub provider: Box<dyn Provider>,
}

impl std::fmt::Debug for ResolvedProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResolvedProvider").field("profile", &self.profile.name).field("model", &self.model).finish()
    }
}

/// Builds providers for profiles: what the service uses for a turn and what an agent will use
/// for its own model. Cheap to clone.
#[derive(Clone)]
pub struct ProviderFactory {
    service: Service,
}

impl std::fmt::Debug for ProviderFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProviderFactory")
    }
}

impl ProviderFactory {
    /// The profile and model `choices` name (the default profile and its model when they name
    /// none) and a provider for them. Fails, writing nothing, when either is missing.
    pub fn resolve(&self, choices: &TurnChoices) -> Result<ResolvedProvider> {
        let profile = self.service.profile(choices.provider.as_deref())?;
        let model = choices.model.clone().or_else(|| profile.model.clone()).ok_or_else(|| {
            Error::config(format!(
                "No model chosen for provider '{}'. Pick a model, or set the profile's default model.",
                profile.name
            ))
        })?;
        let provider = self.provider(&profile)?;
        Ok(ResolvedProvider { profile, model, provider })
    }

    /// A provider for `profile`, with its key.
    pub fn provider(&self, profile: &ProviderProfile) -> Result<Box<dyn Provider>> {
        let kind = ProviderKind::parse(&profile.kind)?;
        Ok(kind.provider(ProviderSettings {
            base_url: profile.base_url.clone(),
            api_key: self.service.provider_key(profile)?,
        })?)
    }
}

impl Service {
    /// The provider factory.
    pub fn provider_factory(&self) -> ProviderFactory {
        ProviderFactory { service: self.clone() }
    }

    /// Provider profiles, the default marked.
    pub fn providers(&self) -> Result<Vec<ProviderInfo>> {
        let default = self.default_provider_name()?;
        Ok(self
            .inner
            .store
            .providers()?
            .into_iter()
            .map(|p| ProviderInfo {
                is_default: default.as_deref() == Some(p.name.as_str()),
                name: p.name,
                kind: p.kind,
                base_url: p.base_url,
                model: p.model,
            })
            .collect())
    }

    fn default_provider_name(&self) -> Result<Option<String>> {
        let store = &self.inner.store;
        if let Some(name) = store.setting::<String>(settings::DEFAULT_PROVIDER)? {
            return Ok(Some(name));
        }
        let all = store.providers()?;
        Ok(if all.len() == 1 { Some(all[0].name.clone()) } else { None })
    }

    /// Adds or replaces a profile; the first one becomes the default. An empty base URL means
    /// the kind's default.
    pub fn add_provider(&self, profile: &ProviderProfile, make_default: bool) -> Result<()> {
        let store = &self.inner.store;
        let kind = ProviderKind::parse(&profile.kind)?;
        switchboard_secrets::validate_name(&profile.name)
            .map_err(|e| Error::config(format!("Invalid profile name: {e}")))?;
        let base_url = if profile.base_url.trim().is_empty() {
            kind.default_base_url.to_owned()
        } else {
            profile.base_url.clone()
        };
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(Error::config(format!("The base URL '{base_url}' must start with http:// or https://.")));
        }
        let profile = ProviderProfile { kind: kind.id.into(), base_url, ..profile.clone() };
        store.upsert_provider(&profile)?;
        if make_default || store.setting::<String>(settings::DEFAULT_PROVIDER)?.is_none() {
            store.set_setting(settings::DEFAULT_PROVIDER, &profile.name)?;
        }
        Ok(())
    }

    /// Removes a profile.
    pub fn remove_provider(&self, name: &str) -> Result<()> {
        let store = &self.inner.store;
        self.profile(Some(name))?;
        store.delete_provider(name)?;
        if store.setting::<String>(settings::DEFAULT_PROVIDER)?.as_deref() == Some(name) {
            store.delete_setting(settings::DEFAULT_PROVIDER)?;
        }
        Ok(())
    }

    /// Removes a provider profile and its key.
    pub fn remove_provider_and_key(&self, name: &str) -> Result<()> {
        self.remove_provider(name)?;
        if let Err(e) = self.keys().delete(name) {
            tracing::warn!("the key of '{name}' could not be deleted: {e}");
        }
        Ok(())
    }

    /// The profile `name`, or the default one; the error says how to add one.
    pub fn profile(&self, name: Option<&str>) -> Result<ProviderProfile> {
        let profiles = self.inner.store.providers()?;
        let known = || {
            if profiles.is_empty() {
                "No provider profiles exist yet.".to_owned()
            } else {
                format!("Known profiles: {}.", profiles.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", "))
            }
        };
        let wanted = match name {
            Some(n) => n.to_owned(),
            None => self.default_provider_name()?.ok_or_else(|| {
                Error::config(format!(
                    "No provider chosen. Add one (kind, base URL, model) and make it the default. {}",
                    known()
                ))
            })?,
        };
        profiles.iter().find(|p| p.name == wanted).cloned().ok_or_else(|| {
            Error::config(format!(
                "Unknown provider '{wanted}'. {} Add it with `switchboard providers add {wanted} --kind openai --base-url URL`.",
                known()
            ))
        })
    }

    /// The models a provider lists, through its API's own listing.
    pub async fn models(&self, provider: Option<&str>) -> Result<Vec<String>> {
        let profile = self.profile(provider)?;
        let provider = self.provider_factory().provider(&profile)?;
        Ok(provider.list_models().await?)
    }
}
