//! The OS keychain: Secret Service on Linux and the BSDs, Keychain on macOS, Credential Manager on
//! Windows, through the `keyring` crate with each platform's backend named explicitly.
//!
//! Why explicit credentials instead of `keyring::Entry::new`: `Entry::new` goes through a global,
//! replaceable default builder which falls back to keyring's *mock* (in-memory) store when a
//! platform feature is missing. A key "saved" there would vanish silently. Building the platform
//! credential type directly makes a missing backend a compile error, never a silent downgrade.
//!
//! Why every call runs on its own thread with a deadline: a locked Secret Service collection can
//! answer a write with an unlock prompt that nobody sees (headless session, prompt on another
//! screen) and the call then never returns. The engine must not hang on that; it gets a clear
//! "timed out" error instead. A timed-out thread is left to finish on its own (it is blocked in the
//! platform library and cannot be interrupted), which costs one parked thread at worst.
//!
//! Linux executor choice: keyring's `async-secret-service` backend uses the pure-Rust `zbus` (no
//! libdbus) through its blocking API. With zbus's `tokio` feature that blocking API drives a
//! private tokio runtime with `Runtime::block_on`, which panics when called from inside another
//! tokio runtime and can deadlock on the main thread (keyring-rs issue #132). With `async-io`,
//! zbus runs its own executor thread and `block_on` is an ordinary park/unpark loop that is safe
//! from any thread, including inside a tokio runtime. Calls here are on a dedicated thread anyway.

use crate::{Error, Result, SecretStore, SecretValue, validate_name};
use std::path::{Path, PathBuf};
use std::sync::mpsc::sync_channel;
use std::time::Duration;

/// The service name every Switchboard entry is stored under; the user part is the key name.
pub const SERVICE: &str = "dev.switchboard.Switchboard";

/// How long [`KeyringStore::probe`] waits for the round trip before reporting a timeout.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// How long one get/set/delete may take. Longer than the probe because a person may be typing
/// their password into an unlock prompt that the call legitimately waits for.
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(30);

/// The alternative the UI and the CLI offer when the keychain is unavailable. Never a file.
pub const FALLBACK_CHOICE: &str = "You can use environment variables instead (SWITCHBOARD_KEY_<NAME>, for example \
     SWITCHBOARD_KEY_OPENAI or SWITCHBOARD_KEY_TAVILY), or keep keys in memory for this session only. Switchboard \
     never writes keys to a file.";

/// Why the keychain cannot be used, in words a person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnavailableCause {
    /// No D-Bus session bus: `DBUS_SESSION_BUS_ADDRESS` is unset and there is no socket at the
    /// default place (`$XDG_RUNTIME_DIR/bus`). Typical of SSH sessions, containers and CI.
    NoSessionBus {
        /// Where the default socket was looked for, if anywhere.
        looked_at: Option<PathBuf>,
    },
    /// `DBUS_SESSION_BUS_ADDRESS` is set but nothing listens there (a stale address).
    SessionBusUnreachable {
        /// The address from the environment.
        address: String,
    },
    /// The bus works but no program provides `org.freedesktop.secrets` (GNOME Keyring, KWallet,
    /// KeePassXC with Secret Service integration).
    NoSecretService,
    /// The collection is locked, or its unlock prompt was dismissed.
    Locked,
    /// The keychain refused Switchboard (policy, sandbox, or the person denied access).
    PermissionDenied,
    /// The round trip did not finish in time, usually because of an invisible unlock prompt.
    Timeout(Duration),
    /// The keychain answered but did not give back what was written.
    RoundTripMismatch,
    /// This build has no keychain backend for this operating system.
    UnsupportedPlatform,
    /// Anything else; the detail says what the platform reported.
    Other,
}

