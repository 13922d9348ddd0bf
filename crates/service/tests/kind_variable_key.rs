//! A kind's usual variable (`OPENAI_API_KEY`) is a key meant for that kind's own API: a new
//! profile that would send it elsewhere needs confirmation. Its own test binary, because it sets
//! a variable of the process that other tests would otherwise see.

use switchboard_core::ErrorKind;
use switchboard_service::ipc::ProviderProfile;
use switchboard_service::{AlreadyConfirmed, Service};

#[test]
#[allow(unsafe_code)] // setting an environment variable; see the SAFETY note
fn a_new_profile_using_the_kinds_variable_elsewhere_needs_confirmation() {
    // SAFETY: this binary's only test; no other thread reads the environment meanwhile.
    unsafe { std::env::set_var("OPENAI_API_KEY", "sk-test-kind-variable-0123456789") };
    let service = Service::in_memory().unwrap();
    let p = |name: &str, url: &str| ProviderProfile {
        name: name.into(),
        kind: "openai".into(),
        base_url: url.into(),
        model: Some("m".into()),
        options: Default::default(),
    };
    // At the kind's own API (the default base URL), nothing to ask.
    service.add_provider(&p("openai", ""), true).unwrap();
    let err = service.add_provider(&p("x", "https://evil.example/v1"), false).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Cancelled);
    assert!(
        err.message.contains(
            "Send the key of 'x' (from OPENAI_API_KEY) to https://evil.example instead of https://api.openai.com?"
        ),
        "{}",
        err.message
    );
    assert!(!err.message.contains("sk-test-kind-variable"));
    service.add_provider_confirmed(&p("x", "http://127.0.0.1:11434/v1"), false, &AlreadyConfirmed).unwrap();
}
