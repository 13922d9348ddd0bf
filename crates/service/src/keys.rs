//! Keys: which key store is in use (the OS keychain, environment variables, or memory for this
//! session), the fallbacks when the keychain cannot be used, and setting, deleting and describing
//! keys. A key value goes into a key store and comes out only to build a request header.
//!
//! A turn reads keys through its `TurnKeys`: each name at most once per turn, the agent calls
//! and tools inside it included.

use crate::ipc::{self, KeyMode};
use crate::{Error, Result, Service, confirm, lock};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use switchboard_core::Secrets;
use switchboard_secrets::{EnvStore, KeyringStore, Layered, MemoryStore, SecretStore, SecretValue};
use switchboard_store::ProviderProfile;

/// How a shell wants the keychain used when it opens the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeychainAccess {
    /// Probe it now (a write/read/delete round trip) and explain an unusable one: for commands
    /// that write keys, which must not fail later.
    Checked,
    /// Read through it without a probe, skipping it when a read takes longer than a few
    /// seconds: for commands that only read a key.
    Unchecked,
    /// Start on environment variables; the shell calls [`Service::connect_keychain`] when it can
    /// afford a probe that may take seconds (the desktop, after its window is up).
    Deferred,
}

/// The settings row that remembers, per key name, the origin (scheme, host, port) its key was
/// saved for. Not a setting anyone edits: it is outside `settings::KEYS`, so neither shell can
/// read or write it through `setting` / `set_setting`; only saving a profile (confirmed when the
/// origin changes) and setting a key write it.
const KEY_ORIGINS: &str = "keyOrigins";

/// Where a profile's key comes from, which decides what it was meant for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyFrom {
    /// Stored (or `SWITCHBOARD_KEY_<NAME>`) under the profile's own name.
    Named,
    /// The kind's usual variable (`OPENAI_API_KEY`): meant for the kind's own API.
    KindVariable,
}

/// How long an unchecked keychain read may take before the keychain is skipped.
const UNCHECKED_READ_TIMEOUT: Duration = Duration::from_secs(3);

/// The key store in use, what it is, and why the keychain is not used if it is not.
#[derive(Clone)]
pub(crate) struct Keys {
    pub(crate) store: Arc<dyn SecretStore>,
    pub(crate) mode: KeyMode,
    pub(crate) problem: Option<String>,
}

/// `SWITCHBOARD_KEYCHAIN=off` keeps to environment variables (headless machines, tests).
fn keychain_turned_off() -> bool {
    std::env::var_os("SWITCHBOARD_KEYCHAIN").is_some_and(|v| v == "off")
}

const TURNED_OFF: &str = "The keychain is turned off (SWITCHBOARD_KEYCHAIN=off); keys come from environment variables.";

/// The keychain with the environment behind it.
fn keychain_then_env(keychain: KeyringStore) -> Arc<dyn SecretStore> {
    Arc::new(Layered::new(vec![Arc::new(keychain), Arc::new(EnvStore::new())]))
}

/// The key store a shell asked for.
pub(crate) fn key_store(access: KeychainAccess) -> (Arc<dyn SecretStore>, KeyMode, Option<String>) {
    let env: Arc<dyn SecretStore> = Arc::new(EnvStore::new());
    if keychain_turned_off() {
        return (env, KeyMode::Environment, Some(TURNED_OFF.into()));
    }
    match access {
        KeychainAccess::Deferred => (env, KeyMode::Environment, None),
        KeychainAccess::Unchecked => {
            (keychain_then_env(KeyringStore::unchecked().with_timeout(UNCHECKED_READ_TIMEOUT)), KeyMode::Keychain, None)
        }
        KeychainAccess::Checked => match KeyringStore::probe() {
            Ok(keychain) => (keychain_then_env(keychain), KeyMode::Keychain, None),
            Err(e) => (env, KeyMode::Environment, Some(e.to_string())),
        },
    }
}

impl Service {
    pub(crate) fn keys(&self) -> Arc<dyn SecretStore> {
        Arc::clone(&self.inner.keys.read().unwrap_or_else(|p| p.into_inner()).store)
    }