impl std::fmt::Display for UnavailableCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnavailableCause::NoSessionBus { looked_at } => {
                f.write_str("there is no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set")?;
                if let Some(path) = looked_at {
                    write!(f, " and there is no bus socket at {}", path.display())?;
                }
                f.write_str("), and the Secret Service keychain is reached through it; this is usual over SSH, in containers and on servers")
            }
            UnavailableCause::SessionBusUnreachable { address } => write!(
                f,
                "the D-Bus session bus named in DBUS_SESSION_BUS_ADDRESS ({address}) does not answer; the desktop session may have ended"
            ),
            UnavailableCause::NoSecretService => f.write_str(
                "no Secret Service provider is running (nothing provides org.freedesktop.secrets on the session bus); install and start GNOME Keyring, KWallet or KeePassXC with Secret Service integration",
            ),
            UnavailableCause::Locked => f.write_str(
                "the keychain is locked (or its unlock prompt was dismissed); unlock it in your keyring app or by logging in to the desktop, then try again",
            ),
            UnavailableCause::PermissionDenied => {
                f.write_str("the keychain refused access to Switchboard (permission denied)")
            }
            UnavailableCause::Timeout(d) => write!(
                f,
                "the keychain did not answer within {} s; it may be waiting for an unlock prompt that is not visible",
                d.as_secs_f32()
            ),
            UnavailableCause::RoundTripMismatch => {
                f.write_str("the keychain did not return the test value that was just written to it")
            }
            UnavailableCause::UnsupportedPlatform => {
                f.write_str("this build of Switchboard has no keychain support for this operating system")
            }
            UnavailableCause::Other => f.write_str("the keychain reported an error"),
        }
    }
}

/// The keychain failed its start-up check. Shown to the person with the explicit choice
/// ([`FALLBACK_CHOICE`]): environment variables or keys kept in memory for the session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("The system keychain cannot be used: {cause}{}. {}", detail_suffix(.detail), FALLBACK_CHOICE)]
pub struct Unavailable {
    /// The classified cause.
    pub cause: UnavailableCause,
    /// What the platform said, when it adds something (never contains a key).
    pub detail: Option<String>,
}

fn detail_suffix(detail: &Option<String>) -> String {
    detail.as_ref().map(|d| format!(" (details: {d})")).unwrap_or_default()
}

impl Unavailable {
    /// An explanation with no detail.
    pub fn new(cause: UnavailableCause) -> Self {
        Self { cause, detail: None }
    }

    /// The alternatives to offer, in the order the UI shows them.
    pub fn choices(&self) -> [Fallback; 2] {
        [Fallback::Environment, Fallback::SessionMemory]
    }
}

/// What the person can choose when the keychain is unavailable. There is deliberately no "file"
/// option: a plaintext key file is never created, silently or otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// Read keys from `SWITCHBOARD_KEY_<NAME>` (and the usual provider variables); read-only.
    Environment,
    /// Keep keys typed into Settings in memory until the app quits.
    SessionMemory,
}

impl Fallback {
    /// A one-line label for a button or a CLI prompt.
    pub fn label(self) -> &'static str {
        match self {
            Fallback::Environment => "Use environment variables (SWITCHBOARD_KEY_<NAME>)",
            Fallback::SessionMemory => "Keep keys in memory for this session only",
        }
    }
}

/// The session-bus facts the classification needs, read from the environment. Separate from the
/// process environment so the classification can be tested without a bus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BusEnv {
    /// `DBUS_SESSION_BUS_ADDRESS`, if set and non-empty.
    pub session_bus_address: Option<String>,
    /// Where zbus looks for the bus when the address is unset (`$XDG_RUNTIME_DIR/bus`, else
    /// `/run/user/<uid>/bus`).
    pub default_socket: Option<PathBuf>,
}

impl BusEnv {
    /// The current process's view.
    pub fn from_process() -> Self {
        let session_bus_address = std::env::var("DBUS_SESSION_BUS_ADDRESS").ok().filter(|s| !s.trim().is_empty());
        let runtime_dir =
            std::env::var_os("XDG_RUNTIME_DIR").filter(|s| !s.is_empty()).map(PathBuf::from).or_else(|| {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::MetadataExt;
                    std::fs::metadata("/proc/self").ok().map(|m| PathBuf::from(format!("/run/user/{}", m.uid())))
                }
                #[cfg(not(unix))]
                {
                    None
                }
            });
        Self { session_bus_address, default_socket: runtime_dir.map(|d| d.join("bus")) }
    }

    /// Whether a bus is plausibly reachable, and if not, the cause.
    fn missing_bus(&self, exists: &dyn Fn(&Path) -> bool) -> Option<UnavailableCause> {
        match &self.session_bus_address {
            None => match &self.default_socket {
                Some(p) if exists(p) => None,
                other => Some(UnavailableCause::NoSessionBus { looked_at: other.clone() }),
            },
            Some(address) => {
                // Only `unix:path=` can be checked cheaply; abstract sockets and TCP are assumed
                // present and the later error decides.
                let path = address
                    .split(';')
                    .filter_map(|a| a.strip_prefix("unix:"))
                    .flat_map(|kv| kv.split(','))
                    .find_map(|kv| kv.strip_prefix("path="));
                match path {
                    Some(p) if !exists(Path::new(p)) => {
                        Some(UnavailableCause::SessionBusUnreachable { address: address.clone() })
                    }
                    _ => None,
                }
            }
        }
    }
}

