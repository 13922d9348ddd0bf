//! The keychain against a real Secret Service, and its unavailable paths.
//!
//! The round trip runs only with `SWITCHBOARD_TEST_KEYRING=1`, which `scripts/with-keyring.sh`
//! sets inside a private D-Bus session with a throwaway, unlocked GNOME Keyring:
//!
//!     scripts/with-keyring.sh cargo test -p switchboard-secrets
//!
//! Without it the test says why it skipped and passes: tests never touch a person's keychain.
//! The unavailable paths run in child processes of this test binary with a broken bus address,
//! so they need no bus at all.

#![cfg(target_os = "linux")]

use std::process::Command;
use std::time::Duration;
use switchboard_secrets::{
    Error, KeyringStore, SERVICE, SecretStore, SecretValue, UnavailableCause, status, validate_name,
};

/// The child side of the unavailable-path tests: does nothing unless the parent asked for it.
#[test]
fn child_probe() {
    if std::env::var_os("SWITCHBOARD_PROBE_CHILD").is_none() {
        return;
    }
    match KeyringStore::probe() {
        Ok(_) => println!("PROBE_RESULT: ok"),
        Err(u) => {
            println!("PROBE_RESULT: {:?}", u.cause);
            println!("PROBE_TEXT: {u}");
        }
    }
    // A lookup (what the CLI does, without a probe) must fail the same clear way.
    match KeyringStore::unchecked().get("openai") {
        Ok(v) => println!("PROBE_GET: ok {}", v.is_some()),
        Err(e) => println!("PROBE_GET: {e}"),
    }
}

/// Runs [`child_probe`] in a fresh process with `env` applied, and returns its report.
fn probe_in_child(cmd_prefix: &[&str], env: &[(&str, Option<&str>)]) -> String {
    let exe = std::env::current_exe().expect("test binary path");
    let mut cmd = match cmd_prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(&exe);
            c
        }
        None => Command::new(&exe),
    };
    cmd.args(["--exact", "child_probe", "--nocapture", "--test-threads=1"]).env("SWITCHBOARD_PROBE_CHILD", "1");
    for (k, v) in env {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd.output().expect("run the child probe");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "child failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    // The harness may print "test child_probe ... " on the same line as the first report line.
    stdout.lines().filter_map(|l| l.find("PROBE_").map(|i| &l[i..])).collect::<Vec<_>>().join("\n")
}

#[test]
fn without_a_session_bus_the_probe_explains_and_offers_the_choice() {
    let empty_runtime = std::env::temp_dir().join(format!("switchboard-no-bus-{}", std::process::id()));
    std::fs::create_dir_all(&empty_runtime).unwrap();
    let report = probe_in_child(
        &[],
        &[("DBUS_SESSION_BUS_ADDRESS", None), ("XDG_RUNTIME_DIR", Some(empty_runtime.to_str().unwrap()))],
    );
    let _ = std::fs::remove_dir_all(&empty_runtime);
    assert!(report.contains("PROBE_RESULT: NoSessionBus"), "{report}");
    assert!(report.contains("DBUS_SESSION_BUS_ADDRESS is not set"), "{report}");
    assert!(report.contains("SWITCHBOARD_KEY_<NAME>") && report.contains("in memory for this session"), "{report}");
    let get = report.lines().find(|l| l.starts_with("PROBE_GET: ")).unwrap_or_default();
    assert!(get.contains("DBUS_SESSION_BUS_ADDRESS is not set"), "{report}");
}

#[test]
fn a_stale_bus_address_is_reported_as_unreachable() {
    let report = probe_in_child(&[], &[("DBUS_SESSION_BUS_ADDRESS", Some("unix:path=/nonexistent/switchboard/bus"))]);
    assert!(report.contains("PROBE_RESULT: SessionBusUnreachable"), "{report}");
    assert!(report.contains("/nonexistent/switchboard/bus"), "{report}");
    let get = report.lines().find(|l| l.starts_with("PROBE_GET: ")).unwrap_or_default();
    assert!(get.contains("/nonexistent/switchboard/bus"), "{report}");
}

