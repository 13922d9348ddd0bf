//! The engine as a service: what a shell (the desktop app, the CLI) needs, behind one API.
//!
//! A [`Service`] owns the store, the keys, the tool sources and the turns that are running.
//! Shells stay thin: a desktop command or a CLI subcommand is a few lines that call one method
//! here, and neither opens the store or a key store itself ([`Service::load`] does).
//!
//! The methods are split by concern, one module each: [`keys`](crate::keys) (key stores,
//! fallbacks, the keychain), [`providers`](crate::providers) (profiles, the provider factory,
//! models), [`conversations`](crate::conversations) (reading, renaming, exporting),
//! [`turns`](crate::turns) (preparing, running, regenerating and stopping turns; approvals),
//! `turn_setup` (the one way a turn is built, for a person's chat and an agent call alike) and
//! [`tools`](crate::tools) (the tool sources and the registry composed from them).
//!
//! Architecture invariant: no knowledge of Tauri, windows or terminals. Events leave through an
//! [`EventSink`](switchboard_core::EventSink) the shell provides; the store's recorder always sees
//! them first. Every rule that decides what a turn does (its options, approvals remembered,
//! settings validated) lives here, so every shell behaves the same.

pub mod agents;
mod agents_file;
mod asking;
pub mod attachments;
pub mod catalogue;
mod chat_setup;
pub mod compaction;
pub mod confirm;
pub mod connection;
pub mod context;
pub mod contract;
pub mod conversations;
pub mod defined_tools;
pub mod export;
pub mod ipc;
pub mod keys;
pub mod links;
pub mod mcp;
pub mod models;
pub mod openapi_docs;
mod paging;
pub mod providers;
pub mod redact;
mod sampling;
pub mod settings;
mod summariser;
pub mod titles;
mod token_cache;
pub mod tools;
mod turn_setup;
pub mod turns;
mod untrusted;
pub mod usage;

pub use confirm::{AlreadyConfirmed, Confirm, Refuse, Widening};
pub use keys::KeychainAccess;
pub use providers::{ProviderFactory, ResolvedProvider};
pub use switchboard_providers::{KINDS as PROVIDER_KINDS, ProviderKind};
pub use turns::{PreparedTurn, TurnReport};

use settings::Settings;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use switchboard_core::{ErrorKind, ProviderError};
use switchboard_secrets::SecretStore;
use switchboard_store::Store;

/// How many of a conversation's last messages [`Service::open`] returns: a few screens' worth.
pub const OPEN_PAGE: usize = 60;

/// The most messages one [`Service::older_messages`] call returns.
pub const OLDER_PAGE_MAX: usize = 200;

/// A failure a shell reports: a kind to act on and a message to show.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    /// Classification.
    pub kind: ErrorKind,
    /// What to tell the person.
    pub message: String,
}

impl Error {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }

    /// A configuration problem the person can fix.
    pub fn config(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, message)
    }
}

impl From<switchboard_store::Error> for Error {
    fn from(e: switchboard_store::Error) -> Self {
        Self::new(e.kind(), e.to_string())
    }
}

impl From<ProviderError> for Error {
    fn from(e: ProviderError) -> Self {
        Self::new(e.kind, e.message)
    }
}

impl From<switchboard_core::RegistryError> for Error {
    fn from(e: switchboard_core::RegistryError) -> Self {
        Self::new(ErrorKind::Internal, e.to_string())
    }
}

impl From<switchboard_secrets::Error> for Error {
    fn from(e: switchboard_secrets::Error) -> Self {
        Self::new(ErrorKind::Auth, e.to_string())
    }
}

/// The environment variable that overrides where the app's config files (`mcp.json`) live.
pub const CONFIG_DIR_ENV: &str = "SWITCHBOARD_CONFIG_DIR";