/// Turns a platform error message into a cause. Pure (the socket check is injected) so every
/// branch is testable without a bus. `message` is what keyring/zbus reported; it never holds a
/// key (values are never part of platform errors, and `BadEncoding` is handled before this).
pub fn classify_failure(message: &str, env: &BusEnv, socket_exists: &dyn Fn(&Path) -> bool) -> UnavailableCause {
    let m = message.to_ascii_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|n| m.contains(n));
    if has(&["object locked", "is locked", "prompt dismissed", "islocked"]) {
        return UnavailableCause::Locked;
    }
    if has(&["accessdenied", "access denied", "permission denied", "not authorized", "notauthorized"]) {
        return UnavailableCause::PermissionDenied;
    }
    if has(&["serviceunknown", "not provided by any .service", "not activatable", "namehasnoowner"]) {
        return UnavailableCause::NoSecretService;
    }
    if has(&[
        "no secret service provider or dbus session found",
        "no such file or directory",
        "connection refused",
        "address error",
        "interface not found",
    ]) {
        // secret-service folds "no bus" and "no provider" into one message; the environment
        // tells them apart.
        return env.missing_bus(socket_exists).unwrap_or(UnavailableCause::NoSecretService);
    }
    UnavailableCause::Other
}

/// Keys in the OS keychain under [`SERVICE`], one entry per key name. Build it with
/// [`KeyringStore::probe`] so an unusable keychain is found at start-up, not at the first save.
#[derive(Debug, Clone)]
pub struct KeyringStore {
    service: String,
    timeout: Duration,
}

impl KeyringStore {
    /// Checks the keychain with a write / read-back / delete of a throwaway entry, bounded by
    /// [`PROBE_TIMEOUT`], and returns a store for [`SERVICE`]. Call it once at start-up; on
    /// `Err`, show the explanation and the choices ([`Unavailable::choices`]).
    ///
    /// Blocks for up to the timeout (the store's operations block for up to
    /// [`OPERATION_TIMEOUT`]): from async code, call it inside `spawn_blocking`.
    pub fn probe() -> std::result::Result<KeyringStore, Unavailable> {
        Self::probe_with(SERVICE, PROBE_TIMEOUT)
    }

    /// [`KeyringStore::probe`] with another service name (tests) and deadline.
    pub fn probe_with(service: &str, timeout: Duration) -> std::result::Result<KeyringStore, Unavailable> {
        if let Some(cause) = absent_bus() {
            return Err(Unavailable::new(cause));
        }
        let service = service.to_owned();
        let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let name = format!("switchboard-probe-{}-{stamp}", std::process::id());
        let value = format!("probe-{stamp}");
        let svc = service.clone();
        let outcome = run_bounded(timeout, move || platform::round_trip(&svc, &name, &value));
        match outcome {
            Some(Ok(())) => Ok(KeyringStore { service, timeout: OPERATION_TIMEOUT }),
            Some(Err(u)) => Err(u),
            None => Err(Unavailable::new(UnavailableCause::Timeout(timeout))),
        }
    }

    /// A store for [`SERVICE`] without the start-up round trip, for short-lived processes that
    /// only read (the CLI): a broken keychain then shows up as an error on first use instead.
    pub fn unchecked() -> KeyringStore {
        KeyringStore { service: SERVICE.to_owned(), timeout: OPERATION_TIMEOUT }
    }

    /// The same store with another per-operation deadline (default [`OPERATION_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The service name entries are stored under.
    pub fn service(&self) -> &str {
        &self.service
    }