/// A private bus with no service directories: nothing can provide `org.freedesktop.secrets`.
#[test]
fn a_bus_without_a_secret_service_is_reported_as_such() {
    if Command::new("dbus-run-session").arg("--version").output().is_err() {
        eprintln!("skipped: dbus-run-session is not installed (Debian: apt-get install dbus)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("switchboard-nosvc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("session.conf");
    std::fs::write(
        &conf,
        format!(
            r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>session</type><listen>unix:dir={}</listen><auth>EXTERNAL</auth>
<policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>"#,
            dir.display()
        ),
    )
    .unwrap();
    let config_arg = format!("--config-file={}", conf.display());
    let report = probe_in_child(&["dbus-run-session", &config_arg, "--"], &[]);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.contains("PROBE_RESULT: NoSecretService"), "{report}");
    assert!(report.contains("org.freedesktop.secrets"), "{report}");
}

fn keyring_enabled() -> bool {
    if std::env::var("SWITCHBOARD_TEST_KEYRING").as_deref() == Ok("1") {
        return true;
    }
    eprintln!(
        "skipped: the real Secret Service test runs only with SWITCHBOARD_TEST_KEYRING=1 \
         (use scripts/with-keyring.sh, which provides a throwaway keyring); tests never touch your own keychain"
    );
    false
}

/// Deletes the test entry even when an assertion fails half-way.
struct Cleanup<'a>(&'a KeyringStore, &'a str);

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let _ = self.0.delete(self.1);
    }
}

#[test]
fn real_secret_service_round_trips() {
    if !keyring_enabled() {
        return;
    }
    let store = KeyringStore::probe().unwrap_or_else(|u| panic!("probe failed: {u}"));
    assert_eq!(store.service(), SERVICE);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let name = format!("switchboard-test-{}-{stamp}", std::process::id());
    validate_name(&name).unwrap();
    let _cleanup = Cleanup(&store, &name);

    assert_eq!(store.get(&name).unwrap(), None);
    let st = status(&store, &name).unwrap();
    assert!(!st.is_set && st.last4.is_none(), "{st:?}");
    assert_eq!(st.source, "the system keychain");

    store.set(&name, &SecretValue::new("tvly-first-value-1111")).unwrap();
    assert_eq!(store.get(&name).unwrap().unwrap().expose(), "tvly-first-value-1111");

    // Replace: one entry, the new value.
    store.set(&name, &SecretValue::new("tvly-second-value-ü2222")).unwrap();
    assert_eq!(store.get(&name).unwrap().unwrap().expose(), "tvly-second-value-ü2222");
    let st = status(&store, &name).unwrap();
    assert!(st.is_set, "{st:?}");
    assert_eq!(st.last4.as_deref(), Some("2222"));

    assert!(store.delete(&name).unwrap());
    assert!(!store.delete(&name).unwrap());
    assert_eq!(store.get(&name).unwrap(), None);
    assert!(!status(&store, &name).unwrap().is_set);

    // Names are checked before the keychain is asked.
    assert_eq!(store.get("bad name"), Err(Error::InvalidName("bad name".into())));

    // Last, on the throwaway keyring only: lock the collection and check the explanation. This
    // must stay last (and in this one test) because nothing here can unlock it again.
    if std::env::var("SWITCHBOARD_TEST_KEYRING_DISPOSABLE").as_deref() != Ok("1") {
        eprintln!("not testing the locked case: the keyring is not the throwaway one of with-keyring.sh");
        return;
    }
    let locked = Command::new("dbus-send")
        .args([
            "--session",
            "--print-reply",
            "--dest=org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/collection/login",
        ])
        .output();
    match locked {
        Ok(out) if out.status.success() => {}
        other => {
            eprintln!("not testing the locked case: dbus-send could not lock the collection: {other:?}");
            return;
        }
    }
    let u = KeyringStore::probe_with(SERVICE, Duration::from_secs(5)).expect_err("a locked collection must fail");
    assert_eq!(u.cause, UnavailableCause::Locked, "{u}");
    assert!(u.to_string().contains("locked"), "{u}");
    let e = store.set(&name, &SecretValue::new("tvly-never-written-3333")).unwrap_err();
    assert!(matches!(e, Error::Unavailable(_)), "{e:?}");
    assert!(e.to_string().contains("locked") && !e.to_string().contains("3333"), "{e}");
    eprintln!("ran against the real Secret Service: set/replace/status/delete and the locked case");
}