/// The app's config directory: `$SWITCHBOARD_CONFIG_DIR`; else the data directory when the
/// person chose one (`--data-dir`, `$SWITCHBOARD_DATA_DIR`: everything of a profile together);
/// else the platform's (`~/.config/switchboard` on Linux).
fn config_dir(data_dir_chosen: bool, data_dir: &std::path::Path) -> PathBuf {
    if let Some(dir) = std::env::var_os(CONFIG_DIR_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    if data_dir_chosen {
        return data_dir.to_owned();
    }
    directories::ProjectDirs::from("dev", "Switchboard", "Switchboard")
        .map_or_else(|| data_dir.to_owned(), |d| d.config_dir().to_owned())
}

/// `Result` of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// What every part of the service shares.
pub(crate) struct Inner {
    pub(crate) store: Store,
    pub(crate) keys: RwLock<keys::Keys>,
    pub(crate) tools: tools::Tools,
    pub(crate) mcp: mcp::Mcp,
    pub(crate) defined: defined_tools::Defined,
    pub(crate) turns: turns::Running,
    /// What each profile's model listing said about its models, from the last listing (read
    /// from the store on first use).
    pub(crate) listed: Mutex<std::collections::HashMap<String, models::Listing>>,
    /// The model catalogue in use.
    pub(crate) catalogues: catalogue::Catalogues,
    /// Files the page is uploading in chunks.
    pub(crate) uploads: attachments::Uploads,
}

/// The engine, the store and the keys, for one person's data directory.
#[derive(Clone)]
pub struct Service {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service").field("store", &self.inner.store.path()).finish_non_exhaustive()
    }
}

impl Service {
    /// Opens the database in `data_dir` (default: the OS data directory, or
    /// `SWITCHBOARD_DATA_DIR`) and the key store `keychain` asks for. The one way a shell starts
    /// the engine.
    pub fn load(data_dir: Option<PathBuf>, keychain: KeychainAccess) -> Result<Self> {
        let chosen =
            data_dir.is_some() || std::env::var_os(switchboard_store::DATA_DIR_ENV).is_some_and(|v| !v.is_empty());
        let dir = switchboard_store::resolve_data_dir(data_dir)?;
        let store = Store::open(&dir.join(switchboard_store::DB_FILE))?;
        if store.recovered_on_open() > 0 {
            tracing::info!(count = store.recovered_on_open(), "marked interrupted answers from an earlier run");
        }
        let (keys, mode, problem) = keys::key_store(keychain);
        Self::assemble(store, keys, mode, problem, Some(config_dir(chosen, &dir)))
    }

    /// A service on an in-memory database with keys kept in memory (tests, demos).
    pub fn in_memory() -> Result<Self> {
        Self::new(Store::open_in_memory()?, Arc::new(switchboard_secrets::MemoryStore::new()))
    }

    /// A service over `store`, reading keys from `keys`, with the built-in tools configured
    /// from the stored settings.
    pub fn new(store: Store, keys: Arc<dyn SecretStore>) -> Result<Self> {
        Self::with_keys(store, keys, ipc::KeyMode::Keychain, None)
    }

    /// Like [`Service::new`], saying which kind of key store this is and, when the keychain could
    /// not be used, why (Settings shows it with the choice of fallback).
    pub fn with_keys(
        store: Store,
        keys: Arc<dyn SecretStore>,
        mode: ipc::KeyMode,
        problem: Option<String>,
    ) -> Result<Self> {
        let config_dir = store.path().and_then(std::path::Path::parent).map(std::path::Path::to_owned);
        Self::assemble(store, keys, mode, problem, config_dir)
    }

    /// The service over its parts, with the MCP servers of the config in `config_dir` added as
    /// tool sources (not started).
    fn assemble(
        store: Store,
        keys: Arc<dyn SecretStore>,
        mode: ipc::KeyMode,
        problem: Option<String>,
        config_dir: Option<PathBuf>,
    ) -> Result<Self> {
        let web = Settings::load(&store)?.web;
        let data_dir = store.path().and_then(std::path::Path::parent).map(std::path::Path::to_owned);
        let service = Self {
            inner: Arc::new(Inner {
                tools: tools::Tools::new(&web, store.clone())?,
                mcp: mcp::Mcp::new(config_dir.as_deref()),
                defined: defined_tools::Defined::new(config_dir.as_deref()),
                store,
                keys: RwLock::new(keys::Keys { store: keys, mode, problem }),
                turns: turns::Running::default(),
                listed: Mutex::default(),
                catalogues: catalogue::Catalogues::new(data_dir),
                uploads: attachments::Uploads::default(),
            }),
        };
        service.load_mcp();
        service.load_defined_tools();
        Ok(service)
    }

