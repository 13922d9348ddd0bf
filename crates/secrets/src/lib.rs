//! Secret storage for Switchboard.
//!
//! A secret flows store -> engine -> outgoing request header, and nowhere else. This crate gives
//! the [`SecretStore`] trait the shells use to set, delete and check keys, an in-memory store for
//! tests and for "keep this key for this session only", and a read-only store over environment
//! variables for headless use. [`SecretValue`] redacts itself in `Debug`.
//!
//! Architecture invariant: no value ever appears in an error message, a log line or a `Debug`
//! output of this crate; only names and the last four characters (for settings) do.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
pub use switchboard_core::tool::SecretValue;
use switchboard_core::tool::Secrets;

/// Why a secret operation failed. Messages name the store and the cause, never the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The store cannot be used now (no keychain service, locked collection).
    #[error("the secret store is unavailable: {0}")]
    Unavailable(String),
    /// The store cannot be written (environment variables).
    #[error("{0} is read-only; set the key there yourself")]
    ReadOnly(&'static str),
    /// The name is not usable as a key name.
    #[error("invalid key name '{0}': use letters, digits, '-' and '_'")]
    InvalidName(String),
}

/// `Result` of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Where keys live. Names are provider profile names or tool credential names (`tavily`).
pub trait SecretStore: Send + Sync {
    /// A short description for messages ("the environment", "the session memory").
    fn describe(&self) -> &'static str;
    /// The key stored under `name`.
    fn get(&self, name: &str) -> Result<Option<SecretValue>>;
    /// Stores or replaces a key.
    fn set(&self, name: &str, value: &SecretValue) -> Result<()>;
    /// Deletes a key; `Ok(false)` when there was none.
    fn delete(&self, name: &str) -> Result<bool>;
}

/// Checks a key name: what settings and the CLI accept.
pub fn validate_name(name: &str) -> Result<()> {
    let ok =
        !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok { Ok(()) } else { Err(Error::InvalidName(name.to_owned())) }
}

/// The environment variable that holds the key for `name`: `SWITCHBOARD_KEY_<NAME>`, upper-cased,
/// with `-` as `_`.
pub fn env_var_for(name: &str) -> String {
    format!("SWITCHBOARD_KEY_{}", name.to_ascii_uppercase().replace('-', "_"))
}

/// Keys held in memory only: gone when the process ends. For tests, and for a person who chose
/// "keep this key for this session" because no keychain is available.
#[derive(Default)]
pub struct MemoryStore {
    keys: Mutex<HashMap<String, SecretValue>>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<String> = self.keys.lock().map(|k| k.keys().cloned().collect()).unwrap_or_default();
        f.debug_struct("MemoryStore").field("names", &names).finish()
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl SecretStore for MemoryStore {
    fn describe(&self) -> &'static str {
        "the session memory"
    }

    fn get(&self, name: &str) -> Result<Option<SecretValue>> {
        Ok(self.keys.lock().map_err(|_| Error::Unavailable("memory store poisoned".into()))?.get(name).cloned())
    }

    fn set(&self, name: &str, value: &SecretValue) -> Result<()> {
        validate_name(name)?;
        self.keys
            .lock()
            .map_err(|_| Error::Unavailable("memory store poisoned".into()))?
            .insert(name.to_owned(), value.clone());
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<bool> {
        Ok(self.keys.lock().map_err(|_| Error::Unavailable("memory store poisoned".into()))?.remove(name).is_some())
    }
}

/// Read-only keys from the environment: `SWITCHBOARD_KEY_<NAME>`, then a fallback variable per
/// name (a provider kind's usual variable, such as `OPENAI_API_KEY`). Never written anywhere.
#[derive(Debug, Default, Clone)]
pub struct EnvStore {
    fallbacks: HashMap<String, String>,
}

impl EnvStore {
    /// A store reading the process environment.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also reads `var` for `name` when `SWITCHBOARD_KEY_<NAME>` is not set.
    pub fn with_fallback(mut self, name: &str, var: &str) -> Self {
        self.fallbacks.insert(name.to_owned(), var.to_owned());
        self
    }