    fn set_key_store(&self, store: Arc<dyn SecretStore>, mode: KeyMode, problem: Option<String>) {
        *self.inner.keys.write().unwrap_or_else(|p| p.into_inner()) = Keys { store, mode, problem };
    }

    /// Probes the OS keychain and switches to it when it works; otherwise records why, for
    /// Settings to show with the choice between environment variables and keys kept for this
    /// session. Blocks (a keychain can take seconds to answer): call it off the async workers.
    pub fn connect_keychain(&self) {
        if keychain_turned_off() {
            self.set_key_store(Arc::new(EnvStore::new()), KeyMode::Environment, Some(TURNED_OFF.into()));
            return;
        }
        match KeyringStore::probe() {
            Ok(keychain) => self.set_key_store(keychain_then_env(keychain), KeyMode::Keychain, None),
            Err(e) => {
                tracing::warn!("{e}");
                self.set_key_store(Arc::new(EnvStore::new()), KeyMode::Environment, Some(e.to_string()));
            }
        }
    }

    /// The person's choice of where keys go: environment variables only, keys kept in memory for
    /// this session (never a file), or the keychain again (probed first). Blocks like
    /// [`Service::connect_keychain`].
    pub fn use_key_fallback(&self, mode: KeyMode) -> Result<ipc::KeychainStatus> {
        let problem = self.keychain_status().problem;
        match mode {
            KeyMode::Memory => self.set_key_store(
                Arc::new(Layered::new(vec![Arc::new(MemoryStore::new()), Arc::new(EnvStore::new())])),
                mode,
                problem,
            ),
            KeyMode::Environment => self.set_key_store(Arc::new(EnvStore::new()), mode, problem),
            KeyMode::Keychain => {
                let keychain =
                    KeyringStore::probe().map_err(|e| Error::new(switchboard_core::ErrorKind::Auth, e.to_string()))?;
                self.set_key_store(keychain_then_env(keychain), mode, None);
            }
        }
        Ok(self.keychain_status())
    }

    /// Where keys are kept now, and what went wrong with the keychain if it is not used.
    pub fn keychain_status(&self) -> ipc::KeychainStatus {
        let keys = self.inner.keys.read().unwrap_or_else(|p| p.into_inner());
        ipc::KeychainStatus { mode: keys.mode, problem: keys.problem.clone() }
    }

    /// Fails with the keychain's problem when keys cannot be written where the person expects
    /// (the CLI's `keys set` and `keys delete`).
    pub fn require_writable_keys(&self) -> Result<()> {
        match self.keychain_status().problem {
            Some(problem) => Err(Error::new(switchboard_core::ErrorKind::Auth, problem)),
            None => Ok(()),
        }
    }

    /// The keys Settings manages: one per provider profile, plus the web search services.
    pub fn keys_overview(&self) -> Result<Vec<ipc::KeyInfo>> {
        let mut out = Vec::new();
        for p in self.inner.store.providers()? {
            let label = format!("Provider '{}' ({})", p.name, p.base_url);
            out.push(self.key_info(&p.name, label, ipc::KeyPurpose::Provider));
        }
        out.push(self.key_info("tavily", "Tavily (web search)".into(), ipc::KeyPurpose::Tool));
        out.push(self.key_info("exa", "Exa (web search)".into(), ipc::KeyPurpose::Tool));
        Ok(out)
    }

    fn key_info(&self, name: &str, label: String, purpose: ipc::KeyPurpose) -> ipc::KeyInfo {
        let status =
            switchboard_secrets::status(self.keys().as_ref(), name).unwrap_or(switchboard_secrets::KeyStatus {
                name: name.to_owned(),
                is_set: false,
                last4: None,
                source: "unavailable",
            });
        ipc::KeyInfo {
            name: name.to_owned(),
            label,
            purpose,
            is_set: status.is_set,
            last4: status.last4,
            source: status.source.to_owned(),
            env_var: switchboard_secrets::env_var_for(name),
        }
    }

