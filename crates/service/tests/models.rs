//! What a model holds and costs (`Service::model_spec`): the person's override first, then the
//! catalogue, then a default that says it is one; local servers free unless priced; overrides
//! that make no sense refused when the profile is saved.

use std::sync::Arc;
use switchboard_core::Prices;
use switchboard_secrets::MemoryStore;
use switchboard_service::Service;
use switchboard_service::ipc::{ProfileOptions, ProviderProfile};
use switchboard_service::models::SpecSource;
use switchboard_store::Store;

fn service() -> Service {
    Service::new(Store::open_in_memory().unwrap(), Arc::new(MemoryStore::new())).unwrap()
}

fn profile(kind: &str, base_url: &str, options: ProfileOptions) -> ProviderProfile {
    ProviderProfile { name: "p".into(), kind: kind.into(), base_url: base_url.into(), model: None, options }
}

#[test]
fn the_catalogue_gives_a_known_models_window_and_prices() {
    let service = service();
    let m = service.model_spec(&profile("openai", "https://api.openai.com/v1", ProfileOptions::default()), "gpt-4o");
    assert_eq!((m.spec.context_window, m.source, m.free), (Some(128_000), SpecSource::Catalogue, false));
    assert_eq!(m.spec.max_output, Some(16_384));
    assert!((m.spec.prices.unwrap().input - 2.5).abs() < 1e-9);
    assert_eq!(m.window_note("gpt-4o"), None);
}

#[test]
fn the_persons_override_wins_and_an_unknown_model_says_what_is_assumed() {
    let service = service();
    let prices = Prices { input: 1.0, output: 2.0, ..Prices::default() };
    let options = ProfileOptions {
        context_window: Some(50_000),
        max_output_tokens: Some(999),
        prices: Some(prices),
        ..Default::default()
    };
    let m = service.model_spec(&profile("openai", "https://api.openai.com/v1", options), "gpt-4o");
    assert_eq!((m.spec.context_window, m.spec.max_output, m.spec.prices), (Some(50_000), Some(999), Some(prices)));
    assert_eq!(m.source, SpecSource::Profile);

    let m =
        service.model_spec(&profile("openai", "https://llm.example.com/v1", ProfileOptions::default()), "house-model");
    assert_eq!((m.spec.context_window, m.source), (Some(switchboard_models::UNKNOWN_WINDOW), SpecSource::Default));
    assert_eq!(m.spec.prices, None, "an unknown price is unknown, never free");
    assert!(m.window_note("house-model").unwrap().contains("house-model"), "{:?}", m.window_note("house-model"));
}

#[test]
fn a_local_server_is_free_unless_the_person_priced_it() {
    let service = service();
    let local =
        service.model_spec(&profile("openai", "http://localhost:11434/v1", ProfileOptions::default()), "llama3.1:8b");
    assert!(local.free);
    assert_eq!(local.spec.prices, Some(Prices::FREE));
    assert_eq!(local.spec.context_window, Some(8192), "Ollama's models are in the catalogue too");
    let lan = service.model_spec(&profile("openai", "http://192.168.1.20:8000/v1", ProfileOptions::default()), "qwen");
    assert!(lan.free);
    let priced =
        ProfileOptions { prices: Some(Prices { input: 0.1, output: 0.2, ..Prices::default() }), ..Default::default() };
    let rented = service.model_spec(&profile("openai", "http://10.0.0.5:8000/v1", priced), "qwen");
    assert!(!rented.free);
    assert_eq!(rented.spec.prices, priced.prices);
}

#[test]
fn overrides_that_make_no_sense_are_refused_when_saved() {
    let service = service();
    let cases = [
        (ProfileOptions { context_window: Some(0), ..Default::default() }, "context window of 0"),
        (ProfileOptions { max_output_tokens: Some(0), ..Default::default() }, "output limit of 0"),
        (
            ProfileOptions { prices: Some(Prices { input: -1.0, ..Prices::default() }), ..Default::default() },
            "zero or more",
        ),
    ];
    for (options, says) in cases {
        let e = service.add_provider(&profile("openai", "https://api.openai.com/v1", options), true).unwrap_err();
        assert!(e.message.contains(says), "{}", e.message);
    }
    assert!(service.providers().unwrap().is_empty(), "nothing was saved");
}

#[test]
fn images_and_pdfs_come_from_the_catalogue_then_the_table() {
    let service = service();
    let openai = profile("openai", "https://api.openai.com/v1", ProfileOptions::default());
    let caps = |p: &ProviderProfile, m: &str| {
        let c = service.model_capabilities(p, m);
        (c.images, c.pdf)
    };
    assert_eq!(caps(&openai, "gpt-4o"), (Some(true), Some(true)), "the catalogue's supports_vision/pdf_input");
    assert_eq!(caps(&openai, "gpt-3.5-turbo"), (Some(false), Some(false)), "the table knows it reads neither");
    assert_eq!(caps(&openai, "o3-mini"), (Some(false), Some(false)));
    let anthropic = profile("anthropic", "https://api.anthropic.com", ProfileOptions::default());
    assert_eq!(caps(&anthropic, "claude-sonnet-4-5"), (Some(true), Some(true)));
    let gemini = profile("gemini", "https://generativelanguage.googleapis.com", ProfileOptions::default());
    assert_eq!(caps(&gemini, "gemini-2.5-flash"), (Some(true), Some(true)));
    let local = profile("openai", "http://localhost:11434/v1", ProfileOptions::default());
    assert_eq!(caps(&local, "qwen2.5:7b"), (None, None), "unknown stays unknown");
    assert_eq!(caps(&local, "llama2:13b"), (Some(false), Some(false)));
}