    fn bounded<T: Send + 'static>(&self, f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
        if let Some(cause) = absent_bus() {
            return Err(Error::Unavailable(cause.to_string()));
        }
        run_bounded(self.timeout, f)
            .unwrap_or_else(|| Err(Error::Unavailable(UnavailableCause::Timeout(self.timeout).to_string())))
    }
}

/// On Linux and the BSDs, a session bus that is plainly absent (no address and no socket at the
/// default path, or a `unix:path=` address whose socket is gone) means Secret Service cannot
/// answer. Saying so at once spares every lookup a thread and a D-Bus client that would only
/// fail the same way (about a millisecond of each CLI run on a headless machine). The cause is
/// the one [`classify_failure`] gives for that failure.
fn absent_bus() -> Option<UnavailableCause> {
    #[cfg(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd"))]
    {
        BusEnv::from_process().missing_bus(&|p: &Path| p.exists())
    }
    #[cfg(not(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd")))]
    {
        None
    }
}

/// Runs `f` on its own thread and waits at most `timeout`; `None` on timeout (or when the thread
/// could not run, which is reported the same way because the result is equally unknown).
fn run_bounded<T: Send + 'static>(timeout: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = sync_channel(1);
    let spawned = std::thread::Builder::new().name("switchboard-keychain".into()).spawn(move || {
        // The receiver may be gone after a timeout; the result is then dropped on purpose.
        let _ = tx.send(f());
    });
    if spawned.is_err() {
        return None;
    }
    // Timeout, or the thread died (a panic in the platform library): the result is unknown.
    rx.recv_timeout(timeout).ok()
}

impl SecretStore for KeyringStore {
    fn describe(&self) -> &'static str {
        "the system keychain"
    }

    fn get(&self, name: &str) -> Result<Option<SecretValue>> {
        validate_name(name)?;
        let (service, name) = (self.service.clone(), name.to_owned());
        self.bounded(move || platform::get(&service, &name))
    }

    fn set(&self, name: &str, value: &SecretValue) -> Result<()> {
        validate_name(name)?;
        let (service, name, value) = (self.service.clone(), name.to_owned(), value.clone());
        self.bounded(move || platform::set(&service, &name, &value))
    }

    fn delete(&self, name: &str) -> Result<bool> {
        validate_name(name)?;
        let (service, name) = (self.service.clone(), name.to_owned());
        self.bounded(move || platform::delete(&service, &name))
    }
}

#[cfg(any(
    target_os = "linux",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "macos",
    target_os = "windows"
))]
mod platform {
    use super::{BusEnv, Unavailable, UnavailableCause, classify_failure};
    use crate::{Error, Result, SecretValue};
    use keyring::Entry;

    /// The platform credential, built explicitly (see the module docs for why not `Entry::new`).
    fn entry(service: &str, user: &str) -> keyring::Result<Entry> {
        #[cfg(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd"))]
        let credential = keyring::secret_service::SsCredential::new_with_target(None, service, user)?;
        #[cfg(target_os = "macos")]
        let credential = keyring::macos::MacCredential::new_with_target(None, service, user)?;
        #[cfg(target_os = "windows")]
        let credential = keyring::windows::WinCredential::new_with_target(None, service, user)?;
        Ok(Entry::new_with_credential(Box::new(credential)))
    }

    /// Classifies a keyring error about availability; `None` when it is not one.
    fn unavailable(e: &keyring::Error) -> Option<Unavailable> {
        let (inner, default) = match e {
            keyring::Error::NoStorageAccess(inner) => (inner.to_string(), UnavailableCause::Locked),
            keyring::Error::PlatformFailure(inner) => (inner.to_string(), UnavailableCause::Other),
            _ => return None,
        };
        let exists = |p: &std::path::Path| p.exists();
        let cause = match classify_failure(&inner, &BusEnv::from_process(), &exists) {
            UnavailableCause::Other => default,
            c => c,
        };
        Some(Unavailable { cause, detail: Some(inner) })
    }