    /// Which variable provides `name` right now, if any (for `keys status`).
    pub fn source_of(&self, name: &str) -> Option<String> {
        let primary = env_var_for(name);
        if std::env::var_os(&primary).is_some_and(|v| !v.is_empty()) {
            return Some(primary);
        }
        let fallback = self.fallbacks.get(name)?;
        std::env::var_os(fallback).is_some_and(|v| !v.is_empty()).then(|| fallback.clone())
    }
}

impl SecretStore for EnvStore {
    fn describe(&self) -> &'static str {
        "the environment"
    }

    fn get(&self, name: &str) -> Result<Option<SecretValue>> {
        Ok(self.source_of(name).and_then(|var| std::env::var(var).ok()).map(|v| SecretValue::new(v.trim())))
    }

    fn set(&self, _name: &str, _value: &SecretValue) -> Result<()> {
        Err(Error::ReadOnly("the environment"))
    }

    fn delete(&self, _name: &str) -> Result<bool> {
        Err(Error::ReadOnly("the environment"))
    }
}

/// Several stores read in order (keychain first, then the environment); writes go to the first.
#[derive(Clone)]
pub struct Layered {
    stores: Vec<Arc<dyn SecretStore>>,
}

impl std::fmt::Debug for Layered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.stores.iter().map(|s| s.describe())).finish()
    }
}

impl Layered {
    /// Reads `stores` in order.
    pub fn new(stores: Vec<Arc<dyn SecretStore>>) -> Self {
        Self { stores }
    }

    /// The first store that has `name`, and the key.
    pub fn find(&self, name: &str) -> Result<Option<(&'static str, SecretValue)>> {
        let mut first_error = None;
        for store in &self.stores {
            match store.get(name) {
                Ok(Some(v)) => return Ok(Some((store.describe(), v))),
                Ok(None) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(None), Err)
    }
}

impl SecretStore for Layered {
    fn describe(&self) -> &'static str {
        self.stores.first().map_or("no store", |s| s.describe())
    }

    fn get(&self, name: &str) -> Result<Option<SecretValue>> {
        Ok(self.find(name)?.map(|(_, v)| v))
    }

    fn set(&self, name: &str, value: &SecretValue) -> Result<()> {
        self.stores.first().ok_or(Error::ReadOnly("no store"))?.set(name, value)
    }

    fn delete(&self, name: &str) -> Result<bool> {
        self.stores.first().ok_or(Error::ReadOnly("no store"))?.delete(name)
    }
}

/// Gives tools read access through the core's [`Secrets`] trait.
pub struct ToolSecrets(pub Arc<dyn SecretStore>);

impl Secrets for ToolSecrets {
    fn get(&self, name: &str) -> std::result::Result<Option<SecretValue>, String> {
        self.0.get(name).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_store_round_trips_and_redacts() {
        let store = MemoryStore::new();
        let key = SecretValue::new("sk-test-0123456789abcd");
        store.set("openai", &key).unwrap();
        assert_eq!(store.get("openai").unwrap(), Some(key.clone()));
        assert_eq!(key.last4(), "abcd");
        assert!(!format!("{store:?} {key:?}").contains("0123456789"));
        assert!(store.delete("openai").unwrap());
        assert!(!store.delete("openai").unwrap());
        assert_eq!(store.get("openai").unwrap(), None);
        assert_eq!(store.set("bad name", &key), Err(Error::InvalidName("bad name".into())));
    }

    #[test]
    fn env_var_names_follow_the_profile() {
        assert_eq!(env_var_for("my-local"), "SWITCHBOARD_KEY_MY_LOCAL");
        assert_eq!(env_var_for("openai"), "SWITCHBOARD_KEY_OPENAI");
    }

    #[test]
    fn layered_reads_in_order_and_writes_to_the_first() {
        let a = Arc::new(MemoryStore::new());
        let b = Arc::new(MemoryStore::new());
        b.set("x", &SecretValue::new("from-b")).unwrap();
        let layered = Layered::new(vec![a.clone(), b.clone()]);
        assert_eq!(layered.get("x").unwrap().unwrap().expose(), "from-b");
        layered.set("x", &SecretValue::new("from-a")).unwrap();
        assert_eq!(layered.get("x").unwrap().unwrap().expose(), "from-a");
        assert_eq!(b.get("x").unwrap().unwrap().expose(), "from-b");
    }

    #[test]
    fn env_store_is_read_only() {
        let env = EnvStore::new();
        assert_eq!(env.set("x", &SecretValue::new("v")), Err(Error::ReadOnly("the environment")));
    }
}