    /// Where the data lives.
    pub fn data_info(&self) -> ipc::DataInfo {
        let db = self.inner.store.path().map(|p| p.display().to_string());
        ipc::DataInfo {
            data_dir: self.inner.store.path().and_then(|p| p.parent()).map(|p| p.display().to_string()),
            database: db,
        }
    }

    // ----- settings ------------------------------------------------------------------------------

    /// Every setting.
    pub fn settings(&self) -> Result<Settings> {
        Settings::load(&self.inner.store)
    }

    /// Replaces every setting after checking them; the next turn uses them. Refuses changes
    /// that widen what the app may do (see [`Service::update_settings_confirmed`]).
    pub fn update_settings(&self, settings: &Settings) -> Result<()> {
        self.update_settings_confirmed(settings, &Refuse)
    }

    /// [`Service::update_settings`], asking `confirm` about changes that widen what the app may
    /// do (a tool's approval loosened, local addresses allowed). May block on `confirm`.
    pub fn update_settings_confirmed(&self, settings: &Settings, confirm: &dyn Confirm) -> Result<()> {
        if let Some(p) = &settings.default_provider {
            self.profile(Some(p))?;
        }
        settings.validate()?;
        let widenings = self.settings()?.widenings(settings, &|tool| self.default_approval(tool));
        self.require_confirmation(widenings, confirm)?;
        settings.save(&self.inner.store)?;
        self.sync_builtin_tools(&settings.web);
        Ok(())
    }

    /// Applies nothing unless `confirm` agrees to every change in `changes` (none: nothing to
    /// ask). The error names each change, so the person knows what was not done.
    pub(crate) fn require_confirmation(&self, changes: Vec<Widening>, confirm: &dyn Confirm) -> Result<()> {
        if changes.is_empty() || confirm.confirm(&changes) {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::Cancelled,
            format!(
                "Not changed: it widens what Switchboard may do and was not confirmed. {}",
                changes.iter().map(Widening::describe).collect::<Vec<_>>().join(" ")
            ),
        ))
    }

    /// One setting as JSON (`null` when unset).
    pub fn setting(&self, key: &str) -> Result<serde_json::Value> {
        Settings::check(key, None)?;
        Ok(self.inner.store.setting::<serde_json::Value>(key)?.unwrap_or(serde_json::Value::Null))
    }

    /// Sets one setting from JSON, with the same checks as [`Service::update_settings`].
    pub fn set_setting(&self, key: &str, value: serde_json::Value) -> Result<()> {
        self.set_setting_confirmed(key, value, &Refuse)
    }

    /// [`Service::set_setting`], asking `confirm` about widening changes.
    pub fn set_setting_confirmed(&self, key: &str, value: serde_json::Value, confirm: &dyn Confirm) -> Result<()> {
        Settings::check(key, Some(&value))?;
        let mut all =
            serde_json::to_value(self.settings()?).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        all[key] = value;
        let settings: Settings =
            serde_json::from_value(all).map_err(|e| Error::config(format!("Invalid value for '{key}': {e}.")))?;
        self.update_settings_confirmed(&settings, confirm)
    }

    /// Removes one setting (back to its default).
    pub fn unset_setting(&self, key: &str) -> Result<()> {
        self.unset_setting_confirmed(key, &Refuse)
    }

    /// [`Service::unset_setting`], asking `confirm` when the default widens what the app may do
    /// (removing a tool's `deny` lets it run again).
    pub fn unset_setting_confirmed(&self, key: &str, confirm: &dyn Confirm) -> Result<()> {
        Settings::check(key, None)?;
        let now = self.settings()?;
        let mut after = serde_json::to_value(&now).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        if let Some(all) = after.as_object_mut() {
            all.remove(key);
        }
        let after: Settings =
            serde_json::from_value(after).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        self.require_confirmation(now.widenings(&after, &|tool| self.default_approval(tool)), confirm)?;
        self.inner.store.delete_setting(key)?;
        self.sync_builtin_tools(&self.settings()?.web);
        Ok(())
    }
}

/// Locks a mutex, recovering it from a panic elsewhere: every value behind one here stays
/// consistent between statements.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