    /// Stores or replaces a key. The value goes to the key store and nowhere else. A profile's
    /// key is from now on sent only to the origin the profile points at now.
    pub fn set_key(&self, name: &str, value: &str) -> Result<ipc::KeyInfo> {
        let value = value.trim();
        if value.is_empty() {
            return Err(Error::config("The key is empty."));
        }
        switchboard_secrets::validate_name(name).map_err(|e| Error::config(e.to_string()))?;
        let value = SecretValue::new(value);
        crate::redact::remember(&value);
        self.keys().set(name, &value)?;
        if let Some(profile) = self.inner.store.provider(name)? {
            self.record_key_origin(name, confirm::origin(&profile.base_url))?;
        }
        self.key_info_for(name)
    }

    /// Deletes a key.
    pub fn delete_key(&self, name: &str) -> Result<ipc::KeyInfo> {
        self.keys().delete(name)?;
        self.key_info_for(name)
    }

    fn key_info_for(&self, name: &str) -> Result<ipc::KeyInfo> {
        Ok(self
            .keys_overview()?
            .into_iter()
            .find(|k| k.name == name)
            .unwrap_or_else(|| self.key_info(name, name.to_owned(), ipc::KeyPurpose::Tool)))
    }

    /// The key of a profile: the key store, then `SWITCHBOARD_KEY_<NAME>`, then the kind's usual
    /// variable. `None` when there is none (local servers often need none).
    pub fn provider_key(&self, profile: &ProviderProfile) -> Result<Option<SecretValue>> {
        Ok(self.provider_key_from(profile)?.map(|(key, _)| key))
    }

    /// [`Service::provider_key`], and where it came from.
    pub(crate) fn provider_key_from(&self, profile: &ProviderProfile) -> Result<Option<(SecretValue, KeyFrom)>> {
        profile_key(profile, self.keys().get(&profile.name))
    }

    fn key_origins(&self) -> Result<BTreeMap<String, String>> {
        Ok(self.inner.store.setting(KEY_ORIGINS)?.unwrap_or_default())
    }

    /// The origin the key `name` was saved for, if one was recorded.
    pub(crate) fn key_origin(&self, name: &str) -> Result<Option<String>> {
        Ok(self.key_origins()?.remove(name))
    }

    /// Remembers (or, with `None`, forgets) the origin the key `name` is for.
    pub(crate) fn record_key_origin(&self, name: &str, origin: Option<String>) -> Result<()> {
        let mut all = self.key_origins()?;
        let changed = match origin {
            Some(o) => all.insert(name.to_owned(), o.clone()).as_ref() != Some(&o),
            None => all.remove(name).is_some(),
        };
        if changed {
            self.inner.store.set_setting(KEY_ORIGINS, &all)?;
        }
        Ok(())
    }

    /// Every secret value the service knows a name for (each profile's key, the web search
    /// keys), for redacting text that came from outside: a server that quotes the key back must
    /// not put it into an event, the database, a log or an export. Reads the key store: call it
    /// once per turn or per failure, not per event (a turn reads them once, through its `TurnKeys`).
    pub fn known_secrets(&self) -> Vec<SecretValue> {
        TurnKeys::new(self).known_secrets()
    }

    /// A redactor of [`Service::known_secrets`].
    pub fn redactor(&self) -> crate::redact::Redactor {
        TurnKeys::new(self).redactor().clone()
    }

    /// The keys of one turn, read from the key store as they are first needed (see [`TurnKeys`]).
    pub(crate) fn turn_keys(&self) -> Arc<TurnKeys> {
        Arc::new(TurnKeys::new(self))
    }

    /// Where a profile's key can be put, in words ("Set the key in SWITCHBOARD_KEY_X (or
    /// OPENAI_API_KEY).") — the hint after a rejected key.
    pub fn key_hint(&self, profile_name: &str) -> String {
        let usual = self
            .inner
            .store
            .provider(profile_name)
            .ok()
            .flatten()
            .and_then(|p| switchboard_providers::ProviderKind::parse(&p.kind).ok())
            .map_or("the provider's variable", |k| k.key_env);
        format!("Set the key in {} (or {usual}).", switchboard_secrets::env_var_for(profile_name))
    }
}

