//! Secret storage for Switchboard.
//!
//! A secret flows store -> engine -> outgoing request header, and nowhere else. This crate gives
//! the [`SecretStore`] trait the shells use to set, delete and check keys, the OS keychain
//! ([`KeyringStore`], checked at start-up with [`KeyringStore::probe`]), an in-memory store for
//! tests and for "keep this key for this session only", and a read-only store over environment
//! variables for headless use. [`SecretValue`] redacts itself in `Debug`.
//!
//! Settings learn about a key only through [`status`] (set or not, last four characters, where it
//! came from). Only [`SecretStore::get`] returns a whole key, and only the engine calls it.
//!
//! Architecture invariant: no value ever appears in an error message, a log line or a `Debug`
//! output of this crate; only names and the last four characters (for settings) do.

mod keychain;

pub use keychain::{
    BusEnv, FALLBACK_CHOICE, Fallback, KeyringStore, OPERATION_TIMEOUT, PROBE_TIMEOUT, SERVICE, Unavailable,
    UnavailableCause, classify_failure,
};

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
    /// The store is reachable but refused or failed the operation (a duplicate or corrupt entry).
    #[error("{0}")]
    Backend(String),
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

    /// What settings may know about `name`. Prefer the free function [`status`], which also
    /// checks the name. Stores that combine others ([`Layered`]) override it to say which one
    /// holds the key.
    fn key_status(&self, name: &str) -> Result<KeyStatus> {
        Ok(KeyStatus::from_value(name, self.describe(), self.get(name)?.as_ref()))
    }
}

/// What the settings screen shows about one key: whether it is set, its last four characters,
/// and which store holds it. Never the key itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeyStatus {
    /// The key name (provider profile or tool credential such as `tavily`).
    pub name: String,
    /// Whether any store has a value for it.
    pub is_set: bool,
    /// The last four characters, only for keys of at least [`KeyStatus::MIN_LEN_FOR_LAST4`]
    /// characters: on a shorter key four characters would give most of it away.
    pub last4: Option<String>,
    /// The store holding the key ("the system keychain", "the environment"); when not set, the
    /// store that was asked first (where settings would save it).
    pub source: &'static str,
}

impl KeyStatus {
    /// Shorter keys get no `last4`.
    pub const MIN_LEN_FOR_LAST4: usize = 8;

    /// The status for `value` found (or not) in `source`.
    pub fn from_value(name: &str, source: &'static str, value: Option<&SecretValue>) -> Self {
        let last4 = value.filter(|v| v.expose().chars().count() >= Self::MIN_LEN_FOR_LAST4).map(SecretValue::last4);
        Self { name: name.to_owned(), is_set: value.is_some(), last4, source }
    }
}

/// Whether `name` is set in `store`, with its last four characters: what settings and
/// `keys status` show. The whole key never leaves this function.
pub fn status(store: &dyn SecretStore, name: &str) -> Result<KeyStatus> {
    validate_name(name)?;
    store.key_status(name)
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

    /// The first store that has `name`, and the key. Private: a caller that wants to know where
    /// a key is uses [`status`], which does not hand out the key.
    fn find(&self, name: &str) -> Result<Option<(&'static str, SecretValue)>> {
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

    fn key_status(&self, name: &str) -> Result<KeyStatus> {
        Ok(match self.find(name)? {
            Some((source, value)) => KeyStatus::from_value(name, source, Some(&value)),
            None => KeyStatus::from_value(name, self.describe(), None),
        })
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
    fn status_shows_set_last4_and_source_but_never_the_key() {
        let store = MemoryStore::new();
        let st = status(&store, "tavily").unwrap();
        assert_eq!(st, KeyStatus { name: "tavily".into(), is_set: false, last4: None, source: "the session memory" });
        store.set("tavily", &SecretValue::new("tvly-dev-0123456789wxyz")).unwrap();
        let st = status(&store, "tavily").unwrap();
        assert!(st.is_set);
        assert_eq!(st.last4.as_deref(), Some("wxyz"));
        let shown = format!("{st:?} {}", serde_json::to_string(&st).unwrap());
        assert!(!shown.contains("0123456789"), "{shown}");
        assert!(shown.contains("\"isSet\":true"), "{shown}");
        assert_eq!(status(&store, "no such"), Err(Error::InvalidName("no such".into())));
    }

    #[test]
    fn short_keys_get_no_last4() {
        let store = MemoryStore::new();
        store.set("short", &SecretValue::new("abc1234")).unwrap();
        let st = status(&store, "short").unwrap();
        assert!(st.is_set);
        assert_eq!(st.last4, None);
        store.set("short", &SecretValue::new("abcd1234")).unwrap();
        assert_eq!(status(&store, "short").unwrap().last4.as_deref(), Some("1234"));
    }

    /// A store whose reads fail, like a locked keychain.
    struct Broken;

    impl SecretStore for Broken {
        fn describe(&self) -> &'static str {
            "the system keychain"
        }
        fn get(&self, _name: &str) -> Result<Option<SecretValue>> {
            Err(Error::Unavailable("the keychain is locked".into()))
        }
        fn set(&self, _name: &str, _value: &SecretValue) -> Result<()> {
            Err(Error::Unavailable("the keychain is locked".into()))
        }
        fn delete(&self, _name: &str) -> Result<bool> {
            Err(Error::Unavailable("the keychain is locked".into()))
        }
    }

    #[test]
    fn layered_status_names_the_store_that_holds_the_key() {
        let keychain = Arc::new(MemoryStore::new());
        let session = Arc::new(MemoryStore::new());
        session.set("exa", &SecretValue::new("exa-key-abcdefgh")).unwrap();
        let layered = Layered::new(vec![keychain.clone(), session]);
        let st = status(&layered, "exa").unwrap();
        assert_eq!((st.is_set, st.last4.as_deref(), st.source), (true, Some("efgh"), "the session memory"));
        let st = status(&layered, "tavily").unwrap();
        assert_eq!((st.is_set, st.source), (false, "the session memory"));

        // A locked keychain first does not hide a key from the environment layer...
        let env_like = Arc::new(MemoryStore::new());
        env_like.set("exa", &SecretValue::new("exa-key-12345678")).unwrap();
        let layered = Layered::new(vec![Arc::new(Broken), env_like]);
        assert_eq!(status(&layered, "exa").unwrap().last4.as_deref(), Some("5678"));
        // ...but when nothing has the key, the person learns the keychain is locked.
        let e = status(&layered, "tavily").unwrap_err();
        assert_eq!(e.to_string(), "the secret store is unavailable: the keychain is locked");
        let tools = ToolSecrets(Arc::new(layered));
        assert!(Secrets::get(&tools, "tavily").unwrap_err().contains("locked"));
    }

    #[test]
    fn env_store_is_read_only() {
        let env = EnvStore::new();
        assert_eq!(env.set("x", &SecretValue::new("v")), Err(Error::ReadOnly("the environment")));
    }
}