    /// Maps a keyring error to the crate's error. Never formats `BadEncoding`'s bytes (they are
    /// the stored value) or anything else that could hold a key.
    fn map(e: keyring::Error, name: &str) -> Error {
        if let Some(u) = unavailable(&e) {
            return match u.cause {
                UnavailableCause::Other => {
                    Error::Backend(format!("the system keychain failed: {}", u.detail.unwrap_or_default()))
                }
                cause => Error::Unavailable(format!("{cause}{}", super::detail_suffix(&u.detail))),
            };
        }
        match e {
            keyring::Error::BadEncoding(_) => Error::Backend(format!(
                "the key stored for '{name}' in the system keychain is not text; delete it and set it again"
            )),
            keyring::Error::TooLong(attr, limit) => {
                Error::Backend(format!("the system keychain refused '{name}': its {attr} is longer than {limit}"))
            }
            keyring::Error::Invalid(attr, reason) => {
                Error::Backend(format!("the system keychain refused '{name}': {attr} {reason}"))
            }
            keyring::Error::Ambiguous(found) => Error::Backend(format!(
                "{} entries in the system keychain match '{name}'; remove the extra ones in your keychain app",
                found.len()
            )),
            keyring::Error::NoEntry => Error::Backend(format!("no entry for '{name}' in the system keychain")),
            // `keyring::Error` is non-exhaustive; its Display names the failure, not the value.
            other => Error::Backend(format!("the system keychain failed: {other}")),
        }
    }

    pub(super) fn get(service: &str, name: &str) -> Result<Option<SecretValue>> {
        let entry = entry(service, name).map_err(|e| map(e, name))?;
        match entry.get_password() {
            Ok(v) => Ok(Some(SecretValue::new(v))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map(e, name)),
        }
    }

    pub(super) fn set(service: &str, name: &str, value: &SecretValue) -> Result<()> {
        let entry = entry(service, name).map_err(|e| map(e, name))?;
        entry.set_password(value.expose()).map_err(|e| map(e, name))
    }

    pub(super) fn delete(service: &str, name: &str) -> Result<bool> {
        let entry = entry(service, name).map_err(|e| map(e, name))?;
        match entry.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(map(e, name)),
        }
    }

    /// Write, read back, delete. Each failure is classified for the person.
    pub(super) fn round_trip(service: &str, name: &str, value: &str) -> std::result::Result<(), Unavailable> {
        let fail = |e: keyring::Error| {
            unavailable(&e).unwrap_or_else(|| Unavailable {
                cause: UnavailableCause::Other,
                detail: Some(map(e, name).to_string()),
            })
        };
        let entry = entry(service, name).map_err(fail)?;
        entry.set_password(value).map_err(fail)?;
        let read = entry.get_password();
        // Delete before judging the read so a failed check leaves nothing behind.
        let deleted = entry.delete_credential();
        match read {
            Ok(v) if v == value => {}
            Ok(_) => return Err(Unavailable::new(UnavailableCause::RoundTripMismatch)),
            Err(e) => return Err(fail(e)),
        }
        deleted.map_err(fail)
    }
}

#[cfg(not(any(
    target_os = "linux",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "macos",
    target_os = "windows"
)))]
mod platform {
    //! No keychain backend on this OS: every call says so. Deliberately no mock fallback.
    use super::{Unavailable, UnavailableCause};
    use crate::{Error, Result, SecretValue};

    fn err() -> Error {
        Error::Unavailable(UnavailableCause::UnsupportedPlatform.to_string())
    }

    pub(super) fn get(_service: &str, _name: &str) -> Result<Option<SecretValue>> {
        Err(err())
    }

    pub(super) fn set(_service: &str, _name: &str, _value: &SecretValue) -> Result<()> {
        Err(err())
    }

    pub(super) fn delete(_service: &str, _name: &str) -> Result<bool> {
        Err(err())
    }