/// A profile's key from what the key store gave under its name (`stored`), else
/// `SWITCHBOARD_KEY_<NAME>`, else the kind's usual variable; remembered for redaction.
fn profile_key(
    profile: &ProviderProfile,
    stored: std::result::Result<Option<SecretValue>, switchboard_secrets::Error>,
) -> Result<Option<(SecretValue, KeyFrom)>> {
    let kind = switchboard_providers::ProviderKind::parse(&profile.kind)?;
    let found = match stored {
        Ok(Some(key)) => Some((key, KeyFrom::Named)),
        Ok(None) => None,
        // A local server needs no key, so an unreadable keychain must not block the turn; if
        // the provider does need one, its 401 says so and Settings explains the keychain.
        Err(e) => {
            tracing::warn!("the key store could not be read: {e}");
            None
        }
    };
    let found = match found {
        Some(found) => Some(found),
        None => match EnvStore::new().get(&profile.name)? {
            Some(key) => Some((key, KeyFrom::Named)),
            None => EnvStore::new()
                .with_fallback(&profile.name, kind.key_env)
                .get(&profile.name)?
                .map(|key| (key, KeyFrom::KindVariable)),
        },
    };
    if let Some((key, _)) = &found {
        crate::redact::remember(key);
    }
    Ok(found)
}

/// The keys of one turn, and of every agent call inside it: each name is read from the key store
/// at most once per turn (a keychain read can take a D-Bus round trip, or seconds when it hangs),
/// then answered from memory — the turn's provider key, its redactor, each agent call's provider
/// key and redactor, and every tool's secrets. Created when a turn is prepared and shared by
/// `Arc` with the agent calls; nothing is read until something asks. A key changed during the
/// turn counts from the next turn.
pub(crate) struct TurnKeys {
    service: Service,
    store: Arc<dyn SecretStore>,
    /// What the key store gave per name, in this turn.
    read: Mutex<HashMap<String, std::result::Result<Option<SecretValue>, switchboard_secrets::Error>>>,
    /// Every known secret's redactor, made on first need.
    redactor: OnceLock<crate::redact::Redactor>,
}

impl TurnKeys {
    fn new(service: &Service) -> TurnKeys {
        TurnKeys { service: service.clone(), store: service.keys(), read: Mutex::default(), redactor: OnceLock::new() }
    }

    /// What the key store holds under `name`: read once, then from memory.
    fn stored(&self, name: &str) -> std::result::Result<Option<SecretValue>, switchboard_secrets::Error> {
        // Held while reading, so two agent calls asking at once read the name once.
        let mut read = lock(&self.read);
        read.entry(name.to_owned()).or_insert_with(|| self.store.get(name)).clone()
    }

    /// [`Service::provider_key_from`], from this turn's reads.
    pub(crate) fn provider_key_from(&self, profile: &ProviderProfile) -> Result<Option<(SecretValue, KeyFrom)>> {
        profile_key(profile, self.stored(&profile.name))
    }

    /// [`Service::known_secrets`], from this turn's reads.
    fn known_secrets(&self) -> Vec<SecretValue> {
        let mut out = Vec::new();
        for p in self.service.inner.store.providers().unwrap_or_default() {
            if let Ok(Some((key, _))) = self.provider_key_from(&p) {
                out.push(key);
            }
        }
        for name in ["tavily", "exa"] {
            if let Ok(Some(key)) = self.stored(name) {
                crate::redact::remember(&key);
                out.push(key);
            }
        }
        out
    }

    /// A redactor of every secret the service knows a name for, made once per turn.
    pub(crate) fn redactor(&self) -> &crate::redact::Redactor {
        self.redactor.get_or_init(|| {
            let secrets = self.known_secrets();
            crate::redact::Redactor::new(secrets.iter().map(SecretValue::expose))
        })
    }
}

/// Tools read their keys (`{{secret:NAME}}`, a web search key) through the turn's reads too.
impl Secrets for TurnKeys {
    fn get(&self, name: &str) -> std::result::Result<Option<SecretValue>, String> {
        self.stored(name).map_err(|e| e.to_string())
    }
}
