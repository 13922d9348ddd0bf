//! Provider profiles (which API, where, which model), the default one, and the provider factory
//! that turns a profile into a ready [`Provider`]. Everything about an API kind comes from the
//! kind table ([`switchboard_providers::KINDS`]).

use crate::confirm::{self, Confirm, Refuse, Widening};
use crate::ipc::{ConnectionReport, ProviderInfo, TurnChoices};
use crate::keys::{KeyFrom, TurnKeys};
use crate::{Error, Result, Service, settings};
use switchboard_core::Provider;
use switchboard_providers::{ModelCapabilities, ProviderKind, ProviderSettings};
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
        self.resolve_with(choices, &self.service.turn_keys())
    }

    /// [`ProviderFactory::resolve`] with the key from a turn's reads (a turn reads each key once).
    pub(crate) fn resolve_with(&self, choices: &TurnChoices, keys: &TurnKeys) -> Result<ResolvedProvider> {
        let profile = self.service.profile(choices.provider.as_deref())?;
        let model = choices.model.clone().or_else(|| profile.model.clone()).ok_or_else(|| {
            Error::config(format!(
                "No model chosen for provider '{}'. Pick a model, or set the profile's default model.",
                profile.name
            ))
        })?;
        let provider = self.provider_with(&profile, keys)?;
        Ok(ResolvedProvider { profile, model, provider })
    }

    /// A provider for `profile`, with its key. Refuses, sending nothing, when the key was saved
    /// for another origin than the one the profile points at now (a profile changed behind the
    /// service's back, say by an older version or by hand): only saving the profile again, which
    /// asks the person, moves a key.
    pub fn provider(&self, profile: &ProviderProfile) -> Result<Box<dyn Provider>> {
        self.provider_with(profile, &self.service.turn_keys())
    }

    /// [`ProviderFactory::provider`] with the key from a turn's reads.
    pub(crate) fn provider_with(&self, profile: &ProviderProfile, keys: &TurnKeys) -> Result<Box<dyn Provider>> {
        let kind = ProviderKind::parse(&profile.kind)?;
        let api_key = keys.provider_key_from(profile)?.map(|(key, _)| key);
        if api_key.is_some()
            && let Some(saved_for) = self.service.key_origin(&profile.name)?
            && confirm::origin(&profile.base_url).as_deref() != Some(saved_for.as_str())
        {
            return Err(Error::new(
                switchboard_core::ErrorKind::Auth,
                format!(
                    "The key of '{}' was saved for {saved_for}, but the profile now points at {}. Nothing was sent. \
                     Save the profile again to confirm the new address, or set its key again.",
                    profile.name, profile.base_url
                ),
            ));
        }
        Ok(kind.provider(ProviderSettings {
            base_url: profile.base_url.clone(),
            api_key,
            store: profile.options.store,
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
                options: p.options,
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
    /// the kind's default. Refuses to send a key to a new origin (see
    /// [`Service::add_provider_confirmed`]).
    pub fn add_provider(&self, profile: &ProviderProfile, make_default: bool) -> Result<()> {
        self.add_provider_confirmed(profile, make_default, &Refuse)
    }

    /// [`Service::add_provider`], asking `confirm` when the profile's key would go to another
    /// origin (scheme, host or port) than it was saved for. May block on `confirm`.
    pub fn add_provider_confirmed(
        &self,
        profile: &ProviderProfile,
        make_default: bool,
        confirm: &dyn Confirm,
    ) -> Result<()> {
        let store = &self.inner.store;
        let kind = ProviderKind::parse(&profile.kind)?;
        profile.options.generation.check().map_err(Error::config)?;
        crate::models::check_overrides(&profile.options)?;
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
        let new_origin = confirm::origin(&base_url)
            .ok_or_else(|| Error::config(format!("The base URL '{base_url}' is not a valid URL.")))?;
        let profile = ProviderProfile { kind: kind.id.into(), base_url, ..profile.clone() };
        if let Some(change) = self.key_origin_change(&profile, &new_origin)? {
            self.require_confirmation(vec![change], confirm)?;
        }
        store.upsert_provider(&profile)?;
        self.record_key_origin(&profile.name, Some(new_origin))?;
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
        self.forget_listing(name);
        if store.setting::<String>(settings::DEFAULT_PROVIDER)?.as_deref() == Some(name) {
            store.delete_setting(settings::DEFAULT_PROVIDER)?;
        }
        Ok(())
    }

    /// Removes a provider profile and its key. (Removing only the profile keeps the origin its
    /// key was saved for, so a profile of the same name elsewhere still asks before using it.)
    pub fn remove_provider_and_key(&self, name: &str) -> Result<()> {
        self.remove_provider(name)?;
        match self.keys().delete(name) {
            Ok(_) => self.record_key_origin(name, None)?,
            Err(e) => tracing::warn!("the key of '{name}' could not be deleted: {e}"),
        }
        Ok(())
    }

    /// Whether saving `profile` (at `new_origin`) would send a key somewhere it has not been
    /// meant for: a key is available for it, and it was saved for another origin (recorded when
    /// the key or the profile was saved; else where the profile points now; else, for a kind's
    /// usual variable such as `OPENAI_API_KEY`, the kind's own API). A change of path only is not
    /// one; neither is any change while no key is available.
    pub(crate) fn key_origin_change(&self, profile: &ProviderProfile, new_origin: &str) -> Result<Option<Widening>> {
        let Some((_, key_from)) = self.provider_key_from(profile)? else { return Ok(None) };
        let mut saved_for = self.key_origin(&profile.name)?;
        if saved_for.is_none() {
            saved_for = self.inner.store.provider(&profile.name)?.and_then(|p| confirm::origin(&p.base_url));
        }
        let kind = ProviderKind::parse(&profile.kind)?;
        if saved_for.is_none() && key_from == KeyFrom::KindVariable {
            saved_for = confirm::origin(kind.default_base_url);
        }
        Ok(saved_for.filter(|o| o != new_origin).map(|from| Widening::KeyOrigin {
            profile: profile.name.clone(),
            variable: (key_from == KeyFrom::KindVariable).then(|| kind.key_env.to_owned()),
            from,
            to: new_origin.to_owned(),
        }))
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

    /// The models a provider lists, through its API's own listing. What the listing says about
    /// each model is remembered (in the store too) for [`Service::model_capabilities`] and
    /// [`Service::model_spec`].
    pub async fn models(&self, provider: Option<&str>) -> Result<Vec<String>> {
        let profile = self.profile(provider)?;
        let provider = self.provider_factory().provider(&profile)?;
        // The server's error text may quote the key back.
        let listed = provider.list_model_infos().await.map_err(|e| self.redacted(e))?;
        self.remember_listing(&profile, &listed);
        Ok(listed.into_iter().map(|m| m.id).collect())
    }

    fn redacted(&self, e: switchboard_core::ProviderError) -> Error {
        let mut e = Error::from(e);
        e.message = self.redactor().redact(&e.message).into_owned();
        e
    }

    /// What `model` of `profile` can do: the profile's override, else what its API's listing
    /// said (when it was listed in this session), else, for images and PDFs, what the model
    /// catalogue says of this very model (`supports_vision`, `supports_pdf_input`), else the
    /// capability table (families).
    pub fn model_capabilities(&self, profile: &ProviderProfile, model: &str) -> ModelCapabilities {
        let listed = self.listed(profile, model).map(|m| m.capabilities()).unwrap_or_default();
        let set = ModelCapabilities { tools: profile.options.tools, ..Default::default() };
        let known = self.catalogue_spec(&profile.kind, &profile.base_url, model).unwrap_or_default();
        let catalogue = ModelCapabilities { images: known.images, pdf: known.pdf, ..Default::default() };
        set.or(listed).or(catalogue).or(switchboard_providers::model_capabilities(&profile.kind, model))
    }

    /// Makes one tiny request with the profile (and lists its models) and says in one line what
    /// works and what does not: the address, the key, the model, tools.
    pub async fn test_provider(&self, name: Option<&str>) -> Result<ConnectionReport> {
        let profile = self.profile(name)?;
        let provider = self.provider_factory().provider(&profile)?;
        let kind = ProviderKind::parse(&profile.kind)?;
        Ok(crate::connection::test(&profile, kind, provider.as_ref(), &|e| self.redacted(e)).await)
    }
}