    pub(super) fn round_trip(_service: &str, _name: &str, _value: &str) -> std::result::Result<(), Unavailable> {
        Err(Unavailable::new(UnavailableCause::UnsupportedPlatform))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(address: Option<&str>, socket: Option<&str>) -> BusEnv {
        BusEnv { session_bus_address: address.map(str::to_owned), default_socket: socket.map(PathBuf::from) }
    }

    const NOTHING_EXISTS: &dyn Fn(&Path) -> bool = &|_| false;
    const EVERYTHING_EXISTS: &dyn Fn(&Path) -> bool = &|_| true;
    const SS_UNAVAILABLE: &str = "no secret service provider or dbus session found";

    #[test]
    fn no_bus_address_and_no_default_socket_is_no_session_bus() {
        let cause = classify_failure(SS_UNAVAILABLE, &env(None, Some("/run/user/1000/bus")), NOTHING_EXISTS);
        assert_eq!(cause, UnavailableCause::NoSessionBus { looked_at: Some("/run/user/1000/bus".into()) });
        let text = Unavailable::new(cause).to_string();
        assert!(text.contains("DBUS_SESSION_BUS_ADDRESS is not set"), "{text}");
        assert!(text.contains("SWITCHBOARD_KEY_<NAME>"), "{text}");
        assert!(text.contains("in memory for this session"), "{text}");
    }

    #[test]
    fn a_stale_bus_address_is_unreachable() {
        let e = env(Some("unix:path=/nonexistent/bus,guid=abc"), None);
        let cause =
            classify_failure("zbus error: I/O error: No such file or directory (os error 2)", &e, NOTHING_EXISTS);
        assert_eq!(
            cause,
            UnavailableCause::SessionBusUnreachable { address: "unix:path=/nonexistent/bus,guid=abc".into() }
        );
    }

    #[test]
    fn a_live_bus_without_a_provider_is_no_secret_service() {
        let e = env(Some("unix:path=/tmp/bus"), None);
        assert_eq!(classify_failure(SS_UNAVAILABLE, &e, EVERYTHING_EXISTS), UnavailableCause::NoSecretService);
        let msg = "zbus error: org.freedesktop.DBus.Error.ServiceUnknown: The name org.freedesktop.secrets was not provided by any .service files";
        assert_eq!(classify_failure(msg, &e, EVERYTHING_EXISTS), UnavailableCause::NoSecretService);
        // An abstract socket cannot be checked, so the provider is blamed, not the bus.
        let abs = env(Some("unix:abstract=/tmp/dbus-x"), None);
        assert_eq!(classify_failure(SS_UNAVAILABLE, &abs, NOTHING_EXISTS), UnavailableCause::NoSecretService);
    }

    #[test]
    fn locked_denied_and_unknown_messages() {
        let e = env(Some("unix:path=/tmp/bus"), None);
        assert_eq!(classify_failure("SS Error: object locked", &e, EVERYTHING_EXISTS), UnavailableCause::Locked);
        assert_eq!(classify_failure("SS error: prompt dismissed", &e, EVERYTHING_EXISTS), UnavailableCause::Locked);
        assert_eq!(
            classify_failure("org.freedesktop.DBus.Error.AccessDenied: nope", &e, EVERYTHING_EXISTS),
            UnavailableCause::PermissionDenied
        );
        assert_eq!(classify_failure("something new", &e, EVERYTHING_EXISTS), UnavailableCause::Other);
    }

    #[test]
    fn every_cause_reads_as_a_sentence_with_the_choice() {
        let causes = [
            UnavailableCause::NoSessionBus { looked_at: None },
            UnavailableCause::SessionBusUnreachable { address: "unix:path=/x".into() },
            UnavailableCause::NoSecretService,
            UnavailableCause::Locked,
            UnavailableCause::PermissionDenied,
            UnavailableCause::Timeout(Duration::from_secs(3)),
            UnavailableCause::RoundTripMismatch,
            UnavailableCause::UnsupportedPlatform,
            UnavailableCause::Other,
        ];
        for cause in causes {
            let text = Unavailable { cause, detail: Some("platform said x".into()) }.to_string();
            assert!(text.starts_with("The system keychain cannot be used: "), "{text}");
            assert!(text.contains("(details: platform said x)"), "{text}");
            assert!(text.ends_with(FALLBACK_CHOICE), "{text}");
        }
        assert!(Unavailable::new(UnavailableCause::Timeout(Duration::from_secs(3))).to_string().contains("within 3 s"));
        let choices = Unavailable::new(UnavailableCause::Locked).choices();
        assert_eq!(choices, [Fallback::Environment, Fallback::SessionMemory]);
        assert!(choices[0].label().contains("SWITCHBOARD_KEY_<NAME>"));
    }

    #[test]
    fn bounded_runs_report_timeouts() {
        assert_eq!(run_bounded(Duration::from_secs(5), || 7), Some(7));
        let slow = run_bounded(Duration::from_millis(20), || std::thread::sleep(Duration::from_secs(2)));
        assert_eq!(slow, None);
    }
}
